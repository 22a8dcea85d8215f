// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_flame.c: flame graphs from synthetic captures with known stacks and
 * symbols — exact folded lines and weights, filters, demangled names, the
 * SVG's well-formedness, top stacks for the report and its JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "output/flame.h"
#include "output/present.h"
#include "gaptrace/gaptrace.h"
#include "support/json.h"
#include "support/util.h"

#include "synth_capture.h"

struct run {
	struct an_result *r;
	struct capture *c; /* kept open: the flame graph reads its stacks */
};

/* Closes the capture, analyses it with pieces kept; the capture stays open. */
static void run_pieces(struct synth *s, struct run *out)
{
	struct an_opts o;

	memset(out, 0, sizeof(*out));
	an_opts__defaults(&o);
	o.pieces = true;
	out->r = synth_run_open(s, &o, &out->c);
}

static void run_free(struct run *rn)
{
	an_result__free(rn->r);
	capture__close(rn->c);
}

/*
 * Two gaps with every kind of piece:
 *
 * gap 0 [10, 30) ms, between units 1 and 2, critical thread gpu-worker:
 *   [10, 11) on CPU, no sample                      cpu        1 ms
 *   [11, 19) futex lock wait (value 2), C++ stack   lock       8 ms
 *   [19, 20) run queue after the wakeup             scheduler  1 ms
 *   [20, 25) samples in a Rust v0 function          cpu        5 ms
 *   (25, 29] samples in a Rust legacy function      cpu        4 ms
 *   [29, 30) launch latency                         cuda       1 ms
 * gap 1 [40, 60) ms, inside unit 2:
 *   [40, 50) in malloc_trim (uprobe)                allocator 10 ms
 *   [50, 58) epoll hand-off woken by synth-0, whose time it becomes:
 *     [50, 52) preempted                            scheduler  2 ms
 *     (52, 58] samples in an unresolved libfoo frame cpu       6 ms
 *   [58, 60) on CPU, no sample                      cpu        2 ms
 */
/*
 * The lock stack with inline chains: worker_main's call site (frame 1, a
 * return address) lies in gpu_step inlined into it; a chain recorded for the
 * same ip as a first frame must not be used there, nor one of another pid.
 */
static void add_inlines(struct synth *s)
{
	static const char *const caller[] = {"_ZN6prover3gpu4stepEv", "gpu_step"};
	static const char *const leaf[] = {"wrong_leaf_chain"};
	static const char *const other[] = {"wrong_pid_chain"};

	capture_buf__inline(&s->inl, 0x400100, PID, GT_INLINE_CALLER, caller, 2);
	capture_buf__inline(&s->inl, 0x400100, PID, 0, leaf, 1);
	capture_buf__inline(&s->inl, 0x401000, PID + 1, 0, other, 1);
}

static void build_with(struct synth *s, void (*extra)(struct synth *s))
{
	static const uint64_t lock_ips[] = {0x401000, 0x400100};
	static const char *const lock_names[] = {"_ZN6prover3gpu4Pool4lockEv", "worker_main"};
	static const uint64_t k_ips[] = {0xffffffff81000300, 0xffffffff81000200, 0xffffffff81000100,
					 0xffffffff81000000};
	static const char *const k_names[] = {"bpf_prog_6deef7357e7b4530_sched_switch",
					      "__schedule", "futex_wait", "entry_SYSCALL_64"};
	static const uint64_t v0_ips[] = {0x402000, 0x400200};
	static const char *const v0_names[] = {"_RNvNtCs1234_6prover3msm7compute", "main"};
	static const uint64_t leg_ips[] = {0x403000, 0x400200};
	static const char *const leg_names[] = {"_ZN6prover3ntt7forward17h0123456789abcdefE",
						"main"};
	static const uint64_t foo_ips[] = {0x7f0000101234, 0x400300};
	static const char *const foo_names[] = {NULL, "synth_main"};

	synth_open(s);
	if (extra)
		extra(s);
	synth_thread(s, 10, "gpu-worker");
	synth_thread(s, 11, "lock-holder");
	synth_thread(s, 12, "synth-0");
	synth_stack_n(s, 1, false, lock_ips, lock_names, "/usr/bin/prover", 2);
	synth_stack_n(s, 2, true, k_ips, k_names, "[kernel]", 4);
	synth_stack_n(s, 3, false, v0_ips, v0_names, "/usr/bin/prover", 2);
	synth_stack_n(s, 4, false, leg_ips, leg_names, "/usr/bin/prover", 2);
	/* The libfoo frame is unresolved; its root is resolved. */
	capture_buf__stack(&s->stacks, 5, PID, false, foo_ips, 2);
	capture_buf__symbol(&s->syms, foo_ips[0], PID, 0, "", "/usr/lib/libfoo.so");
	capture_buf__symbol(&s->syms, foo_ips[1], PID, 4, foo_names[1], "/usr/bin/prover");
	capture_buf__mapping(&s->maps, PID, 0x7f0000100000, 0x7f0000110000, 0x2000, NULL, 0,
			     "/usr/lib/libfoo.so");
	capture_buf__probe(&s->probes, 0, "malloc_trim", "libc.so.6", "allocator");

	synth_unit(s, 10, 1, T0 + 1 * MS, true);
	synth_op(s, 10, 1, T0 + 1 * MS, T0 + 2 * MS, T0 + 10 * MS);
	synth_unit(s, 10, 1, T0 + 10 * MS, false);
	synth_unit(s, 10, 2, T0 + 29 * MS, true);
	synth_op(s, 10, 2, T0 + 29 * MS, T0 + 30 * MS, T0 + 40 * MS);
	synth_op(s, 10, 3, T0 + 60 * MS, T0 + 60 * MS, T0 + 70 * MS);
	synth_unit(s, 10, 2, T0 + 71 * MS, false);

	/* gap 0 */
	synth_off_k(s, 10, T0 + 11 * MS, T0 + 19 * MS, T0 + 20 * MS, 0, GT_NR_futex, 128, 2, 11, 1,
		    2);
	for (int i = 21; i <= 29; i++)
		synth_sample(s, 10, T0 + (uint64_t)i * MS, i <= 25 ? 3 : 4);
	/* gap 1 */
	synth_call(s, 10, 0, T0 + 40 * MS, T0 + 50 * MS);
	synth_off_k(s, 10, T0 + 50 * MS, T0 + 58 * MS, T0 + 58 * MS, 0, GT_NR_epoll_wait, 0, 0, 12,
		    -1, -1);
	synth_off_k(s, 12, T0 + 50 * MS, 0, T0 + 52 * MS, GT_OFF_PREEMPTED, -1, 0, 0, 0, -1, -1);
	for (int i = 53; i <= 58; i++)
		synth_sample(s, 12, T0 + (uint64_t)i * MS, 5);
}

static void build(struct synth *s)
{
	build_with(s, NULL);
}

static const char *const all_lines =
    "allocator;[gpu-worker];[malloc_trim] 10000000\n"
    "cpu;[gpu-worker];[on CPU, not sampled] 3000000\n"
    "cpu;[gpu-worker];main;prover::msm::compute 5000000\n"
    "cpu;[gpu-worker];main;prover::ntt::forward 4000000\n"
    "cpu;[synth-0];synth_main;[libfoo.so+0x3234] 6000000\n"
    "cuda;[gpu-worker];[launch latency] 1000000\n"
    "lock;[gpu-worker];worker_main;prover::gpu::Pool::lock();entry_SYSCALL_64_[k];"
    "futex_wait_[k];__schedule_[k] 8000000\n"
    "scheduler;[gpu-worker];worker_main;prover::gpu::Pool::lock();entry_SYSCALL_64_[k];"
    "futex_wait_[k];__schedule_[k];[run queue] 1000000\n"
    "scheduler;[synth-0];[preempted] 2000000\n";

/* The folded text of r under filter f (with the capture's mappings). */
static char *folded(struct run *rn, struct flame_filter *f)
{
	struct flame *fl;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	f->cap = rn->c;
	fl = flame__from_result(rn->r, f);
	assert_non_null(fl);
	assert_int_equal(flame__write_folded(fl, m), 0);
	fclose(m);
	flame__free(fl);
	return buf;
}

static void assert_text(const char *got, const char *want)
{
	if (strcmp(got, want))
		fail_msg("got:\n%s\nwant:\n%s", got, want);
}

static void test_flame_folded_exact(void **state)
{
	struct synth s;
	struct run rn;
	struct flame_filter f;
	char *out;
	uint64_t sum = 0;

	build(&s);
	run_pieces(&s, &rn);
	assert_int_equal(rn.r->ngaps, 2);
	flame_filter__init(&f);
	out = folded(&rn, &f);
	assert_text(out, all_lines);
	/* Weights are the attributed ns: they add up to the gaps' lengths. */
	for (const char *p = out; (p = strchr(p, ' ')); p++)
		if (!strchr(p + 1, ' ') || strchr(p + 1, '\n') < strchr(p + 1, ' '))
			sum += strtoull(p + 1, NULL, 10);
	assert_int_equal(sum, rn.r->gaps[0].duration_ns + rn.r->gaps[1].duration_ns);
	free(out);
	run_free(&rn);
}

static void test_flame_without_mappings(void **state)
{
	struct synth s;
	struct run rn;
	struct flame *fl;
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	build(&s);
	run_pieces(&s, &rn);
	/* No capture given: the module is known, the offset is not. */
	fl = flame__from_result(rn.r, NULL);
	m = open_memstream(&buf, &len);
	assert_int_equal(flame__write_folded(fl, m), 0);
	fclose(m);
	assert_non_null(strstr(buf, "cpu;[synth-0];synth_main;[libfoo.so] 6000000\n"));
	free(buf);
	flame__free(fl);
	run_free(&rn);
}

static void test_flame_filters(void **state)
{
	struct synth s;
	struct run rn;
	struct flame_filter f;
	char *out;

	build(&s);
	run_pieces(&s, &rn);
	assert_int_equal(rn.r->gaps[0].kind, GT_GAP_INTER);
	assert_int_equal(rn.r->gaps[1].kind, GT_GAP_INTRA);

	flame_filter__init(&f);
	f.cat = GT_CAT_LOCK;
	out = folded(&rn, &f);
	assert_text(out, "lock;[gpu-worker];worker_main;prover::gpu::Pool::lock();"
			 "entry_SYSCALL_64_[k];futex_wait_[k];__schedule_[k] 8000000\n");
	free(out);

	flame_filter__init(&f);
	f.kind = GT_GAP_INTRA;
	out = folded(&rn, &f);
	assert_text(out, "allocator;[gpu-worker];[malloc_trim] 10000000\n"
			 "cpu;[gpu-worker];[on CPU, not sampled] 2000000\n"
			 "cpu;[synth-0];synth_main;[libfoo.so+0x3234] 6000000\n"
			 "scheduler;[synth-0];[preempted] 2000000\n");
	free(out);

	/* Unit 1 touches gap 0 only (it ends the unit); unit 2 touches both. */
	flame_filter__init(&f);
	f.unit = 1;
	f.cat = GT_CAT_CPU;
	out = folded(&rn, &f);
	assert_text(out, "cpu;[gpu-worker];[on CPU, not sampled] 1000000\n"
			 "cpu;[gpu-worker];main;prover::msm::compute 5000000\n"
			 "cpu;[gpu-worker];main;prover::ntt::forward 4000000\n");
	free(out);
	flame_filter__init(&f);
	f.unit = 2;
	out = folded(&rn, &f);
	assert_text(out, all_lines);
	free(out);

	flame_filter__init(&f);
	f.gap = 1;
	f.cat = GT_CAT_SCHED;
	out = folded(&rn, &f);
	assert_text(out, "scheduler;[synth-0];[preempted] 2000000\n");
	free(out);

	flame_filter__init(&f);
	f.device = 1;
	out = folded(&rn, &f);
	assert_text(out, "");
	free(out);
	flame_filter__init(&f);
	f.unit = 7;
	out = folded(&rn, &f);
	assert_text(out, "");
	free(out);
	run_free(&rn);
}

/* Per-gap trees in a loop through one scratch tree add up to the whole. */
static void test_flame_per_gap_reuse(void **state)
{
	struct synth s;
	struct run rn;
	struct flame *fl = flame__new();
	struct flame_filter f;
	uint64_t sum = 0;

	build(&s);
	run_pieces(&s, &rn);
	for (int pass = 0; pass < 2; pass++) {
		sum = 0;
		for (size_t g = 0; g < rn.r->ngaps; g++) {
			flame_filter__init(&f);
			f.gap = (int64_t)g;
			flame__clear(fl);
			assert_int_equal(flame__add_result(fl, rn.r, &f, FLAME_AFTER), 0);
			assert_int_equal(flame__total(fl, FLAME_AFTER), rn.r->gaps[g].duration_ns);
			sum += flame__total(fl, FLAME_AFTER);
		}
	}
	assert_int_equal(sum, 40 * MS);
	flame__free(fl);
	run_free(&rn);
}

/* ---- SVG ---- */

/*
 * A tiny XML check: every tag closes in order, attributes are quoted,
 * comments/CDATA/prolog skipped, and no raw '<' or '&' in text.
 */
static void assert_well_formed(const char *x)
{
	const char *stack[64];
	size_t lens[64], depth = 0;
	const char *p = x;

	while (*p) {
		if (*p == '&') {
			const char *semi = strchr(p, ';');

			assert_non_null(semi);
			assert_true(semi - p <= 8);
			p = semi + 1;
			continue;
		}
		if (*p != '<') {
			p++;
			continue;
		}
		if (!strncmp(p, "<?", 2)) {
			p = strstr(p, "?>");
			assert_non_null(p);
			p += 2;
		} else if (!strncmp(p, "<![CDATA[", 9)) {
			p = strstr(p, "]]>");
			assert_non_null(p);
			p += 3;
		} else if (!strncmp(p, "<!--", 4)) {
			p = strstr(p, "-->");
			assert_non_null(p);
			p += 3;
		} else if (p[1] == '/') {
			const char *e = strchr(p, '>');

			assert_non_null(e);
			assert_true(depth > 0);
			depth--;
			if ((size_t)(e - p - 2) != lens[depth] ||
			    strncmp(p + 2, stack[depth], lens[depth]))
				fail_msg("</%.*s> closes <%.*s>", (int)(e - p - 2), p + 2,
					 (int)lens[depth], stack[depth]);
			p = e + 1;
		} else {
			const char *name = p + 1, *q = name;
			char quote = 0;

			while (*q && *q != ' ' && *q != '>' && *q != '/')
				q++;
			/* Walk to the tag's end, honouring quoted attribute values. */
			for (; *q && (quote || *q != '>'); q++) {
				if (quote && *q == quote)
					quote = 0;
				else if (!quote && (*q == '"' || *q == '\''))
					quote = *q;
				else if (quote && *q == '<')
					fail_msg("raw '<' in an attribute");
			}
			assert_int_equal(*q, '>');
			if (q[-1] != '/') {
				assert_true(depth < 64);
				stack[depth] = name;
				lens[depth] = (size_t)(strcspn(name, " />"));
				depth++;
			}
			p = q + 1;
		}
	}
	assert_int_equal(depth, 0);
}

static char *svg_of(const struct flame *fl, const struct flame_svg_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(flame__write_svg(fl, m, o), 0);
	fclose(m);
	return buf;
}

/*
 * With GT_FLAME_ARTIFACTS=DIR, the synthetic graph is also written there
 * (flame-synthetic.svg/.folded) for the browser tests (tests/browser/run).
 */
static void save_artifact(const char *name, const struct flame *fl, bool svg)
{
	const char *dir = getenv("GT_FLAME_ARTIFACTS");
	struct flame_svg_opts o = {.subtitle = "synthetic capture of test_flame"};
	char path[512];
	FILE *f;

	if (!dir || !*dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(svg ? flame__write_svg(fl, f, &o) : flame__write_folded(fl, f), 0);
	assert_int_equal(fclose(f), 0);
}

static void test_flame_svg_well_formed(void **state)
{
	struct synth s;
	struct run rn;
	struct flame_filter f;
	struct flame *fl;
	struct flame_svg_opts o = {.subtitle = "synthetic <test> & more"};
	char *svg;

	build(&s);
	run_pieces(&s, &rn);
	flame_filter__init(&f);
	f.cap = rn.c;
	fl = flame__from_result(rn.r, &f);
	/* A name that needs escaping. */
	{
		const char *const esc[] = {"cpu", "[t]",
					   "<alloc::vec::Vec<u8> as core::ops::drop::Drop>::drop"};

		flame__add_stack(fl, esc, 3, -1, 1 * MS, FLAME_AFTER);
	}
	save_artifact("flame-synthetic.svg", fl, true);
	save_artifact("flame-synthetic.folded", fl, false);
	svg = svg_of(fl, &o);
	assert_true(!strncmp(svg, "<?xml version=\"1.0\"", 19));
	assert_well_formed(svg);
	/* Totals, demangled names, categories in their colours, the viewer. */
	assert_non_null(strstr(svg, "data-total=\"41000000\""));
	assert_non_null(strstr(svg, "total: 41.00 ms"));
	assert_non_null(strstr(svg, "<title>prover::gpu::Pool::lock()</title>"));
	assert_non_null(strstr(svg, "<title>prover::msm::compute</title>"));
	assert_non_null(strstr(svg, "<title>prover::ntt::forward</title>"));
	assert_non_null(strstr(svg, "<title>[libfoo.so+0x3234]</title>"));
	assert_non_null(
	    strstr(svg, "&lt;alloc::vec::Vec&lt;u8&gt; as core::ops::drop::Drop&gt;::drop"));
	assert_null(strstr(svg, "<alloc::"));
	assert_non_null(strstr(svg, "synthetic &lt;test&gt; &amp; more"));
	assert_non_null(strstr(svg, gt_cat_color[GT_CAT_LOCK]));
	assert_non_null(strstr(svg, "class=\"gtf-search\""));
	assert_non_null(strstr(svg, "<script"));
	/* Self-contained: nothing is fetched. */
	assert_null(strstr(svg, "href="));
	assert_null(strstr(svg, "http://www.w3.org/1999/xlink"));
	assert_null(strstr(svg, "bpf_prog_"));
	free(svg);

	o.embed = true;
	svg = svg_of(fl, &o);
	assert_true(!strncmp(svg, "<svg ", 5));
	assert_well_formed(svg);
	free(svg);
	flame__free(fl);
	run_free(&rn);
}

static void test_flame_svg_empty_and_tiny(void **state)
{
	struct flame *fl = flame__new();
	char *svg = svg_of(fl, NULL);

	assert_well_formed(svg);
	assert_non_null(strstr(svg, "nothing to draw"));
	free(svg);
	/* A frame far below min_width_px is left out and counted. */
	flame__add_stack(fl, (const char *const[]){"cpu", "[a]", "big"}, 3, -1, 1000000000,
			 FLAME_AFTER);
	flame__add_stack(fl, (const char *const[]){"cpu", "[a]", "tiny"}, 3, -1, 1, FLAME_AFTER);
	svg = svg_of(fl, NULL);
	assert_well_formed(svg);
	assert_non_null(strstr(svg, "<title>big</title>"));
	assert_null(strstr(svg, "<title>tiny</title>"));
	assert_non_null(strstr(svg, "1 frames narrower than 0.1 px left out"));
	free(svg);
	flame__free(fl);
}

static void test_flame_svg_differential(void **state)
{
	struct flame *fl = flame__new();
	struct flame_svg_opts o = {.differential = true};
	char *svg, *g;

	flame__add_stack(fl, (const char *const[]){"lock", "[w]", "grew"}, 3, -1, 1 * MS,
			 FLAME_BEFORE);
	flame__add_stack(fl, (const char *const[]){"lock", "[w]", "grew"}, 3, -1, 4 * MS,
			 FLAME_AFTER);
	flame__add_stack(fl, (const char *const[]){"lock", "[w]", "shrank"}, 3, -1, 4 * MS,
			 FLAME_BEFORE);
	flame__add_stack(fl, (const char *const[]){"lock", "[w]", "shrank"}, 3, -1, 2 * MS,
			 FLAME_AFTER);
	assert_int_equal(flame__total(fl, FLAME_BEFORE), 5 * MS);
	assert_int_equal(flame__total(fl, FLAME_AFTER), 6 * MS);
	svg = svg_of(fl, &o);
	assert_well_formed(svg);
	assert_non_null(strstr(svg, "data-diff=\"1\""));
	assert_non_null(strstr(svg, "total: before 5.00 ms, after 6.00 ms"));
	/* grew: +300% of max -> strong red; shrank: -50% -> half-strength blue. */
	g = strstr(svg, "data-a=\"4000000\" data-b=\"1000000\"><title>grew</title>");
	assert_non_null(g);
	assert_non_null(strstr(g, "fill=\"rgb(255,59,59)\""));
	g = strstr(svg, "data-a=\"2000000\" data-b=\"4000000\"><title>shrank</title>");
	assert_non_null(g);
	assert_non_null(strstr(g, "fill=\"rgb(118,118,255)\""));
	free(svg);

	/* Both weights per line for difffolded-style tools. */
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);

		assert_int_equal(flame__write_folded_diff(fl, m), 0);
		fclose(m);
		assert_text(buf, "lock;[w];grew 1000000 4000000\n"
				 "lock;[w];shrank 4000000 2000000\n");
		free(buf);
	}
	flame__free(fl);
}

static void test_flame_sanitizes_names(void **state)
{
	struct flame *fl = flame__new();
	char big[2000], *buf = NULL, *line;
	size_t len = 0;
	FILE *m;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	flame__add_stack(
	    fl, (const char *const[]){"cpu", "[a;b]", "ctl\x01\x7f\x9b;x", "bad\xff\xc3)", big}, 5,
	    -1, 7, FLAME_AFTER);
	m = open_memstream(&buf, &len);
	assert_int_equal(flame__write_folded(fl, m), 0);
	fclose(m);
	/* ';' would split a frame; control and invalid bytes would break viewers. */
	assert_true(!strncmp(buf,
			     "cpu;[a:b];ctl???:x;bad?"
			     "?);xxx",
			     29));
	line = strstr(buf, "\xe2\x80\xa6 7\n");
	assert_non_null(line);
	assert_true(line - buf < 29 + FLAME_MAX_NAME);
	free(buf);
	flame__free(fl);
}

/* A capture with more distinct frames than the tree holds: bounded, nothing lost. */
static void test_flame_node_limit(void **state)
{
	struct flame *fl = flame__new();
	uint64_t n = FLAME_MAX_NODES + 1000;
	char name[32];

	for (uint64_t i = 0; i < n; i++) {
		const char *fr[3] = {"cpu", "[t]", name};

		snprintf(name, sizeof(name), "f%llu", (unsigned long long)i);
		flame__add_stack(fl, fr, 3, -1, 1, FLAME_AFTER);
	}
	/* Weight that found no room stays with the deepest frame that exists. */
	assert_int_equal(flame__total(fl, FLAME_AFTER), n);
	assert_true(flame__truncated_ns(fl) >= 1000);
	assert_true(flame__truncated_ns(fl) < 1010);
	flame__free(fl);
}

/* ---- top stacks ---- */

struct collected {
	char text[8][256];
	size_t n;
};

static void collect_cb(const struct flame_stack *s, void *ctx)
{
	struct collected *c = ctx;
	const char *sum[4];
	size_t n = flame_stack__summary(s, sum, 4), o;
	char thr[32];

	o = (size_t)snprintf(c->text[c->n], sizeof(c->text[0]), "%s %llu %s:", s->frames[0],
			     (unsigned long long)s->ns,
			     flame_stack__thread(s, thr, sizeof(thr)) ?: "-");
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(c->text[c->n] + o, sizeof(c->text[0]) - o, " %s", sum[i]);
	c->n++;
}

static void test_flame_top_stacks(void **state)
{
	struct synth s;
	struct run rn;
	struct flame *fl;
	struct collected c = {};
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	build(&s);
	run_pieces(&s, &rn);
	fl = flame__from_result(rn.r, NULL);
	assert_int_equal(flame__top_stacks(fl, -1, 4, collect_cb, &c), 4);
	assert_string_equal(c.text[0], "allocator 10000000 gpu-worker: [malloc_trim]");
	assert_string_equal(c.text[1],
			    "lock 8000000 gpu-worker: prover::gpu::Pool::lock() worker_main");
	assert_string_equal(c.text[2], "cpu 6000000 synth-0: synth_main");
	assert_string_equal(c.text[3], "cpu 5000000 gpu-worker: prover::msm::compute main");
	c.n = 0;
	assert_int_equal(flame__top_stacks(fl, GT_CAT_SCHED, 9, collect_cb, &c), 2);
	assert_string_equal(c.text[0], "scheduler 2000000 synth-0: [preempted]");
	assert_string_equal(c.text[1], "scheduler 1000000 gpu-worker: [run queue] "
				       "prover::gpu::Pool::lock() worker_main");
	flame__free(fl);

	/* The report's text section. */
	m = open_memstream(&buf, &len);
	flame__print_top_stacks(m, rn.r, 3);
	fclose(m);
	assert_non_null(strstr(buf, "Top stacks by category"));
	assert_non_null(strstr(buf, "  lock 8.00 ms\n"
				    "       8.00 ms 100.0%  gpu-worker: prover::gpu::Pool::lock() "
				    "\xe2\x86\x90 worker_main\n"));
	assert_non_null(strstr(buf, "  cpu 18.00 ms\n"
				    "       6.00 ms  33.3%  synth-0: synth_main\n"
				    "       5.00 ms  27.8%  gpu-worker: prover::msm::compute "
				    "\xe2\x86\x90 main\n"
				    "       4.00 ms  22.2%  gpu-worker: prover::ntt::forward "
				    "\xe2\x86\x90 main\n"));
	free(buf);
	run_free(&rn);
}

static void test_flame_json_top_stacks(void **state)
{
	struct synth s;
	struct run rn;
	struct flame *scratch = flame__new();
	struct json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	build(&s);
	run_pieces(&s, &rn);
	m = open_memstream(&buf, &len);
	json_init(&j, m, false);
	json_obj_begin(&j);
	flame__json_top_stacks(&j, scratch, rn.r, 0, 2);
	flame__json_top_stacks(&j, scratch, rn.r, 1, 1);
	json_obj_end(&j);
	fclose(m);
	assert_non_null(strstr(buf,
			       "\"top_stacks\":[{\"category\":\"lock\",\"ns\":8000000,"
			       "\"thread_name\":\"gpu-worker\",\"frames\":[\"__schedule_[k]\","
			       "\"futex_wait_[k]\",\"entry_SYSCALL_64_[k]\","
			       "\"prover::gpu::Pool::lock()\",\"worker_main\"],"
			       "\"frame_info\":[{\"name\":\"__schedule_[k]\",\"inlined\":false},"));
	assert_non_null(strstr(buf, "{\"name\":\"worker_main\",\"inlined\":false}]},"
				    "{\"category\":\"cpu\",\"ns\":5000000,"));
	assert_non_null(strstr(buf, "\"top_stacks\":[{\"category\":\"allocator\",\"ns\":10000000,"
				    "\"thread_name\":\"gpu-worker\","
				    "\"frames\":[\"[malloc_trim]\"],\"frame_info\":[{\"name\":"
				    "\"[malloc_trim]\",\"inlined\":false}]}]"));
	free(buf);
	flame__free(scratch);
	run_free(&rn);
}

/* INLINES: folded stacks, the text summary and JSON show the inlined calls as frames. */
static void test_flame_inline_frames(void **state)
{
	struct flame *scratch = flame__new();
	struct flame_filter f;
	const char *want;
	struct synth s;
	struct json j;
	char *out, *buf = NULL;
	size_t len = 0;
	struct run rn;
	FILE *m;

	build_with(&s, add_inlines);
	run_pieces(&s, &rn);
	flame_filter__init(&f);
	f.cat = GT_CAT_LOCK;
	out = folded(&rn, &f);
	want = "lock;[gpu-worker];worker_main;gpu_step [inlined];prover::gpu::step() [inlined];"
	       "prover::gpu::Pool::lock();entry_SYSCALL_64_[k];futex_wait_[k];__schedule_[k] "
	       "8000000\n";
	assert_text(out, want);
	free(out);

	m = open_memstream(&buf, &len);
	json_init(&j, m, false);
	json_obj_begin(&j);
	flame__json_top_stacks(&j, scratch, rn.r, 0, 1);
	json_obj_end(&j);
	fclose(m);
	assert_non_null(strstr(buf,
			       "\"prover::gpu::Pool::lock()\",\"prover::gpu::step() [inlined]\","
			       "\"gpu_step [inlined]\",\"worker_main\"]"));
	assert_non_null(strstr(buf, "{\"name\":\"prover::gpu::step()\",\"inlined\":true},"
				    "{\"name\":\"gpu_step\",\"inlined\":true},"
				    "{\"name\":\"worker_main\",\"inlined\":false}]"));
	assert_null(strstr(buf, "wrong_"));
	free(buf);
	flame__free(scratch);
	run_free(&rn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flame_folded_exact),
	    cmocka_unit_test(test_flame_without_mappings),
	    cmocka_unit_test(test_flame_filters),
	    cmocka_unit_test(test_flame_per_gap_reuse),
	    cmocka_unit_test(test_flame_svg_well_formed),
	    cmocka_unit_test(test_flame_svg_empty_and_tiny),
	    cmocka_unit_test(test_flame_svg_differential),
	    cmocka_unit_test(test_flame_sanitizes_names),
	    cmocka_unit_test(test_flame_node_limit),
	    cmocka_unit_test(test_flame_top_stacks),
	    cmocka_unit_test(test_flame_json_top_stacks),
	    cmocka_unit_test(test_flame_inline_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
