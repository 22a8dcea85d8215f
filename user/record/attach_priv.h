/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attach_priv.h: the attacher's state, shared by attach.c (probes and
 * samplers on) and attach_detach.c (everything off at the stop).
 */
#ifndef GT_ATTACH_PRIV_H
#define GT_ATTACH_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct gaptrace_bpf;
struct probe_table;
struct bpf_link;

struct seen_obj {
	pid_t pid;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
};

struct attacher {
	struct gaptrace_bpf *skel;
	const struct probe_table *probes;
	struct bpf_link **links;
	size_t nlinks, links_cap;
	struct seen_obj *seen;
	size_t nseen, seen_cap;
	int *perf_fds;
	size_t nperf, perf_cap;
	unsigned usdt_links, uprobe_links, samplers;
	unsigned loader_links; /* _dl_debug_state hooks, one per process */
	unsigned usdt_seen;    /* bit per usdt_names[] entry */
	bool *attached;	       /* per probe table index: enter and return attached */
	size_t attached_cap;
	bool gone; /* the process being scanned exited while probes were being attached */
	bool gone_said;
	pid_t gone_pid;	    /* the process gone and gone_said are about */
	pid_t target;	    /* the first process attached; a followed one's exit is said under -v */
	pthread_t detacher; /* attacher__detach's thread */
	bool detaching;
	bool detached;	/* attacher__detach ran: later links close at once */
	size_t ndetach; /* links handed to the detacher */
	size_t nclosed; /* ... of them closed so far (atomic: the detacher's threads count) */
	uint64_t detach_from_ns;
	void (*progress)(void *ctx, size_t objects, unsigned links); /* attacher__on_progress */
	void *progress_ctx;
};

#endif /* GT_ATTACH_PRIV_H */
