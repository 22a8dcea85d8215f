// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record_summary.c: what `gaptrace record` tells its operator: the live
 * status line, progress while attaching and detaching, the closing summary
 * (also as JSON, --summary-json) and the exit status.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "record/record_priv.h"
#include "support/json.h"
#include "support/outfile.h"
#include "support/term.h"
#include "support/util.h"

static void fmt_rate(double rate, char *buf, size_t len)
{
	if (rate >= 1e6)
		snprintf(buf, len, "%.1fM", rate / 1e6);
	else if (rate >= 1e3)
		snprintf(buf, len, "%.1fk", rate / 1e3);
	else
		snprintf(buf, len, "%.0f", rate);
}

/*
 * The final line's rate is the whole recording's: the last line before the
 * stop may be microseconds old (-d stops in the round that printed it), and
 * the records drained at the stop divided by that showed "77.2M ev/s".
 */
void record__progress(struct recorder *r, uint64_t now, bool final)
{
	char ev[32], size[32], gpu[64];
	double secs = (double)(now - r->start_ns) / 1e9;
	double dt = (double)(now - r->last_progress_ns) / 1e9;
	uint64_t n = r->sink.events - r->events_at_progress;
	uint64_t lost = r->stats[GT_STAT_RB_LOST];
	bool red = lost && term__color(stderr);

	if (final)
		fmt_rate(secs > 0 ? (double)r->sink.events / secs : 0, ev, sizeof(ev));
	else
		fmt_rate(dt > 0 ? (double)n / dt : 0, ev, sizeof(ev));
	/* "gaps 0" with no GPU record at all read as a GPU never idle. */
	if (r->sink.gpu_ops)
		snprintf(gpu, sizeof(gpu), "GPU ops %llu  gaps %llu",
			 (unsigned long long)r->sink.gpu_ops, (unsigned long long)r->sink.gaps);
	else
		snprintf(gpu, sizeof(gpu), "no GPU ops yet");
	fprintf(stderr, "\r\033[K[gaptrace] pid %d  %.1f s  %s ev/s  lost %s%llu%s  %s  %s", r->pid,
		secs, ev, red ? "\033[1;31m" : "", (unsigned long long)lost, red ? "\033[0m" : "",
		gpu, gt_fmt_bytes(capture_writer__bytes(r->w), size, sizeof(size)));
	if (final)
		fputc('\n', stderr);
	fflush(stderr);
	gt_log_set_progress_active(!final);
	r->events_at_progress = r->sink.events;
	r->last_progress_ns = now;
}

/*
 * A status line while attaching or detaching, which takes seconds on a big
 * target (6 s of uprobes on a PyTorch process; 13 s to take them off):
 * at most 4 a second unless force, only where the status line is shown.
 */
void record__step(struct recorder *r, bool force, const char *fmt, ...)
{
	uint64_t now = gt_now_mono_ns();
	char msg[256];
	va_list ap;

	if (!r->progress || (!force && now - r->last_step_ns < 250 * NSEC_PER_MSEC))
		return;
	r->last_step_ns = now;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fputs("\r\033[K[gaptrace] ", stderr);
	gt_fputs_clean(stderr, msg);
	fflush(stderr);
	gt_log_set_progress_active(true);
}

/* Ends a run of record__step lines so the next message starts clean. */
void record__step_done(struct recorder *r)
{
	if (!r->progress)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	gt_log_set_progress_active(false);
}

/*
 * Exit status: record's own failure is 1 (2 for usage); otherwise a launched
 * command that exited gives its status, one killed by a signal 128 + the
 * signal, as a shell, perf and strace report it; a recording stopped by -d
 * or Ctrl-C with the command still running, and -p, give 0.
 */
int record__exit_code(const struct recorder *r, int err)
{
	if (err)
		return GT_EXIT_FAIL;
	if (!r->child || !r->target_gone)
		return GT_EXIT_OK;
	if (WIFEXITED(r->target_status))
		return WEXITSTATUS(r->target_status);
	if (WIFSIGNALED(r->target_status))
		return 128 + WTERMSIG(r->target_status);
	return GT_EXIT_OK;
}

static int write_summary_json(const struct recorder *r, uint64_t bytes, int code)
{
	const struct record_opts *o = r->o;
	struct gt_out out;
	struct json j;

	if (gt_out__open(&out, o->summary_json))
		return -1;
	json_init(&j, out.f, true);
	json_obj_begin(&j);
	json_kstr(&j, "schema", "gaptrace.record-summary/1");
	json_kstr(&j, "capture", o->output);
	json_ku64(&j, "capture_bytes", bytes);
	json_kstr(&j, "mode", o->cmd ? "launch" : "attach");
	json_ki64(&j, "pid", r->pid);
	json_kdouble(&j, "duration_s", (double)(r->end_ns - r->start_ns) / 1e9);
	json_kstr(&j, "stop_reason", r->stop_reason ? r->stop_reason : "");
	json_ku64(&j, "records", r->sink.events);
	json_ku64(&j, "lost", r->stats[GT_STAT_RB_LOST]);
	json_kstr(&j, "gpu_source", o->gpu.source[0] ? o->gpu.source : "usdt");
	json_ku64(&j, "gpu_ops", r->sink.gpu_ops);
	json_ku64(&j, "gaps_approx", r->sink.gaps);
	json_key(&j, "target_exit_status");
	if (r->child && r->target_gone && WIFEXITED(r->target_status))
		json_i64(&j, WEXITSTATUS(r->target_status));
	else
		json_null(&j);
	json_key(&j, "target_signal");
	if (r->child && r->target_gone && WIFSIGNALED(r->target_status))
		json_i64(&j, WTERMSIG(r->target_status));
	else
		json_null(&j);
	json_ki64(&j, "exit_code", code);
	json_obj_end(&j);
	fputc('\n', out.f);
	return gt_out__close(&out);
}

/* The closing lines of a recording that ran; returns the exit status. */
int record__summary(struct recorder *r, int err)
{
	const struct record_opts *o = r->o;
	struct stat st = {};
	char size[32];
	int code;

	if (r->target_gone && r->end_ns - r->target_gone_ns >= 100 * NSEC_PER_MSEC)
		gt_info("pid %d exited after %.1f s; the processes followed from it were recorded "
			"until %.1f s (%s)",
			r->pid, (double)(r->target_gone_ns - r->start_ns) / 1e9,
			(double)(r->end_ns - r->start_ns) / 1e9,
			!strcmp(r->stop_reason ? r->stop_reason : "", "target-exit")
			    ? "they exited"
			    : r->stop_reason);
	else if (r->target_gone && !o->cmd)
		gt_warn("pid %d exited after %.1f s: the capture ends there", r->pid,
			(double)(r->end_ns - r->start_ns) / 1e9);
	if (r->target_gone && o->cmd) {
		if (WIFEXITED(r->target_status))
			gt_info("'%s' exited with status %d", o->cmd[0],
				WEXITSTATUS(r->target_status));
		else if (WIFSIGNALED(r->target_status))
			gt_warn("'%s' was killed by signal %d (%s)", o->cmd[0],
				WTERMSIG(r->target_status), strsignal(WTERMSIG(r->target_status)));
	}
	if (r->stats[GT_STAT_RB_LOST])
		gt_warn("%llu events were lost (ring buffer full): raise --ringbuf-size; "
			"reports show the affected time as unknown",
			(unsigned long long)r->stats[GT_STAT_RB_LOST]);
	/* A program that never used the GPU records happily: say so now, not in the report. */
	if (r->sink.gpu_ops)
		gt_info("%llu GPU operations arrived (GPU source: %s)",
			(unsigned long long)r->sink.gpu_ops,
			o->gpu.source[0] ? o->gpu.source : "usdt");
	else
		gt_warn("no GPU activity arrived (GPU source: %s): is the program using CUDA? see "
			"'gaptrace doctor' and the README's \"Real GPUs: CUDA programs\"",
			o->gpu.source[0] ? o->gpu.source : "usdt");
	stat(o->output, &st);
	gt_info("wrote %s: %s, %llu records, %llu lost, %.1f s; next: gaptrace report %s",
		o->output, gt_fmt_bytes((uint64_t)st.st_size, size, sizeof(size)),
		(unsigned long long)r->sink.events, (unsigned long long)r->stats[GT_STAT_RB_LOST],
		(double)(r->end_ns - r->start_ns) / 1e9, o->output);
	code = record__exit_code(r, err);
	if (o->summary_json && write_summary_json(r, (uint64_t)st.st_size, code) && !code)
		code = GT_EXIT_FAIL;
	return code;
}
