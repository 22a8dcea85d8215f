// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * target.c: the process `gaptrace record` traces: resolving a pid to its
 * process, the pidfd that tells when it exits, launching a command held
 * before exec until everything is attached, and the thread names and
 * mappings it has when recording starts.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "record/gpu.h"
#include "record/record_priv.h"
#include "record/unwind.h"
#include "symbols/live.h"
#include "support/procfs.h"
#include "support/util.h"

/*
 * A thread id names its whole process; a kernel thread cannot be traced
 * (no user space, no GPU work).
 */
int record__resolve_tgid(struct recorder *r, pid_t pid)
{
	struct procfs_stat st = {0};
	char buf[4096];
	pid_t tgid;

	if (procfs_status_read(pid, 0, buf, sizeof(buf)) <= 0)
		return 0;
	tgid = (pid_t)procfs_status_long(buf, "Tgid", pid);
	/* PF_KTHREAD (0x00200000) in the 9th field of /proc/PID/stat. */
	if (!procfs_stat_read(pid, 0, &st) && (st.flags & 0x00200000)) {
		gt_err("pid %d is a kernel thread: give the pid of a user-space program", pid);
		return -1;
	}
	/* A zombie leader whose other threads still run is a live process. */
	if (st.state == 'Z' && procfs_status_long(buf, "Threads", 1) <= 1) {
		gt_err("pid %d is a zombie (it exited; its parent %d has not reaped it): "
		       "nothing runs there to trace",
		       pid, st.ppid);
		return -1;
	}
	if (tgid > 0 && tgid != pid) {
		gt_info("%d is a thread of process %d: tracing the whole process", pid, tgid);
		r->pid = tgid;
		r->o->pid = tgid;
	}
	return 0;
}

int record__open_pidfd(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Resolves a command name the way execvp would, for attaching before exec. */
int record__resolve_cmd(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(cmd, '/')) {
		if (!realpath(cmd, out))
			return -errno;
		return access(out, X_OK) ? -errno : 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", cmd);
		if (access(buf, X_OK) == 0 && realpath(buf, out))
			return 0;
		path += n;
		if (*path == ':')
			path++;
	}
	(void)len;
	return -ENOENT;
}

/*
 * Forks the command but holds it before exec until everything is attached,
 * so its first instructions are already traced.
 */
int record__launch_child(struct recorder *r, char **cmd, const struct gpu_setup *gpu)
{
	int go[2], status[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(status, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(status[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* The command runs at the nice gaptrace was started with, not its attach's -10. */
		setpriority(PRIO_PROCESS, 0, r->user_nice);
		gpu_child_env(gpu);
		execvp(cmd[0], cmd);
		e = errno;
		if (write(status[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(status[1]);
	r->child = pid;
	r->go_fd = go[1];
	r->pid = pid;
	/* Keep the status pipe: a failed exec is reported after release. */
	return status[0];
}

int record__release_child(struct recorder *r, int status_fd, const char *cmd)
{
	int e = 0;
	ssize_t n;

	if (write(r->go_fd, "g", 1) != 1)
		return -errno;
	close(r->go_fd);
	r->go_fd = -1;
	n = read(status_fd, &e, sizeof(e));
	close(status_fd);
	if (n == sizeof(e)) {
		gt_err("cannot run '%s': %s; check the command name and PATH", cmd, strerror(e));
		waitpid(r->child, NULL, 0);
		r->child = 0;
		return -e;
	}
	return 0;
}

/* Thread names as they are now; later renames arrive as TASK records. */
void record__emit_threads(struct recorder *r, pid_t pid)
{
	struct procfs_tasks it;
	char comm[64];
	pid_t tid;

	if (procfs_tasks_open(&it, pid))
		return;
	while ((tid = procfs_tasks_next(&it))) {
		struct gt_task t = {.hdr = {GT_REC_TASK, sizeof(t), 0, gt_now_mono_ns()}};

		if (!procfs_comm(pid, tid, comm, sizeof(comm)))
			continue;
		t.pid = (uint32_t)pid;
		t.tid = (uint32_t)tid;
		t.event = GT_TASK_SEEN;
		memcpy(t.comm, comm, GT_MIN(strlen(comm), sizeof(t.comm) - 1));
		record_sink__put(&r->sink, &t, sizeof(t));
	}
	procfs_tasks_close(&it);
}

struct mappings_ctx {
	struct capture_buf *b;
	uint32_t pid;
};

static int emit_mappings_cb(const struct syms_mapping *m, void *ctx)
{
	struct mappings_ctx *mc = ctx;

	if (m->exec)
		capture_buf__mapping(mc->b, mc->pid, m->start, m->end, m->pgoff, m->build_id,
				     m->build_id_len, m->path);
	return 0;
}

void record__emit_mappings(struct recorder *r, pid_t pid)
{
	struct capture_buf b = {};
	struct mappings_ctx mc = {&b, (uint32_t)pid};

	syms_read_mappings((uint32_t)pid, emit_mappings_cb, &mc);
	if (b.len)
		capture_writer__block(r->w, GT_BLK_MAPPINGS, b.data, b.len);
	capture_buf__free(&b);
}

bool record__target_exited(struct recorder *r)
{
	struct pollfd p = {.fd = r->pidfd, .events = POLLIN};

	if (r->pidfd < 0 || poll(&p, 1, 0) <= 0)
		return false;
	if (r->child) {
		if (waitpid(r->child, &r->target_status, WNOHANG) != r->child)
			return false;
	}
	return true;
}

/* Frame-pointer audit of an fp recording starts with the traced executable. */
void record__audit_exe(struct recorder *r)
{
	char path[64], exe[PATH_MAX];
	ssize_t n;

	r->fpa = fp_audit__new();
	if (r->exe) {
		fp_audit__object(r->fpa, (uint32_t)r->pid, r->exe, true);
		return;
	}
	procfs_path(path, sizeof(path), r->pid, 0, "exe");
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		fp_audit__object(r->fpa, (uint32_t)r->pid, exe, true);
	}
}
