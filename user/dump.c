// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dump.c: `gaptrace dump` — every record of a capture as one text line, in
 * file order, with times relative to the capture start (like `perf script`),
 * for checking what the recorder saw.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "cmds.h"
#include "gaptrace.h"
#include "util.h"

struct dump_ctx {
	uint64_t t0;
	int64_t tid; /* -1: all */
};

static double rel(const struct dump_ctx *d, uint64_t ts)
{
	return ts ? (double)((int64_t)(ts - d->t0)) / 1e6 : 0.0;
}

static int dump_rec(const void *rec, size_t size, void *ctx)
{
	const struct dump_ctx *d = ctx;
	const struct gt_hdr *h = rec;

	switch (h->type) {
	case GT_REC_OFFCPU: {
		const struct gt_offcpu *o = rec;

		if (size < sizeof(*o) || (d->tid >= 0 && o->tid != d->tid))
			break;
		printf("%12.3f offcpu  tid %u off %.3f wake %.3f on %.3f state %#x flags %#x sys %d "
		       "args %#llx %#llx %#llx waker %u ustack %d kstack %d\n",
		       rel(d, h->ts_ns), o->tid, rel(d, o->off_ns), rel(d, o->wake_ns),
		       rel(d, o->on_ns), o->state, o->flags, o->syscall_nr,
		       (unsigned long long)o->args[0], (unsigned long long)o->args[1],
		       (unsigned long long)o->args[2], o->waker_tid, o->ustack_id, o->kstack_id);
		break;
	}
	case GT_REC_SAMPLE: {
		const struct gt_sample *s = rec;

		if (size < sizeof(*s) || (d->tid >= 0 && s->tid != d->tid))
			break;
		printf("%12.3f sample  tid %u sys %d %s ip %#llx ustack %d kstack %d\n",
		       rel(d, h->ts_ns), s->tid, s->syscall_nr,
		       (s->flags & GT_SAMPLE_KERNEL) ? "kernel" : "user", (unsigned long long)s->ip,
		       s->ustack_id, s->kstack_id);
		break;
	}
	case GT_REC_CALL: {
		const struct gt_call *c = rec;

		if (size < sizeof(*c) || (d->tid >= 0 && c->tid != d->tid))
			break;
		printf("%12.3f call    tid %u func %u enter %.3f exit %.3f%s\n", rel(d, h->ts_ns),
		       c->tid, c->func_id, rel(d, c->enter_ns), rel(d, c->exit_ns),
		       (c->flags & GT_CALL_OPEN) ? " (open)" : "");
		break;
	}
	case GT_REC_UNIT: {
		const struct gt_unit *u = rec;

		if (size >= sizeof(*u) && (d->tid < 0 || u->tid == d->tid))
			printf("%12.3f unit    tid %u %s %llu\n", rel(d, h->ts_ns), u->tid,
			       u->begin ? "begin" : "end", (unsigned long long)u->unit_id);
		break;
	}
	case GT_REC_GPU_LAUNCH: {
		const struct gt_gpu_launch *l = rec;

		if (size >= sizeof(*l) && (d->tid < 0 || l->tid == d->tid))
			printf("%12.3f launch  tid %u dev %u stream %u op %llu\n", rel(d, h->ts_ns),
			       l->tid, l->device, l->stream, (unsigned long long)l->op_id);
		break;
	}
	case GT_REC_GPU_OP: {
		const struct gt_gpu_op *g = rec;

		if (size >= sizeof(*g) && d->tid < 0)
			printf("%12.3f gpu_op  kind %u dev %u stream %u op %llu start %.3f end %.3f "
			       "tid %u\n",
			       rel(d, h->ts_ns), g->rec.kind, g->rec.device, g->rec.stream,
			       (unsigned long long)g->rec.op_id, rel(d, g->rec.start_ns),
			       rel(d, g->rec.end_ns), g->rec.tid);
		break;
	}
	case GT_REC_TASK: {
		const struct gt_task *t = rec;
		char comm[GT_COMM_LEN + 1] = {};

		if (size < sizeof(*t) || (d->tid >= 0 && t->tid != d->tid))
			break;
		memcpy(comm, t->comm, GT_COMM_LEN);
		printf("%12.3f task    tid %u pid %u event %u parent %u comm %s\n", rel(d, h->ts_ns),
		       t->tid, t->pid, t->event, t->parent_tid, comm);
		break;
	}
	case GT_REC_LOSS: {
		const struct gt_loss *l = rec;

		if (size >= sizeof(*l))
			printf("%12.3f loss    kind %u count %llu from %.3f to %.3f\n",
			       rel(d, h->ts_ns), l->kind, (unsigned long long)l->count,
			       rel(d, l->from_ns), rel(d, l->to_ns));
		break;
	}
	default:
		if (d->tid < 0)
			printf("%12.3f type %u size %zu\n", rel(d, h->ts_ns), h->type, size);
		break;
	}
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_ctx d = { .tid = -1 };
	struct capture_block b;
	struct capture *c;
	char err[512];
	const char *v;
	int opt;

	optind = 1;
	while ((opt = getopt(argc, argv, "t:h")) != -1) {
		switch (opt) {
		case 't':
			d.tid = strtol(optarg, NULL, 10);
			break;
		case 'h':
			printf("Usage: gaptrace dump FILE [-t TID]\n\nPrints every record, one per "
			       "line, times in ms from the capture start.\n");
			return GT_EXIT_OK;
		default:
			return GT_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		gt_err("give one capture file: gaptrace dump FILE [-t TID]");
		return GT_EXIT_USAGE;
	}
	c = capture__open(argv[optind], err, sizeof(err));
	if (!c) {
		gt_err("%s", err);
		return GT_EXIT_FAIL;
	}
	v = capture__header(c, "start_mono_ns");
	d.t0 = v ? strtoull(v, NULL, 10) : 0;
	while (capture__next(c, &b) == 1)
		if (b.type == GT_BLK_EVENTS)
			capture__events(b.body, b.len, dump_rec, &d);
	for (size_t i = 0; i < capture__nwarnings(c); i++)
		gt_warn("%s", capture__warning(c, i));
	capture__close(c);
	return GT_EXIT_OK;
}
