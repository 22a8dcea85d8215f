// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inline_spin.c: test_syms_dwfl's target, built -O2 -g: a static function
 * (hidden_spin, in .symtab only) spinning forever inside crunch, inlined
 * into it.  It prints "ready" once it is about to spin.
 */
#include <stdio.h>

static volatile unsigned long sink;
static volatile int go = 1;

static inline __attribute__((always_inline)) void crunch(unsigned long n)
{
	while (go)
		sink = sink * 6364136223846793005UL + n;
}

static __attribute__((noinline, noipa)) void hidden_spin(unsigned long n)
{
	crunch(n);
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("ready\n");
	fflush(stdout);
	hidden_spin((unsigned long)argc);
	return 0;
}
