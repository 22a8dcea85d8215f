/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * export_priv.h: what the trace writers (export.c: Chrome JSON,
 * export_proto.c: Perfetto protobuf) share: the sorted slices and flows of
 * a capture, its tracks and their names.  Included only by output/export*.c.
 */
#ifndef GT_EXPORT_PRIV_H
#define GT_EXPORT_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct an_result;
struct timeline;
struct tl_thread;

enum ev_kind {
	EV_SPAN = 0, /* a: thread, b: span */
	EV_CALL,     /* a: thread, b: call */
	EV_OP,	     /* a: op */
	EV_GAP,	     /* a: gap */
	EV_HOP,	     /* a: gap, b: hop */
	EV_LAUNCH,   /* a: gap (launch call -> GPU start) */
	EV_UNIT,     /* a: unit */
	EV_LOSS,     /* a: loss window */
	EV_FLOW_S,   /* a: flow id, b: 0 wakeup, 1 launch */
	EV_FLOW_F,
};

struct ev {
	uint64_t ts, dur; /* quanta since the base */
	uint32_t pid, tid;
	uint32_t a, b;
	uint16_t depth; /* nesting order among slices that start together */
	uint8_t kind;
};

struct xb {
	const struct an_result *r;
	const struct timeline *tl;
	uint64_t base;
	struct ev *ev;
	size_t n, cap;
	uint32_t next_flow;
	uint32_t unit_lanes;
};

struct lane {
	uint32_t device, stream, lane, tid;
	uint64_t end;
};

/* One entry of the track list, in the order the JSON metadata lists them. */
enum export_track_kind { XT_PROCESS, XT_THREAD, XT_PROCESS_SORT, XT_THREAD_SORT };
struct export_track {
	enum export_track_kind kind;
	uint32_t pid, tid;
	const char *name; /* XT_PROCESS, XT_THREAD */
	long sort;	  /* XT_*_SORT */
};

/* The events of r (x->ev, sorted: time, slices before flows, parents first) and GPU lanes. */
void export__build(struct xb *x, const struct an_result *r, struct lane **lanes, size_t *nlanes);
void export__done(struct xb *x, struct lane *lanes);
/* Every process and thread track with its name and sort order. */
void export__tracks(const struct xb *x, const struct lane *lanes, size_t nlanes,
		    void (*cb)(void *ctx, const struct export_track *t), void *ctx);
/* A slice's name and category, as both formats show them. */
void export__event_name(const struct xb *x, const struct ev *e, char *name, size_t len,
			const char **cat);
void export__thread_label(const struct an_result *r, uint32_t tid, char *buf, size_t len);
const struct tl_thread *export__thread_of(const struct timeline *tl, uint32_t tid);
bool export__has_track(const struct tl_thread *t);

#endif /* GT_EXPORT_PRIV_H */
