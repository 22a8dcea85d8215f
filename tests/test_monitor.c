// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_monitor.c: cmocka tests of the monitor's parts that need no BPF: the
 * metrics added up from hand-built analysis results and their exposition
 * text, the flight recorder's retention and snapshots, and the target match.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "monitor/duty.h"
#include "monitor/flight.h"
#include "monitor/http.h"
#include "monitor/match.h"
#include "monitor/prom.h"
#include "support/util.h"

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

/* One window: device 0 with two gaps (2 ms lock inter-unit, 40 ms split intra-unit). */
static void window_one(struct an_result *r, struct an_device *d, struct an_gap *g)
{
	memset(r, 0, sizeof(*r));
	memset(d, 0, sizeof(*d));
	memset(g, 0, 2 * sizeof(*g));
	d->id = 0;
	d->busy_ns = 600 * NSEC_PER_MSEC;
	d->span_ns = 800 * NSEC_PER_MSEC;
	d->ops = 10;
	d->first_ns = 1000 * NSEC_PER_MSEC;
	d->last_ns = 1800 * NSEC_PER_MSEC;
	g[0].device = 0;
	g[0].kind = GT_GAP_INTER;
	g[0].duration_ns = 2 * NSEC_PER_MSEC;
	g[0].by_cat[GT_CAT_LOCK] = 2 * NSEC_PER_MSEC;
	g[1].device = 0;
	g[1].kind = GT_GAP_INTRA;
	g[1].duration_ns = 40 * NSEC_PER_MSEC;
	g[1].by_cat[GT_CAT_ALLOC] = 30 * NSEC_PER_MSEC;
	g[1].by_cat[GT_CAT_SCHED] = 10 * NSEC_PER_MSEC;
	r->devices = d;
	r->ndevices = 1;
	r->gaps = g;
	r->ngaps = 2;
	r->gpu_source = "usdt (simulated)";
}

/* Two windows add up; the last one's efficiency is shown; the idle across the boundary counted. */
static void test_prom_windows(void **state)
{
	struct prom p = {0};
	struct an_result r;
	struct an_device d;
	struct an_gap g[2];
	size_t len;
	char *t;

	(void)state;
	window_one(&r, &d, g);
	prom__add_window(&p, &r, PROM_COV_FULL, 1.0);
	/* The second window: GPU work again 200 ms after the first window's last. */
	d.busy_ns = 500 * NSEC_PER_MSEC;
	d.span_ns = 1000 * NSEC_PER_MSEC;
	d.first_ns = 2000 * NSEC_PER_MSEC;
	d.last_ns = 3000 * NSEC_PER_MSEC;
	r.ngaps = 1;
	prom__add_window(&p, &r, PROM_COV_FULL, 1.0);
	p.restarts = 1;
	t = prom__render(&p, &len);
	assert_non_null(t);
	assert_int_equal(strlen(t), len);
	assert_true(has_line(t, "gaptrace_gpu_busy_seconds_total{device=\"0\"} 1.100000000"));
	assert_true(has_line(t, "gaptrace_gap_seconds_total{device=\"0\",category=\"lock\","
				"kind=\"inter-unit\"} 0.004000000"));
	assert_true(has_line(t, "gaptrace_gap_seconds_total{device=\"0\",category=\"allocator\","
				"kind=\"intra-unit\"} 0.030000000"));
	assert_true(has_line(t, "gaptrace_gap_seconds_total{device=\"0\",category=\"unknown\","
				"kind=\"unscoped\"} 0.000000000"));
	assert_true(has_line(t, "gaptrace_gaps_total{device=\"0\",kind=\"inter-unit\"} 2"));
	assert_true(has_line(t, "gaptrace_gaps_total{device=\"0\",kind=\"intra-unit\"} 1"));
	/* Cumulative buckets: two 2 ms gaps by le=0.0025, the 40 ms one by le=0.05. */
	assert_true(has_line(t, "gaptrace_gap_length_seconds_bucket{device=\"0\",le=\"0.001\"} 0"));
	assert_true(
	    has_line(t, "gaptrace_gap_length_seconds_bucket{device=\"0\",le=\"0.0025\"} 2"));
	assert_true(has_line(t, "gaptrace_gap_length_seconds_bucket{device=\"0\",le=\"0.025\"} 2"));
	assert_true(has_line(t, "gaptrace_gap_length_seconds_bucket{device=\"0\",le=\"0.05\"} 3"));
	assert_true(has_line(t, "gaptrace_gap_length_seconds_bucket{device=\"0\",le=\"+Inf\"} 3"));
	assert_true(has_line(t, "gaptrace_gap_length_seconds_sum{device=\"0\"} 0.044000000"));
	assert_true(has_line(t, "gaptrace_gap_length_seconds_count{device=\"0\"} 3"));
	assert_true(has_line(t, "gaptrace_window_efficiency_ratio{device=\"0\"} 0.500000"));
	assert_true(has_line(t, "gaptrace_boundary_idle_seconds_total{device=\"0\"} 0.200000000"));
	assert_true(
	    has_line(t, "gaptrace_window_gpu_source_info{source=\"usdt\",coverage=\"full\"} 1"));
	assert_true(has_line(t, "gaptrace_windows_total 2"));
	assert_true(has_line(t, "gaptrace_target_restarts_total 1"));
	assert_true(has_line(t, "# TYPE gaptrace_gap_length_seconds histogram"));
	assert_true(has_line(t, "# TYPE gaptrace_gap_seconds_total counter"));
	free(t);
}

/*
 * --gpu-duty: a window without GPU collection adds nothing to the busy and
 * gap counters even when its segment holds GPU records (the last ones of
 * the window before), keeps the last covered window's efficiency, and the
 * idle across it is no boundary idle.
 */
static void test_prom_uncovered_windows(void **state)
{
	struct prom p = {0};
	struct an_result r;
	struct an_device d;
	struct an_gap g[2];
	size_t len;
	char *t;

	(void)state;
	window_one(&r, &d, g);
	prom__add_window(&p, &r, PROM_COV_FULL, 10.0);
	/* Uncovered: the same numbers must not count. */
	d.busy_ns = 100 * NSEC_PER_MSEC;
	d.first_ns = 2000 * NSEC_PER_MSEC;
	d.last_ns = 2100 * NSEC_PER_MSEC;
	prom__add_window(&p, &r, PROM_COV_NONE, 0);
	t = prom__render(&p, &len);
	assert_non_null(t);
	assert_true(has_line(t, "gaptrace_gpu_busy_seconds_total{device=\"0\"} 0.600000000"));
	assert_true(has_line(t, "gaptrace_gaps_total{device=\"0\",kind=\"inter-unit\"} 1"));
	assert_true(has_line(t, "gaptrace_window_efficiency_ratio{device=\"0\"} 0.750000"));
	assert_true(
	    has_line(t, "gaptrace_window_gpu_source_info{source=\"none\",coverage=\"none\"} 1"));
	free(t);
	/* Covered again, 100 s later: its work counts, the 100 s of nothing are no boundary idle. */
	d.busy_ns = 500 * NSEC_PER_MSEC;
	d.span_ns = 1000 * NSEC_PER_MSEC;
	d.first_ns = 100000 * NSEC_PER_MSEC;
	d.last_ns = 101000 * NSEC_PER_MSEC;
	prom__add_window(&p, &r, PROM_COV_PARTIAL, 8.5);
	t = prom__render(&p, &len);
	assert_non_null(t);
	assert_true(has_line(t, "gaptrace_gpu_busy_seconds_total{device=\"0\"} 1.100000000"));
	assert_true(has_line(t, "gaptrace_gap_seconds_total{device=\"0\",category=\"lock\","
				"kind=\"inter-unit\"} 0.004000000"));
	assert_true(has_line(t, "gaptrace_boundary_idle_seconds_total{device=\"0\"} 0.000000000"));
	assert_true(has_line(t, "gaptrace_window_efficiency_ratio{device=\"0\"} 0.500000"));
	assert_true(
	    has_line(t, "gaptrace_window_gpu_source_info{source=\"usdt\",coverage=\"partial\"} 1"));
	assert_true(has_line(t, "gaptrace_gpu_windows_total{coverage=\"full\"} 1"));
	assert_true(has_line(t, "gaptrace_gpu_windows_total{coverage=\"partial\"} 1"));
	assert_true(has_line(t, "gaptrace_gpu_windows_total{coverage=\"none\"} 1"));
	assert_true(has_line(t, "gaptrace_gpu_covered_seconds_total 18.500"));
	assert_true(has_line(t, "gaptrace_windows_total 3"));
	free(t);
}

/*
 * The duty cycle's schedule: ON and PERIOD in whole windows, the probes on
 * DUTY_LEAD_NS before an ON window, off at its end, and each window's
 * coverage: the first after the attach partial, the next full, OFF ones none.
 */
static void test_duty_schedule(void **state)
{
	const uint64_t W = 10 * NSEC_PER_SEC, T0 = 1000 * NSEC_PER_SEC;
	uint64_t on, period, cov_ns, now = T0;
	struct gpu_duty d;
	char err[256];

	(void)state;
	assert_int_equal(gpu_duty__parse("always", &on, &period, err, sizeof(err)), 0);
	assert_int_equal(period, 0);
	assert_int_equal(gpu_duty__parse("20s/60s", &on, &period, err, sizeof(err)), 0);
	assert_int_equal(on, 20 * NSEC_PER_SEC);
	assert_int_equal(period, 60 * NSEC_PER_SEC);
	assert_int_equal(gpu_duty__parse("60s/20s", &on, &period, err, sizeof(err)), -1);
	assert_int_equal(gpu_duty__parse("10s", &on, &period, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "ON/PERIOD"));
	assert_int_equal(gpu_duty__init(&d, 15 * NSEC_PER_SEC, period, W, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "whole windows"));
	assert_int_equal(gpu_duty__init(&d, on, period, W, err, sizeof(err)), 0);
	assert_true(gpu_duty__ratio(&d) > 0.333 && gpu_duty__ratio(&d) < 0.334);
	/* Windows 0, 1 on; 2, 3, 4 off; 5 off; 6, 7 on. */
	assert_true(gpu_duty__window_on(&d, 0) && gpu_duty__window_on(&d, 1));
	assert_false(gpu_duty__window_on(&d, 2) || gpu_duty__window_on(&d, 5));
	assert_true(gpu_duty__window_on(&d, 6));

	gpu_duty__attached(&d, now);
	assert_int_equal(gpu_duty__switch(&d, now + NSEC_PER_SEC), -1);
	now += W;
	assert_int_equal(gpu_duty__window_end(&d, now, &cov_ns), PROM_COV_PARTIAL);
	assert_int_equal(cov_ns, W - DUTY_SETTLE_NS);
	now += W;
	assert_int_equal(gpu_duty__window_end(&d, now, &cov_ns), PROM_COV_FULL);
	assert_int_equal(cov_ns, W);
	/* Window 2 is off: the probes go off at once. */
	assert_int_equal(gpu_duty__switch(&d, now), 0);
	gpu_duty__gated(&d, false, true, now);
	assert_int_equal(gpu_duty__switch(&d, now + 5 * NSEC_PER_SEC), -1);
	for (int k = 2; k < 5; k++) {
		now += W;
		assert_int_equal(gpu_duty__window_end(&d, now, &cov_ns), PROM_COV_NONE);
		assert_int_equal(cov_ns, 0);
	}
	/* Window 5 is the last off one: the probes go on DUTY_LEAD_NS before its end. */
	assert_int_equal(gpu_duty__switch(&d, now + W - DUTY_LEAD_NS - 1), -1);
	/* A failed try is retried a second later, not at once. */
	gpu_duty__gated(&d, true, false, now + W - DUTY_LEAD_NS);
	assert_int_equal(gpu_duty__switch(&d, now + W - DUTY_LEAD_NS + 1), -1);
	assert_int_equal(gpu_duty__switch(&d, now + W - DUTY_LEAD_NS + NSEC_PER_SEC), 1);
	gpu_duty__gated(&d, true, true, now + W - DUTY_LEAD_NS + NSEC_PER_SEC);
	now += W;
	/* On in its last second: still none, as planned. */
	assert_int_equal(gpu_duty__window_end(&d, now, &cov_ns), PROM_COV_NONE);
	now += W;
	assert_int_equal(gpu_duty__window_end(&d, now, &cov_ns), PROM_COV_FULL);
	assert_int_equal(cov_ns, W);

	/* Always: on in every window, never switched. */
	assert_int_equal(gpu_duty__init(&d, 0, 0, W, err, sizeof(err)), 0);
	gpu_duty__attached(&d, T0);
	assert_int_equal(gpu_duty__window_end(&d, T0 + W, &cov_ns), PROM_COV_PARTIAL);
	for (int k = 1; k < 30; k++) {
		assert_int_equal(gpu_duty__switch(&d, T0 + k * W + 1), -1);
		assert_int_equal(gpu_duty__window_end(&d, T0 + (k + 1) * W, &cov_ns),
				 PROM_COV_FULL);
	}
}

/* Device ids are the producer's: past PROM_DEVICES they share one label value. */
static void test_prom_bounded_devices(void **state)
{
	struct prom p = {0};
	struct an_result r = {0};
	struct an_device d[PROM_DEVICES + 5];
	size_t len;
	char *t;

	(void)state;
	memset(d, 0, sizeof(d));
	for (uint32_t i = 0; i < PROM_DEVICES + 5; i++) {
		d[i].id = 1000000 + i;
		d[i].busy_ns = NSEC_PER_SEC;
	}
	r.devices = d;
	r.ndevices = PROM_DEVICES + 5;
	prom__add_window(&p, &r, PROM_COV_FULL, 1.0);
	t = prom__render(&p, &len);
	assert_non_null(t);
	assert_true(has_line(t, "gaptrace_gpu_busy_seconds_total{device=\"other\"} 5.000000000"));
	assert_true(has_line(t, "gaptrace_gpu_busy_seconds_total{device=\"1000000\"} 1.000000000"));
	assert_null(strstr(t, "device=\"1000016\""));
	free(t);
}

static void write_file(const char *path, size_t bytes)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	for (size_t i = 0; i < bytes; i++)
		fputc('x', f);
	fclose(f);
}

static bool exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

/* Retention by size deletes the oldest closed segments; the newest closed one always stays. */
static void test_flight_retention_and_snapshot(void **state)
{
	char dir[64], err[256], first[PATH_MAX + 64], snap[PATH_MAX + 128], cmd[PATH_MAX + 200];
	struct flight f;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gt-flight-XXXXXX");
	assert_non_null(mkdtemp(dir));
	/* An earlier run's segment counts. */
	snprintf(first, sizeof(first), "%s/seg-20200101T000000Z-000000.gtcap", dir);
	write_file(first, 1000);
	assert_int_equal(flight__open(&f, dir, 0, 2500, err, sizeof(err)), 0);
	assert_int_equal(f.n, 1);
	assert_int_equal(flight__bytes(&f), 1000);
	for (int i = 0; i < 3; i++) {
		write_file(flight__next(&f), 1000);
		flight__begin(&f);
		flight__closed(&f, (uint64_t)(i + 1) * NSEC_PER_SEC);
	}
	/* 4000 bytes written, 2500 allowed: the two oldest went. */
	assert_int_equal(f.n, 2);
	assert_int_equal(flight__bytes(&f), 2000);
	assert_false(exists(first));
	/* The segment being written does not count and is never deleted. */
	write_file(flight__next(&f), 5000);
	flight__begin(&f);
	assert_int_equal(flight__bytes(&f), 2000);
	assert_int_equal(flight__snapshot(&f, "signal", 2, snap, sizeof(snap)), 0);
	flight__path(&f, 0, first, sizeof(first));
	snprintf(cmd, sizeof(cmd), "%s/%s", snap, strrchr(first, '/') + 1);
	assert_true(exists(cmd));
	flight__closed(&f, 5 * NSEC_PER_SEC);
	assert_int_equal(f.n, 1); /* 5000 alone is over the bound: it stays, the newest */
	/* Retention never deletes a snapshot's link. */
	assert_true(exists(cmd));
	flight__close(&f);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Age: segments ended more than keep_ns before the newest one's end go. */
static void test_flight_age(void **state)
{
	char dir[64], err[256], cmd[128];
	struct flight f;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gt-flight-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(flight__open(&f, dir, 10 * NSEC_PER_SEC, 0, err, sizeof(err)), 0);
	for (int i = 0; i < 5; i++) {
		write_file(flight__next(&f), 10);
		flight__begin(&f);
		flight__closed(&f, (uint64_t)(i + 1) * 5 * NSEC_PER_SEC);
	}
	/* Ends at 5, 10, 15, 20, 25 s: those at 15 s and later are within 10 s of 25 s. */
	assert_int_equal(f.n, 3);
	assert_int_equal(f.segs[0].end_ns, 15 * NSEC_PER_SEC);
	flight__close(&f);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* A child named by prctl is found by name, by regex on its name, and never gaptrace itself. */
static void test_match_name(void **state)
{
	struct matcher m;
	char err[256], self[16];
	int go[2];
	pid_t child;

	(void)state;
	assert_int_equal(pipe(go), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		prctl(PR_SET_NAME, "gt-mon-target");
		close(go[0]);
		assert_int_equal(write(go[1], "x", 1), 1);
		pause();
		_exit(0);
	}
	close(go[1]);
	{
		char c;

		assert_int_equal(read(go[0], &c, 1), 1);
	}
	assert_int_equal(matcher__init(&m, MATCH_NAME, "gt-mon-target", false, err, sizeof(err)),
			 0);
	assert_int_equal(matcher__find(&m), child);
	assert_true(matcher__follows_restarts(&m));
	matcher__free(&m);
	assert_int_equal(matcher__init(&m, MATCH_NAME, "^gt-mon-t.*et$", false, err, sizeof(err)),
			 0);
	assert_int_equal(matcher__find(&m), child);
	matcher__free(&m);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(go[0]);
	assert_int_equal(matcher__init(&m, MATCH_NAME, "^gt-mon-target$", false, err, sizeof(err)),
			 0);
	assert_int_equal(matcher__find(&m), 0);
	matcher__free(&m);
	/* The pid of the test itself is never a target. */
	snprintf(self, sizeof(self), "%d", getpid());
	assert_int_equal(matcher__init(&m, MATCH_PID, self, false, err, sizeof(err)), 0);
	assert_int_equal(matcher__find(&m), 0);
	assert_false(matcher__follows_restarts(&m));
	assert_int_equal(matcher__init(&m, MATCH_NAME, "(", false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "bad --match '('"));
	assert_int_equal(matcher__init(&m, MATCH_CGROUP, "a/b", true, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "bad --unit 'a/b'"));
	assert_int_equal(matcher__init(&m, MATCH_CGROUP, "prover", true, err, sizeof(err)), 0);
	assert_string_equal(m.cgroup, "/sys/fs/cgroup/system.slice/prover.service/cgroup.procs");
	assert_int_equal(matcher__find(&m), 0);
}

static void test_http_addr(void **state)
{
	(void)state;
	assert_int_equal(http__check_addr("127.0.0.1:9464"), 0);
	assert_int_equal(http__check_addr(":9464"), 0);
	assert_int_equal(http__check_addr("9464"), 0);
	assert_int_equal(http__check_addr("[::1]:9464"), 0);
	assert_int_equal(http__check_addr("localhost:9464"), -1);
	assert_int_equal(http__check_addr("127.0.0.1:0"), -1);
	assert_int_equal(http__check_addr("127.0.0.1:65536"), -1);
	assert_int_equal(http__check_addr("[::1:9464"), -1);
	assert_int_equal(http__check_addr(""), -1);
}

/* One request on a new connection: the response's first line and body into out. */
static void http_ask(int port, const char *req, char *out, size_t len)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t n = 0;
	ssize_t r;

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	while (n + 1 < len && (r = read(fd, out + n, len - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = '\0';
	close(fd);
}

/* GET /metrics serves what was published; other paths 404, other methods 405. */
static void test_http_serve(void **state)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);
	char addr[32], err[256], out[4096];
	struct http *h;
	int fd, port;

	(void)state;
	/* A free port: the kernel picks one, then it is released for the server. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	port = ntohs(a.sin_port);
	close(fd);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	h = http__start(addr, err, sizeof(err));
	assert_non_null(h);
	http__publish(h, "gaptrace_windows_total 3\n", 25);
	http_ask(port, "GET /metrics HTTP/1.0\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, " 200 OK\r\n"));
	assert_non_null(strstr(out, "\r\n\r\ngaptrace_windows_total 3\n"));
	assert_non_null(strstr(out, "text/plain; version=0.0.4"));
	http_ask(port, "GET /metrics/x HTTP/1.0\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, " 404 "));
	http_ask(port, "POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", out, sizeof(out));
	assert_non_null(strstr(out, " 405 "));
	assert_non_null(strstr(out, "Allow: GET, HEAD"));
	/* The port is taken now: a second server says so. */
	assert_null(http__start(addr, err, sizeof(err)));
	assert_non_null(strstr(err, "cannot listen on"));
	http__stop(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_prom_windows),
	    cmocka_unit_test(test_prom_bounded_devices),
	    cmocka_unit_test(test_prom_uncovered_windows),
	    cmocka_unit_test(test_duty_schedule),
	    cmocka_unit_test(test_flight_retention_and_snapshot),
	    cmocka_unit_test(test_flight_age),
	    cmocka_unit_test(test_match_name),
	    cmocka_unit_test(test_http_addr),
	    cmocka_unit_test(test_http_serve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
