// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * diff_print.c: the comparison (diff.c) printed as text, as JSON (schema
 * gaptrace.diff/1) or drawn as a differential flame graph.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/stats.h"
#include "capture/capture.h"
#include "output/diff.h"
#include "output/flame.h"
#include "support/json.h"
#include "output/present.h"
#include "support/util.h"

static double efficiency(const struct an_result *r)
{
	uint64_t busy, span;

	present__gpu_busy(r, &busy, &span);
	return span ? (double)busy / (double)span : 0;
}

/* Signed duration for people: "+1.25 ms", "-19.80 ms", "0". */
static const char *sdur(double ns, char *buf, size_t len)
{
	char d[24];

	if (fabs(ns) < 0.5) {
		snprintf(buf, len, "0");
		return buf;
	}
	gt_fmt_dur((uint64_t)llround(fabs(ns)), d, sizeof(d));
	snprintf(buf, len, "%s%s", ns < 0 ? "-" : "+", d);
	return buf;
}

static const char *dur(double ns, char *buf, size_t len)
{
	return gt_fmt_dur((uint64_t)llround(ns < 0 ? 0 : ns), buf, len);
}

static const char *pval(double p, char *buf, size_t len)
{
	if (p < 0.0001)
		snprintf(buf, len, "%.1e", p);
	else
		snprintf(buf, len, "%.4f", p);
	return buf;
}

static void side_line(FILE *f, const char *label, const struct an_result *r,
		      const struct df_side *s)
{
	char d1[32];

	fprintf(f,
		"  %-7s %s (pid %u), %s, %llu units (%s), %zu gaps; %zu observations "
		"(%zu gaps + %zu gap-free unit transitions)\n",
		label, gt_clean(r->comm), r->pid, gt_fmt_dur(r->duration_ns, d1, sizeof(d1)),
		(unsigned long long)r->units, r->unit_source ? r->unit_source : "none", r->ngaps,
		s->nobs, s->ngap_obs, s->nzero_obs);
}

void diff__print_text(FILE *f, const struct an_result *b, const struct an_result *a,
		      const struct df_result *d, unsigned top)
{
	char d1[32], d2[32], d3[32], d4[32], p1[32];
	double eb = efficiency(b), ea = efficiency(a);

	fprintf(f, "gaptrace diff: %s -> %s\n", gt_clean(b->path), gt_clean(a->path));
	side_line(f, "before:", b, &d->before);
	side_line(f, "after:", a, &d->after);
	for (size_t i = 0; i < b->nwarnings; i++)
		fprintf(f, "  warning (before): %s\n", gt_clean(b->warnings[i]));
	for (size_t i = 0; i < a->nwarnings; i++)
		fprintf(f, "  warning (after): %s\n", gt_clean(a->warnings[i]));
	if (!d->before.nobs && !d->after.nobs)
		fprintf(f,
			"  neither capture has a gap of at least %s: there is nothing to "
			"compare (see --min-gap)\n",
			gt_fmt_dur(b->opts.min_gap_ns, d1, sizeof(d1)));
	fputc('\n', f);
	fprintf(f, "  GPU efficiency  %6.1f %% -> %6.1f %%   (%+.1f points)\n", 100 * eb, 100 * ea,
		100 * (ea - eb));
	fprintf(f, "  gaps            %8zu -> %-8zu (%+lld)\n", b->ngaps, a->ngaps,
		(long long)a->ngaps - (long long)b->ngaps);
	fprintf(f, "  gap time      %10s -> %-10s (%s)\n",
		gt_fmt_dur(b->gap_ns_total, d1, sizeof(d1)),
		gt_fmt_dur(a->gap_ns_total, d2, sizeof(d2)),
		sdur((double)a->gap_ns_total - (double)b->gap_ns_total, d3, sizeof(d3)));
	if (b->ndevices > 1 || a->ndevices > 1)
		for (size_t i = 0; i < b->ndevices; i++)
			for (size_t j = 0; j < a->ndevices; j++)
				if (b->devices[i].id == a->devices[j].id)
					fprintf(f, "    device %u: %.1f %% -> %.1f %%\n",
						b->devices[i].id,
						100 * (double)b->devices[i].busy_ns /
						    (double)GT_MAX(b->devices[i].span_ns, 1),
						100 * (double)a->devices[j].busy_ns /
						    (double)GT_MAX(a->devices[j].span_ns, 1));
	fputc('\n', f);

	fprintf(f, "Per gap (a unit transition without a gap counts as 0), in ms\n");
	fprintf(f, "  %-10s %26s   %26s   %-32s\n", "", "--------- before ---------",
		"---------- after ---------", "------ change of the mean ------");
	fprintf(f, "  %-10s %8s %8s %8s   %8s %8s %8s   %9s  %-21s %-8s\n", "", "median", "p90",
		"p99", "median", "p90", "p99", "change", "99% interval", "p (Holm)");
	for (int i = 0; i < DF_NVAL; i++) {
		/* The whole gap first, then each category. */
		int k = i ? i - 1 : DF_TOTAL;
		const struct df_value *v = &d->val[k];
		char ci[48] = "";

		if (k != DF_TOTAL && !v->before.sum && !v->after.sum)
			continue;
		if (v->ci_ok)
			snprintf(ci, sizeof(ci), "[%+.3f, %+.3f]", v->ci_lo / 1e6, v->ci_hi / 1e6);
		fprintf(f,
			"  %-10s %8.3f %8.3f %8.3f   %8.3f %8.3f %8.3f   %+9.3f  %-21s %-8s %s\n",
			diff__value_name(k), v->before.median / 1e6, v->before.p90 / 1e6,
			v->before.p99 / 1e6, v->after.median / 1e6, v->after.p90 / 1e6,
			v->after.p99 / 1e6, v->d_mean / 1e6, ci, pval(v->p_adj, p1, sizeof(p1)),
			v->significant ? (v->d_mean < 0 ? "SIGNIFICANT drop" : "SIGNIFICANT rise")
			: v->p_adj < d->rule.alpha && !v->practical ? "(too small to matter)"
								    : "");
	}
	fputc('\n', f);
	if (d->nsignificant) {
		fprintf(f, "Significant changes:");
		for (int k = DF_NVAL - 1, first = 1; k >= 0; k--) {
			const struct df_value *v = &d->val[k];

			if (!v->significant)
				continue;
			fprintf(f, "%s %s %s per gap (p = %s)", first ? "" : ";",
				diff__value_name(k), sdur(v->d_mean, d1, sizeof(d1)),
				pval(v->p_adj, p1, sizeof(p1)));
			first = 0;
		}
		fputc('\n', f);
	} else {
		fprintf(f, "No significant change.\n");
	}
	fprintf(f,
		"  (significant: Mann-Whitney p < %g after Holm's adjustment for the %zu values "
		"tested, bootstrap %.0f%% interval of the mean change excluding 0, and "
		"|change| >= max(%s, %.0f%% of before))\n",
		d->rule.alpha, d->ntests, 100 * DF_CI_LEVEL,
		gt_fmt_dur(d->rule.min_effect_ns, d1, sizeof(d1)), 100 * d->rule.min_effect_frac);

	if (d->npairs) {
		const struct df_value *t = &d->val[DF_TOTAL];

		fprintf(f,
			"\nPaired by unit (%zu transitions in both): median change %s per "
			"transition, Wilcoxon signed-rank p = %s\n",
			d->npairs, sdur(t->pair_d_median, d1, sizeof(d1)),
			pval(t->wx.p, p1, sizeof(p1)));
		fprintf(f, "  %-14s %12s %12s %12s   %s\n", "units", "before", "after", "change",
			"largest category change");
		for (size_t i = 0; i < d->npairs && i < top; i++) {
			const struct df_pair *p = &d->pairs[i];
			char u[40];
			int big = 0;

			for (int c = 1; c < GT_CAT_MAX; c++)
				if (fabs(p->after[c] - p->before[c]) >
				    fabs(p->after[big] - p->before[big]))
					big = c;
			snprintf(u, sizeof(u), "%lld -> %lld", (long long)p->ub, (long long)p->ua);
			fprintf(f, "  %-14s %12s %12s %12s   %s %s\n", u,
				dur(p->before[DF_TOTAL], d1, sizeof(d1)),
				dur(p->after[DF_TOTAL], d2, sizeof(d2)),
				sdur(p->after[DF_TOTAL] - p->before[DF_TOTAL], d3, sizeof(d3)),
				gt_cat_names[big],
				sdur(p->after[big] - p->before[big], d4, sizeof(d4)));
		}
		if (d->npairs > top)
			fprintf(f, "  ... %zu more (--top N)\n", d->npairs - top);
	}

	if (d->nstacks) {
		fprintf(f, "\nStacks that moved most (attributed gap time, after - before)\n");
		for (size_t i = 0; i < d->nstacks && i < top; i++) {
			const struct df_stack *s = &d->stacks[i];

			if (s->after_ns == s->before_ns)
				break;
			fprintf(f, "  %11s  %-9s %s  (%s -> %s)\n",
				sdur((double)s->after_ns - (double)s->before_ns, d1, sizeof(d1)),
				s->cat >= 0 ? gt_cat_names[s->cat] : "?", s->summary,
				gt_fmt_dur(s->before_ns, d2, sizeof(d2)),
				gt_fmt_dur(s->after_ns, d3, sizeof(d3)));
		}
	}
}

/* ns values are whole numbers in JSON; means and quantiles are rounded. */
static void json_kns(struct json *j, const char *key, double ns)
{
	json_ki64(j, key, (int64_t)llround(ns));
}

static void json_dist(struct json *j, const char *key, const struct df_dist *d)
{
	json_key(j, key);
	json_obj_begin(j);
	json_kns(j, "mean_ns", d->mean);
	json_kns(j, "median_ns", d->median);
	json_kns(j, "p90_ns", d->p90);
	json_kns(j, "p99_ns", d->p99);
	json_kns(j, "total_ns", d->sum);
	json_obj_end(j);
}

static void json_test(struct json *j, const char *key, const struct st_test *t, bool wilcoxon)
{
	json_key(j, key);
	json_obj_begin(j);
	json_kdouble(j, wilcoxon ? "w_plus" : "u", t->stat);
	json_kdouble(j, "z", t->z);
	json_kdouble(j, "p", t->p);
	json_kbool(j, "exact", t->exact);
	if (wilcoxon)
		json_ku64(j, "nonzero_pairs", t->n);
	json_obj_end(j);
}

static void json_value(struct json *j, const struct df_value *v, const char *key)
{
	json_key(j, key);
	json_obj_begin(j);
	json_dist(j, "before", &v->before);
	json_dist(j, "after", &v->after);
	json_key(j, "change");
	json_obj_begin(j);
	json_kns(j, "mean_ns", v->d_mean);
	json_kns(j, "median_ns", v->d_median);
	json_kns(j, "total_ns", v->after.sum - v->before.sum);
	json_key(j, "ci99_low_ns");
	if (v->ci_ok)
		json_i64(j, (int64_t)llround(v->ci_lo));
	else
		json_null(j);
	json_key(j, "ci99_high_ns");
	if (v->ci_ok)
		json_i64(j, (int64_t)llround(v->ci_hi));
	else
		json_null(j);
	json_obj_end(j);
	json_test(j, "mann_whitney", &v->mw, false);
	json_kdouble(j, "p_adjusted", v->p_adj);
	json_kbool(j, "practical", v->practical);
	json_kbool(j, "significant", v->significant);
	json_key(j, "paired");
	json_obj_begin(j);
	json_kns(j, "median_change_ns", v->pair_d_median);
	json_test(j, "wilcoxon", &v->wx, true);
	json_obj_end(j);
	json_obj_end(j);
}

static void json_side(struct json *j, const char *key, const struct an_result *r,
		      const struct df_side *s)
{
	json_key(j, key);
	json_obj_begin(j);
	json_kstr(j, "path", r->path);
	json_kstr(j, "comm", r->comm);
	json_ku64(j, "pid", r->pid);
	json_ku64(j, "duration_ns", r->duration_ns);
	json_kstr(j, "unit_source", r->unit_source ? r->unit_source : "none");
	json_ku64(j, "units", r->units);
	json_ku64(j, "gaps", r->ngaps);
	json_ku64(j, "gap_ns", r->gap_ns_total);
	json_kdouble(j, "efficiency", efficiency(r));
	json_ku64(j, "lost_events", r->lost_ringbuf + r->lost_map_full);
	json_ku64(j, "observations", s->nobs);
	json_ku64(j, "gap_free_transitions", s->nzero_obs);
	json_key(j, "devices");
	json_arr_begin(j);
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct an_device *d = &r->devices[i];

		json_obj_begin(j);
		json_ku64(j, "id", d->id);
		json_ku64(j, "busy_ns", d->busy_ns);
		json_ku64(j, "span_ns", d->span_ns);
		json_kdouble(j, "efficiency", d->span_ns ? (double)d->busy_ns / d->span_ns : 0);
		json_ku64(j, "gaps", d->gaps);
		json_ku64(j, "gap_ns", d->gap_ns);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_key(j, "warnings");
	json_arr_begin(j);
	for (size_t i = 0; i < r->nwarnings; i++)
		json_str(j, r->warnings[i]);
	json_arr_end(j);
	json_obj_end(j);
}

static void json_frames(struct json *j, const char *key)
{
	const char *p = key;

	json_key(j, "frames");
	json_arr_begin(j);
	while (*p) {
		const char *q = strchr(p, ';');
		size_t n = q ? (size_t)(q - p) : strlen(p);
		char buf[256];

		snprintf(buf, sizeof(buf), "%.*s", (int)GT_MIN(n, sizeof(buf) - 1), p);
		json_str(j, buf);
		p += n;
		if (*p)
			p++;
	}
	json_arr_end(j);
}

void diff__print_json(FILE *f, const struct an_result *b, const struct an_result *a,
		      const struct df_result *d, unsigned top)
{
	struct json j;

	json_init(&j, f, true);
	json_obj_begin(&j);
	json_kstr(&j, "schema", "gaptrace.diff/1");
	json_side(&j, "before", b, &d->before);
	json_side(&j, "after", a, &d->after);
	json_key(&j, "rule");
	json_obj_begin(&j);
	json_kstr(&j, "test", "mann-whitney-u");
	json_kdouble(&j, "alpha", d->rule.alpha);
	json_ku64(&j, "min_effect_ns", d->rule.min_effect_ns);
	json_kdouble(&j, "min_effect_fraction", d->rule.min_effect_frac);
	json_kdouble(&j, "ci_level", DF_CI_LEVEL);
	json_ku64(&j, "bootstrap_iterations", d->rule.boot_iters);
	json_kstr(&j, "adjustment", "holm");
	json_ku64(&j, "tests", d->ntests);
	json_ku64(&j, "min_gap_ns", b->opts.min_gap_ns);
	json_obj_end(&j);
	json_kdouble(&j, "efficiency_change", efficiency(a) - efficiency(b));
	json_ki64(&j, "gaps_change", (int64_t)a->ngaps - (int64_t)b->ngaps);
	json_ki64(&j, "gap_ns_change", (int64_t)a->gap_ns_total - (int64_t)b->gap_ns_total);
	json_value(&j, &d->val[DF_TOTAL], "total");
	json_key(&j, "by_category");
	json_obj_begin(&j);
	for (int c = 0; c < GT_CAT_MAX; c++)
		json_value(&j, &d->val[c], gt_cat_names[c]);
	json_obj_end(&j);
	json_key(&j, "significant");
	json_arr_begin(&j);
	for (int k = 0; k < DF_NVAL; k++)
		if (d->val[k].significant)
			json_str(&j, diff__value_name(k));
	json_arr_end(&j);

	json_key(&j, "pairs");
	json_arr_begin(&j);
	for (size_t i = 0; i < d->npairs; i++) {
		const struct df_pair *p = &d->pairs[i];

		json_obj_begin(&j);
		json_ki64(&j, "unit_before", p->ub);
		json_ki64(&j, "unit_after", p->ua);
		json_kns(&j, "before_ns", p->before[DF_TOTAL]);
		json_kns(&j, "after_ns", p->after[DF_TOTAL]);
		json_kns(&j, "change_ns", p->after[DF_TOTAL] - p->before[DF_TOTAL]);
		json_key(&j, "change_by_category");
		json_obj_begin(&j);
		for (int c = 0; c < GT_CAT_MAX; c++)
			json_kns(&j, gt_cat_names[c], p->after[c] - p->before[c]);
		json_obj_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);

	json_key(&j, "stacks");
	json_arr_begin(&j);
	for (size_t i = 0; i < d->nstacks && i < top; i++) {
		const struct df_stack *s = &d->stacks[i];

		if (s->after_ns == s->before_ns)
			break;
		json_obj_begin(&j);
		json_kstr(&j, "category", s->cat >= 0 ? gt_cat_names[s->cat] : "unknown");
		json_kstr(&j, "summary", s->summary);
		json_frames(&j, s->key);
		json_ku64(&j, "before_ns", s->before_ns);
		json_ku64(&j, "after_ns", s->after_ns);
		json_ki64(&j, "change_ns", (int64_t)s->after_ns - (int64_t)s->before_ns);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	fputc('\n', f);
}

/* ---- command ---- */

/*
 * AFTER's stacks sized by their gap time and coloured by the change from
 * BEFORE.  When AFTER has no gap time left there is nothing to size by, so
 * BEFORE's stacks are drawn instead (all blue: gone), and the subtitle says so.
 */
int diff__flame_svg(FILE *out, const struct an_result *b, const struct an_result *a,
		    struct capture *cb, struct capture *ca)
{
	struct flame_svg_opts so = {.differential = true, .width_side = FLAME_AFTER};
	struct flame_filter fb, fa;
	struct flame *fl = flame__new();
	char sub[512];
	int ret;

	flame_filter__init(&fb);
	flame_filter__init(&fa);
	fb.cap = cb;
	fa.cap = ca;
	flame__add_result(fl, b, &fb, FLAME_BEFORE);
	flame__add_result(fl, a, &fa, FLAME_AFTER);
	if (!flame__total(fl, FLAME_AFTER) && flame__total(fl, FLAME_BEFORE))
		so.width_side = FLAME_BEFORE;
	snprintf(sub, sizeof(sub), "%s -> %s: %s; red grew, blue shrank", b->path, a->path,
		 so.width_side == FLAME_AFTER ? "widths are AFTER's gap time"
					      : "AFTER has no gap time: widths are BEFORE's");
	so.title = "gaptrace diff: where GPU idle time changed";
	so.subtitle = sub;
	ret = flame__write_svg(fl, out, &so);
	flame__free(fl);
	return ret;
}

/* The first value (category or total) whose gap time grew significantly, or NULL. */
const char *diff__regression(const struct df_result *d)
{
	for (int k = 0; k < DF_NVAL; k++)
		if (d->val[k].significant && d->val[k].d_mean > 0)
			return diff__value_name(k);
	return NULL;
}
