// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_export_proto.c: `gaptrace export --format perfetto-proto` read back
 * with a small protobuf decoder of its own: the thread tracks and the slices
 * (BEGIN/END pairs matched per track) equal the JSON export's; and compressed
 * exports (zstd, gzip) decompress to the plain bytes.  The protoc check of
 * the same against Perfetto's field numbers is tests/integration/compress-check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>

#include <cmocka.h>
#include <zlib.h>
#include <zstd.h>

#include "output/export.h"
#include "minijson.h"
#include "synth_capture.h"

#define WORKER 10
#define HOLDER 11
#define MAXS   256

/* synth_capture.h's lock-gap scene (the JSON and protobuf exports see the same one). */
static void scene(struct synth *s)
{
	synth_scene_lock_gap(s, WORKER, HOLDER);
}

struct slice {
	uint32_t pid, tid;
	char name[160];
	uint64_t ts, dur;
	bool seen;
};

struct track {
	uint64_t uuid;
	uint32_t pid, tid;
	char name[64];
	uint64_t open_ts[16];
	uint64_t open_name[16]; /* iid, below 64 */
	int depth;
};

struct decoded {
	struct slice s[MAXS];
	size_t n;
	struct track t[32];
	size_t nt;
	char names[64][160];
	size_t nnames;
};

/* ---- a protobuf reader for the few fields written ---- */

static uint64_t varint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;

	for (int s = 0; s < 64; s += 7) {
		assert_true(*p < end);
		v |= (uint64_t)(**p & 0x7f) << s;
		if (!(*(*p)++ & 0x80))
			return v;
	}
	fail_msg("varint over 10 bytes");
	return 0;
}

/* Next field of [*p, end): its number, and its value or bytes. */
static uint32_t field(const uint8_t **p, const uint8_t *end, uint64_t *v, const uint8_t **b)
{
	uint64_t key = varint(p, end);

	if ((key & 7) == 0) {
		*v = varint(p, end);
	} else {
		assert_int_equal(key & 7, 2);
		*v = varint(p, end);
		assert_true(*v <= (uint64_t)(end - *p));
		*b = *p;
		*p += *v;
	}
	return (uint32_t)(key >> 3);
}

static struct track *track_of(struct decoded *d, uint64_t uuid)
{
	for (size_t i = 0; i < d->nt; i++)
		if (d->t[i].uuid == uuid)
			return &d->t[i];
	return NULL;
}

static void descriptor(struct decoded *d, const uint8_t *p, const uint8_t *end)
{
	uint64_t v, uuid = 0;
	const uint8_t *b, *thr = NULL;
	size_t thr_len = 0;

	while (p < end) {
		uint32_t f = field(&p, end, &v, &b);

		if (f == 1)
			uuid = v;
		if (f == 4) {
			thr = b;
			thr_len = v;
		}
	}
	if (!thr)
		return;
	assert_true(d->nt < GT_ARRAY_SIZE(d->t));
	struct track *t = &d->t[d->nt++];

	memset(t, 0, sizeof(*t));
	t->uuid = uuid;
	for (const uint8_t *q = thr; q < thr + thr_len;) {
		uint32_t f = field(&q, thr + thr_len, &v, &b);

		if (f == 1)
			t->pid = (uint32_t)v;
		else if (f == 2)
			t->tid = (uint32_t)v;
		else if (f == 5)
			snprintf(t->name, sizeof(t->name), "%.*s", (int)v, b);
	}
}

static void interned(struct decoded *d, const uint8_t *p, const uint8_t *end)
{
	uint64_t v, iid = 0, n;
	const uint8_t *b, *s = NULL;

	while (p < end) {
		uint32_t f = field(&p, end, &v, &b);
		const uint8_t *q = b, *qe = b + v;

		if (f != 2)
			continue;
		while (q < qe) {
			uint32_t g = field(&q, qe, &n, &s);

			if (g == 1)
				iid = n;
			assert_true(iid < GT_ARRAY_SIZE(d->names));
			if (g == 2)
				snprintf(d->names[iid], sizeof(d->names[0]), "%.*s", (int)n, s);
		}
		/* Names are interned in order: iid 1, 2, ... */
		assert_int_equal(iid, ++d->nnames);
	}
}

static void event(struct decoded *d, uint64_t ts, const uint8_t *p, const uint8_t *end)
{
	uint64_t v, type = 0, uuid = 0, name = 0;
	const uint8_t *b;
	struct track *t;

	while (p < end) {
		uint32_t f = field(&p, end, &v, &b);

		if (f == 9)
			type = v;
		else if (f == 11)
			uuid = v;
		else if (f == 10)
			name = v;
	}
	t = track_of(d, uuid);
	assert_non_null(t);
	if (type == 1) {
		assert_true(t->depth < 16);
		t->open_ts[t->depth] = ts;
		t->open_name[t->depth++] = name;
		return;
	}
	assert_int_equal(type, 2);
	assert_true(t->depth > 0);
	t->depth--;
	assert_true(d->n < MAXS);
	d->s[d->n] = (struct slice){.pid = t->pid, .tid = t->tid, .ts = t->open_ts[t->depth]};
	d->s[d->n].dur = ts - d->s[d->n].ts;
	memcpy(d->s[d->n].name, d->names[t->open_name[t->depth]], sizeof(d->s[0].name));
	d->n++;
}

static void decode(struct decoded *d, const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len, *b;
	uint64_t v;

	memset(d, 0, sizeof(*d));
	while (p < end) {
		const uint8_t *q, *qe;
		uint64_t ts = 0;

		/* A Trace holds packets only. */
		assert_int_equal(field(&p, end, &v, &b), 1);
		q = b;
		qe = b + v;
		while (q < qe) {
			const uint8_t *c;
			uint32_t f = field(&q, qe, &v, &c);

			if (f == 8)
				ts = v;
			else if (f == 60)
				descriptor(d, c, c + v);
			else if (f == 12)
				interned(d, c, c + v);
			else if (f == 11)
				event(d, ts, c, c + v);
		}
	}
	for (size_t i = 0; i < d->nt; i++)
		assert_int_equal(d->t[i].depth, 0);
}

static void export_both(char **json, size_t *jlen, char **proto, size_t *plen)
{
	struct synth s;
	struct an_opts o;
	struct an_result *r;
	FILE *f;

	an_opts__defaults(&o);
	o.keep_all = true;
	synth_open(&s);
	scene(&s);
	r = synth_run(&s, &o);
	f = open_memstream(json, jlen);
	assert_int_equal(export__chrome_json(f, r), 0);
	fclose(f);
	f = open_memstream(proto, plen);
	assert_int_equal(export__perfetto_proto(f, r), 0);
	fclose(f);
	an_result__free(r);
}

/* Every X event of the JSON is one slice of the protobuf, and nothing else is. */
static void test_proto_same_slices(void **state)
{
	char *json, *proto;
	size_t jlen, plen, nx = 0, nthreads = 0;
	struct decoded *d = calloc(1, sizeof(*d));
	const char *err = NULL;
	struct mj *doc;
	const struct mj *ev;

	export_both(&json, &jlen, &proto, &plen);
	decode(d, (const uint8_t *)proto, plen);
	doc = mj_parse(json, &err);
	assert_non_null(doc);
	ev = mj_get(doc, "traceEvents");
	for (size_t i = 0; i < ev->n; i++) {
		const struct mj *e = &ev->items[i];
		const char *ph = mj_str(e, "ph");
		uint32_t pid = (uint32_t)mj_num(e, "pid", 0), tid = (uint32_t)mj_num(e, "tid", 0);
		bool found = false;

		if (!strcmp(ph, "M") && !strcmp(mj_str(e, "name"), "thread_name")) {
			const char *name = mj_str(mj_get(e, "args"), "name");
			struct track *t = NULL;

			for (size_t k = 0; k < d->nt; k++)
				if (d->t[k].pid == pid && d->t[k].tid == tid)
					t = &d->t[k];
			assert_non_null(t);
			assert_string_equal(t->name, name);
			nthreads++;
			continue;
		}
		if (strcmp(ph, "X"))
			continue;
		nx++;
		for (size_t k = 0; k < d->n && !found; k++) {
			struct slice *sl = &d->s[k];

			if (sl->seen || sl->pid != pid || sl->tid != tid ||
			    strcmp(sl->name, mj_str(e, "name")) ||
			    sl->ts != (uint64_t)llround(mj_num(e, "ts", -1) * 1000) ||
			    sl->dur != (uint64_t)llround(mj_num(e, "dur", -1) * 1000))
				continue;
			sl->seen = found = true;
		}
		if (!found)
			fail_msg("JSON slice '%s' on %u/%u at %.3f us is not in the protobuf",
				 mj_str(e, "name"), pid, tid, mj_num(e, "ts", -1));
	}
	/* The scene's worker and holder, the GPU's gaps and stream, units. */
	assert_true(nx >= 10);
	assert_int_equal(nx, d->n);
	assert_int_equal(nthreads, d->nt);
	mj_free(doc);
	free(json);
	free(proto);
	free(d);
}

static void compressed(enum export_z kind, const char *plain, size_t plen)
{
	char *z;
	size_t zlen;
	FILE *under = open_memstream(&z, &zlen), *f = export__zopen(under, kind);
	uint8_t *out = malloc(plen + 1);

	assert_non_null(f);
	assert_int_equal(fwrite(plain, 1, plen, f), plen);
	assert_int_equal(export__zclose(f), 0);
	fclose(under);
	/* The JSON of the scene is a few KiB of repeated keys: it must shrink well. */
	if (plen > 4096)
		assert_true(zlen < plen / 3);
	if (kind == EXPORT_Z_ZSTD) {
		assert_int_equal(ZSTD_decompress(out, plen + 1, z, zlen), plen);
	} else {
		z_stream s = {};
		/* 15 + 16: gzip, as the file must be for `gzip -d` and Perfetto. */
		assert_int_equal(inflateInit2(&s, 15 + 16), Z_OK);
		s.next_in = (Bytef *)z;
		s.avail_in = (uInt)zlen;
		s.next_out = out;
		s.avail_out = (uInt)plen + 1;
		assert_int_equal(inflate(&s, Z_FINISH), Z_STREAM_END);
		assert_int_equal(s.total_out, plen);
		inflateEnd(&s);
	}
	assert_memory_equal(out, plain, plen);
	free(out);
	free(z);
}

static void test_export_compressed(void **state)
{
	char *json, *proto;
	size_t jlen, plen;

	export_both(&json, &jlen, &proto, &plen);
	compressed(EXPORT_Z_ZSTD, json, jlen);
	compressed(EXPORT_Z_GZIP, json, jlen);
	compressed(EXPORT_Z_ZSTD, proto, plen);
	assert_int_equal(export__z_of_name("a.trace.json.zst"), EXPORT_Z_ZSTD);
	assert_int_equal(export__z_of_name("a.json.gz"), EXPORT_Z_GZIP);
	assert_int_equal(export__z_of_name("a.trace.json"), EXPORT_Z_NONE);
	assert_int_equal(export__z_of_name(".gz"), EXPORT_Z_NONE);
	free(json);
	free(proto);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_proto_same_slices),
	    cmocka_unit_test(test_export_compressed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
