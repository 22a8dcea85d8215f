// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * duty.c: the GPU duty cycle's schedule: which windows collect GPU
 * activity, when the probes go on ahead of them, and what each covered.
 */
#include <stdio.h>
#include <string.h>

#include "monitor/duty.h"
#include "support/util.h"

#define RETRY_NS NSEC_PER_SEC /* between two failed tries to put the probes on */

int gpu_duty__parse(const char *arg, uint64_t *on_ns, uint64_t *period_ns, char *err, size_t len)
{
	char on[32];
	const char *slash = strchr(arg, '/');
	uint64_t a, b;

	if (!strcmp(arg, "always")) {
		*on_ns = *period_ns = 0;
		return 0;
	}
	if (!slash || (size_t)(slash - arg) >= sizeof(on)) {
		snprintf(err, len, "bad --gpu-duty '%s': give ON/PERIOD (e.g. 10s/120s) or always",
			 arg);
		return -1;
	}
	memcpy(on, arg, (size_t)(slash - arg));
	on[slash - arg] = '\0';
	if (gt_parse_duration(on, &a) || gt_parse_duration(slash + 1, &b) || !a || a >= b) {
		snprintf(err, len,
			 "bad --gpu-duty '%s': give ON/PERIOD durations with ON shorter than "
			 "PERIOD (e.g. 10s/120s), or always",
			 arg);
		return -1;
	}
	*on_ns = a;
	*period_ns = b;
	return 0;
}

int gpu_duty__init(struct gpu_duty *d, uint64_t on_ns, uint64_t period_ns, uint64_t window_ns,
		   char *err, size_t len)
{
	memset(d, 0, sizeof(*d));
	d->window_ns = window_ns;
	d->lead_ns = GT_MIN(DUTY_LEAD_NS, window_ns / 2);
	d->settle_ns = GT_MIN(DUTY_SETTLE_NS, d->lead_ns / 2);
	if (!period_ns)
		return 0;
	/* Whole windows: a window is either collected or not, never half. */
	if (on_ns % window_ns || period_ns % window_ns) {
		snprintf(err, len,
			 "--gpu-duty %.9g s/%.9g s: ON and PERIOD must be whole windows of "
			 "%.9g s (--window)",
			 (double)on_ns / 1e9, (double)period_ns / 1e9, (double)window_ns / 1e9);
		return -1;
	}
	d->on_w = on_ns / window_ns;
	d->period_w = period_ns / window_ns;
	return 0;
}

double gpu_duty__ratio(const struct gpu_duty *d)
{
	return d->period_w ? (double)d->on_w / (double)d->period_w : 1.0;
}

bool gpu_duty__window_on(const struct gpu_duty *d, uint64_t k)
{
	return !d->period_w || k % d->period_w < d->on_w;
}

void gpu_duty__attached(struct gpu_duty *d, uint64_t now)
{
	d->k = 0;
	d->start_ns = d->gate_ns = now;
	d->gate = true;
	d->tried_ns = 0;
}

int gpu_duty__switch(const struct gpu_duty *d, uint64_t now)
{
	bool want =
	    gpu_duty__window_on(d, d->k) ||
	    (gpu_duty__window_on(d, d->k + 1) && now + d->lead_ns >= d->start_ns + d->window_ns);

	if (want == d->gate || (want && d->tried_ns && now - d->tried_ns < RETRY_NS))
		return -1;
	return want;
}

void gpu_duty__gated(struct gpu_duty *d, bool on, bool ok, uint64_t now)
{
	if (!ok) {
		d->tried_ns = now;
		return;
	}
	d->gate = on;
	d->gate_ns = now;
	d->tried_ns = 0;
}

enum prom_cov gpu_duty__window_end(struct gpu_duty *d, uint64_t now, uint64_t *covered_ns)
{
	enum prom_cov cov = PROM_COV_NONE;
	uint64_t from = GT_MAX(d->start_ns, d->gate_ns + d->settle_ns);

	*covered_ns = 0;
	/* A window planned off says none even when the probes went on in its last seconds. */
	if (gpu_duty__window_on(d, d->k) && d->gate && from < now) {
		cov = from == d->start_ns ? PROM_COV_FULL : PROM_COV_PARTIAL;
		*covered_ns = now - from;
	}
	d->k++;
	d->start_ns = now;
	return cov;
}
