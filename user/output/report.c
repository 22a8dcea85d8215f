// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report.c: the report's writers — the gap report as a table for people
 * (text), a stable machine interface (json, schema gaptrace.report/1) or one
 * row per gap (csv).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "symbols/demangle.h"
#include "output/flame.h"
#include "output/report.h"
#include "output/present.h"
#include "support/json.h"
#include "support/term.h"
#include "support/util.h"

/* A share as a bar of width cells: eighths of a cell in UTF-8, whole '#' cells in ASCII. */
static void bar(FILE *f, double frac, int width, bool ascii)
{
	int full = (int)(frac * width * 8 + 0.5);
	static const char *const parts[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};

	if (ascii) {
		for (int i = 0; i < (full + 4) / 8; i++)
			fputc('#', f);
		return;
	}
	for (int i = 0; i < full / 8; i++)
		fputs("█", f);
	fputs(parts[full % 8], f);
}

/* Hops worth a line: those that explain at least a tenth of the gap. */
static bool hop_matters(const struct an_gap *g, const struct an_hop *h)
{
	return (h->to_ns - h->from_ns) * 10 >= g->duration_ns;
}

static void print_untraced(FILE *f, const struct an_gap *g, const struct an_hop *h)
{
	char u[128];

	if (present__untraced(g, h, u, sizeof(u)))
		fprintf(f, "; %s", u);
}

static void print_chain(FILE *f, const struct an_result *r, const struct an_gap *g)
{
	bool any = false;

	for (size_t i = 0; i < g->nchain; i++) {
		char u[128];

		any |= (i && hop_matters(g, &g->chain[i])) ||
		       present__untraced(g, &g->chain[i], u, sizeof(u));
	}
	if (!any)
		return;
	fprintf(f, "        critical path: %s:%u waited",
		gt_clean(an_result__thread_name(r, g->chain[0].tid)), g->chain[0].tid);
	print_untraced(f, g, &g->chain[0]);
	for (size_t i = 1; i < g->nchain; i++) {
		const struct an_hop *h = &g->chain[i];
		char b[200], d[32];

		if (!hop_matters(g, h))
			continue;
		present__breakdown(h->by_cat, h->to_ns - h->from_ns, b, sizeof(b), 2, 0);
		fprintf(f, "; %s on %s:%u, which spent it on: %s",
			gt_fmt_dur(h->to_ns - h->from_ns, d, sizeof(d)),
			gt_clean(an_result__thread_name(r, h->tid)), h->tid, b);
		print_untraced(f, g, h);
	}
	fputc('\n', f);
}

/* Up to 4 named frames of a stack, leaf first, demangled. */
struct frames {
	char *name[4];
	int n;
};

static void frame_cb(const char *name, const char *module, uint64_t ip, bool inlined, void *ctx)
{
	struct frames *fr = ctx;
	char *d;

	if (!name || !*name || fr->n >= 4)
		return;
	d = gt_demangle(name);
	if (inlined) {
		char *s = gt_xasprintf("%s" FLAME_INLINED_SUFFIX, d ? d : name);

		free(d);
		d = s;
	}
	fr->name[fr->n++] = d ? d : gt_xstrdup(name);
}

static void frames_get(const struct an_result *r, int32_t stack, struct frames *fr)
{
	memset(fr, 0, sizeof(*fr));
	if (stack >= 0)
		an_result__stack(r, stack, frame_cb, fr);
}

static void frames_free(struct frames *fr)
{
	for (int i = 0; i < fr->n; i++)
		free(fr->name[i]);
}

static void print_holders(FILE *f, const struct an_result *r, const struct an_gap *g)
{
	uint64_t lock = g->by_cat[GT_CAT_LOCK];
	int shown = 0;

	for (size_t i = 0; i < g->nholders && shown < 3; i++) {
		char d[32];

		if (g->holders[i].wait_ns * 10 < lock)
			continue;
		{
			const struct an_holder *h = &g->holders[i];
			struct frames fr;
			char b[160];

			fprintf(f, "        lock held by %s:%u for %s of the wait",
				gt_clean(an_result__thread_name(r, h->tid)), h->tid,
				gt_fmt_dur(h->wait_ns, d, sizeof(d)));
			present__breakdown(h->by_cat, h->wait_ns, b, sizeof(b), 2, 0);
			if (b[0])
				fprintf(f, "; meanwhile it spent: %s", b);
			frames_get(r, h->ustack, &fr);
			for (int k = 0; k < fr.n; k++)
				fprintf(f, "%s%s", k ? " <- " : "; in ", gt_clean(fr.name[k]));
			frames_free(&fr);
			fputc('\n', f);
		}
		shown++;
	}
}

struct chain_sum {
	char sig[256];
	uint64_t gaps, ns;
	uint64_t by_cat[GT_CAT_MAX];
};

static int cmp_chain(const void *a, const void *b)
{
	const struct chain_sum *x = a, *y = b;

	return x->ns > y->ns ? -1 : x->ns < y->ns;
}

/*
 * The critical paths that recur: gaps whose time went through the same
 * threads (by name, so worker pools merge) are counted together.
 */
static void print_chains(FILE *f, const struct an_result *r)
{
	struct chain_sum *cs = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < r->ngaps; i++) {
		const struct an_gap *g = &r->gaps[i];
		char sig[256] = "";
		size_t off = 0, k;
		uint64_t ns = 0, by_cat[GT_CAT_MAX] = {};

		if (g->nchain < 2)
			continue;
		for (size_t h = 0; h < g->nchain && off < sizeof(sig); h++) {
			if (h && !hop_matters(g, &g->chain[h]))
				continue;
			off +=
			    (size_t)snprintf(sig + off, sizeof(sig) - off, "%s%s", h ? " <- " : "",
					     gt_clean(an_result__thread_name(r, g->chain[h].tid)));
			if (h) {
				ns += g->chain[h].to_ns - g->chain[h].from_ns;
				for (int c = 0; c < GT_CAT_MAX; c++)
					by_cat[c] += g->chain[h].by_cat[c];
			}
		}
		if (!ns)
			continue;
		for (k = 0; k < n && strcmp(cs[k].sig, sig); k++)
			;
		if (k == n) {
			gt_grow((void **)&cs, &cap, n, sizeof(*cs));
			memset(&cs[n], 0, sizeof(cs[n]));
			snprintf(cs[n].sig, sizeof(cs[n].sig), "%s", sig);
			n++;
		}
		cs[k].gaps++;
		cs[k].ns += ns;
		for (int c = 0; c < GT_CAT_MAX; c++)
			cs[k].by_cat[c] += by_cat[c];
	}
	if (n) {
		gt_sort(cs, n, sizeof(*cs), cmp_chain);
		fprintf(f, "\nMost frequent critical paths (the waiter <- the thread whose work it "
			   "waited for)\n");
		for (size_t k = 0; k < n && k < 5; k++) {
			char d[32], b[200];

			present__breakdown(cs[k].by_cat, cs[k].ns, b, sizeof(b), 2, 0);
			fprintf(f, "  %4llu gaps  %10s  %s: %s\n", (unsigned long long)cs[k].gaps,
				gt_fmt_dur(cs[k].ns, d, sizeof(d)), cs[k].sig, b);
		}
	}
	free(cs);
}

void report__text(FILE *f, const struct an_result *r, const struct report_opts *o)
{
	const struct an_gap **sorted;
	char d1[32], d2[32], d3[32], b[512];
	uint64_t lost = r->lost_ringbuf + r->lost_map_full;
	/* The category table is 63 columns before its bars: they shrink to fit. */
	int bar_cells = o->width ? GT_MAX(0, GT_MIN(24, (int)o->width - 63)) : 24;

	fprintf(f, "gaptrace report: %s (pid %u), capture %s\n", gt_clean(r->comm), r->pid,
		gt_clean(r->path));
	fprintf(f, "  %s recorded, %llu records, GPU source %s, units: %s (%llu)\n",
		gt_fmt_dur(r->duration_ns, d1, sizeof(d1)), (unsigned long long)r->records,
		gt_clean(r->gpu_source), r->unit_source ? gt_clean(r->unit_source) : "none",
		(unsigned long long)r->units);
	fprintf(f, "  lost events: %llu%s; gaps are idle time >= %s between GPU operations\n",
		(unsigned long long)lost, lost ? " (time near them is shown as unknown)" : "",
		gt_fmt_dur(r->opts.min_gap_ns, d2, sizeof(d2)));
	if (r->unw_walks)
		fprintf(
		    f,
		    "  user stacks: walked in the kernel with CFI (--stacks cfi); %.1f%% of %llu "
		    "reached the thread's root ('gaptrace info': why the rest ended)\n",
		    100.0 * (double)r->unw_root / (double)r->unw_walks,
		    (unsigned long long)r->unw_walks);
	for (size_t i = 0; i < r->nwarnings; i++)
		fprintf(f, "  warning: %s\n", gt_clean(r->warnings[i]));
	fputc('\n', f);

	if (!r->ndevices) {
		fprintf(f,
			"No GPU activity was recorded, so there are no gaps to explain.\n"
			"Check that the program fires the gaptrace USDT probes or runs under the "
			"CUPTI library ('gaptrace info %s').\n",
			gt_clean(r->path));
		return;
	}
	fprintf(f, "GPU      busy         span         efficiency   gaps   gap time\n");
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct an_device *d = &r->devices[i];

		fprintf(f, "  %-4u %-12s %-12s %6.1f %%   %6llu   %s\n", d->id,
			gt_fmt_dur(d->busy_ns, d1, sizeof(d1)),
			gt_fmt_dur(d->span_ns, d2, sizeof(d2)),
			present__pct(d->busy_ns, d->span_ns), (unsigned long long)d->gaps,
			gt_fmt_dur(d->gap_ns, d3, sizeof(d3)));
	}
	fputc('\n', f);

	fprintf(f,
		"Where the gap time went (%zu gaps, %s; inter-unit %llu, intra-unit %llu, "
		"unscoped %llu)\n",
		r->ngaps, gt_fmt_dur(r->gap_ns_total, d1, sizeof(d1)),
		(unsigned long long)r->gaps_kind[GT_GAP_INTER],
		(unsigned long long)r->gaps_kind[GT_GAP_INTRA],
		(unsigned long long)r->gaps_kind[GT_GAP_UNSCOPED]);
	fprintf(f, "  %-10s %12s %7s   %-12s %-12s\n", "category", "total", "share", "inter-unit",
		"intra-unit");
	for (int c = 0; c < GT_CAT_MAX; c++) {
		double frac = r->gap_ns_total ? (double)r->totals[c] / (double)r->gap_ns_total : 0;
		char buf[24];
		const char *fg = term__fg(o->color, gt_cat_ansi[c], buf, sizeof(buf));

		fprintf(f, "  %s%-10s%s %12s %6.1f%%   %-12s %-12s %s", fg, gt_cat_names[c],
			term__reset(o->color), gt_fmt_dur(r->totals[c], d1, sizeof(d1)), 100 * frac,
			gt_fmt_dur(r->totals_kind[GT_GAP_INTER][c], d2, sizeof(d2)),
			gt_fmt_dur(r->totals_kind[GT_GAP_INTRA][c], d3, sizeof(d3)), fg);
		bar(f, frac, bar_cells, o->ascii);
		fprintf(f, "%s\n", term__reset(o->color));
	}
	fputc('\n', f);

	if (!r->ngaps) {
		fprintf(f, "No gaps of at least %s.\n",
			gt_fmt_dur(r->opts.min_gap_ns, d1, sizeof(d1)));
	} else {
		size_t n = r->ngaps < o->top ? r->ngaps : o->top;

		sorted = gt_xmalloc(sizeof(*sorted) * r->ngaps);
		for (size_t i = 0; i < r->ngaps; i++)
			sorted[i] = &r->gaps[i];
		gt_sort(sorted, r->ngaps, sizeof(*sorted), present__cmp_gap_len);
		fprintf(f, "Largest gaps (%zu of %zu; --top N for more)\n", n, r->ngaps);
		fprintf(f, "  %5s %4s %10s %11s  %-10s  %-20s %s\n", "gap", "dev", "at", "length",
			"kind", "critical thread", "breakdown");
		for (size_t i = 0; i < n; i++) {
			const struct an_gap *g = sorted[i];
			char thr[48];

			if (g->tid)
				snprintf(thr, sizeof(thr), "%s:%u",
					 gt_clean(an_result__thread_name(r, g->tid)), g->tid);
			else
				snprintf(thr, sizeof(thr), "(no launch record)");
			present__breakdown(g->by_cat, g->duration_ns, b, sizeof(b), 4, 0);
			fprintf(f, "  %5u %4u %9.3fs %11s  %-10s  %-20s %s%s\n", g->index,
				g->device, (g->start_ns - r->start_ns) / 1e9,
				gt_fmt_dur(g->duration_ns, d1, sizeof(d1)),
				gt_gap_kind_names[g->kind], thr, b,
				g->lossy ? "  [lost events nearby]" : "");
			print_chain(f, r, g);
			print_holders(f, r, g);
		}
		free(sorted);
	}
	print_chains(f, r);
	flame__print_top_stacks(f, r, 3);
	if (r->clock.pairs) {
		fprintf(f,
			"\nClock check: %llu ops matched to their launch call; launch -> GPU start "
			"(queueing included) min %s, p50 %s, p99 %s; %llu started before their "
			"launch%s\n",
			(unsigned long long)r->clock.pairs,
			gt_fmt_dur((uint64_t)(r->clock.min_ns < 0 ? 0 : r->clock.min_ns), d1,
				   sizeof(d1)),
			gt_fmt_dur((uint64_t)(r->clock.p50_ns < 0 ? 0 : r->clock.p50_ns), d2,
				   sizeof(d2)),
			gt_fmt_dur((uint64_t)(r->clock.p99_ns < 0 ? 0 : r->clock.p99_ns), d3,
				   sizeof(d3)),
			(unsigned long long)r->clock.violations,
			r->clock.violations ? " (CLOCK MISALIGNED: GPU timestamps are not on "
					      "CLOCK_MONOTONIC)"
					    : "");
	} else if (r->host_view) {
		fprintf(f, "\nClock check: none (host-side view: no GPU timestamps to compare with "
			   "launch calls)\n");
	}
}

static void json_cats(struct json *j, const char *key, const uint64_t *by_cat)
{
	json_key(j, key);
	json_obj_begin(j);
	for (int c = 0; c < GT_CAT_MAX; c++)
		json_ku64(j, gt_cat_names[c], by_cat[c]);
	json_obj_end(j);
}

void report__json(FILE *f, const struct an_result *r, const struct report_opts *o)
{
	struct flame *stacks = flame__new(); /* reused for each gap's top_stacks */
	struct json j;

	/*
	 * The stream is locked once for the document: stdio would take its lock
	 * per character once the capture reader has started a thread (4%).
	 */
	flockfile(f);
	json_init(&j, f, true);
	json_obj_begin(&j);
	json_kstr(&j, "schema", "gaptrace.report/1");
	json_key(&j, "capture");
	json_obj_begin(&j);
	json_kstr(&j, "path", r->path);
	json_ku64(&j, "pid", r->pid);
	json_kstr(&j, "comm", r->comm);
	json_ku64(&j, "start_ns", r->start_ns);
	json_ku64(&j, "end_ns", r->end_ns);
	json_ku64(&j, "duration_ns", r->duration_ns);
	json_ku64(&j, "records", r->records);
	json_ku64(&j, "lost_events", r->lost_ringbuf + r->lost_map_full);
	json_key(&j, "lost");
	json_obj_begin(&j);
	json_ku64(&j, "ringbuf", r->lost_ringbuf);
	json_ku64(&j, "map_full", r->lost_map_full);
	json_ku64(&j, "stacks", r->lost_stack);
	json_ku64(&j, "gpu_records", r->lost_gpu);
	json_ku64(&j, "gpu_producer_dropped", r->lost_producer);
	json_ku64(&j, "gpu_rejected", r->gpu_rejected);
	json_ku64(&j, "gpu_clipped", r->gpu_clipped);
	json_obj_end(&j);
	if (r->unw_walks) {
		json_key(&j, "unwind");
		json_obj_begin(&j);
		json_kstr(&j, "unwinder", "cfi");
		json_ku64(&j, "walks", r->unw_walks);
		json_ku64(&j, "reached_root", r->unw_root);
		json_obj_end(&j);
	}
	json_kbool(&j, "truncated", r->truncated);
	json_kbool(&j, "complete", r->clean_end);
	json_kstr(&j, "gpu_source", r->gpu_source);
	json_ku64(&j, "sample_period_ns", r->sample_period_ns);
	json_obj_end(&j);

	json_key(&j, "options");
	json_obj_begin(&j);
	json_ku64(&j, "min_gap_ns", r->opts.min_gap_ns);
	json_ku64(&j, "burst_gap_ns", r->opts.burst_gap_ns);
	json_ku64(&j, "max_chain_depth", r->opts.max_depth);
	json_obj_end(&j);

	json_key(&j, "units");
	json_obj_begin(&j);
	json_kstr(&j, "source", r->unit_source ? r->unit_source : "none");
	json_ku64(&j, "count", r->units);
	json_obj_end(&j);

	json_key(&j, "devices");
	json_arr_begin(&j);
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct an_device *d = &r->devices[i];

		json_obj_begin(&j);
		json_ku64(&j, "id", d->id);
		json_ku64(&j, "busy_ns", d->busy_ns);
		json_ku64(&j, "span_ns", d->span_ns);
		json_kdouble(&j, "efficiency", d->span_ns ? (double)d->busy_ns / d->span_ns : 0);
		json_ku64(&j, "first_ns", d->first_ns);
		json_ku64(&j, "last_ns", d->last_ns);
		json_ku64(&j, "ops", d->ops);
		json_ku64(&j, "gaps", d->gaps);
		json_ku64(&j, "gap_ns", d->gap_ns);
		json_obj_end(&j);
	}
	json_arr_end(&j);

	json_key(&j, "totals");
	json_obj_begin(&j);
	json_ku64(&j, "gaps", r->ngaps);
	json_ku64(&j, "gap_ns", r->gap_ns_total);
	json_cats(&j, "by_category", r->totals);
	json_key(&j, "by_kind");
	json_obj_begin(&j);
	for (int k = 0; k < 3; k++) {
		json_key(&j, gt_gap_kind_names[k]);
		json_obj_begin(&j);
		json_ku64(&j, "gaps", r->gaps_kind[k]);
		json_cats(&j, "by_category", r->totals_kind[k]);
		json_obj_end(&j);
	}
	json_obj_end(&j);
	json_obj_end(&j);

	present__json_clock(&j, r);

	json_key(&j, "gaps");
	json_arr_begin(&j);
	for (size_t i = 0; i < r->ngaps; i++) {
		const struct an_gap *g = &r->gaps[i];

		json_obj_begin(&j);
		json_ku64(&j, "index", g->index);
		json_ku64(&j, "device", g->device);
		json_ku64(&j, "start_ns", g->start_ns);
		json_ku64(&j, "end_ns", g->end_ns);
		json_ku64(&j, "duration_ns", g->duration_ns);
		json_kstr(&j, "kind", gt_gap_kind_names[g->kind]);
		json_key(&j, "unit_before");
		if (g->unit_before >= 0)
			json_i64(&j, g->unit_before);
		else
			json_null(&j);
		json_key(&j, "unit_after");
		if (g->unit_after >= 0)
			json_i64(&j, g->unit_after);
		else
			json_null(&j);
		json_ku64(&j, "thread", g->tid);
		json_kstr(&j, "thread_name", g->tid ? an_result__thread_name(r, g->tid) : "");
		json_ku64(&j, "launch_ns", g->launch_ns);
		json_ku64(&j, "op_after", g->op_after);
		json_kbool(&j, "lossy", g->lossy);
		json_cats(&j, "by_category", g->by_cat);
		json_key(&j, "chain");
		json_arr_begin(&j);
		for (size_t h = 0; h < g->nchain; h++) {
			const struct an_hop *hp = &g->chain[h];

			json_obj_begin(&j);
			json_ku64(&j, "tid", hp->tid);
			json_kstr(&j, "thread_name", an_result__thread_name(r, hp->tid));
			json_ku64(&j, "woke", hp->waker_of);
			json_ku64(&j, "depth", hp->depth);
			json_ku64(&j, "from_ns", hp->from_ns);
			json_ku64(&j, "to_ns", hp->to_ns);
			json_cats(&j, "by_category", hp->by_cat);
			/* The waker the path could not follow: not traced. */
			present__json_untraced(&j, hp);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_key(&j, "lock_holders");
		json_arr_begin(&j);
		for (size_t h = 0; h < g->nholders; h++) {
			json_obj_begin(&j);
			json_ku64(&j, "tid", g->holders[h].tid);
			json_kstr(&j, "thread_name", an_result__thread_name(r, g->holders[h].tid));
			json_ku64(&j, "wait_ns", g->holders[h].wait_ns);
			json_cats(&j, "activity", g->holders[h].by_cat);
			{
				struct frames fr;

				frames_get(r, g->holders[h].ustack, &fr);
				json_key(&j, "frames");
				json_arr_begin(&j);
				for (int k = 0; k < fr.n; k++)
					json_str(&j, fr.name[k]);
				json_arr_end(&j);
				frames_free(&fr);
			}
			json_obj_end(&j);
		}
		json_arr_end(&j);
		flame__json_top_stacks(&j, stacks, r, g->index, 3);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	flame__free(stacks);

	json_key(&j, "threads");
	json_arr_begin(&j);
	for (size_t i = 0; i < r->nthreads; i++) {
		json_obj_begin(&j);
		json_ku64(&j, "tid", r->threads[i].tid);
		json_ku64(&j, "pid", r->threads[i].pid);
		json_kstr(&j, "comm", r->threads[i].comm);
		json_obj_end(&j);
	}
	json_arr_end(&j);

	json_key(&j, "warnings");
	json_arr_begin(&j);
	for (size_t i = 0; i < r->nwarnings; i++)
		json_str(&j, r->warnings[i]);
	json_arr_end(&j);
	json_obj_end(&j);
	funlockfile(f);
}

static void csv_field(FILE *f, const char *s)
{
	/* Quote every text field; double embedded quotes (RFC 4180); no raw controls. */
	s = gt_clean(s);
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void report__csv(FILE *f, const struct an_result *r)
{
	fputs("index,device,start_ns,end_ns,duration_ns,kind,unit_before,unit_after,thread,"
	      "thread_name,launch_ns",
	      f);
	for (int c = 0; c < GT_CAT_MAX; c++)
		fprintf(f, ",%s_ns", gt_cat_names[c]);
	fputc('\n', f);
	for (size_t i = 0; i < r->ngaps; i++) {
		const struct an_gap *g = &r->gaps[i];

		fprintf(f, "%u,%u,%llu,%llu,%llu,%s,", g->index, g->device,
			(unsigned long long)g->start_ns, (unsigned long long)g->end_ns,
			(unsigned long long)g->duration_ns, gt_gap_kind_names[g->kind]);
		if (g->unit_before >= 0)
			fprintf(f, "%lld", (long long)g->unit_before);
		fputc(',', f);
		if (g->unit_after >= 0)
			fprintf(f, "%lld", (long long)g->unit_after);
		fprintf(f, ",%u,", g->tid);
		csv_field(f, g->tid ? an_result__thread_name(r, g->tid) : "");
		fprintf(f, ",%llu", (unsigned long long)g->launch_ns);
		for (int c = 0; c < GT_CAT_MAX; c++)
			fprintf(f, ",%llu", (unsigned long long)g->by_cat[c]);
		fputc('\n', f);
	}
}
