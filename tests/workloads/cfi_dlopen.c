// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi_dlopen.c: code the recorder first sees after exec.  Built without
 * frame pointers; after START_MS it dlopen()s LIB (libcfi_dl_lib.so, also
 * without them), and a new thread blocks inside it ITERATIONS times, three
 * calls deep (dl_enter -> dl_mid -> dl_leaf -> nanosleep), or DEPTH frames
 * of dl_deep deep when DEPTH > 0.  Meanwhile another thread sleeps 2 ms at a
 * time in code of its own making, a new anonymous executable page each time
 * (as a JIT's): every such stack is a miss for the symbolizer, which must
 * still read the maps again for the library's frames.  Prints "worker TID"
 * once it is running.  START_MS -1: dlopen once a byte arrives on stdin (a
 * recorder attached by then).
 * Usage: cfi_dlopen LIB [ITERATIONS] [DEPTH] [START_MS]
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int (*dl_block)(int i, int depth);
static long iterations = 1000;
static int depth;

/* mov $SYS_nanosleep, %eax; syscall; ret: nanosleep(rdi, rsi) from anonymous code. */
static const unsigned char jit_sleep_code[] = {0xb8, SYS_nanosleep, 0, 0, 0, 0x0f, 0x05, 0xc3};

static volatile int done;

/* Pages stay mapped: each sleep is at a new address, a new stack. */
static void *jit_main(void *arg)
{
	struct timespec ts = {0, 2 * 1000000};
	long (*fn)(struct timespec *, void *);
	void *page;

	(void)arg;
	for (int i = 0; i < 2000 && !done; i++) {
		page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (page == MAP_FAILED)
			break;
		memcpy(page, jit_sleep_code, sizeof(jit_sleep_code));
		*(void **)&fn = page;
		fn(&ts, NULL);
	}
	return NULL;
}

__attribute__((noipa)) static void *worker_main(void *arg)
{
	long sum = 0;

	(void)arg;
	printf("worker %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	for (long i = 0; i < iterations; i++)
		sum += dl_block((int)i, depth);
	return (void *)sum;
}

int main(int argc, char **argv)
{
	long start_ms = argc > 4 ? atol(argv[4]) : 300;
	struct timespec ts = {start_ms / 1000, start_ms % 1000 * 1000000};
	pthread_t t, jit;
	char go;
	void *h;

	if (argc < 2) {
		fprintf(stderr, "usage: cfi_dlopen LIB [ITERATIONS] [DEPTH] [START_MS]\n");
		return 2;
	}
	iterations = argc > 2 ? atol(argv[2]) : 1000;
	depth = argc > 3 ? atoi(argv[3]) : 0;
	if (pthread_create(&jit, NULL, jit_main, NULL))
		return 1;
	/* Time for the recorder to know the process without the library. */
	if (start_ms >= 0)
		nanosleep(&ts, NULL);
	else if (read(0, &go, 1) != 1)
		return 1;
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "cfi_dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&dl_block = dlsym(h, "dl_block");
	if (!dl_block || pthread_create(&t, NULL, worker_main, NULL))
		return 1;
	pthread_join(t, NULL);
	done = 1;
	pthread_join(jit, NULL);
	return 0;
}
