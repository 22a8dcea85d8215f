// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inject_check.c: what live attach checks before it touches the target: the
 * process (its /proc status, comm, capabilities), the architecture, whether
 * the library is already loaded, the libc functions to call, which thread to
 * borrow and whether its signal setup allows it.
 */
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
#include "symbols/live.h"
#include "support/procfs.h"
#include "support/safeopen.h"
#include "support/util.h"

#if defined(__x86_64__)

/* ---- /proc helpers ---- */

bool inj_has_cap_sys_ptrace(void)
{
	char buf[8192];

	if (procfs_status_read(0, 0, buf, sizeof(buf)) <= 0)
		return false;
	return procfs_status_hex(buf, "CapEff") & (1ULL << 19);
}

int inj_fail_traced(struct inj *j, long tracer)
{
	char tcomm[32];

	if (!procfs_comm((pid_t)tracer, 0, tcomm, sizeof(tcomm)))
		snprintf(tcomm, sizeof(tcomm), "?");
	return inj_fail(j, -EPERM,
			"process %d (%s) is already traced by process %ld (%s): a process "
			"has one tracer at a time, detach it (quit gdb/strace) and retry",
			j->pid, j->comm, tracer, tcomm);
}

/* ---- checks before touching the target ---- */

int inj_check_process(struct inj *j)
{
	char path[64], buf[8192], state[32];
	long n, tgid, tracer, ppid;

	procfs_path(path, sizeof(path), j->pid, 0, "status");
	n = procfs_status_read(j->pid, 0, buf, sizeof(buf));
	if (n == -ENOENT || n == -ESRCH)
		return inj_fail(
		    j, -ESRCH,
		    "no process with pid %d: check the pid (the process may have exited)", j->pid);
	if (n < 0)
		return inj_fail(j, (int)n, "cannot read %s: %s", path, strerror((int)-n));
	if (!procfs_status_field(buf, "Name", j->comm, sizeof(j->comm)))
		snprintf(j->comm, sizeof(j->comm), "?");
	tgid = procfs_status_long(buf, "Tgid", j->pid);
	if (tgid != j->pid)
		return inj_fail(j, -EINVAL,
				"%d is a thread of process %ld, not a process: pass %ld", j->pid,
				tgid, tgid);
	if (j->pid == getpid())
		return inj_fail(j, -EINVAL, "process %d is gaptrace itself: pass the target's pid",
				j->pid);
	if (!procfs_status_field(buf, "State", state, sizeof(state)))
		state[0] = '\0';
	/* A leader that called pthread_exit is a zombie while its other threads run. */
	if ((state[0] == 'Z' || state[0] == 'X') && !procfs_live_thread(j->pid, 0))
		return inj_fail(j, -ESRCH,
				"process %d (%s) has exited (zombie): nothing to attach to", j->pid,
				j->comm);
	/* A vfork child runs in its parent's memory: a dlopen there would be the parent's. */
	ppid = procfs_status_long(buf, "PPid", 0);
	if (ppid > 0 && syscall(SYS_kcmp, j->pid, (pid_t)ppid, KCMP_VM, 0, 0) == 0)
		return inj_fail(j, -EBUSY,
				"process %d (%s) shares its memory with its parent %ld (a vfork "
				"child about to exec): retry in a moment",
				j->pid, j->comm, ppid);
	tracer = procfs_status_long(buf, "TracerPid", 0);
	if (tracer)
		return inj_fail_traced(j, tracer);
	if (state[0] == 'T')
		return inj_fail(j, -EAGAIN,
				"process %d (%s) is stopped (job control): resume it with "
				"'kill -CONT %d' and retry",
				j->pid, j->comm, j->pid);
	return 0;
}

static const char *elf_machine_name(unsigned char cls, unsigned int machine)
{
	switch (machine) {
	case EM_386:
		return "32-bit x86";
	case EM_X86_64:
		return cls == ELFCLASS32 ? "x32" : "x86-64";
	case EM_AARCH64:
		return "arm64";
	case EM_ARM:
		return "32-bit arm";
	case EM_PPC64:
		return "ppc64";
	case EM_S390:
		return "s390";
	case EM_RISCV:
		return "riscv";
	default:
		return "foreign-architecture";
	}
}

/* Reads enough of an ELF header to know class, machine and type. */
static int read_ehdr(int fd, unsigned char *cls, unsigned int *machine, unsigned int *type)
{
	Elf64_Ehdr eh;

	if (pread(fd, &eh, sizeof(eh), 0) < (ssize_t)offsetof(Elf64_Ehdr, e_version))
		return -ENOEXEC;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return -ENOEXEC;
	/* e_type and e_machine sit at the same offsets in both classes. */
	*cls = eh.e_ident[EI_CLASS];
	*machine = eh.e_machine;
	*type = eh.e_type;
	return 0;
}

int inj_check_arch(struct inj *j)
{
	unsigned int machine, type;
	unsigned char cls;
	char path[64];
	int fd, err;

	procfs_path(path, sizeof(path), j->tid, 0, "exe");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return inj_fail(j, -EINVAL,
					"process %d (%s) has no executable (a kernel thread, or it "
					"is exiting): nothing to attach to",
					j->pid, j->comm);
		return inj_fail(j, -errno, "cannot open %s: %s (run gaptrace as root)", path,
				strerror(errno));
	}
	err = read_ehdr(fd, &cls, &machine, &type);
	close(fd);
	if (err)
		return inj_fail(j, -ENOEXEC,
				"process %d (%s) does not run an ELF executable: live attach "
				"supports x86-64 ELF programs only",
				j->pid, j->comm);
	if (cls != ELFCLASS64 || machine != EM_X86_64)
		return inj_fail(j, -ENOEXEC,
				"process %d (%s) is a %s program: live attach supports x86-64 "
				"programs only",
				j->pid, j->comm, elf_machine_name(cls, machine));
	return 0;
}

int inj_open_lib(struct inj *j)
{
	unsigned int machine, type;
	unsigned char cls;
	struct stat st;

	j->lib_fd = open(j->lib, O_RDONLY | O_CLOEXEC);
	if (j->lib_fd < 0)
		return inj_fail(j, -errno, "cannot open the library %s: %s", j->lib,
				strerror(errno));
	if (fstat(j->lib_fd, &st) || !S_ISREG(st.st_mode))
		return inj_fail(j, -EINVAL, "%s is not a regular file: pass the shared library",
				j->lib);
	j->lib_size = (uint64_t)st.st_size;
	if (read_ehdr(j->lib_fd, &cls, &machine, &type) || cls != ELFCLASS64 ||
	    machine != EM_X86_64 || type != ET_DYN)
		return inj_fail(j, -ENOEXEC,
				"%s is not an x86-64 shared library: pass the .so built for "
				"this host",
				j->lib);
	return 0;
}

static bool same_bytes(int a, int b, uint64_t size)
{
	char *x = gt_xmalloc(COPY_CHUNK), *y = gt_xmalloc(COPY_CHUNK);
	bool same = true;
	uint64_t off;

	for (off = 0; same && off < size; off += COPY_CHUNK) {
		size_t n = (size_t)GT_MIN((uint64_t)COPY_CHUNK, size - off);

		same = pread(a, x, n, (off_t)off) == (ssize_t)n &&
		       pread(b, y, n, (off_t)off) == (ssize_t)n && !memcmp(x, y, n);
	}
	free(x);
	free(y);
	return same;
}

/*
 * True if the library is mapped in the target already: the same file, or an
 * earlier injection's memfd with the same bytes.  Each memfd is a new inode,
 * so glibc would load it again as a second copy, constructors and all.
 */
bool inj_lib_loaded(struct inj *j)
{
	static const char memfd_prefix[] = "/memfd:" MEMFD_NAME " ";
	struct procfs_maps it;
	struct procfs_map m;
	bool found = false;
	struct stat st;

	if (fstat(j->lib_fd, &st))
		return false;
	if (procfs_maps_open(&it, j->tid, 0))
		return false;
	while (!found && procfs_maps_next(&it, &m)) {
		struct stat mst;
		int fd;

		if (m.inode == st.st_ino && m.dev_major == major(st.st_dev) &&
		    m.dev_minor == minor(st.st_dev)) {
			found = true;
			break;
		}
		if (m.offset || strncmp(m.path, memfd_prefix, sizeof(memfd_prefix) - 1))
			continue;
		/* The target chose what lies there: a regular file, never a device. */
		fd = safeopen_map_files(j->tid, m.start, m.end, &mst);
		if (fd < 0)
			continue;
		found =
		    (uint64_t)mst.st_size == j->lib_size && same_bytes(fd, j->lib_fd, j->lib_size);
		close(fd);
	}
	procfs_maps_close(&it);
	return found;
}

/* Looks a function up in the target's libc, whatever its file is called. */
static int find_libc_sym(struct inj *j, const char *name, uint64_t *addr)
{
	static const char *const prefixes[] = {"libc.so.", "libc-2."};
	size_t i;
	int err = -ENXIO;

	for (i = 0; i < GT_ARRAY_SIZE(prefixes) && err == -ENXIO; i++)
		err = syms_find_symbol((uint32_t)j->tid, prefixes[i], name, addr);
	return err;
}

int inj_find_fns(struct inj *j)
{
	struct inj_fns *fn = &j->fn;
	int err;

	err = find_libc_sym(j, "close", &fn->close);
	if (err == -ENXIO)
		return inj_fail(j, -ENOEXEC,
				"process %d (%s) has no libc.so.6 mapped (statically linked, or "
				"not a glibc program): it cannot load a library; start it under "
				"gaptrace instead (gaptrace record -- COMMAND)",
				j->pid, j->comm);
	if (err == -ESRCH)
		return inj_fail(j, -ESRCH, "process %d exited before it could be attached", j->pid);
	if (err)
		return inj_fail(j, err, "cannot read the symbols of libc in process %d (%s): %s",
				j->pid, j->comm, strerror(-err));
	err = find_libc_sym(j, "__errno_location", &fn->errno_location);
	if (!err)
		err = find_libc_sym(j, "syscall", &fn->syscall);
	if (err)
		return inj_fail(j, err,
				"libc of process %d (%s) lacks __errno_location or syscall (%s): "
				"not a glibc the attacher knows",
				j->pid, j->comm, strerror(-err));
	if (find_libc_sym(j, "memfd_create", &fn->memfd_create))
		fn->memfd_create = 0;

	/* glibc >= 2.34 has dlopen in libc; before, libdl has it if the program loaded it. */
	fn->dlopen_name = "dlopen";
	if (!find_libc_sym(j, "dlopen", &fn->dlopen)) {
		if (find_libc_sym(j, "dlerror", &fn->dlerror))
			fn->dlerror = 0;
		return 0;
	}
	if (!syms_find_symbol((uint32_t)j->tid, "libdl.so", "dlopen", &fn->dlopen)) {
		if (syms_find_symbol((uint32_t)j->tid, "libdl.so", "dlerror", &fn->dlerror))
			fn->dlerror = 0;
		return 0;
	}
	/* glibc's private entry point (what its own NSS and iconv use); no dlerror text. */
	fn->dlopen_name = "__libc_dlopen_mode";
	if (!find_libc_sym(j, "__libc_dlopen_mode", &fn->dlopen))
		return 0;
	return inj_fail(j, -ENOEXEC,
			"process %d (%s) has no dlopen in its libc or libdl: it cannot load a "
			"library; start it under gaptrace instead (gaptrace record -- COMMAND)",
			j->pid, j->comm);
}

/* ---- choosing the thread ---- */

/* Calls that a ptrace stop fails with EINTR instead of restarting (signal(7)). */
bool inj_syscall_eintr_on_stop(long nr)
{
	switch (nr) {
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
	case SYS_semop:
	case SYS_semtimedop:
	case SYS_rt_sigtimedwait:
	case SYS_io_getevents:
#ifdef SYS_io_pgetevents
	case SYS_io_pgetevents:
#endif
		return true;
	default:
		return false;
	}
}

#define SIGSEGV_BIT (1ULL << (SIGSEGV - 1))

/*
 * Our calls return through a SIGSEGV at address 0.  The kernel forces such a
 * fault through: where SIGSEGV is blocked in the thread it unblocks it (we
 * put the mask back) and resets the process's SIGSEGV action to the default,
 * which would silently remove a crash handler (Python's faulthandler, ...).
 */
static bool segv_trap_harmful(uint64_t blocked, const char *status)
{
	return (procfs_status_hex(status, "SigIgn") & SIGSEGV_BIT) ||
	       ((blocked & SIGSEGV_BIT) && (procfs_status_hex(status, "SigCgt") & SIGSEGV_BIT));
}

/*
 * 0: a good choice; 1: it waits in an EINTR-prone call; 2: our SIGSEGV trap
 * would change its signal state; -1: gone or a zombie.
 */
static int thread_rank(pid_t pid, pid_t tid)
{
	struct procfs_stat ps;
	char buf[8192];

	procfs_stat_read(pid, tid, &ps);
	if (!ps.state || ps.state == 'Z' || ps.state == 'X')
		return -1;
	if (procfs_status_read(pid, tid, buf, sizeof(buf)) > 0 &&
	    segv_trap_harmful(procfs_status_hex(buf, "SigBlk"), buf))
		return 2;
	if (procfs_read(pid, tid, "syscall", buf, sizeof(buf)) > 0 && buf[0] >= '0' &&
	    buf[0] <= '9' && inj_syscall_eintr_on_stop(strtol(buf, NULL, 10)))
		return 1;
	return 0;
}

/*
 * The main thread unless it has exited (pthread_exit leaves a zombie leader),
 * waits in a call that our stop would fail with EINTR, or blocks a caught
 * SIGSEGV; then the best other one.
 */
pid_t inj_pick_thread(struct inj *j)
{
	pid_t best = j->pid, tid;
	struct procfs_tasks it;
	int best_rank, r;

	best_rank = thread_rank(j->pid, j->pid);
	if (best_rank == 0)
		return j->pid;
	if (best_rank < 0)
		best_rank = INT_MAX;
	if (procfs_tasks_open(&it, j->pid))
		return j->pid;
	while (best_rank && (tid = procfs_tasks_next(&it))) {
		if (tid == j->pid)
			continue;
		r = thread_rank(j->pid, tid);
		if (r >= 0 && r < best_rank) {
			best = tid;
			best_rank = r;
		}
	}
	procfs_tasks_close(&it);
	return best;
}

/* With the thread stopped, its mask is exact: refuse if our trap would leave a trace. */
int inj_check_signals(struct inj *j)
{
	char buf[8192];

	if (ptrace(PTRACE_GETSIGMASK, j->tid, (void *)sizeof(j->sigmask), &j->sigmask))
		return inj_fail(j, -errno, "cannot read the signal mask of thread %d: %s", j->tid,
				strerror(errno));
	j->mask_saved = true;
	if (procfs_status_read(j->tid, 0, buf, sizeof(buf)) <= 0)
		return inj_fail(j, -ESRCH, "process %d exited during the injection", j->pid);
	if (procfs_status_hex(buf, "SigIgn") & SIGSEGV_BIT)
		return inj_fail(j, -EOPNOTSUPP,
				"process %d (%s) ignores SIGSEGV, and the fault that ends our "
				"remote calls would reset that to the default action: start it "
				"under gaptrace instead (gaptrace record -- COMMAND)",
				j->pid, j->comm);
	if (segv_trap_harmful(j->sigmask, buf))
		return inj_fail(j, -EAGAIN,
				"every thread of process %d (%s) blocks SIGSEGV while the program "
				"handles it, and the fault that ends our remote calls would reset "
				"its handler: retry when a thread unblocks it, or start the "
				"program under gaptrace (gaptrace record -- COMMAND)",
				j->pid, j->comm);
	return 0;
}

#endif /* __x86_64__ */
