// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_usdt_specs.c: the USDT census (sites and distinct argument specs per
 * probe, capped) and function file offsets, read from this test's own
 * binary, whose probes and code are known.
 */
#include <setjmp.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/sdt.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbols/elf.h"
#include "symbols/func_offsets.h"
#include "symbols/usdt_specs.h"

/*
 * unit_begin: 4 sites, 3 distinct specs (constants 1, 2, 3, then 1 again);
 * gpu_op: 1 site; other providers' probes do not count.
 */
__attribute__((noinline, used)) int census_sites(int x)
{
	STAP_PROBE1(gaptrace, unit_begin, 1);
	STAP_PROBE1(gaptrace, unit_begin, 2);
	STAP_PROBE1(gaptrace, unit_begin, 3);
	STAP_PROBE1(gaptrace, unit_begin, 1);
	STAP_PROBE2(gaptrace, gpu_op, 7, 8);
	STAP_PROBE1(other, unit_begin, 4);
	return x + 1;
}

static const char *const names[] = {"unit_begin", "gpu_op", "unit_end"};

static void test_census_counts(void **state)
{
	struct usdt_census c[3];

	assert_int_equal(census_sites(1), 2);
	assert_int_equal(syms_elf_usdt_census("/proc/self/exe", "gaptrace", names, 3, 100, c), 2);
	assert_int_equal(c[0].sites, 4);
	assert_int_equal(c[0].specs, 3);
	assert_int_equal(c[1].sites, 1);
	assert_int_equal(c[1].specs, 1);
	assert_int_equal(c[2].sites, 0);
	assert_int_equal(c[2].specs, 0);
}

/* Distinct specs stop being counted one past the limit: enough to say "over". */
static void test_census_cap(void **state)
{
	struct usdt_census c[3];

	assert_int_equal(syms_elf_usdt_census("/proc/self/exe", "gaptrace", names, 3, 1, c), 2);
	assert_int_equal(c[0].sites, 4);
	assert_int_equal(c[0].specs, 2);
	assert_int_equal(syms_elf_usdt_census("/proc/self/exe", "gaptrace", names, 3, 0, c), 2);
	assert_int_equal(c[0].specs, 1);
}

static void test_census_errors(void **state)
{
	struct usdt_census c[1];

	assert_true(syms_elf_usdt_census("/nonexistent/x", "gaptrace", names, 1, 10, c) < 0);
	/* Not an ELF file: no probes, no error. */
	assert_int_equal(syms_elf_usdt_census("/proc/self/status", "gaptrace", names, 1, 10, c), 0);
	assert_int_equal(syms_elf_usdt_census("/proc/self/exe", "gaptrace", names, 33, 10, c),
			 -EINVAL);
}

/* The bytes at the file offset found are the function's code as mapped. */
static void test_func_offsets(void **state)
{
	const char *fn[] = {"census_sites", "no_such_function_here"};
	unsigned long off[2];
	uint8_t buf[16];
	FILE *f;

	assert_int_equal(syms_elf_func_offsets("/proc/self/exe", fn, 2, off), 1);
	assert_true(off[0] != 0);
	assert_int_equal(off[1], 0);
	f = fopen("/proc/self/exe", "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)off[0], SEEK_SET), 0);
	assert_int_equal(fread(buf, 1, sizeof(buf), f), sizeof(buf));
	fclose(f);
	assert_memory_equal(buf, (const void *)(uintptr_t)&census_sites, sizeof(buf));
	assert_true(syms_elf_func_offsets("/nonexistent/x", fn, 2, off) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_census_counts),
	    cmocka_unit_test(test_census_cap),
	    cmocka_unit_test(test_census_errors),
	    cmocka_unit_test(test_func_offsets),
	};

	elf__init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
