// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_bounds.c: the symbolizer's caps on what a traced program's files make
 * it hold or do (issue #24): symbol names and aliases, USDT notes, xz and
 * compressed DWARF sizes.  The hostile inputs are built here, in memory or
 * as small ELF files written with libelf.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/util.h"
#include "symbols/bounds.h"
#include "symbols/syms.h"
#include "symbols/syms_priv.h"
#include "symbols/usdt.h"
#include "symbols/zelf.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- symbol names ---- */

/* 65,535 aliases at one address sharing one 64 KiB name: cut, stored once, sorted at once. */
static void test_symtab_alias_bomb(void **state)
{
	size_t len = 65536, n = 65535;
	char *name = gt_xmalloc(len);
	struct symtab t = {};
	uint64_t before = bound__count(BOUND_NAMES);
	const struct sym *s;
	double t0;

	memset(name, 'L', len);
	t0 = now_s();
	for (size_t i = 0; i < n; i++)
		assert_int_equal(symtab__add(&t, 0x1000, 16, name, len, 0, 0), 0);
	/* The exported name, added last, outranks the locals. */
	assert_int_equal(symtab__add(&t, 0x1000, 16, "bomb_spin", 9, 2, 0), 0);
	assert_true(t.names_cut >= n);
	assert_true(t.strs_len <= BOUND_NAME_LEN + 16);
	symtab__finish(&t);
	assert_true(now_s() - t0 < 5.0);
	assert_int_equal(t.nsyms, 1);
	s = symtab__find(&t, 0x1008);
	assert_non_null(s);
	assert_string_equal(t.strs + s->name, "bomb_spin");
	/* symtab__finish leaves the warning to its caller, which names the object. */
	assert_true(bound__count(BOUND_NAMES) == before);
	symtab__free(&t);
	free(name);
}

/* Distinct names stop at BOUND_NAME_BYTES; the table stays usable. */
static void test_symtab_name_bytes_cap(void **state)
{
	char name[BOUND_NAME_LEN];
	struct symtab t = {};
	size_t added = 0;

	memset(name, 'x', sizeof(name));
	for (size_t i = 0;; i++) {
		snprintf(name, 32, "%zu", i);
		name[strlen(name)] = 'x';
		if (symtab__add(&t, 0x1000 + i * 16, 16, name, sizeof(name), 1, 0))
			break;
		added++;
	}
	assert_true(added * (sizeof(name) + 1) <= BOUND_NAME_BYTES);
	assert_true((added + 1) * (sizeof(name) + 1) > BOUND_NAME_BYTES);
	assert_true(t.names_cut > 0);
	symtab__finish(&t);
	assert_int_equal(t.nsyms, added);
	assert_non_null(symtab__find(&t, 0x1000 + 5 * 16 + 3));
	symtab__free(&t);
}

/* Among aliases: binding, then fewer leading '_', then shorter, then by name; largest size. */
static void test_symtab_alias_choice(void **state)
{
	static const struct {
		const char *name;
		unsigned int rank;
		uint64_t size;
	} in[] = {
	    {"__GI_memcpy", 0, 8}, {"memcpy_b", 2, 0}, {"_memcpy", 2, 32},
	    {"memcpy_a", 2, 4},	   {"memcpy", 1, 4},
	};
	struct symtab t = {};
	const struct sym *s;

	for (size_t i = 0; i < GT_ARRAY_SIZE(in); i++)
		assert_int_equal(symtab__add(&t, 0x2000, in[i].size, in[i].name, strlen(in[i].name),
					     in[i].rank, 0),
				 0);
	assert_int_equal(symtab__add(&t, 0x1000, 4, "first", 5, 0, 0), 0);
	symtab__finish(&t);
	assert_int_equal(t.nsyms, 2);
	s = symtab__find(&t, 0x2010);
	assert_non_null(s);
	assert_string_equal(t.strs + s->name, "memcpy_a");
	assert_int_equal(s->size, 32);
	symtab__free(&t);
}

/* ---- ELF files written here ---- */

struct scn_spec {
	const char *name;
	uint32_t type;
	uint64_t flags;
	const void *data;
	size_t len;
};

/* An ELF64 shared object holding the given sections (and .shstrtab). */
static void write_elf(const char *path, const struct scn_spec *spec, size_t n)
{
	char shstr[256] = "";
	size_t shlen = 1, name_off[8];
	Elf_Scn *scn;
	Elf_Data *d;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	Elf *elf;
	int fd;

	assert_true(n < 8);
	elf_version(EV_CURRENT);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_WRITE, NULL);
	assert_non_null(elf);
	eh = elf64_newehdr(elf);
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	for (size_t i = 0; i <= n; i++) {
		const char *name = i < n ? spec[i].name : ".shstrtab";

		name_off[i] = shlen;
		memcpy(shstr + shlen, name, strlen(name) + 1);
		shlen += strlen(name) + 1;
	}
	for (size_t i = 0; i < n; i++) {
		scn = elf_newscn(elf);
		d = elf_newdata(scn);
		d->d_buf = (void *)spec[i].data;
		d->d_size = spec[i].len;
		d->d_type = ELF_T_BYTE;
		d->d_align = spec[i].type == SHT_NOTE ? 4 : 1;
		sh = elf64_getshdr(scn);
		sh->sh_name = (Elf64_Word)name_off[i];
		sh->sh_type = spec[i].type;
		sh->sh_flags = spec[i].flags;
		sh->sh_addralign = d->d_align;
	}
	scn = elf_newscn(elf);
	d = elf_newdata(scn);
	d->d_buf = shstr;
	d->d_size = shlen;
	d->d_type = ELF_T_BYTE;
	sh = elf64_getshdr(scn);
	sh->sh_name = (Elf64_Word)name_off[n];
	sh->sh_type = SHT_STRTAB;
	eh->e_shstrndx = (Elf64_Half)elf_ndxscn(scn);
	assert_true(elf_update(elf, ELF_C_WRITE) > 0);
	elf_end(elf);
	close(fd);
}

static Elf *open_elf(const char *path, int *fd)
{
	Elf *elf;

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(*fd >= 0);
	elf = elf_begin(*fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	assert_non_null(elf);
	return elf;
}

/* ---- USDT notes ---- */

struct probe_count {
	size_t calls, dup_calls;
};

static int count_probe(const char *name, void *ctx)
{
	struct probe_count *c = ctx;

	c->calls++;
	c->dup_calls += !strcmp(name, "dup");
	return 0;
}

static size_t add_note(uint8_t *p, const char *name)
{
	uint32_t hdr[3] = {8, 0, 3};
	size_t desc = 24 + 9 + strlen(name) + 2, off = 12 + 8;

	hdr[1] = (uint32_t)desc;
	memcpy(p, hdr, sizeof(hdr));
	memcpy(p + 12, "stapsdt", 8);
	memset(p + off, 0, 24);
	memcpy(p + off + 24, "gaptrace", 9);
	memcpy(p + off + 33, name, strlen(name) + 1);
	p[off + 33 + strlen(name) + 1] = '\0'; /* empty argument string */
	return off + ((desc + 3) & ~(size_t)3);
}

/*
 * 16 MB of notes with distinct names (their count capped, 65,536), plus a
 * repeated one: each distinct name reported once, within the name cap, fast.
 */
static void test_usdt_distinct_names(void **state)
{
	char path[] = "/tmp/gaptrace-test-usdt-XXXXXX";
	size_t cap = 16u << 20, len = 0, i = 0;
	uint8_t *notes = gt_xcalloc(1, cap + 64);
	struct scn_spec spec = {".note.stapsdt", SHT_NOTE, SHF_ALLOC, notes, 0};
	struct probe_count c = {};
	uint64_t before = bound__count(BOUND_USDT);
	char name[32];
	double t0;
	int fd = mkstemp(path), n;

	assert_true(fd >= 0);
	close(fd);
	len += add_note(notes + len, "dup");
	len += add_note(notes + len, "dup");
	while (len + 64 < cap) {
		snprintf(name, sizeof(name), "p%07zu", i++);
		len += add_note(notes + len, name);
	}
	spec.len = len;
	write_elf(path, &spec, 1);
	t0 = now_s();
	n = syms_elf_usdt_probes(path, "gaptrace", count_probe, &c);
	assert_true(now_s() - t0 < 5.0);
	assert_int_equal(n, BOUND_USDT_NAMES);
	assert_int_equal(c.calls, BOUND_USDT_NAMES);
	assert_int_equal(c.dup_calls, 1);
	assert_int_equal(bound__count(BOUND_USDT), before + 1);
	unlink(path);
	free(notes);
}

/* ---- xz and compressed sections ---- */

static uint8_t *xz_of_zeros(size_t n, size_t *len)
{
	uint8_t *zeros = gt_xcalloc(1, n), *out = gt_xmalloc(n / 8 + 4096);

	*len = 0;
	assert_int_equal(
	    lzma_easy_buffer_encode(0, LZMA_CHECK_CRC32, NULL, zeros, n, out, len, n / 8 + 4096),
	    LZMA_OK);
	free(zeros);
	return out;
}

static void test_unxz_caps(void **state)
{
	size_t len, outlen;
	uint8_t *xz = xz_of_zeros(8u << 20, &len), junk[64] = {0xfd, '7', 'z'};
	void *out;

	assert_int_equal(zelf__unxz(xz, len, 8u << 20, &out, &outlen), 0);
	assert_int_equal(outlen, 8u << 20);
	assert_int_equal(((uint8_t *)out)[outlen - 1], 0);
	free(out);
	/* One byte short of what it inflates to. */
	assert_int_equal(zelf__unxz(xz, len, (8u << 20) - 1, &out, &outlen), -E2BIG);
	assert_null(out);
	assert_int_equal(zelf__unxz(xz, len / 2, 8u << 20, &out, &outlen), -EINVAL);
	assert_int_equal(zelf__unxz(junk, sizeof(junk), 8u << 20, &out, &outlen), -EINVAL);
	assert_int_equal(zelf__unxz(xz, 0, 8u << 20, &out, &outlen), -EINVAL);
	free(xz);
}

/* .gnu_debugdata over its cap: refused, and hidden from whoever reads the Elf next (dwfl). */
static void test_minidebug_bomb_hidden(void **state)
{
	char path[] = "/tmp/gaptrace-test-mini-XXXXXX";
	size_t len, n = BOUND_MINIDEBUG_BYTES + (1u << 20), shstrndx;
	uint8_t *xz = xz_of_zeros(n, &len);
	struct scn_spec spec = {".gnu_debugdata", SHT_PROGBITS, 0, xz, len};
	Elf_Scn *scn = NULL;
	void *img;
	int fd = mkstemp(path);
	Elf *elf;

	assert_true(fd >= 0);
	close(fd);
	write_elf(path, &spec, 1);
	elf = open_elf(path, &fd);
	assert_int_equal(zelf__take_minidebug(elf, &img, &len), -E2BIG);
	assert_null(img);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		assert_non_null(gelf_getshdr(scn, &sh));
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		assert_true(!name || strcmp(name, ".gnu_debugdata"));
	}
	assert_int_equal(zelf__take_minidebug(elf, &img, &len), -ENOENT);
	elf_end(elf);
	close(fd);
	unlink(path);
	free(xz);
}

static void test_compressed_dwarf_sizes(void **state)
{
	char path[] = "/tmp/gaptrace-test-zdw-XXXXXX";
	Elf64_Chdr big = {ELFCOMPRESS_ZLIB, 0, 2ull << 30, 1},
		   small = {ELFCOMPRESS_ZLIB, 0, 4096, 1};
	uint8_t zgnu[12] = {'Z', 'L', 'I', 'B', 0, 0, 0, 0, 0x40, 0, 0, 0}; /* 1 GiB, big-endian */
	struct scn_spec spec[2] = {
	    {".debug_info", SHT_PROGBITS, SHF_COMPRESSED, &small, sizeof(small)},
	    {".debug_str", SHT_PROGBITS, SHF_COMPRESSED, &small, sizeof(small)},
	};
	int fd = mkstemp(path);
	Elf *elf;

	assert_true(fd >= 0);
	close(fd);
	write_elf(path, spec, 2);
	elf = open_elf(path, &fd);
	assert_true(zelf__dwarf_fits(elf));
	elf_end(elf);
	close(fd);

	spec[1].data = &big;
	write_elf(path, spec, 2);
	elf = open_elf(path, &fd);
	assert_false(zelf__dwarf_fits(elf));
	elf_end(elf);
	close(fd);

	spec[1] = (struct scn_spec){".zdebug_str", SHT_PROGBITS, 0, zgnu, sizeof(zgnu)};
	write_elf(path, spec, 2);
	elf = open_elf(path, &fd);
	assert_false(zelf__dwarf_fits(elf));
	elf_end(elf);
	close(fd);
	unlink(path);
}

/*
 * A traced program may rewrite a file it owns after the recorder measured
 * it: zelf__pin keeps the measured headers in the recorder's Elf handle.
 */
static void test_pin_keeps_measured_headers(void **state)
{
	char path[] = "/tmp/gaptrace-test-pin-XXXXXX";
	Elf64_Chdr small = {ELFCOMPRESS_ZLIB, 0, 4096, 1};
	uint64_t big = 2ull << 30;
	struct scn_spec spec = {".debug_info", SHT_PROGBITS, SHF_COMPRESSED, &small, sizeof(small)};
	int fd = mkstemp(path), fd_pinned, fd_plain, wfd;
	Elf *pinned, *plain, *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint64_t off = 0;

	assert_true(fd >= 0);
	close(fd);
	write_elf(path, &spec, 1);
	pinned = open_elf(path, &fd_pinned);
	plain = open_elf(path, &fd_plain);
	assert_true(zelf__pin(pinned));
	assert_true(zelf__dwarf_fits(pinned));
	/* Where ch_size lies in the file. */
	elf = open_elf(path, &fd);
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			off = sh.sh_offset + offsetof(Elf64_Chdr, ch_size);
	elf_end(elf);
	close(fd);
	assert_true(off > 0);
	wfd = open(path, O_WRONLY | O_CLOEXEC);
	assert_true(wfd >= 0);
	assert_int_equal(pwrite(wfd, &big, sizeof(big), (off_t)off), sizeof(big));
	close(wfd);
	/* The unpinned handle follows the file; the pinned one does not. */
	assert_false(zelf__dwarf_fits(plain));
	assert_true(zelf__dwarf_fits(pinned));
	elf_end(pinned);
	elf_end(plain);
	close(fd_pinned);
	close(fd_plain);
	unlink(path);
}

/*
 * A process with more executable mappings, of longer paths, than the
 * symbolizer keeps (this one: 20,000 hard links of one page, ~1.4 KiB
 * paths): the cut is counted, the memory its table holds stays under the
 * caps (28 MiB of paths before them), and kept mappings still resolve.
 */
static void test_mappings_capped(void **state)
{
	enum { N = 20000, SAMPLES = 64 };
	char dir[] = "/tmp/gt-test-maps-XXXXXX", path[2048], seg[201];
	uint64_t cut0 = bound__count(BOUND_MAPPINGS);
	void **addrs = calloc(N, sizeof(*addrs));
	unsigned kept = 0, out = 0;
	struct syms_cache *c;
	struct mallinfo2 m0, m1;
	size_t dlen;
	int fd, dfd;

	(void)state;
	assert_non_null(addrs);
	assert_non_null(mkdtemp(dir));
	memset(seg, 'd', 200);
	seg[200] = '\0';
	/* Directories of 200-byte names: a path past NAME_MAX in each. */
	dlen = (size_t)snprintf(path, sizeof(path), "%s", dir);
	for (int d = 0; d < 6; d++) {
		dlen += (size_t)snprintf(path + dlen, sizeof(path) - dlen, "/%s", seg);
		assert_int_equal(mkdir(path, 0700), 0);
	}
	/* Names relative to the deepest directory: no long walk per link. */
	dfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	fd = openat(dfd, "f", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	close(fd);
	for (int i = 0; i < N; i++) {
		char name[256];

		snprintf(name, sizeof(name), "l%05d%.180s", i, seg);
		assert_int_equal(linkat(dfd, "f", dfd, name, 0), 0);
		fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		addrs[i] = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		assert_true(addrs[i] != MAP_FAILED);
		close(fd);
	}
	c = syms_cache__new();
	m0 = mallinfo2();
	for (int k = 0; k < SAMPLES; k++) {
		const char *name, *module;
		uint32_t off;

		syms_cache__resolve(c, (uint32_t)getpid(), (uint64_t)addrs[k * (N / SAMPLES)],
				    &name, &off, &module);
		if (module)
			kept++;
		else
			out++;
	}
	m1 = mallinfo2();
	assert_true(m1.uordblks - m0.uordblks < (16u << 20));
	assert_true(bound__count(BOUND_MAPPINGS) > cut0);
	assert_true(kept > 0 && out > 0);
	syms_cache__free(c);
	for (int i = 0; i < N; i++) {
		char name[256];

		munmap(addrs[i], 4096);
		snprintf(name, sizeof(name), "l%05d%.180s", i, seg);
		unlinkat(dfd, name, 0);
	}
	unlinkat(dfd, "f", 0);
	close(dfd);
	for (int d = 6; d > 0; d--) {
		path[dlen] = '\0';
		assert_int_equal(rmdir(path), 0);
		dlen -= 201;
	}
	assert_int_equal(rmdir(dir), 0);
	free(addrs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_symtab_alias_bomb),
	    cmocka_unit_test(test_symtab_name_bytes_cap),
	    cmocka_unit_test(test_symtab_alias_choice),
	    cmocka_unit_test(test_usdt_distinct_names),
	    cmocka_unit_test(test_unxz_caps),
	    cmocka_unit_test(test_minidebug_bomb_hidden),
	    cmocka_unit_test(test_compressed_dwarf_sizes),
	    cmocka_unit_test(test_pin_keeps_measured_headers),
	    cmocka_unit_test(test_mappings_capped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
