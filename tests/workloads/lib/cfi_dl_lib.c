// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi_dl_lib.c: the library cfi_dlopen loads after it starts, built without
 * frame pointers: its threads block several calls deep inside it
 * (dl_enter -> dl_mid -> dl_leaf -> nanosleep) or at the bottom of a
 * recursion of dl_deep frames, so that their stacks are walked through code
 * the recorder could not have known at exec.
 */
#include <time.h>

int dl_block(int i, int depth);

/* noipa: each function keeps its own frame and name; the locals give each frame a size. */
__attribute__((noipa)) static int dl_leaf(int i)
{
	struct timespec ts = {0, 300000 + (i & 3) * 100000};
	volatile char pad[24];

	pad[3] = (char)i;
	nanosleep(&ts, NULL);
	return pad[3];
}

__attribute__((noipa)) static int dl_mid(int i)
{
	volatile long spill[3];

	spill[1] = i;
	return dl_leaf((int)spill[1]) + 1;
}

__attribute__((noipa)) static int dl_enter(int i)
{
	volatile int area[9];

	area[4] = i;
	return dl_mid(area[4]) * 3;
}

/* Not a tail call (the sum after it): one frame per level. */
__attribute__((noipa)) static int dl_deep(int n, int i)
{
	volatile int keep = n;

	if (n <= 1)
		return dl_leaf(i);
	return dl_deep(n - 1, i) + keep;
}

int dl_block(int i, int depth)
{
	return depth > 0 ? dl_deep(depth, i) : dl_enter(i);
}
