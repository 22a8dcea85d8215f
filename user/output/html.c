// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * html.c: the report as one HTML file with everything inline (CSS, script,
 * data, flame graph SVG), so it can be mailed, attached or opened offline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "output/flame.h"
#include "output/html.h"
#include "support/json.h"
#include "output/present.h"
#include "analysis/timeline.h"
#include "support/util.h"

/* Text from the capture (thread names, symbols, paths) always goes out through gt_xml_puts. */

/* A bar of the categories, in the flame graph's colours. */
static void stacked_bar(FILE *f, const uint64_t *by_cat, uint64_t total)
{
	fputs("<div class=\"sbar\">", f);
	for (int c = 0; c < GT_CAT_MAX; c++) {
		char d[32];

		if (!by_cat[c] || !total)
			continue;
		fprintf(
		    f,
		    "<span style=\"width:%.3f%%;background:%s\" title=\"%s %s (%.1f%%)\"></span>",
		    present__pct(by_cat[c], total), gt_cat_color[c], gt_cat_names[c],
		    gt_fmt_dur(by_cat[c], d, sizeof(d)), present__pct(by_cat[c], total));
	}
	fputs("</div>", f);
}

static const char style[] =
    "<style>\n"
    ":root{--fg:#1d2330;--mut:#5b6474;--bg:#fff;--line:#e3e6ec;--busy:#3b4252}\n"
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:var(--fg);"
    "background:var(--bg);margin:0 auto;max-width:1400px;padding:18px 24px}\n"
    "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;"
    "border-bottom:1px solid var(--line);padding-bottom:4px}\n"
    ".mut{color:var(--mut)}.warn{color:#a4262c}\n"
    ".cards{display:flex;flex-wrap:wrap;gap:12px;margin:14px 0}\n"
    ".card{border:1px solid var(--line);border-radius:6px;padding:8px 14px;min-width:150px}\n"
    ".card b{display:block;font-size:22px}\n"
    "table{border-collapse:collapse;width:100%}td,th{padding:4px 8px;border-bottom:1px solid "
    "var(--line);text-align:left;vertical-align:top}th{font-weight:600;color:var(--mut)}\n"
    "td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    ".sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:5px;"
    "vertical-align:-1px}\n"
    ".legend span.item{margin-right:14px;white-space:nowrap}\n"
    ".sbar{display:flex;height:12px;min-width:160px;border-radius:2px;overflow:hidden;"
    "background:#f0f1f4}.sbar span{display:block;height:100%}\n"
    "#gt-timeline{width:100%;display:block;border:1px solid var(--line);border-radius:4px;"
    "cursor:crosshair}\n"
    "#gt-tip{position:fixed;pointer-events:none;background:#1d2330;color:#fff;padding:6px 9px;"
    "border-radius:4px;font-size:12px;display:none;max-width:480px;z-index:9}\n"
    "tr.hl{background:#fff4d6}code{font-size:12px}\n"
    ".flame svg{width:100%;height:auto}\n"
    "</style>\n";

/*
 * The timeline is drawn from embedded data: wheel zooms around the pointer,
 * drag pans, double-click resets, hover explains a gap, click jumps to it.
 */
static const char script[] =
    "<script>\n"
    "(function(){\n"
    "'use strict';\n"
    "var D=JSON.parse(document.getElementById('gt-data').textContent);\n"
    "var cv=document.getElementById('gt-timeline'),tip=document.getElementById('gt-tip');\n"
    "var L=76,AX=22,UH=16,RH=34,v0=0,v1=Math.max(D.span,1),drag=null,hit=[];\n"
    "function fmt(ns){var a=Math.abs(ns);if(a>=1e9)return (ns/1e9).toFixed(3)+' s';"
    "if(a>=1e6)return (ns/1e6).toFixed(2)+' ms';if(a>=1e3)return (ns/1e3).toFixed(1)+' us';"
    "return Math.round(ns)+' ns';}\n"
    "function X(t,w){return L+(t-v0)/(v1-v0)*(w-L-8);}\n"
    "function draw(){\n"
    " var dpr=window.devicePixelRatio||1,w=cv.clientWidth||800;\n"
    " var h=AX+UH+6+D.devices.length*RH+4;\n"
    " cv.style.height=h+'px';cv.width=Math.round(w*dpr);cv.height=Math.round(h*dpr);\n"
    " var c=cv.getContext('2d');c.setTransform(dpr,0,0,dpr,0,0);c.clearRect(0,0,w,h);\n"
    " c.font='11px system-ui,sans-serif';c.textBaseline='middle';hit=[];\n"
    " var step=Math.pow(10,Math.floor(Math.log10((v1-v0)/6)));\n"
    " if((v1-v0)/step>12)step*=2;if((v1-v0)/step>12)step*=2.5;\n"
    " c.strokeStyle='#e3e6ec';c.fillStyle='#5b6474';\n"
    " for(var t=Math.ceil(v0/step)*step;t<=v1;t+=step){var x=X(t,w);"
    "c.beginPath();c.moveTo(x,AX-4);c.lineTo(x,h);c.stroke();c.fillText(fmt(t),x+2,9);}\n"
    " c.fillText('units',6,AX+UH/2);\n"
    " D.units.forEach(function(u,i){var a=Math.max(X(u[0],w),L),b=Math.min(X(u[1],w),w-8);"
    "if(b<L||a>w-8)return;c.fillStyle=i%2?'#c9d3e6':'#dfe6f3';c.fillRect(a,AX,Math.max(b-a,1),UH);"
    "if(b-a>30){c.fillStyle='#3b4252';c.fillText(String(u[2]),a+3,AX+UH/2);}});\n"
    " D.devices.forEach(function(d,k){\n"
    "  var y=AX+UH+6+k*RH;c.fillStyle='#1d2330';c.fillText('GPU '+d.id,6,y+RH/2-2);\n"
    "  var a=Math.max(X(d.first,w),L),b=Math.min(X(d.last,w),w-8);\n"
    "  if(b>a){c.fillStyle='#3b4252';c.fillRect(a,y+4,b-a,RH-12);}\n"
    "  d.gaps.forEach(function(g){var ga=X(g[0],w),gb=X(g[1],w);if(gb<L||ga>w-8)return;"
    "ga=Math.max(ga,L);gb=Math.min(gb,w-8);if(gb-ga<1)gb=ga+1;c.fillStyle=D.colors[g[2]];"
    "c.fillRect(ga,y+2,gb-ga,RH-8);hit.push([ga,gb,y,y+RH,g]);});\n"
    " });\n"
    "}\n"
    "function at(e){var r=cv.getBoundingClientRect(),x=e.clientX-r.left,y=e.clientY-r.top;"
    "for(var i=0;i<hit.length;i++){var q=hit[i];if(x>=q[0]-1&&x<=q[1]+1&&y>=q[2]&&y<=q[3])"
    "return q[4];}return null;}\n"
    "cv.addEventListener('mousemove',function(e){\n"
    " if(drag){var w=cv.clientWidth,d=(e.clientX-drag.x)/(w-L-8)*(drag.v1-drag.v0);"
    "v0=drag.v0-d;v1=drag.v1-d;draw();return;}\n"
    " var g=at(e);if(!g){tip.style.display='none';return;}\n"
    " tip.textContent='gap '+g[3]+' (GPU '+g[4]+', '+fmt(g[1]-g[0])+'): '+g[5];\n"
    " tip.style.display='block';tip.style.left=(e.clientX+12)+'px';"
    "tip.style.top=(e.clientY+12)+'px';});\n"
    "cv.addEventListener('mouseleave',function(){tip.style.display='none';drag=null;});\n"
    "cv.addEventListener('mousedown',function(e){drag={x:e.clientX,v0:v0,v1:v1};});\n"
    "window.addEventListener('mouseup',function(){drag=null;});\n"
    "cv.addEventListener('click',function(e){var g=at(e);if(!g)return;"
    "var row=document.getElementById('gap-'+g[3]);if(!row)return;"
    "document.querySelectorAll('tr.hl').forEach(function(r){r.classList.remove('hl');});"
    "row.classList.add('hl');row.scrollIntoView({block:'center'});});\n"
    "cv.addEventListener('wheel',function(e){e.preventDefault();var r=cv.getBoundingClientRect(),"
    "w=cv.clientWidth,f=Math.min(Math.max((e.clientX-r.left-L)/(w-L-8),0),1),"
    "t=v0+f*(v1-v0),z=e.deltaY>0?1.25:0.8,n=Math.max((v1-v0)*z,1000);"
    "v0=t-f*n;v1=v0+n;draw();},{passive:false});\n"
    "cv.addEventListener('dblclick',function(){v0=0;v1=Math.max(D.span,1);draw();});\n"
    "window.addEventListener('resize',draw);\n"
    "draw();\n"
    "})();\n"
    "</script>\n";

/* JSON inside <script>: '<' as \u003c so no string can close the element. */
static void put_script_json(FILE *f, const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '<')
			fputs("\\u003c", f);
		else
			fputc(buf[i], f);
	}
}

static void timeline_data(FILE *f, const struct an_result *r)
{
	struct timeline *tl = timeline__new(r);
	uint64_t t0 = r->start_ns, t1 = r->end_ns;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct json j;

	/* The drawing starts at the first thing to draw: ops may predate the header. */
	for (size_t i = 0; i < r->ndevices; i++) {
		t0 = GT_MIN(t0, r->devices[i].first_ns);
		t1 = GT_MAX(t1, r->devices[i].last_ns);
	}
	json_init(&j, m, false);
	json_obj_begin(&j);
	json_ku64(&j, "span", t1 - t0);
	json_key(&j, "colors");
	json_arr_begin(&j);
	for (int c = 0; c < GT_CAT_MAX; c++)
		json_str(&j, gt_cat_color[c]);
	json_arr_end(&j);
	json_key(&j, "units");
	json_arr_begin(&j);
	for (size_t i = 0; i < tl->nunits; i++) {
		json_arr_begin(&j);
		json_u64(&j, tl->units[i].begin > t0 ? tl->units[i].begin - t0 : 0);
		json_u64(&j, tl->units[i].end > t0 ? tl->units[i].end - t0 : 0);
		json_u64(&j, tl->units[i].id);
		json_arr_end(&j);
	}
	json_arr_end(&j);
	json_key(&j, "devices");
	json_arr_begin(&j);
	for (size_t d = 0; d < r->ndevices; d++) {
		json_obj_begin(&j);
		json_ku64(&j, "id", r->devices[d].id);
		json_ku64(&j, "first", r->devices[d].first_ns - t0);
		json_ku64(&j, "last", r->devices[d].last_ns - t0);
		json_key(&j, "gaps");
		json_arr_begin(&j);
		for (size_t i = 0; i < r->ngaps; i++) {
			const struct an_gap *g = &r->gaps[i];
			char b[512];

			if (g->device != r->devices[d].id)
				continue;
			present__breakdown(g->by_cat, g->duration_ns, b, sizeof(b), GT_CAT_MAX, 1);
			json_arr_begin(&j);
			json_u64(&j, g->start_ns - t0);
			json_u64(&j, g->end_ns - t0);
			json_u64(&j, (uint64_t)present__dominant(g->by_cat));
			json_u64(&j, g->index);
			json_u64(&j, g->device);
			json_str(&j, b);
			json_arr_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	fclose(m);
	fputs("<script type=\"application/json\" id=\"gt-data\">", f);
	put_script_json(f, buf, len);
	fputs("</script>\n", f);
	free(buf);
	timeline__free(tl);
}

static void summary(FILE *f, const struct an_result *r)
{
	uint64_t busy, span, lost = r->lost_ringbuf + r->lost_map_full;
	char d1[32], d2[32];
	int top = present__dominant(r->totals);

	present__gpu_busy(r, &busy, &span);
	fputs("<h1>gaptrace: why the GPU sat idle — ", f);
	gt_xml_puts(f, r->comm);
	fprintf(f, " (pid %u)</h1>\n<div class=\"mut\">capture <code>", r->pid);
	gt_xml_puts(f, r->path);
	fprintf(f, "</code>, %s recorded, %llu records, GPU source ",
		gt_fmt_dur(r->duration_ns, d1, sizeof(d1)), (unsigned long long)r->records);
	gt_xml_puts(f, r->gpu_source);
	fputs(", units: ", f);
	gt_xml_puts(f, r->unit_source ? r->unit_source : "none");
	fprintf(f, " (%llu); gaps are idle time &ge; %s</div>\n", (unsigned long long)r->units,
		gt_fmt_dur(r->opts.min_gap_ns, d2, sizeof(d2)));
	if (lost)
		fprintf(f,
			"<p class=\"warn\">%llu events were lost: time near them shows as "
			"unknown.</p>\n",
			(unsigned long long)lost);
	for (size_t i = 0; i < r->nwarnings; i++) {
		fputs("<p class=\"warn\">warning: ", f);
		gt_xml_puts(f, r->warnings[i]);
		fputs("</p>\n", f);
	}
	fputs("<div class=\"cards\">\n", f);
	fprintf(f,
		"<div class=\"card\"><span class=\"mut\">GPU efficiency</span><b>%.1f %%</b>"
		"<span class=\"mut\">busy %s of %s</span></div>\n",
		present__pct(busy, span), gt_fmt_dur(busy, d1, sizeof(d1)),
		gt_fmt_dur(span, d2, sizeof(d2)));
	fprintf(f,
		"<div class=\"card\"><span class=\"mut\">idle gaps</span><b>%zu</b>"
		"<span class=\"mut\">%s in total</span></div>\n",
		r->ngaps, gt_fmt_dur(r->gap_ns_total, d1, sizeof(d1)));
	if (r->gap_ns_total)
		fprintf(f,
			"<div class=\"card\"><span class=\"mut\">largest cause</span><b>"
			"<span class=\"sw\" style=\"background:%s\"></span>%s</b>"
			"<span class=\"mut\">%s, %.1f %% of gap time</span></div>\n",
			gt_cat_color[top], gt_cat_names[top],
			gt_fmt_dur(r->totals[top], d1, sizeof(d1)),
			present__pct(r->totals[top], r->gap_ns_total));
	fprintf(f,
		"<div class=\"card\"><span class=\"mut\">inter-unit gaps</span><b>%llu</b>"
		"<span class=\"mut\">intra-unit %llu, unscoped %llu</span></div>\n",
		(unsigned long long)r->gaps_kind[GT_GAP_INTER],
		(unsigned long long)r->gaps_kind[GT_GAP_INTRA],
		(unsigned long long)r->gaps_kind[GT_GAP_UNSCOPED]);
	fputs("</div>\n", f);
}

static void legend(FILE *f)
{
	fputs("<div class=\"legend mut\">", f);
	for (int c = 0; c < GT_CAT_MAX; c++)
		fprintf(f,
			"<span class=\"item\"><span class=\"sw\" style=\"background:%s\"></span>%s"
			"</span>",
			gt_cat_color[c], gt_cat_names[c]);
	fputs("<span class=\"item\"><span class=\"sw\" style=\"background:#3b4252\"></span>GPU busy"
	      "</span></div>\n",
	      f);
}

static void category_table(FILE *f, const struct an_result *r)
{
	char d1[32], d2[32], d3[32];

	fputs("<h2>Where the gap time went</h2>\n<table><tr><th>category</th><th>total</th>"
	      "<th>share</th><th>inter-unit</th><th>intra-unit</th><th style=\"width:40%\"></th>"
	      "</tr>\n",
	      f);
	for (int c = 0; c < GT_CAT_MAX; c++)
		fprintf(f,
			"<tr><td><span class=\"sw\" style=\"background:%s\"></span>%s</td>"
			"<td class=\"n\">%s</td><td class=\"n\">%.1f %%</td><td class=\"n\">%s</td>"
			"<td class=\"n\">%s</td><td><div class=\"sbar\"><span style=\"width:%.3f%%;"
			"background:%s\"></span></div></td></tr>\n",
			gt_cat_color[c], gt_cat_names[c], gt_fmt_dur(r->totals[c], d1, sizeof(d1)),
			present__pct(r->totals[c], r->gap_ns_total),
			gt_fmt_dur(r->totals_kind[GT_GAP_INTER][c], d2, sizeof(d2)),
			gt_fmt_dur(r->totals_kind[GT_GAP_INTRA][c], d3, sizeof(d3)),
			present__pct(r->totals[c], r->gap_ns_total), gt_cat_color[c]);
	fputs("</table>\n", f);
}

static void chain_cell(FILE *f, const struct an_result *r, const struct an_gap *g)
{
	bool any = false;
	char u[128];

	/* A waker gaptrace could not follow, named as the text report names it. */
	if (g->nchain && present__untraced(g, &g->chain[0], u, sizeof(u))) {
		gt_xml_puts(f, u);
		any = true;
	}
	for (size_t h = 1; h < g->nchain; h++) {
		const struct an_hop *hp = &g->chain[h];
		char b[256], d[32];

		/* Hops that explain at least a tenth of the gap, like the text report. */
		if ((hp->to_ns - hp->from_ns) * 10 < g->duration_ns)
			continue;
		present__breakdown(hp->by_cat, hp->to_ns - hp->from_ns, b, sizeof(b), GT_CAT_MAX,
				   1);
		fputs(any ? "<br>" : "", f);
		fprintf(f, "waited %s for ", gt_fmt_dur(hp->to_ns - hp->from_ns, d, sizeof(d)));
		gt_xml_puts(f, an_result__thread_name(r, hp->tid));
		fprintf(f, ":%u: ", hp->tid);
		gt_xml_puts(f, b);
		if (present__untraced(g, hp, u, sizeof(u))) {
			fputs("; ", f);
			gt_xml_puts(f, u);
		}
		any = true;
	}
	for (size_t h = 0; h < g->nholders && h < 3; h++) {
		char d[32];

		if (g->holders[h].wait_ns * 10 < g->by_cat[GT_CAT_LOCK])
			continue;
		fputs(any ? "<br>" : "", f);
		fputs("lock held by ", f);
		gt_xml_puts(f, an_result__thread_name(r, g->holders[h].tid));
		fprintf(f, ":%u (%s)", g->holders[h].tid,
			gt_fmt_dur(g->holders[h].wait_ns, d, sizeof(d)));
		any = true;
	}
}

static void gaps_table(FILE *f, const struct an_result *r, unsigned top)
{
	const struct an_gap **sorted;
	size_t n = GT_MIN((size_t)top, r->ngaps);

	fprintf(f, "<h2>Largest gaps (%zu of %zu)</h2>\n", n, r->ngaps);
	if (!r->ngaps) {
		fputs("<p>No gaps.</p>\n", f);
		return;
	}
	sorted = gt_xmalloc(sizeof(*sorted) * r->ngaps);
	for (size_t i = 0; i < r->ngaps; i++)
		sorted[i] = &r->gaps[i];
	gt_sort(sorted, r->ngaps, sizeof(*sorted), present__cmp_gap_len);
	fputs(
	    "<table><tr><th>gap</th><th>GPU</th><th>at</th><th>length</th><th>kind</th>"
	    "<th>critical thread</th><th>breakdown</th><th>critical path, lock holders</th></tr>\n",
	    f);
	for (size_t i = 0; i < n; i++) {
		const struct an_gap *g = sorted[i];
		char d[32], b[512];

		present__breakdown(g->by_cat, g->duration_ns, b, sizeof(b), GT_CAT_MAX, 1);
		fprintf(f,
			"<tr id=\"gap-%u\"><td class=\"n\">%u</td><td class=\"n\">%u</td>"
			"<td class=\"n\">%.3f s</td><td class=\"n\">%s</td><td>%s%s</td><td>",
			g->index, g->index, g->device, (double)(g->start_ns - r->start_ns) / 1e9,
			gt_fmt_dur(g->duration_ns, d, sizeof(d)), gt_gap_kind_names[g->kind],
			g->lossy ? " <span class=\"warn\">(lost events)</span>" : "");
		if (g->tid) {
			gt_xml_puts(f, an_result__thread_name(r, g->tid));
			fprintf(f, ":%u", g->tid);
		} else {
			fputs("<span class=\"mut\">no launch record</span>", f);
		}
		fputs("</td><td>", f);
		stacked_bar(f, g->by_cat, g->duration_ns);
		gt_xml_puts(f, b);
		fputs("</td><td>", f);
		chain_cell(f, r, g);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	free(sorted);
}

static void flame_section(FILE *f, const struct an_result *r, struct capture *cap)
{
	struct flame_filter flt;
	struct flame *fl;
	struct flame_svg_opts so = {.embed = true};

	fputs("<h2>Flame graph of the gap time</h2>\n", f);
	flame_filter__init(&flt);
	flt.cap = cap;
	fl = flame__from_result(r, &flt);
	if (!fl || !flame__total(fl, FLAME_AFTER)) {
		fputs("<p class=\"mut\">No attributed gap time to draw.</p>\n", f);
		flame__free(fl);
		return;
	}
	fputs("<p class=\"mut\">Every gap's time by category, thread and stack: hover a frame for "
	      "its time, click to zoom, search with the box.</p>\n<div class=\"flame\">\n",
	      f);
	flame__write_svg(fl, f, &so);
	fputs("</div>\n", f);
	flame__free(fl);
}

int html__report(FILE *f, const struct an_result *r, unsigned top, struct capture *cap)
{
	char d[32];

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>gaptrace report: ",
	      f);
	gt_xml_puts(f, r->comm);
	fputs("</title>\n", f);
	fputs(style, f);
	fputs("</head>\n<body>\n", f);
	summary(f, r);

	fputs("<h2>GPU timeline</h2>\n", f);
	if (!r->ndevices) {
		fputs(
		    "<p>No GPU activity was recorded, so there are no gaps to explain. Check that "
		    "the program fires the gaptrace USDT probes or runs under the CUPTI library "
		    "(<code>gaptrace info</code>).</p>\n",
		    f);
	} else {
		fprintf(f,
			"<p class=\"mut\">Each gap is coloured by its largest cause; idle time "
			"shorter than %s is drawn as busy. Wheel to zoom, drag to pan, "
			"double-click to reset, click a gap to find it below.</p>\n",
			gt_fmt_dur(r->opts.min_gap_ns, d, sizeof(d)));
		legend(f);
		fputs("<canvas id=\"gt-timeline\" height=\"120\"></canvas>\n<div "
		      "id=\"gt-tip\"></div>\n",
		      f);
		timeline_data(f, r);
		fputs(script, f);
	}
	category_table(f, r);
	gaps_table(f, r, top);
	flame_section(f, r, cap);
	fprintf(f,
		"<p class=\"mut\">gaptrace %s — all times CLOCK_MONOTONIC; categories sum to "
		"each gap's length.</p>\n</body>\n</html>\n",
		GT_VERSION);
	return ferror(f) ? -1 : 0;
}
