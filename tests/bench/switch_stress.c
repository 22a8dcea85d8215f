// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * switch_stress: a context-switch stress target for tools/bench.
 *
 * Pairs of threads ping-pong (each round trip = 2 context switches), both
 * threads of a pair pinned to one CPU so every hand-off is a real switch.
 * Between round trips the initiator spins a fixed amount of work, computed
 * once at start from --rate (no feedback: under load the achieved rate is
 * what it is, and is reported).  Throughput = round trips in the window;
 * traced/untraced compares the two.
 *
 * Modes: pipe   1-byte pipe writes/reads
 *        futex  futex wait/wake on a shared word
 *        mix    futex ping-pong plus ~1M uncontended mutex lock/unlock per s
 *        many   pipe ping-pong with --pairs * 16 pairs (many threads)
 *        stacks pipe ping-pong from the leaves of a 2-way recursion of depth
 *               --depth: 2^depth distinct user stacks (stack map pressure)
 *
 * With --wait the window opens at SIGUSR1 (after a tracer attached), else
 * after --warmup.  At the window's end it prints key=value lines and, with
 * --linger, waits for SIGUSR2 before exiting (so a tracer can be read).
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum mode { M_PIPE, M_FUTEX, M_MIX, M_MANY, M_STACKS };

struct pair {
	int ab[2], ba[2];	 /* pipes: a->b, b->a */
	_Atomic uint32_t fa, fb; /* futex words */
	pthread_mutex_t mu;	 /* mix: uncontended */
	int cpu;
	_Atomic uint64_t rounds;
	pthread_t ta, tb;
};

static enum mode mode = M_PIPE;
static double rate = 100000, duration = 3, warmup = 0.5;
static int npairs = 1, first_cpu = 0, depth = 15;
static bool wait_sig, linger;
static uint64_t spin_per_round;	 /* spin loop iterations between round trips */
static uint32_t mutex_per_round; /* mix: mutex ops between round trips */
static _Atomic int stop;
static volatile sig_atomic_t go, done;
static struct pair *pairs;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin(uint64_t n)
{
	for (volatile uint64_t i = 0; i < n; i++)
		;
}

static void fwait(_Atomic uint32_t *w)
{
	while (atomic_exchange(w, 0) == 0)
		syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

static void fwake(_Atomic uint32_t *w)
{
	atomic_store(w, 1);
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* One round trip from the initiator's side. */
static void round_a(struct pair *p)
{
	char c = 0;

	if (mode == M_FUTEX || mode == M_MIX) {
		fwake(&p->fb);
		fwait(&p->fa);
	} else {
		if (write(p->ab[1], &c, 1) != 1 || read(p->ba[0], &c, 1) != 1)
			atomic_store(&stop, 1);
	}
}

/* stacks mode: the round trip happens at a leaf of a path chosen by bits. */
static __attribute__((noinline)) void leaf(struct pair *p)
{
	round_a(p);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void walk1(struct pair *p, uint32_t bits, int d);

static __attribute__((noinline)) void walk0(struct pair *p, uint32_t bits, int d)
{
	if (d == 0)
		leaf(p);
	else if (bits & 1)
		walk1(p, bits >> 1, d - 1);
	else
		walk0(p, bits >> 1, d - 1);
	__asm__ volatile("" ::: "memory");
}

/* Not walk0's code: identical functions are folded into one (gcc -O2 -fipa-icf). */
static __attribute__((noinline)) void walk1(struct pair *p, uint32_t bits, int d)
{
	if (d == 0)
		leaf(p);
	else if (bits & 1)
		walk1(p, bits >> 1, d - 1);
	else
		walk0(p, bits >> 1, d - 1);
	__asm__ volatile("nop" ::: "memory");
}

static void *run_a(void *arg)
{
	struct pair *p = arg;
	uint32_t path = 0;

	pin(p->cpu);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (mode == M_STACKS)
			walk0(p, path++, depth);
		else
			round_a(p);
		atomic_fetch_add_explicit(&p->rounds, 1, memory_order_relaxed);
		spin(spin_per_round);
		for (uint32_t i = 0; i < mutex_per_round; i++) {
			pthread_mutex_lock(&p->mu);
			pthread_mutex_unlock(&p->mu);
		}
	}
	/* Release the partner. */
	if (mode == M_FUTEX || mode == M_MIX) {
		fwake(&p->fb);
	} else {
		close(p->ab[1]);
	}
	return NULL;
}

static void *run_b(void *arg)
{
	struct pair *p = arg;
	char c;

	pin(p->cpu);
	for (;;) {
		if (mode == M_FUTEX || mode == M_MIX) {
			fwait(&p->fb);
			fwake(&p->fa); /* also at stop: the initiator may wait for it */
			if (atomic_load(&stop))
				break;
		} else {
			if (read(p->ab[0], &c, 1) != 1)
				break;
			if (write(p->ba[1], &c, 1) != 1)
				break;
		}
	}
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static void on_usr2(int sig)
{
	(void)sig;
	done = 1;
}

static uint64_t total_rounds(void)
{
	uint64_t n = 0;

	for (int i = 0; i < npairs; i++)
		n += atomic_load(&pairs[i].rounds);
	return n;
}

/* Spin iterations per microsecond, measured on this thread. */
/*
 * Spin iterations per microsecond: the best of several short tries, since a
 * try that was interrupted only reads low.  tools/bench measures it once per
 * row (--calibrate) and hands the same figure to every run (--spin-per-us):
 * a per-process calibration made each run's work differ by up to 2x on a
 * noisy VM, which swamped the traced/untraced ratio.
 */
static double spin_per_us(void)
{
	double best = 0;

	for (int i = 0; i < 20; i++) {
		uint64_t n = 2000000, t0 = now_ns();
		double r;

		spin(n);
		r = (double)n * 1000.0 / (double)(now_ns() - t0 + 1);
		if (r > best)
			best = r;
	}
	return best;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: switch_stress [--mode pipe|futex|mix|many|stacks] [--rate SWITCHES_PER_S]\n"
		"         [--pairs N] [--first-cpu C] [--duration S] [--warmup S] [--depth D]\n"
		"         [--wait] [--linger] [--spin-per-us X | --calibrate]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	struct rusage r0, r1;
	uint64_t n0, n1, t0, t1;
	double per_us = 0, period_us;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--wait")) {
			wait_sig = true;
			continue;
		}
		if (!strcmp(a, "--linger")) {
			linger = true;
			continue;
		}
		if (!strcmp(a, "--calibrate")) {
			printf("spin_per_us=%.3f\n", spin_per_us());
			return 0;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--mode")) {
			if (!strcmp(v, "pipe"))
				mode = M_PIPE;
			else if (!strcmp(v, "futex"))
				mode = M_FUTEX;
			else if (!strcmp(v, "mix"))
				mode = M_MIX;
			else if (!strcmp(v, "many"))
				mode = M_MANY;
			else if (!strcmp(v, "stacks"))
				mode = M_STACKS;
			else
				usage();
		} else if (!strcmp(a, "--rate")) {
			rate = atof(v);
		} else if (!strcmp(a, "--pairs")) {
			npairs = atoi(v);
		} else if (!strcmp(a, "--first-cpu")) {
			first_cpu = atoi(v);
		} else if (!strcmp(a, "--duration")) {
			duration = atof(v);
		} else if (!strcmp(a, "--warmup")) {
			warmup = atof(v);
		} else if (!strcmp(a, "--depth")) {
			depth = atoi(v);
		} else if (!strcmp(a, "--spin-per-us")) {
			per_us = atof(v);
		} else {
			usage();
		}
	}
	if (npairs < 1 || rate <= 0 || duration <= 0 || depth < 0 || depth > 30)
		usage();
	if (mode == M_MANY)
		npairs *= 16;

	/*
	 * Fixed work per round trip: the pair's share of the rate gives a round
	 * trip period; the part not spent switching (~3 us per switch assumed)
	 * is spin.  pairs on one CPU share it, so the period is per CPU.
	 */
	if (per_us <= 0)
		per_us = spin_per_us();
	{
		int cpus = npairs < ncpu - first_cpu ? npairs : ncpu - first_cpu;
		double per_cpu_rate = rate / (cpus > 0 ? cpus : 1);
		double pairs_per_cpu = (double)npairs / (cpus > 0 ? cpus : 1);

		period_us = 2e6 / per_cpu_rate; /* one round trip on one CPU */
		period_us = period_us * pairs_per_cpu - 6.0 * pairs_per_cpu;
		if (period_us < 0)
			period_us = 0;
		/* each pair's spin is shared CPU time: divide among pairs on it */
		period_us /= pairs_per_cpu;
	}
	spin_per_round = (uint64_t)(period_us * per_us);
	if (mode == M_MIX) {
		/* ~1M mutex ops/s in all: ops per round trip at the target rate. */
		mutex_per_round = (uint32_t)(1e6 / (rate / 2));
		if (!mutex_per_round)
			mutex_per_round = 1;
	}

	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, on_usr2);
	pairs = calloc((size_t)npairs, sizeof(*pairs));
	if (!pairs)
		return 1;
	for (int i = 0; i < npairs; i++) {
		struct pair *p = &pairs[i];

		if (pipe(p->ab) || pipe(p->ba)) {
			fprintf(stderr, "switch_stress: error: pipe: %s (raise ulimit -n)\n",
				strerror(errno));
			return 1;
		}
		pthread_mutex_init(&p->mu, NULL);
		p->cpu = first_cpu + i % (ncpu - first_cpu > 0 ? ncpu - first_cpu : 1);
		pthread_create(&p->tb, NULL, run_b, p);
		pthread_create(&p->ta, NULL, run_a, p);
	}
	if (wait_sig) {
		printf("ready pid=%d\n", getpid());
		fflush(stdout);
		while (!go)
			usleep(1000);
	} else {
		usleep((useconds_t)(warmup * 1e6));
	}
	getrusage(RUSAGE_SELF, &r0);
	n0 = total_rounds();
	t0 = now_ns();
	usleep((useconds_t)(duration * 1e6));
	n1 = total_rounds();
	t1 = now_ns();
	getrusage(RUSAGE_SELF, &r1);
	{
		double secs = (double)(t1 - t0) / 1e9;
		long vcs = r1.ru_nvcsw - r0.ru_nvcsw, ivcs = r1.ru_nivcsw - r0.ru_nivcsw;
		double cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) +
			     (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) / 1e6 +
			     (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
			     (double)(r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6;

		printf("mode=%s\nrate_target=%.0f\npairs=%d\nseconds=%.3f\nrounds=%llu\n"
		       "rounds_per_s=%.0f\nswitches=%ld\nswitches_per_s=%.0f\ncpu_s=%.3f\n"
		       "spin_per_round=%llu\nmutex_per_round=%u\n",
		       (const char *[]){"pipe", "futex", "mix", "many", "stacks"}[mode], rate,
		       npairs, secs, (unsigned long long)(n1 - n0), (double)(n1 - n0) / secs,
		       vcs + ivcs, (double)(vcs + ivcs) / secs, cpu,
		       (unsigned long long)spin_per_round, mutex_per_round);
		printf("done\n");
		fflush(stdout);
	}
	if (linger)
		while (!done)
			usleep(1000);
	atomic_store(&stop, 1);
	for (int i = 0; i < npairs; i++) {
		pthread_join(pairs[i].ta, NULL);
		pthread_join(pairs[i].tb, NULL);
	}
	return 0;
}
