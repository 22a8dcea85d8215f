// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuops.c: the GPU_OPS block body (layout in capture.h), GT_REC_GPU_OP
 * records delta-coded against the previous record of the same stream and
 * kind, so a launch-bound loop costs a few bytes per operation, not 104.
 */
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "capture/capture_priv.h"
#include "gaptrace/gaptrace.h"
#include "support/util.h"

/* Fields an entry carries only when they differ from its context's previous record. */
#define F_CPU	  0x001
#define F_TS	  0x002
#define F_PID	  0x004
#define F_TID	  0x008
#define F_BYTES	  0x010
#define F_CONTEXT 0x020
#define F_NAME	  0x040
#define F_SUBKIND 0x080
#define F_RTID	  0x100
#define F_GEOM	  0x200
#define F_ALL	  0x3ff

/* Longest entry: context and key, mask, 3 times, 10 masked fields (geometry is 6). */
#define GPUOPS_MAX_ENTRY (10 + 3 * 5 + 2 + 3 * 10 + 4 * 5 + 10 + 10 + 3 * 5 + 3 + 6 * 5)
/* Body head: u32 count | u32 flags (0). */
#define GPUOPS_HEAD 8
/* Smallest entry: context, mask, start, duration, op id: one byte each. */
#define GPUOPS_MIN_ENTRY 5
/* Hash slots of the encoder: twice the contexts, a power of two. */
#define ENC_SLOTS (2 * GT_CAP_GPU_MAX_CTX)

_Static_assert(sizeof(struct gt_gpu_op) == 104, "GPU_OPS codes every byte of gt_gpu_op");
_Static_assert((ENC_SLOTS & (ENC_SLOTS - 1)) == 0, "slot count is a power of two");
_Static_assert(GPUOPS_MAX_ENTRY >= 10 + 3 * 5 + 2 + 3 * 10 + 4 * 5 + 2 * 10 + 3 * 5 + 3 + 6 * 5,
	       "an entry's longest varints fit the room reserved for it");

static uint64_t zigzag(uint64_t delta)
{
	return (delta << 1) ^ (uint64_t)((int64_t)delta >> 63);
}

static uint64_t unzigzag(uint64_t v)
{
	return (v >> 1) ^ (uint64_t) - (int64_t)(v & 1);
}

/* Writes v at p (room for 10 bytes); returns the byte after it. */
static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* -1 when the varint runs past len or does not fit 64 bits. */
static int get_varint(const uint8_t *p, size_t len, size_t *off, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t byte;

		if (*off >= len)
			return -1;
		byte = p[(*off)++];
		if (shift == 63 && byte > 1)
			return -1;
		x |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

static int get_u32v(const uint8_t *p, size_t len, size_t *off, uint32_t *v)
{
	uint64_t x;

	if (get_varint(p, len, off, &x) || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/* ---- encoder ---- */

static uint32_t key_hash(uint16_t kind, uint32_t device, uint32_t stream)
{
	uint64_t k = ((uint64_t)device << 32 | stream) ^ ((uint64_t)kind << 51);

	k *= 0x9E3779B97F4A7C15ULL;
	return (uint32_t)(k >> 40);
}

void gpuops_enc__reset(struct gpuops_enc *e)
{
	capture_buf__reset(&e->body);
	e->count = 0;
	e->nctx = 0;
	if (e->slots)
		memset(e->slots, 0, ENC_SLOTS * sizeof(*e->slots));
}

void gpuops_enc__free(struct gpuops_enc *e)
{
	capture_buf__free(&e->body);
	free(e->slots);
	free(e->prev);
	memset(e, 0, sizeof(*e));
}

/* The context index of op's (kind, device, stream), or -1 when a new one is needed. */
static int64_t enc_lookup(struct gpuops_enc *e, const struct gaptrace_gpu_rec *r, uint32_t *slot)
{
	uint32_t i = key_hash(r->kind, r->device, r->stream) & (ENC_SLOTS - 1);

	for (;; i = (i + 1) & (ENC_SLOTS - 1)) {
		uint32_t idx = e->slots[i];
		const struct gaptrace_gpu_rec *p;

		if (!idx) {
			*slot = i;
			return -1;
		}
		p = &e->prev[idx - 1].rec;
		if (p->kind == r->kind && p->device == r->device && p->stream == r->stream)
			return idx - 1;
	}
}

int gpuops_enc__add(struct gpuops_enc *e, const struct gt_gpu_op *op)
{
	const struct gaptrace_gpu_rec *r = &op->rec;
	struct gt_gpu_op *pv;
	uint32_t slot = 0, mask = 0;
	uint8_t *p;
	int64_t idx;

	if (!e->slots) {
		e->slots = gt_xcalloc(ENC_SLOTS, sizeof(*e->slots));
		e->prev = gt_xcalloc(GT_CAP_GPU_MAX_CTX, sizeof(*e->prev));
	}
	if (!e->body.len)
		memset(buf_grow(&e->body, GPUOPS_HEAD), 0, GPUOPS_HEAD);
	idx = enc_lookup(e, r, &slot);
	if (idx < 0 && e->nctx >= GT_CAP_GPU_MAX_CTX)
		return 1;
	/* Room for the longest entry once, then plain stores: this runs per GPU record. */
	if (e->body.cap - e->body.len < GPUOPS_MAX_ENTRY)
		gt_grow((void **)&e->body.data, &e->body.cap, e->body.len + GPUOPS_MAX_ENTRY, 1);
	p = e->body.data + e->body.len;
	if (idx < 0) {
		idx = e->nctx++;
		e->slots[slot] = (uint32_t)idx + 1;
		pv = &e->prev[idx];
		/* A new context starts from a zero record of its key. */
		memset(pv, 0, sizeof(*pv));
		pv->rec.kind = r->kind;
		pv->rec.device = r->device;
		pv->rec.stream = r->stream;
		p = put_varint(p, 0);
		p = put_varint(p, r->kind);
		p = put_varint(p, r->device);
		p = put_varint(p, r->stream);
	} else {
		pv = &e->prev[idx];
		p = put_varint(p, (uint64_t)idx + 1);
	}
	mask |= op->hdr.cpu != pv->hdr.cpu ? F_CPU : 0;
	mask |= op->hdr.ts_ns != pv->hdr.ts_ns ? F_TS : 0;
	mask |= op->pid != pv->pid ? F_PID : 0;
	mask |= op->tid != pv->tid ? F_TID : 0;
	mask |= r->bytes != pv->rec.bytes ? F_BYTES : 0;
	mask |= r->context != pv->rec.context ? F_CONTEXT : 0;
	mask |= r->name_id != pv->rec.name_id ? F_NAME : 0;
	mask |= r->subkind != pv->rec.subkind ? F_SUBKIND : 0;
	mask |= r->tid != pv->rec.tid ? F_RTID : 0;
	mask |= memcmp(r->grid, pv->rec.grid, sizeof(r->grid)) ||
			memcmp(r->block, pv->rec.block, sizeof(r->block))
		    ? F_GEOM
		    : 0;
	p = put_varint(p, mask);
	p = put_varint(p, zigzag(r->start_ns - pv->rec.start_ns));
	p = put_varint(p, zigzag(r->end_ns - r->start_ns));
	p = put_varint(p, zigzag(r->op_id - pv->rec.op_id));
	if (mask) {
		if (mask & F_CPU)
			p = put_varint(p, op->hdr.cpu);
		if (mask & F_TS)
			p = put_varint(p, zigzag(op->hdr.ts_ns - pv->hdr.ts_ns));
		if (mask & F_PID)
			p = put_varint(p, op->pid);
		if (mask & F_TID)
			p = put_varint(p, op->tid);
		if (mask & F_BYTES)
			p = put_varint(p, zigzag(r->bytes - pv->rec.bytes));
		if (mask & F_CONTEXT)
			p = put_varint(p, r->context);
		if (mask & F_NAME)
			p = put_varint(p, r->name_id);
		if (mask & F_SUBKIND)
			p = put_varint(p, r->subkind);
		if (mask & F_RTID)
			p = put_varint(p, r->tid);
		if (mask & F_GEOM) {
			for (int i = 0; i < 3; i++)
				p = put_varint(p, r->grid[i]);
			for (int i = 0; i < 3; i++)
				p = put_varint(p, r->block[i]);
		}
	}
	e->body.len = (size_t)(p - e->body.data);
	*pv = *op;
	e->count++;
	put_u32(e->body.data, e->count);
	return 0;
}

/* ---- decoder ---- */

/* Applies one entry's fields (after its context) to rec, the context's previous record. */
static int decode_fields(const uint8_t *p, size_t len, size_t *off, struct gt_gpu_op *rec)
{
	struct gaptrace_gpu_rec *r = &rec->rec;
	uint64_t mask, v;
	uint32_t u;

	if (get_varint(p, len, off, &mask) || (mask & ~(uint64_t)F_ALL))
		return -1;
	if (get_varint(p, len, off, &v))
		return -1;
	r->start_ns += unzigzag(v);
	if (get_varint(p, len, off, &v))
		return -1;
	r->end_ns = r->start_ns + unzigzag(v);
	if (get_varint(p, len, off, &v))
		return -1;
	r->op_id += unzigzag(v);
	if ((mask & F_CPU) && get_u32v(p, len, off, &rec->hdr.cpu))
		return -1;
	if (mask & F_TS) {
		if (get_varint(p, len, off, &v))
			return -1;
		rec->hdr.ts_ns += unzigzag(v);
	}
	if ((mask & F_PID) && get_u32v(p, len, off, &rec->pid))
		return -1;
	if ((mask & F_TID) && get_u32v(p, len, off, &rec->tid))
		return -1;
	if (mask & F_BYTES) {
		if (get_varint(p, len, off, &v))
			return -1;
		r->bytes += unzigzag(v);
	}
	if ((mask & F_CONTEXT) && get_u32v(p, len, off, &r->context))
		return -1;
	if ((mask & F_NAME) && get_u32v(p, len, off, &r->name_id))
		return -1;
	if (mask & F_SUBKIND) {
		if (get_u32v(p, len, off, &u) || u > UINT16_MAX)
			return -1;
		r->subkind = (uint16_t)u;
	}
	if ((mask & F_RTID) && get_u32v(p, len, off, &r->tid))
		return -1;
	if (mask & F_GEOM) {
		for (int i = 0; i < 3; i++)
			if (get_u32v(p, len, off, &r->grid[i]))
				return -1;
		for (int i = 0; i < 3; i++)
			if (get_u32v(p, len, off, &r->block[i]))
				return -1;
	}
	return 0;
}

int capture__gpu_ops(const void *body, size_t len,
		     int (*cb)(const void *rec, size_t size, void *ctx), void *ctx)
{
	const uint8_t *p = body;
	struct gt_gpu_op *prev = NULL, out;
	size_t off = GPUOPS_HEAD, cap = 0, nctx = 0;
	uint32_t count;
	int ret = -1;

	if (len < GPUOPS_HEAD || get_u32(p + 4))
		return -1;
	count = get_u32(p);
	/* Every entry takes bytes: a count the body cannot hold is damage, not a loop bound. */
	if (count > (len - GPUOPS_HEAD) / GPUOPS_MIN_ENTRY)
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t ci;
		uint32_t kind, device, stream;

		if (get_varint(p, len, &off, &ci))
			goto out;
		if (ci == 0) {
			if (nctx >= GT_CAP_GPU_MAX_CTX || get_u32v(p, len, &off, &kind) ||
			    kind > UINT16_MAX || get_u32v(p, len, &off, &device) ||
			    get_u32v(p, len, &off, &stream))
				goto out;
			gt_grow((void **)&prev, &cap, nctx, sizeof(*prev));
			memset(&prev[nctx], 0, sizeof(*prev));
			prev[nctx].hdr.type = GT_REC_GPU_OP;
			prev[nctx].hdr.size = sizeof(*prev);
			prev[nctx].rec.kind = (uint16_t)kind;
			prev[nctx].rec.device = device;
			prev[nctx].rec.stream = stream;
			ci = ++nctx;
		} else if (ci > nctx) {
			goto out;
		}
		out = prev[ci - 1];
		if (decode_fields(p, len, &off, &out))
			goto out;
		prev[ci - 1] = out;
		if (cb && (ret = cb(&out, sizeof(out), ctx)))
			goto out;
		ret = -1;
	}
	/* Bytes after the last entry mean the count or an entry is wrong. */
	ret = off == len ? 0 : -1;
out:
	free(prev);
	return ret;
}
