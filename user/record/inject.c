// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inject.c: live attach.  Borrows one thread of a running x86-64 glibc program
 * through ptrace, makes it dlopen a memfd copy of our library, then restores it.
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
#include "symbols/syms.h"
#include "support/util.h"

#if defined(__x86_64__)

/* How long the thread may take to stop at all (else: an uninterruptible wait). */
#define STOP_TIMEOUT_NS (2 * NSEC_PER_SEC)
/* How long to keep trying to catch it outside libc. */
#define SAFE_BUDGET_NS	(1 * NSEC_PER_SEC)
#define CALL_TIMEOUT_NS (2 * NSEC_PER_SEC)
/* How long a wait polls without sleeping. */
#define SPIN_NS (500 * NSEC_PER_USEC)
/* dlopen runs the library's constructors, which may initialise CUPTI. */
#define DLOPEN_TIMEOUT_NS (20 * NSEC_PER_SEC)

#define RED_ZONE	 128
#define SCRATCH_LEN	 256
#define SCRATCH_PATH_OFF 64
/* Stack dlopen and a constructor may use; small stacks are signal or coroutine stacks. */
#define STACK_NEED (64 * 1024)
/* Room for the XSAVE image of any current CPU (AMX tiles: ~11 KiB). */
#define XSTATE_BUF    (64 * 1024)
#define XSAVE_HDR_OFF 512
#define COPY_CHUNK    (1 << 20)
#define NAME_TRIES    16
#define ERRMSG_MAX    512

#define MEMFD_NAME GT_INJECT_MEMFD_NAME
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

/* Kernel-internal codes a syscall interrupted by a stop returns; never seen by programs. */
#define ERESTARTSYS	      512
#define ERESTARTNOINTR	      513
#define ERESTARTNOHAND	      514
#define ERESTART_RESTARTBLOCK 516

#define X86_EFLAGS_TF 0x100ULL
#define X86_EFLAGS_DF 0x400ULL
#define USER_CS_64    0x33ULL

struct inj_fns {
	uint64_t errno_location;
	uint64_t memfd_create; /* 0: through syscall() (glibc < 2.27) */
	uint64_t syscall;
	uint64_t dlopen;
	uint64_t dlerror; /* 0: no error text (old glibc without libdl) */
	uint64_t close;
	const char *dlopen_name;
};

struct inj {
	pid_t pid, tid;
	const char *lib;
	int lib_fd;
	uint64_t lib_size;
	char comm[32];
	struct inj_fns fn;
	char *err;
	size_t errlen;
	int ret;

	bool seized;  /* we trace tid */
	bool stopped; /* tid sits in a ptrace stop */
	bool regs_saved;
	bool fpu_saved;
	bool modified;	/* tid's registers or FPU state differ from the saved ones */
	bool restarted; /* we turned a stop-induced EINTR into a restart */
	bool mask_saved;
	uint64_t sigmask;	      /* tid's blocked signals */
	struct user_regs_struct regs; /* what tid gets back */
	uint8_t *xstate;
	size_t xstate_len; /* 0: FPU state in fpregs instead */
	struct user_fpregs_struct fpregs;
	uint64_t scratch, call_sp;
	uint64_t errno_addr;
	int errno_val;
	bool errno_saved;
	int remote_fd;
	pid_t tracer; /* the attach thread */
};

struct stop {
	int sig;
	int event; /* PTRACE_EVENT_STOP: interrupt or group stop; 0: a signal */
};

static int inj_fail(struct inj *j, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Keeps the first message: later failures are consequences. */
static int inj_fail(struct inj *j, int err, const char *fmt, ...)
{
	va_list ap;

	if (j->err && j->errlen && !j->err[0]) {
		va_start(ap, fmt);
		vsnprintf(j->err, j->errlen, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* ---- /proc helpers ---- */

/* Copies the value of "key:" from a /proc status text, leading blanks skipped. */
static bool status_field(const char *text, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			size_t n;

			p += klen + 1;
			p += strspn(p, " \t");
			n = strcspn(p, "\n");
			n = GT_MIN(n, len - 1);
			memcpy(out, p, n);
			out[n] = '\0';
			return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

static long status_long(const char *text, const char *key, long dflt)
{
	char val[64];

	return status_field(text, key, val, sizeof(val)) ? strtol(val, NULL, 10) : dflt;
}

static uint64_t status_hex(const char *text, const char *key)
{
	char val[64];

	return status_field(text, key, val, sizeof(val)) ? strtoull(val, NULL, 16) : 0;
}

static void proc_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	long n;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	n = gt_read_file(path, buf, len);
	if (n <= 0) {
		snprintf(buf, len, "?");
		return;
	}
	buf[strcspn(buf, "\n")] = '\0';
}

/* State letter of a thread ('R', 'S', 'D', 'Z', ...), or 0 if it is gone. */
static char thread_state(pid_t pid, pid_t tid)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (gt_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	/* comm may hold spaces and parentheses: the state follows the last ')'. */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static bool live_thread(pid_t pid)
{
	struct dirent *de;
	bool live = false;
	char path[64];
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!live && (de = readdir(d))) {
		pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);
		char s = tid > 0 ? thread_state(pid, tid) : 0;

		live = s && s != 'Z' && s != 'X';
	}
	closedir(d);
	return live;
}

static bool has_cap_sys_ptrace(void)
{
	char buf[8192];

	if (gt_read_file("/proc/self/status", buf, sizeof(buf)) <= 0)
		return false;
	return status_hex(buf, "CapEff") & (1ULL << 19);
}

/* ---- remote memory ---- */

static int mem_write(struct inj *j, uint64_t addr, const void *buf, size_t len)
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

static int mem_read(struct inj *j, uint64_t addr, void *buf, size_t len)
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
static void mem_read_str(struct inj *j, uint64_t addr, char *buf, size_t len)
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

/* ---- checks before touching the target ---- */

static int inj_check_process(struct inj *j)
{
	char path[64], buf[8192], state[32], tcomm[32];
	long n, tgid, tracer, ppid;

	snprintf(path, sizeof(path), "/proc/%d/status", j->pid);
	n = gt_read_file(path, buf, sizeof(buf));
	if (n == -ENOENT || n == -ESRCH)
		return inj_fail(
		    j, -ESRCH,
		    "no process with pid %d: check the pid (the process may have exited)", j->pid);
	if (n < 0)
		return inj_fail(j, (int)n, "cannot read %s: %s", path, strerror((int)-n));
	if (!status_field(buf, "Name", j->comm, sizeof(j->comm)))
		snprintf(j->comm, sizeof(j->comm), "?");
	tgid = status_long(buf, "Tgid", j->pid);
	if (tgid != j->pid)
		return inj_fail(j, -EINVAL,
				"%d is a thread of process %ld, not a process: pass %ld", j->pid,
				tgid, tgid);
	if (j->pid == getpid())
		return inj_fail(j, -EINVAL, "process %d is gaptrace itself: pass the target's pid",
				j->pid);
	if (!status_field(buf, "State", state, sizeof(state)))
		state[0] = '\0';
	/* A leader that called pthread_exit is a zombie while its other threads run. */
	if ((state[0] == 'Z' || state[0] == 'X') && !live_thread(j->pid))
		return inj_fail(j, -ESRCH,
				"process %d (%s) has exited (zombie): nothing to attach to", j->pid,
				j->comm);
	/* A vfork child runs in its parent's memory: a dlopen there would be the parent's. */
	ppid = status_long(buf, "PPid", 0);
	if (ppid > 0 && syscall(SYS_kcmp, j->pid, (pid_t)ppid, KCMP_VM, 0, 0) == 0)
		return inj_fail(j, -EBUSY,
				"process %d (%s) shares its memory with its parent %ld (a vfork "
				"child about to exec): retry in a moment",
				j->pid, j->comm, ppid);
	tracer = status_long(buf, "TracerPid", 0);
	if (tracer) {
		proc_comm((pid_t)tracer, tcomm, sizeof(tcomm));
		return inj_fail(j, -EPERM,
				"process %d (%s) is already traced by process %ld (%s): a process "
				"has one tracer at a time, detach it (quit gdb/strace) and retry",
				j->pid, j->comm, tracer, tcomm);
	}
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

static int inj_check_arch(struct inj *j)
{
	unsigned int machine, type;
	unsigned char cls;
	char path[64];
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/exe", j->tid);
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

static int inj_open_lib(struct inj *j)
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
static bool inj_lib_loaded(struct inj *j)
{
	static const char memfd_prefix[] = "/memfd:" MEMFD_NAME " ";
	char path[64], mpath[96], *line = NULL;
	size_t lcap = 0;
	bool found = false;
	struct stat st;
	FILE *f;

	if (fstat(j->lib_fd, &st))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/maps", j->tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && getline(&line, &lcap, f) > 0) {
		unsigned long long start, end, pgoff, inode;
		unsigned int maj, min;
		char perms[8];
		int n = -1, fd;
		struct stat mst;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
			   &maj, &min, &inode, &n) != 7 ||
		    n < 0)
			continue;
		if (inode == st.st_ino && maj == major(st.st_dev) && min == minor(st.st_dev)) {
			found = true;
			break;
		}
		if (pgoff || strncmp(line + n, memfd_prefix, sizeof(memfd_prefix) - 1))
			continue;
		snprintf(mpath, sizeof(mpath), "/proc/%d/map_files/%llx-%llx", j->tid, start, end);
		fd = open(mpath, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		found = !fstat(fd, &mst) && (uint64_t)mst.st_size == j->lib_size &&
			same_bytes(fd, j->lib_fd, j->lib_size);
		close(fd);
	}
	free(line);
	fclose(f);
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

static int inj_find_fns(struct inj *j)
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
static bool syscall_eintr_on_stop(long nr)
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
	return (status_hex(status, "SigIgn") & SIGSEGV_BIT) ||
	       ((blocked & SIGSEGV_BIT) && (status_hex(status, "SigCgt") & SIGSEGV_BIT));
}

/*
 * 0: a good choice; 1: it waits in an EINTR-prone call; 2: our SIGSEGV trap
 * would change its signal state; -1: gone or a zombie.
 */
static int thread_rank(pid_t pid, pid_t tid)
{
	char path[64], buf[8192];
	char s = thread_state(pid, tid);

	if (!s || s == 'Z' || s == 'X')
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	if (gt_read_file(path, buf, sizeof(buf)) > 0 &&
	    segv_trap_harmful(status_hex(buf, "SigBlk"), buf))
		return 2;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	if (gt_read_file(path, buf, sizeof(buf)) > 0 && buf[0] >= '0' && buf[0] <= '9' &&
	    syscall_eintr_on_stop(strtol(buf, NULL, 10)))
		return 1;
	return 0;
}

/*
 * The main thread unless it has exited (pthread_exit leaves a zombie leader),
 * waits in a call that our stop would fail with EINTR, or blocks a caught
 * SIGSEGV; then the best other one.
 */
static pid_t inj_pick_thread(struct inj *j)
{
	pid_t best = j->pid;
	int best_rank, r;
	struct dirent *de;
	char path[64];
	DIR *d;

	best_rank = thread_rank(j->pid, j->pid);
	if (best_rank == 0)
		return j->pid;
	if (best_rank < 0)
		best_rank = INT_MAX;
	snprintf(path, sizeof(path), "/proc/%d/task", j->pid);
	d = opendir(path);
	if (!d)
		return j->pid;
	while (best_rank && (de = readdir(d))) {
		pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);

		if (tid <= 0 || tid == j->pid)
			continue;
		r = thread_rank(j->pid, tid);
		if (r >= 0 && r < best_rank) {
			best = tid;
			best_rank = r;
		}
	}
	closedir(d);
	return best;
}

/* With the thread stopped, its mask is exact: refuse if our trap would leave a trace. */
static int inj_check_signals(struct inj *j)
{
	char path[64], buf[8192];

	if (ptrace(PTRACE_GETSIGMASK, j->tid, (void *)sizeof(j->sigmask), &j->sigmask))
		return inj_fail(j, -errno, "cannot read the signal mask of thread %d: %s", j->tid,
				strerror(errno));
	j->mask_saved = true;
	snprintf(path, sizeof(path), "/proc/%d/status", j->tid);
	if (gt_read_file(path, buf, sizeof(buf)) <= 0)
		return inj_fail(j, -ESRCH, "process %d exited during the injection", j->pid);
	if (status_hex(buf, "SigIgn") & SIGSEGV_BIT)
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

/* ---- ptrace stops ---- */

static void nap(uint64_t ns)
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
		nap(GT_MIN(pause_ns, deadline - now));
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
	char path[64], wchan[64] = "?", state = thread_state(j->pid, j->tid);

	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", j->pid, j->tid);
	if (gt_read_file(path, wchan, sizeof(wchan)) <= 0 || !wchan[0])
		snprintf(wchan, sizeof(wchan), "?");
	inj_fail(j, -ETIMEDOUT,
		 "thread %d of process %d (%s) did not stop within %llu s %s (state %c, kernel "
		 "wait %s: an uninterruptible wait such as a driver call or vfork); it was left "
		 "running untouched, retry later",
		 j->tid, j->pid, j->comm, STOP_TIMEOUT_NS / NSEC_PER_SEC, what, state ? state : '?',
		 wchan);
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

static int inj_restore(struct inj *j)
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
	char path[64], buf[8192];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", j->pid, j->tid);
	if (gt_read_file(path, buf, sizeof(buf)) <= 0)
		return true;
	return (status_hex(buf, "SigPnd") | status_hex(buf, "ShdPnd")) & ~status_hex(buf, "SigBlk");
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
		return syscall_eintr_on_stop(nr);
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
	if (mem_read(j, j->regs.rip - 2, insn, sizeof(insn)) || insn[0] != 0x0f || insn[1] != 0x05)
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
	char path[64], *line = NULL;
	size_t lcap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", j->tid);
	f = fopen(path, "re");
	if (!f) {
		*why = "its memory map cannot be read";
		return false;
	}
	while (getline(&line, &lcap, f) > 0) {
		unsigned long long start, end;
		char perms[8];
		int n = -1;
		char *p;

		if (sscanf(line, "%llx-%llx %7s %*x %*x:%*x %*u %n", &start, &end, perms, &n) != 3)
			continue;
		p = n >= 0 ? line + n : (char *)"";
		p[strcspn(p, "\n")] = '\0';
		if (!blocked && perms[2] == 'x' && j->regs.rip >= start && j->regs.rip < end)
			risky = is_runtime_lib(p);
		if (sp >= start && sp < end)
			stack_ok = !strncmp(p, "[stack", 6) || sp - start >= STACK_NEED;
	}
	free(line);
	fclose(f);
	if (risky)
		*why = "it was running libc or ld.so code (it may hold their locks)";
	else if (!stack_ok)
		*why = "it was on a small stack (a signal handler or coroutine)";
	return !risky && stack_ok;
}

/* ---- attaching ---- */

static int inj_seize_error(struct inj *j, int e)
{
	char path[64], buf[8192], scope[16] = "0", tcomm[32];
	long tracer;

	if (e == ESRCH)
		return inj_fail(j, -ESRCH, "process %d exited before it could be attached", j->pid);
	if (e != EPERM)
		return inj_fail(j, -e, "PTRACE_SEIZE of process %d (%s) failed: %s", j->pid,
				j->comm, strerror(e));
	snprintf(path, sizeof(path), "/proc/%d/status", j->tid);
	tracer = gt_read_file(path, buf, sizeof(buf)) > 0 ? status_long(buf, "TracerPid", 0) : 0;
	if (tracer) {
		proc_comm((pid_t)tracer, tcomm, sizeof(tcomm));
		return inj_fail(j, -EPERM,
				"process %d (%s) is already traced by process %ld (%s): a process "
				"has one tracer at a time, detach it (quit gdb/strace) and retry",
				j->pid, j->comm, tracer, tcomm);
	}
	if (gt_read_file("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof(scope)) > 0 &&
	    scope[0] == '3')
		return inj_fail(j, -EPERM,
				"ptrace is disabled on this host (kernel.yama.ptrace_scope = 3, "
				"only a reboot lowers it): start the program under gaptrace "
				"instead (gaptrace record -- COMMAND)");
	scope[strcspn(scope, "\n")] = '\0';
	if (!has_cap_sys_ptrace())
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
static int inj_attach(struct inj *j)
{
	uint64_t deadline;
	const char *why = "";
	unsigned int tries;
	int err;

	if (ptrace(PTRACE_SEIZE, j->tid, NULL, NULL))
		return inj_seize_error(j, errno);
	j->seized = true;
	err = inj_interrupt(j, "after PTRACE_INTERRUPT");
	if (err)
		return err;
	deadline = gt_now_mono_ns() + SAFE_BUDGET_NS;
	for (tries = 1;; tries++) {
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
		nap(500 * NSEC_PER_USEC + (tries * 389 * NSEC_PER_USEC) % (2 * NSEC_PER_MSEC));
		err = inj_interrupt(j, "on a retry");
		if (err)
			return err;
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
static int inj_call(struct inj *j, const char *what, uint64_t fn, uint64_t timeout_ns,
		    uint64_t *ret, uint64_t a0, uint64_t a1, uint64_t a2)
{
	uint64_t deadline = gt_now_mono_ns() + timeout_ns, zero = 0;
	struct user_regs_struct r = j->regs, cur;
	struct stop st;
	siginfo_t si;
	int err, sig = 0;

	err = mem_write(j, j->call_sp, &zero, sizeof(zero));
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

static int remote_errno(struct inj *j)
{
	int e = 0;

	if (!j->errno_addr || mem_read(j, j->errno_addr, &e, sizeof(e)))
		return 0;
	return e;
}

static int inj_memfd(struct inj *j)
{
	unsigned int flags = MFD_CLOEXEC | MFD_EXEC;
	uint64_t rv = 0;
	int err, e;

	err = mem_write(j, j->scratch, MEMFD_NAME, sizeof(MEMFD_NAME));
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
		e = remote_errno(j);
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

/* Fills the target's memfd from our side: its fd reopened through /proc. */
static int inj_copy_lib(struct inj *j)
{
	char path[64], *buf;
	uint64_t off = 0;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", j->tid, j->remote_fd);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return inj_fail(j, -errno, "cannot open the memfd of process %d through %s: %s",
				j->pid, path, strerror(errno));
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
		err = mem_write(j, addr, path, strlen(path) + 1);
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
		mem_read_str(j, rv, msg, sizeof(msg));
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
	err = mem_read(j, j->errno_addr, &j->errno_val, sizeof(j->errno_val));
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
	if (j->errno_saved && mem_write(j, j->errno_addr, &j->errno_val, sizeof(j->errno_val)))
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
	char path[64], buf[8192];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/status", j->tid);
	for (i = 0; i < 200; i++) {
		if (gt_read_file(path, buf, sizeof(buf)) <= 0 ||
		    status_long(buf, "TracerPid", 0) != j->tracer)
			return;
		nap(NSEC_PER_MSEC);
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
