// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * usdt_specs.c: counts the sites and distinct argument specs of USDT probes
 * (.note.stapsdt), so a target cannot make libbpf run out of spec ids.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "support/util.h"
#include "symbols/bounds.h"
#include "symbols/elf.h"
#include "symbols/usdt.h"
#include "symbols/usdt_specs.h"

#define NT_STAPSDT 3
#define MAX_NAMES  32u

/* The distinct argument strings of one probe: open addressing, pointers into the notes. */
struct spec_set {
	const char **slot;
	size_t cap; /* a power of two, kept over twice n (0 until the first) */
	size_t n;
};

struct census_ctx {
	const char *provider;
	const char *const *names;
	size_t n, addr_size;
	unsigned max_specs;
	struct usdt_census *out;
	struct spec_set sets[MAX_NAMES];
	unsigned nnotes;
	bool cut; /* the note cap (bounds.h) stopped the walk */
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

static void spec_set__put(const char **slot, size_t cap, const char *args)
{
	size_t i = (size_t)hash_str(args) & (cap - 1);

	while (slot[i])
		i = (i + 1) & (cap - 1);
	slot[i] = args;
}

/* Adds args to the set (growing it); true if it was not there. */
static bool spec_set__add(struct spec_set *set, const char *args)
{
	size_t i;

	if (2 * (set->n + 1) > set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 64;
		const char **slot = gt_xcalloc(cap, sizeof(*slot));

		for (i = 0; i < set->cap; i++)
			if (set->slot[i])
				spec_set__put(slot, cap, set->slot[i]);
		free(set->slot);
		set->slot = slot;
		set->cap = cap;
	}
	for (i = (size_t)hash_str(args) & (set->cap - 1); set->slot[i];
	     i = (i + 1) & (set->cap - 1))
		if (!strcmp(set->slot[i], args))
			return false;
	set->slot[i] = args;
	set->n++;
	return true;
}

/* desc: pc, base, semaphore (addr_size each), then provider\0 name\0 args\0. */
static int census_note(const GElf_Nhdr *nh, const char *owner, const uint8_t *desc, void *ctx)
{
	struct census_ctx *c = ctx;
	const char *prov, *name, *args, *end;
	struct usdt_census *o;
	size_t rem, i;

	/*
	 * The same cap as the symbolizer's note walk (usdt.c; notes__walk stops
	 * there too): a target's notes are hostile, and a cut is counted.
	 */
	if (++c->nnotes >= BOUND_USDT_NOTES) {
		c->cut = true;
		return 1;
	}
	if (nh->n_type != NT_STAPSDT || nh->n_namesz != 8 || memcmp(owner, "stapsdt", 8) ||
	    nh->n_descsz <= 3 * c->addr_size)
		return 0;
	prov = (const char *)desc + 3 * c->addr_size;
	rem = nh->n_descsz - 3 * c->addr_size;
	end = memchr(prov, '\0', rem);
	if (!end || strcmp(prov, c->provider))
		return 0;
	name = end + 1;
	rem -= (size_t)(name - prov);
	end = rem ? memchr(name, '\0', rem) : NULL;
	if (!end)
		return 0;
	args = end + 1;
	rem -= (size_t)(args - name);
	/* No argument string (or an unterminated one): libbpf refuses the probe anyway. */
	if (!rem || !memchr(args, '\0', rem))
		return 0;
	for (i = 0; i < c->n && strcmp(c->names[i], name); i++)
		;
	if (i == c->n)
		return 0;
	o = &c->out[i];
	if (o->sites < UINT32_MAX)
		o->sites++;
	if (o->specs <= c->max_specs && spec_set__add(&c->sets[i], args))
		o->specs++;
	return 0;
}

int syms_elf_usdt_census(const char *path, const char *provider, const char *const *names, size_t n,
			 unsigned max_specs, struct usdt_census *out)
{
	struct census_ctx c = {
	    .provider = provider, .names = names, .n = n, .max_specs = max_specs, .out = out};
	size_t i;
	int err, found = 0;

	if (!path || !provider || !names || !out || n > MAX_NAMES)
		return -EINVAL;
	memset(out, 0, n * sizeof(*out));
	err = syms_elf_stapsdt_walk(path, census_note, &c, &c.addr_size);
	/* 1: the note cap stopped the walk; the sites counted so far are attached. */
	if (err == 1)
		err = 0;
	if (c.cut)
		bound__cut(BOUND_USDT, path);
	for (i = 0; i < n; i++) {
		free(c.sets[i].slot);
		found += out[i].sites > 0;
	}
	return err ? err : found;
}
