// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_syms_dwfl.c: symbols and inline chains through libdwfl, on a running
 * -O2 -g program (tests/data/inline_spin.c) whose program counter is read
 * with ptrace: as built, stripped with its debug info in a .build-id tree,
 * behind a .gnu_debuglink, with MiniDebugInfo, and with separate debug info
 * turned off (GAPTRACE_DEBUGINFO_PATH=none).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>

#include "symbols/dwmod.h"
#include "symbols/elf.h"
#include "symbols/live.h"
#include "symbols/syms.h"

static char src[PATH_MAX]; /* the built program */
static char tmp[PATH_MAX]; /* this run's scratch directory */
static bool have_xz;	   /* MiniDebugInfo needs xz */

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX + 512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

/* The variants of the program, made once. */
static int group_setup(void **state)
{
	char self[PATH_MAX], hex[41], *dir;
	uint8_t bid[20];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int len;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	dir = dirname(self);
	snprintf(src, sizeof(src), "%s/inline_spin", dir);
	if (access(src, X_OK))
		snprintf(src, sizeof(src), "%s/../tests/inline_spin", dir);
	if (access(src, X_OK))
		return -1;
	snprintf(tmp, sizeof(tmp), "/tmp/gt_test_dwfl_XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	len = syms_elf_build_id(src, bid, sizeof(bid));
	if (len < 2)
		return -1;
	for (int i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	/* The build-id tree: debug info only there, nothing beside the binary. */
	sh("cp %s %s/full", src, tmp);
	sh("objcopy --only-keep-debug %s/full %s/prog.debug", tmp, tmp);
	sh("objcopy --strip-all %s/full %s/stripped", tmp, tmp);
	sh("mkdir -p %s/tree/.build-id/%.2s && cp %s/prog.debug %s/tree/.build-id/%.2s/%s.debug",
	   tmp, hex, tmp, tmp, hex, hex + 2);
	/* The debuglink: the debug file beside the binary, under its own name. */
	sh("mkdir -p %s/dl && objcopy --strip-all --add-gnu-debuglink=%s/prog.debug %s/full "
	   "%s/dl/linked && cp %s/prog.debug %s/dl/",
	   tmp, tmp, tmp, tmp, tmp, tmp);
	sh("rm %s/prog.debug", tmp);
	have_xz = !system("xz --version >/dev/null 2>&1");
	if (have_xz)
		/* MiniDebugInfo: .symtab only (no DWARF), xz-compressed in .gnu_debugdata. */
		sh("objcopy --only-keep-debug %s/full %s/m.debug && "
		   "strip --strip-debug -R .comment %s/m.debug -o %s/mini && xz -f %s/mini && "
		   "objcopy --add-section .gnu_debugdata=%s/mini.xz %s/stripped %s/minidebug",
		   tmp, tmp, tmp, tmp, tmp, tmp, tmp, tmp);
	return 0;
}

static int group_teardown(void **state)
{
	if (tmp[0])
		sh("rm -rf %s", tmp);
	return 0;
}

struct spin {
	pid_t pid;
	uint64_t pc;
};

struct in_exe {
	const char *path;
	uint64_t pc;
	bool found;
};

static int in_exe_cb(const struct syms_mapping *m, void *ctx)
{
	struct in_exe *q = ctx;

	q->found |= m->exec && !strcmp(m->path, q->path) && q->pc >= m->start && q->pc < m->end;
	return 0;
}

/* Runs tmp/name until it spins, reads its program counter, leaves it running. */
static void spin_start(struct spin *s, const char *name)
{
	char path[PATH_MAX + 64], line[16] = "";
	struct user_regs_struct regs;
	int out[2], st;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	assert_int_equal(pipe(out), 0);
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (!s->pid) {
		dup2(out[1], 1);
		close(out[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	f = fdopen(out[0], "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "ready\n");
	/* Until it runs the loop (which never ends) in its own code, not still in libc. */
	for (int i = 0; i < 500; i++) {
		struct in_exe q = {.path = path};

		usleep(i ? 10000 : 20000);
		assert_int_equal(ptrace(PTRACE_ATTACH, s->pid, NULL, NULL), 0);
		assert_int_equal(waitpid(s->pid, &st, 0), s->pid);
		assert_int_equal(ptrace(PTRACE_GETREGS, s->pid, NULL, &regs), 0);
		s->pc = regs.rip;
		assert_int_equal(ptrace(PTRACE_DETACH, s->pid, NULL, NULL), 0);
		q.pc = s->pc;
		syms_read_mappings((uint32_t)s->pid, in_exe_cb, &q);
		if (q.found)
			return;
	}
	fail_msg("%s never ran its own code", path);
}

static void spin_stop(struct spin *s)
{
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
}

struct got {
	const char *name, *module;
	const char *inl[8];
	int ninl;
};

/* Resolves the program's pc with GAPTRACE_DEBUGINFO_PATH as given (NULL: unset). */
static void resolve(const char *variant, const char *path, struct got *g)
{
	struct syms_cache *c;
	struct spin s;
	uint32_t off;
	int ret;

	if (path)
		setenv("GAPTRACE_DEBUGINFO_PATH", path, 1);
	else
		unsetenv("GAPTRACE_DEBUGINFO_PATH");
	c = syms_cache__new();
	unsetenv("GAPTRACE_DEBUGINFO_PATH");
	spin_start(&s, variant);
	memset(g, 0, sizeof(*g));
	ret = syms_cache__resolve(c, (uint32_t)s.pid, s.pc, &g->name, &off, &g->module);
	if (ret)
		g->name = NULL;
	g->ninl = syms_cache__inlines(c, (uint32_t)s.pid, s.pc, false, g->inl, 8);
	/* Copies: the cache goes. */
	g->name = g->name ? strdup(g->name) : NULL;
	for (int i = 0; i < g->ninl; i++)
		g->inl[i] = strdup(g->inl[i]);
	g->module = g->module ? strdup(g->module) : NULL;
	spin_stop(&s);
	syms_cache__free(c);
}

static void got_free(struct got *g)
{
	free((char *)g->name);
	free((char *)g->module);
	for (int i = 0; i < g->ninl; i++)
		free((char *)g->inl[i]);
}

static void test_dwfl_inline_chain(void **state)
{
	struct got g;

	resolve("full", "none", &g);
	assert_non_null(g.name);
	assert_string_equal(g.name, "hidden_spin");
	assert_int_equal(g.ninl, 1);
	assert_string_equal(g.inl[0], "crunch");
	assert_non_null(strstr(g.module, "/full"));
	got_free(&g);
}

static void test_dwfl_build_id_tree(void **state)
{
	char tree[PATH_MAX + 8];
	struct got g;

	snprintf(tree, sizeof(tree), "%s/tree", tmp);
	resolve("stripped", tree, &g);
	assert_non_null(g.name);
	assert_string_equal(g.name, "hidden_spin");
	/* The DWARF came from the tree too. */
	assert_int_equal(g.ninl, 1);
	assert_string_equal(g.inl[0], "crunch");
	got_free(&g);
}

static void test_dwfl_debuglink(void **state)
{
	struct got g;

	/* dwfl's default path: the binary's own directory first. */
	resolve("dl/linked", NULL, &g);
	assert_non_null(g.name);
	assert_string_equal(g.name, "hidden_spin");
	assert_int_equal(g.ninl, 1);
	got_free(&g);
}

static void test_dwfl_none(void **state)
{
	struct got g;

	/* The same stripped files, separate debug info off: neither is found. */
	resolve("dl/linked", "none", &g);
	assert_true(!g.name || strcmp(g.name, "hidden_spin"));
	assert_int_equal(g.ninl, 0);
	got_free(&g);
	resolve("stripped", "none", &g);
	assert_true(!g.name || strcmp(g.name, "hidden_spin"));
	assert_int_equal(g.ninl, 0);
	got_free(&g);
}

static void test_dwfl_minidebuginfo(void **state)
{
	struct got g;

	if (!have_xz) {
		print_message("skipped: no xz (install xz-utils) to build MiniDebugInfo\n");
		skip();
	}
	/* Embedded, not separate: found with separate debug info off. */
	resolve("minidebug", "none", &g);
	assert_non_null(g.name);
	assert_string_equal(g.name, "hidden_spin");
	/* MiniDebugInfo holds no DWARF. */
	assert_int_equal(g.ninl, 0);
	got_free(&g);
}

/*
 * dwmod__symbol's sorted index against dwfl_module_addrinfo, the lookup it
 * replaces (which scans the whole table per call): the same function and
 * start for 20000 addresses spread over libc's code, with its debug file
 * when one is installed and without.  Names may differ only where dwmod
 * picks the better alias of one address.
 */
static void test_dwfl_index_matches_addrinfo(void **state)
{
	const char *lib = "/lib/x86_64-linux-gnu/libc.so.6";
	static const char *const paths[] = {"none", NULL};

	(void)state;
	if (access(lib, R_OK))
		skip();
	for (size_t p = 0; p < 2; p++) {
		Dwfl_Callbacks cb = {.find_elf = dwfl_build_id_find_elf,
				     .find_debuginfo = dwfl_standard_find_debuginfo,
				     .section_address = dwfl_offline_section_address};
		char *none = (char *)"/nonexistent";
		struct dwmod *d = dwmod__open(getpid(), lib, open(lib, O_RDONLY), paths[p]);
		Dwfl *dw;
		Dwfl_Module *m;
		GElf_Addr lo, hi, bias;
		unsigned int same = 0, named = 0;

		if (paths[p]) /* "none": dwfl's own search must not find the debug file either */
			cb.debuginfo_path = &none;
		dw = dwfl_begin(&cb);
		assert_non_null(d);
		assert_non_null(dw);
		dwfl_report_begin(dw);
		m = dwfl_report_elf(dw, lib, lib, open(lib, O_RDONLY), 0, true);
		assert_non_null(m);
		dwfl_report_end(dw, NULL, NULL);
		dwfl_module_info(m, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
		assert_non_null(dwfl_module_getelf(m, &bias));
		srandom(7);
		for (int i = 0; i < 20000; i++) {
			GElf_Addr a = lo + (GElf_Addr)random() % (hi - lo), off = 0, sb;
			GElf_Word shndx;
			GElf_Sym sym;
			Elf *elf;
			uint64_t start = 0;
			const char *want =
			    dwfl_module_addrinfo(m, a, &off, &sym, &shndx, &elf, &sb);
			const char *got = dwmod__symbol(d, a - bias, &start);
			int t = want ? GELF_ST_TYPE(sym.st_info) : -1;

			/* dwmod keeps functions (and sized untyped code); dwfl returns any symbol. */
			if (want && (!*want || (t != STT_FUNC && t != STT_GNU_IFUNC &&
						(t != STT_NOTYPE || !sym.st_size))))
				want = NULL;
			if (!want || !got) {
				if (!want != !got)
					print_message("%#llx: dwfl %s, dwmod %s\n",
						      (unsigned long long)a, want ? want : "-",
						      got ? got : "-");
				same += !want == !got;
				continue;
			}
			named++;
			if (start == a - bias - off)
				same++;
			else
				fail_msg("%#llx: dwfl %s at %#llx, dwmod %s at %#llx",
					 (unsigned long long)a, want, (unsigned long long)(a - off),
					 got, (unsigned long long)start);
		}
		print_message("libc (%s): %u of 20000 addresses agree, %u named\n",
			      paths[p] ? paths[p] : "debug file", same, named);
		assert_int_equal(same, 20000);
		assert_true(named > 1000);
		dwfl_end(dw);
		dwmod__free(d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dwfl_inline_chain),
	    cmocka_unit_test(test_dwfl_build_id_tree),
	    cmocka_unit_test(test_dwfl_debuglink),
	    cmocka_unit_test(test_dwfl_none),
	    cmocka_unit_test(test_dwfl_minidebuginfo),
	    cmocka_unit_test(test_dwfl_index_matches_addrinfo),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
