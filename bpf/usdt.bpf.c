// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * usdt.bpf.c: the gaptrace USDT probes (cupti/gaptrace-usdt.h): work units,
 * GPU launches and operations, batches of GPU records, names.
 */
#include "common.bpf.h"
#include <bpf/usdt.bpf.h>

/* ---- the gaptrace USDT interface (cupti/gaptrace-usdt.h) ---- */

static __always_inline int emit_unit(__u64 unit_id, __u32 begin)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gt_unit *rec = reserve(sizeof(*rec), GT_STAT_RB_LOST_OTHER);

	if (!rec)
		return 0;
	fill_hdr(&rec->hdr, GT_REC_UNIT, sizeof(*rec), bpf_ktime_get_ns());
	rec->pid = id >> 32;
	rec->tid = (__u32)id;
	rec->unit_id = unit_id;
	rec->begin = begin;
	rec->_pad = 0;
	submit(rec, false);
	return 0;
}

SEC("usdt")
int BPF_USDT(usdt_unit_begin, __u64 unit_id)
{
	return emit_unit(unit_id, 1);
}

SEC("usdt")
int BPF_USDT(usdt_unit_end, __u64 unit_id)
{
	return emit_unit(unit_id, 0);
}

SEC("usdt")
int BPF_USDT(usdt_gpu_launch, __u32 device, __u32 stream, __u64 op_id)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gt_gpu_launch *rec = reserve(sizeof(*rec), GT_STAT_RB_LOST_GPU);

	if (!rec)
		return 0;
	fill_hdr(&rec->hdr, GT_REC_GPU_LAUNCH, sizeof(*rec), bpf_ktime_get_ns());
	rec->pid = id >> 32;
	rec->tid = (__u32)id;
	rec->device = device;
	rec->stream = stream;
	rec->op_id = op_id;
	submit(rec, false);
	return 0;
}

SEC("usdt")
int BPF_USDT(usdt_gpu_op, __u32 device, __u32 stream, __u64 op_id, __u64 start_ns, __u64 end_ns)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gt_gpu_op *rec = reserve(sizeof(*rec), GT_STAT_RB_LOST_GPU);

	if (!rec)
		return 0;
	__builtin_memset(&rec->rec, 0, sizeof(rec->rec));
	fill_hdr(&rec->hdr, GT_REC_GPU_OP, sizeof(*rec), bpf_ktime_get_ns());
	rec->pid = id >> 32;
	rec->tid = (__u32)id;
	rec->rec.start_ns = start_ns;
	rec->rec.end_ns = end_ns;
	rec->rec.op_id = op_id;
	rec->rec.device = device;
	rec->rec.stream = stream;
	rec->rec.kind = GAPTRACE_GPU_KERNEL;
	submit(rec, false);
	return 0;
}

SEC("usdt")
int BPF_USDT(usdt_gpu_batch, const void *recs, __u32 count, __u32 rec_size)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gt_gpu_batch *rec;
	__u32 n = count, i, copied = 0;

	/* Records only grow at their end: read the fields we know, skip the rest. */
	if (!recs || !count || rec_size < 48 || rec_size > 4096)
		return 0;
	if (n > GT_GPU_BATCH_MAX)
		n = GT_GPU_BATCH_MAX;
	rec = reserve(sizeof(*rec), GT_STAT_RB_LOST_GPU);
	if (!rec)
		return 0;
	fill_hdr(&rec->hdr, GT_REC_GPU_BATCH, sizeof(*rec), bpf_ktime_get_ns());
	rec->pid = id >> 32;
	rec->tid = (__u32)id;
	rec->rec_size = rec_size;
	rec->dropped = count - n;
	rec->_pad = 0;
	if (count > n)
		stat_inc(GT_STAT_GPU_TRUNC);
	for (i = 0; i < GT_GPU_BATCH_MAX; i++) {
		if (i >= n)
			break;
		if (bpf_probe_read_user(rec->data + i * GT_GPU_REC_SIZE, GT_GPU_REC_SIZE,
					(const char *)recs + (__u64)i * rec_size))
			break;
		copied++;
	}
	rec->count = copied;
	submit(rec, false);
	return 0;
}

SEC("usdt")
int BPF_USDT(usdt_gpu_name, __u32 name_id, const char *name)
{
	struct gt_name *rec = reserve(sizeof(*rec), GT_STAT_RB_LOST_OTHER);
	long len;

	if (!rec)
		return 0;
	fill_hdr(&rec->hdr, GT_REC_NAME, sizeof(*rec), bpf_ktime_get_ns());
	rec->pid = bpf_get_current_pid_tgid() >> 32;
	rec->name_id = name_id;
	rec->_pad = 0;
	len = bpf_probe_read_user_str(rec->name, sizeof(rec->name), name);
	rec->len = len > 0 ? len - 1 : 0;
	if (len <= 0)
		rec->name[0] = '\0';
	submit(rec, false);
	return 0;
}
