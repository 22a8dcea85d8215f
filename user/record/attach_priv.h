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

#include "support/u64map.h"

struct gaptrace_bpf;
struct probe_table;
struct bpf_link;
struct gate_site;

/* A link and what it holds: the process it serves, libbpf's USDT spec ids. */
struct gt_link {
	struct bpf_link *link;
	pid_t pid;	   /* the process; 0: kept to the stop (samplers) */
	unsigned spec_ids; /* USDT: spec ids in use until it is destroyed */
	bool usdt;	   /* destroyed under usdt_lock (libbpf's USDT state) */
};

/* Threads closing the links of exited processes while the recording runs. */
#define REAPERS 16

struct seen_obj {
	pid_t pid;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
};

struct attacher {
	struct gaptrace_bpf *skel;
	const struct probe_table *probes;
	struct gt_link *links;
	size_t nlinks, links_cap;
	pid_t link_pid; /* the process whose links are being made */
	/*
	 * libbpf's USDT state (spec ids, their free list) is not thread-safe:
	 * its attaches and its links' destroys hold this lock.
	 */
	pthread_mutex_t usdt_lock;
	unsigned spec_ids_used; /* under usdt_lock */
	unsigned usdt_skipped;	/* probes not attached: too many specs or sites */
	unsigned fd_refused;	/* attaches refused for lack of fds */
	unsigned link_capped;	/* objects not probed: GT_MAX_LINKS held */
	/* The links of exited processes, closed by the reapers. */
	pthread_mutex_t reap_lock;
	pthread_cond_t reap_cond;
	struct gt_link *reap;
	size_t nreap, reap_cap;
	size_t reaped;
	bool reap_stop;
	unsigned nreapers;
	pthread_t reapers[REAPERS];
	uint64_t last_attach_ns; /* the last link made (reapers wait for a pause) */
	struct seen_obj *seen;
	size_t nseen, seen_cap;
	struct u64map seen_index; /* seen_key -> an index in seen (checked: may be stale) */
	int *perf_fds;
	size_t nperf, perf_cap;
	unsigned usdt_links, uprobe_links, samplers;
	unsigned loader_links; /* _dl_debug_state hooks, one per process */
	unsigned usdt_seen;    /* bit per usdt_names[] entry */
	bool multi;	       /* uprobes as multi-uprobe links (attacher__choose_programs) */
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
	struct gate_site *gate; /* attach_gate.c: the GPU activity probes' sites */
	size_t ngate, gate_cap;
	bool gate_off; /* attacher__gpu_gate(false): those probes stay off */
};

/* attach.c */
void attach__add_link(struct attacher *a, struct bpf_link *l, unsigned spec_ids, bool usdt);
bool attach__target_gone(struct attacher *a, pid_t pid);
void attach__warn_gone(struct attacher *a, pid_t pid, const char *what, const char *name);
void attach__note_slow(const char *what, const char *name, pid_t pid, uint64_t t0);
void attach__note_refused(struct attacher *a, pid_t pid, int err);
/* False (warned once, counted) when GT_MAX_LINKS are held: pid's object is not probed. */
bool attach__room(struct attacher *a, pid_t pid);
/*
 * attach_multi.c: one multi-uprobe link on the file offsets[0..cnt) of
 * path, for pid (what names the first, for messages).
 */
struct bpf_link *attach__multi_link(struct attacher *a, const struct bpf_program *prog, pid_t pid,
				    const char *path, const char *what,
				    const unsigned long *offsets, const uint64_t *cookies,
				    size_t cnt, bool ret);
/*
 * attach_usdt.c: the USDT probes of the object at path (/proc/self/fd/N of
 * the checked open file, attach.c's mapping_open), for pid; name: the
 * object's own path, for messages.
 */
int attach__usdt(struct attacher *a, pid_t pid, const char *name, const char *path);
/* The USDT probe usdt_names[i] of the object at path, for pid: one link, or NULL (errno). */
struct bpf_link *attach__usdt_probe(struct attacher *a, size_t i, pid_t pid, const char *path,
				    unsigned specs);
/*
 * attach_gate.c: the GPU activity probes (gpu_launch, gpu_op, gpu_batch:
 * usdt_names[i] with attach__gated(i)) of each object are remembered (path:
 * /proc/self/fd/N of the checked object, whose fd the gate copies), so
 * that attacher__gpu_gate can take them off and put them back.  Returns
 * true when the probe must not be attached now (the gate is off); *site
 * gets the site to give the link to (attach__gate_link), NULL if none.
 */
bool attach__gated(size_t i);
bool attach__gate_hold(struct attacher *a, pid_t pid, const char *path, size_t i, unsigned specs,
		       size_t *site);
void attach__gate_link(struct attacher *a, size_t site, struct bpf_link *l);
void attach__gate_forget(struct attacher *a, pid_t pid);
void attach__gate_free(struct attacher *a);
/* attach_detach.c */
void attach__reapers_start(struct attacher *a);
/* Hands the links of pid to the reapers. */
void attach__reap(struct attacher *a, pid_t pid);
void attach__reapers_join(struct attacher *a);
void attach__destroy_link(struct attacher *a, struct gt_link *l);

#endif /* GT_ATTACH_PRIV_H */
