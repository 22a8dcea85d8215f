// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * analysis.c: the pipeline from a capture to explained gaps (pass 1 ->
 * gaps__find -> pass 2, explaining each gap once its records are read, then
 * the result's warnings),
 * the result's lookups (through the model it keeps) and its release.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/attrib.h"
#include "analysis/gaps.h"
#include "analysis/model.h"
#include "capture/capture.h"
#include "support/util.h"

static void fill_threads(struct model *m, struct an_result *r)
{
	r->threads = gt_xcalloc(m->nthreads ? m->nthreads : 1, sizeof(*r->threads));
	for (size_t i = 0; i < m->nthreads; i++) {
		r->threads[i].pid = m->threads[i].pid;
		r->threads[i].tid = m->threads[i].tid;
		memcpy(r->threads[i].comm, m->threads[i].comm, sizeof(r->threads[i].comm));
	}
	r->nthreads = m->nthreads;
}

int an_result__stack(const struct an_result *r, int32_t stack_id,
		     void (*cb)(const char *name, const char *module, uint64_t ip, bool inlined,
				void *ctx),
		     void *ctx)
{
	const struct model *m = r->model;
	const struct m_stack *st = m ? model__stack(m, stack_id) : NULL;
	int n = 0;

	if (!st)
		return 0;
	for (uint16_t i = 0; i < st->nr; i++) {
		const struct m_sym *s = model__sym(m, st->pid, st->ips[i]);
		const struct m_inline *in =
		    st->kernel ? NULL : model__inline(m, st->pid, st->ips[i], i > 0);

		/* The calls inlined there come first: they are nearer the leaf. */
		for (uint8_t k = 0; in && k < in->n; k++, n++)
			cb(in->names[k], s ? s->module : NULL, st->ips[i], true, ctx);
		cb(s ? s->name : NULL, s ? s->module : NULL, st->ips[i], false, ctx);
		n++;
	}
	return n;
}

const char *an_result__probe_name(const struct an_result *r, uint32_t func_id)
{
	const struct m_probe *p = r->model ? model__probe(r->model, func_id) : NULL;

	return p ? p->name : NULL;
}

const char *an_result__thread_name(const struct an_result *r, uint32_t tid)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].tid == tid)
			return r->threads[i].comm[0] ? r->threads[i].comm : "?";
	return "?";
}

/* Explaining gaps while pass 2 reads: the gaps in time order, the next to explain. */
struct stream {
	size_t *order;
	size_t next;
	size_t pieces_cap;
};

static int cmp_gap_start(const void *a, const void *b, void *gaps)
{
	const struct an_gap *g = gaps;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	if (g[i].start_ns != g[j].start_ns)
		return g[i].start_ns < g[j].start_ns ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The merged window that holds time t (a gap's start), or NULL. */
static const struct m_window *window_at(const struct model *m, uint64_t t)
{
	size_t i = model__window_after(m, t);

	return i < m->nwindows && m->windows[i].from <= t ? &m->windows[i] : NULL;
}

/*
 * Pass 2 has every record of the windows that end before horizon: explain
 * their gaps, then drop what no later window needs.  Records ending a
 * sample period and SAMPLE_REACH before the next window are still read by
 * its attribution (a sample's uprobe call, the thread's last sample).
 */
static void explain_ready(struct model *m, struct an_result *r, uint64_t horizon, void *ctx)
{
	struct stream *st = ctx;
	const struct m_window *w;
	uint64_t keep;

	while (st->next < r->ngaps) {
		size_t i = st->order[st->next];

		w = window_at(m, r->gaps[i].start_ns);
		/* Every gap lies in a window; were one not, it waits for the end. */
		if (horizon != UINT64_MAX && (!w || w->to >= horizon))
			break;
		attrib__explain(m, r, i, &st->pieces_cap);
		st->next++;
	}
	if (st->next >= r->ngaps)
		return;
	w = window_at(m, r->gaps[st->order[st->next]].start_ns);
	keep = m->sample_period + M_SAMPLE_REACH_NS;
	if (w && w->from > keep && keep >= m->sample_period)
		model__drop_before(m, w->from - keep);
}

static void stream_explain(struct capture *c, struct model *m, struct an_result *r)
{
	struct stream st = {.order = gt_xmalloc((r->ngaps ? r->ngaps : 1) * sizeof(size_t))};

	for (size_t i = 0; i < r->ngaps; i++)
		st.order[i] = i;
	qsort_r(st.order, r->ngaps, sizeof(*st.order), cmp_gap_start, r->gaps);
	model__pass2(c, m, r, explain_ready, &st);
	explain_ready(m, r, UINT64_MAX, &st);
	attrib__finish(r);
	free(st.order);
}

int analysis__run(struct capture *c, const struct an_opts *o, struct an_result **out, char *err,
		  size_t errlen)
{
	struct an_result *r = gt_xcalloc(1, sizeof(*r));
	struct model *m = gt_xcalloc(1, sizeof(*m));
	const char *v;

	m->opts = *o;
	r->opts = *o;
	/* Owned by r from here: counters read in pass 1 land in the model too. */
	r->model = m;
	r->path = gt_xstrdup(capture__path(c));
	v = capture__header_key(c, CK_COMM);
	r->comm = gt_xstrdup(v ? v : "?");
	v = capture__header_key(c, CK_PID);
	r->pid = v ? (uint32_t)strtoul(v, NULL, 10) : 0;
	v = capture__header_key(c, CK_START_MONO_NS);
	r->start_ns = v ? strtoull(v, NULL, 10) : 0;
	v = capture__header_key(c, CK_SAMPLE_PERIOD_NS);
	r->sample_period_ns = v ? strtoull(v, NULL, 10) : 0;
	m->sample_period = r->sample_period_ns ? r->sample_period_ns : NSEC_PER_MSEC;
	v = capture__header_key(c, CK_GPU_SOURCE);
	/* A copy: the result outlives the capture it came from. */
	r->gpu_source = gt_xstrdup(v ? v : "usdt");

	if (model__pass1(c, m, r)) {
		snprintf(err, errlen, "cannot analyse %s", capture__path(c));
		an_result__free(r);
		return -1;
	}
	r->duration_ns = r->end_ns - r->start_ns;
	gaps__find(m, r);
	stream_explain(c, m, r);
	fill_threads(m, r);
	for (size_t i = 0; i < capture__nwarnings(c); i++)
		model__add_warning(r, capture__warning(c, i));
	r->truncated = capture__truncated(c);
	if (!r->clean_end && !r->truncated)
		model__add_warning(
		    r, "the capture has no END block: the recorder was stopped abruptly; "
		       "the data up to its last flush is used");
	/* Read by `gaptrace info` too: it must not send the reader to itself. */
	if (!m->nops) {
		char msg[512];

		snprintf(msg, sizeof(msg),
			 "no GPU activity in this capture (GPU source: %.200s): did the program "
			 "use CUDA, with the CUPTI library or its own gaptrace USDT probes "
			 "attached? 'gaptrace doctor' checks this host's GPU side",
			 r->gpu_source);
		model__add_warning(r, msg);
	}
	if (r->gpu_rejected || r->gpu_clipped) {
		char msg[384];

		snprintf(msg, sizeof(msg),
			 "%llu GPU records rejected as impossible (ending before they start, "
			 "starting long before the capture, lasting longer than it, or claiming "
			 "an impossible drop count) and %llu GPU operations clipped to the "
			 "capture window: the GPU producer sent bad timestamps",
			 (unsigned long long)r->gpu_rejected, (unsigned long long)r->gpu_clipped);
		model__add_warning(r, msg);
	}
	if (r->lost_producer || r->lost_gpu) {
		char msg[256];

		snprintf(msg, sizeof(msg),
			 "%llu GPU activity records dropped by CUPTI and %llu lost on the way to "
			 "gaptrace: GPU busy time is missing there, so gaps near them may be too "
			 "long",
			 (unsigned long long)r->lost_producer, (unsigned long long)r->lost_gpu);
		model__add_warning(r, msg);
	}
	if (m->host_view && m->host_view_from) {
		char msg[256], d[32];

		snprintf(
		    msg, sizeof(msg),
		    "GPU records stop %s into the capture (the CUPTI library stepped aside): "
		    "after that GPU busy time is the host-side view (from a launch call to the "
		    "next synchronize return)",
		    gt_fmt_dur(m->host_view_from > r->start_ns ? m->host_view_from - r->start_ns
							       : 0,
			       d, sizeof(d)));
		model__add_warning(r, msg);
	} else if (m->host_view) {
		model__add_warning(
		    r, "no GPU records: GPU busy time is the host-side view (from a "
		       "launch call to the next synchronize return); gaps are host time");
	}
	*out = r;
	return 0;
}

void an_result__free(struct an_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ngaps; i++) {
		free(r->gaps[i].chain);
		free(r->gaps[i].holders);
	}
	free(r->gaps);
	free(r->pieces);
	free(r->devices);
	free(r->threads);
	for (size_t i = 0; i < r->nwarnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	free(r->path);
	free(r->comm);
	free((char *)r->gpu_source);
	model__free(r->model);
	free(r);
}
