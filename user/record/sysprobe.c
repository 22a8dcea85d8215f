// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sysprobe.c: feature and privilege checks done once at start-up, so that
 * `record` picks attach variants at run time and `doctor` can explain what
 * is missing.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record/sysprobe.h"
#include "support/util.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's own warnings matter only when asking why something failed. */
	if (!gt_verbose || (level == LIBBPF_DEBUG && gt_verbose < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void gt_libbpf_logging(void)
{
	libbpf_set_print(libbpf_print);
}

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1U << (cap % 32));
}

int gt_check_privileges(char *err, size_t errlen)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {};

	if (geteuid() == 0)
		return 0;
	if (syscall(SYS_capget, &hdr, data) == 0) {
		bool admin = has_cap(data, CAP_SYS_ADMIN);

		if (admin || (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON)))
			return 0;
	}
	snprintf(err, errlen,
		 "needs CAP_BPF and CAP_PERFMON: run as root (e.g. sudo gaptrace ...)");
	return -1;
}

/*
 * The kernel gives BPF programs host PIDs; inside a child PID namespace the
 * recorder knows the target by its namespace PID, matches nothing and would
 * record nothing (issue #10).  The initial namespace has a fixed inode
 * (PROC_PID_INIT_INO).
 */
#define PID_NS_INIT_INO 0xEFFFFFFCU

int gt_check_pid_namespace(char *err, size_t errlen)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) || st.st_ino == PID_NS_INIT_INO)
		return 0;
	snprintf(err, errlen,
		 "gaptrace runs in a PID namespace other than the host's (a container or "
		 "'unshare --pid'), where the kernel's PIDs are not the ones it sees: it would "
		 "record nothing; run it in the host PID namespace (docker run --pid=host, a pod "
		 "with hostPID: true, or nsenter -t 1 -p)");
	return -1;
}

bool gt_have_vmlinux_btf(void)
{
	return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
}

bool gt_probe_tp_btf(const char *tp)
{
	struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP);
	int fd, id;

	id = libbpf_find_vmlinux_btf_id(tp, BPF_TRACE_RAW_TP);
	if (id <= 0)
		return false;
	opts.attach_btf_id = (unsigned)id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, GT_ARRAY_SIZE(insns), &opts);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

bool gt_have_uprobe_pmu(void)
{
	return access("/sys/bus/event_source/devices/uprobe/type", R_OK) == 0;
}

bool gt_tracefs_mounted(void)
{
	return access("/sys/kernel/tracing/events", F_OK) == 0 ||
	       access("/sys/kernel/debug/tracing/events", F_OK) == 0;
}

int gt_ensure_tracefs(bool *mounted_now)
{
	if (mounted_now)
		*mounted_now = false;
	if (gt_tracefs_mounted())
		return 0;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL))
		return -errno;
	if (mounted_now)
		*mounted_now = true;
	return 0;
}

bool gt_probe_ringbuf(void)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, 4096, NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* BPF_TRACE_UPROBE_MULTI (Linux 6.6); Debian 12's uapi headers (6.1) lack it. */
#define GT_TRACE_UPROBE_MULTI 48

bool gt_probe_uprobe_multi(void)
{
	/* r0 = 0; exit */
	struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, po,
		    .expected_attach_type = (enum bpf_attach_type)GT_TRACE_UPROBE_MULTI);
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	unsigned long offset = 0;
	int prog, link, err;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, GT_ARRAY_SIZE(insns), &po);
	if (prog < 0)
		return false;
	lo.uprobe_multi.path = "/";
	lo.uprobe_multi.offsets = &offset;
	lo.uprobe_multi.cnt = 1;
	link = bpf_link_create(prog, -1, (enum bpf_attach_type)GT_TRACE_UPROBE_MULTI, &lo);
	err = link < 0 ? errno : 0;
	if (link >= 0)
		close(link);
	close(prog);
	/* A kernel that knows the link type refuses "/" as not a regular file. */
	return link >= 0 || err == EBADF;
}
