/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * duty.h: the monitor's GPU duty cycle (--gpu-duty ON/PERIOD): GPU activity
 * collected in whole windows, ON in every PERIOD, off between, and how much
 * of each window it covered.
 */
#ifndef GT_DUTY_H
#define GT_DUTY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "monitor/prom.h"
#include "support/util.h"

/*
 * The GPU probes go on this long before an ON window starts (at most half
 * a window): the CUPTI library looks at its semaphore every 50 ms, then
 * subscribes to CUPTI again and enables its activity kinds, and a uprobe's
 * registration can take the kernel a second under load.
 */
#define DUTY_LEAD_NS (2 * NSEC_PER_SEC)
/*
 * A window is fully covered when the probes were on this long before it
 * began (at most half the lead): the library's 50 ms poll and its enable.
 */
#define DUTY_SETTLE_NS (500 * NSEC_PER_MSEC)

struct gpu_duty {
	uint64_t on_w, period_w; /* windows; period_w 0: always on */
	uint64_t window_ns, lead_ns, settle_ns;
	/* One target life: */
	uint64_t k;	   /* the current window's index since the attach */
	uint64_t start_ns; /* its start */
	bool gate;	   /* the GPU probes are on now */
	uint64_t gate_ns;  /* since when */
	uint64_t tried_ns; /* the last failed try to put them on, 0 none */
};

/*
 * Parses "ON/PERIOD" (durations: "10s/120s") or "always" into *on_ns and
 * *period_ns (0/0 for always).  0, or -1 with the reason in err.
 */
int gpu_duty__parse(const char *arg, uint64_t *on_ns, uint64_t *period_ns, char *err, size_t len);
/*
 * Sets the cycle up for windows of window_ns: ON and PERIOD must be whole
 * windows, ON less than PERIOD.  0, or -1 with the reason in err.
 */
int gpu_duty__init(struct gpu_duty *d, uint64_t on_ns, uint64_t period_ns, uint64_t window_ns,
		   char *err, size_t len);
/* The configured share of windows with GPU collection on (1: always). */
double gpu_duty__ratio(const struct gpu_duty *d);
/* True when window k (since the attach) is one with GPU collection on. */
bool gpu_duty__window_on(const struct gpu_duty *d, uint64_t k);
/* A new target life: window 0 starts at now, the probes just attached (on). */
void gpu_duty__attached(struct gpu_duty *d, uint64_t now);
/*
 * Whether to switch the GPU probes at now, in the current window: 1 on, 0
 * off, -1 leave them (as wanted, or a failed try less than a second ago).
 */
int gpu_duty__switch(const struct gpu_duty *d, uint64_t now);
/* The probes went on or off at now (ok: the change took). */
void gpu_duty__gated(struct gpu_duty *d, bool on, bool ok, uint64_t now);
/*
 * The current window ends at now: how much of it GPU collection covered
 * (*covered_ns of it); then the next window begins.
 */
enum prom_cov gpu_duty__window_end(struct gpu_duty *d, uint64_t now, uint64_t *covered_ns);

#endif /* GT_DUTY_H */
