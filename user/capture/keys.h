/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * keys.h: the keys of a capture's HEADER, COUNTERS and END blocks, one table
 * for the recorder that writes them and every reader (analysis, info, diff,
 * dump), so that a key cannot be spelled two ways.
 */
#ifndef GT_CAPTURE_KEYS_H
#define GT_CAPTURE_KEYS_H

/*
 * X(ID, name): CK_ID is the key called name.  Names are part of the
 * capture format: add keys, never rename one (readers of older captures
 * and older readers look them up by name).  The symbolizer's caps add
 * bounds.* keys of their own (symbols/bounds.c).
 */
#define CAPTURE_KEYS(X)                                                                            \
	/* HEADER: where and how the capture was recorded */                                       \
	X(GAPTRACE_VERSION, "gaptrace_version")                                                    \
	X(HOST, "host")                                                                            \
	X(KERNEL, "kernel")                                                                        \
	X(ARCH, "arch")                                                                            \
	X(CMDLINE, "cmdline")                                                                      \
	X(MODE, "mode")                                                                            \
	X(PID, "pid")                                                                              \
	X(COMM, "comm")                                                                            \
	X(EXE, "exe")                                                                              \
	X(EXE_BUILD_ID, "exe_build_id")                                                            \
	X(TARGET_CMDLINE, "target_cmdline")                                                        \
	X(START_MONO_NS, "start_mono_ns")                                                          \
	X(START_REAL_NS, "start_real_ns")                                                          \
	X(BOOT_ID, "boot_id")                                                                      \
	X(NCPUS, "ncpus")                                                                          \
	X(CLOCK, "clock")                                                                          \
	X(SCHED_ATTACH, "sched_attach")                                                            \
	X(SAMPLE_PERIOD_NS, "sample_period_ns")                                                    \
	X(SAMPLER, "sampler")                                                                      \
	X(RINGBUF_BYTES, "ringbuf_bytes")                                                          \
	X(STACKS, "stacks")                                                                        \
	X(STACK_BYTES, "stack_bytes")                                                              \
	X(DWARF_MIN_NS, "dwarf_min_ns")                                                            \
	X(DWARF_SAMPLE_BYTES, "dwarf_sample_bytes")                                                \
	/* HEADER and END: END's is the source at the stop, when it changed */                     \
	X(GPU_SOURCE, "gpu_source")                                                                \
	X(CUPTI_LIB, "cupti_lib")                                                                  \
	/* COUNTERS and END: losses, the BPF side's counters */                                    \
	X(LOST_RINGBUF, "lost.ringbuf")                                                            \
	X(LOST_RINGBUF_OFFCPU, "lost.ringbuf.offcpu")                                              \
	X(LOST_RINGBUF_SAMPLE, "lost.ringbuf.sample")                                              \
	X(LOST_RINGBUF_CALL, "lost.ringbuf.call")                                                  \
	X(LOST_RINGBUF_GPU, "lost.ringbuf.gpu")                                                    \
	X(LOST_RINGBUF_OTHER, "lost.ringbuf.other")                                                \
	X(LOST_PROG_MISSES, "lost.prog_misses")                                                    \
	X(LOST_STACK, "lost.stack")                                                                \
	X(LOST_MAP_FULL, "lost.map_full")                                                          \
	X(LOST_GPU_TRUNCATED, "lost.gpu_truncated")                                                \
	X(BPF_EVENTS, "bpf.events")                                                                \
	X(BPF_SWITCHES, "bpf.switches")                                                            \
	X(BPF_SWITCHIN_MISSED, "bpf.switchin_missed")                                              \
	X(BPF_STACKS_REUSED, "bpf.stacks_reused")                                                  \
	/* --stacks dwarf, and CPU samples in code without frame pointers */                       \
	X(DWARF_SNAPSHOTS, "dwarf.snapshots")                                                      \
	X(DWARF_BYTES, "dwarf.bytes")                                                              \
	X(DWARF_DROPPED, "dwarf.dropped")                                                          \
	X(DWARF_NO_SLOT, "dwarf.no_slot")                                                          \
	X(DWARF_FPLESS_SAMPLES, "dwarf.fpless_samples")                                            \
	X(DWARF_FPLESS_OVER_BUDGET, "dwarf.fpless_over_budget")                                    \
	X(DWARF_UNWOUND, "dwarf.unwound")                                                          \
	X(DWARF_FAILED, "dwarf.failed")                                                            \
	X(DWARF_USED, "dwarf.used")                                                                \
	X(DWARF_STITCHED, "dwarf.stitched")                                                        \
	X(DWARF_CFI_RATE_MIN, "dwarf.cfi_rate_min")                                                \
	X(DWARF_UNWIND_CPU_NS, "dwarf.unwind_cpu_ns")                                              \
	/* --stacks cfi: the kernel's walks, how they ended (enum gt_unw_end order), the tables */ \
	X(UNWIND_WALKS, "unwind.walks")                                                            \
	X(UNWIND_FRAMES, "unwind.frames")                                                          \
	X(UNWIND_END_ROOT, "unwind.end.root")                                                      \
	X(UNWIND_END_NO_MAPPING, "unwind.end.no_mapping")                                          \
	X(UNWIND_END_NO_TABLE, "unwind.end.no_table")                                              \
	X(UNWIND_END_NO_ROW, "unwind.end.no_row")                                                  \
	X(UNWIND_END_UNSUPPORTED, "unwind.end.unsupported")                                        \
	X(UNWIND_END_BAD_READ, "unwind.end.bad_read")                                              \
	X(UNWIND_END_DEPTH, "unwind.end.depth")                                                    \
	X(UNWIND_OBJECTS, "unwind.objects")                                                        \
	X(UNWIND_OBJECTS_FP, "unwind.objects_fp")                                                  \
	X(UNWIND_OBJECTS_CFI, "unwind.objects_cfi")                                                \
	X(UNWIND_OBJECTS_NONE, "unwind.objects_none")                                              \
	X(UNWIND_OBJECTS_TRUNCATED, "unwind.objects_truncated")                                    \
	X(UNWIND_CFI_BAD_ENTRIES, "unwind.cfi_bad_entries")                                        \
	X(UNWIND_ROWS, "unwind.rows")                                                              \
	X(UNWIND_TABLE_BYTES, "unwind.table_bytes")                                                \
	X(UNWIND_TABLE_MAX_BYTES, "unwind.table_max_bytes")                                        \
	X(UNWIND_TABLE_MAX_OBJECT, "unwind.table_max_object")                                      \
	X(UNWIND_BUILD_NS, "unwind.build_ns")                                                      \
	X(UNWIND_TABLE_BUDGET, "unwind.table_budget")                                              \
	X(UNWIND_OBJECTS_OVER_BUDGET, "unwind.objects_over_budget")                                \
	X(UNWIND_RESCAN_MAX_NS, "unwind.rescan_max_ns")                                            \
	/* the recorder's own counts */                                                            \
	X(STACKS_RESENT, "stacks.resent")                                                          \
	X(STACKS_UNRESOLVED, "stacks.unresolved")                                                  \
	X(RECORDS, "records")                                                                      \
	X(USDT_LINKS, "usdt_links")                                                                \
	X(UPROBE_LINKS, "uprobe_links")                                                            \
	X(SAMPLE_EVENTS, "sample_events")                                                          \
	X(UPROBES_ATTACHED, "uprobes.attached")                                                    \
	X(SAMPLING_FROM_NS, "sampling_from_ns")                                                    \
	/* END only: how the recording stopped */                                                  \
	X(END_MONO_NS, "end_mono_ns")                                                              \
	X(STOP_REASON, "stop_reason")                                                              \
	X(TARGET_EXIT_STATUS, "target_exit_status")

enum capture_key {
#define CAPTURE_KEY_ID(id, name) CK_##id,
	CAPTURE_KEYS(CAPTURE_KEY_ID)
#undef CAPTURE_KEY_ID
	    CK_MAX
};

/* The name of key k as a capture spells it ("" for none of the table's). */
const char *capture_key__name(enum capture_key k);
/* The key called name, or CK_MAX when the table has no such key. */
enum capture_key capture_key__find(const char *name);

#endif /* GT_CAPTURE_KEYS_H */
