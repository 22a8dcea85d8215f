// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * info.c: the writers of `gaptrace info` — what a capture holds (header,
 * blocks, records by type, threads), every lost-event counter, damage found
 * while reading, and the clock check of GPU starts against their launch calls.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "capture/count.h"
#include "output/info.h"
#include "output/present.h"
#include "gaptrace/gaptrace.h"
#include "support/json.h"
#include "support/term.h"
#include "support/util.h"

/* "root" for unwind.end.root, the first of the keys saying how walks ended. */
static const char *unw_end_name(size_t i)
{
	return capture_key__name((enum capture_key)(CK_UNWIND_END_ROOT + i)) +
	       strlen("unwind.end.");
}

/* The counter a COUNTERS/END key of the dwarf.* or unwind.* family lands in, or NULL. */
static uint64_t *family_counter(struct info_stats *s, enum capture_key k)
{
	if (k >= CK_UNWIND_END_ROOT && k <= CK_UNWIND_END_DEPTH)
		return &s->unw_end[k - CK_UNWIND_END_ROOT];
	switch (k) {
	case CK_DWARF_SNAPSHOTS:
		return &s->dwarf_snapshots;
	case CK_DWARF_BYTES:
		return &s->dwarf_bytes;
	case CK_DWARF_DROPPED:
		return &s->dwarf_dropped;
	case CK_DWARF_NO_SLOT:
		return &s->dwarf_no_slot;
	case CK_DWARF_UNWOUND:
		return &s->dwarf_unwound;
	case CK_DWARF_FAILED:
		return &s->dwarf_failed;
	case CK_DWARF_USED:
		return &s->dwarf_used;
	case CK_DWARF_STITCHED:
		return &s->dwarf_stitched;
	case CK_DWARF_CFI_RATE_MIN:
		return &s->dwarf_rate_min;
	case CK_DWARF_UNWIND_CPU_NS:
		return &s->dwarf_cpu_ns;
	case CK_DWARF_FPLESS_SAMPLES:
		return &s->dwarf_fpless;
	case CK_DWARF_FPLESS_OVER_BUDGET:
		return &s->dwarf_fpless_over;
	case CK_UNWIND_WALKS:
		return &s->unw_walks;
	case CK_UNWIND_FRAMES:
		return &s->unw_frames;
	case CK_UNWIND_OBJECTS_CFI:
		return &s->unw_objects;
	case CK_UNWIND_OBJECTS_FP:
		return &s->unw_objects_fp;
	case CK_UNWIND_ROWS:
		return &s->unw_rows;
	case CK_UNWIND_TABLE_BYTES:
		return &s->unw_bytes;
	case CK_UNWIND_TABLE_MAX_BYTES:
		return &s->unw_max_bytes;
	default:
		return NULL;
	}
}

int info__counter(const char *key, const char *value, void *ctx)
{
	struct info_stats *s = ctx;
	uint64_t v = strtoull(value, NULL, 10), *counter;
	enum capture_key k = capture_key__find(key);

	/* Any key of a family says the recording used it, known to this table or not. */
	if (!strncmp(key, "unwind.", 7))
		s->unw = true;
	else if (!strncmp(key, "dwarf.", 6))
		s->dwarf = true;
	if ((counter = family_counter(s, k))) {
		*counter = v;
		return 0;
	}
	switch (k) {
	case CK_LOST_RINGBUF:
		s->counters_lost_ringbuf = v;
		break;
	case CK_LOST_STACK:
		s->counters_lost_stack = v;
		break;
	case CK_LOST_MAP_FULL:
		s->counters_lost_map = v;
		break;
	case CK_LOST_GPU_TRUNCATED:
		s->counters_gpu_trunc = v;
		break;
	case CK_STOP_REASON:
		snprintf(s->stop_reason, sizeof(s->stop_reason), "%s", value);
		break;
	case CK_END_MONO_NS:
		s->end_ns = v;
		break;
	case CK_UPROBES_ATTACHED:
		s->have_uprobes = true;
		snprintf(s->uprobes, sizeof(s->uprobes), "%s", value);
		break;
	case CK_UNWIND_TABLE_MAX_OBJECT:
		snprintf(s->unw_max_object, sizeof(s->unw_max_object), "%s", value);
		break;
	default:
		break;
	}
	return 0;
}

static const char *const rec_names[GT_REC_MAX] = {
    [GT_REC_OFFCPU] = "offcpu",
    [GT_REC_SAMPLE] = "sample",
    [GT_REC_CALL] = "call",
    [GT_REC_UNIT] = "unit",
    [GT_REC_GPU_LAUNCH] = "gpu_launch",
    [GT_REC_GPU_OP] = "gpu_op",
    [GT_REC_GPU_BATCH] = "gpu_batch",
    [GT_REC_TASK] = "task",
    [GT_REC_NAME] = "name",
    [GT_REC_LOSS] = "loss",
    [GT_REC_PEER] = "peer",
};

static const char *hdr(const struct capture *c, enum capture_key key)
{
	const char *v = capture__header_key(c, key);

	/* Header values (comm, command lines, host) come from the target: printed sanitised. */
	return v ? gt_clean(v) : "?";
}

void info__json(FILE *f, struct capture *c, struct info_stats *s, const struct an_result *r)
{
	uint64_t lost = s->counters_lost_ringbuf + s->counters_lost_map;
	unsigned maj, min;
	struct json j;

	capture__version(c, &maj, &min);
	json_init(&j, f, true);
	json_obj_begin(&j);
	json_kstr(&j, "schema", "gaptrace.info/1");
	json_kstr(&j, "path", capture__path(c));
	json_ku64(&j, "bytes", capture__size(c));
	json_ku64(&j, "version", maj);
	json_ku64(&j, "minor", min);
	json_kbool(&j, "complete", s->n.blocks[GT_BLK_END] > 0);
	json_kbool(&j, "truncated", capture__truncated(c));
	json_ku64(&j, "crc_errors", capture__crc_errors(c));
	json_ku64(&j, "unknown_blocks", s->n.unknown_blocks);
	json_kstr(&j, "stop_reason", s->stop_reason);
	json_ku64(&j, "duration_ns", r->duration_ns);
	/* The source at the end (the header's may have changed while recording). */
	json_kstr(&j, "gpu_source", r->gpu_source);
	json_key(&j, "header");
	json_obj_begin(&j);
	{
		/* num: a number, written as one (a reader should not parse it twice). */
		static const struct {
			enum capture_key key;
			bool num;
		} keys[] = {
		    {CK_GAPTRACE_VERSION, false},
		    {CK_HOST, false},
		    {CK_KERNEL, false},
		    {CK_ARCH, false},
		    {CK_CMDLINE, false},
		    {CK_MODE, false},
		    {CK_PID, true},
		    {CK_COMM, false},
		    {CK_EXE, false},
		    {CK_START_MONO_NS, true},
		    {CK_START_REAL_NS, true},
		    {CK_SCHED_ATTACH, false},
		    {CK_SAMPLE_PERIOD_NS, true},
		    {CK_RINGBUF_BYTES, true},
		    {CK_GPU_SOURCE, false},
		};

		for (size_t i = 0; i < GT_ARRAY_SIZE(keys); i++) {
			bool num = keys[i].num;
			const char *key = capture_key__name(keys[i].key),
				   *v = capture__header_key(c, keys[i].key);
			uint64_t n;

			if (v && num && !gt_parse_uint(v, 0, UINT64_MAX, &n))
				json_ku64(&j, key, n);
			else if (v)
				json_kstr(&j, key, v);
		}
	}
	json_obj_end(&j);
	json_key(&j, "records");
	json_obj_begin(&j);
	/* Ring-buffer-only types have no name: they never reach a capture. */
	for (int i = 1; i < GT_REC_MAX; i++)
		if (rec_names[i])
			json_ku64(&j, rec_names[i], s->n.recs[i]);
	json_obj_end(&j);
	/* What the compact GPU blocks cost: the figure issue #14 bounds-> */
	json_key(&j, "gpu_ops_blocks");
	json_obj_begin(&j);
	json_ku64(&j, "blocks", s->n.blocks[GT_BLK_GPU_OPS]);
	json_ku64(&j, "records", s->n.gpu_block_recs);
	json_ku64(&j, "bytes", s->n.block_bytes[GT_BLK_GPU_OPS]);
	json_kdouble(&j, "bytes_per_record",
		     s->n.gpu_block_recs
			 ? (double)s->n.block_bytes[GT_BLK_GPU_OPS] / (double)s->n.gpu_block_recs
			 : 0.0);
	json_obj_end(&j);
	json_ku64(&j, "lost_events", lost);
	json_key(&j, "lost");
	json_obj_begin(&j);
	json_ku64(&j, "ringbuf", s->counters_lost_ringbuf);
	json_ku64(&j, "map_full", s->counters_lost_map);
	json_ku64(&j, "stacks", s->counters_lost_stack);
	json_ku64(&j, "gpu_records", r->lost_gpu);
	json_ku64(&j, "gpu_producer_dropped", r->lost_producer);
	json_obj_end(&j);
	if (s->have_uprobes) {
		json_key(&j, "uprobes_attached");
		json_arr_begin(&j);
		for (char *save, *p = strtok_r(s->uprobes, ",", &save); p;
		     p = strtok_r(NULL, ",", &save))
			json_str(&j, p);
		json_arr_end(&j);
	}
	if (s->dwarf) {
		json_key(&j, "dwarf");
		json_obj_begin(&j);
		json_ku64(&j, "snapshots", s->dwarf_snapshots);
		json_ku64(&j, "bytes", s->dwarf_bytes);
		json_ku64(&j, "unwound", s->dwarf_unwound);
		json_ku64(&j, "failed", s->dwarf_failed);
		json_ku64(&j, "used", s->dwarf_used);
		json_ku64(&j, "stitched", s->dwarf_stitched);
		if (s->dwarf_rate_min)
			json_ku64(&j, "cfi_rate_min", s->dwarf_rate_min);
		json_ku64(&j, "dropped", s->dwarf_dropped);
		json_ku64(&j, "no_slot", s->dwarf_no_slot);
		json_ku64(&j, "unwind_cpu_ns", s->dwarf_cpu_ns);
		json_ku64(&j, "fpless_samples", s->dwarf_fpless);
		json_ku64(&j, "fpless_over_budget", s->dwarf_fpless_over);
		json_obj_end(&j);
	}
	if (s->unw) {
		json_key(&j, "unwind");
		json_obj_begin(&j);
		json_kstr(&j, "unwinder", "cfi");
		json_ku64(&j, "walks", s->unw_walks);
		json_ku64(&j, "frames", s->unw_frames);
		json_key(&j, "ended");
		json_obj_begin(&j);
		for (size_t i = 0; i < UNW_ENDS; i++)
			json_ku64(&j, unw_end_name(i), s->unw_end[i]);
		json_obj_end(&j);
		json_ku64(&j, "table_objects", s->unw_objects);
		json_ku64(&j, "fp_objects", s->unw_objects_fp);
		json_ku64(&j, "table_rows", s->unw_rows);
		json_ku64(&j, "table_bytes", s->unw_bytes);
		json_ku64(&j, "table_max_bytes", s->unw_max_bytes);
		json_kstr(&j, "table_max_object", s->unw_max_object);
		json_obj_end(&j);
	}
	json_ku64(&j, "threads", r->nthreads);
	json_ku64(&j, "devices", r->ndevices);
	present__json_clock(&j, r);
	json_key(&j, "warnings");
	json_arr_begin(&j);
	for (size_t i = 0; i < r->nwarnings; i++)
		json_str(&j, r->warnings[i]);
	json_arr_end(&j);
	json_obj_end(&j);
}

int info__text(struct capture *c, struct info_stats *s, const struct an_result *r)
{
	uint64_t lost = s->counters_lost_ringbuf + s->counters_lost_map;
	char d1[32], d2[32], d3[32];
	unsigned maj, min;
	static const char *const bnames[CAPTURE_BLOCK_KINDS] = {
	    "HEADER",	"EVENTS", "STACKS", "SYMBOLS", "MAPPINGS",
	    "COUNTERS", "PROBES", "END",    "GPU_OPS", "INLINES",
	};
	struct term_redirect tr;

	capture__version(c, &maj, &min);
	/* Long lines (the command line, threads, dwarf) fit the terminal. */
	term__stdout_begin(&tr);

	printf("capture:  %s (%s, format %u.%u, %s)\n", gt_clean(capture__path(c)),
	       gt_fmt_bytes(capture__size(c), d1, sizeof(d1)), maj, min,
	       capture__truncated(c) ? "TRUNCATED"
	       : s->n.blocks[7]	     ? "complete"
				     : "no END block: recorder stopped abruptly");
	printf("recorded: gaptrace %s on %s, %s %s\n", hdr(c, CK_GAPTRACE_VERSION), hdr(c, CK_HOST),
	       hdr(c, CK_KERNEL), hdr(c, CK_ARCH));
	printf("target:   pid %s (%s), %s mode%s%s\n", hdr(c, CK_PID), hdr(c, CK_COMM),
	       hdr(c, CK_MODE), capture__header_key(c, CK_TARGET_CMDLINE) ? ": " : "",
	       capture__header_key(c, CK_TARGET_CMDLINE) ? hdr(c, CK_TARGET_CMDLINE) : "");
	printf("command:  %s\n", hdr(c, CK_CMDLINE));
	printf("duration: %s (stop: %s); scheduler via %s, samples every %s ns, ring "
	       "buffer %s bytes\n",
	       gt_fmt_dur(r->duration_ns, d1, sizeof(d1)),
	       s->stop_reason[0] ? gt_clean(s->stop_reason) : "?", hdr(c, CK_SCHED_ATTACH),
	       hdr(c, CK_SAMPLE_PERIOD_NS), hdr(c, CK_RINGBUF_BYTES));
	printf("blocks:  ");
	for (int i = 0; i < CAPTURE_BLOCK_KINDS; i++)
		if (s->n.blocks[i])
			printf(" %s %llu", bnames[i], (unsigned long long)s->n.blocks[i]);
	if (s->n.unknown_blocks)
		printf(" unknown %llu (skipped)", (unsigned long long)s->n.unknown_blocks);
	printf("\nrecords: ");
	for (int i = 1; i < GT_REC_MAX; i++)
		if (s->n.recs[i] && rec_names[i])
			printf(" %s %llu", rec_names[i], (unsigned long long)s->n.recs[i]);
	if (s->n.gpu_block_recs)
		printf("\ngpu ops:  %llu in GPU_OPS blocks, %s (%.1f bytes each)",
		       (unsigned long long)s->n.gpu_block_recs,
		       gt_fmt_bytes(s->n.block_bytes[GT_BLK_GPU_OPS], d1, sizeof(d1)),
		       (double)s->n.block_bytes[GT_BLK_GPU_OPS] / (double)s->n.gpu_block_recs);
	printf("\nthreads:  %zu:", r->nthreads);
	for (size_t i = 0; i < r->nthreads && i < 12; i++)
		printf(" %s:%u", r->threads[i].comm[0] ? gt_clean(r->threads[i].comm) : "?",
		       r->threads[i].tid);
	if (r->nthreads > 12)
		printf(" ...");
	printf("\nlost:     %llu events (ring buffer %llu, tracking map full %llu); stacks "
	       "%llu; GPU records truncated %llu, dropped by producer %llu%s\n",
	       (unsigned long long)lost, (unsigned long long)s->counters_lost_ringbuf,
	       (unsigned long long)s->counters_lost_map, (unsigned long long)s->counters_lost_stack,
	       (unsigned long long)r->lost_gpu, (unsigned long long)r->lost_producer,
	       lost ? "  <- raise record --ringbuf-size" : "");
	if (s->have_uprobes)
		printf("uprobes:  %s\n", s->uprobes[0] ? gt_clean(s->uprobes) : "none attached");
	if (s->dwarf)
		printf("dwarf:    %llu stack snapshots (%s), %llu unwound, %llu failed, %llu "
		       "used by records (%llu of them samples joined to the fp walk beyond "
		       "the snapshot); "
		       "%llu dropped (ring full), %llu without a slot; "
		       "unwinding took %s of CPU; %llu CPU samples in code without frame "
		       "pointers (%llu more past --cfi-rate, fp walk)\n",
		       (unsigned long long)s->dwarf_snapshots,
		       gt_fmt_bytes(s->dwarf_bytes, d1, sizeof(d1)),
		       (unsigned long long)s->dwarf_unwound, (unsigned long long)s->dwarf_failed,
		       (unsigned long long)s->dwarf_used, (unsigned long long)s->dwarf_stitched,
		       (unsigned long long)s->dwarf_dropped, (unsigned long long)s->dwarf_no_slot,
		       gt_fmt_dur(s->dwarf_cpu_ns, d2, sizeof(d2)),
		       (unsigned long long)s->dwarf_fpless,
		       (unsigned long long)s->dwarf_fpless_over);
	if (s->unw)
		printf("unwind:   cfi, in the kernel: %llu user stacks, %.1f%% reached the "
		       "thread's root (%.1f frames each); ended: %llu in no mapping, %llu no "
		       "table, %llu no row, %llu unsupported rule, %llu bad read, %llu depth "
		       "cap; tables: %llu objects (+%llu walked with frame pointers), %llu "
		       "rows, %s (largest %s, %s)\n",
		       (unsigned long long)s->unw_walks,
		       s->unw_walks ? 100.0 * (double)s->unw_end[0] / (double)s->unw_walks : 0.0,
		       s->unw_walks ? (double)s->unw_frames / (double)s->unw_walks : 0.0,
		       (unsigned long long)s->unw_end[1], (unsigned long long)s->unw_end[2],
		       (unsigned long long)s->unw_end[3], (unsigned long long)s->unw_end[4],
		       (unsigned long long)s->unw_end[5], (unsigned long long)s->unw_end[6],
		       (unsigned long long)s->unw_objects, (unsigned long long)s->unw_objects_fp,
		       (unsigned long long)s->unw_rows, gt_fmt_bytes(s->unw_bytes, d1, sizeof(d1)),
		       s->unw_max_object[0] ? gt_clean(s->unw_max_object) : "-",
		       gt_fmt_bytes(s->unw_max_bytes, d2, sizeof(d2)));
	printf("GPU:      %zu device(s), %llu ops, %zu gaps >= 1 ms; source: %s\n", r->ndevices,
	       (unsigned long long)(r->ndevices ? r->devices[0].ops : 0), r->ngaps,
	       gt_clean(r->gpu_source));
	if (r->clock.pairs)
		printf(
		    "clock:    %llu ops matched to launches; launch->start min %s, p50 %s, "
		    "p99 %s; %llu violations%s\n",
		    (unsigned long long)r->clock.pairs,
		    gt_fmt_dur(r->clock.min_ns > 0 ? (uint64_t)r->clock.min_ns : 0, d1, sizeof(d1)),
		    gt_fmt_dur(r->clock.p50_ns > 0 ? (uint64_t)r->clock.p50_ns : 0, d2, sizeof(d2)),
		    gt_fmt_dur(r->clock.p99_ns > 0 ? (uint64_t)r->clock.p99_ns : 0, d3, sizeof(d3)),
		    (unsigned long long)r->clock.violations,
		    r->clock.violations ? " (GPU clock NOT aligned with CLOCK_MONOTONIC)"
					: " (aligned)");
	else if (r->host_view)
		printf("clock:    none to check (host-side view: no GPU timestamps)\n");
	else
		printf("clock:    no GPU op could be matched to a launch call\n");
	for (size_t i = 0; i < r->nwarnings; i++)
		printf("warning:  %s\n", gt_clean(r->warnings[i]));
	return term__stdout_end(&tr) ? -1 : 0;
}
