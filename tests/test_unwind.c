// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_unwind.c: DWARF unwinding of stack snapshots (registers + top of the
 * stack, as --stacks dwarf takes them) of code built without frame pointers,
 * stack interning, and the frame-pointer detector.
 */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "gaptrace/gaptrace.h"
#include "symbols/syms.h"
#include "record/unwind.h"
#include "support/util.h"

#define SNAP_BYTES 8192

static char helper_dir[PATH_MAX];

struct snap {
	uint64_t regs[GT_UREGS_NR];
	uint8_t stack[SNAP_BYTES];
	size_t len;
};

/* End of the mapping that holds addr (the stack), from /proc/self/maps. */
static uint64_t mapping_end(pid_t pid, uint64_t addr)
{
	char path[64], line[512];
	uint64_t lo, hi, end = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) == 2 && addr >= lo && addr < hi)
			end = hi;
	fclose(f);
	return end;
}

/*
 * Takes a snapshot of this thread the way the BPF side does at switch-out:
 * the callee-saved registers, sp and an ip at which they are all current,
 * then the stack from sp upward.  Built without frame pointers like the
 * functions that call it.
 */
static __attribute__((noipa, optimize("omit-frame-pointer"))) void grab(struct snap *s)
{
	uint64_t *r = s->regs, end;
	struct iovec local, remote;

	memset(r, 0, sizeof(s->regs));
	__asm__ volatile("movq %%rbx, 24(%0)\n\t"
			 "movq %%rbp, 48(%0)\n\t"
			 "movq %%rsp, 56(%0)\n\t"
			 "movq %%r12, 96(%0)\n\t"
			 "movq %%r13, 104(%0)\n\t"
			 "movq %%r14, 112(%0)\n\t"
			 "movq %%r15, 120(%0)\n\t"
			 "leaq 1f(%%rip), %%rax\n\t"
			 "movq %%rax, 128(%0)\n\t"
			 "1:\n\t"
			 :
			 : "r"(r)
			 : "rax", "memory");
	end = mapping_end(getpid(), r[7]);
	s->len = end > r[7] ? GT_MIN((size_t)(end - r[7]), sizeof(s->stack)) : 0;
	/* A raw copy of other frames: not through memcpy, which ASan checks. */
	local.iov_base = s->stack;
	local.iov_len = s->len;
	remote.iov_base = (void *)r[7];
	remote.iov_len = s->len;
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)s->len)
		s->len = 0;
}

static __attribute__((noipa, optimize("omit-frame-pointer"))) int self_f3(struct snap *s)
{
	volatile char pad[40];

	pad[1] = 3;
	grab(s);
	return pad[1];
}

static __attribute__((noipa, optimize("omit-frame-pointer"))) int self_f2(struct snap *s)
{
	volatile long spill[6];

	spill[2] = self_f3(s);
	return (int)spill[2] + 1;
}

static __attribute__((noipa, optimize("omit-frame-pointer"))) int self_f1(struct snap *s)
{
	volatile int area[50];

	area[9] = self_f2(s);
	return area[9] * 2;
}

/* Symbol names of ips[0..n) in pid, for assertions and failure messages. */
static void names_of(struct syms_cache *sc, pid_t pid, const uint64_t *ips, int n,
		     const char **names, char *line, size_t len)
{
	size_t off = 0;

	line[0] = '\0';
	for (int i = 0; i < n; i++) {
		const char *name = NULL, *module = NULL;
		uint32_t symoff;

		/* Return addresses: look up the call instruction, not the one after. */
		if (syms_cache__resolve(sc, (uint32_t)pid, i ? ips[i] - 1 : ips[i], &name, &symoff,
					&module))
			name = NULL;
		names[i] = name ? name : "?";
		off += (size_t)snprintf(line + off, len > off ? len - off : 0, "%s%s",
					i ? " <- " : "", names[i]);
	}
}

/* Index of name in names[from..n), or -1. */
static int find_name(const char **names, int n, int from, const char *name)
{
	for (int i = from; i < n; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

/* Asserts that want[] appear in names in this order (callee first). */
static void assert_chain(const char **names, int n, const char *const *want, size_t nwant,
			 const char *line)
{
	int at = 0;

	for (size_t i = 0; i < nwant; i++) {
		int k = find_name(names, n, at, want[i]);

		if (k < 0)
			fail_msg("frame %s missing or out of order in: %s", want[i], line);
		at = k + 1;
	}
}

static void test_unwind_self_snapshot(void **state)
{
	static const char *const want[] = {"grab", "self_f3", "self_f2", "self_f1",
					   "test_unwind_self_snapshot"};
	struct snap *s = calloc(1, sizeof(*s));
	struct unwinder *u = unwinder__new();
	struct syms_cache *sc = syms_cache__new();
	const char *names[64];
	uint64_t ips[64];
	char line[4096];
	int n;

	assert_non_null(s);
	assert_int_equal(self_f1(s), 8);
	assert_true(s->len >= 512);
	n = unwinder__unwind(u, (uint32_t)getpid(), (uint32_t)gettid(), s->regs, s->stack, s->len,
			     ips, 64);
	assert_true(n >= 5);
	names_of(sc, getpid(), ips, n, names, line, sizeof(line));
	print_message("self: %s\n", line);
	assert_chain(names, n, want, GT_ARRAY_SIZE(want), line);
	syms_cache__free(sc);
	unwinder__free(u);
	free(s);
}

/* A snapshot cut short keeps the frames it covers and stops there, without guessing. */
static void test_unwind_short_snapshot(void **state)
{
	struct snap *s = calloc(1, sizeof(*s));
	struct unwinder *u = unwinder__new();
	uint64_t full[64], cut[64];
	int nfull, ncut;

	assert_non_null(s);
	self_f1(s);
	nfull = unwinder__unwind(u, (uint32_t)getpid(), (uint32_t)gettid(), s->regs, s->stack,
				 s->len, full, 64);
	/* Only grab's own frame and its return address slot. */
	ncut = unwinder__unwind(u, (uint32_t)getpid(), (uint32_t)gettid(), s->regs, s->stack, 8,
				cut, 64);
	assert_true(nfull >= 5);
	assert_true(ncut >= 1 && ncut < nfull);
	assert_memory_equal(full, cut, (size_t)ncut * sizeof(uint64_t));
	ncut = unwinder__unwind(u, (uint32_t)getpid(), (uint32_t)gettid(), s->regs, s->stack, 0,
				cut, 64);
	assert_true(ncut <= 1);
	unwinder__free(u);
	free(s);
}

static pid_t start_helper(const char *name, int *in_fd)
{
	char path[PATH_MAX + 16], buf[16] = "";
	int in[2], out[2];
	pid_t pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", helper_dir, name);
	if (access(path, X_OK))
		snprintf(path, sizeof(path), "%s/../tests/%s", helper_dir, name);
	assert_int_equal(access(path, X_OK), 0);
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	f = fdopen(out[0], "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	assert_string_equal(buf, "ready\n");
	fclose(f);
	*in_fd = in[1];
	return pid;
}

/*
 * The helper's main thread is blocked in read() under f3: stop it, take its
 * registers and stack as the BPF side would at its switch-out, let it go.
 */
static int snapshot_helper(pid_t pid, struct snap *s)
{
	struct user_regs_struct ur;
	struct iovec local, remote;
	uint64_t end;
	ssize_t n;
	int st;

	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL))
		return -errno;
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		return -ECHILD;
	if (ptrace(PTRACE_GETREGS, pid, NULL, &ur)) {
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
		return -errno;
	}
	s->regs[0] = ur.rax;
	s->regs[1] = ur.rdx;
	s->regs[2] = ur.rcx;
	s->regs[3] = ur.rbx;
	s->regs[4] = ur.rsi;
	s->regs[5] = ur.rdi;
	s->regs[6] = ur.rbp;
	s->regs[7] = ur.rsp;
	s->regs[8] = ur.r8;
	s->regs[9] = ur.r9;
	s->regs[10] = ur.r10;
	s->regs[11] = ur.r11;
	s->regs[12] = ur.r12;
	s->regs[13] = ur.r13;
	s->regs[14] = ur.r14;
	s->regs[15] = ur.r15;
	s->regs[16] = ur.rip;
	end = mapping_end(pid, ur.rsp);
	local.iov_base = s->stack;
	local.iov_len = end > ur.rsp ? GT_MIN((size_t)(end - ur.rsp), sizeof(s->stack)) : 0;
	remote.iov_base = (void *)ur.rsp;
	remote.iov_len = local.iov_len;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	s->len = n > 0 ? (size_t)n : 0;
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return 0;
}

static void test_unwind_nofp_process(void **state)
{
	static const char *const want[] = {"f3", "f2", "f1", "main"};
	struct snap *s = calloc(1, sizeof(*s));
	struct unwinder *u = unwinder__new();
	struct syms_cache *sc = syms_cache__new();
	const char *names[64];
	uint64_t ips[64];
	char line[4096];
	int in_fd, n, st, err;
	pid_t pid;

	assert_non_null(s);
	pid = start_helper("nofp", &in_fd);
	/* "ready" is printed just before read(): wait until it is blocked there. */
	for (int i = 0; i < 200; i++) {
		char path[64], stat[512] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
		f = fopen(path, "r");
		if (f) {
			if (!fgets(stat, sizeof(stat), f))
				stat[0] = '\0';
			fclose(f);
		}
		if (strstr(stat, "pipe_read"))
			break;
		usleep(5000);
	}
	err = snapshot_helper(pid, s);
	if (err) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		if (err == -EPERM)
			skip();
		fail_msg("cannot snapshot the helper: %s", strerror(-err));
	}
	n = unwinder__unwind(u, (uint32_t)pid, (uint32_t)pid, s->regs, s->stack, s->len, ips, 64);
	names_of(sc, pid, ips, n > 0 ? n : 0, names, line, sizeof(line));
	print_message("nofp: %s\n", line);
	close(in_fd); /* read() returns 0: the helper exits */
	waitpid(pid, &st, 0);
	assert_true(n >= 5);
	assert_chain(names, n, want, GT_ARRAY_SIZE(want), line);
	syms_cache__free(sc);
	unwinder__free(u);
	free(s);
}

static void test_unwind_gone_process(void **state)
{
	struct unwinder *u = unwinder__new();
	uint64_t regs[GT_UREGS_NR] = {}, ips[8];
	uint8_t stack[64] = {};
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	regs[7] = 0x7ffc0000;
	regs[16] = 0x401000;
	assert_int_equal(
	    unwinder__unwind(u, (uint32_t)pid, (uint32_t)pid, regs, stack, sizeof(stack), ips, 8),
	    -ESRCH);
	unwinder__free(u);
}

static void test_unwind_intern(void **state)
{
	struct unwinder *u = unwinder__new();
	uint64_t a[3] = {0x401000, 0x402000, 0x403000}, b[3] = {0x401000, 0x402000, 0x403001};
	bool fresh;
	int32_t ida, idb;

	ida = unwinder__intern(u, 10, a, 3, &fresh);
	assert_true(fresh);
	assert_true(ida >= GT_STACK_DWARF_BASE);
	assert_int_equal(unwinder__intern(u, 10, a, 3, &fresh), ida);
	assert_false(fresh);
	idb = unwinder__intern(u, 10, b, 3, &fresh);
	assert_true(fresh);
	assert_int_not_equal(idb, ida);
	/* Same frames in another process or cut shorter: other stacks. */
	assert_int_not_equal(unwinder__intern(u, 11, a, 3, &fresh), ida);
	assert_true(fresh);
	assert_int_not_equal(unwinder__intern(u, 10, a, 2, &fresh), ida);
	assert_true(fresh);
	/* Growth keeps every id findable. */
	for (uint64_t i = 0; i < 5000; i++) {
		uint64_t ip = 0x500000 + i;

		unwinder__intern(u, 12, &ip, 1, &fresh);
		assert_true(fresh);
	}
	assert_int_equal(unwinder__intern(u, 10, b, 3, &fresh), idb);
	assert_false(fresh);
	unwinder__free(u);
}

static void test_unwind_fp_detect(void **state)
{
	char path[PATH_MAX + 16];
	unsigned checked, with_fp;

	snprintf(path, sizeof(path), "%s/nofp", helper_dir);
	if (access(path, R_OK))
		snprintf(path, sizeof(path), "%s/../tests/nofp", helper_dir);
	assert_int_equal(unwind_elf_frame_pointers(path, &checked, &with_fp), 0);
	assert_true(checked >= 3);
	assert_int_equal(with_fp, 0);
	snprintf(path, sizeof(path), "%s/withfp", helper_dir);
	if (access(path, R_OK))
		snprintf(path, sizeof(path), "%s/../tests/withfp", helper_dir);
	assert_int_equal(unwind_elf_frame_pointers(path, &checked, &with_fp), 1);
	assert_true(with_fp * 2 > checked);
	assert_int_equal(unwind_elf_frame_pointers("/nonexistent/gt", NULL, NULL), -ENOENT);
	assert_int_equal(unwind_elf_frame_pointers("/proc/self/status", NULL, NULL), -ENOEXEC);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unwind_self_snapshot),
	    cmocka_unit_test(test_unwind_short_snapshot),
	    cmocka_unit_test(test_unwind_nofp_process),
	    cmocka_unit_test(test_unwind_gone_process),
	    cmocka_unit_test(test_unwind_intern),
	    cmocka_unit_test(test_unwind_fp_detect),
	};
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	/* Helpers are built next to the test binary (.output/tests). */
	if (n > 0) {
		self[n] = '\0';
		snprintf(helper_dir, sizeof(helper_dir), "%s", dirname(self));
	}
	(void)argc;
	(void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
