// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_monitor.c: `gaptrace monitor`'s command line and --help; the engine
 * (monitor.c) knows no argv.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmds.h"
#include "monitor/duty.h"
#include "monitor/http.h"
#include "monitor/monitor.h"
#include "record/sysprobe.h"
#include "support/cli.h"
#include "support/util.h"

#define MAX_RECORD_OPTS 32

static void usage(FILE *f)
{
	fprintf(f, "Usage: gaptrace monitor (-p PID | --match NAME|REGEX | --cgroup PATH |\n"
		   "                         --unit UNIT) [options]\n"
		   "\n"
		   "Always on: keeps the recorder attached to a process for weeks, analyses\n"
		   "every window exactly as 'gaptrace report' analyses a capture, exports the\n"
		   "gap metrics for Prometheus, and keeps the last windows on disk as captures.\n"
		   "Finds the target again when it restarts (all but -p).  Stops on SIGINT or\n"
		   "SIGTERM with nothing left attached.\n"
		   "\n"
		   "Target:\n"
		   "  -p, --pid PID           this process (the monitor ends when it exits)\n"
		   "      --match NAME|REGEX  the process whose name is NAME, or whose name or\n"
		   "                          command line matches the extended REGEX; with\n"
		   "                          several, the one whose parent is not among them\n"
		   "      --cgroup PATH       the first process of cgroup v2 PATH\n"
		   "                          (e.g. /system.slice/prover.service)\n"
		   "      --unit UNIT         the same for a systemd service (prover or\n"
		   "                          prover.service)\n"
		   "  The target's children are followed, as with 'gaptrace record -p'.\n"
		   "\n"
		   "Options:\n"
		   "  -w, --window DUR        analysis window and segment length (default 10s,\n"
		   "                          at least 1s)\n"
		   "      --gpu-duty ON/PERIOD  collect GPU activity ON in every PERIOD, in\n"
		   "                          whole windows (default: 1 window in 12, i.e.\n"
		   "                          10s/120s; 'always': every window).  Windows\n"
		   "                          without it add nothing to the GPU metrics\n"
		   "      --listen HOST:PORT  serve GET /metrics there (default none; HOST\n"
		   "                          defaults to 127.0.0.1; a numeric address only)\n"
		   "      --textfile DIR      write DIR/gaptrace.prom for node_exporter's\n"
		   "                          textfile collector after every window (replaced\n"
		   "                          atomically)\n"
		   "      --dir DIR           segments and snapshots (default\n"
		   "                          /var/lib/gaptrace/monitor); each segment is one\n"
		   "                          window, a complete capture for report, html,\n"
		   "                          flame and diff\n"
		   "      --keep DUR          delete segments older than DUR (default 10m)\n"
		   "      --keep-size MIB     and the oldest while they take more than MIB\n"
		   "                          (default 1024)\n"
		   "      --snapshot-below R  snapshot when a window's GPU efficiency is below\n"
		   "                          R (0..1; at most one every 6 windows)\n"
		   "      --record-opt OPT    pass OPT to the recorder, one argument each\n"
		   "                          (e.g. --record-opt=--gpu --record-opt=none);\n"
		   "                          any 'gaptrace record' option but -p, -o, -d and\n"
		   "                          a command\n"
		   "      --snapshot          ask the monitor writing into --dir for a snapshot\n"
		   "                          (no target given)\n"
		   "  -v, --verbose           more detail\n"
		   "  -h, --help              this help\n"
		   "\n"
		   "Signals: SIGUSR1 ends the current window and keeps it and the one before\n"
		   "as a snapshot (DIR/snapshots/signal-TIME/); 'gaptrace monitor --snapshot\n"
		   "[--dir DIR]' sends it to the monitor writing into DIR.\n"
		   "\n"
		   "Metrics (counters over finished windows): gaptrace_gpu_busy_seconds_total,\n"
		   "gaptrace_gap_seconds_total{device,category,kind}, gaptrace_gaps_total,\n"
		   "gaptrace_gap_length_seconds (histogram), gaptrace_window_efficiency_ratio,\n"
		   "gaptrace_lost_events_total, gaptrace_target_restarts_total and the\n"
		   "monitor's own cost.  A gap that spans a window boundary is in no window:\n"
		   "gaptrace_boundary_idle_seconds_total counts that idle time.  The GPU\n"
		   "metrics come from the windows with GPU collection only (--gpu-duty):\n"
		   "gaptrace_gpu_covered_seconds_total is the time they cover, and\n"
		   "gaptrace_window_gpu_source_info{source,coverage} says the last window's.\n"
		   "\n"
		   "Needs root.  Example:\n"
		   "  sudo gaptrace monitor --match prover --listen 127.0.0.1:9464\n"
		   "  gaptrace report /var/lib/gaptrace/monitor/seg-...gtcap\n");
}

enum {
	OPT_MATCH = 256,
	OPT_CGROUP,
	OPT_UNIT,
	OPT_LISTEN,
	OPT_TEXTFILE,
	OPT_DIR,
	OPT_KEEP,
	OPT_KEEP_SIZE,
	OPT_SNAP_BELOW,
	OPT_RECORD_OPT,
	OPT_SNAPSHOT,
	OPT_GPU_DUTY,
};

static int set_target(struct monitor_opts *o, bool *have, enum match_kind k, const char *arg,
		      bool unit)
{
	char err[512];

	if (*have) {
		gt_err("give one target: -p, --match, --cgroup or --unit");
		return -1;
	}
	*have = true;
	if (matcher__init(&o->match, k, arg, unit, err, sizeof(err))) {
		gt_err("%s", err);
		return -1;
	}
	return 0;
}

const struct option monitor_options[] = {
    {"pid", required_argument, NULL, 'p'},
    {"match", required_argument, NULL, OPT_MATCH},
    {"cgroup", required_argument, NULL, OPT_CGROUP},
    {"unit", required_argument, NULL, OPT_UNIT},
    {"window", required_argument, NULL, 'w'},
    {"listen", required_argument, NULL, OPT_LISTEN},
    {"textfile", required_argument, NULL, OPT_TEXTFILE},
    {"dir", required_argument, NULL, OPT_DIR},
    {"keep", required_argument, NULL, OPT_KEEP},
    {"keep-size", required_argument, NULL, OPT_KEEP_SIZE},
    {"snapshot-below", required_argument, NULL, OPT_SNAP_BELOW},
    {"record-opt", required_argument, NULL, OPT_RECORD_OPT},
    {"snapshot", no_argument, NULL, OPT_SNAPSHOT},
    {"gpu-duty", required_argument, NULL, OPT_GPU_DUTY},
    GT_LONGOPT_VERBOSE,
    GT_LONGOPT_HELP,
    {},
};

/*
 * The default duty cycle: CUPTI's activity records cost ~1.3 us per launch
 * while enabled (the monitor always on: a PyTorch launch loop at 0.83 of its
 * untraced rate, a CUDA C loop at 0.53).  1 window in 12 brings that to
 * ~1.4% and ~4%, under the 3% budget of a launch-bound PyTorch loop with
 * room for the CPU side; 1 in 6 (~2.8%) would leave none.
 */
#define DUTY_DEFAULT_ON	    1
#define DUTY_DEFAULT_PERIOD 12

static int parse(int argc, char **argv, struct monitor_opts *o, char **ropts)
{
	bool have = false, duty = false;
	struct gpu_duty d;
	char err[256];
	uint64_t num;
	char *end;
	int c, ret;

	o->window_ns = 10 * NSEC_PER_SEC;
	o->dir = "/var/lib/gaptrace/monitor";
	o->keep_ns = 600 * NSEC_PER_SEC;
	o->keep_bytes = 1024ULL << 20;
	o->snapshot_below = -1;
	optind = 1;
	while ((c = gt_getopt(argc, argv, monitor_options, false)) != -1) {
		switch (c) {
		case 'p':
			if (set_target(o, &have, MATCH_PID, optarg, false))
				return -1;
			break;
		case OPT_MATCH:
			if (set_target(o, &have, MATCH_NAME, optarg, false))
				return -1;
			break;
		case OPT_CGROUP:
		case OPT_UNIT:
			if (set_target(o, &have, MATCH_CGROUP, optarg, c == OPT_UNIT))
				return -1;
			break;
		case 'w':
			if (gt_opt_duration("--window", optarg, NSEC_PER_SEC,
					    24 * 3600 * NSEC_PER_SEC, &o->window_ns))
				return -1;
			break;
		case OPT_LISTEN:
			if (http__check_addr(optarg)) {
				gt_err("bad --listen '%s': give HOST:PORT with a numeric address, "
				       "e.g. 127.0.0.1:9464",
				       optarg);
				return -1;
			}
			o->listen = optarg;
			break;
		case OPT_TEXTFILE:
			o->textfile = optarg;
			break;
		case OPT_DIR:
			o->dir = optarg;
			break;
		case OPT_KEEP:
			/* 0: no age bound */
			if (gt_opt_duration("--keep", optarg, 0, 365 * 24 * 3600 * NSEC_PER_SEC,
					    &o->keep_ns))
				return -1;
			break;
		case OPT_KEEP_SIZE:
			if (gt_parse_uint(optarg, 0, 1 << 24, &num)) {
				gt_err(
				    "bad --keep-size '%s': give MiB, e.g. 1024 (0: no size bound)",
				    optarg);
				return -1;
			}
			o->keep_bytes = num << 20;
			break;
		case OPT_SNAP_BELOW:
			o->snapshot_below = strtod(optarg, &end);
			if (*end || end == optarg || !(o->snapshot_below >= 0) ||
			    o->snapshot_below > 1) {
				gt_err(
				    "bad --snapshot-below '%s': give a ratio from 0 to 1, e.g. 0.6",
				    optarg);
				return -1;
			}
			break;
		case OPT_RECORD_OPT:
			if (o->nrecord_opts >= MAX_RECORD_OPTS) {
				gt_err("too many --record-opt (at most %d)", MAX_RECORD_OPTS);
				return -1;
			}
			ropts[o->nrecord_opts++] = optarg;
			break;
		case OPT_SNAPSHOT:
			o->ask_snapshot = true;
			break;
		case OPT_GPU_DUTY:
			if (gpu_duty__parse(optarg, &o->gpu_on_ns, &o->gpu_period_ns, err,
					    sizeof(err))) {
				gt_err("%s", err);
				return -1;
			}
			duty = true;
			break;
		default:
			ret = gt_opt_common(c, "monitor", usage);
			if (ret == GT_EXIT_OK)
				exit(GT_EXIT_OK);
			if (ret != GT_OPT_NEXT)
				return -1;
		}
	}
	if (optind < argc) {
		gt_err("unexpected argument '%s': the monitor takes no command", argv[optind]);
		return -1;
	}
	if (o->ask_snapshot) {
		if (have) {
			gt_err("--snapshot asks a running monitor (by its --dir): give no target");
			return -1;
		}
		return 0;
	}
	if (!have) {
		gt_err("no target: give -p PID, --match NAME, --cgroup PATH or --unit UNIT");
		return -1;
	}
	if (!duty) {
		o->gpu_on_ns = DUTY_DEFAULT_ON * o->window_ns;
		o->gpu_period_ns = DUTY_DEFAULT_PERIOD * o->window_ns;
	}
	if (gpu_duty__init(&d, o->gpu_on_ns, o->gpu_period_ns, o->window_ns, err, sizeof(err))) {
		gt_err("%s", err);
		return -1;
	}
	if (!o->keep_ns && !o->keep_bytes) {
		gt_err("--keep 0 and --keep-size 0 would fill the disk: bound one of them");
		return -1;
	}
	return 0;
}

int cmd_monitor(int argc, char **argv)
{
	struct monitor_opts o = {0};
	char *ropts[MAX_RECORD_OPTS];
	char err[512];
	int ret;

	if (parse(argc, argv, &o, ropts)) {
		matcher__free(&o.match);
		return GT_EXIT_USAGE;
	}
	if (gt_check_privileges(err, sizeof(err))) {
		gt_err("%s", err);
		matcher__free(&o.match);
		return GT_EXIT_FAIL;
	}
	if (o.ask_snapshot)
		return monitor__ask_snapshot(o.dir);
	o.record_opts = ropts;
	o.argc = argc;
	o.argv = argv;
	ret = monitor__run(&o);
	matcher__free(&o.match);
	return ret;
}
