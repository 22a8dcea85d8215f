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
#include "gaptrace.h"
#include "support/json.h"
#include "support/term.h"
#include "support/util.h"

/* unwind.end.* in enum gt_unw_end order (bpf/gaptrace_cfi.bpf.h). */
static const char *const unw_ends[7] = {"root",	       "no_mapping", "no_table", "no_row",
					"unsupported", "bad_read",   "depth"};

int info__counter(const char *key, const char *value, void *ctx)
{
	struct info_stats *s = ctx;
	uint64_t v = strtoull(value, NULL, 10);

	if (!strcmp(key, "lost.ringbuf"))
		s->counters_lost_ringbuf = v;
	else if (!strcmp(key, "lost.stack"))
		s->counters_lost_stack = v;
	else if (!strcmp(key, "lost.map_full"))
		s->counters_lost_map = v;
	else if (!strcmp(key, "lost.gpu_truncated"))
		s->counters_gpu_trunc = v;
	else if (!strcmp(key, "stop_reason"))
		snprintf(s->stop_reason, sizeof(s->stop_reason), "%s", value);
	else if (!strcmp(key, "end_mono_ns"))
		s->end_ns = v;
	else if (!strcmp(key, "uprobes.attached")) {
		s->have_uprobes = true;
		snprintf(s->uprobes, sizeof(s->uprobes), "%s", value);
	} else if (!strncmp(key, "unwind.", 7)) {
		s->unw = true;
		for (size_t i = 0; i < GT_ARRAY_SIZE(unw_ends); i++)
			if (!strncmp(key + 7, "end.", 4) && !strcmp(key + 11, unw_ends[i]))
				s->unw_end[i] = v;
		if (!strcmp(key, "unwind.walks"))
			s->unw_walks = v;
		else if (!strcmp(key, "unwind.frames"))
			s->unw_frames = v;
		else if (!strcmp(key, "unwind.objects_cfi"))
			s->unw_objects = v;
		else if (!strcmp(key, "unwind.objects_fp"))
			s->unw_objects_fp = v;
		else if (!strcmp(key, "unwind.rows"))
			s->unw_rows = v;
		else if (!strcmp(key, "unwind.table_bytes"))
			s->unw_bytes = v;
		else if (!strcmp(key, "unwind.table_max_bytes"))
			s->unw_max_bytes = v;
		else if (!strcmp(key, "unwind.table_max_object"))
			snprintf(s->unw_max_object, sizeof(s->unw_max_object), "%s", value);
	} else if (!strncmp(key, "dwarf.", 6)) {
		static const struct {
			const char *key;
			size_t off;
		} dk[] = {
		    {"dwarf.snapshots", offsetof(struct info_stats, dwarf_snapshots)},
		    {"dwarf.bytes", offsetof(struct info_stats, dwarf_bytes)},
		    {"dwarf.dropped", offsetof(struct info_stats, dwarf_dropped)},
		    {"dwarf.no_slot", offsetof(struct info_stats, dwarf_no_slot)},
		    {"dwarf.unwound", offsetof(struct info_stats, dwarf_unwound)},
		    {"dwarf.failed", offsetof(struct info_stats, dwarf_failed)},
		    {"dwarf.used", offsetof(struct info_stats, dwarf_used)},
		    {"dwarf.stitched", offsetof(struct info_stats, dwarf_stitched)},
		    {"dwarf.cfi_rate_min", offsetof(struct info_stats, dwarf_rate_min)},
		    {"dwarf.unwind_cpu_ns", offsetof(struct info_stats, dwarf_cpu_ns)},
		    {"dwarf.fpless_samples", offsetof(struct info_stats, dwarf_fpless)},
		    {"dwarf.fpless_over_budget", offsetof(struct info_stats, dwarf_fpless_over)},
		};

		s->dwarf = true;
		for (size_t i = 0; i < GT_ARRAY_SIZE(dk); i++)
			if (!strcmp(key, dk[i].key))
				*(uint64_t *)((char *)s + dk[i].off) = v;
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

static const char *hdr(const struct capture *c, const char *key)
{
	const char *v = capture__header(c, key);

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
		static const char *const keys[] = {
		    "gaptrace_version",
		    "host",
		    "kernel",
		    "arch",
		    "cmdline",
		    "mode",
		    "#pid",
		    "comm",
		    "exe",
		    "#start_mono_ns",
		    "#start_real_ns",
		    "sched_attach",
		    "#sample_period_ns",
		    "#ringbuf_bytes",
		    "gpu_source",
		};

		/* '#': a number, written as one (a reader should not parse it twice). */
		for (size_t i = 0; i < GT_ARRAY_SIZE(keys); i++) {
			bool num = keys[i][0] == '#';
			const char *key = keys[i] + num, *v = capture__header(c, key);
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
		for (size_t i = 0; i < GT_ARRAY_SIZE(unw_ends); i++)
			json_ku64(&j, unw_ends[i], s->unw_end[i]);
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
	printf("recorded: gaptrace %s on %s, %s %s\n", hdr(c, "gaptrace_version"), hdr(c, "host"),
	       hdr(c, "kernel"), hdr(c, "arch"));
	printf("target:   pid %s (%s), %s mode%s%s\n", hdr(c, "pid"), hdr(c, "comm"),
	       hdr(c, "mode"), capture__header(c, "target_cmdline") ? ": " : "",
	       capture__header(c, "target_cmdline") ? hdr(c, "target_cmdline") : "");
	printf("command:  %s\n", hdr(c, "cmdline"));
	printf("duration: %s (stop: %s); scheduler via %s, samples every %s ns, ring "
	       "buffer %s bytes\n",
	       gt_fmt_dur(r->duration_ns, d1, sizeof(d1)),
	       s->stop_reason[0] ? gt_clean(s->stop_reason) : "?", hdr(c, "sched_attach"),
	       hdr(c, "sample_period_ns"), hdr(c, "ringbuf_bytes"));
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
