// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* usdt.c: the USDT probes of an ELF file (.note.stapsdt notes of one provider). */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "support/u64map.h"
#include "support/util.h"
#include "symbols/bounds.h"
#include "symbols/elf.h"
#include "symbols/usdt.h"

#define NT_STAPSDT 3

/* End of a chain of names whose hashes are alike. */
#define NONE SIZE_MAX

struct usdt_name {
	size_t next; /* the previous name of the same hash, NONE: the last */
	char s[];
};

/*
 * Names seen are found through a hash (name -> newest index of its hash,
 * chained): a comparison with every earlier name made 16 MB of distinct
 * names take 34 s.  Both notes and names are capped (bounds.h).
 */
struct usdt_ctx {
	const char *provider;
	size_t addr_size;
	struct usdt_name **names;
	size_t nnames, cap, nnotes;
	struct u64map index;
	bool cut;
	int (*cb)(const char *name, void *ctx);
	void *ctx;
};

/* desc: pc, base, semaphore (addr_size each), then provider\0 name\0 args\0. */
static int usdt_note(const GElf_Nhdr *nh, const char *owner, const uint8_t *desc, void *ctx)
{
	struct usdt_ctx *u = ctx;
	const char *prov, *name, *end;
	struct usdt_name *un;
	uint64_t h, head;
	size_t rem, i;
	int err;

	if (++u->nnotes > BOUND_USDT_NOTES) {
		u->cut = true;
		return 1;
	}
	if (nh->n_type != NT_STAPSDT || nh->n_namesz != 8 || memcmp(owner, "stapsdt", 8) ||
	    nh->n_descsz <= 3 * u->addr_size)
		return 0;
	prov = (const char *)desc + 3 * u->addr_size;
	rem = nh->n_descsz - 3 * u->addr_size;
	end = memchr(prov, '\0', rem);
	if (!end || strcmp(prov, u->provider))
		return 0;
	name = end + 1;
	rem -= (size_t)(name - prov);
	end = rem ? memchr(name, '\0', rem) : NULL;
	if (!end || end == name)
		return 0;
	h = gt_hash64(name, (size_t)(end - name), 0);
	if (!u64map_get(&u->index, h, &head))
		head = NONE;
	for (i = (size_t)head; i != NONE; i = u->names[i]->next)
		if (!strcmp(u->names[i]->s, name))
			return 0;
	if (u->nnames >= BOUND_USDT_NAMES) {
		u->cut = true;
		return 0;
	}
	un = gt_xmalloc(sizeof(*un) + (size_t)(end - name) + 1);
	memcpy(un->s, name, (size_t)(end - name) + 1);
	un->next = (size_t)head;
	gt_grow((void **)&u->names, &u->cap, u->nnames, sizeof(*u->names));
	u->names[u->nnames] = un;
	u64map_put(&u->index, h, u->nnames++);
	err = u->cb(name, u->ctx);
	return err < 0 ? err : 0;
}

int syms_elf_stapsdt_walk(const char *path, note_cb cb, void *ctx, size_t *addr_size)
{
	Elf_Scn *scn = NULL;
	struct elf_handle h;
	size_t shstrndx, nscn = 0;
	int err;

	err = elf_handle__open(&h, path);
	if (err)
		return err == -ENOEXEC ? 0 : err;
	*addr_size = gelf_getclass(h.elf) == ELFCLASS64 ? 8 : 4;
	if (elf_getshdrstrndx(h.elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(h.elf, scn)) && nscn++ < MAX_SECTIONS) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d = elf__section_data(h.elf, scn, h.size, &sh, SHT_NOTE);

		if (!d)
			continue;
		name = elf_strptr(h.elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".note.stapsdt"))
			continue;
		err = notes__walk(d, cb, ctx);
		if (err)
			break;
	}
out:
	elf_handle__close(&h);
	return err;
}

int syms_elf_usdt_probes(const char *path, const char *provider,
			 int (*cb)(const char *name, void *ctx), void *ctx)
{
	struct usdt_ctx u = {.provider = provider, .cb = cb, .ctx = ctx};
	size_t i;
	int err;

	if (!path || !provider || !cb)
		return -EINVAL;
	err = syms_elf_stapsdt_walk(path, usdt_note, &u, &u.addr_size);
	/* 1: the note cap stopped the walk. */
	if (err == 1)
		err = 0;
	if (u.cut)
		bound__cut(BOUND_USDT, path);
	for (i = 0; i < u.nnames; i++)
		free(u.names[i]);
	free(u.names);
	u64map_free(&u.index);
	return err ? err : (int)u.nnames;
}
