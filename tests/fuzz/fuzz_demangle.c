// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_demangle.c: libFuzzer target for gt_demangle — symbol names come from
 * the traced program's files, so any byte string must demangle or be refused.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *sym = malloc(size + 1), *d;

	if (!sym)
		return 0;
	memcpy(sym, data, size);
	sym[size] = '\0';
	d = gt_demangle(sym);
	/* Output is bounded whatever the input. */
	if (d && strlen(d) > GT_DEMANGLE_MAX)
		abort();
	free(d);
	free(sym);
	return 0;
}
