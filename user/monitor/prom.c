// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * prom.c: the monitor's metrics: each window's gaps, categories and busy
 * time added to counters, and the Prometheus text exposition of them.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor/prom.h"
#include "support/util.h"

const double prom_bounds[PROM_BUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
					  0.25,	 0.5,	 1,	2.5,  5,     10,   30};

const char *const prom_cov_names[PROM_COV_MAX] = {"full", "partial", "none"};

/* A device's slot: its own while there is room, then the shared "other". */
static struct prom_dev *dev_slot(struct prom *p, uint32_t id)
{
	for (int i = 0; i < PROM_DEVICES; i++) {
		if (p->dev[i].used && p->dev[i].id == id)
			return &p->dev[i];
		if (!p->dev[i].used) {
			p->dev[i].used = true;
			p->dev[i].id = id;
			p->dev[i].efficiency = -1;
			return &p->dev[i];
		}
	}
	p->dev[PROM_DEVICES].used = true;
	p->dev[PROM_DEVICES].efficiency = -1;
	return &p->dev[PROM_DEVICES];
}

/* The label value of a GPU source: its first word, [a-z0-9_-] only ("usdt", "cupti"). */
static void source_label(char *out, size_t len, const char *src)
{
	size_t n = 0;

	for (; src && *src && n + 1 < len; src++) {
		unsigned char c = (unsigned char)*src;

		if (!(isalnum(c) || c == '_' || c == '-'))
			break;
		out[n++] = (char)tolower(c);
	}
	out[n] = '\0';
	if (!n)
		snprintf(out, len, "unknown");
}

void prom__new_target(struct prom *p)
{
	for (int i = 0; i <= PROM_DEVICES; i++)
		p->dev[i].last_end_ns = 0;
}

void prom__add_window(struct prom *p, const struct an_result *res, enum prom_cov cov,
		      double covered_s)
{
	p->windows++;
	p->gpu_windows[cov]++;
	p->coverage = cov;
	if (cov == PROM_COV_NONE) {
		/*
		 * Nothing seen is not idle: no gap, no busy time, and the idle
		 * before the next covered window's first work is no boundary idle.
		 */
		snprintf(p->gpu_source, sizeof(p->gpu_source), "none");
		prom__new_target(p);
		return;
	}
	p->covered_s += covered_s;
	for (int i = 0; i <= PROM_DEVICES; i++)
		p->dev[i].efficiency = -1;
	for (size_t i = 0; i < res->ndevices; i++) {
		const struct an_device *d = &res->devices[i];
		struct prom_dev *pd = dev_slot(p, d->id);

		pd->busy_s += (double)d->busy_ns / 1e9;
		pd->efficiency = d->span_ns ? (double)d->busy_ns / (double)d->span_ns : 0;
		/* Idle from the last window's GPU work to this one's: a gap no window holds. */
		if (d->ops && pd->last_end_ns && d->first_ns > pd->last_end_ns)
			pd->boundary_s += (double)(d->first_ns - pd->last_end_ns) / 1e9;
		if (d->ops)
			pd->last_end_ns = d->last_ns;
	}
	for (size_t i = 0; i < res->ngaps; i++) {
		const struct an_gap *g = &res->gaps[i];
		struct prom_dev *pd = dev_slot(p, g->device);
		double len = (double)g->duration_ns / 1e9;
		unsigned k = g->kind <= GT_GAP_UNSCOPED ? g->kind : GT_GAP_UNSCOPED;
		int b = 0;

		for (int c = 0; c < GT_CAT_MAX; c++)
			pd->gap_s[k][c] += (double)g->by_cat[c] / 1e9;
		pd->gaps[k]++;
		while (b < PROM_BUCKETS && len > prom_bounds[b])
			b++;
		if (b < PROM_BUCKETS)
			pd->bucket[b]++;
		pd->gap_sum_s += len;
		pd->gap_count++;
	}
	source_label(p->gpu_source, sizeof(p->gpu_source), res->gpu_source);
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The device label's value. */
static const char *dev_label(const struct prom *p, const struct prom_dev *d, char *buf, size_t len)
{
	if (d == &p->dev[PROM_DEVICES])
		return "other";
	snprintf(buf, len, "%u", d->id);
	return buf;
}

#define FOR_DEV(p, d, lbl)                                                           \
	for (const struct prom_dev *d = (p)->dev; d <= &(p)->dev[PROM_DEVICES]; d++) \
		if (d->used && (lbl = dev_label(p, d, lbuf, sizeof(lbuf))))

static void render_devices(FILE *f, const struct prom *p)
{
	char lbuf[16];
	const char *l;

	head(f, "gaptrace_gpu_busy_seconds_total", "counter",
	     "GPU busy time (union of kernels, copies and sets) in finished windows");
	FOR_DEV(p, d, l)
	fprintf(f, "gaptrace_gpu_busy_seconds_total{device=\"%s\"} %.9f\n", l, d->busy_s);
	head(f, "gaptrace_gap_seconds_total", "counter",
	     "GPU idle gap time by the cause that explains it, in finished windows");
	FOR_DEV(p, d, l)
	for (int k = 0; k < 3; k++)
		for (int c = 0; c < GT_CAT_MAX; c++)
			fprintf(f,
				"gaptrace_gap_seconds_total{device=\"%s\",category=\"%s\","
				"kind=\"%s\"} %.9f\n",
				l, gt_cat_names[c], gt_gap_kind_names[k], d->gap_s[k][c]);
	head(f, "gaptrace_gaps_total", "counter", "GPU idle gaps found in finished windows");
	FOR_DEV(p, d, l)
	for (int k = 0; k < 3; k++)
		fprintf(f, "gaptrace_gaps_total{device=\"%s\",kind=\"%s\"} %llu\n", l,
			gt_gap_kind_names[k], (unsigned long long)d->gaps[k]);
	head(f, "gaptrace_gap_length_seconds", "histogram", "Length of each GPU idle gap");
	FOR_DEV(p, d, l)
	{
		uint64_t cum = 0;

		for (int b = 0; b < PROM_BUCKETS; b++) {
			cum += d->bucket[b];
			fprintf(
			    f, "gaptrace_gap_length_seconds_bucket{device=\"%s\",le=\"%g\"} %llu\n",
			    l, prom_bounds[b], (unsigned long long)cum);
		}
		fprintf(f, "gaptrace_gap_length_seconds_bucket{device=\"%s\",le=\"+Inf\"} %llu\n",
			l, (unsigned long long)d->gap_count);
		fprintf(f, "gaptrace_gap_length_seconds_sum{device=\"%s\"} %.9f\n", l,
			d->gap_sum_s);
		fprintf(f, "gaptrace_gap_length_seconds_count{device=\"%s\"} %llu\n", l,
			(unsigned long long)d->gap_count);
	}
	head(f, "gaptrace_window_efficiency_ratio", "gauge",
	     "GPU busy / span of the last window with GPU collection on (absent: no GPU work "
	     "in it)");
	FOR_DEV(p, d, l)
	if (d->efficiency >= 0)
		fprintf(f, "gaptrace_window_efficiency_ratio{device=\"%s\"} %.6f\n", l,
			d->efficiency);
	head(f, "gaptrace_boundary_idle_seconds_total", "counter",
	     "GPU idle time across a window boundary (last work of one window to the first of "
	     "a later one): counted in no window's gaps");
	FOR_DEV(p, d, l)
	fprintf(f, "gaptrace_boundary_idle_seconds_total{device=\"%s\"} %.9f\n", l, d->boundary_s);
}

char *prom__render(const struct prom *p, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	render_devices(f, p);
	head(f, "gaptrace_windows_total", "counter", "Analysis windows finished");
	fprintf(f, "gaptrace_windows_total %llu\n", (unsigned long long)p->windows);
	head(f, "gaptrace_window_end_timestamp_seconds", "gauge",
	     "UNIX time the last finished window ended");
	fprintf(f, "gaptrace_window_end_timestamp_seconds %.3f\n", p->window_end_s);
	head(f, "gaptrace_window_analysis_seconds", "gauge",
	     "Time the monitor took to analyse the last window's segment");
	fprintf(f, "gaptrace_window_analysis_seconds %.6f\n", p->analysis_s);
	head(f, "gaptrace_window_gpu_source_info", "gauge",
	     "The GPU activity source of the last window (usdt, cupti, uprobe; none: GPU "
	     "collection off) and how much of it the source covered (full, partial, none)");
	if (p->gpu_source[0])
		fprintf(f, "gaptrace_window_gpu_source_info{source=\"%s\",coverage=\"%s\"} 1\n",
			p->gpu_source, prom_cov_names[p->coverage]);
	head(f, "gaptrace_gpu_windows_total", "counter",
	     "Windows finished, by how much of each GPU collection covered (--gpu-duty)");
	for (int c = 0; c < PROM_COV_MAX; c++)
		fprintf(f, "gaptrace_gpu_windows_total{coverage=\"%s\"} %llu\n", prom_cov_names[c],
			(unsigned long long)p->gpu_windows[c]);
	head(f, "gaptrace_gpu_covered_seconds_total", "counter",
	     "Window time with GPU collection on: the busy and gap counters cover only this");
	fprintf(f, "gaptrace_gpu_covered_seconds_total %.3f\n", p->covered_s);
	head(f, "gaptrace_gpu_duty_ratio", "gauge",
	     "Share of windows with GPU collection on, as configured (--gpu-duty; 1: always)");
	fprintf(f, "gaptrace_gpu_duty_ratio %.6f\n", p->duty);
	head(f, "gaptrace_lost_events_total", "counter",
	     "Events lost before reaching the monitor (ring buffer full, stacks, maps)");
	fprintf(f, "gaptrace_lost_events_total %llu\n", (unsigned long long)p->lost);
	head(f, "gaptrace_target_restarts_total", "counter",
	     "Times the matched target was attached again after it exited");
	fprintf(f, "gaptrace_target_restarts_total %llu\n", (unsigned long long)p->restarts);
	head(f, "gaptrace_target_attached", "gauge", "1 while a target process is traced");
	fprintf(f, "gaptrace_target_attached %d\n", p->attached);
	head(f, "gaptrace_monitor_cpu_seconds_total", "counter",
	     "CPU time (user + system) the monitor itself used");
	fprintf(f, "gaptrace_monitor_cpu_seconds_total %.3f\n", p->cpu_s);
	head(f, "gaptrace_monitor_resident_memory_bytes", "gauge", "The monitor's resident memory");
	fprintf(f, "gaptrace_monitor_resident_memory_bytes %llu\n", (unsigned long long)p->rss);
	head(f, "gaptrace_ringbuf_bytes_total", "counter", "Bytes read from the BPF ring buffer");
	fprintf(f, "gaptrace_ringbuf_bytes_total %llu\n", (unsigned long long)p->rb_bytes);
	head(f, "gaptrace_flight_bytes", "gauge", "Disk used by the kept segments and snapshots");
	fprintf(f, "gaptrace_flight_bytes %llu\n", (unsigned long long)p->disk_bytes);
	head(f, "gaptrace_flight_segments", "gauge", "Segments kept by the flight recorder");
	fprintf(f, "gaptrace_flight_segments %llu\n", (unsigned long long)p->segments);
	head(f, "gaptrace_snapshots_total", "counter",
	     "Snapshots taken (SIGUSR1 or low efficiency)");
	fprintf(f, "gaptrace_snapshots_total %llu\n", (unsigned long long)p->snapshots);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
