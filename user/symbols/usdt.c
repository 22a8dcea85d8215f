// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* usdt.c: the USDT probes of an ELF file (.note.stapsdt notes of one provider). */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "support/util.h"
#include "symbols/elf.h"
#include "symbols/usdt.h"

#define NT_STAPSDT     3
#define MAX_USDT_NAMES 65536u

struct usdt_ctx {
	const char *provider;
	size_t addr_size;
	char **names;
	size_t nnames, cap;
	int (*cb)(const char *name, void *ctx);
	void *ctx;
};

/* desc: pc, base, semaphore (addr_size each), then provider\0 name\0 args\0. */
static int usdt_note(const GElf_Nhdr *nh, const char *owner, const uint8_t *desc, void *ctx)
{
	struct usdt_ctx *u = ctx;
	const char *prov, *name, *end;
	size_t rem, i;
	int err;

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
	for (i = 0; i < u->nnames; i++)
		if (!strcmp(u->names[i], name))
			return 0;
	if (u->nnames >= MAX_USDT_NAMES)
		return 0;
	gt_grow((void **)&u->names, &u->cap, u->nnames, sizeof(*u->names));
	u->names[u->nnames++] = gt_xstrdup(name);
	err = u->cb(name, u->ctx);
	return err < 0 ? err : 0;
}

int syms_elf_usdt_probes(const char *path, const char *provider,
			 int (*cb)(const char *name, void *ctx), void *ctx)
{
	struct usdt_ctx u = {.provider = provider, .cb = cb, .ctx = ctx};
	Elf_Scn *scn = NULL;
	struct elf_handle h;
	size_t shstrndx, nscn = 0, i;
	int err;

	if (!path || !provider || !cb)
		return -EINVAL;
	err = elf_handle__open(&h, path);
	if (err)
		return err == -ENOEXEC ? 0 : err;
	u.addr_size = gelf_getclass(h.elf) == ELFCLASS64 ? 8 : 4;
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
		err = notes__walk(d, usdt_note, &u);
		if (err)
			break;
	}
out:
	for (i = 0; i < u.nnames; i++)
		free(u.names[i]);
	free(u.names);
	elf_handle__close(&h);
	return err ? err : (int)u.nnames;
}
