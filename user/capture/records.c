// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * records.c: the bodies of capture blocks, entry by entry: building them
 * (capture_buf__*) and parsing them back (capture__events, __kv, __stacks,
 * __symbols, __mappings, __probes), and block type names.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

#include "capture/capture.h"
#include "capture/capture_priv.h"
#include "gaptrace/gaptrace.h"
#include "support/util.h"

/* ---- body buffers ---- */

void capture_buf__reset(struct capture_buf *b)
{
	b->len = 0;
}

void capture_buf__free(struct capture_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

static void __attribute__((format(printf, 3, 0)))
buf_vkv(struct capture_buf *b, const char *key, const char *fmt, va_list ap)
{
	size_t klen = strnlen(key, STR_MAX - 1);
	char *val = gt_xvasprintf(fmt, ap);
	/* A %c of NUL would end the string early on the reader's side anyway. */
	size_t vlen = GT_MIN(strlen(val), STR_MAX - 1 - klen);

	buf_put(b, key, klen);
	buf_put(b, "=", 1);
	buf_put(b, val, vlen);
	buf_put(b, "", 1);
	free(val);
}

void capture_buf__kv(struct capture_buf *b, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vkv(b, key, fmt, ap);
	va_end(ap);
}

void capture_buf__key(struct capture_buf *b, enum capture_key key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vkv(b, capture_key__name(key), fmt, ap);
	va_end(ap);
}

void capture_buf__stack_flags(struct capture_buf *b, int32_t stack_id, uint32_t pid, uint16_t flags,
			      const uint64_t *ips, uint16_t nr)
{
	uint8_t *p = buf_grow(b, STACK_FIXED);

	memcpy(p, &stack_id, 4);
	put_u32(p + 4, pid);
	put_u16(p + 8, nr);
	put_u16(p + 10, flags);
	put_u32(p + 12, 0);
	buf_put(b, ips, (size_t)nr * sizeof(*ips));
}

void capture_buf__stack(struct capture_buf *b, int32_t stack_id, uint32_t pid, bool kernel,
			const uint64_t *ips, uint16_t nr)
{
	capture_buf__stack_flags(b, stack_id, pid, kernel ? GT_STACK_KERNEL : 0, ips, nr);
}

void capture_buf__symbol(struct capture_buf *b, uint64_t ip, uint32_t pid, uint32_t sym_off,
			 const char *name, const char *module)
{
	uint16_t nlen = str_len(name), mlen = str_len(module);
	size_t start = b->len;
	uint8_t *p = buf_grow(b, SYM_FIXED);

	put_u64(p, ip);
	put_u32(p + 8, pid);
	put_u32(p + 12, sym_off);
	put_u16(p + 16, nlen);
	put_u16(p + 18, mlen);
	buf_put(b, name, nlen);
	buf_put(b, module, mlen);
	buf_pad8(b, start);
}

void capture_buf__inline(struct capture_buf *b, uint64_t ip, uint32_t pid, uint8_t flags,
			 const char *const *names, size_t n)
{
	size_t start = b->len, k = 0;
	uint8_t *p, len[2];

	for (size_t i = 0; i < n; i++)
		k += str_len(names[i]) > 0;
	k = GT_MIN(k, (size_t)GT_CAP_MAX_INLINE);
	if (!k)
		return;
	p = buf_grow(b, INLINE_FIXED);
	memset(p, 0, INLINE_FIXED);
	put_u64(p, ip);
	put_u32(p + 8, pid);
	p[12] = (uint8_t)k;
	p[13] = flags;
	for (size_t i = 0, put = 0; i < n && put < k; i++) {
		uint16_t l = str_len(names[i]);

		if (!l)
			continue;
		put_u16(len, l);
		buf_put(b, len, 2);
		buf_put(b, names[i], l);
		put++;
	}
	buf_pad8(b, start);
}

void capture_buf__mapping(struct capture_buf *b, uint32_t pid, uint64_t start, uint64_t end,
			  uint64_t pgoff, const uint8_t *build_id, uint8_t build_id_len,
			  const char *path)
{
	uint16_t plen = str_len(path);
	size_t entry = b->len;
	uint8_t *p;

	if (!build_id)
		build_id_len = 0;
	build_id_len = GT_MIN(build_id_len, 20);
	p = buf_grow(b, MAP_FIXED);
	memset(p, 0, MAP_FIXED);
	put_u64(p, start);
	put_u64(p + 8, end);
	put_u64(p + 16, pgoff);
	put_u32(p + 24, pid);
	put_u16(p + 28, plen);
	p[30] = build_id_len;
	if (build_id_len)
		memcpy(p + 32, build_id, build_id_len);
	buf_put(b, path, plen);
	buf_pad8(b, entry);
}

void capture_buf__probe(struct capture_buf *b, uint32_t func_id, const char *name,
			const char *module, const char *category)
{
	uint16_t nlen = str_len(name), mlen = str_len(module), clen = str_len(category);
	size_t start = b->len;
	uint8_t *p = buf_grow(b, PROBE_FIXED);

	memset(p, 0, PROBE_FIXED);
	put_u32(p, func_id);
	put_u16(p + 4, nlen);
	put_u16(p + 6, mlen);
	put_u16(p + 8, clen);
	buf_put(b, name, nlen);
	buf_put(b, module, mlen);
	buf_put(b, category, clen);
	buf_pad8(b, start);
}

/* ---- body parsers ---- */

int capture__events(const void *body, size_t len,
		    int (*cb)(const void *rec, size_t size, void *ctx), void *ctx)
{
	const uint8_t *p = body;
	size_t off = 0;
	uint16_t size;
	int ret;

	while (off < len) {
		if (len - off < sizeof(struct gt_hdr))
			return -1;
		size = get_u16(p + off + 2);
		if (size < sizeof(struct gt_hdr) || size > GT_CAP_MAX_RECORD || size > len - off)
			return -1;
		/* Too short for its type: no consumer could use it; they need not check. */
		if (size < gt_rec_min_size(get_u16(p + off))) {
			off += size;
			continue;
		}
		if (cb && ((uintptr_t)(p + off) & 7)) {
			/* Records are 8-aligned when sizes are multiples of 8; others are copied
			 * so consumers can read their fields directly. */
			uint64_t aligned[GT_CAP_MAX_RECORD / 8];

			memcpy(aligned, p + off, size);
			if ((ret = cb(aligned, size, ctx)))
				return ret;
		} else if (cb && (ret = cb(p + off, size, ctx))) {
			return ret;
		}
		off += size;
	}
	return 0;
}

bool capture__has_records(uint32_t type)
{
	return type == GT_BLK_EVENTS || type == GT_BLK_GPU_OPS;
}

int capture__records(uint32_t type, const void *body, size_t len,
		     int (*cb)(const void *rec, size_t size, void *ctx), void *ctx)
{
	if (type == GT_BLK_EVENTS)
		return capture__events(body, len, cb, ctx);
	if (type == GT_BLK_GPU_OPS)
		return capture__gpu_ops(body, len, cb, ctx);
	return 0;
}

int capture__kv(const void *body, size_t len,
		int (*cb)(const char *key, const char *value, void *ctx), void *ctx)
{
	const char *p = body;
	char s[GT_CAP_MAX_STRING];
	size_t off = 0, n;
	const char *nul;
	char *eq;
	int ret;

	while (off < len) {
		/* The NUL must come within GT_CAP_MAX_STRING bytes: that is the string cap. */
		nul = memchr(p + off, '\0', GT_MIN(len - off, (size_t)GT_CAP_MAX_STRING));
		if (!nul)
			return -1;
		n = (size_t)(nul - (p + off));
		memcpy(s, p + off, n + 1);
		eq = strchr(s, '=');
		if (!eq || eq == s)
			return -1;
		*eq = '\0';
		if (cb && (ret = cb(s, eq + 1, ctx)))
			return ret;
		off += n + 1;
	}
	return 0;
}

int capture__stacks(const void *body, size_t len,
		    int (*cb)(const struct capture_stack *s, void *ctx), void *ctx)
{
	const uint8_t *p = body;
	struct capture_stack s;
	uint64_t *copy = NULL;
	size_t off = 0, ips_len, copy_cap = 0;
	int ret = 0;

	while (off < len) {
		if (len - off < STACK_FIXED) {
			ret = -1;
			goto cleanup;
		}
		memcpy(&s.stack_id, p + off, 4);
		s.pid = get_u32(p + off + 4);
		s.nr = get_u16(p + off + 8);
		s.flags = get_u16(p + off + 10);
		s.kernel = s.flags & GT_STACK_KERNEL;
		ips_len = (size_t)s.nr * 8;
		if (ips_len > len - off - STACK_FIXED) {
			ret = -1;
			goto cleanup;
		}
		if ((uintptr_t)(p + off + STACK_FIXED) & 7) {
			/* Callers index ips as an array: hand out an aligned copy. */
			if (copy_cap < ips_len) {
				copy = gt_xrealloc(copy, ips_len);
				copy_cap = ips_len;
			}
			if (ips_len)
				memcpy(copy, p + off + STACK_FIXED, ips_len);
			s.ips = copy;
		} else {
			s.ips = (const uint64_t *)(const void *)(p + off + STACK_FIXED);
		}
		if (cb && (ret = cb(&s, ctx)))
			goto cleanup;
		off += STACK_FIXED + ips_len;
	}

cleanup:
	free(copy);
	return ret;
}

/*
 * Checks that an entry of fixed bytes followed by strings of the given total
 * length, padded to 8, fits in rem; returns its size or 0.
 */
static size_t entry_size(size_t rem, size_t fixed, size_t strs)
{
	size_t size = (size_t)round8(fixed + strs);

	return size <= rem ? size : 0;
}

int capture__symbols(const void *body, size_t len,
		     int (*cb)(const struct capture_symbol *s, void *ctx), void *ctx)
{
	const uint8_t *p = body;
	struct capture_symbol s;
	size_t off = 0, size;
	int ret;

	while (off < len) {
		if (len - off < SYM_FIXED)
			return -1;
		s.ip = get_u64(p + off);
		s.pid = get_u32(p + off + 8);
		s.sym_off = get_u32(p + off + 12);
		s.name_len = get_u16(p + off + 16);
		s.module_len = get_u16(p + off + 18);
		if (s.name_len > STR_MAX || s.module_len > STR_MAX)
			return -1;
		size = entry_size(len - off, SYM_FIXED, (size_t)s.name_len + s.module_len);
		if (!size)
			return -1;
		s.name = (const char *)p + off + SYM_FIXED;
		s.module = s.name + s.name_len;
		if (cb && (ret = cb(&s, ctx)))
			return ret;
		off += size;
	}
	return 0;
}

int capture__inlines(const void *body, size_t len,
		     int (*cb)(const struct capture_inline *in, void *ctx), void *ctx)
{
	const uint8_t *p = body;
	struct capture_inline in;
	size_t off = 0, pos;
	int ret;

	while (off < len) {
		if (len - off < INLINE_FIXED)
			return -1;
		in.ip = get_u64(p + off);
		in.pid = get_u32(p + off + 8);
		in.n = p[off + 12];
		in.flags = p[off + 13];
		if (!in.n || in.n > GT_CAP_MAX_INLINE)
			return -1;
		pos = off + INLINE_FIXED;
		for (uint8_t i = 0; i < in.n; i++) {
			if (len - pos < 2)
				return -1;
			in.name_len[i] = get_u16(p + pos);
			pos += 2;
			if (!in.name_len[i] || in.name_len[i] > STR_MAX ||
			    len - pos < in.name_len[i])
				return -1;
			in.name[i] = (const char *)p + pos;
			pos += in.name_len[i];
		}
		if (!entry_size(len - off, pos - off, 0))
			return -1;
		if (cb && (ret = cb(&in, ctx)))
			return ret;
		off += entry_size(len - off, pos - off, 0);
	}
	return 0;
}

int capture__mappings(const void *body, size_t len,
		      int (*cb)(const struct capture_mapping *m, void *ctx), void *ctx)
{
	const uint8_t *p = body;
	struct capture_mapping m;
	size_t off = 0, size;
	int ret;

	while (off < len) {
		if (len - off < MAP_FIXED)
			return -1;
		m.start = get_u64(p + off);
		m.end = get_u64(p + off + 8);
		m.pgoff = get_u64(p + off + 16);
		m.pid = get_u32(p + off + 24);
		m.path_len = get_u16(p + off + 28);
		m.build_id_len = p[off + 30];
		if (m.build_id_len > sizeof(m.build_id) || m.path_len > STR_MAX)
			return -1;
		memcpy(m.build_id, p + off + 32, sizeof(m.build_id));
		size = entry_size(len - off, MAP_FIXED, m.path_len);
		if (!size)
			return -1;
		m.path = (const char *)p + off + MAP_FIXED;
		if (cb && (ret = cb(&m, ctx)))
			return ret;
		off += size;
	}
	return 0;
}

int capture__probes(const void *body, size_t len,
		    int (*cb)(const struct capture_probe *pr, void *ctx), void *ctx)
{
	const uint8_t *p = body;
	struct capture_probe pr;
	size_t off = 0, size;
	int ret;

	while (off < len) {
		if (len - off < PROBE_FIXED)
			return -1;
		pr.func_id = get_u32(p + off);
		pr.name_len = get_u16(p + off + 4);
		pr.module_len = get_u16(p + off + 6);
		pr.category_len = get_u16(p + off + 8);
		if (pr.name_len > STR_MAX || pr.module_len > STR_MAX || pr.category_len > STR_MAX)
			return -1;
		size = entry_size(len - off, PROBE_FIXED,
				  (size_t)pr.name_len + pr.module_len + pr.category_len);
		if (!size)
			return -1;
		pr.name = (const char *)p + off + PROBE_FIXED;
		pr.module = pr.name + pr.name_len;
		pr.category = pr.module + pr.module_len;
		if (cb && (ret = cb(&pr, ctx)))
			return ret;
		off += size;
	}
	return 0;
}

const char *capture__block_name(uint32_t type)
{
	switch (type) {
	case GT_BLK_HEADER:
		return "HEADER";
	case GT_BLK_EVENTS:
		return "EVENTS";
	case GT_BLK_STACKS:
		return "STACKS";
	case GT_BLK_SYMBOLS:
		return "SYMBOLS";
	case GT_BLK_MAPPINGS:
		return "MAPPINGS";
	case GT_BLK_COUNTERS:
		return "COUNTERS";
	case GT_BLK_PROBES:
		return "PROBES";
	case GT_BLK_END:
		return "END";
	case GT_BLK_GPU_OPS:
		return "GPU_OPS";
	case GT_BLK_INLINES:
		return "INLINES";
	case GT_BLK_ZSTD:
		return "ZSTD";
	default:
		return "unknown";
	}
}
