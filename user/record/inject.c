// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inject.c: live attach.  Borrows one thread of a running x86-64 glibc program
 * through ptrace, makes it dlopen a memfd copy of our library, then restores it:
 * this file is the load policy (memfd, copy, dlopen, cleanup, the session
 * thread); inject_check.c and inject_ptrace.c hold the checks and primitives.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/inject.h"
#include "record/inject_priv.h"
#include "support/procfs.h"
#include "support/safeopen.h"
#include "support/util.h"

#if defined(__x86_64__)

/* Keeps the first message: later failures are consequences. */
int inj_fail(struct inj *j, int err, const char *fmt, ...)
{
	va_list ap;

	if (j->err && j->errlen && !j->err[0]) {
		va_start(ap, fmt);
		vsnprintf(j->err, j->errlen, fmt, ap);
		va_end(ap);
	}
	return err;
}

static int inj_memfd(struct inj *j)
{
	unsigned int flags = MFD_CLOEXEC | MFD_EXEC;
	uint64_t rv = 0;
	int err, e;

	err = inj_mem_write(j, j->scratch, MEMFD_NAME, sizeof(MEMFD_NAME));
	if (err)
		return inj_fail(j, err, "cannot write to the stack of process %d (%s): %s", j->pid,
				j->comm, strerror(-err));
	for (;;) {
		/* MFD_EXEC: the file must stay mappable where vm.memfd_noexec defaults to noexec. */
		if (j->fn.memfd_create)
			err = inj_call(j, "memfd_create", j->fn.memfd_create, CALL_TIMEOUT_NS, &rv,
				       j->scratch, flags, 0);
		else
			err = inj_call(j, "memfd_create", j->fn.syscall, CALL_TIMEOUT_NS, &rv,
				       SYS_memfd_create, j->scratch, flags);
		if (err)
			return err;
		if ((int)rv >= 0)
			break;
		e = inj_remote_errno(j);
		/* Kernels before 6.3 do not know MFD_EXEC. */
		if (e == EINVAL && (flags & MFD_EXEC)) {
			flags &= ~MFD_EXEC;
			continue;
		}
		return inj_fail(j, e ? -e : -EIO, "memfd_create failed in process %d (%s): %s%s",
				j->pid, j->comm, e ? strerror(e) : "unknown error",
				e == EACCES ? " (vm.memfd_noexec = 2 forbids executable memfds; "
					      "set it to 0 or 1)"
					    : " (a seccomp filter may forbid it)");
	}
	j->remote_fd = (int)rv;
	return 0;
}

/*
 * The target's fd N for writing, as root: another of its threads may have
 * put any file it holds there meanwhile (one it may only read, a FIFO).
 * Checked on an O_PATH fd first: only a nameless regular file the target
 * owns (a memfd it could write itself) is reopened for writing.
 */
static int open_memfd(struct inj *j, const char *path)
{
	struct safeopen_creds c;
	char self[64];
	struct stat st;
	int pfd, fd, err;

	err = safeopen_creds_read(j->pid, &c);
	if (err)
		return err;
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st) || !S_ISREG(st.st_mode) || st.st_nlink || st.st_uid != c.uid) {
		close(pfd);
		return -EPERM;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	close(pfd);
	return fd < 0 ? err : fd;
}

/* Fills the target's memfd from our side: its fd reopened through /proc. */
static int inj_copy_lib(struct inj *j)
{
	char path[64], name[16], *buf;
	uint64_t off = 0;
	int fd, err = 0;

	snprintf(name, sizeof(name), "fd/%d", j->remote_fd);
	procfs_path(path, sizeof(path), j->tid, 0, name);
	fd = open_memfd(j, path);
	if (fd < 0)
		return inj_fail(j, fd, "cannot open the memfd of process %d through %s: %s", j->pid,
				path, strerror(-fd));
	buf = gt_xmalloc(COPY_CHUNK);
	while (off < j->lib_size && !err) {
		ssize_t n = pread(j->lib_fd, buf, COPY_CHUNK, (off_t)off), w, done = 0;

		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		while (done < n) {
			w = write(fd, buf + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				err = w < 0 ? -errno : -EIO;
				break;
			}
			done += w;
		}
		off += (uint64_t)n;
	}
	free(buf);
	close(fd);
	if (err)
		return inj_fail(j, err, "cannot copy %s into the memfd of process %d: %s", j->lib,
				j->pid, strerror(-err));
	return 0;
}

/*
 * glibc matches dlopen names as text before it looks at inodes, so a second
 * injection's "/proc/self/fd/N" (N reused after close) would silently return
 * the first library.  Extra slashes give a name no loaded object has; the
 * RTLD_NOLOAD probe finds one (it opens the new memfd, whose inode is unique).
 */
static int inj_pick_name(struct inj *j, uint64_t addr)
{
	char path[SCRATCH_LEN - SCRATCH_PATH_OFF];
	uint64_t rv = 0;
	int err, k;

	for (k = 1; k <= NAME_TRIES; k++) {
		/* A zombie leader has no fd table: then name the thread itself. */
		snprintf(path, sizeof(path), "/proc/%s%.*sfd/%d",
			 j->tid == j->pid ? "self" : "thread-self", k, "////////////////",
			 j->remote_fd);
		err = inj_mem_write(j, addr, path, strlen(path) + 1);
		if (err)
			return inj_fail(j, err, "cannot write to the stack of process %d (%s): %s",
					j->pid, j->comm, strerror(-err));
		err = inj_call(j, j->fn.dlopen_name, j->fn.dlopen, CALL_TIMEOUT_NS, &rv, addr,
			       RTLD_NOW | RTLD_NOLOAD, 0);
		if (err)
			return err;
		if (!rv)
			return 0;
	}
	return inj_fail(j, -EEXIST,
			"process %d (%s) already has %d libraries loaded under our memfd names: "
			"restart it to load another one",
			j->pid, j->comm, NAME_TRIES);
}

static int inj_dlopen(struct inj *j)
{
	uint64_t rv = 0, addr = j->scratch + SCRATCH_PATH_OFF;
	char msg[ERRMSG_MAX];
	int err;

	err = inj_pick_name(j, addr);
	if (err)
		return err;
	err =
	    inj_call(j, j->fn.dlopen_name, j->fn.dlopen, DLOPEN_TIMEOUT_NS, &rv, addr, RTLD_NOW, 0);
	if (err)
		return err;
	if (rv)
		return 0;
	snprintf(msg, sizeof(msg), "no error text");
	if (j->fn.dlerror &&
	    !inj_call(j, "dlerror", j->fn.dlerror, CALL_TIMEOUT_NS, &rv, 0, 0, 0) && rv)
		inj_mem_read_str(j, rv, msg, sizeof(msg));
	return inj_fail(j, -ELIBBAD, "dlopen of %s failed in process %d (%s): %s", j->lib, j->pid,
			j->comm, msg);
}

static int inj_calls(struct inj *j)
{
	uint64_t rv;
	int err;

	err = inj_call(j, "__errno_location", j->fn.errno_location, CALL_TIMEOUT_NS, &rv, 0, 0, 0);
	if (err)
		return err;
	j->errno_addr = rv;
	err = inj_mem_read(j, j->errno_addr, &j->errno_val, sizeof(j->errno_val));
	if (err)
		return inj_fail(j, err, "cannot read errno of process %d (%s): %s", j->pid, j->comm,
				strerror(-err));
	j->errno_saved = true;
	err = inj_memfd(j);
	if (err)
		return err;
	err = inj_copy_lib(j);
	if (!err)
		err = inj_dlopen(j);
	/* The mapping keeps the file alive; the descriptor would leak into the program. */
	if (j->stopped &&
	    !inj_call(j, "close", j->fn.close, CALL_TIMEOUT_NS, &rv, (uint64_t)j->remote_fd, 0, 0))
		j->remote_fd = -1;
	return err;
}

/* The one way out once attached: errno, registers and FPU back, then detach. */
static void inj_cleanup(struct inj *j)
{
	int err;

	if (!j->seized)
		return;
	if (!j->stopped) {
		/* Only after a timeout; this thread's exit detaches (and cancels our stop). */
		if (j->modified)
			inj_fail(j, -ETIMEDOUT,
				 "thread %d of process %d (%s) is running our call and cannot be "
				 "stopped: it is left as is",
				 j->tid, j->pid, j->comm);
		return;
	}
	if (j->errno_saved && inj_mem_write(j, j->errno_addr, &j->errno_val, sizeof(j->errno_val)))
		gt_warn("inject: cannot restore errno of process %d", j->pid);
	if (j->modified) {
		err = inj_restore(j);
		if (err)
			j->ret = inj_fail(j, err,
					  "cannot restore the registers of thread %d of "
					  "process %d (%s): %s",
					  j->tid, j->pid, j->comm, strerror(-err));
	}
	if (ptrace(PTRACE_DETACH, j->tid, NULL, NULL) && errno != ESRCH)
		gt_warn("inject: PTRACE_DETACH of thread %d failed: %s", j->tid, strerror(errno));
	j->seized = j->stopped = false;
}

static void *inj_session(void *arg)
{
	struct inj *j = arg;
	uint64_t t0 = gt_now_mono_ns();
	char dur[32];

	j->tracer = (pid_t)syscall(SYS_gettid);
	j->ret = inj_attach(j);
	if (!j->ret)
		j->ret = inj_calls(j);
	inj_cleanup(j);
	/* Paths that only saw the thread vanish set no message of their own. */
	if (j->ret == -ESRCH)
		inj_fail(j, -ESRCH, "process %d (%s) exited during the injection", j->pid, j->comm);
	else if (j->ret)
		inj_fail(j, j->ret, "live attach to process %d (%s) failed: %s", j->pid, j->comm,
			 strerror(-j->ret));
	if (!j->ret)
		gt_dbg("inject: loaded %s into process %d (%s) through thread %d, stopped for %s",
		       j->lib, j->pid, j->comm, j->tid,
		       gt_fmt_dur(gt_now_mono_ns() - t0, dur, sizeof(dur)));
	return NULL;
}

/*
 * pthread_join returns once the attach thread released its memory, a moment
 * before the kernel detaches its tracees: wait for that, so that the caller
 * may attach again at once.
 */
static void wait_untraced(struct inj *j)
{
	char buf[8192];
	int i;

	for (i = 0; i < 200; i++) {
		if (procfs_status_read(j->tid, 0, buf, sizeof(buf)) <= 0 ||
		    procfs_status_long(buf, "TracerPid", 0) != j->tracer)
			return;
		inj_nap(NSEC_PER_MSEC);
	}
}

int inject_library(pid_t pid, const char *lib_path, char *err, size_t errlen)
{
	sigset_t all, old;
	struct inj *j;
	pthread_t th;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	j = gt_xcalloc(1, sizeof(*j));
	j->pid = pid;
	j->lib = lib_path;
	j->err = err;
	j->errlen = errlen;
	j->lib_fd = -1;
	j->remote_fd = -1;
	if (pid <= 0 || !lib_path || !*lib_path) {
		ret = inj_fail(j, -EINVAL, "invalid pid %d or empty library path", pid);
		goto out;
	}
	ret = inj_check_process(j);
	if (ret)
		goto out;
	/* Memory and files are read through the thread: a zombie leader has neither. */
	j->tid = inj_pick_thread(j);
	ret = inj_check_arch(j);
	if (!ret)
		ret = inj_open_lib(j);
	if (ret)
		goto out;
	if (inj_lib_loaded(j)) {
		gt_dbg("inject: %s is already loaded in process %d (%s)", lib_path, pid, j->comm);
		goto out;
	}
	ret = inj_find_fns(j);
	if (ret)
		goto out;
	j->xstate = gt_xmalloc(XSTATE_BUF);
	/*
	 * A thread of its own is the tracer: if the target never stops, that
	 * thread's exit detaches it and cancels the pending stop, which no
	 * ptrace request can do on a running tracee.  It takes no signals.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&th, NULL, inj_session, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		ret = inj_fail(j, -ret, "cannot start the attach thread: %s", strerror(ret));
		goto out;
	}
	pthread_join(th, NULL);
	if (j->seized)
		wait_untraced(j);
	ret = j->ret;
out:
	if (j->lib_fd >= 0)
		close(j->lib_fd);
	free(j->xstate);
	free(j);
	return ret;
}

#else /* !__x86_64__ */

int inject_library(pid_t pid, const char *lib_path, char *err, size_t errlen)
{
	if (err && errlen)
		snprintf(err, errlen,
			 "live attach is implemented for x86-64 only: start the program under "
			 "gaptrace instead (gaptrace record -- COMMAND)");
	return -EOPNOTSUPP;
}

#endif /* __x86_64__ */
