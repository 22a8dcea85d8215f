// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record_stop.c: the end of a recording: the GPU grace, detach, drain, the
 * capture's last blocks; the wait for links still closing; freeing.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "gaptrace.skel.h"
#include "record/attach.h"
#include "record/cfimap.h"
#include "record/fpless.h"
#include "record/gpu.h"
#include "record/record.h"
#include "record/record_priv.h"
#include "record/unwind.h"
#include "support/util.h"
#include "symbols/syms.h"

/*
 * CUPTI hands over activity records in buffers, up to about a second after
 * the kernels ran: keep the USDT probes a little longer after the CPU side
 * stopped, so the last gaps are closed by real GPU records.  The analysis
 * ignores GPU work that started after end_ns.
 */
#define GPU_GRACE_NS (1200 * NSEC_PER_MSEC)

static void gpu_grace(struct recorder *r)
{
	uint64_t t0 = gt_now_mono_ns();

	while (gt_now_mono_ns() - t0 < GPU_GRACE_NS && !record__target_exited(r))
		if (record__rb_drain(r, 50) < 0 && errno != EINTR)
			break;
}

/*
 * Stop, after the run loop (e its result): detach, drain, close the
 * intervals still open, write the last blocks.  Returns e, or the error
 * that writing the capture met.
 */
int record__stop(struct recorder *r, int e)
{
	struct record_opts *o = r->o;

	r->end_ns = gt_now_mono_ns();
	if (o->cmd && !r->target_gone)
		attacher__scan(r->att, r->pid);
	if (!o->cmd && !r->target_gone)
		record__emit_mappings(r, r->pid);
	if (!o->cmd)
		record__follow_emit_mappings(r);
	/* Stop new events, then drain what is left and close open intervals. */
	record__detach_sched(r);
	/* Launch mode: a target that never initialised CUDA never loaded the library. */
	if (o->gpu.injected && !o->gpu.uprobes && o->cmd && !gpu_cupti_loaded(&o->gpu, r->pid))
		snprintf(o->gpu.source, sizeof(o->gpu.source),
			 "usdt (CUPTI library offered, never loaded: no CUDA in the target)");
	else if (o->gpu.injected && !r->target_gone)
		gpu_grace(r);
	/* The links close while the rest of the capture is written; joined at the end. */
	attacher__detach(r->att);
	record__drain_all(r);
	record__drain_open_intervals(r);
	record__poll_stats(r, r->end_ns);
	if (o->cmd && r->target_gone)
		record__emit_threads(r, r->pid);
	record_sink__finish(&r->sink);
	record_sink__flush(&r->sink);
	record__write_counters(r, GT_BLK_COUNTERS);
	record__write_counters(r, GT_BLK_END);
	if (r->progress)
		record__progress(r, r->end_ns, true);
	e = e ? e : r->sink.write_err;
	if (capture_writer__close(r->w) && !e) {
		gt_err("cannot finish writing %s: %s", o->output, strerror(errno));
		e = -EIO;
	}
	r->w = NULL;
	if (r->fpa)
		fp_audit__report(r->fpa, offsetof(struct gt_ustack, data) + 8192);
	return e;
}

/* After the summary: waits for the links still closing (13 s for a big target's uprobes). */
void record__detach_wait(struct recorder *r)
{
	{
		size_t closed, total;
		bool pending = attacher__detach_pending(r->att, &closed, &total);

		while (total) {
			record__step(r, true, "detaching: %zu of %zu probe links closed", closed,
				     total);
			if (!pending)
				break;
			usleep(250 * 1000);
			pending = attacher__detach_pending(r->att, &closed, &total);
		}
	}
	record__step_done(r);
	attacher__free(r->att);
	r->att = NULL;
	record__report_cpu(r);
}

/* The stop, the summary (its exit code: a launched command's) and the wait for the links. */
int record__finish(struct recorder *r, int e)
{
	int ret = record__summary(r, record__stop(r, e));

	record__detach_wait(r);
	return ret;
}

/* Frees what record__open and record__attach made (safe after any failure); closes the capture. */
void record__cleanup(struct recorder *r)
{
	if (r->go_fd >= 0) {
		/* A child still held before exec: closing the pipe makes it exit. */
		close(r->go_fd);
		waitpid(r->child, NULL, 0);
	}
	if (r->status_fd >= 0)
		close(r->status_fd);
	capture_writer__close(r->w);
	ring_buffer__free(r->rb);
	attacher__free(r->att);
	/* Its worker loads tables into the skeleton's maps: stopped first. */
	cfimap__free(r->cfi);
	gaptrace_bpf__destroy(r->skel);
	syms_cache__free(r->syms);
	unwinder__free(r->unw);
	fp_audit__free(r->fpa);
	fpless__free(r->fpless);
	if (r->pidfd >= 0)
		close(r->pidfd);
	record_sink__fini(&r->sink);
	probe_table__free(&r->o->probes);
	free(r->procs);
}

void record__free(struct recorder *r)
{
	if (!r)
		return;
	record__cleanup(r);
	free(r->o);
	free(r);
}
