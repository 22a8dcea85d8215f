// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpu.c: sets up the GPU activity source for `record`: the CUPTI injection
 * library through CUDA_INJECTION64_PATH (launch mode) or a live injection
 * (attach mode), with libcuda uprobes as the host-side fallback.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "record/attach.h"
#include "gaptrace/gaptrace-cupti-status.h"
#include "record/gpu.h"
#include "record/inject.h"
#include "symbols/live.h"
#include "support/util.h"

#define CUPTI_LIB "libgaptrace-cupti.so"

int gpu_mode_parse(const char *s, enum gpu_mode *mode)
{
	static const char *const names[] = {"auto", "inject", "uprobe", "none"};

	for (size_t i = 0; i < GT_ARRAY_SIZE(names); i++) {
		if (!strcmp(s, names[i])) {
			*mode = (enum gpu_mode)i;
			return 0;
		}
	}
	return -1;
}

const char *gpu_find_cupti_lib(const char *override)
{
	static char path[PATH_MAX + 64];
	const char *env = getenv("GAPTRACE_CUPTI_LIB");
	char exe[PATH_MAX];
	ssize_t n;

	if (override)
		return realpath(override, path) ? path : NULL;
	if (env && realpath(env, path))
		return path;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/" CUPTI_LIB, exe);
			if (access(path, R_OK) == 0)
				return path;
			/* Installed: PREFIX/bin/gaptrace, PREFIX/lib/gaptrace/ (make install). */
			snprintf(path, sizeof(path), "%s/../lib/gaptrace/" CUPTI_LIB, exe);
			if (access(path, R_OK) == 0 && realpath(path, exe))
				return strcpy(path, exe);
		}
	}
	snprintf(path, sizeof(path), "/usr/local/lib/gaptrace/" CUPTI_LIB);
	return access(path, R_OK) == 0 ? path : NULL;
}

/* libcuda entry points that launch or copy: the host-side view's "GPU busy" starts here. */
static void add_launch_probes(struct probe_table *probes)
{
	static const char *const launch[] = {
	    "cuLaunchKernel",	    "cuLaunchKernelEx",	    "cuLaunchCooperativeKernel",
	    "cuMemcpyAsync",	    "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2",
	    "cuMemcpyDtoDAsync_v2", "cuMemsetD8Async",	    "cuMemsetD32Async",
	    "cuGraphLaunch",
	};

	for (size_t i = 0; i < GT_ARRAY_SIZE(launch); i++)
		probe_table__add(probes, launch[i], "libcuda.so", "launch");
}

void gpu_prepare_launch(struct gpu_setup *g, struct probe_table *probes)
{
	const char *prev = getenv("CUDA_INJECTION64_PATH");

	g->injected = false;
	g->uprobes = false;
	switch (g->mode) {
	case GPU_NONE:
		snprintf(g->source, sizeof(g->source), "usdt");
		return;
	case GPU_UPROBE:
		add_launch_probes(probes);
		g->uprobes = true;
		snprintf(g->source, sizeof(g->source), "uprobe (host-side view)");
		return;
	case GPU_AUTO:
	case GPU_INJECT:
		break;
	}
	if (!g->cupti_lib) {
		if (g->mode == GPU_INJECT)
			gt_warn("no %s found (build it with 'make cupti' on a host with the CUDA "
				"toolkit, or pass --cupti-lib): falling back to libcuda uprobes",
				CUPTI_LIB);
		add_launch_probes(probes);
		g->uprobes = true;
		snprintf(g->source, sizeof(g->source), "uprobe (host-side view, no CUPTI library)");
		return;
	}
	if (prev && *prev && strcmp(prev, g->cupti_lib)) {
		/*
		 * Another injection library (Nsight's, say) keeps its place, and ours
		 * cannot load beside it: the host-side view instead.  Should the other
		 * library fire gaptrace's probes after all, its GPU records win.
		 */
		gt_warn("CUDA_INJECTION64_PATH is already set to %s: keeping it, so %s cannot "
			"load; GPU busy time will be the host-side view from libcuda uprobes "
			"(unset it for CUPTI's GPU timestamps)",
			prev, g->cupti_lib);
		add_launch_probes(probes);
		g->uprobes = true;
		snprintf(g->source, sizeof(g->source),
			 "uprobe (host-side view; CUDA_INJECTION64_PATH names another library)");
		return;
	}
	g->injected = true;
	snprintf(g->source, sizeof(g->source), "cupti (launch, CUDA_INJECTION64_PATH)");
}

void gpu_child_env(const struct gpu_setup *g)
{
	if (!g->injected)
		return;
	setenv("CUDA_INJECTION64_PATH", g->cupti_lib, 1);
	/* NVTX ranges reach CUPTI only through NVTX's injection hook; the library forwards it. */
	if (!getenv("NVTX_INJECTION64_PATH"))
		setenv("NVTX_INJECTION64_PATH", g->cupti_lib, 1);
	/* The library holds cuInit back until the recorder has attached its probes. */
	if (!getenv("GAPTRACE_CUPTI_WAIT_MS"))
		setenv("GAPTRACE_CUPTI_WAIT_MS", "3000", 1);
}

static int cuda_map_cb(const struct syms_mapping *m, void *ctx)
{
	const char *base = strrchr(m->path, '/');

	base = base ? base + 1 : m->path;
	if (!strncmp(base, "libcuda.so", 10)) {
		*(bool *)ctx = true;
		return 1;
	}
	return 0;
}

bool gpu_target_uses_cuda(pid_t pid)
{
	bool found = false;

	syms_read_exec_mappings((uint32_t)pid, cuda_map_cb, &found);
	return found;
}

void gpu_prepare_attach(struct gpu_setup *g, pid_t pid, struct probe_table *probes)
{
	char err[512];
	int e;

	g->injected = false;
	g->uprobes = false;
	if (g->mode == GPU_NONE) {
		snprintf(g->source, sizeof(g->source), "usdt");
		return;
	}
	if (!gpu_target_uses_cuda(pid)) {
		if (g->mode != GPU_AUTO)
			gt_warn("pid %d has no libcuda.so mapped (not a CUDA program yet?): GPU "
				"activity only from its gaptrace USDT probes",
				pid);
		snprintf(g->source, sizeof(g->source), "usdt (no libcuda in the target)");
		return;
	}
	if (g->mode == GPU_UPROBE) {
		add_launch_probes(probes);
		g->uprobes = true;
		snprintf(g->source, sizeof(g->source), "uprobe (host-side view)");
		return;
	}
	if (!g->cupti_lib) {
		gt_warn("no %s found (build it with 'make cupti', or pass --cupti-lib): using "
			"libcuda uprobes (host-side view)",
			CUPTI_LIB);
	} else {
		e = inject_library(pid, g->cupti_lib, err, sizeof(err));
		if (e == 0) {
			g->injected = true;
			snprintf(g->source, sizeof(g->source), "cupti (injected into pid %d)", pid);
			return;
		}
		gt_warn("could not inject %s: %s; using libcuda uprobes (host-side view)",
			CUPTI_LIB, err);
	}
	add_launch_probes(probes);
	g->uprobes = true;
	snprintf(g->source, sizeof(g->source), "uprobe (host-side view, injection failed)");
}

static int find_status(struct gpu_setup *g, pid_t pid)
{
	const char *base = strrchr(g->cupti_lib, '/');
	char prefix[256];
	uint64_t addr;

	/* Launch mode maps the file itself; a live injection maps a memfd copy. */
	snprintf(prefix, sizeof(prefix), "%s", base ? base + 1 : g->cupti_lib);
	if (syms_find_symbol((uint32_t)pid, prefix, GT_CUPTI_STATUS_SYMBOL, &addr) &&
	    syms_find_symbol((uint32_t)pid, "memfd:" GT_INJECT_MEMFD_NAME, GT_CUPTI_STATUS_SYMBOL,
			     &addr))
		return -1;
	g->status_addr = addr;
	return 0;
}

int gpu_cupti_refused(struct gpu_setup *g, pid_t pid, char *why, size_t len)
{
	struct gt_cupti_status st;
	struct iovec local = {&st, sizeof(st)}, remote;

	if (!g->injected || g->uprobes || !g->cupti_lib)
		return 0;
	if (!g->status_addr && find_status(g, pid))
		return 0; /* not loaded yet (launch mode: before cuInit) or an older library */
	g->lib_seen = true;
	remote = (struct iovec){(void *)(uintptr_t)g->status_addr, sizeof(st)};
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(st)) {
		g->status_addr = 0; /* unloaded, or the process is gone: look again next time */
		return 0;
	}
	if (st.magic != GT_CUPTI_STATUS_MAGIC) {
		g->status_addr = 0;
		return 0;
	}
	if (!st.failed)
		return 0;
	st.reason[sizeof(st.reason) - 1] = '\0';
	snprintf(why, len, "%s", st.reason[0] ? st.reason : "no reason given");
	return 1;
}

bool gpu_cupti_loaded(struct gpu_setup *g, pid_t pid)
{
	if (g->status_addr || g->lib_seen)
		return true;
	/* Never looked (no new probes since), or the target is still there: look now. */
	if (find_status(g, pid) == 0)
		g->lib_seen = true;
	return g->lib_seen;
}

void gpu_fallback_ready(const struct gpu_setup *g, pid_t pid)
{
	uint32_t one = 1;
	struct iovec local = {&one, sizeof(one)},
		     remote = {(void *)(uintptr_t)(g->status_addr +
						   offsetof(struct gt_cupti_status, fallback)),
			       sizeof(one)};

	/* Launch mode: the library holds cuInit back until it sees this. */
	if (g->status_addr && process_vm_writev(pid, &local, 1, &remote, 1, 0) != sizeof(one))
		gt_dbg("cannot tell the CUPTI library in pid %d: %s", pid, strerror(errno));
}

void gpu_fall_back(struct gpu_setup *g, struct probe_table *probes, const char *why)
{
	add_launch_probes(probes);
	g->uprobes = true;
	snprintf(g->source, sizeof(g->source),
		 "uprobe (host-side view; CUPTI library stepped aside: %s)", why);
}
