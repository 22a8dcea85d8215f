// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_fuzz_replay.c: replays the analysis fuzzer's regression inputs
 * (tests/fuzz/regress/) and seed corpus (tests/fuzz/corpus/) through the same
 * target the fuzzer runs: every command's output and the analysis's promises
 * (categories sum to each gap, gaps inside the capture, JSON that parses).
 * The ASan/UBSan build of this test is what catches memory errors.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#define GT_FUZZ_REPLAY
#include "fuzz/fuzz_analysis.c"

/* Replays every file of dir; returns how many. */
static size_t replay_dir(const char *dir)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[4096];
		uint8_t *buf;
		FILE *f;
		long len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		assert_non_null(f);
		assert_int_equal(fseek(f, 0, SEEK_END), 0);
		len = ftell(f);
		rewind(f);
		buf = malloc((size_t)len + 1);
		assert_non_null(buf);
		assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
		fclose(f);
		fuzz_analysis_one(buf, (size_t)len);
		free(buf);
		n++;
	}
	closedir(d);
	return n;
}

static void test_regress(void **state)
{
	/* The directory may hold no finding yet; it must exist. */
	replay_dir("tests/fuzz/regress");
}

static void test_corpus(void **state)
{
	assert_true(replay_dir("tests/fuzz/corpus") >= 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_regress),
	    cmocka_unit_test(test_corpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
