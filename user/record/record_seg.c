// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record_seg.c: the recorder of `gaptrace record -p` driven by the monitor
 * (record.h): the same start, run loop and stop, plus a rotation that ends
 * one segment as a complete capture and carries on into the next.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "record/attach.h"
#include "record/gpu.h"
#include "record/record.h"
#include "record/record_priv.h"
#include "support/util.h"

#define SEG_MAX_ARGS 64

/* The recorder first: the public struct recorder * is this. */
struct seg {
	struct recorder r;
	struct record_opts o;
	char path[PATH_MAX];
	char pid[16];
	char *args[SEG_MAX_ARGS + 1];
	int argc;
	char **argv;
	uint64_t attach_ns;					     /* the first segment's start */
	char window_source[sizeof(((struct gpu_setup *)0)->source)]; /* recorder__gpu_window */
};

struct recorder *recorder__attach(pid_t pid, const char *path, char *const *opts, int nopts,
				  int argc, char **argv, bool *usage)
{
	struct seg *s = gt_xcalloc(1, sizeof(*s));
	int n = 0;

	*usage = false;
	if (nopts > SEG_MAX_ARGS - 8) {
		gt_err("too many --record-opt options (at most %d)", SEG_MAX_ARGS - 8);
		*usage = true;
		free(s);
		return NULL;
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	snprintf(s->pid, sizeof(s->pid), "%d", pid);
	s->args[n++] = "record";
	s->args[n++] = "-p";
	s->args[n++] = s->pid;
	s->args[n++] = "-o";
	s->args[n++] = s->path;
	s->args[n++] = "--no-progress";
	/*
	 * No CFI snapshots of CPU samples: their unwinding costs the recorder
	 * ~9 us of CPU each, too much for always on (the fp walk stays).
	 */
	s->args[n++] = "--cfi-samples";
	s->args[n++] = "off";
	for (int i = 0; i < nopts; i++)
		s->args[n++] = opts[i];
	s->args[n] = NULL;
	s->r.o = &s->o;
	s->r.pidfd = s->r.go_fd = s->r.status_fd = -1;
	if (record__parse_opts(n, s->args, &s->o)) {
		*usage = true;
		goto fail;
	}
	if (s->o.cmd || s->o.dwarf || s->o.duration_ns) {
		gt_err("--record-opt: the monitor takes no command, --stacks dwarf or --duration");
		*usage = true;
		goto fail;
	}
	s->argc = argc;
	s->argv = argv;
	if (record__start(&s->r, argc, argv))
		goto fail;
	/* Before the first record: every stack is kept for the segments after this one. */
	s->r.sink.cfg.segments = true;
	s->attach_ns = s->r.start_ns;
	return &s->r;
fail:
	record__cleanup(&s->r);
	free(s);
	return NULL;
}

int recorder__run(struct recorder *r, bool (*tick)(struct recorder *r, uint64_t now, void *ctx),
		  void *ctx)
{
	r->tick = tick;
	r->tick_ctx = ctx;
	r->stop_reason = NULL;
	return record__run(r);
}

/* Counters from here on belong to the next segment. */
static void seg_base(struct recorder *r)
{
	memcpy(r->stats_base, r->stats, sizeof(r->stats));
	r->misses_base = r->misses;
	r->events_base = r->sink.events;
}

int recorder__rotate(struct recorder *r, const char *path)
{
	struct seg *s = (struct seg *)r;
	struct capture_buf kv = {}, probes = {};
	struct capture_writer *w;
	char err[512], next[PATH_MAX];
	const char *kvs[64];
	uint64_t now;
	int ret = -1;

	/* What the kernel sent up to now belongs to this segment. */
	record__drain_all(r);
	now = gt_now_mono_ns();
	r->end_ns = now;
	/*
	 * Intervals open at the boundary end here (GT_OFF_PARTIAL_END); the
	 * BPF side keeps them, so the next segment gets the whole interval
	 * when it closes, starting before that segment (the analysis reads
	 * only its part inside gaps, which lie inside the segment).
	 */
	record__drain_open_intervals(r);
	record__poll_stats(r, now);
	record_sink__finish(&r->sink);
	if (record_sink__flush(&r->sink))
		goto out;
	snprintf(next, sizeof(next), "%s", path);
	r->start_ns = now;
	record__header_kv(r, &kv, s->argc, s->argv);
	w = capture_writer__open(next, kvs, record__kv_strings(&kv, kvs, GT_ARRAY_SIZE(kvs)), err,
				 sizeof(err));
	if (!w) {
		gt_err("%s", err);
		goto out;
	}
	r->stop_reason = "segment";
	record__write_counters(r, GT_BLK_COUNTERS);
	if (s->window_source[0]) {
		/* Only this segment's END says it: the recorder's source stays. */
		char own[sizeof(s->o.gpu.source)];

		memcpy(own, s->o.gpu.source, sizeof(own));
		memcpy(s->o.gpu.source, s->window_source, sizeof(own));
		record__write_counters(r, GT_BLK_END);
		memcpy(s->o.gpu.source, own, sizeof(own));
		s->window_source[0] = '\0';
	} else {
		record__write_counters(r, GT_BLK_END);
	}
	r->stop_reason = NULL;
	if (capture_writer__close(r->w))
		gt_warn("cannot finish writing %s: %s", s->path, strerror(errno));
	r->w = w;
	memcpy(s->path, next, sizeof(next));
	s->o.output = s->path;
	record_sink__segment(&r->sink, w, s->path);
	seg_base(r);
	probe_table__emit(&s->o.probes, 0, &probes);
	if (probes.len)
		capture_writer__block(w, GT_BLK_PROBES, probes.data, probes.len);
	if (!r->target_gone) {
		record__emit_threads(r, r->pid);
		record__emit_mappings(r, r->pid);
	}
	record__follow_emit_mappings(r);
	ret = 0;
out:
	capture_buf__free(&kv);
	capture_buf__free(&probes);
	return ret;
}

int recorder__gpu_gate(struct recorder *r, bool on)
{
	return attacher__gpu_gate(r->att, on);
}

void recorder__gpu_window(struct recorder *r, const char *source)
{
	struct seg *s = (struct seg *)r;

	snprintf(s->window_source, sizeof(s->window_source), "%s", source ? source : "");
}

int recorder__stop(struct recorder *r)
{
	struct seg *s = (struct seg *)r;

	/* The last segment's END: the recorder ends here, its own source may go. */
	if (s->window_source[0])
		memcpy(s->o.gpu.source, s->window_source, sizeof(s->o.gpu.source));
	/* The closing messages (time recorded, the recorder's CPU share) are of the whole attach. */
	r->start_ns = s->attach_ns;
	return record__finish(r, 0);
}

void recorder__info(const struct recorder *r, struct recorder_info *out)
{
	out->pid = r->pid;
	out->lost = r->stats[GT_STAT_RB_LOST] + r->stats[GT_STAT_STACK_LOST] +
		    r->stats[GT_STAT_MAP_FULL] + r->misses;
	out->rb_bytes = r->rb_bytes;
	out->records = r->sink.events;
	out->gpu_source = r->o->gpu.source[0] ? r->o->gpu.source : "usdt";
	out->stop_reason = r->stop_reason ? r->stop_reason : "";
}

void recorder__free(struct recorder *r)
{
	if (!r)
		return;
	record__cleanup(r);
	free(r);
}
