/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gaptrace-cupti-api.h: CUDA API calls by name prefix, shared by
 * cupti/gaptrace_cupti_control.c (which API records it keeps) and
 * user/analysis/model_pass1.c (which of them are allocator time).  One list,
 * so an allocation call the library keeps is also one the analysis counts as
 * allocator.
 */
#ifndef GAPTRACE_CUPTI_API_H
#define GAPTRACE_CUPTI_API_H

/* Runtime and driver calls that allocate, map or free device, pinned or managed memory. */
#define GT_CUDA_ALLOC_PREFIXES                                                                     \
	"cudaMalloc", "cudaFree", "cudaHostAlloc", "cudaHostRegister", "cudaHostUnregister",       \
	    "cudaMemPoolTrimTo", "cuMemAlloc", "cuMemFree", "cuMemHostAlloc", "cuMemHostRegister", \
	    "cuMemHostUnregister", "cuMemCreate", "cuMemRelease", "cuMemMap", "cuMemUnmap",        \
	    "cuMemSetAccess", "cuMemPoolTrimTo", "cuMemAddressReserve", "cuMemAddressFree"

#endif /* GAPTRACE_CUPTI_API_H */
