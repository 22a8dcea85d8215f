/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gpu.h: choosing where `record` gets GPU activity from — the CUPTI library
 * loaded at launch (CUDA_INJECTION64_PATH) or injected into a running process,
 * or, when that is impossible, uprobes on libcuda (a host-side view).
 */
#ifndef GT_GPU_H
#define GT_GPU_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct probe_table;

enum gpu_mode {
	GPU_AUTO = 0, /* inject when the target uses CUDA, else uprobes, else nothing */
	GPU_INJECT,   /* CUPTI library (launch: environment, attach: injection) */
	GPU_UPROBE,   /* uprobes on libcuda launch/sync: host-side view */
	GPU_NONE,     /* only the program's own gaptrace USDT probes */
};

struct gpu_setup {
	enum gpu_mode mode;
	const char *cupti_lib; /* resolved path of libgaptrace-cupti.so, or NULL */
	char source[256];      /* header "gpu_source": what was used and how */
	bool injected;
	bool uprobes;
	uint64_t status_addr; /* the library's gaptrace_cupti_status in the target, 0 unknown */
	bool lib_seen;	      /* the library was found mapped in the target at some point */
};

/* Parses auto|inject|uprobe|none. Returns 0 or -1. */
int gpu_mode_parse(const char *s, enum gpu_mode *mode);

/*
 * Finds libgaptrace-cupti.so: the override, $GAPTRACE_CUPTI_LIB, next to the
 * gaptrace binary, in ../lib/gaptrace from it (make install's layout for any
 * PREFIX), then /usr/local/lib/gaptrace.  NULL when none exists.
 */
const char *gpu_find_cupti_lib(const char *override);

/*
 * Launch mode, in the parent before fork: decides the child's environment
 * changes and fills g->source.  gpu_child_env() applies them in the child.
 */
void gpu_prepare_launch(struct gpu_setup *g, struct probe_table *probes);
void gpu_child_env(const struct gpu_setup *g);

/*
 * Attach mode: if the target maps libcuda and the mode allows, injects the
 * CUPTI library; on refusal or failure (auto/inject) falls back to libcuda
 * uprobes.  Adds the uprobes it needs to probes.  Fills g->source.
 */
void gpu_prepare_attach(struct gpu_setup *g, pid_t pid, struct probe_table *probes);

/*
 * While recording with the CUPTI library (g->injected): reads the library's
 * exported gaptrace_cupti_status in pid.  Returns 1 when it stepped aside
 * (CUPTI refused it: another subscriber, an unsupported device, no buffers),
 * with its reason in why; 0 when it works or is not loaded yet.
 */
int gpu_cupti_refused(struct gpu_setup *g, pid_t pid, char *why, size_t len);

/*
 * Switches to the host-side view after the library stepped aside: adds the
 * libcuda launch uprobes to probes (the caller attaches them) and rewrites
 * g->source to say so.
 */
void gpu_fall_back(struct gpu_setup *g, struct probe_table *probes, const char *why);
/* Tells the library the fallback is in place (it may hold cuInit back until then). */
void gpu_fallback_ready(const struct gpu_setup *g, pid_t pid);

/*
 * True once the CUPTI library was seen loaded in pid (its status symbol was
 * found); looks once more now if not.  False: CUDA never loaded it.
 */
bool gpu_cupti_loaded(struct gpu_setup *g, pid_t pid);

/* True when pid maps a CUDA driver library (libcuda.so*). */
bool gpu_target_uses_cuda(pid_t pid);

#endif /* GT_GPU_H */
