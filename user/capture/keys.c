// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * keys.c: the names of the capture's HEADER, COUNTERS and END keys (keys.h),
 * looked up both ways.
 */
#include <string.h>

#include "capture/keys.h"

static const char *const names[CK_MAX] = {
#define CAPTURE_KEY_NAME(id, name) [CK_##id] = name,
    CAPTURE_KEYS(CAPTURE_KEY_NAME)
#undef CAPTURE_KEY_NAME
};

const char *capture_key__name(enum capture_key k)
{
	return (unsigned)k < CK_MAX ? names[k] : "";
}

enum capture_key capture_key__find(const char *name)
{
	/* ~90 keys, read from two blocks per capture (COUNTERS, END): a scan is enough. */
	for (unsigned k = 0; k < CK_MAX; k++)
		if (!strcmp(names[k], name))
			return (enum capture_key)k;
	return CK_MAX;
}
