// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attach_detach.c: takes gaptrace's probes and samplers off the traced
 * process at the stop, without holding up the end of the capture; how far
 * an attach or a detach got, for the status line.
 */
#include <pthread.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "record/attach.h"
#include "record/attach_priv.h"
#include "support/util.h"

/* Most threads one stop spends on closing links. */
#define DETACH_THREADS 32

struct detach_slice {
	struct bpf_link **links;
	size_t n, from, step;
	size_t *closed; /* the attacher's count of links closed */
};

static void *detach_slice(void *arg)
{
	struct detach_slice *d = arg;

	for (size_t i = d->from; i < d->n; i += d->step) {
		bpf_link__destroy(d->links[i]);
		__atomic_fetch_add(d->closed, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * Each uprobe link's close unregisters its uprobe and waits for a grace
 * period: ~70 ms each here (23 s seen for one under load), one after the
 * other for every library of a PyTorch target.  Closed from several threads,
 * the waits overlap.  Links a thread cannot be started for are closed here.
 */
static void destroy_links(struct bpf_link **links, size_t n, size_t *closed)
{
	struct detach_slice d[DETACH_THREADS];
	pthread_t th[DETACH_THREADS];
	bool started[DETACH_THREADS] = {};
	size_t nth = GT_MIN(n, (size_t)DETACH_THREADS);

	for (size_t k = 0; k < nth; k++) {
		d[k] = (struct detach_slice){links, n, k, nth, closed};
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

	destroy_links(a->links, a->ndetach, &a->nclosed);
	return NULL;
}

/*
 * Samplers stop now; links close on a thread while the recorder finishes the
 * capture (attacher__free waits for it).  The counts and the attached list
 * stay readable for the END block.  The closes stay slow (the capture is
 * complete early, the exit is not): each uprobe perf event's release waits
 * for synchronize_rcu_tasks_trace, an SRCU and an expedited RCU grace
 * period, one event after another under the kernel's event_mutex
 * (/proc/PID/stack), so the threads overlap little of it.
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
	a->detaching = a->ndetach && !pthread_create(&a->detacher, NULL, detach_all, a);
	if (!a->detaching && a->ndetach) {
		detach_all(a);
		a->ndetach = 0;
	}
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
