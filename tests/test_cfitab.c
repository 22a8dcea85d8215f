// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_cfitab.c: the CFI compiler on crafted .eh_frame sections with known
 * rows (prologue, frame pointer, PLT, signal frame, thread root), on hostile
 * ones (lying lengths, self-referencing CIE pointers, deep remember_state,
 * advances past the FDE, a row flood, random bytes): bounded and counted;
 * and on a real object built without frame pointers.
 */
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "record/cfitab.h"

#define SEC_ADDR 0x200000 /* the crafted section's ELF address */

struct sec {
	uint8_t b[1 << 16];
	size_t n;
};

static void put(struct sec *s, const void *p, size_t n)
{
	assert_true(s->n + n <= sizeof(s->b));
	if (n)
		memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void put32(struct sec *s, uint32_t v)
{
	put(s, &v, 4);
}

/* A CIE ("zR" or aug, pcrel sdata4 pointers, CFA rsp+8, RA at CFA-8); returns its offset. */
static size_t put_cie(struct sec *s, const char *aug)
{
	static const uint8_t body[] = {1, 0x78, 16, 1, 0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01};
	size_t at = s->n, len_at;

	put32(s, 0);
	len_at = s->n;
	put32(s, 0); /* CIE id */
	put(s, "\x01", 1);
	put(s, aug, strlen(aug) + 1);
	put(s, body, sizeof(body));
	while ((s->n - len_at) % 4)
		put(s, "\0", 1); /* DW_CFA_nop */
	*(uint32_t *)(s->b + at) = (uint32_t)(s->n - len_at);
	return at;
}

/* An FDE for [pc, pc + range) of the CIE at cie with instructions insns. */
static void put_fde(struct sec *s, size_t cie, uint64_t pc, uint32_t range, const uint8_t *insns,
		    size_t n)
{
	size_t at = s->n, len_at;

	put32(s, 0);
	len_at = s->n;
	put32(s, (uint32_t)(s->n - cie));
	put32(s, (uint32_t)(int32_t)(pc - (SEC_ADDR + s->n)));
	put32(s, range);
	put(s, "\0", 1); /* augmentation data length */
	put(s, insns, n);
	while ((s->n - len_at) % 4)
		put(s, "\0", 1);
	*(uint32_t *)(s->b + at) = (uint32_t)(s->n - len_at);
}

static struct cfitab compile(struct sec *s, size_t max_rows)
{
	struct cfitab t;

	cfitab__init(&t, max_rows);
	cfitab__add_section(&t, s->b, s->n, SEC_ADDR, true);
	cfitab__finish(&t);
	return t;
}

static void assert_row(const struct cfitab *t, uint32_t pc, uint8_t kind, int cfa8, int rbp8)
{
	struct gt_cfi_row r = cfitab__find(t, pc);

	assert_int_equal(r.kind, kind);
	if (kind != GT_CFI_NONE) {
		assert_int_equal(r.cfa8, cfa8);
		assert_int_equal(r.rbp8, rbp8);
	}
}

/* push %rbp; mov %rsp,%rbp; ...; pop %rbp at 0x34: the rows GCC's CFI gives. */
static void test_prologue_rows(void **state)
{
	static const uint8_t insns[] = {
	    0x41, 0x0e, 0x10, 0x86, 0x02, /* +1: CFA rsp+16, rbp at CFA-16 */
	    0x43, 0x0d, 0x06,		  /* +3: CFA rbp+16 */
	    0x02, 0x30, 0x0c, 0x07, 0x08, /* +0x30: CFA rsp+8 */
	};
	struct sec *s = calloc(1, sizeof(*s));
	struct cfitab t;

	put_fde(s, put_cie(s, "zR"), 0x1000, 0x40, insns, sizeof(insns));
	t = compile(s, 1000);
	assert_int_equal(t.st.fdes, 1);
	assert_int_equal(t.st.bad_entries, 0);
	assert_row(&t, 0xfff, GT_CFI_NONE, 0, 0);
	assert_row(&t, 0x1000, GT_CFI_RSP, 1, 0);
	assert_row(&t, 0x1001, GT_CFI_RSP, 2, -2);
	assert_row(&t, 0x1003, GT_CFI_RSP, 2, -2);
	assert_row(&t, 0x1004, GT_CFI_RBP, 2, -2);
	assert_row(&t, 0x1033, GT_CFI_RBP, 2, -2);
	assert_row(&t, 0x1034, GT_CFI_RSP, 1, -2);
	assert_row(&t, 0x1040, GT_CFI_NONE, 0, 0);
	assert_int_equal(t.nr, 5);
	cfitab__free(&t);
	free(s);
}

/* Undefined RA (the thread's root), the PLT expression, another expression, a signal frame. */
static void test_special_rows(void **state)
{
	static const uint8_t root[] = {0x07, 0x10};
	static const uint8_t plt[] = {0x0f, 11,	  0x77, 0x08, 0x80, 0x00, 0x3f,
				      0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22};
	static const uint8_t expr[] = {0x0f, 3, 0x76, 0x78, 0x06}; /* *(rbp - 8) */
	struct sec *s = calloc(1, sizeof(*s));
	size_t cie, sig;
	struct cfitab t;

	cie = put_cie(s, "zR");
	put_fde(s, cie, 0x1000, 0x10, root, sizeof(root));
	put_fde(s, cie, 0x2000, 0x100, plt, sizeof(plt));
	put_fde(s, cie, 0x3000, 0x10, expr, sizeof(expr));
	sig = put_cie(s, "zRS");
	put_fde(s, sig, 0x4000, 0x10, NULL, 0);
	t = compile(s, 1000);
	assert_int_equal(t.st.fdes, 4);
	assert_row(&t, 0x1008, GT_CFI_ROOT, 0, 0);
	assert_row(&t, 0x20f0, GT_CFI_PLT, 11, 0);
	assert_row(&t, 0x3000, GT_CFI_EXPR, 0, 0);
	assert_int_equal(t.st.expr_rows, 1);
	assert_row(&t, 0x4004, GT_CFI_SIGNAL, 0, 0);
	cfitab__free(&t);
	free(s);
}

/* An FDE over the PLT wins over the fallback; the fallback covers a PLT without one. */
static void test_fallback(void **state)
{
	static const uint8_t insns[] = {0x0e, 0x10};
	struct sec *s = calloc(1, sizeof(*s));
	struct cfitab t;

	put_fde(s, put_cie(s, "zR"), 0x1000, 0x20, insns, sizeof(insns));
	cfitab__init(&t, 100);
	cfitab__add_fallback(&t, 0x1000, 0x1020, GT_CFI_PLT, 11);
	cfitab__add_fallback(&t, 0x1020, 0x1060, GT_CFI_RSP, 1);
	cfitab__add_section(&t, s->b, s->n, SEC_ADDR, true);
	cfitab__finish(&t);
	assert_row(&t, 0x1010, GT_CFI_RSP, 2, 0);
	assert_row(&t, 0x1020, GT_CFI_RSP, 1, 0);
	assert_row(&t, 0x105f, GT_CFI_RSP, 1, 0);
	assert_row(&t, 0x1060, GT_CFI_NONE, 0, 0);
	cfitab__free(&t);
	free(s);
}

/* A length past the section's end: counted, parsing stops, the rows before it stay. */
static void test_lying_length(void **state)
{
	static const uint8_t insns[] = {0x0e, 0x10};
	struct sec *s = calloc(1, sizeof(*s));
	struct cfitab t;
	size_t cie, bad;

	cie = put_cie(s, "zR");
	put_fde(s, cie, 0x1000, 0x20, insns, sizeof(insns));
	bad = s->n;
	put_fde(s, cie, 0x2000, 0x20, insns, sizeof(insns));
	*(uint32_t *)(s->b + bad) = 0x7ffffff0;
	t = compile(s, 100);
	assert_int_equal(t.st.fdes, 1);
	assert_int_equal(t.st.bad_entries, 1);
	assert_row(&t, 0x1000, GT_CFI_RSP, 2, 0);
	assert_row(&t, 0x2000, GT_CFI_NONE, 0, 0);
	cfitab__free(&t);
	free(s);
}

/* CIE pointers at the FDE itself, before the section, into a CIE's middle: skipped, counted. */
static void test_bad_cie_pointers(void **state)
{
	struct sec *s = calloc(1, sizeof(*s));
	struct cfitab t;
	size_t cie;

	cie = put_cie(s, "zR");
	for (size_t i = 0; i < 3; i++) {
		size_t at = s->n, id_at = at + 4;
		uint32_t ptr = i == 0	? 4
			       : i == 1 ? (uint32_t)id_at + 1
					: (uint32_t)(id_at - cie - 8);

		put_fde(s, cie, 0x1000 + 0x100 * i, 0x20, NULL, 0);
		*(uint32_t *)(s->b + id_at) = ptr;
	}
	t = compile(s, 100);
	assert_int_equal(t.st.fdes, 0);
	assert_int_equal(t.st.bad_entries, 3);
	assert_int_equal(t.nr, 0);
	cfitab__free(&t);
	free(s);
}

/* remember_state 20 deep, an advance past the FDE, an unknown opcode: cut short, counted. */
static void test_bad_ops(void **state)
{
	uint8_t deep[24], past[] = {0x0e, 0x10, 0x02, 0xff, 0x0e, 0x18}, unknown[] = {0x41, 0x3f};
	struct sec *s = calloc(1, sizeof(*s));
	struct cfitab t;
	size_t cie;

	memset(deep, 0x0a, sizeof(deep));
	cie = put_cie(s, "zR");
	put_fde(s, cie, 0x1000, 0x20, deep, sizeof(deep));
	put_fde(s, cie, 0x2000, 0x20, past, sizeof(past));
	put_fde(s, cie, 0x3000, 0x20, unknown, sizeof(unknown));
	t = compile(s, 100);
	assert_int_equal(t.st.bad_ops, 3);
	/* What follows a bad instruction is not trusted. */
	assert_row(&t, 0x1000, GT_CFI_EXPR, 0, 0);
	assert_row(&t, 0x2000, GT_CFI_EXPR, 0, 0);
	assert_row(&t, 0x3000, GT_CFI_RSP, 1, 0);
	assert_row(&t, 0x3001, GT_CFI_EXPR, 0, 0);
	cfitab__free(&t);
	free(s);
}

/* Thousands of FDEs: the row cap holds and says so. */
static void test_row_cap(void **state)
{
	static const uint8_t insns[] = {0x41, 0x0e, 0x10, 0x41, 0x0e, 0x08};
	struct sec *s = calloc(1, sizeof(*s));
	struct cfitab t;
	size_t cie = put_cie(s, "zR");

	for (int i = 0; s->n + 64 < sizeof(s->b); i++)
		put_fde(s, cie, 0x1000 + 0x10 * (uint64_t)i, 8, insns, sizeof(insns));
	t = compile(s, 500);
	assert_true(t.st.truncated);
	assert_true(t.nr <= 500);
	for (size_t i = 1; i < t.nr; i++)
		assert_true(t.rows[i - 1].pc < t.rows[i].pc);
	cfitab__free(&t);
	free(s);
}

/* Random bytes and random mutations of a valid section: no crash, sorted rows, bounded work. */
static void test_random(void **state)
{
	static const uint8_t insns[] = {0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06};
	struct sec *s = calloc(1, sizeof(*s)), *m = calloc(1, sizeof(*m));
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t cie = put_cie(s, "zR");

	for (int i = 0; i < 64; i++)
		put_fde(s, cie, 0x1000 + 0x40 * (uint64_t)i, 0x40, insns, sizeof(insns));
	for (int round = 0; round < 2000; round++) {
		struct cfitab t;

		*m = *s;
		for (int k = 0; k < 1 + round % 16; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			if (round & 1)
				m->b[x % m->n] = (uint8_t)(x >> 32);
			else
				m->b[x % m->n] ^= (uint8_t)(1u << (x >> 40) % 8);
		}
		if (round % 100 == 0)
			for (size_t k = 0; k < m->n; k++)
				m->b[k] = (uint8_t)(x >> (k % 56));
		t = compile(m, 10000);
		for (size_t i = 1; i < t.nr; i++)
			assert_true(t.rows[i - 1].pc < t.rows[i].pc);
		assert_true(t.st.ops <= 1ULL << 20 || t.st.truncated);
		cfitab__free(&t);
	}
	free(s);
	free(m);
}

/* The test program built without frame pointers: its main has rows, rsp-based. */
static void test_real_object(void **state)
{
	struct cfitab_load loads[8];
	unsigned nloads = 0;
	struct cfitab t;
	int fd = open(".output/tests/nofp", O_RDONLY);

	if (fd < 0)
		skip();
	cfitab__init(&t, 1 << 20);
	assert_int_equal(cfitab__from_elf_fd(&t, fd, loads, &nloads, 8), 0);
	close(fd);
	assert_true(nloads >= 2);
	assert_true(t.nr > 10);
	assert_int_equal(t.st.bad_entries, 0);
	cfitab__free(&t);
	fd = open("/dev/null", O_RDONLY);
	cfitab__init(&t, 100);
	assert_int_equal(cfitab__from_elf_fd(&t, fd, loads, &nloads, 8), -ENOEXEC);
	close(fd);
	cfitab__free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_prologue_rows),    cmocka_unit_test(test_special_rows),
	    cmocka_unit_test(test_fallback),	     cmocka_unit_test(test_lying_length),
	    cmocka_unit_test(test_bad_cie_pointers), cmocka_unit_test(test_bad_ops),
	    cmocka_unit_test(test_row_cap),	     cmocka_unit_test(test_random),
	    cmocka_unit_test(test_real_object),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
