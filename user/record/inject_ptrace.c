// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inject_ptrace.c: the ptrace primitives of live attach: remote memory,
 * waiting for and resuming stops, registers and FPU state (saved, set up for
 * a call, restored), the safe point outside libc and ld.so, seizing the
 * thread and making a remote function call on it.
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
#include "support/util.h"

#if defined(__x86_64__)

/* ---- remote memory ---- */

int inj_mem_write(struct inj *j, uint64_t addr, const void *buf, size_t len)
{
	struct iovec l = {(void *)buf, len}, r = {(void *)addr, len};
	size_t off;

	if (process_vm_writev(j->tid, &l, 1, &r, 1, 0) == (ssize_t)len)
		return 0;
	/* process_vm_writev may be filtered (seccomp); POKEDATA works on the stop we hold. */
	for (off = 0; off < len; off += sizeof(long)) {
		size_t n = GT_MIN(sizeof(long), len - off);
		long word = 0;

		if (n < sizeof(long)) {
			errno = 0;
			word = ptrace(PTRACE_PEEKDATA, j->tid, (void *)(addr + off), NULL);
			if (errno)
				return -errno;
		}
		memcpy(&word, (const char *)buf + off, n);
		if (ptrace(PTRACE_POKEDATA, j->tid, (void *)(addr + off), (void *)word))
			return -errno;
	}
	return 0;
}

int inj_mem_read(struct inj *j, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = {buf, len}, r = {(void *)addr, len};
	size_t off;

	if (process_vm_readv(j->tid, &l, 1, &r, 1, 0) == (ssize_t)len)
		return 0;
	for (off = 0; off < len; off += sizeof(long)) {
		long word;

		errno = 0;
		word = ptrace(PTRACE_PEEKDATA, j->tid, (void *)(addr + off), NULL);
		if (errno)
			return -errno;
		memcpy((char *)buf + off, &word, GT_MIN(sizeof(long), len - off));
	}
	return 0;
}

/* Reads a NUL-terminated string word by word: it may end just before unmapped memory. */
void inj_mem_read_str(struct inj *j, uint64_t addr, char *buf, size_t len)
{
	size_t off = 0;

	while (off + 1 < len) {
		long word;
		size_t n;

		errno = 0;
		word = ptrace(PTRACE_PEEKDATA, j->tid, (void *)(addr + off), NULL);
		if (errno)
			break;
		n = GT_MIN(sizeof(long), len - 1 - off);
		memcpy(buf + off, &word, n);
		if (memchr(&word, '\0', n))
			return;
		off += n;
	}
	buf[off] = '\0';
}

/* ---- ptrace stops ---- */

void inj_nap(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / NSEC_PER_SEC), (long)(ns % NSEC_PER_SEC)};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Waits for tid's next stop until deadline. Returns 0, -ETIMEDOUT or -ESRCH (it is gone). */
static int inj_wait(struct inj *j, uint64_t deadline, struct stop *st)
{
	uint64_t pause_ns = 50 * NSEC_PER_USEC, spin_end = gt_now_mono_ns() + SPIN_NS;
	int status;

	for (;;) {
		pid_t r = waitpid(j->tid, &status, __WALL | WNOHANG);
		uint64_t now;

		if (r == j->tid) {
			if (WIFEXITED(status) || WIFSIGNALED(status)) {
				j->seized = j->stopped = false;
				return -ESRCH;
			}
			if (WIFSTOPPED(status)) {
				j->stopped = true;
				st->sig = WSTOPSIG(status);
				st->event = status >> 16;
				return 0;
			}
			continue;
		}
		if (r < 0 && errno != EINTR) {
			j->seized = j->stopped = false;
			return -ESRCH;
		}
		now = gt_now_mono_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		/*
		 * No waitpid with a timeout: poll.  A call takes ~100 us and the
		 * program is stopped meanwhile, so yield-spin first; sleeps wake
		 * up late (milliseconds in VMs).
		 */
		if (now < spin_end) {
			sched_yield();
			continue;
		}
		inj_nap(GT_MIN(pause_ns, deadline - now));
		pause_ns = GT_MIN(pause_ns * 2, NSEC_PER_MSEC);
	}
}

static int inj_resume(struct inj *j, int sig)
{
	if (ptrace(PTRACE_CONT, j->tid, NULL, (void *)(long)sig))
		return -errno;
	j->stopped = false;
	return 0;
}

static bool is_fault(int sig, const siginfo_t *si)
{
	/* Raised by the CPU (si_code > 0), not sent by kill() or a timer. */
	return (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
		sig == SIGTRAP) &&
	       si->si_code > 0;
}

/*
 * Waits until tid stops for our interrupt (or for a group stop), handing the
 * program its own signals on the way; with faults_stop, a fault also counts
 * as a stop (used to take back a thread that runs our code).
 */
static int inj_wait_interrupt(struct inj *j, uint64_t deadline, bool faults_stop)
{
	struct stop st;
	siginfo_t si;
	int err;

	for (;;) {
		err = inj_wait(j, deadline, &st);
		if (err)
			return err;
		if (st.event)
			return 0;
		if (faults_stop && !ptrace(PTRACE_GETSIGINFO, j->tid, NULL, &si) &&
		    is_fault(st.sig, &si))
			return 0;
		err = inj_resume(j, st.sig);
		if (err)
			return err == -ESRCH
				   ? err
				   : inj_fail(j, err, "PTRACE_CONT failed: %s", strerror(-err));
		/* Any ptrace stop cancels a pending interrupt: ask again. */
		if (ptrace(PTRACE_INTERRUPT, j->tid, NULL, NULL))
			return errno == ESRCH ? -ESRCH
					      : inj_fail(j, -errno, "PTRACE_INTERRUPT failed: %s",
							 strerror(errno));
	}
}

static void inj_not_stopping(struct inj *j, const char *what)
{
	char wchan[64] = "?";
	struct procfs_stat ps;

	procfs_stat_read(j->pid, j->tid, &ps);
	if (procfs_read(j->pid, j->tid, "wchan", wchan, sizeof(wchan)) <= 0 || !wchan[0])
		snprintf(wchan, sizeof(wchan), "?");
	inj_fail(j, -ETIMEDOUT,
		 "thread %d of process %d (%s) did not stop within %llu s %s (state %c, kernel "
		 "wait %s: an uninterruptible wait such as a driver call or vfork); it was left "
		 "running untouched, retry later",
		 j->tid, j->pid, j->comm, STOP_TIMEOUT_NS / NSEC_PER_SEC, what,
		 ps.state ? ps.state : '?', wchan);
}

/* ---- registers ---- */

static int inj_get_regs(struct inj *j, struct user_regs_struct *r)
{
	if (ptrace(PTRACE_GETREGS, j->tid, NULL, r))
		return inj_fail(j, -errno, "cannot read the registers of thread %d: %s", j->tid,
				strerror(errno));
	return 0;
}

static int inj_set_regs(struct inj *j, const struct user_regs_struct *r)
{
	if (ptrace(PTRACE_SETREGS, j->tid, NULL, r))
		return inj_fail(j, -errno, "cannot set the registers of thread %d: %s", j->tid,
				strerror(errno));
	return 0;
}

static int inj_save_fpu(struct inj *j)
{
	struct iovec iov = {j->xstate, XSTATE_BUF};

	/* XSAVE layout covers AVX, AVX-512 and AMX; FXSAVE only x87 and SSE. */
	if (!ptrace(PTRACE_GETREGSET, j->tid, (void *)NT_X86_XSTATE, &iov)) {
		j->xstate_len = iov.iov_len;
	} else {
		j->xstate_len = 0;
		if (ptrace(PTRACE_GETFPREGS, j->tid, NULL, &j->fpregs))
			return inj_fail(j, -errno, "cannot read the FPU state of thread %d: %s",
					j->tid, strerror(errno));
	}
	j->fpu_saved = true;
	return 0;
}

static int inj_put_fpu(struct inj *j, void *buf)
{
	struct iovec iov = {buf, j->xstate_len};

	if (j->xstate_len)
		return ptrace(PTRACE_SETREGSET, j->tid, (void *)NT_X86_XSTATE, &iov) ? -errno : 0;
	return ptrace(PTRACE_SETFPREGS, j->tid, NULL, buf) ? -errno : 0;
}

/*
 * The thread may have been stopped mid-computation with a full x87 stack or
 * FP exceptions unmasked; the calls get the ABI's entry state instead.
 */
static int inj_set_call_fpu(struct inj *j)
{
	size_t len = j->xstate_len ? j->xstate_len : sizeof(j->fpregs);
	struct user_fpregs_struct *fx;
	uint8_t *buf = gt_xmalloc(GT_MAX(len, sizeof(*fx)));
	int err;

	memcpy(buf, j->xstate_len ? (void *)j->xstate : (void *)&j->fpregs, len);
	fx = (struct user_fpregs_struct *)buf;
	fx->cwd = 0x037f;
	fx->swd = 0;
	fx->ftw = 0;
	fx->fop = 0;
	fx->mxcsr = 0x1f80;
	if (j->xstate_len >= XSAVE_HDR_OFF + 8) {
		uint64_t bv;

		/* x87 and SSE components in use, else the CPU would load their init state. */
		memcpy(&bv, buf + XSAVE_HDR_OFF, sizeof(bv));
		bv |= 3;
		memcpy(buf + XSAVE_HDR_OFF, &bv, sizeof(bv));
	}
	j->modified = true;
	err = inj_put_fpu(j, buf);
	free(buf);
	if (err)
		return inj_fail(j, err, "cannot set the FPU state of thread %d: %s", j->tid,
				strerror(-err));
	return 0;
}

int inj_restore(struct inj *j)
{
	int err = 0;

	if (j->regs_saved && ptrace(PTRACE_SETREGS, j->tid, NULL, &j->regs))
		err = -errno;
	if (j->fpu_saved) {
		int e = inj_put_fpu(j, j->xstate_len ? (void *)j->xstate : (void *)&j->fpregs);

		err = err ? err : e;
	}
	/* The return fault unblocked SIGSEGV if the thread had it blocked. */
	if (j->mask_saved &&
	    ptrace(PTRACE_SETSIGMASK, j->tid, (void *)sizeof(j->sigmask), &j->sigmask) && !err)
		err = -errno;
	if (!err)
		j->modified = false;
	return err;
}

/* ---- safe point ---- */

static bool blocked_in_syscall(const struct user_regs_struct *r)
{
	long long rax = (long long)r->rax;

	return (long long)r->orig_rax >= 0 &&
	       (rax == -ERESTARTSYS || rax == -ERESTARTNOINTR || rax == -ERESTARTNOHAND ||
		rax == -ERESTART_RESTARTBLOCK);
}

static bool signal_pending_for(struct inj *j)
{
	char buf[8192];

	if (procfs_status_read(j->pid, j->tid, buf, sizeof(buf)) <= 0)
		return true;
	return (procfs_status_hex(buf, "SigPnd") | procfs_status_hex(buf, "ShdPnd")) &
	       ~procfs_status_hex(buf, "SigBlk");
}

/* Calls that report EINTR only before doing anything, so re-issuing one is safe. */
static bool syscall_reissuable(long nr)
{
	switch (nr) {
	case SYS_read:
	case SYS_write:
	case SYS_readv:
	case SYS_writev:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_recvmmsg:
	case SYS_sendto:
	case SYS_sendmsg:
	case SYS_sendmmsg:
	case SYS_accept:
	case SYS_accept4:
		return true;
	default:
		return inj_syscall_eintr_on_stop(nr);
	}
}

/*
 * Our stop makes some calls (epoll_wait, semop, sigtimedwait, socket calls
 * with timeouts) fail with EINTR, which the kernel does not restart.  With no
 * signal pending, that EINTR can only be ours: re-issue the call instead, as
 * the kernel does for -ERESTARTNOHAND.  Not for calls such as close or
 * connect, whose EINTR comes after they took effect.
 */
static int inj_undo_eintr(struct inj *j)
{
	uint8_t insn[2];

	if ((long long)j->regs.orig_rax < 0 || (long long)j->regs.rax != -EINTR ||
	    !syscall_reissuable((long)j->regs.orig_rax) || signal_pending_for(j))
		return 0;
	/* The call must have come from a syscall instruction (0f 05) we can step back over. */
	if (inj_mem_read(j, j->regs.rip - 2, insn, sizeof(insn)) || insn[0] != 0x0f ||
	    insn[1] != 0x05)
		return 0;
	j->regs.rax = j->regs.orig_rax;
	j->regs.rip -= 2;
	j->restarted = true;
	return inj_set_regs(j, &j->regs);
}

static bool is_runtime_lib(const char *path)
{
	static const char *const prefixes[] = {"libc.so", "libc-",	"ld-linux",
					       "ld-2.",	  "libpthread", "libdl"};
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; i < GT_ARRAY_SIZE(prefixes); i++)
		if (!strncmp(base, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/*
 * dlopen takes the loader lock and calls malloc: a thread stopped inside libc
 * or ld.so code may hold those very locks and would deadlock on itself.  A
 * thread blocked in a system call holds none that matter.  The stack below
 * it must also have room (not a small signal or coroutine stack).
 */
static bool inj_safe_point(struct inj *j, const char **why)
{
	uint64_t sp = j->regs.rsp - RED_ZONE - SCRATCH_LEN - 64;
	bool blocked = j->restarted || blocked_in_syscall(&j->regs);
	bool risky = false, stack_ok = false;
	struct procfs_maps it;
	struct procfs_map m;

	if (procfs_maps_open(&it, j->tid, 0)) {
		*why = "its memory map cannot be read";
		return false;
	}
	while (procfs_maps_next(&it, &m)) {
		if (!blocked && m.exec && j->regs.rip >= m.start && j->regs.rip < m.end)
			risky = is_runtime_lib(m.path);
		if (sp >= m.start && sp < m.end)
			stack_ok = !strncmp(m.path, "[stack", 6) || sp - m.start >= STACK_NEED;
	}
	procfs_maps_close(&it);
	if (risky)
		*why = "it was running libc or ld.so code (it may hold their locks)";
	else if (!stack_ok)
		*why = "it was on a small stack (a signal handler or coroutine)";
	return !risky && stack_ok;
}

/* ---- attaching ---- */

static int inj_seize_error(struct inj *j, int e)
{
	char buf[8192], scope[16] = "0";
	long tracer;

	if (e == ESRCH)
		return inj_fail(j, -ESRCH, "process %d exited before it could be attached", j->pid);
	if (e != EPERM)
		return inj_fail(j, -e, "PTRACE_SEIZE of process %d (%s) failed: %s", j->pid,
				j->comm, strerror(e));
	tracer = procfs_status_read(j->tid, 0, buf, sizeof(buf)) > 0
		     ? procfs_status_long(buf, "TracerPid", 0)
		     : 0;
	if (tracer)
		return inj_fail_traced(j, tracer);
	if (gt_read_file("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof(scope)) > 0 &&
	    scope[0] == '3')
		return inj_fail(j, -EPERM,
				"ptrace is disabled on this host (kernel.yama.ptrace_scope = 3, "
				"only a reboot lowers it): start the program under gaptrace "
				"instead (gaptrace record -- COMMAND)");
	scope[strcspn(scope, "\n")] = '\0';
	if (!inj_has_cap_sys_ptrace())
		return inj_fail(j, -EPERM,
				"not permitted to ptrace process %d (%s) (kernel.yama.ptrace_scope "
				"= %s): run gaptrace as root (it needs CAP_SYS_PTRACE)",
				j->pid, j->comm, scope);
	return inj_fail(j, -EPERM,
			"not permitted to ptrace process %d (%s) although gaptrace has "
			"CAP_SYS_PTRACE: a security module (SELinux, AppArmor), seccomp or a "
			"container boundary forbids it; start the program under gaptrace instead",
			j->pid, j->comm);
}

static int inj_interrupt(struct inj *j, const char *what)
{
	int err;

	if (ptrace(PTRACE_INTERRUPT, j->tid, NULL, NULL))
		return errno == ESRCH
			   ? -ESRCH
			   : inj_fail(j, -errno, "PTRACE_INTERRUPT of thread %d failed: %s", j->tid,
				      strerror(errno));
	err = inj_wait_interrupt(j, gt_now_mono_ns() + STOP_TIMEOUT_NS, false);
	if (err == -ETIMEDOUT)
		inj_not_stopping(j, what);
	return err;
}

/* Seizes tid and stops it at a point where it may safely call dlopen. */
int inj_attach(struct inj *j)
{
	uint64_t deadline = 0;
	const char *why = "";
	unsigned int tries;
	int err;

	if (ptrace(PTRACE_SEIZE, j->tid, NULL, NULL))
		return inj_seize_error(j, errno);
	j->seized = true;
	for (tries = 1;; tries++) {
		err = inj_interrupt(j, tries == 1 ? "after PTRACE_INTERRUPT" : "on a retry");
		if (err)
			return err;
		if (tries == 1)
			deadline = gt_now_mono_ns() + SAFE_BUDGET_NS;
		err = inj_get_regs(j, &j->regs);
		if (err)
			return err;
		j->restarted = false;
		err = inj_undo_eintr(j);
		if (err)
			return err;
		if (inj_safe_point(j, &why))
			break;
		if (gt_now_mono_ns() >= deadline)
			return inj_fail(j, -EAGAIN,
					"thread %d of process %d (%s) was never at a safe point in "
					"%u tries over %llu s (%s): retry",
					j->tid, j->pid, j->comm, tries,
					SAFE_BUDGET_NS / NSEC_PER_SEC, why);
		err = inj_resume(j, 0);
		if (err)
			return err;
		/* Uneven pauses, so a periodic program is not caught at the same spot. */
		inj_nap(500 * NSEC_PER_USEC + (tries * 389 * NSEC_PER_USEC) % (2 * NSEC_PER_MSEC));
	}
	j->regs_saved = true;
	err = inj_check_signals(j);
	if (err)
		return err;
	if (j->regs.cs != USER_CS_64)
		return inj_fail(j, -ENOEXEC,
				"thread %d of process %d (%s) runs 32-bit code (cs %#llx): live "
				"attach supports x86-64 code only",
				j->tid, j->pid, j->comm, j->regs.cs);
	err = inj_save_fpu(j);
	if (err)
		return err;
	/* Below the red zone the interrupted code keeps nothing: strings, then the frame. */
	j->scratch = ((j->regs.rsp - RED_ZONE) & ~15ULL) - SCRATCH_LEN;
	j->call_sp = j->scratch - 8;
	gt_dbg("inject: stopped thread %d of process %d at %#llx (%s) after %u tries", j->tid,
	       j->pid, j->regs.rip,
	       blocked_in_syscall(&j->regs) || j->restarted ? "in a system call" : "in user code",
	       tries);
	return inj_set_call_fpu(j);
}

/* ---- remote calls ---- */

static int inj_call_timeout(struct inj *j, const char *what, uint64_t timeout_ns)
{
	int err;

	if (ptrace(PTRACE_INTERRUPT, j->tid, NULL, NULL) == 0) {
		err = inj_wait_interrupt(j, gt_now_mono_ns() + STOP_TIMEOUT_NS, true);
		if (!err)
			return inj_fail(j, -ETIMEDOUT,
					"%s did not return within %llu s in process %d (%s): the "
					"thread was probably stopped holding a lock it needs; the "
					"call was abandoned and the thread restored, but the "
					"program may now deadlock on that lock",
					what, timeout_ns / NSEC_PER_SEC, j->pid, j->comm);
	}
	return inj_fail(j, -ETIMEDOUT,
			"%s did not return within %llu s in process %d (%s) and the thread "
			"cannot be stopped: it will crash if the call ever returns",
			what, timeout_ns / NSEC_PER_SEC, j->pid, j->comm);
}

/*
 * Calls fn(a0, a1, a2) on the stopped thread and sets *ret to rax.  The call
 * returns to address 0; the fault it takes there is our signal that it is
 * done, and is never delivered.
 */
int inj_call(struct inj *j, const char *what, uint64_t fn, uint64_t timeout_ns, uint64_t *ret,
	     uint64_t a0, uint64_t a1, uint64_t a2)
{
	uint64_t deadline = gt_now_mono_ns() + timeout_ns, zero = 0;
	struct user_regs_struct r = j->regs, cur;
	struct stop st;
	siginfo_t si;
	int err, sig = 0;

	err = inj_mem_write(j, j->call_sp, &zero, sizeof(zero));
	if (err)
		return inj_fail(j, err, "cannot write to the stack of process %d (%s): %s", j->pid,
				j->comm, strerror(-err));
	r.rip = fn;
	r.rdi = a0;
	r.rsi = a1;
	r.rdx = a2;
	r.rsp = j->call_sp;
	/* Variadic callees (syscall()) read al as the number of vector arguments. */
	r.rax = 0;
	/* -1: not in a syscall, so no restart logic touches the call. */
	r.orig_rax = (unsigned long long)-1;
	/* The ABI wants DF clear at a call; TF would trap at every instruction. */
	r.eflags &= ~(X86_EFLAGS_DF | X86_EFLAGS_TF);
	j->modified = true;
	err = inj_set_regs(j, &r);
	if (err)
		return err;
	for (;;) {
		err = inj_resume(j, sig);
		if (!err)
			err = inj_wait(j, deadline, &st);
		if (err == -ETIMEDOUT)
			return inj_call_timeout(j, what, timeout_ns);
		if (err == -ESRCH)
			return inj_fail(j, -ESRCH,
					"process %d (%s) exited during the injection "
					"(while calling %s)",
					j->pid, j->comm, what);
		if (err)
			return inj_fail(j, err, "PTRACE_CONT failed: %s", strerror(-err));
		sig = 0;
		/* A group stop (SIGSTOP from someone) is honoured again after we detach. */
		if (st.event)
			continue;
		if (ptrace(PTRACE_GETSIGINFO, j->tid, NULL, &si))
			return inj_fail(j, -errno, "PTRACE_GETSIGINFO failed: %s", strerror(errno));
		if (!is_fault(st.sig, &si)) {
			/* The program's own signal: its handler runs on top of our call. */
			sig = st.sig;
			continue;
		}
		err = inj_get_regs(j, &cur);
		if (err)
			return err;
		if (st.sig == SIGSEGV && cur.rip == 0) {
			*ret = cur.rax;
			return 0;
		}
		return inj_fail(j, -EFAULT,
				"%s crashed in process %d (%s) with %s at %#llx; the thread was "
				"restored, but the program may be left inconsistent",
				what, j->pid, j->comm, strsignal(st.sig), cur.rip);
	}
}

int inj_remote_errno(struct inj *j)
{
	int e = 0;

	if (!j->errno_addr || inj_mem_read(j, j->errno_addr, &e, sizeof(e)))
		return 0;
	return e;
}

#endif /* __x86_64__ */
