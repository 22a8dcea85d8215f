// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_syms.c: symbol resolution against this very process (own functions,
 * libc, vDSO, late dlopen), the kernel, and hostile ELF files.
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/sdt.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbols/elf.h"
#include "symbols/live.h"
#include "symbols/syms.h"
#include "symbols/usdt.h"
#include "support/util.h"

/* noipa: no clone with a suffixed name ("foo.constprop.0"), a stable symbol. */
static __attribute__((noipa)) int gt_test_target(int x)
{
	volatile int acc = x;

	for (int i = 0; i < 8; i++)
		acc += i * x;
	return acc;
}

/* Data, not code: resolving into it must find the object but no function. */
static volatile int gt_test_data[4096] = {1};

static __attribute__((noipa)) void gt_test_probes(int x)
{
	STAP_PROBE(gaptrace_test, hello);
	if (x > 1)
		STAP_PROBE(gaptrace_test, hello); /* a second site of the same probe */
	STAP_PROBE1(gaptrace_test, world, x);
}

static int setup(void **state)
{
	*state = syms_cache__new();
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	syms_cache__free(*state);
	return 0;
}

static void self_exe(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	assert_true(n > 0);
	buf[n] = '\0';
}

static void test_resolve_own_function(void **state)
{
	struct syms_cache *c = *state;
	uint64_t ip = (uint64_t)(uintptr_t)&gt_test_target;
	const char *name, *module;
	char exe[4096];
	uint32_t off;

	assert_int_equal(gt_test_target(2), 2 + 2 * 28);
	self_exe(exe, sizeof(exe));
	assert_int_equal(syms_cache__resolve(c, (uint32_t)getpid(), ip + 3, &name, &off, &module),
			 0);
	assert_string_equal(name, "gt_test_target");
	assert_int_equal(off, 3);
	assert_string_equal(module, exe);

	/* Second lookup comes from the cache and returns the same strings. */
	assert_int_equal(syms_cache__resolve(c, (uint32_t)getpid(), ip, &name, &off, &module), 0);
	assert_string_equal(name, "gt_test_target");
	assert_int_equal(off, 0);
}

static void test_resolve_data_is_no_function(void **state)
{
	struct syms_cache *c = *state;
	uint64_t ip = (uint64_t)(uintptr_t)&gt_test_data[2048];
	const char *name, *module;
	char exe[4096];
	uint32_t off;

	self_exe(exe, sizeof(exe));
	assert_int_equal(syms_cache__resolve(c, (uint32_t)getpid(), ip, &name, &off, &module), -1);
	assert_null(name);
	assert_non_null(module);
	assert_string_equal(module, exe);
}

static void *libc_func(const char *fn)
{
	/* The handle avoids sanitizer interceptors of the same name. */
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *f;

	assert_non_null(h);
	f = dlsym(h, fn);
	dlclose(h);
	assert_non_null(f);
	return f;
}

static void test_resolve_libc(void **state)
{
	struct syms_cache *c = *state;
	uint64_t ip = (uint64_t)(uintptr_t)libc_func("malloc_trim");
	const char *name, *module;
	uint32_t off;

	assert_int_equal(syms_cache__resolve(c, (uint32_t)getpid(), ip, &name, &off, &module), 0);
	assert_string_equal(name, "malloc_trim");
	assert_int_equal(off, 0);
	assert_non_null(strstr(module, "libc"));
	assert_int_equal(syms_cache__resolve(c, (uint32_t)getpid(), ip + 5, &name, &off, &module),
			 0);
	assert_string_equal(name, "malloc_trim");
	assert_int_equal(off, 5);
}

static void test_resolve_anonymous(void **state)
{
	struct syms_cache *c = *state;
	const char *name = "x", *module = "x";
	uint32_t off;
	char *p;

	p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(syms_cache__resolve(c, (uint32_t)getpid(), (uint64_t)(uintptr_t)p + 16,
					     &name, &off, &module),
			 -1);
	assert_null(name);
	assert_null(module);
	munmap(p, 65536);
}

static void test_resolve_unknown_pid(void **state)
{
	struct syms_cache *c = *state;
	const char *name = "x", *module = "x";
	uint32_t off;

	assert_int_equal(syms_cache__resolve(c, 0x7ffffff0, 0x400000, &name, &off, &module), -1);
	assert_null(name);
	assert_null(module);
	assert_int_equal(syms_cache__resolve(NULL, 1, 0x400000, &name, &off, &module), -1);
}

/*
 * Finds a kernel text symbol (module: "[name]" wanted, else core kernel) and
 * every text alias at its address.  Returns 0 or -1 if none.
 */
static int kallsyms_pick(bool want_module, uint64_t *addr, char aliases[][128], int max_aliases,
			 int *naliases, char *module, size_t module_len)
{
	char line[512], name[128], mod[128];
	uint64_t a;
	char type;
	FILE *f;
	int n;

	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return -1;
	*addr = 0;
	while (fgets(line, sizeof(line), f)) {
		mod[0] = '\0';
		n = sscanf(line, "%" SCNx64 " %c %127s %127s", &a, &type, name, mod);
		if (n < 3 || !a || !strchr("tT", type) || !strncmp(name, "__pfx_", 6))
			continue;
		if (want_module != (mod[0] == '['))
			continue;
		if (!want_module && strcmp(name, "vfs_read") && *addr)
			continue;
		*addr = a;
		snprintf(module, module_len, "%s", want_module ? mod : "[kernel]");
		if (want_module || !strcmp(name, "vfs_read"))
			break;
	}
	*naliases = 0;
	if (!*addr) {
		fclose(f);
		return -1;
	}
	rewind(f);
	while (fgets(line, sizeof(line), f) && *naliases < max_aliases) {
		if (sscanf(line, "%" SCNx64 " %c %127s", &a, &type, name) == 3 && a == *addr &&
		    strchr("tTwW", type))
			snprintf(aliases[(*naliases)++], 128, "%s", name);
	}
	fclose(f);
	return 0;
}

static void check_kernel(struct syms_cache *c, bool want_module)
{
	char aliases[16][128], want_mod[128];
	const char *name, *module;
	int naliases, i;
	uint64_t addr;
	uint32_t off;
	bool found = false;

	if (kallsyms_pick(want_module, &addr, aliases, 16, &naliases, want_mod, sizeof(want_mod)))
		skip();
	assert_int_equal(syms_cache__resolve(c, 0, addr + 1, &name, &off, &module), 0);
	assert_int_equal(off, 1);
	assert_string_equal(module, want_mod);
	for (i = 0; i < naliases; i++)
		found |= !strcmp(aliases[i], name);
	if (!found)
		fail_msg("kernel %" PRIx64 " resolved to %s, not a kallsyms alias", addr, name);
}

static void test_resolve_kernel(void **state)
{
	check_kernel(*state, false);
}

static void test_resolve_kernel_module(void **state)
{
	check_kernel(*state, true);
}

static int vdso_range(uint64_t *start, uint64_t *end)
{
	char line[512];
	int ret = -1;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%" SCNx64 "-%" SCNx64, start, end) == 2) {
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

static void test_resolve_vdso(void **state)
{
	struct syms_cache *c = *state;
	const char *name, *module;
	uint64_t start, end, ip;
	bool found = false;
	uint32_t off;

	if (vdso_range(&start, &end))
		skip();
	/* The ELF header: inside the vDSO, in no function. */
	assert_int_equal(syms_cache__resolve(c, (uint32_t)getpid(), start, &name, &off, &module),
			 -1);
	assert_string_equal(module, "[vdso]");
	for (ip = start; ip < end && !found; ip += 4) {
		if (syms_cache__resolve(c, (uint32_t)getpid(), ip, &name, &off, &module))
			continue;
		assert_string_equal(module, "[vdso]");
		found = strstr(name, "clock_gettime") != NULL;
	}
	assert_true(found);
}

struct late_lib {
	const char *soname, *func;
};

static const struct late_lib late_libs[] = {
    {"libz.so.1", "zlibVersion"},
    {"liblzma.so.5", "lzma_version_string"},
    {"libbz2.so.1.0", "BZ2_bzlibVersion"},
    {"libzstd.so.1", "ZSTD_versionNumber"},
    {"libcrypt.so.1", "crypt_preferred_method"},
};

/* dlopens a library this process has not loaded yet; NULL if none is there. */
static void *dlopen_new(const struct late_lib **which, void **func)
{
	for (size_t i = 0; i < GT_ARRAY_SIZE(late_libs); i++) {
		void *h = dlopen(late_libs[i].soname, RTLD_NOW | RTLD_NOLOAD);

		if (h) {
			dlclose(h);
			continue;
		}
		h = dlopen(late_libs[i].soname, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			continue;
		*func = dlsym(h, late_libs[i].func);
		if (!*func) {
			dlclose(h);
			continue;
		}
		*which = &late_libs[i];
		return h;
	}
	return NULL;
}

static void test_resolve_after_dlopen(void **state)
{
	struct syms_cache *c = *state;
	uint32_t pid = (uint32_t)getpid();
	const struct late_lib *lib;
	const char *name, *module;
	uint32_t off;
	void *h, *fn;

	/* First resolution reads the maps before the library exists. */
	assert_int_equal(
	    syms_cache__resolve(c, pid, (uint64_t)(uintptr_t)&gt_test_target, &name, &off, &module),
	    0);
	h = dlopen_new(&lib, &fn);
	if (!h)
		skip();
	assert_int_equal(
	    syms_cache__resolve(c, pid, (uint64_t)(uintptr_t)fn + 2, &name, &off, &module), 0);
	assert_string_equal(name, lib->func);
	assert_int_equal(off, 2);
	assert_non_null(strstr(module, lib->soname));
	dlclose(h);
}

static void test_resolve_reread_rate_limited(void **state)
{
	struct timespec ts = {.tv_nsec = 150 * 1000 * 1000};
	struct syms_cache *c = *state;
	uint32_t pid = (uint32_t)getpid();
	const struct late_lib *lib;
	const char *name, *module;
	uint32_t off;
	void *h, *fn;
	char *hole;

	/* An address in no mapping: a reserved then released region. */
	hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(hole != MAP_FAILED);
	munmap(hole, 4096);
	assert_int_equal(
	    syms_cache__resolve(c, pid, (uint64_t)(uintptr_t)hole, &name, &off, &module), -1);
	assert_null(module);
	h = dlopen_new(&lib, &fn);
	if (!h)
		skip();
	/* The miss just re-read the maps: a second re-read must wait. */
	assert_int_equal(syms_cache__resolve(c, pid, (uint64_t)(uintptr_t)fn, &name, &off, &module),
			 -1);
	nanosleep(&ts, NULL);
	assert_int_equal(syms_cache__resolve(c, pid, (uint64_t)(uintptr_t)fn, &name, &off, &module),
			 0);
	assert_string_equal(name, lib->func);
	dlclose(h);
}

static void test_resolve_other_process_and_forget(void **state)
{
	struct syms_cache *c = *state;
	uint64_t ip = (uint64_t)(uintptr_t)&gt_test_target + 1;
	const char *name, *module;
	uint32_t off;
	pid_t child;
	int status;

	child = fork();
	assert_true(child >= 0);
	if (!child) {
		pause();
		_exit(0);
	}
	/* A fork shares the layout: same address, same symbol, via its own maps. */
	assert_int_equal(syms_cache__resolve(c, (uint32_t)child, ip, &name, &off, &module), 0);
	assert_string_equal(name, "gt_test_target");
	assert_int_equal(off, 1);
	assert_int_equal(syms_cache__resolve(c, (uint32_t)getpid(), ip, &name, &off, &module), 0);
	assert_string_equal(name, "gt_test_target");

	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	/* Cached maps outlive the process, until forgotten. */
	assert_int_equal(syms_cache__resolve(c, (uint32_t)child, ip, &name, &off, &module), 0);
	assert_string_equal(name, "gt_test_target");
	syms_cache__forget(c, (uint32_t)child);
	syms_cache__forget(c, (uint32_t)child);
	assert_int_equal(syms_cache__resolve(c, (uint32_t)child, ip, &name, &off, &module), -1);
	assert_null(module);
	syms_cache__forget(NULL, 1);
}

struct mappings_ctx {
	const char *exe;
	int nexe;
	bool exe_exec;
	uint8_t id[20];
	uint8_t id_len;
	bool libc;
};

static int mappings_cb(const struct syms_mapping *m, void *ctx)
{
	struct mappings_ctx *x = ctx;

	assert_true(m->start < m->end);
	assert_true(m->inode != 0);
	assert_non_null(m->path);
	assert_true(m->build_id_len <= sizeof(m->build_id));
	if (!strcmp(m->path, x->exe)) {
		x->nexe++;
		x->exe_exec |= m->exec;
		memcpy(x->id, m->build_id, m->build_id_len);
		x->id_len = m->build_id_len;
	}
	if (strstr(m->path, "/libc.so.6") && m->exec && m->build_id_len)
		x->libc = true;
	return 0;
}

static int mappings_stop_cb(const struct syms_mapping *m, void *ctx)
{
	(*(int *)ctx)++;
	return 42;
}

static void test_read_mappings_build_id(void **state)
{
	struct mappings_ctx x = {};
	uint8_t id[20];
	char exe[4096];
	int len, n = 0;

	self_exe(exe, sizeof(exe));
	x.exe = exe;
	assert_int_equal(syms_read_mappings((uint32_t)getpid(), mappings_cb, &x), 0);
	assert_true(x.nexe >= 2);
	assert_true(x.exe_exec);
	assert_true(x.libc);
	len = syms_elf_build_id("/proc/self/exe", id, sizeof(id));
	assert_true(len > 0);
	assert_int_equal(x.id_len, len);
	assert_memory_equal(x.id, id, (size_t)len);

	/* Again, from the build id cache. */
	memset(&x, 0, sizeof(x));
	x.exe = exe;
	assert_int_equal(syms_read_mappings((uint32_t)getpid(), mappings_cb, &x), 0);
	assert_int_equal(x.id_len, len);
	assert_memory_equal(x.id, id, (size_t)len);

	assert_int_equal(syms_read_mappings((uint32_t)getpid(), mappings_stop_cb, &n), 42);
	assert_int_equal(n, 1);
}

/* The build id binutils' readelf -n prints for path, as bytes; its length or 0. */
static int readelf_build_id(const char *path, uint8_t *id, size_t len)
{
	char cmd[4200], line[512], *p;
	int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned v;

		p = strstr(line, "Build ID: ");
		if (!p || n)
			continue;
		for (p += 10; (size_t)n < len && sscanf(p, "%2x", &v) == 1; p += 2)
			id[n++] = (uint8_t)v;
	}
	pclose(f);
	return n;
}

/*
 * Build ids (libdw's dwelf_elf_gnu_build_id since #28) against readelf's
 * for this test, libc and libm; a buffer too small is refused.
 */
static void test_build_id_vs_readelf(void **state)
{
	static const char *const libs[] = {"libc.so.6", "libm.so.6"};
	const char *paths[3];
	uint8_t want[64], got[64];
	char exe[4096];
	struct link_map *lm;
	int n, m;

	/* This test's file: readelf's /proc/self/exe would be readelf. */
	self_exe(exe, sizeof(exe));
	paths[0] = exe;
	for (size_t i = 0; i < GT_ARRAY_SIZE(libs); i++) {
		void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);

		if (!h)
			h = dlopen(libs[i], RTLD_LAZY);
		assert_non_null(h);
		assert_int_equal(dlinfo(h, RTLD_DI_LINKMAP, &lm), 0);
		paths[1 + i] = lm->l_name;
	}
	for (size_t i = 0; i < GT_ARRAY_SIZE(paths); i++) {
		n = readelf_build_id(paths[i], want, sizeof(want));
		if (!n) {
			print_message("readelf shows no build id for %s\n", paths[i]);
			continue;
		}
		m = syms_elf_build_id(paths[i], got, sizeof(got));
		assert_int_equal(m, n);
		assert_memory_equal(got, want, (size_t)n);
		assert_int_equal(syms_elf_build_id(paths[i], got, (size_t)n - 1), -ENOSPC);
	}
}

static void test_read_mappings_gone(void **state)
{
	struct mappings_ctx x = {.exe = ""};
	pid_t child = fork();
	int status;

	assert_true(child >= 0);
	if (!child)
		_exit(0);
	waitpid(child, &status, 0);
	assert_int_equal(syms_read_mappings((uint32_t)child, mappings_cb, &x), -ENOENT);
	assert_int_equal(syms_read_mappings((uint32_t)getpid(), NULL, NULL), -EINVAL);
}

static void test_build_id_errors(void **state)
{
	uint8_t id[20];

	assert_int_equal(syms_elf_build_id("/nonexistent/gaptrace", id, sizeof(id)), -ENOENT);
	assert_int_equal(syms_elf_build_id("/proc/self/exe", id, 4), -ENOSPC);
	assert_int_equal(syms_elf_build_id("/proc/self/maps", id, sizeof(id)), -ENOEXEC);
}

struct probes_ctx {
	int hello, world, other;
};

static int probes_cb(const char *name, void *ctx)
{
	struct probes_ctx *p = ctx;

	if (!strcmp(name, "hello"))
		p->hello++;
	else if (!strcmp(name, "world"))
		p->world++;
	else
		p->other++;
	return 0;
}

static int probes_fail_cb(const char *name, void *ctx)
{
	return -ECANCELED;
}

static void test_usdt_probes(void **state)
{
	struct probes_ctx p = {};

	gt_test_probes(1);
	assert_int_equal(syms_elf_usdt_probes("/proc/self/exe", "gaptrace_test", probes_cb, &p), 2);
	assert_int_equal(p.hello, 1);
	assert_int_equal(p.world, 1);
	assert_int_equal(p.other, 0);

	memset(&p, 0, sizeof(p));
	assert_int_equal(syms_elf_usdt_probes("/proc/self/exe", "nope", probes_cb, &p), 0);
	assert_int_equal(p.hello + p.world + p.other, 0);
	assert_int_equal(
	    syms_elf_usdt_probes("/proc/self/exe", "gaptrace_test", probes_fail_cb, NULL),
	    -ECANCELED);
	assert_int_equal(
	    syms_elf_usdt_probes("/nonexistent/gaptrace", "gaptrace_test", probes_cb, &p), -ENOENT);
	assert_int_equal(syms_elf_usdt_probes("/proc/self/maps", "gaptrace_test", probes_cb, &p),
			 0);
}

static void test_has_func(void **state)
{
	Dl_info info;

	assert_true(syms_elf_has_func("/proc/self/exe", "main"));
	assert_true(syms_elf_has_func("/proc/self/exe", "gt_test_target"));
	assert_false(syms_elf_has_func("/proc/self/exe", "gt_no_such_function_4711"));
	assert_false(syms_elf_has_func("/proc/self/exe", "gt_test_data"));
	assert_false(syms_elf_has_func("/proc/self/exe", ""));
	assert_false(syms_elf_has_func("/nonexistent/gaptrace", "main"));

	assert_true(dladdr(libc_func("malloc_trim"), &info));
	assert_true(syms_elf_has_func(info.dli_fname, "malloc_trim"));
	assert_false(syms_elf_has_func(info.dli_fname, "malloc_tri"));
}

/* ---- hostile files ---- */

static char *read_self(size_t *len)
{
	struct stat st;
	char *buf;
	int fd = open("/proc/self/exe", O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static void write_tmp(char *path, const void *buf, size_t len)
{
	int fd;

	strcpy(path, "/tmp/gt_test_syms.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static int count_cb(const char *name, void *ctx)
{
	(*(int *)ctx)++;
	return 0;
}

/* Every API on path: any result but a crash, and consistent return ranges. */
static void poke_file(struct syms_cache *c, const char *path, size_t len)
{
	const char *name, *module;
	uint8_t id[20];
	uint32_t off;
	int rc, fd, n = 0;
	void *p;

	rc = syms_elf_build_id(path, id, sizeof(id));
	assert_true(rc <= (int)sizeof(id));
	rc = syms_elf_usdt_probes(path, "gaptrace_test", count_cb, &n);
	/* Distinct names: a corrupted name byte can make each of the 3 probe
	 * sites (hello twice, world once) a name of its own, never more. */
	assert_true(rc <= 3);
	if (rc >= 0)
		assert_int_equal(rc, n);
	syms_elf_has_func(path, "main");

	/* Mapped into this process: exercises the resolver's own ELF loading. */
	if (!len)
		return;
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	p = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return;
	/* New mapping, no miss budget: start this process over. */
	syms_cache__forget(c, (uint32_t)getpid());
	for (size_t o = 0; o < len; o += len / 7 + 1) {
		rc = syms_cache__resolve(c, (uint32_t)getpid(), (uint64_t)(uintptr_t)p + o, &name,
					 &off, &module);
		assert_true(rc == 0 || rc == -1);
		assert_non_null(module);
		assert_string_equal(module, path);
		if (rc == 0)
			assert_non_null(name);
	}
	munmap(p, len);
}

static void test_malformed_elf(void **state)
{
	static const size_t cuts[] = {0, 1, 16, 52, 64, 100, 500, 4096, 20000};
	struct syms_cache *c = *state;
	char path[64], paths[128][64];
	size_t len, i, npaths = 0, j;
	char *self = read_self(&len), *buf = malloc(len);
	uint8_t id[20];
	int n = 0;

	assert_non_null(buf);
	srand(4711);
	for (i = 0; i < 4096; i++)
		buf[i] = (char)rand();
	write_tmp(path, buf, 4096);
	assert_int_equal(syms_elf_build_id(path, id, sizeof(id)), -ENOEXEC);
	assert_int_equal(syms_elf_usdt_probes(path, "gaptrace_test", count_cb, &n), 0);
	assert_false(syms_elf_has_func(path, "main"));
	poke_file(c, path, 4096);
	unlink(path);

	/* Truncated copies: headers that point past the end of the file. */
	for (i = 0; i < GT_ARRAY_SIZE(cuts); i++) {
		write_tmp(paths[npaths], self, cuts[i]);
		poke_file(c, paths[npaths++], cuts[i]);
	}
	write_tmp(paths[npaths], self, len / 2);
	poke_file(c, paths[npaths++], len / 2);

	/* Corrupted copies: random bytes, then header fields set to extremes. */
	for (i = 0; i < 100; i++) {
		memcpy(buf, self, len);
		for (j = 0; j < 1 + i % 16; j++) {
			/* Half the flips land in the headers, where they hurt most. */
			size_t at = j % 2 ? (size_t)rand() % 256 : (size_t)rand() % len;

			if (i >= 50 && j % 2)
				at = len - 1 - (size_t)rand() % GT_MIN(len, 8192);
			buf[at] = (char)rand();
		}
		if (i % 10 == 9)
			memset(buf + 0x20, 0xff, 8 + (i % 20 == 19) * 8); /* e_phoff, e_shoff */
		if (i % 10 == 8)
			memset(buf + 0x38, 0xff, 6); /* e_phnum, e_shentsize, e_shnum */
		write_tmp(paths[npaths], buf, len);
		poke_file(c, paths[npaths++], len);
	}
	for (i = 0; i < npaths; i++)
		unlink(paths[i]);
	free(buf);
	free(self);
}

static void test_free_null(void **state)
{
	syms_cache__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_resolve_own_function, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_resolve_data_is_no_function, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_resolve_libc, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_resolve_anonymous, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_resolve_unknown_pid, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_resolve_kernel, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_resolve_kernel_module, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_resolve_vdso, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_resolve_after_dlopen, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_resolve_reread_rate_limited, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_resolve_other_process_and_forget, setup, teardown),
	    cmocka_unit_test(test_read_mappings_build_id),
	    cmocka_unit_test(test_build_id_vs_readelf),
	    cmocka_unit_test(test_read_mappings_gone),
	    cmocka_unit_test(test_build_id_errors),
	    cmocka_unit_test(test_usdt_probes),
	    cmocka_unit_test(test_has_func),
	    cmocka_unit_test_setup_teardown(test_malformed_elf, setup, teardown),
	    cmocka_unit_test(test_free_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
