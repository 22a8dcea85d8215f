// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * doctor.c: the checks of `gaptrace doctor`: whether this host can record
 * (privileges, BTF, tracepoints, ring buffer, uprobes, sampling, kernel
 * symbols, the BPF programs themselves, debug symbols of libc and
 * libstdc++; the GPU side in doctor_gpu.c), with how to fix what is missing,
 * as text or JSON.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "gaptrace.skel.h"
#include "record/attach.h"
#include "record/doctor.h"
#include "record/doctor_priv.h"
#include "record/sysprobe.h"
#include "support/safeopen.h"
#include "support/term.h"
#include "support/json.h"
#include "support/util.h"
#include "symbols/dwmod.h"
#include "symbols/live.h"

#define OK   DOCTOR_OK
#define WARN DOCTOR_WARN
#define FAIL DOCTOR_FAIL

static int nfail, nwarn;

/* The checks, kept for the output at the end. */
static struct doctor_result {
	enum doctor_verdict v;
	char *what, *detail, *fix;
} results[64];
static size_t nresults;

void doctor__check(enum doctor_verdict v, const char *what, const char *detail, const char *fix)
{
	nfail += v == FAIL;
	nwarn += v == WARN;
	if (nresults == GT_ARRAY_SIZE(results))
		return;
	results[nresults++] = (struct doctor_result){v, gt_xstrdup(what), gt_xstrdup(detail),
						     fix ? gt_xstrdup(fix) : NULL};
}

static void check(enum doctor_verdict v, const char *what, const char *detail, const char *fix)
{
	doctor__check(v, what, detail, fix);
}

/* Returns 0, or -1 when stdout could not be written. */
static int print_text(const struct utsname *u)
{
	static const char *const tags[] = {"[ ok ]", "[warn]", "[FAIL]"};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int ret;

	if (!f)
		return -1;
	fprintf(f, "gaptrace %s doctor on %s (%s %s, %s)\n\n", GT_VERSION, u->nodename, u->sysname,
		u->release, u->machine);
	for (size_t i = 0; i < nresults; i++) {
		fprintf(f, "%s %-22s %s\n", tags[results[i].v], results[i].what, results[i].detail);
		if (results[i].v != OK && results[i].fix)
			fprintf(f, "       %-22s fix: %s\n", "", results[i].fix);
	}
	fprintf(f, "\n%s: %d problem(s), %d warning(s)\n",
		nfail ? "recording will NOT work" : "recording will work", nfail, nwarn);
	if (fclose(f)) {
		free(text);
		return -1;
	}
	/* Details and fixes run long (library paths, apt lines): fit them to the terminal. */
	ret = term__write(stdout, text, len, term__width(stdout), !term__utf8());
	free(text);
	return ret;
}

/* Schema gaptrace.doctor/1: docs/report-schema.md. */
static void print_json(const struct utsname *u)
{
	static const char *const status[] = {"ok", "warn", "fail"};
	struct json j;

	json_init(&j, stdout, true);
	json_obj_begin(&j);
	json_kstr(&j, "schema", "gaptrace.doctor/1");
	json_kstr(&j, "gaptrace_version", GT_VERSION);
	json_kstr(&j, "host", u->nodename);
	json_kstr(&j, "kernel", u->release);
	json_kstr(&j, "arch", u->machine);
	json_kbool(&j, "recording_will_work", !nfail);
	json_ki64(&j, "problems", nfail);
	json_ki64(&j, "warnings", nwarn);
	json_key(&j, "checks");
	json_arr_begin(&j);
	for (size_t i = 0; i < nresults; i++) {
		json_obj_begin(&j);
		json_kstr(&j, "name", results[i].what);
		json_kstr(&j, "status", status[results[i].v]);
		json_kbool(&j, "ok", results[i].v == OK);
		json_kstr(&j, "detail", results[i].detail);
		json_key(&j, "fix");
		if (results[i].v != OK && results[i].fix)
			json_str(&j, results[i].fix);
		else
			json_null(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	fputc('\n', stdout);
}

static bool kallsyms_readable(void)
{
	char buf[256];
	FILE *f = fopen("/proc/kallsyms", "r");
	bool ok = false;

	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f))
		ok = strncmp(buf, "0000000000000000", 16) != 0;
	fclose(f);
	return ok;
}

static bool can_sample(void)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .size = sizeof(attr),
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .sample_period = 1000000,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static int try_load(char *msg, size_t len)
{
	struct gaptrace_bpf *skel = gaptrace_bpf__open();
	int err;

	if (!skel) {
		snprintf(msg, len, "cannot open the BPF object: %s", strerror(errno));
		return -1;
	}
	/* Every program record loads, with small maps. */
	bpf_map__set_max_entries(skel->maps.events, 1 << 16);
	bpf_map__set_max_entries(skel->maps.stack_ids, 256);
	attacher__choose_programs(skel);
	err = gaptrace_bpf__load(skel);
	if (err)
		snprintf(msg, len, "the kernel refused gaptrace's BPF programs (%s)",
			 strerror(-err));
	else
		snprintf(msg, len, "all programs load");
	gaptrace_bpf__destroy(skel);
	return err;
}

/* The Debian package that owns path ("libc6"), or "" when dpkg does not know it. */
static void owner_package(const char *path, char *pkg, size_t len)
{
	char cmd[PATH_MAX + 64], line[512];
	const char *p = path;
	FILE *f;

	pkg[0] = '\0';
	/* usrmerge: dpkg may know /lib/... where the mapping says /usr/lib/... */
	for (int pass = 0; pass < 2 && !pkg[0]; pass++) {
		if (pass && strncmp(path, "/usr/", 5))
			break;
		p = pass ? path + 4 : path;
		if (strchr(p, '\'') ||
		    snprintf(cmd, sizeof(cmd), "dpkg -S '%s' 2>/dev/null", p) >= (int)sizeof(cmd))
			return;
		f = popen(cmd, "r");
		if (!f)
			return;
		if (fgets(line, sizeof(line), f)) {
			size_t n = strcspn(line, ":,");

			if (line[n] == ':' && n < len) {
				memcpy(pkg, line, n);
				pkg[n] = '\0';
			}
		}
		pclose(f);
	}
}

struct libs {
	char path[2][PATH_MAX];
};

static int lib_cb(const struct syms_mapping *m, void *ctx)
{
	static const char *const want[] = {"libc.so.6", "libstdc++.so.6"};
	struct libs *l = ctx;
	const char *base = strrchr(m->path, '/');

	for (size_t i = 0; base && i < GT_ARRAY_SIZE(want); i++)
		if (!strcmp(base + 1, want[i]) && !l->path[i][0])
			snprintf(l->path[i], sizeof(l->path[i]), "%s", m->path);
	return 0;
}

/*
 * Debug symbols of the libraries programs spend gap time in (libc's
 * allocator, libstdc++): this process maps the host's copies.
 */
static void check_debug_symbols(void)
{
	static const char *const lost[] = {
	    "malloc internals (_int_free, _int_malloc, malloc_consolidate) show as "
	    "[libc.so.6], no inline frames",
	    "its internal functions show as [libstdc++.so.6], no inline frames",
	};
	const char *dpath = getenv(DWMOD_PATH_ENV);
	struct libs l = {};

	syms_read_mappings((uint32_t)getpid(), lib_cb, &l);
	for (size_t i = 0; i < GT_ARRAY_SIZE(l.path); i++) {
		const char *base, *dbg;
		char detail[PATH_MAX + 512], pkg[128], want[200];
		struct dwmod *d;
		bool sym, dwarf;

		if (!l.path[i][0])
			continue;
		base = strrchr(l.path[i], '/') + 1;
		/* This process's own mapping: safeopen finds it by its maps text. */
		d = dwmod__open(getpid(), l.path[i],
				safeopen_mapped_name(getpid(), l.path[i], NULL), dpath);
		if (!d)
			continue;
		sym = dwmod__has_symtab(d);
		dwarf = dwmod__has_dwarf(d);
		dbg = dwmod__debug_file(d);
		if (sym && dwarf) {
			snprintf(detail, sizeof(detail), "%s: %s", base, dbg ? dbg : "in the file");
			check(OK, "debug symbols", detail, NULL);
			dwmod__free(d);
			continue;
		}
		owner_package(l.path[i], pkg, sizeof(pkg));
		if (!strcmp(pkg, "libc6"))
			snprintf(want, sizeof(want), "apt install libc6-dbg");
		else if (pkg[0])
			snprintf(want, sizeof(want), "apt install %s-dbgsym (debian-debug archive)",
				 pkg);
		else
			snprintf(want, sizeof(want), "install its debug symbols");
		snprintf(detail, sizeof(detail), "%s: %s%s; %s: %s", base,
			 sym ? "symbols but no DWARF" : "no debug symbols",
			 dpath && !strcmp(dpath, "none") ? " (" DWMOD_PATH_ENV "=none)" : "", want,
			 sym ? "no inline frames" : lost[i]);
		check(WARN, "debug symbols", detail, NULL);
		dwmod__free(d);
	}
}

int doctor__run(bool json)
{
	char msg[256], err[256];
	struct utsname u;
	bool priv, tracefs;

	gt_libbpf_logging();
	uname(&u);

	priv = gt_check_privileges(err, sizeof(err)) == 0;
	check(priv ? OK : FAIL, "privileges",
	      priv ? (geteuid() == 0 ? "running as root" : "CAP_BPF and CAP_PERFMON present")
		   : "not root and missing CAP_BPF/CAP_PERFMON",
	      "run as root (sudo gaptrace ...)");
	{
		bool host = gt_check_pid_namespace(err, sizeof(err)) == 0;

		check(host ? OK : FAIL, "PID namespace",
		      host ? "the host's (the kernel's PIDs are the ones gaptrace sees)"
			   : "a child PID namespace: record would see nothing",
		      "run in the host PID namespace (docker run --pid=host, hostPID: true, "
		      "nsenter -t 1 -p)");
	}

	check(
	    gt_have_vmlinux_btf() ? OK : FAIL, "kernel BTF",
	    gt_have_vmlinux_btf() ? "/sys/kernel/btf/vmlinux present"
				  : "/sys/kernel/btf/vmlinux missing",
	    "use a kernel built with CONFIG_DEBUG_INFO_BTF=y (all major distributions since 2020)");

	if (priv) {
		bool btf = gt_probe_tp_btf("sched_switch");

		check(btf ? OK : FAIL, "tp_btf tracepoints",
		      btf ? "sched_switch accepts tp_btf programs"
			  : "the kernel refuses tp_btf programs on sched_switch: record cannot "
			    "attach its scheduler programs",
		      "use Linux >= 5.15 with BTF (CONFIG_DEBUG_INFO_BTF=y)");
		check(gt_probe_ringbuf() ? OK : FAIL, "BPF ring buffer",
		      gt_probe_ringbuf() ? "available" : "not available", "needs Linux >= 5.8");
		check(can_sample() ? OK : WARN, "CPU sampling",
		      can_sample()
			  ? "cpu-clock perf events open"
			  : "cannot open cpu-clock perf events: on-CPU time will not be split",
		      "check /proc/sys/kernel/perf_event_paranoid and seccomp/container limits");
		if (try_load(msg, sizeof(msg)) == 0)
			check(OK, "BPF programs", msg, NULL);
		else
			check(FAIL, "BPF programs", msg,
			      "run 'gaptrace doctor -v' for libbpf's log (verifier output); "
			      "needs Linux >= 5.15 with BTF");
	}
	tracefs = gt_tracefs_mounted();
	if (gt_have_uprobe_pmu())
		check(OK, "uprobes", "uprobe perf PMU present (no tracefs needed)", NULL);
	else
		check(tracefs ? OK : WARN, "uprobes",
		      tracefs ? "no uprobe PMU; tracefs is mounted, libbpf will use it"
			      : "no uprobe PMU and tracefs not mounted",
		      "'gaptrace record' mounts tracefs itself; or: mount -t tracefs tracefs "
		      "/sys/kernel/tracing");
	check(OK, "tracefs",
	      tracefs ? "mounted"
		      : "not mounted (not needed: gaptrace uses tp_btf and "
			"PMU uprobes)",
	      NULL);
	check(kallsyms_readable() ? OK : WARN, "kernel symbols",
	      kallsyms_readable() ? "/proc/kallsyms shows addresses"
				  : "/proc/kallsyms hides addresses: kernel frames unresolved",
	      "run as root, or sysctl kernel.kptr_restrict=0");
	check(OK, "kprobes/fentry", "not used (gaptrace needs neither)", NULL);
	check_debug_symbols();
	doctor__check_gpu();

	if (json) {
		print_json(&u);
	} else if (print_text(&u)) {
		fprintf(stderr,
			"gaptrace: error: cannot write the doctor's report: %s: check "
			"where stdout goes\n",
			strerror(errno));
		nfail++;
	}
	for (size_t i = 0; i < nresults; i++) {
		free(results[i].what);
		free(results[i].detail);
		free(results[i].fix);
	}
	return nfail ? GT_EXIT_FAIL : GT_EXIT_OK;
}
