/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * inject_priv.h: what the live-attach files share (x86-64 only): limits and
 * register constants, the session state struct inj, and the functions that
 * cross inject.c (policy), inject_check.c (checks) and inject_ptrace.c
 * (ptrace primitives).  Included only by those three files.
 */
#ifndef GT_INJECT_PRIV_H
#define GT_INJECT_PRIV_H

#if defined(__x86_64__)

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "record/inject.h"
#include "support/util.h"

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

/* inject.c: keeps the first message (later failures are consequences); returns err. */
int inj_fail(struct inj *j, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* inject_check.c */
bool inj_has_cap_sys_ptrace(void);
int inj_check_arch(struct inj *j);
int inj_check_process(struct inj *j);
int inj_check_signals(struct inj *j);
/* Fails with the "already traced by process TRACER" message; returns -EPERM. */
int inj_fail_traced(struct inj *j, long tracer);
int inj_find_fns(struct inj *j);
bool inj_lib_loaded(struct inj *j);
int inj_open_lib(struct inj *j);
pid_t inj_pick_thread(struct inj *j);
bool inj_syscall_eintr_on_stop(long nr);

/* inject_ptrace.c */
int inj_attach(struct inj *j);
int inj_call(struct inj *j, const char *what, uint64_t fn, uint64_t timeout_ns, uint64_t *ret,
	     uint64_t a0, uint64_t a1, uint64_t a2);
int inj_restore(struct inj *j);
int inj_mem_read(struct inj *j, uint64_t addr, void *buf, size_t len);
void inj_mem_read_str(struct inj *j, uint64_t addr, char *buf, size_t len);
int inj_mem_write(struct inj *j, uint64_t addr, const void *buf, size_t len);
void inj_nap(uint64_t ns);
int inj_remote_errno(struct inj *j);

#endif /* __x86_64__ */

#endif /* GT_INJECT_PRIV_H */
