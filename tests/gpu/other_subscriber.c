// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * other_subscriber.c: libother-subscriber.so, a stand-in for another CUPTI
 * client (Nsight Systems, a profiler built into the program) for
 * tools/gpu-check.  It takes CUPTI's only subscriber slot so that CUPTI
 * refuses libgaptrace-cupti.so, as it would on a host where Nsight runs.
 *
 * Loaded as CUDA_INJECTION64_PATH (the driver calls InitializeInjection) or
 * with LD_PRELOAD and OTHER_SUBSCRIBER_CTOR=1 (subscribes before main).
 * Prints one line, "other-subscriber: subscribed" or why not.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cupti.h>

static CUpti_SubscriberHandle sub;

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id,
				 const void *data)
{
	(void)ud;
	(void)d;
	(void)id;
	(void)data;
}

static void take_slot(void)
{
	CUptiResult r;
	const char *s = NULL;

	if (sub)
		return;
	r = cuptiSubscribe(&sub, on_callback, NULL);
	if (r == CUPTI_SUCCESS) {
		fprintf(stderr, "other-subscriber: subscribed\n");
		return;
	}
	cuptiGetResultString(r, &s);
	fprintf(stderr, "other-subscriber: cuptiSubscribe failed: %s\n", s ? s : "?");
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	take_slot();
	return 1;
}

__attribute__((constructor)) static void ctor(void)
{
	const char *e = getenv("OTHER_SUBSCRIBER_CTOR");

	if (e && *e == '1')
		take_slot();
}
