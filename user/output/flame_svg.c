// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * flame_svg.c: a flame graph's tree as a self-contained interactive SVG
 * (its CSS and viewer script inline, no external resources).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/flame_priv.h"
#include "output/present.h"
#include "support/util.h"

/* ---- SVG ---- */

#define SVG_FRAME_H 16
#define SVG_FONT    12
#define SVG_CHAR_W  (SVG_FONT * 0.62) /* DejaVu Sans / Verdana average advance */
#define SVG_PAD	    10
#define SVG_TOP	    84
#define SVG_BOTTOM  34

/* Label that fits pw pixels: the name, or its start with "..", or nothing. */
static void xml_label(FILE *f, const char *name, double pw)
{
	long fit = (long)((pw - 6) / SVG_CHAR_W);
	size_t chars = 0, bytes = 0, cut = 0;
	char buf[FLAME_MAX_NAME + 4];

	if (fit < 3)
		return;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if ((*p & 0xc0) != 0x80) {
			if ((long)chars == fit - 2)
				cut = bytes;
			chars++;
		}
		bytes++;
	}
	if ((long)chars <= fit) {
		gt_xml_puts(f, name);
		return;
	}
	memcpy(buf, name, cut);
	memcpy(buf + cut, "..", 3);
	gt_xml_puts(f, buf);
}

struct rgb {
	int r, g, b;
};

static struct rgb hex_rgb(const char *hex)
{
	unsigned v = (unsigned)strtoul(hex + 1, NULL, 16);

	return (struct rgb){(int)(v >> 16) & 255, (int)(v >> 8) & 255, (int)v & 255};
}

static int clamp255(double v)
{
	return v < 0 ? 0 : v > 255 ? 255 : (int)(v + 0.5);
}

static struct rgb node_fill(const struct flame *fl, const struct fnode *nd,
			    const struct flame_svg_opts *o)
{
	if (o->differential) {
		double a = (double)nd->w[FLAME_AFTER], b = (double)nd->w[FLAME_BEFORE];
		double mx = a > b ? a : b, t = mx > 0 ? (a - b) / mx : 0;
		int fade = clamp255(235 * (1 - (t < 0 ? -t : t)));

		if (t > 0)
			return (struct rgb){255, fade, fade};
		if (t < 0)
			return (struct rgb){fade, fade, 255};
		return (struct rgb){235, 235, 235};
	}
	if (nd->depth == 0 || nd->cat < 0 || nd->cat >= GT_CAT_MAX)
		return (struct rgb){200, 200, 200};
	{
		struct rgb c = hex_rgb(gt_cat_color[nd->cat]);
		const char *name = fl->str[nd->name];
		/* Neighbouring frames differ a little in lightness, stably by name. */
		uint64_t h = gt_hash64(name, strlen(name), 7) % 1000;
		double v = nd->depth <= 1 ? 0 : (double)h / 1000.0 * 0.36 - 0.18;

		if (nd->kind == FLAME_FRAME_THREAD)
			v = -0.12;
		if (v > 0)
			return (struct rgb){clamp255(c.r + (255 - c.r) * v),
					    clamp255(c.g + (255 - c.g) * v),
					    clamp255(c.b + (255 - c.b) * v)};
		return (struct rgb){clamp255(c.r * (1 + v)), clamp255(c.g * (1 + v)),
				    clamp255(c.b * (1 + v))};
	}
}

static const char svg_style[] =
    "<style>\n"
    "text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: 12px; fill: #000; }\n"
    ".gtf-title { font-size: 17px; font-weight: bold; }\n"
    ".gtf-sub { font-size: 12px; fill: #555; }\n"
    ".gtf-f { cursor: pointer; }\n"
    ".gtf-f text { pointer-events: none; }\n"
    ".gtf-f:hover rect { stroke: #222; stroke-width: 0.6; }\n"
    ".gtf-anc { opacity: 0.55; }\n"
    ".gtf-hit rect { fill: #e000e0; }\n"
    ".gtf-light text { fill: #fff; }\n"
    ".gtf-btn { cursor: pointer; fill: #1a5fb4; text-decoration: underline; }\n"
    ".gtf-hidden { display: none; }\n"
    "</style>\n";

/*
 * The viewer: frames carry data-x/data-w (weight units) and data-d (depth);
 * zoom rescales the zoomed frame's subtree to the full width and dims its
 * ancestors; search highlights by regex and sums the matched share without
 * counting nested matches twice.
 */
static const char svg_script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "(function () {\n"
    "  'use strict';\n"
    "  var cs = document.currentScript;\n"
    "  var svg = (cs && cs.ownerSVGElement) || document.documentElement;\n"
    "  var W = +svg.getAttribute('data-frames-w'), PAD = +svg.getAttribute('data-pad');\n"
    "  var TOTAL = +svg.getAttribute('data-total'), CW = +svg.getAttribute('data-char-w');\n"
    "  var DIFF = svg.getAttribute('data-diff') === '1';\n"
    "  var EMBED = svg.getAttribute('data-embed') === '1';\n"
    "  var q = function (sel) { return svg.querySelector(sel); };\n"
    "  var details = q('.gtf-details'), matched = q('.gtf-matched'), reset = q('.gtf-reset');\n"
    "  var input = q('.gtf-search'), hint = details.textContent, zoomed = null;\n"
    "  var frames = Array.prototype.map.call(svg.querySelectorAll('g.gtf-f'), function (g) {\n"
    "    return { g: g, r: g.querySelector('rect'), t: g.querySelector('text'),\n"
    "      name: g.querySelector('title').textContent, x: +g.getAttribute('data-x'),\n"
    "      w: +g.getAttribute('data-w'), d: +g.getAttribute('data-d'),\n"
    "      a: +(g.getAttribute('data-a') || 0), b: +(g.getAttribute('data-b') || 0) };\n"
    "  });\n"
    "  var byG = new Map(frames.map(function (f) { return [f.g, f]; }));\n"
    "  function fmt(ns) {\n"
    "    if (ns < 1e3) return Math.round(ns) + ' ns';\n"
    "    if (ns < 1e6) return (ns / 1e3).toFixed(2) + ' us';\n"
    "    if (ns < 1e9) return (ns / 1e6).toFixed(2) + ' ms';\n"
    "    return (ns / 1e9).toFixed(2) + ' s';\n"
    "  }\n"
    "  function pct(a, b) { return (b > 0 ? 100 * a / b : 0).toFixed(2) + '%'; }\n"
    "  function label(f, pw) {\n"
    "    var n = Math.floor((pw - 6) / CW);\n"
    "    if (n < 3) return '';\n"
    "    var cps = Array.from(f.name);\n"
    "    return cps.length <= n ? f.name : cps.slice(0, n - 2).join('') + '..';\n"
    "  }\n"
    "  function layout() {\n"
    "    var zx = zoomed ? zoomed.x : 0, zw = zoomed ? zoomed.w : TOTAL;\n"
    "    var zd = zoomed ? zoomed.d : 0;\n"
    "    frames.forEach(function (f) {\n"
    "      var anc = f.d < zd, vis, px, pw;\n"
    "      if (anc) { vis = f.x <= zx && f.x + f.w >= zx + zw; px = PAD; pw = W; }\n"
    "      else {\n"
    "        vis = f.x >= zx && f.x + f.w <= zx + zw;\n"
    "        px = PAD + (f.x - zx) / zw * W; pw = f.w / zw * W;\n"
    "      }\n"
    "      if (vis && pw < 0.1) vis = false;\n"
    "      f.g.classList.toggle('gtf-hidden', !vis);\n"
    "      f.g.classList.toggle('gtf-anc', vis && anc);\n"
    "      if (!vis) return;\n"
    "      f.r.setAttribute('x', px.toFixed(2));\n"
    "      f.r.setAttribute('width', pw.toFixed(2));\n"
    "      f.t.setAttribute('x', (px + 3).toFixed(2));\n"
    "      f.t.textContent = label(f, pw);\n"
    "    });\n"
    "    reset.classList.toggle('gtf-hidden', !zoomed);\n"
    "  }\n"
    "  function describe(f) {\n"
    "    var s = f.name + ' \\u2014 ';\n"
    "    if (DIFF) {\n"
    "      var c = f.a - f.b;\n"
    "      s += 'before ' + fmt(f.b) + ', after ' + fmt(f.a) + ', change ' +\n"
    "        (c >= 0 ? '+' : '-') + fmt(Math.abs(c)) +\n"
    "        (f.b > 0 ? ' (' + (c >= 0 ? '+' : '') + (100 * c / f.b).toFixed(1) + '%)' : '');\n"
    "    } else {\n"
    "      s += fmt(f.w) + ', ' + pct(f.w, TOTAL) + ' of all';\n"
    "      if (zoomed && zoomed !== f && f.d > zoomed.d) s += ', ' + pct(f.w, zoomed.w) +\n"
    "        ' of ' + zoomed.name;\n"
    "    }\n"
    "    return s;\n"
    "  }\n"
    "  function frameOf(ev) {\n"
    "    var g = ev.target.closest ? ev.target.closest('g.gtf-f') : null;\n"
    "    return g ? byG.get(g) : null;\n"
    "  }\n"
    "  svg.addEventListener('mouseover', function (ev) {\n"
    "    var f = frameOf(ev);\n"
    "    if (f) details.textContent = describe(f);\n"
    "  });\n"
    "  svg.addEventListener('mouseout', function (ev) {\n"
    "    if (frameOf(ev)) details.textContent = hint;\n"
    "  });\n"
    "  svg.addEventListener('click', function (ev) {\n"
    "    var f = frameOf(ev);\n"
    "    if (ev.target === reset || (f && f.d === 0)) { zoomed = null; layout(); return; }\n"
    "    if (f) { zoomed = f; layout(); details.textContent = describe(f); }\n"
    "  });\n"
    "  function search(term) {\n"
    "    var re = null, hits = [], sum = 0, end = -1;\n"
    "    if (term) {\n"
    "      try { re = new RegExp(term); }\n"
    "      catch (e) { re = new RegExp(term.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&')); }\n"
    "    }\n"
    "    frames.forEach(function (f) {\n"
    "      var hit = !!re && f.d > 0 && re.test(f.name);\n"
    "      f.g.classList.toggle('gtf-hit', hit);\n"
    "      if (hit) hits.push(f);\n"
    "    });\n"
    "    hits.sort(function (a, b) { return a.x - b.x || b.w - a.w; });\n"
    "    hits.forEach(function (f) {\n"
    "      if (f.x >= end) { sum += f.w; end = f.x + f.w; }\n"
    "      else if (f.x + f.w > end) { sum += f.x + f.w - end; end = f.x + f.w; }\n"
    "    });\n"
    "    matched.textContent = re ? 'Matched: ' + pct(sum, TOTAL) + ' (' + fmt(sum) + ', ' +\n"
    "      hits.length + ' frames)' : '';\n"
    "  }\n"
    "  input.addEventListener('input', function () { search(input.value); });\n"
    "  input.addEventListener('keydown', function (ev) {\n"
    "    if (ev.key === 'Escape') { input.value = ''; search(''); }\n"
    "  });\n"
    "  if (!EMBED) document.addEventListener('keydown', function (ev) {\n"
    "    if ((ev.ctrlKey || ev.metaKey) && ev.key === 'f') {\n"
    "      ev.preventDefault(); input.focus();\n"
    "    }\n"
    "  });\n"
    "  layout();\n"
    "})();\n"
    "]]></script>\n";

struct svg_ctx {
	const struct flame *fl;
	const struct flame_svg_opts *o;
	FILE *out;
	uint64_t total;
	int height;
	unsigned dropped;
};

static const struct flame *sort_fl;

static int cmp_child(const void *x, const void *y)
{
	const struct fnode *a = &sort_fl->nodes[*(const uint32_t *)x];
	const struct fnode *b = &sort_fl->nodes[*(const uint32_t *)y];

	/* Under the root, categories in report order; elsewhere alphabetical. */
	if (a->depth == 1 && a->cat != b->cat)
		return a->cat < b->cat ? -1 : 1;
	return strcmp(sort_fl->str[a->name], sort_fl->str[b->name]);
}

static void svg_node(struct svg_ctx *c, uint32_t node, uint64_t x)
{
	const struct flame *fl = c->fl;
	const struct fnode *nd = &fl->nodes[node];
	enum flame_side side = c->o->differential ? c->o->width_side : FLAME_AFTER;
	uint64_t w = nd->w[side];
	double W = c->o->width - 2 * SVG_PAD;
	double px = SVG_PAD + (double)x / (double)c->total * W;
	double pw = (double)w / (double)c->total * W;
	int y = c->height - SVG_BOTTOM - (nd->depth + 1) * SVG_FRAME_H;
	struct rgb fill = node_fill(fl, nd, c->o);
	size_t nk = 0;
	uint32_t *kids;

	if (!w)
		return;
	if (pw < c->o->min_width_px) {
		c->dropped++;
		return;
	}
	/* Dark fills (strong diff colours) get white labels. */
	fprintf(c->out, "<g class=\"gtf-f%s\" data-x=\"%llu\" data-w=\"%llu\" data-d=\"%u\"",
		0.299 * fill.r + 0.587 * fill.g + 0.114 * fill.b < 120 ? " gtf-light" : "",
		(unsigned long long)x, (unsigned long long)w, nd->depth);
	if (c->o->differential)
		fprintf(c->out, " data-a=\"%llu\" data-b=\"%llu\"",
			(unsigned long long)nd->w[FLAME_AFTER],
			(unsigned long long)nd->w[FLAME_BEFORE]);
	fputs("><title>", c->out);
	gt_xml_puts(c->out, fl->str[nd->name]);
	fprintf(c->out,
		"</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" rx=\"2\" "
		"fill=\"rgb(%d,%d,%d)\"/><text x=\"%.2f\" y=\"%d\">",
		px, y, pw, SVG_FRAME_H - 1, fill.r, fill.g, fill.b, px + 3, y + SVG_FRAME_H - 4);
	xml_label(c->out, fl->str[nd->name], pw);
	fputs("</text></g>\n", c->out);

	/* Children sorted, laid out left to right inside this frame. */
	for (uint32_t k = nd->child; k != FLAME_NONE; k = fl->nodes[k].sibling)
		nk++;
	if (!nk)
		return;
	kids = gt_xmalloc(nk * sizeof(*kids));
	nk = 0;
	for (uint32_t k = nd->child; k != FLAME_NONE; k = fl->nodes[k].sibling)
		kids[nk++] = k;
	sort_fl = fl;
	gt_sort(kids, nk, sizeof(*kids), cmp_child);
	for (size_t i = 0; i < nk; i++) {
		svg_node(c, kids[i], x);
		x += fl->nodes[kids[i]].w[side];
	}
	free(kids);
}

static unsigned max_depth(const struct flame *fl, enum flame_side side)
{
	unsigned d = 0;

	for (size_t i = 0; i < fl->nnodes; i++)
		if (fl->nodes[i].w[side] && fl->nodes[i].depth > d)
			d = fl->nodes[i].depth;
	return d;
}

int flame__write_svg(const struct flame *fl, FILE *out, const struct flame_svg_opts *opts)
{
	struct flame_svg_opts o = {};
	struct svg_ctx c = {.fl = fl, .out = out};
	enum flame_side side;
	char d1[32], d2[32], sub[FLAME_MAX_NAME + 96], clean[FLAME_MAX_NAME];
	int W;

	if (opts)
		o = *opts;
	if (!o.title)
		o.title = "gaptrace: where GPU idle time went";
	if (o.width < 200 || o.width > 20000)
		o.width = 1200;
	if (!(o.min_width_px > 0))
		o.min_width_px = 0.1;
	side = o.differential ? o.width_side : FLAME_AFTER;
	c.o = &o;
	c.total = flame__total(fl, side);
	c.height = SVG_TOP + ((int)max_depth(fl, side) + 1) * SVG_FRAME_H + SVG_BOTTOM;
	W = (int)o.width;

	if (!o.embed)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out,
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" data-frames-w=\"%d\" data-pad=\"%d\" "
		"data-total=\"%llu\" data-char-w=\"%.2f\" data-diff=\"%d\" data-embed=\"%d\">\n",
		W, c.height, W, c.height, W - 2 * SVG_PAD, SVG_PAD, (unsigned long long)c.total,
		SVG_CHAR_W, o.differential, o.embed);
	fputs("<title>", out);
	gt_xml_puts(out, o.title);
	fputs("</title>\n", out);
	fputs(svg_style, out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fbfbf8\"/>\n", W,
		c.height);
	fprintf(out, "<text class=\"gtf-title\" x=\"%d\" y=\"24\">", SVG_PAD);
	gt_xml_puts(out, o.title);
	fputs("</text>\n", out);
	/* The totals first, then the caller's subtitle, cut to the width. */
	if (o.differential)
		snprintf(sub, sizeof(sub), "total: before %s, after %s%s%.*s",
			 gt_fmt_dur(flame__total(fl, FLAME_BEFORE), d1, sizeof(d1)),
			 gt_fmt_dur(flame__total(fl, FLAME_AFTER), d2, sizeof(d2)),
			 o.subtitle ? " \xc2\xb7 " : "", FLAME_MAX_NAME,
			 o.subtitle ? o.subtitle : "");
	else
		snprintf(sub, sizeof(sub), "total: %s%s%.*s", gt_fmt_dur(c.total, d1, sizeof(d1)),
			 o.subtitle ? " \xc2\xb7 " : "", FLAME_MAX_NAME,
			 o.subtitle ? o.subtitle : "");
	flame__sanitize(sub, clean);
	fprintf(out, "<text class=\"gtf-sub\" x=\"%d\" y=\"44\">", SVG_PAD);
	xml_label(out, clean, W - 2 * SVG_PAD);
	fputs("</text>\n", out);
	fprintf(out,
		"<text class=\"gtf-btn gtf-reset gtf-hidden\" x=\"%d\" y=\"66\" "
		"text-anchor=\"end\">Reset zoom</text>\n",
		W - SVG_PAD);
	fprintf(out,
		"<foreignObject x=\"%d\" y=\"8\" width=\"270\" height=\"30\">"
		"<div xmlns=\"http://www.w3.org/1999/xhtml\">"
		"<input class=\"gtf-search\" type=\"search\" placeholder=\"Search frames (regex)\" "
		"aria-label=\"Search frames\" style=\"width:255px;font:12px sans-serif;"
		"padding:3px 5px;border:1px solid #999;border-radius:3px\"/>"
		"</div></foreignObject>\n",
		W - SVG_PAD - 270);
	/* A legend in the report's category colours (or the diff's two). */
	{
		static const char *const diff_names[] = {"grew", "shrank"};
		static const char *const diff_colors[] = {"#ff4040", "#4040ff"};
		int n = o.differential ? 2 : GT_CAT_MAX, lx = SVG_PAD;

		for (int k = 0; k < n; k++) {
			const char *name = o.differential ? diff_names[k] : gt_cat_names[k];

			fprintf(out,
				"<rect x=\"%d\" y=\"57\" width=\"10\" height=\"10\" rx=\"2\" "
				"fill=\"%s\"/>"
				"<text class=\"gtf-sub\" x=\"%d\" y=\"66\">%s</text>\n",
				lx, o.differential ? diff_colors[k] : gt_cat_color[k], lx + 14,
				name);
			lx += 14 + (int)(strlen(name) * 7.5) + 16;
		}
	}
	if (c.total)
		svg_node(&c, 0, 0);
	else
		fprintf(out,
			"<text x=\"%d\" y=\"%d\">No gap time matched: nothing to draw.</text>\n",
			SVG_PAD, SVG_TOP + 12);
	fprintf(out, "<text class=\"gtf-details\" x=\"%d\" y=\"%d\">", SVG_PAD, c.height - 12);
	if (c.dropped)
		fprintf(out,
			"Hover a frame for details, click to zoom, type to search (%u frames "
			"narrower than %.1f px left out)",
			c.dropped, o.min_width_px);
	else
		fputs("Hover a frame for details, click to zoom, type to search", out);
	fputs("</text>\n", out);
	fprintf(out, "<text class=\"gtf-matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n",
		W - SVG_PAD, c.height - 12);
	fputs(svg_script, out);
	fputs("</svg>\n", out);
	if (fflush(out) || ferror(out))
		return -1;
	return 0;
}
