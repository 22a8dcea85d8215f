// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * monitor.c: the monitor's engine: find the target, attach the recorder,
 * end a segment at every window boundary and analyse it as `gaptrace
 * report` would, publish the metrics, keep the flight recorder bounded, and
 * find the target again after it restarts.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "monitor/duty.h"
#include "monitor/flight.h"
#include "monitor/http.h"
#include "monitor/monitor.h"
#include "monitor/prom.h"
#include "record/record.h"
#include "support/outfile.h"
#include "support/procfs.h"
#include "support/util.h"

#define COST_NS	       NSEC_PER_SEC	     /* own cost metrics refreshed this often */
#define FIND_NS	       (200 * NSEC_PER_MSEC) /* the target looked for this often while gone */
#define RETRY_NS       NSEC_PER_SEC	     /* after a failed attach */
#define SNAP_SEGMENTS  2 /* a snapshot keeps the window just ended and the one before */
#define SNAP_LOW_EVERY 6 /* windows between two low-efficiency snapshots */

static volatile sig_atomic_t stop_sig, snap_sig;

static void on_stop(int sig)
{
	stop_sig = sig;
}

static void on_snap(int sig)
{
	(void)sig;
	snap_sig = 1;
}

struct monitor {
	struct monitor_opts *o;
	struct flight flight;
	struct http *http;
	struct prom prom;
	uint64_t seg_start_ns, last_cost_ns;
	uint64_t lost_done, rb_done; /* lost events and ring-buffer bytes of earlier recorders */
	uint64_t windows_since_low_snap;
	struct recorder *rec;
	struct gpu_duty duty;
	int nice; /* the monitor's own, restored after each target */
};

static void install_signals(void)
{
	struct sigaction sa = {.sa_handler = on_stop};
	struct sigaction su = {.sa_handler = on_snap};

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &su, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void refresh_cost(struct monitor *m)
{
	struct rusage ru;
	char buf[128];
	unsigned long size, res;

	if (!getrusage(RUSAGE_SELF, &ru))
		m->prom.cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
				(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	if (gt_read_file("/proc/self/statm", buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%lu %lu", &size, &res) == 2)
		m->prom.rss = (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
	m->prom.lost = m->lost_done;
	m->prom.rb_bytes = m->rb_done;
	if (m->rec) {
		struct recorder_info ri;

		recorder__info(m->rec, &ri);
		m->prom.lost += ri.lost;
		m->prom.rb_bytes += ri.rb_bytes;
	}
	m->prom.disk_bytes = flight__bytes(&m->flight);
	m->prom.segments = m->flight.n - (m->flight.writing ? 1 : 0);
}

/* node_exporter's textfile collector reads whole files only: temp + fsync + rename. */
static void write_textfile(struct monitor *m, const char *text, size_t len)
{
	char path[PATH_MAX];
	struct gt_out out = {0};

	snprintf(path, sizeof(path), "%s/gaptrace.prom", m->o->textfile);
	if (gt_out__open(&out, path))
		return;
	if (fwrite(text, 1, len, out.f) != len || fflush(out.f) || fsync(fileno(out.f))) {
		gt_warn("cannot write %s: %s", path, strerror(errno));
		gt_out__abort(&out);
		return;
	}
	gt_out__close(&out);
}

static void publish(struct monitor *m, bool textfile)
{
	size_t len = 0;
	char *text;

	refresh_cost(m);
	text = prom__render(&m->prom, &len);
	if (!text)
		return;
	if (m->http)
		http__publish(m->http, text, len);
	if (textfile && m->o->textfile)
		write_textfile(m, text, len);
	free(text);
}

static void snapshot(struct monitor *m, const char *why)
{
	char dir[PATH_MAX + 128];

	if (flight__snapshot(&m->flight, why, SNAP_SEGMENTS, dir, sizeof(dir)))
		return;
	m->prom.snapshots++;
	gt_info("snapshot (%s): %s; read it with gaptrace report", why, dir);
}

/*
 * The segment at path ended: analysed exactly as `gaptrace report` does
 * (default options), its numbers added to the metrics.
 */
static void window_done(struct monitor *m, const char *path, enum prom_cov cov, uint64_t covered_ns)
{
	struct an_result *res = NULL;
	struct an_opts ao;
	struct capture *c;
	char err[512];
	bool low = false;
	uint64_t t0 = gt_now_mono_ns();

	c = capture__open(path, err, sizeof(err));
	an_opts__defaults(&ao);
	if (!c || analysis__run(c, &ao, &res, err, sizeof(err))) {
		gt_warn("window %s not analysed: %s", path, err);
		capture__close(c);
		return;
	}
	prom__add_window(&m->prom, res, cov, (double)covered_ns / 1e9);
	m->prom.analysis_s = (double)(gt_now_mono_ns() - t0) / 1e9;
	m->prom.window_end_s = (double)gt_now_real_ns() / 1e9;
	for (size_t i = 0; i < res->ndevices; i++) {
		const struct an_device *d = &res->devices[i];

		if (cov != PROM_COV_NONE && d->span_ns &&
		    (double)d->busy_ns / (double)d->span_ns < m->o->snapshot_below)
			low = true;
	}
	gt_dbg("window %s: %zu devices, %zu gaps, GPU source %s, coverage %s", path, res->ndevices,
	       res->ngaps, res->gpu_source ? res->gpu_source : "?", prom_cov_names[cov]);
	an_result__free(res);
	capture__close(c);
	m->windows_since_low_snap++;
	if (low && m->windows_since_low_snap >= SNAP_LOW_EVERY) {
		snapshot(m, "low-efficiency");
		m->windows_since_low_snap = 0;
	}
	publish(m, true);
}

/*
 * The GPU probes on or off as the duty cycle wants them now.  Off is at
 * once (the links close on other threads); on can take the kernel a second.
 */
static void gate(struct monitor *m, uint64_t now)
{
	int want = gpu_duty__switch(&m->duty, now);
	int rc;

	if (want < 0)
		return;
	rc = recorder__gpu_gate(m->rec, want);
	if (rc < 0 && want)
		gt_warn("cannot attach the GPU probes again (%s): this GPU window is not "
			"collected; trying again",
			strerror(-rc));
	gpu_duty__gated(&m->duty, want, rc >= 0, gt_now_mono_ns());
	gt_dbg("GPU probes %s (%d links)", want ? "on" : "off", rc);
}

/* What the END of the window ending now says of its GPU source; its coverage. */
static enum prom_cov window_source(struct monitor *m, uint64_t now, uint64_t *covered_ns)
{
	enum prom_cov cov = gpu_duty__window_end(&m->duty, now, covered_ns);
	struct recorder_info ri;
	char src[256];

	recorder__info(m->rec, &ri);
	if (cov == PROM_COV_NONE)
		snprintf(src, sizeof(src),
			 "none (GPU collection off in this window: gaptrace monitor --gpu-duty; "
			 "the GPU records in it are not counted)");
	else if (cov == PROM_COV_PARTIAL)
		snprintf(src, sizeof(src),
			 "%.120s (partial: GPU collection covered the last %.1f s)", ri.gpu_source,
			 (double)*covered_ns / 1e9);
	recorder__gpu_window(m->rec, cov == PROM_COV_FULL ? NULL : src);
	return cov;
}

/* Ends the current window: a new segment, the GPU probes switched, then the old one analysed. */
static void rotate(struct monitor *m, uint64_t now)
{
	struct gpu_duty keep = m->duty;
	char old[PATH_MAX + 64];
	const char *next;
	enum prom_cov cov;
	uint64_t covered;

	flight__path(&m->flight, m->flight.n - 1, old, sizeof(old));
	next = flight__next(&m->flight);
	m->seg_start_ns = now;
	cov = window_source(m, now, &covered);
	if (recorder__rotate(m->rec, next)) {
		/* The segment goes on, the same window; tried again at the next boundary. */
		m->duty = keep;
		recorder__gpu_window(m->rec, NULL);
		return;
	}
	flight__closed(&m->flight, gt_now_mono_ns());
	flight__begin(&m->flight);
	gate(m, now);
	window_done(m, old, cov, covered);
}

static bool tick(struct recorder *r, uint64_t now, void *ctx)
{
	struct monitor *m = ctx;

	(void)r;
	if (stop_sig)
		return true;
	if (snap_sig) {
		snap_sig = 0;
		rotate(m, now);
		snapshot(m, "signal");
	} else if (now - m->seg_start_ns >= m->o->window_ns) {
		rotate(m, now);
	} else {
		gate(m, now);
	}
	if (now - m->last_cost_ns >= COST_NS) {
		m->last_cost_ns = now;
		publish(m, false);
	}
	return false;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / NSEC_PER_SEC), (long)(ns % NSEC_PER_SEC)};

	nanosleep(&ts, NULL);
}

/* One life of the target: attach, windows until it exits or a signal, stop. 0, -1, or 2 (usage). */
static int one_target(struct monitor *m, pid_t pid, unsigned *attaches)
{
	struct recorder_info ri;
	char last[PATH_MAX + 64];
	const char *path = flight__next(&m->flight);
	enum prom_cov cov;
	uint64_t covered;
	bool usage;
	int rc;

	m->rec = recorder__attach(pid, path, m->o->record_opts, m->o->nrecord_opts, m->o->argc,
				  m->o->argv, &usage);
	/* The recorder installs its own handlers: the monitor's come back. */
	install_signals();
	if (!m->rec) {
		unlink(path);
		return usage ? 2 : -1;
	}
	flight__begin(&m->flight);
	if ((*attaches)++)
		m->prom.restarts++;
	prom__new_target(&m->prom);
	m->prom.attached = true;
	m->seg_start_ns = m->last_cost_ns = gt_now_mono_ns();
	gpu_duty__attached(&m->duty, m->seg_start_ns);
	publish(m, true);
	recorder__run(m->rec, tick, m);
	recorder__info(m->rec, &ri);
	if (!strcmp(ri.stop_reason, "SIGINT") || !strcmp(ri.stop_reason, "SIGTERM"))
		stop_sig = SIGTERM;
	cov = window_source(m, gt_now_mono_ns(), &covered);
	rc = recorder__stop(m->rec);
	recorder__info(m->rec, &ri);
	m->lost_done += ri.lost;
	m->rb_done += ri.rb_bytes;
	recorder__free(m->rec);
	m->rec = NULL;
	/* The recorder raises its priority while attaching or behind a full ring buffer. */
	setpriority(PRIO_PROCESS, 0, m->nice);
	m->prom.attached = false;
	flight__path(&m->flight, m->flight.n - 1, last, sizeof(last));
	flight__closed(&m->flight, gt_now_mono_ns());
	window_done(m, last, cov, covered);
	return rc ? -1 : 0;
}

/* The monitor that writes into dir now (its pid file names a live gaptrace), or 0. */
static pid_t dir_owner(const char *dir)
{
	char path[PATH_MAX], buf[32], comm[32];
	uint64_t pid;

	snprintf(path, sizeof(path), "%s/monitor.pid", dir);
	if (gt_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	buf[strcspn(buf, "\n")] = '\0';
	if (gt_parse_uint(buf, 1, INT32_MAX, &pid) || (pid_t)pid == getpid() ||
	    !procfs_comm((pid_t)pid, 0, comm, sizeof(comm)) || strcmp(comm, "gaptrace"))
		return 0;
	return (pid_t)pid;
}

static int write_pidfile(const char *dir)
{
	char path[PATH_MAX];
	struct gt_out out = {0};

	snprintf(path, sizeof(path), "%s/monitor.pid", dir);
	if (gt_out__open(&out, path))
		return -1;
	fprintf(out.f, "%d\n", getpid());
	return gt_out__close(&out);
}

int monitor__ask_snapshot(const char *dir)
{
	pid_t pid = dir_owner(dir);

	if (!pid) {
		gt_err("no monitor writes into %s: give its --dir", dir);
		return GT_EXIT_FAIL;
	}
	if (kill(pid, SIGUSR1)) {
		gt_err("cannot signal the monitor (pid %d): %s", pid, strerror(errno));
		return GT_EXIT_FAIL;
	}
	gt_info("asked the monitor (pid %d) for a snapshot: it appears in %s/snapshots/", pid, dir);
	return GT_EXIT_OK;
}

int monitor__run(struct monitor_opts *o)
{
	struct monitor m = {.o = o};
	unsigned attaches = 0;
	uint64_t waiting_since = 0;
	char err[512], path[PATH_MAX];
	int ret = GT_EXIT_FAIL, rc;
	bool pidfile = false;

	m.nice = getpriority(PRIO_PROCESS, 0);
	/* Checked with the options: cannot fail here. */
	gpu_duty__init(&m.duty, o->gpu_on_ns, o->gpu_period_ns, o->window_ns, err, sizeof(err));
	m.prom.duty = gpu_duty__ratio(&m.duty);
	if (flight__open(&m.flight, o->dir, o->keep_ns, o->keep_bytes, err, sizeof(err))) {
		gt_err("%s", err);
		goto cleanup;
	}
	/* Two monitors in one folder would delete each other's segments. */
	rc = dir_owner(o->dir);
	if (rc) {
		gt_err("another monitor (pid %d) writes into %s: give another --dir", rc, o->dir);
		goto cleanup;
	}
	if (write_pidfile(o->dir))
		goto cleanup;
	pidfile = true;
	if (o->listen) {
		m.http = http__start(o->listen, err, sizeof(err));
		if (!m.http) {
			gt_err("%s", err);
			goto cleanup;
		}
	}
	install_signals();
	publish(&m, true);
	gt_info("monitoring %s: %.1f s windows, GPU collection in %llu of every %llu, segments "
		"in %s%s%s%s%s",
		o->match.what, (double)o->window_ns / 1e9,
		(unsigned long long)(m.duty.period_w ? m.duty.on_w : 1),
		(unsigned long long)(m.duty.period_w ? m.duty.period_w : 1), o->dir,
		o->listen ? ", metrics on http://" : "", o->listen ? o->listen : "",
		o->textfile ? ", textfile in " : "", o->textfile ? o->textfile : "");
	while (!stop_sig) {
		pid_t pid = matcher__find(&o->match);

		if (snap_sig) {
			snap_sig = 0;
			snapshot(&m, "signal");
		}
		if (!pid) {
			if (attaches && !matcher__follows_restarts(&o->match))
				break;
			if (!attaches && !matcher__follows_restarts(&o->match)) {
				gt_err("pid %d does not exist: check it with 'ps -p %d'",
				       o->match.pid, o->match.pid);
				goto cleanup;
			}
			if (!waiting_since) {
				waiting_since = gt_now_mono_ns();
				gt_info("waiting for a process matching %s", o->match.what);
			}
			sleep_ns(FIND_NS);
			if (gt_now_mono_ns() - m.last_cost_ns >= COST_NS) {
				m.last_cost_ns = gt_now_mono_ns();
				publish(&m, false);
			}
			continue;
		}
		waiting_since = 0;
		rc = one_target(&m, pid, &attaches);
		if (rc == 2) {
			ret = GT_EXIT_USAGE;
			goto cleanup;
		}
		if (rc < 0 && !stop_sig) {
			/* It exited while we attached, or the kernel refused: look again soon. */
			if (!matcher__follows_restarts(&o->match))
				goto cleanup;
			sleep_ns(RETRY_NS);
		}
	}
	publish(&m, true);
	gt_info("monitor stopped after %llu windows, %llu target restarts",
		(unsigned long long)m.prom.windows, (unsigned long long)m.prom.restarts);
	ret = GT_EXIT_OK;
cleanup:
	http__stop(m.http);
	if (pidfile) {
		snprintf(path, sizeof(path), "%s/monitor.pid", o->dir);
		unlink(path);
	}
	flight__close(&m.flight);
	return ret;
}
