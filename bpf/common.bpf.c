// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * common.bpf.c: the kernel half of the recorder, its shared part.  Defines
 * once what common.bpf.h declares for every part: the ring buffer, the stats,
 * the traced thread groups and the configuration the parts share.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile bool cfg_ustacks = true;
const volatile bool cfg_kstacks = true;
const volatile __u64 cfg_wakeup_bytes = 1 << 20;
const volatile __u32 cfg_dwarf_bytes = 0;
const volatile __u32 cfg_self_tgid = 0;

/*
 * The traced thread groups, one bit per tgid (pid_max is at most 2^22):
 * every sched_switch on the machine asks twice, so the answer is one load
 * from .bss instead of two hash lookups (about 40 ns each), which is what
 * untraced processes pay.  The recorder sets bits through the mmapped .bss;
 * both sides use atomic OR.
 */
__u64 target_bits[GT_TGID_LIMIT / 64];

struct gt_events_map events SEC(".maps");
struct gt_stats_map stats SEC(".maps");
struct gt_ustack_slots_map ustack_slots SEC(".maps");
