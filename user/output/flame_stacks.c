// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * flame_stacks.c: reading a flame graph's tree back as stacks: folded
 * output, the heaviest stacks, their one-line summaries, and the report's
 * "top stacks" (text and JSON).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/flame_priv.h"
#include "support/json.h"
#include "support/util.h"

/* Path of node (root excluded) as string ids, root first; returns its length. */
static size_t node_path(const struct flame *fl, uint32_t node, uint32_t *ids)
{
	size_t n = fl->nodes[node].depth, i = n;

	for (uint32_t c = node; c && i; c = fl->nodes[c].parent)
		ids[--i] = c;
	return n;
}

struct line {
	char *text;
	uint64_t a, b;
};

static int cmp_line(const void *x, const void *y)
{
	return strcmp(((const struct line *)x)->text, ((const struct line *)y)->text);
}

static int write_folded(const struct flame *fl, FILE *out, bool both)
{
	struct line *lines = NULL;
	size_t nlines = 0, cap = 0;
	uint32_t ids[FLAME_MAX_DEPTH + 1];
	int ret = 0;

	for (uint32_t i = 1; i < fl->nnodes; i++) {
		const struct fnode *nd = &fl->nodes[i];
		size_t n, len = 0;
		char *t;

		if (!nd->self[FLAME_AFTER] && !(both && nd->self[FLAME_BEFORE]))
			continue;
		n = node_path(fl, i, ids);
		for (size_t k = 0; k < n; k++)
			len += strlen(fl->str[fl->nodes[ids[k]].name]) + 1;
		t = gt_xmalloc(len + 1);
		len = 0;
		for (size_t k = 0; k < n; k++) {
			const char *s = fl->str[fl->nodes[ids[k]].name];
			size_t sl = strlen(s);

			if (k)
				t[len++] = ';';
			memcpy(t + len, s, sl);
			len += sl;
		}
		t[len] = '\0';
		gt_grow((void **)&lines, &cap, nlines, sizeof(*lines));
		lines[nlines++] = (struct line){t, nd->self[FLAME_AFTER], nd->self[FLAME_BEFORE]};
	}
	gt_sort(lines, nlines, sizeof(*lines), cmp_line);
	for (size_t i = 0; i < nlines; i++) {
		if (both)
			fprintf(out, "%s %llu %llu\n", lines[i].text,
				(unsigned long long)lines[i].b, (unsigned long long)lines[i].a);
		else
			fprintf(out, "%s %llu\n", lines[i].text, (unsigned long long)lines[i].a);
		free(lines[i].text);
	}
	free(lines);
	if (fflush(out) || ferror(out))
		ret = -1;
	return ret;
}

int flame__write_folded(const struct flame *fl, FILE *out)
{
	return write_folded(fl, out, false);
}

int flame__write_folded_diff(const struct flame *fl, FILE *out)
{
	return write_folded(fl, out, true);
}

/* ---- top stacks ---- */

struct top_ent {
	uint32_t node;
	uint64_t ns;
};

static const struct flame *top_fl; /* qsort has no context argument */

static int cmp_top(const void *x, const void *y)
{
	const struct top_ent *a = x, *b = y;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return strcmp(top_fl->str[top_fl->nodes[a->node].name],
		      top_fl->str[top_fl->nodes[b->node].name]);
}

size_t flame__top_stacks(const struct flame *fl, int cat, size_t n,
			 void (*cb)(const struct flame_stack *s, void *ctx), void *ctx)
{
	struct top_ent *ents = NULL;
	size_t nents = 0, cap = 0, shown;

	for (uint32_t i = 1; i < fl->nnodes; i++) {
		const struct fnode *nd = &fl->nodes[i];

		if (!nd->self[FLAME_AFTER] || (cat >= 0 && nd->cat != cat))
			continue;
		gt_grow((void **)&ents, &cap, nents, sizeof(*ents));
		ents[nents++] = (struct top_ent){i, nd->self[FLAME_AFTER]};
	}
	top_fl = fl;
	gt_sort(ents, nents, sizeof(*ents), cmp_top);
	shown = GT_MIN(n, nents);
	for (size_t i = 0; i < shown; i++) {
		uint32_t ids[FLAME_MAX_DEPTH + 1];
		const char *frames[FLAME_MAX_DEPTH + 1];
		unsigned char kinds[FLAME_MAX_DEPTH + 1];
		const struct fnode *nd = &fl->nodes[ents[i].node];
		size_t k = node_path(fl, ents[i].node, ids);
		struct flame_stack s = {.cat = nd->cat,
					.ns = nd->self[FLAME_AFTER],
					.before_ns = nd->self[FLAME_BEFORE],
					.frames = frames,
					.kinds = kinds,
					.nframes = k};

		for (size_t j = 0; j < k; j++) {
			frames[j] = fl->str[fl->nodes[ids[j]].name];
			kinds[j] = fl->nodes[ids[j]].kind;
		}
		cb(&s, ctx);
	}
	free(ents);
	return shown;
}

size_t flame_stack__summary(const struct flame_stack *s, const char **out, size_t max)
{
	size_t n = 0, users = 0;

	if (!max || s->nframes < 2)
		return 0;
	for (size_t i = 2; i < s->nframes; i++)
		users += s->kinds[i] == FLAME_FRAME_USER || s->kinds[i] == FLAME_FRAME_INLINED;
	/* A synthetic leaf says what the time was ("[run queue]"): keep it first. */
	if (s->kinds[s->nframes - 1] == FLAME_FRAME_SYNTHETIC)
		out[n++] = s->frames[s->nframes - 1];
	for (size_t i = s->nframes; i-- > 2 && n < max;) {
		unsigned k = s->kinds[i];

		if (k == (users ? FLAME_FRAME_USER : FLAME_FRAME_KERNEL) ||
		    (users && k == FLAME_FRAME_INLINED))
			out[n++] = s->frames[i];
	}
	return n;
}

const char *flame_stack__thread(const struct flame_stack *s, char *buf, size_t len)
{
	const char *t;
	size_t n;

	if (s->nframes < 2 || s->kinds[1] != FLAME_FRAME_THREAD)
		return NULL;
	t = s->frames[1];
	n = strlen(t);
	if (n >= 2 && t[0] == '[' && t[n - 1] == ']') {
		t++;
		n -= 2;
	}
	snprintf(buf, len, "%.*s", (int)n, t);
	return buf;
}

/* ---- report helpers ---- */

/* A frame for a one-line summary: at most max_chars characters, "…" when cut. */
static const char *short_frame(const char *s, char *buf, size_t max_chars)
{
	size_t chars = 0, cut = 0;

	for (size_t i = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;
		if (chars == max_chars - 1)
			cut = i;
		chars++;
	}
	if (chars <= max_chars)
		return s;
	memcpy(buf, s, cut);
	memcpy(buf + cut, "\xe2\x80\xa6", 4);
	return buf;
}

/* One summary line; stacks that summarise alike (differing only in kernel
 * or unresolved frames) are merged so the list shows distinct places. */
struct top_line {
	char *text;
	uint64_t ns;
};

struct top_print {
	struct top_line *lines;
	size_t n, cap;
};

static void top_collect_cb(const struct flame_stack *s, void *ctx)
{
	struct top_print *tp = ctx;
	const char *sum[4];
	size_t n = flame_stack__summary(s, sum, GT_ARRAY_SIZE(sum)), o;
	char thr[64], buf[FLAME_MAX_NAME + 4], line[1024];

	o = (size_t)snprintf(line, sizeof(line),
			     "%s: ", flame_stack__thread(s, thr, sizeof(thr)) ?: "?");
	if (!n)
		snprintf(line + o, sizeof(line) - o, "(no stack)");
	for (size_t i = 0; i < n && o < sizeof(line); i++)
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s%s", i ? " \xe2\x86\x90 " : "",
				      short_frame(sum[i], buf, 60));
	for (size_t i = 0; i < tp->n; i++) {
		if (!strcmp(tp->lines[i].text, line)) {
			tp->lines[i].ns += s->ns;
			return;
		}
	}
	gt_grow((void **)&tp->lines, &tp->cap, tp->n, sizeof(*tp->lines));
	tp->lines[tp->n++] = (struct top_line){gt_xstrdup(line), s->ns};
}

static int cmp_top_line(const void *x, const void *y)
{
	const struct top_line *a = x, *b = y;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return strcmp(a->text, b->text);
}

void flame__print_top_stacks(FILE *f, const struct an_result *r, size_t per_cat)
{
	struct flame *fl = r->pieces ? flame__from_result(r, NULL) : NULL;
	char d[32];

	if (!fl || !flame__total(fl, FLAME_AFTER)) {
		flame__free(fl);
		return;
	}
	fprintf(f,
		"\nTop stacks by category (heaviest %zu each; leaf first, share of the "
		"category; 'gaptrace flame' draws them all)\n",
		per_cat);
	for (int c = 0; c < GT_CAT_MAX; c++) {
		struct top_print tp = {};

		if (!r->totals[c])
			continue;
		fprintf(f, "  %s %s\n", gt_cat_names[c], gt_fmt_dur(r->totals[c], d, sizeof(d)));
		/* Bounded: the tree holds at most FLAME_MAX_NODES stacks. */
		flame__top_stacks(fl, c, FLAME_MAX_NODES, top_collect_cb, &tp);
		gt_sort(tp.lines, tp.n, sizeof(*tp.lines), cmp_top_line);
		for (size_t i = 0; i < tp.n; i++) {
			if (i < per_cat)
				fprintf(f, "    %10s %5.1f%%  %s\n",
					gt_fmt_dur(tp.lines[i].ns, d, sizeof(d)),
					100.0 * (double)tp.lines[i].ns / (double)r->totals[c],
					tp.lines[i].text);
			free(tp.lines[i].text);
		}
		free(tp.lines);
	}
	flame__free(fl);
}

static void json_top_cb(const struct flame_stack *s, void *ctx)
{
	struct json *j = ctx;
	char thr[64];
	size_t first = s->nframes >= 2 && s->kinds[1] == FLAME_FRAME_THREAD ? 2 : 1;

	json_obj_begin(j);
	json_kstr(j, "category", s->nframes ? s->frames[0] : "unknown");
	json_ku64(j, "ns", s->ns);
	json_kstr(j, "thread_name", flame_stack__thread(s, thr, sizeof(thr)) ?: "");
	json_key(j, "frames");
	json_arr_begin(j);
	for (size_t i = s->nframes; i-- > first;)
		json_str(j, s->frames[i]);
	json_arr_end(j);
	/* Added in 1.2 beside "frames" (whose strings stay as they were). */
	json_key(j, "frame_info");
	json_arr_begin(j);
	for (size_t i = s->nframes; i-- > first;) {
		bool inl = s->kinds[i] == FLAME_FRAME_INLINED;
		size_t len = strlen(s->frames[i]);
		char *name;

		if (inl)
			len -= strlen(FLAME_INLINED_SUFFIX);
		name = gt_xstrndup(s->frames[i], len);
		json_obj_begin(j);
		json_kstr(j, "name", name);
		json_kbool(j, "inlined", inl);
		json_obj_end(j);
		free(name);
	}
	json_arr_end(j);
	json_obj_end(j);
}

void flame__json_top_stacks(struct json *j, struct flame *scratch, const struct an_result *r,
			    uint32_t gap, size_t n)
{
	struct flame_filter f;

	json_key(j, "top_stacks");
	json_arr_begin(j);
	flame_filter__init(&f);
	f.gap = gap;
	flame__clear(scratch);
	if (r->pieces && !flame__add_result(scratch, r, &f, FLAME_AFTER))
		flame__top_stacks(scratch, -1, n, json_top_cb, j);
	json_arr_end(j);
}
