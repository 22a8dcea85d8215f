// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gaptrace_cupti_names.c: what the tracer hears.  Kernel, API and NVTX range
 * names are interned (one id each) and announced through the gpu_name probe
 * once per tracer, before the first record that uses them; converted records
 * go to the tracer through the gpu_batch probe.
 */
#include <stdlib.h>
#include <string.h>

#include "gaptrace_cupti_priv.h"

#define NAME_MAX_LEN 4096
#define NAMES_MAX    (1u << 16)
#define API_CBID_MAX 1024

struct name_slot {
	uint32_t hash;
	uint32_t id; /* 0 = empty */
};

static pthread_mutex_t g_names_mu = PTHREAD_MUTEX_INITIALIZER;
static struct name_slot *g_slots; /* open addressing, g_slots_cap entries */
static uint32_t g_slots_cap;
static char **g_name_str;      /* by id */
static uint32_t *g_name_epoch; /* by id: announced in this tracer epoch */
static uint32_t g_nnames, g_names_cap;
static uint32_t g_api_ids[2][API_CBID_MAX]; /* [driver][cbid] -> id; UINT32_MAX = none */

static uint32_t hash_str(const char *s, size_t *len)
{
	uint32_t h = 2166136261u;
	size_t n = 0;

	for (; s[n] && n < NAME_MAX_LEN; n++)
		h = (h ^ (uint8_t)s[n]) * 16777619u;
	*len = n;
	return h;
}

static bool slots_grow(void)
{
	uint32_t cap = g_slots_cap ? g_slots_cap * 2 : 1024;
	struct name_slot *n = calloc(cap, sizeof(*n));

	if (!n)
		return false;
	for (uint32_t i = 0; i < g_slots_cap; i++) {
		uint32_t j;

		if (!g_slots[i].id)
			continue;
		for (j = g_slots[i].hash & (cap - 1); n[j].id; j = (j + 1) & (cap - 1))
			;
		n[j] = g_slots[i];
	}
	free(g_slots);
	g_slots = n;
	g_slots_cap = cap;
	return true;
}

/* Caller holds g_names_mu.  0 when the table is full or memory is short. */
static uint32_t names_get(const char *s)
{
	size_t len;
	uint32_t h = hash_str(s, &len), j;
	char *copy;

	if (!g_slots_cap && !slots_grow())
		return 0;
	for (j = h & (g_slots_cap - 1); g_slots[j].id; j = (j + 1) & (g_slots_cap - 1)) {
		const char *t = g_name_str[g_slots[j].id];

		if (g_slots[j].hash == h && strncmp(t, s, len) == 0 && t[len] == '\0')
			return g_slots[j].id;
	}
	if (g_nnames >= NAMES_MAX)
		return 0;
	if (g_nnames + 2 > g_names_cap) {
		uint32_t cap = g_names_cap ? g_names_cap * 2 : 256;
		char **str = realloc(g_name_str, cap * sizeof(*str));
		uint32_t *ep;

		if (!str)
			return 0;
		g_name_str = str;
		ep = realloc(g_name_epoch, cap * sizeof(*ep));
		if (!ep)
			return 0;
		g_name_epoch = ep;
		g_names_cap = cap;
	}
	if ((g_nnames + 1) * 2 > g_slots_cap) {
		if (!slots_grow())
			return 0;
		for (j = h & (g_slots_cap - 1); g_slots[j].id; j = (j + 1) & (g_slots_cap - 1))
			;
	}
	copy = malloc(len + 1);
	if (!copy)
		return 0;
	memcpy(copy, s, len);
	copy[len] = '\0';
	g_nnames++;
	g_name_str[g_nnames] = copy;
	g_name_epoch[g_nnames] = 0;
	g_slots[j].hash = h;
	g_slots[j].id = g_nnames;
	return g_nnames;
}

/* Caller holds g_names_mu: the tracer hears a name before the first record using it. */
static uint32_t name_announce(uint32_t id)
{
	uint32_t epoch = __atomic_load_n(&g_lib.epoch, __ATOMIC_ACQUIRE);

	if (id && g_name_epoch[id] != epoch && GAPTRACE_ENABLED(gpu_name)) {
		const char *s = g_name_str[id];

		/* A plain register operand: libbpf 1.1 cannot read base+index*scale ones. */
		__asm__ __volatile__("" : "+r"(s));
		GAPTRACE_GPU_NAME(id, s);
		g_name_epoch[id] = epoch;
	}
	return id;
}

uint32_t name_use(const char *s)
{
	uint32_t id;

	if (!s || !*s)
		return 0;
	pthread_mutex_lock(&g_names_mu);
	id = name_announce(names_get(s));
	pthread_mutex_unlock(&g_names_mu);
	return id;
}

uint32_t api_name_use(bool driver, uint32_t cbid)
{
	uint32_t id;

	if (cbid >= API_CBID_MAX)
		return 0;
	pthread_mutex_lock(&g_names_mu);
	id = g_api_ids[driver][cbid];
	if (id == 0) {
		const char *s = NULL;

		/* Once per call kind: a name lookup is not free. */
		if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API
						: CUPTI_CB_DOMAIN_RUNTIME_API,
					 cbid, &s) == CUPTI_SUCCESS &&
		    s)
			id = names_get(s);
		if (!id)
			id = UINT32_MAX;
		g_api_ids[driver][cbid] = id;
	}
	id = id == UINT32_MAX ? 0 : name_announce(id);
	pthread_mutex_unlock(&g_names_mu);
	return id;
}

/* ---- converted records to the tracer ---- */

/*
 * Hands a batch to the tracer and empties it.  Apart from the conversion, so
 * that its unit test takes the records here (-Wl,--wrap=batch_fire).
 */
void batch_fire(struct batch *b)
{
	if (b->n && GAPTRACE_ENABLED(gpu_batch))
		GAPTRACE_GPU_BATCH(b->r, b->n);
	b->sent += b->n;
	b->n = 0;
}
