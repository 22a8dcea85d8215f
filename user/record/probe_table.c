// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * probe_table.c: the functions gaptrace times with uprobes: its defaults,
 * --probe specs, and their PROBES entries in the capture.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/attach.h"
#include "capture/capture.h"
#include "support/util.h"

uint32_t probe_table__add(struct probe_table *t, const char *name, const char *module,
			  const char *category)
{
	struct probe_func *f;

	gt_grow((void **)&t->funcs, &t->cap, t->n, sizeof(*t->funcs));
	f = &t->funcs[t->n];
	f->id = (uint32_t)t->n;
	f->name = gt_xstrdup(name);
	f->module = gt_xstrdup(module ? module : "");
	f->category = gt_xstrdup(category);
	return (uint32_t)t->n++;
}

void probe_table__add_defaults(struct probe_table *t)
{
	/* Rare and heavy: called per partition, not per allocation. */
	static const char *const libc_alloc[] = {"malloc_trim", "munmap"};
	static const char *const libc_io[] = {"fsync", "fdatasync"};
	/*
	 * The driver's allocation calls (absent ones are skipped): pinned, device,
	 * managed, stream-ordered (and their per-thread-stream _ptsz entries),
	 * and the virtual memory management calls.  The runtime's
	 * cudaMalloc, cudaFree and cudaHost calls end in these.
	 */
	static const char *const cuda_alloc[] = {
	    "cuMemHostAlloc",
	    "cuMemFreeHost",
	    "cuMemHostRegister",
	    "cuMemHostRegister_v2",
	    "cuMemHostUnregister",
	    "cuMemAlloc_v2",
	    "cuMemFree_v2",
	    "cuMemAllocHost_v2",
	    "cuMemAllocManaged",
	    "cuMemAllocPitch_v2",
	    "cuMemAllocAsync",
	    "cuMemAllocAsync_ptsz",
	    "cuMemFreeAsync",
	    "cuMemFreeAsync_ptsz",
	    "cuMemAllocFromPoolAsync",
	    "cuMemAllocFromPoolAsync_ptsz",
	    "cuMemPoolTrimTo",
	    "cuMemCreate",
	    "cuMemRelease",
	    "cuMemMap",
	    "cuMemUnmap",
	    "cuMemSetAccess",
	    "cuMemAddressReserve",
	    "cuMemAddressFree",
	};
	static const char *const cuda_sync[] = {
	    "cuStreamSynchronize",
	    "cuCtxSynchronize",
	    "cuEventSynchronize",
	};
	size_t i;

	for (i = 0; i < GT_ARRAY_SIZE(libc_alloc); i++)
		probe_table__add(t, libc_alloc[i], "libc.so", "allocator");
	for (i = 0; i < GT_ARRAY_SIZE(libc_io); i++)
		probe_table__add(t, libc_io[i], "libc.so", "io");
	for (i = 0; i < GT_ARRAY_SIZE(cuda_alloc); i++)
		probe_table__add(t, cuda_alloc[i], "libcuda.so", "allocator");
	/* "sync": CUDA time, and the end of GPU busy time in the host-side view. */
	for (i = 0; i < GT_ARRAY_SIZE(cuda_sync); i++)
		probe_table__add(t, cuda_sync[i], "libcuda.so", "sync");
}

static bool valid_category(const char *c)
{
	static const char *const cats[] = {"scheduler", "lock", "allocator", "wait", "io",
					   "sleep",	"cuda", "cpu",	     "unit"};

	for (size_t i = 0; i < GT_ARRAY_SIZE(cats); i++)
		if (!strcmp(c, cats[i]))
			return true;
	return false;
}

int probe_table__parse(struct probe_table *t, const char *spec, char *err, size_t errlen)
{
	char buf[512], *eq, *colon, *func, *lib = NULL;
	const char *cat = "cpu";

	if (strlen(spec) >= sizeof(buf) || !*spec) {
		snprintf(err, errlen, "bad --probe '%s': expected [LIB:]FUNC[=CATEGORY]", spec);
		return -1;
	}
	strcpy(buf, spec);
	eq = strchr(buf, '=');
	if (eq) {
		*eq = '\0';
		cat = eq + 1;
		if (!valid_category(cat)) {
			snprintf(err, errlen,
				 "bad --probe '%s': unknown category '%s' (use scheduler, lock, "
				 "allocator, wait, io, sleep, cuda or cpu)",
				 spec, cat);
			return -1;
		}
	}
	colon = strrchr(buf, ':');
	func = buf;
	if (colon) {
		*colon = '\0';
		lib = buf;
		func = colon + 1;
	}
	if (!*func || (lib && !*lib)) {
		snprintf(err, errlen, "bad --probe '%s': expected [LIB:]FUNC[=CATEGORY]", spec);
		return -1;
	}
	probe_table__add(t, func, lib ? lib : "", cat);
	return 0;
}

void probe_table__emit(const struct probe_table *t, size_t first, struct capture_buf *b)
{
	for (size_t i = first; i < t->n; i++)
		capture_buf__probe(b, t->funcs[i].id, t->funcs[i].name, t->funcs[i].module,
				   t->funcs[i].category);
}

void probe_table__free(struct probe_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->funcs[i].name);
		free(t->funcs[i].module);
		free(t->funcs[i].category);
	}
	free(t->funcs);
	memset(t, 0, sizeof(*t));
}
