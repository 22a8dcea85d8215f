// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attach_detach.c: takes gaptrace's probes off processes that exited while
 * the recording runs (the reapers), and off everything at the stop, without
 * holding up the capture; how far an attach or a detach got, for the status
 * line.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "record/attach.h"
#include "record/attach_priv.h"
#include "support/util.h"

/* Most threads one stop spends on closing links. */
#define DETACH_THREADS 32

/*
 * A USDT link's destroy gives its spec ids back to libbpf's free list,
 * which attaches take from: never two at once.
 */
void attach__destroy_link(struct attacher *a, struct gt_link *l)
{
	if (!l->usdt) {
		bpf_link__destroy(l->link);
		return;
	}
	pthread_mutex_lock(&a->usdt_lock);
	bpf_link__destroy(l->link);
	a->spec_ids_used -= GT_MIN(l->spec_ids, a->spec_ids_used);
	pthread_mutex_unlock(&a->usdt_lock);
}

/*
 * Closing a link unregisters its uprobes, which contends in the kernel with
 * the registrations of new ones (both walk every mapping of the file, libc
 * is mapped everywhere): closed during a storm of 150 short children, they
 * left 43 of them unprobed.  So links wait until attaching has paused for
 * REAP_QUIET_NS, or until enough are held that fds or spec ids matter.
 */
#define REAP_QUIET_NS (250 * NSEC_PER_MSEC)
#define REAP_AT	      (GT_MAX_LINKS - 64)

static bool reap_due(struct attacher *a)
{
	uint64_t last = __atomic_load_n(&a->last_attach_ns, __ATOMIC_RELAXED);
	unsigned ids = __atomic_load_n(&a->spec_ids_used, __ATOMIC_RELAXED);

	return a->reap_stop || a->nlinks + a->nreap >= REAP_AT || ids >= GT_USDT_SPEC_IDS / 2 ||
	       gt_now_mono_ns() - last >= REAP_QUIET_NS;
}

/*
 * The links of processes that exited: a fork or dlopen storm must not
 * keep their fds and spec ids (~15 fds a process, 256 spec ids in all
 * with libbpf's default map) until the stop.  Each close waits for the
 * kernel's grace periods: several threads overlap them.
 */
static void *reaper(void *arg)
{
	struct attacher *a = arg;

	pthread_mutex_lock(&a->reap_lock);
	for (;;) {
		struct gt_link l;

		while (!a->reap_stop && (!a->nreap || !reap_due(a))) {
			struct timespec ts;

			if (!a->nreap) {
				pthread_cond_wait(&a->reap_cond, &a->reap_lock);
				continue;
			}
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 50 * NSEC_PER_MSEC;
			if (ts.tv_nsec >= (long)NSEC_PER_SEC) {
				ts.tv_sec++;
				ts.tv_nsec -= NSEC_PER_SEC;
			}
			pthread_cond_timedwait(&a->reap_cond, &a->reap_lock, &ts);
		}
		if (!a->nreap)
			break;
		l = a->reap[--a->nreap];
		pthread_mutex_unlock(&a->reap_lock);
		attach__destroy_link(a, &l);
		pthread_mutex_lock(&a->reap_lock);
		a->reaped++;
	}
	pthread_mutex_unlock(&a->reap_lock);
	return NULL;
}

void attach__reapers_start(struct attacher *a)
{
	while (a->nreapers < REAPERS && !pthread_create(&a->reapers[a->nreapers], NULL, reaper, a))
		a->nreapers++;
}

void attach__reap(struct attacher *a, pid_t pid)
{
	size_t n = 0, moved = 0;

	if (a->detached || !pid)
		return;
	pthread_mutex_lock(&a->reap_lock);
	for (size_t i = 0; i < a->nlinks; i++) {
		if (a->links[i].pid != pid) {
			a->links[n++] = a->links[i];
			continue;
		}
		gt_grow((void **)&a->reap, &a->reap_cap, a->nreap, sizeof(*a->reap));
		a->reap[a->nreap++] = a->links[i];
		moved++;
	}
	a->nlinks = n;
	if (moved)
		pthread_cond_broadcast(&a->reap_cond);
	pthread_mutex_unlock(&a->reap_lock);
	/* No reaper thread could start: closed here. */
	while (!a->nreapers && a->nreap)
		attach__destroy_link(a, &a->reap[--a->nreap]);
	if (moved)
		gt_dbg("releasing %zu links of pid %d, which exited", moved, pid);
}

/* Lets the reapers finish what is queued, and waits for them. */
void attach__reapers_join(struct attacher *a)
{
	pthread_mutex_lock(&a->reap_lock);
	a->reap_stop = true;
	pthread_cond_broadcast(&a->reap_cond);
	pthread_mutex_unlock(&a->reap_lock);
	for (unsigned i = 0; i < a->nreapers; i++)
		pthread_join(a->reapers[i], NULL);
	a->nreapers = 0;
	/* Queued after the reapers stopped, or none could start. */
	while (a->nreap)
		attach__destroy_link(a, &a->reap[--a->nreap]);
}

struct detach_slice {
	struct attacher *a;
	size_t n, from, step;
	size_t *closed; /* the attacher's count of links closed */
};

static void *detach_slice(void *arg)
{
	struct detach_slice *d = arg;

	for (size_t i = d->from; i < d->n; i += d->step) {
		attach__destroy_link(d->a, &d->a->links[i]);
		__atomic_fetch_add(d->closed, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * Each uprobe link's close unregisters its uprobes and waits for a grace
 * period: ~70 ms each here (23 s seen for one under load), one after the
 * other for every library of a PyTorch target.  Closed from several threads,
 * the waits overlap.  Links a thread cannot be started for are closed here.
 */
static void destroy_links(struct attacher *a, size_t n)
{
	struct detach_slice d[DETACH_THREADS];
	pthread_t th[DETACH_THREADS];
	bool started[DETACH_THREADS] = {};
	size_t nth = GT_MIN(n, (size_t)DETACH_THREADS);

	for (size_t k = 0; k < nth; k++) {
		d[k] = (struct detach_slice){a, n, k, nth, &a->nclosed};
		/* The first slice is this thread's own work. */
		started[k] = k && !pthread_create(&th[k], NULL, detach_slice, &d[k]);
	}
	for (size_t k = 0; k < nth; k++)
		if (!started[k])
			detach_slice(&d[k]);
	for (size_t k = 0; k < nth; k++)
		if (started[k])
			pthread_join(th[k], NULL);
}

static void *detach_all(void *arg)
{
	struct attacher *a = arg;

	destroy_links(a, a->ndetach);
	attach__reapers_join(a);
	return NULL;
}

/*
 * Samplers stop now; links close on a thread while the recorder finishes the
 * capture (attacher__free waits for it).  The counts and the attached list
 * stay readable for the END block.  A USDT probe's sites are one
 * multi-uprobe link (libbpf 1.4), closed at once; a single uprobe's perf
 * event release waits for synchronize_rcu_tasks_trace, an SRCU and an
 * expedited RCU grace period under the kernel's event_mutex
 * (/proc/PID/stack), so threads overlap little of those.
 */
void attacher__detach(struct attacher *a)
{
	if (a->detached)
		return;
	a->detached = true;
	for (size_t i = 0; i < a->nperf; i++)
		close(a->perf_fds[i]);
	a->nperf = 0;
	a->ndetach = a->nlinks;
	a->detach_from_ns = gt_now_mono_ns();
	a->detaching = !pthread_create(&a->detacher, NULL, detach_all, a);
	if (!a->detaching) {
		detach_all(a);
		a->ndetach = 0;
	}
}

void attacher__free(struct attacher *a)
{
	if (!a)
		return;
	attacher__detach(a);
	if (a->detaching)
		pthread_join(a->detacher, NULL);
	if (a->ndetach)
		gt_dbg("detached %zu uprobe/USDT links in %.1f ms", a->ndetach,
		       (double)(gt_now_mono_ns() - a->detach_from_ns) / 1e6);
	if (a->reaped)
		gt_dbg("released %zu links of processes that exited while recording", a->reaped);
	if (a->usdt_skipped)
		gt_warn("%u USDT probes were not attached (over the spec-id or site limit): their "
			"records are missing",
			a->usdt_skipped);
	if (a->link_capped)
		gt_warn("objects were put off %u times: %u probe links held at once (gaptrace's "
			"limit); records of those not probed later are missing",
			a->link_capped, GT_MAX_LINKS);
	if (a->fd_refused)
		gt_warn("%u probe attaches were refused for lack of file descriptors: their "
			"records are missing; raise 'ulimit -n'",
			a->fd_refused);
	pthread_mutex_destroy(&a->usdt_lock);
	pthread_mutex_destroy(&a->reap_lock);
	pthread_cond_destroy(&a->reap_cond);
	attach__gate_free(a);
	free(a->links);
	free(a->reap);
	free(a->perf_fds);
	free(a->seen);
	u64map_free(&a->seen_index);
	free(a->attached);
	free(a);
}

bool attacher__detach_pending(struct attacher *a, size_t *closed, size_t *total)
{
	*total = a->ndetach;
	*closed = __atomic_load_n(&a->nclosed, __ATOMIC_RELAXED);
	return a->detaching && *closed < *total;
}

void attacher__on_progress(struct attacher *a,
			   void (*fn)(void *ctx, size_t objects, unsigned links), void *ctx)
{
	a->progress = fn;
	a->progress_ctx = ctx;
}
