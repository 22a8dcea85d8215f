// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record_opts.c: the command line of `gaptrace record`: usage() and the
 * option parser that fills struct record_opts.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/gaptrace.h"
#include "record/record.h"
#include "record/record_priv.h"
#include "support/cli.h"
#include "support/util.h"

#define DWARF_SAMPLE_BYTES 4096 /* snapshot per CPU sample with --dwarf-samples */
#define CFI_SAMPLE_BYTES   1024 /* default --cfi-samples: see README, "Code without frame pointers" */
#define CFI_RATE	   4000 /* default --cfi-rate: one busy thread's 4 kHz, ~3.6% of a CPU */
#define CFI_BUDGET	   (256ULL << 20) /* default --cfi-budget: PyTorch's ~64M, 4 times */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: gaptrace record (-p PID | -- COMMAND [ARG...]) [options]\n"
		"\n"
		"Records why a GPU program's threads were not running: off-CPU intervals\n"
		"(blocked, run-queue, preempted, with syscall and waker), CPU samples,\n"
		"uprobes on rare heavy functions and the gaptrace USDT probes (GPU activity,\n"
		"work units).  Stops on Ctrl-C, SIGTERM, --duration or when the target exits.\n"
		"\n"
		"Target:\n"
		"  -p, --pid PID           attach to a running process: its threads and the\n"
		"                          descendant processes alive then or forked later\n"
		"  -- COMMAND [ARG...]     start COMMAND and trace it from its first instruction\n"
		"\n"
		"Options:\n"
		"  -o, --output FILE       capture file (default gaptrace.gtcap; an existing\n"
		"                          file is kept as FILE.old; not '-': a capture is\n"
		"                          binary and a traced command shares stdout)\n"
		"  -d, --duration DUR      stop after DUR (e.g. 30s, 2m; 1ms to 168h)\n"
		"  -F, --freq HZ           CPU sample frequency while a traced thread runs\n"
		"                          (default 4000: every 250us, splits millisecond\n"
		"                          gaps; at most 10000; 0 = off)\n"
		"      --sample-period DUR the same as a period (e.g. 250us, 100us to 1s;\n"
		"                          0 = off)\n"
		"      --sampler cpu|thread\n"
		"                          cpu (default): one cpu-clock event per CPU, kept\n"
		"                          for the target in BPF: nothing added to its context\n"
		"                          switches, but every CPU ticks at -F while recording;\n"
		"                          thread: one event per target thread (inherited),\n"
		"                          no ticks elsewhere, ~8 us more per context switch\n"
		"      --probe [LIB:]FUNC[=CATEGORY]\n"
		"                          also time FUNC with a uprobe pair (category default\n"
		"                          cpu); repeatable.  Keep it off hot paths: each call\n"
		"                          costs ~5 us.\n"
		"      --unit func:FUNC    treat each call of FUNC as a work unit\n"
		"      --no-default-probes skip the default probes (malloc_trim, munmap, fsync,\n"
		"                          fdatasync, CUDA alloc/free/synchronize)\n"
		"      --stacks cfi|fp|dwarf|none\n"
		"                          user stacks (default cfi: walked in the kernel with\n"
		"                          each object's own CFI (.eh_frame), compiled by\n"
		"                          gaptrace into tables within --cfi-budget, frame\n"
		"                          pointers where an object has them throughout; fp:\n"
		"                          frame pointers only, walked in\n"
		"                          the kernel; dwarf: for binaries built without frame\n"
		"                          pointers: registers and --stack-bytes of stack are\n"
		"                          copied at each switch-out and unwound with DWARF CFI\n"
		"                          by gaptrace for intervals >= --dwarf-min; none)\n"
		"      --cfi-budget SIZE   kernel memory for all CFI tables (default 256M, 1M to\n"
		"                          4G; libLLVM takes ~8.3M, PyTorch's libraries ~64M);\n"
		"                          objects past it are cut or left to the fp walk,\n"
		"                          counted on record's 'cfi:' line\n"
		"      --no-stacks         same as --stacks none\n"
		"      --stack-bytes SIZE  stack copied per dwarf snapshot (default 8K, at most\n"
		"                          16K); deeper frames are lost\n"
		"      --dwarf-min DUR     unwind only off-CPU intervals this long (default 1ms,\n"
		"                          at most 1h)\n"
		"      --dwarf-samples     dwarf stacks for CPU samples too (4K snapshot each)\n"
		"      --cfi-samples SIZE|off\n"
		"                          with --stacks fp: CPU samples whose user ip lies\n"
		"                          in code without\n"
		"                          frame pointers (a stripped libc's malloc internals)\n"
		"                          copy SIZE of stack (default 1K; glibc's malloc\n"
		"                          paths need < 400 bytes) in place of the fp walk,\n"
		"                          unwound by gaptrace with the code's CFI, so the\n"
		"                          caller (malloc, free) is found; frames beyond SIZE\n"
		"                          are lost.  Other samples keep the fp walk.  off:\n"
		"                          fp walk only (no unwinding in gaptrace, ~8 us of its\n"
		"                          CPU per such sample; those callers are lost)\n"
		"      --cfi-rate N        at most N such snapshots per second, all threads\n"
		"                          together (default 4000: one thread busy in libc at\n"
		"                          4 kHz, ~3.6%% of a CPU of unwinding); samples past it\n"
		"                          take the fp walk, and info counts them; 0: no limit\n"
		"      --cfi-objects system|all\n"
		"                          which code --cfi-samples covers: system (default):\n"
		"                          the system libraries (/lib, /usr/lib: libc,\n"
		"                          libstdc++, ld.so); all: the program's own objects\n"
		"                          built without frame pointers too (every sample in\n"
		"                          them pays for a snapshot and an unwinding)\n"
		"      --no-follow         trace the target process alone: not the children\n"
		"                          it forks (and the programs they exec), nor, with\n"
		"                          -p, the descendants alive at the attach.  Followed\n"
		"                          processes get the target's probes and samplers\n"
		"                          ~10 ms after their fork, exec or dlopen (more\n"
		"                          where the kernel is slow to register uprobes; one\n"
		"                          link per process; their switches cost like the\n"
		"                          target's); a waker left untraced is named in the\n"
		"                          report (\"woken by pid N (comm), not traced\").\n"
		"                          Recording ends when the target and every process\n"
		"                          followed from it have exited\n"
		"      --ringbuf-size SIZE BPF ring buffer size (power of 2; default 64M when\n"
		"                          the CUPTI library may be used, else 16M)\n"
		"      --gpu auto|inject|uprobe|none\n"
		"                          GPU activity source (default auto): inject = the\n"
		"                          CUPTI library (launch: CUDA_INJECTION64_PATH; -p:\n"
		"                          loaded into the running process); uprobe = libcuda\n"
		"                          launch/sync uprobes, a host-side view; none = only\n"
		"                          the program's own gaptrace USDT probes.  auto and\n"
		"                          inject fall back to uprobe when the library is\n"
		"                          missing, cannot be injected, or CUPTI refuses it\n"
		"                          (Nsight attached): the report says which was used\n"
		"      --cupti-lib PATH    libgaptrace-cupti.so to use (default: next to the\n"
		"                          gaptrace binary, in ../lib/gaptrace from it, then\n"
		"                          /usr/local/lib/gaptrace)\n"
		"      --progress, --no-progress\n"
		"                          force the live status line on/off (default: on when\n"
		"                          stderr is a terminal)\n"
		"      --summary-json FILE the closing summary (capture, records, lost, GPU\n"
		"                          operations, the command's exit status) as JSON in\n"
		"                          FILE (- for stdout); schema gaptrace.record-summary/1\n"
		"  -v, --verbose           more detail (twice: libbpf debug output)\n");
	gt_help_opt(f, 26, GT_HELP_MIN_GAP);
	fputs("                          (for the live gap count; report has its own)\n", f);
	gt_help_opt(f, 26, GT_HELP_COLOR);
	gt_help_opt(f, 26, GT_HELP_HELP);
	fprintf(f, "\n" GT_HELP_DUR "\n"
		   "Exit status: a launched COMMAND's own status when it exited (128 + N when\n"
		   "signal N killed it, as a shell reports it); 0 when -p was used or the\n"
		   "recording stopped (-d, Ctrl-C) before COMMAND ended; 1 when gaptrace itself\n"
		   "failed, 2 for bad usage.\n"
		   "\n"
		   "Environment:\n"
		   "  GAPTRACE_DEBUGINFO_PATH where separate debug info is looked for (build-id\n"
		   "                          trees, .gnu_debuglink files), in elfutils'\n"
		   "                          debuginfo_path syntax (default\n"
		   "                          \":.debug:/usr/lib/debug\"); \"none\": nowhere.\n"
		   "                          MiniDebugInfo (.gnu_debugdata) is read either way\n"
		   "  DEBUGINFOD_URLS         debuginfod servers asked for missing debug info\n"
		   "                          (network: the first resolution waits for them)\n"
		   "  GAPTRACE_CUPTI_LIB      libgaptrace-cupti.so to use (like --cupti-lib)\n"
		   "\n"
		   "Needs root (CAP_BPF + CAP_PERFMON).  Example:\n"
		   "  sudo gaptrace record -p $(pidof prover) -d 60s -o prover.gtcap\n"
		   "  gaptrace report prover.gtcap\n");
}

enum {
	OPT_PROBE = GT_OPT_LONG,
	OPT_UNIT,
	OPT_NO_DEFAULT,
	OPT_NO_STACKS,
	OPT_STACKS,
	OPT_STACK_BYTES,
	OPT_DWARF_MIN,
	OPT_DWARF_SAMPLES,
	OPT_CFI_SAMPLES,
	OPT_CFI_OBJECTS,
	OPT_CFI_RATE,
	OPT_CFI_BUDGET,
	OPT_NO_FOLLOW,
	OPT_RINGBUF,
	OPT_ATTACH,
	OPT_GPU,
	OPT_CUPTI_LIB,
	OPT_PROGRESS,
	OPT_NO_PROGRESS,
	OPT_SAMPLER,
	OPT_SAMPLE_PERIOD,
	OPT_SUMMARY_JSON,
};

const struct option record_options[] = {
    {"summary-json", required_argument, NULL, OPT_SUMMARY_JSON},
    {"pid", required_argument, NULL, 'p'},
    {"output", required_argument, NULL, 'o'},
    {"duration", required_argument, NULL, 'd'},
    {"freq", required_argument, NULL, 'F'},
    {"sample-period", required_argument, NULL, OPT_SAMPLE_PERIOD},
    {"sampler", required_argument, NULL, OPT_SAMPLER},
    {"probe", required_argument, NULL, OPT_PROBE},
    {"unit", required_argument, NULL, OPT_UNIT},
    {"no-default-probes", no_argument, NULL, OPT_NO_DEFAULT},
    {"no-stacks", no_argument, NULL, OPT_NO_STACKS},
    {"stacks", required_argument, NULL, OPT_STACKS},
    {"stack-bytes", required_argument, NULL, OPT_STACK_BYTES},
    {"dwarf-min", required_argument, NULL, OPT_DWARF_MIN},
    {"dwarf-samples", no_argument, NULL, OPT_DWARF_SAMPLES},
    {"cfi-samples", required_argument, NULL, OPT_CFI_SAMPLES},
    {"cfi-objects", required_argument, NULL, OPT_CFI_OBJECTS},
    {"cfi-rate", required_argument, NULL, OPT_CFI_RATE},
    {"cfi-budget", required_argument, NULL, OPT_CFI_BUDGET},
    {"no-follow", no_argument, NULL, OPT_NO_FOLLOW},
    {"ringbuf-size", required_argument, NULL, OPT_RINGBUF},
    GT_LONGOPT_MIN_GAP,
    {"attach", required_argument, NULL, OPT_ATTACH},
    {"gpu", required_argument, NULL, OPT_GPU},
    {"cupti-lib", required_argument, NULL, OPT_CUPTI_LIB},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    GT_LONGOPT_COLOR,
    GT_LONGOPT_VERBOSE,
    GT_LONGOPT_HELP,
    {},
};

int record__parse_opts(int argc, char **argv, struct record_opts *o)
{
	static const char *const samplers[] = {"cpu", "thread", NULL};
	static const char *const stacks[] = {"fp", "dwarf", "none", "cfi", NULL};
	static const char *const cfi_objects[] = {"system", "all", NULL};
	char err[256];
	int c, k;

	o->output = "gaptrace.gtcap";
	/* 4 kHz of each thread's own CPU time: fine enough to split millisecond
	 * gaps; measured cost on the workload 0.3-1.2% (tools/bench). */
	o->sample_period_ns = 250 * NSEC_PER_USEC;
	o->cpu_samplers = true;
	o->ringbuf_bytes = 0; /* auto: 64M when CUPTI may be used, else 16M */
	o->min_gap_ns = GT_MIN_GAP_DEFAULT_NS;
	o->stacks = true;
	o->cfi_walk = true;
	o->stack_bytes = 8192;
	o->dwarf_min_ns = NSEC_PER_MSEC;
	o->cfi_sample_bytes = CFI_SAMPLE_BYTES;
	o->cfi_rate = CFI_RATE;
	o->cfi_budget = CFI_BUDGET;
	o->default_probes = true;
	o->follow_children = true;
	o->progress = -1;
	optind = 1;
	while ((c = gt_getopt(argc, argv, record_options, true)) != -1) {
		uint64_t num;

		switch (c) {
		case 'p':
			if (gt_parse_uint(optarg, 1, INT32_MAX, &num)) {
				gt_err("bad pid '%s': give a process id, e.g. -p $(pidof NAME)",
				       optarg);
				return -1;
			}
			o->pid = (pid_t)num;
			break;
		case 'o':
			/* report -o - is stdout; a capture there would mix with the
			 * traced command's own output, and a terminal cannot take it. */
			if (!strcmp(optarg, "-")) {
				gt_err("record cannot write its capture to stdout ('-o -'): give a "
				       "file name, e.g. -o run.gtcap (./- for a file named '-')");
				return -1;
			}
			o->output = optarg;
			break;
		case 'd':
			if (gt_opt_duration("--duration", optarg, NSEC_PER_MSEC,
					    7 * 24 * 3600 * NSEC_PER_SEC, &o->duration_ns))
				return -1;
			break;
		case 'F':
			/* Hz, as perf and bcc read -F; 10 kHz is the 100us period bound. */
			if (gt_parse_uint(optarg, 0, 10000, &num)) {
				gt_err("bad -F/--freq '%s': use 0 (off) or a frequency in Hz up to "
				       "10000, e.g. -F 1000 (or --sample-period DUR)",
				       optarg);
				return -1;
			}
			o->sample_period_ns = num ? NSEC_PER_SEC / num : 0;
			break;
		case OPT_SAMPLE_PERIOD:
			if (gt_opt_duration("--sample-period", optarg, 0, NSEC_PER_SEC,
					    &o->sample_period_ns))
				return -1;
			if (o->sample_period_ns && o->sample_period_ns < 100 * NSEC_PER_USEC) {
				gt_err("bad --sample-period '%s': use 0 (off) or 100us to 1s, "
				       "e.g. 1ms",
				       optarg);
				return -1;
			}
			break;
		case OPT_SAMPLER:
			k = gt_opt_choice("--sampler", optarg, samplers);
			if (k < 0)
				return -1;
			o->cpu_samplers = k == 0;
			break;
		case OPT_PROBE:
			if (probe_table__parse(&o->probes, optarg, err, sizeof(err))) {
				gt_err("%s", err);
				return -1;
			}
			break;
		case OPT_UNIT:
			if (strncmp(optarg, "func:", 5) || !optarg[5]) {
				gt_err("bad --unit '%s': record takes func:FUNC (USDT units are "
				       "always recorded)",
				       optarg);
				return -1;
			}
			probe_table__add(&o->probes, optarg + 5, "", "unit");
			break;
		case OPT_NO_DEFAULT:
			o->default_probes = false;
			break;
		case OPT_NO_STACKS:
			o->stacks = false;
			o->dwarf = false;
			o->cfi_walk = false;
			break;
		case OPT_STACKS:
			k = gt_opt_choice("--stacks", optarg, stacks);
			if (k < 0)
				return -1;
			o->stacks = k != 2;
			o->dwarf = k == 1;
			o->cfi_walk = k == 3;
			break;
		case OPT_STACK_BYTES: {
			uint64_t v;

			if (gt_parse_size(optarg, &v) || v < 512 || v > GT_USTACK_MAX) {
				gt_err("bad --stack-bytes '%s': use 512 to %uK, e.g. 8K", optarg,
				       GT_USTACK_MAX / 1024);
				return -1;
			}
			o->stack_bytes = (uint32_t)v;
			break;
		}
		case OPT_DWARF_MIN:
			if (gt_opt_duration("--dwarf-min", optarg, 0, 3600 * NSEC_PER_SEC,
					    &o->dwarf_min_ns))
				return -1;
			break;
		case OPT_DWARF_SAMPLES:
			o->dwarf_sample_bytes = DWARF_SAMPLE_BYTES;
			break;
		case OPT_CFI_SAMPLES: {
			uint64_t v = 0;

			if (strcmp(optarg, "off") &&
			    (gt_parse_size(optarg, &v) || v < 256 || v > GT_USTACK_MAX)) {
				gt_err("bad --cfi-samples '%s': use off or 256 to %uK, e.g. 2K",
				       optarg, GT_USTACK_MAX / 1024);
				return -1;
			}
			o->cfi_sample_bytes = (uint32_t)v;
			break;
		}
		case OPT_CFI_RATE: {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || v > 1000000) {
				gt_err("bad --cfi-rate '%s': use a number of snapshots per second "
				       "(0 to 1000000, e.g. 4000; 0: no limit)",
				       optarg);
				return -1;
			}
			o->cfi_rate = (uint32_t)v;
			break;
		}
		case OPT_CFI_BUDGET:
			if (gt_parse_size(optarg, &o->cfi_budget) || o->cfi_budget < (1ULL << 20) ||
			    o->cfi_budget > (4ULL << 30)) {
				gt_err("bad --cfi-budget '%s': use 1M to 4G, e.g. 512M", optarg);
				return -1;
			}
			break;
		case OPT_CFI_OBJECTS:
			k = gt_opt_choice("--cfi-objects", optarg, cfi_objects);
			if (k < 0)
				return -1;
			o->cfi_all = k == 1;
			break;
		case OPT_NO_FOLLOW:
			o->follow_children = false;
			break;
		case OPT_RINGBUF:
			if (gt_parse_size(optarg, &o->ringbuf_bytes) || o->ringbuf_bytes < 4096 ||
			    (o->ringbuf_bytes & (o->ringbuf_bytes - 1)) ||
			    o->ringbuf_bytes > (1ULL << 30)) {
				gt_err("bad --ringbuf-size '%s': use a power of two from 4K to 1G, "
				       "e.g. 16M",
				       optarg);
				return -1;
			}
			break;
		case 'm':
			if (gt_opt_min_gap(optarg, &o->min_gap_ns))
				return -1;
			break;
		case OPT_GPU:
			if (gpu_mode_parse(optarg, &o->gpu.mode)) {
				gt_err("bad --gpu '%s': use auto, inject, uprobe or none", optarg);
				return -1;
			}
			break;
		case OPT_CUPTI_LIB:
			o->cupti_lib = optarg;
			break;
		case OPT_ATTACH:
			/* Kept so old command lines fail clearly instead of as an unknown option. */
			gt_err("--attach is gone: the raw_tp flavour was removed and the scheduler "
			       "tracepoints are always tp_btf (needs Linux >= 5.15 with BTF); drop "
			       "--attach");
			return -1;
		case OPT_PROGRESS:
			o->progress = 1;
			break;
		case OPT_NO_PROGRESS:
			o->progress = 0;
			break;
		case OPT_SUMMARY_JSON:
			o->summary_json = optarg;
			break;
		default:
			k = gt_opt_common(c, "record", usage);
			if (k == GT_EXIT_OK)
				exit(0);
			if (k != GT_OPT_NEXT)
				return -1;
		}
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	if (o->dwarf_sample_bytes && !o->dwarf) {
		gt_err("--dwarf-samples needs --stacks dwarf");
		return -1;
	}
	o->dwarf_sample_bytes = GT_MIN(o->dwarf_sample_bytes, o->stack_bytes);
	/* No user stacks, or every sample snapshotted already (--dwarf-samples). */
	if (!o->stacks || o->dwarf_sample_bytes)
		o->cfi_sample_bytes = 0;
	/* The kernel's CFI walk finds the callers in code without frame pointers itself. */
	if (o->cfi_walk)
		o->cfi_sample_bytes = 0;
	if (!o->pid == !o->cmd) {
		gt_err(o->pid ? "give either -p PID or -- COMMAND, not both"
			      : "nothing to trace: give -p PID or -- COMMAND (see --help)");
		return -1;
	}
	return 0;
}

struct recorder *record__new(int argc, char **argv)
{
	struct recorder *r = gt_xcalloc(1, sizeof(*r));

	r->o = gt_xcalloc(1, sizeof(*r->o));
	r->pidfd = r->go_fd = r->status_fd = -1;
	if (record__parse_opts(argc, argv, r->o)) {
		probe_table__free(&r->o->probes);
		free(r->o);
		free(r);
		return NULL;
	}
	return r;
}
