// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * export_proto.c: the same trace as export.c's JSON, as a Perfetto protobuf
 * trace (TrackEvent): smaller and faster for the Perfetto UI to load on
 * large captures.  Written by hand: a few varint and length-delimited fields.
 *
 * Field numbers are those of Perfetto's public schema
 * (protos/perfetto/trace/trace.proto, trace_packet.proto,
 * track_event/track_event.proto, track_descriptor.proto,
 * process_descriptor.proto, thread_descriptor.proto, interned_data.proto);
 * tests/data/perfetto_min.proto lists the ones used here for protoc.
 *
 * Every slice becomes a SLICE_BEGIN and a SLICE_END event on its track, in
 * time order; at one instant ends come before begins and a child ends
 * before its parent, so each track's slices nest as in the JSON.  Names are
 * interned per sequence (one sequence, incremental state cleared once).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "output/export.h"
#include "output/export_priv.h"
#include "support/u64map.h"
#include "support/util.h"

/* Trace */
#define F_TRACE_PACKET 1
/* TracePacket */
#define F_PKT_TIMESTAMP	  8
#define F_PKT_SEQ_ID	  10
#define F_PKT_TRACK_EVENT 11
#define F_PKT_INTERNED	  12
#define F_PKT_SEQ_FLAGS	  13
#define F_PKT_TRACK_DESC  60
#define SEQ_STATE_CLEARED 1 /* SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED */
#define SEQ_NEEDS_STATE	  2 /* SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE */
/* TrackEvent */
#define F_TE_CATEGORY_IIDS 3
#define F_TE_TYPE	   9
#define F_TE_NAME_IID	   10
#define F_TE_TRACK_UUID	   11
#define TE_SLICE_BEGIN	   1
#define TE_SLICE_END	   2
/* InternedData: event_categories 1, event_names 2; each entry iid 1, name 2. */
#define F_ID_CATEGORIES 1
#define F_ID_NAMES	2
#define F_IID		1
#define F_INAME		2
/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
#define F_TD_UUID    1
#define F_TD_PROCESS 3
#define F_TD_THREAD  4
#define F_TD_PARENT  5
#define F_PD_PID     1
#define F_PD_NAME    6
#define F_THD_PID    1
#define F_THD_TID    2
#define F_THD_NAME   5

#define SEQ_ID 1

/* A message being built; nested messages are built first, then copied in. */
struct pb {
	uint8_t *p;
	size_t len, cap;
};

static void pb_raw(struct pb *b, const void *src, size_t n)
{
	gt_grow((void **)&b->p, &b->cap, b->len + n, 1);
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_raw(b, tmp, n);
}

static void pb_uint(struct pb *b, uint32_t field, uint64_t v)
{
	pb_varint(b, (uint64_t)field << 3);
	pb_varint(b, v);
}

static void pb_bytes(struct pb *b, uint32_t field, const void *s, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, n);
	pb_raw(b, s, n);
}

/* A string field: bytes that are not UTF-8 become U+FFFD, as in the JSON (Perfetto wants UTF-8). */
static void pb_str(struct pb *b, uint32_t field, const char *s, struct pb *scratch)
{
	struct pb clean = *scratch;

	clean.len = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		size_t len = *p < 0x80 ? 1 : gt_utf8_len((const char *)p);

		if (!len) {
			pb_raw(&clean, "\xef\xbf\xbd", 3);
			continue;
		}
		pb_raw(&clean, p, len);
		p += len - 1;
	}
	pb_bytes(b, field, clean.p, clean.len);
	*scratch = clean;
}

struct px {
	FILE *f;
	struct pb pkt, msg, sub, sub2, clean;
	struct u64map names; /* name hash -> iid (strings kept in strs) */
	char **strs;
	size_t nstrs, strs_cap;
	uint64_t cat_iid[8];
	const char *cats[8];
	size_t ncats;
	bool first;
};

/* Writes pkt as one Trace.packet and empties it. */
static void packet_out(struct px *x)
{
	struct pb hdr = {};

	pb_varint(&hdr, (uint64_t)F_TRACE_PACKET << 3 | 2);
	pb_varint(&hdr, x->pkt.len);
	fwrite(hdr.p, 1, hdr.len, x->f);
	fwrite(x->pkt.p, 1, x->pkt.len, x->f);
	free(hdr.p);
	x->pkt.len = 0;
}

static uint64_t proc_uuid(uint32_t pid)
{
	return 1ULL << 63 | pid;
}

static uint64_t thread_uuid(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

static void track_cb(void *ctx, const struct export_track *t)
{
	struct px *x = ctx;

	if (t->kind != XT_PROCESS && t->kind != XT_THREAD)
		return;
	x->msg.len = x->sub.len = 0;
	if (t->kind == XT_PROCESS) {
		pb_uint(&x->sub, F_PD_PID, t->pid);
		pb_str(&x->sub, F_PD_NAME, t->name, &x->clean);
		pb_uint(&x->msg, F_TD_UUID, proc_uuid(t->pid));
		pb_bytes(&x->msg, F_TD_PROCESS, x->sub.p, x->sub.len);
	} else {
		pb_uint(&x->sub, F_THD_PID, t->pid);
		pb_uint(&x->sub, F_THD_TID, t->tid);
		pb_str(&x->sub, F_THD_NAME, t->name, &x->clean);
		pb_uint(&x->msg, F_TD_UUID, thread_uuid(t->pid, t->tid));
		pb_uint(&x->msg, F_TD_PARENT, proc_uuid(t->pid));
		pb_bytes(&x->msg, F_TD_THREAD, x->sub.p, x->sub.len);
	}
	pb_uint(&x->pkt, F_PKT_SEQ_ID, SEQ_ID);
	if (x->first) {
		/* Interned names need a sequence whose state starts here. */
		pb_uint(&x->pkt, F_PKT_SEQ_FLAGS, SEQ_STATE_CLEARED);
		x->first = false;
	}
	pb_bytes(&x->pkt, F_PKT_TRACK_DESC, x->msg.p, x->msg.len);
	packet_out(x);
}

/* The iid of s in x->names (field F_ID_NAMES), adding it to sub2 (InternedData) when new. */
static uint64_t name_iid(struct px *x, const char *s)
{
	uint64_t h = gt_hash64(s, strlen(s), 0), iid;

	/* Hash collisions are told apart by the string: the next probe key is tried. */
	for (uint64_t probe = h;; probe = probe * 31 + 7) {
		uint64_t v;

		if (!u64map_get(&x->names, probe, &v)) {
			gt_grow((void **)&x->strs, &x->strs_cap, x->nstrs, sizeof(*x->strs));
			x->strs[x->nstrs++] = gt_xstrdup(s);
			iid = x->nstrs;
			u64map_put(&x->names, probe, iid);
			x->sub.len = 0;
			pb_uint(&x->sub, F_IID, iid);
			pb_str(&x->sub, F_INAME, s, &x->clean);
			pb_bytes(&x->sub2, F_ID_NAMES, x->sub.p, x->sub.len);
			return iid;
		}
		if (!strcmp(x->strs[v - 1], s))
			return v;
	}
}

static uint64_t cat_iid(struct px *x, const char *cat)
{
	for (size_t i = 0; i < x->ncats; i++)
		if (!strcmp(x->cats[i], cat))
			return x->cat_iid[i];
	if (x->ncats == GT_ARRAY_SIZE(x->cats))
		return 0;
	x->cats[x->ncats] = cat;
	x->cat_iid[x->ncats] = x->ncats + 1;
	x->sub.len = 0;
	pb_uint(&x->sub, F_IID, x->ncats + 1);
	pb_str(&x->sub, F_INAME, cat, &x->clean);
	pb_bytes(&x->sub2, F_ID_CATEGORIES, x->sub.p, x->sub.len);
	return ++x->ncats;
}

struct pt {
	uint64_t t;
	uint32_t ev;
	uint8_t end;
};

static const struct xb *sort_x;

/* Ends first; then parents begin first (as cmp_ev) and children end first. */
static int cmp_pt(const void *pa, const void *pb)
{
	const struct pt *a = pa, *b = pb;
	const struct ev *ea = &sort_x->ev[a->ev], *eb = &sort_x->ev[b->ev];

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->end != b->end)
		return a->end ? -1 : 1;
	if (!a->end)
		return a->ev < b->ev ? -1 : a->ev > b->ev;
	if (ea->ts != eb->ts)
		return ea->ts > eb->ts ? -1 : 1;
	return a->ev > b->ev ? -1 : a->ev < b->ev;
}

static void slice_event(struct px *x, const struct xb *xb, const struct pt *p)
{
	const struct ev *e = &xb->ev[p->ev];
	char name[160];
	const char *cat;
	uint64_t niid = 0, ciid = 0;

	x->msg.len = x->sub2.len = 0;
	if (!p->end) {
		export__event_name(xb, e, name, sizeof(name), &cat);
		niid = name_iid(x, name);
		ciid = cat_iid(x, cat);
	}
	pb_uint(&x->pkt, F_PKT_TIMESTAMP, p->t * EXPORT_QUANTUM_NS);
	pb_uint(&x->pkt, F_PKT_SEQ_ID, SEQ_ID);
	pb_uint(&x->pkt, F_PKT_SEQ_FLAGS, SEQ_NEEDS_STATE);
	if (x->sub2.len)
		pb_bytes(&x->pkt, F_PKT_INTERNED, x->sub2.p, x->sub2.len);
	pb_uint(&x->msg, F_TE_TYPE, p->end ? TE_SLICE_END : TE_SLICE_BEGIN);
	pb_uint(&x->msg, F_TE_TRACK_UUID, thread_uuid(e->pid, e->tid));
	if (!p->end) {
		if (ciid)
			pb_uint(&x->msg, F_TE_CATEGORY_IIDS, ciid);
		pb_uint(&x->msg, F_TE_NAME_IID, niid);
	}
	pb_bytes(&x->pkt, F_PKT_TRACK_EVENT, x->msg.p, x->msg.len);
	packet_out(x);
}

int export__perfetto_proto(FILE *f, const struct an_result *r)
{
	struct px x = {.f = f, .first = true};
	struct pt *pts;
	struct lane *lanes;
	size_t nlanes, n = 0;
	struct xb xb;

	export__build(&xb, r, &lanes, &nlanes);
	export__tracks(&xb, lanes, nlanes, track_cb, &x);
	pts = gt_xmalloc(sizeof(*pts) * (2 * xb.n + 1));
	for (size_t i = 0; i < xb.n; i++) {
		const struct ev *e = &xb.ev[i];

		/* Flows are left out: TrackEvent binds them to slices, not to instants. */
		if (e->kind >= EV_FLOW_S)
			continue;
		pts[n++] = (struct pt){e->ts, (uint32_t)i, 0};
		pts[n++] = (struct pt){e->ts + e->dur, (uint32_t)i, 1};
	}
	sort_x = &xb;
	gt_sort(pts, n, sizeof(*pts), cmp_pt);
	for (size_t i = 0; i < n; i++)
		slice_event(&x, &xb, &pts[i]);
	free(pts);
	for (size_t i = 0; i < x.nstrs; i++)
		free(x.strs[i]);
	free(x.strs);
	u64map_free(&x.names);
	free(x.pkt.p);
	free(x.msg.p);
	free(x.sub.p);
	free(x.sub2.p);
	free(x.clean.p);
	export__done(&xb, lanes);
	return ferror(f) ? -1 : 0;
}
