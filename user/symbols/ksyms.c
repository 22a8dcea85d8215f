// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ksyms.c: the kernel's symbols for the symbolizer (syms.c): /proc/kallsyms
 * read once into a sorted table, module names kept beside it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/util.h"
#include "symbols/bounds.h"
#include "symbols/syms_priv.h"

static uint32_t ksyms__mod(struct ksyms *k, const char *name)
{
	size_t i;

	/* Symbols of one module come in a run: try the latest first. */
	for (i = k->nmods; i-- > 0;)
		if (!strcmp(k->mods[i], name))
			return (uint32_t)i;
	if (k->nmods >= (1u << 24))
		return 0;
	gt_grow((void **)&k->mods, &k->mods_cap, k->nmods, sizeof(*k->mods));
	k->mods[k->nmods] = gt_xstrdup(name);
	return (uint32_t)k->nmods++;
}

void ksyms__load(struct ksyms *k)
{
	size_t lcap = 0;
	bool nonzero = false;
	char *line = NULL;
	FILE *f;

	k->loaded = true;
	ksyms__mod(k, "[kernel]");
	f = fopen("/proc/kallsyms", "re");
	if (!f) {
		gt_dbg("syms: cannot open /proc/kallsyms: %s", strerror(errno));
		return;
	}
	while (getline(&line, &lcap, f) > 0) {
		char *p, *end, *name, type;
		unsigned int rank;
		uint32_t mod = 0;
		uint64_t addr;
		size_t len;

		addr = strtoull(line, &end, 16);
		if (end == line || *end != ' ')
			continue;
		p = end + 1;
		type = *p;
		if (!type || p[1] != ' ' || !strchr("tTwW", type))
			continue;
		p += 2;
		name = p;
		len = strcspn(p, " \t\n");
		if (!len)
			continue;
		p += len;
		p += strspn(p, " \t");
		if (*p == '[') {
			size_t mlen = strcspn(p, "]\n");

			if (p[mlen] == ']') {
				p[mlen + 1] = '\0';
				mod = ksyms__mod(k, p);
			}
		}
		nonzero |= addr != 0;
		rank = type == 'T' ? 2 : (type == 'W' || type == 'w');
		if (symtab__add(&k->tab, addr, 0, name, len, rank, mod))
			break;
	}
	free(line);
	fclose(f);
	/* kptr_restrict hides every address: nothing can be resolved. */
	if (!nonzero) {
		gt_dbg("syms: /proc/kallsyms shows no addresses (kptr_restrict)");
		symtab__free(&k->tab);
		return;
	}
	if (k->tab.names_cut)
		bound__cut(BOUND_NAMES, "/proc/kallsyms");
	symtab__finish(&k->tab);
}

int ksyms__resolve(struct ksyms *k, uint64_t ip, const char **name, uint32_t *off,
		   const char **module)
{
	const struct sym *s;

	if (!k->loaded)
		ksyms__load(k);
	*module = "[kernel]";
	s = symtab__find(&k->tab, ip);
	if (!s || ip - s->addr > UINT32_MAX)
		return -1;
	*name = k->tab.strs + s->name;
	*off = (uint32_t)(ip - s->addr);
	*module = s->mod < k->nmods ? k->mods[s->mod] : "[kernel]";
	return 0;
}

void ksyms__free(struct ksyms *k)
{
	for (size_t i = 0; i < k->nmods; i++)
		free((char *)k->mods[i]);
	free(k->mods);
	symtab__free(&k->tab);
}
