// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nofp.c: a program built without frame pointers (-O2 -fomit-frame-pointer)
 * whose main thread blocks in read() at a known depth, main → f1 → f2 → f3.
 * test_unwind unwinds it; it prints "ready" on stdout, then blocks on stdin.
 */
#include <stdio.h>
#include <unistd.h>

/* noipa: no inlining or cloning, so each function keeps its own frame and name. */
__attribute__((noipa)) int f3(int fd)
{
	char buf[64];
	volatile int pad[24];

	pad[0] = 0;
	pad[3] = fd;
	printf("ready\n");
	fflush(stdout);
	return (int)read(pad[3], buf, sizeof(buf)) + pad[0];
}

__attribute__((noipa)) int f2(int fd)
{
	volatile long spill[8];

	spill[5] = fd;
	return f3((int)spill[5]) + 2;
}

__attribute__((noipa)) int f1(int fd)
{
	volatile char area[200];

	area[7] = (char)fd;
	return f2(area[7]) * 3;
}

int main(void)
{
	return f1(0) == 12345;
}
