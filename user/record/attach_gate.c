// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attach_gate.c: the GPU activity probes taken off and put back while the
 * recording runs, for the monitor's GPU duty cycle: their semaphores are
 * what tells the CUPTI library to collect, and collecting is what costs.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "record/attach.h"
#include "record/attach_priv.h"
#include "support/util.h"

/* usdt_names[] indexes of gpu_launch, gpu_op and gpu_batch (attach_usdt.c). */
#define GATED_FIRST 2
#define GATED_LAST  4

/* One gated probe of one object in one process, and its link while the gate is on. */
struct gate_site {
	pid_t pid;
	char *path;
	int fd;		/* the checked object, held for re-attaching (-1: path is a plain name) */
	unsigned probe; /* usdt_names[] index */
	unsigned specs;
	struct bpf_link *link;
};

bool attach__gated(size_t i)
{
	return i >= GATED_FIRST && i <= GATED_LAST;
}

bool attach__gate_hold(struct attacher *a, pid_t pid, const char *path, size_t i, unsigned specs,
		       size_t *site)
{
	struct gate_site *g;
	char held[64];
	int fd = -1, from;

	/*
	 * path is /proc/self/fd/N of the file attach.c checked, closed after
	 * this scan: a copy of that fd keeps naming the same inode for the
	 * re-attach, so the gate reopens nothing by a name the target controls.
	 */
	if (sscanf(path, "/proc/self/fd/%d", &from) == 1 &&
	    (fd = fcntl(from, F_DUPFD_CLOEXEC, 0)) >= 0) {
		snprintf(held, sizeof(held), "/proc/self/fd/%d", fd);
		path = held;
	}
	gt_grow((void **)&a->gate, &a->gate_cap, a->ngate, sizeof(*a->gate));
	g = &a->gate[a->ngate];
	*g = (struct gate_site){pid, gt_xstrdup(path), fd, (unsigned)i, specs, NULL};
	*site = a->ngate++;
	return a->gate_off;
}

void attach__gate_link(struct attacher *a, size_t site, struct bpf_link *l)
{
	if (site < a->ngate)
		a->gate[site].link = l;
}

void attach__gate_forget(struct attacher *a, pid_t pid)
{
	size_t n = 0;

	for (size_t i = 0; i < a->ngate; i++) {
		if (a->gate[i].pid == pid) {
			/* Its link goes with the process's other links (attach__reap). */
			free(a->gate[i].path);
			if (a->gate[i].fd >= 0)
				close(a->gate[i].fd);
			continue;
		}
		a->gate[n++] = a->gate[i];
	}
	a->ngate = n;
}

void attach__gate_free(struct attacher *a)
{
	for (size_t i = 0; i < a->ngate; i++) {
		free(a->gate[i].path);
		if (a->gate[i].fd >= 0)
			close(a->gate[i].fd);
	}
	free(a->gate);
	a->gate = NULL;
	a->ngate = a->gate_cap = 0;
}

/*
 * The site's link leaves the attacher's list for the reapers: closing it
 * waits for the kernel's grace periods, which the drain loop must not.
 */
static void gate_release(struct attacher *a, struct gate_site *g)
{
	bool found = false;

	pthread_mutex_lock(&a->reap_lock);
	for (size_t i = 0; i < a->nlinks; i++) {
		if (a->links[i].link != g->link)
			continue;
		gt_grow((void **)&a->reap, &a->reap_cap, a->nreap, sizeof(*a->reap));
		a->reap[a->nreap++] = a->links[i];
		a->links[i] = a->links[--a->nlinks];
		found = true;
		break;
	}
	if (found)
		pthread_cond_broadcast(&a->reap_cond);
	pthread_mutex_unlock(&a->reap_lock);
	/* No reaper thread could start: closed here. */
	while (!a->nreapers && a->nreap)
		attach__destroy_link(a, &a->reap[--a->nreap]);
	g->link = NULL;
}

int attacher__gpu_gate(struct attacher *a, bool on)
{
	pid_t was = a->link_pid;
	int changed = 0, err = 0;

	a->gate_off = !on;
	if (a->detached)
		return 0;
	for (size_t i = 0; i < a->ngate; i++) {
		struct gate_site *g = &a->gate[i];

		if (!on && g->link) {
			gate_release(a, g);
			changed++;
		} else if (on && !g->link) {
			a->link_pid = g->pid;
			g->link = attach__usdt_probe(a, g->probe, g->pid, g->path, g->specs);
			if (!g->link) {
				err = errno;
				continue;
			}
			attach__add_link(a, g->link, g->specs, true);
			changed++;
		}
	}
	a->link_pid = was;
	return !changed && err ? -err : changed;
}
