// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dwmod.c: one ELF object through libdwfl, reported alone at its own
 * addresses: function symbols from wherever dwfl finds the best table, and
 * inline chains from DWARF scopes.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "support/safeopen.h"
#include "support/u64map.h"
#include "support/util.h"
#include "symbols/debugfind.h"
#include "symbols/dwmod.h"
#include "symbols/syms_priv.h"

struct dwmod {
	Dwfl_Callbacks cbs; /* dwfl keeps a pointer to them */
	char *path;	    /* debuginfo_path, NULL: dwfl's default */
	bool no_debuginfo;  /* "none": no separate debug info */
	char *name;	    /* the object's maps path */
	pid_t pid;	    /* the process that mapped it (its rights for debug links) */
	bool have_creds;
	struct safeopen_creds creds;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Addr bias; /* module address - ELF vaddr (0 as reported) */
	/*
	 * The function symbols of the table dwfl chose, names cut at "@VERSION",
	 * in the symbolizer's sorted table (best alias per address): looked up
	 * by binary search, not dwfl_module_addrinfo, which scans the whole
	 * table on every call (0.9 ms per lookup in a 44k-symbol libLLVM; a
	 * recorder symbolizing a PyTorch process spent a whole CPU on it).
	 */
	struct symtab tab;
	bool tab_done;
};

/*
 * Our own search (debugfind.h), not dwfl's standard one: that opens what
 * the target's directories hold as root and takes any ELF file there.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct dwmod *d = *userdata;
	struct debugfind_req r = {};
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len, fd;

	if (!d || d->no_debuginfo)
		return -1;
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	r.pid = d->pid;
	r.creds = d->have_creds ? &d->creds : NULL;
	r.name = d->name;
	r.build_id = len > 0 ? bits : NULL;
	r.build_id_len = len > 0 ? (size_t)len : 0;
	r.link = debuglink_file;
	r.crc = debuglink_crc;
	r.path = d->path;
	fd = debugfind__open(&r, debuginfo_file_name);
	return fd >= 0 ? fd : -1;
}

struct dwmod *dwmod__open(pid_t pid, const char *name, int fd, const char *debuginfo_path)
{
	struct dwmod *d;
	void **userdata;
	GElf_Ehdr eh;
	Elf *elf;

	if (fd < 0)
		return NULL;
	d = gt_xcalloc(1, sizeof(*d));
	d->no_debuginfo = debuginfo_path && !strcmp(debuginfo_path, "none");
	d->name = gt_xstrdup(name);
	d->pid = pid;
	/* Now, while pid is the process that maps the object (the search may come later). */
	d->have_creds = pid > 0 && !safeopen_creds_read(pid, &d->creds);
	d->path = debuginfo_path && *debuginfo_path ? gt_xstrdup(debuginfo_path) : NULL;
	d->cbs.find_elf = dwfl_build_id_find_elf;
	d->cbs.find_debuginfo = find_debuginfo;
	d->cbs.section_address = dwfl_offline_section_address;
	d->cbs.debuginfo_path = d->path && !d->no_debuginfo ? &d->path : NULL;
	d->dwfl = dwfl_begin(&d->cbs);
	if (!d->dwfl) {
		close(fd);
		goto fail;
	}
	dwfl_report_begin(d->dwfl);
	/* add_p_vaddr with base 0: module addresses are the file's p_vaddr. */
	d->mod = dwfl_report_elf(d->dwfl, name, name, fd, 0, true);
	if (!d->mod) {
		gt_dbg("syms: dwfl cannot report %s: %s", name, dwfl_errmsg(-1));
		close(fd);
		goto fail;
	}
	dwfl_report_end(d->dwfl, NULL, NULL);
	/* The debug-info search reads its settings from here. */
	dwfl_module_info(d->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = d;
	elf = dwfl_module_getelf(d->mod, &d->bias);
	if (!elf || !gelf_getehdr(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		goto fail;
	return d;
fail:
	dwmod__free(d);
	return NULL;
}

struct dwmod *dwmod__open_mem(pid_t pid, const char *name, const void *image, size_t len,
			      const char *debuginfo_path)
{
	int fd = memfd_create("gaptrace-image", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		return NULL;
	while (done < len) {
		ssize_t n = write(fd, (const char *)image + done, len - done);

		if (n <= 0) {
			close(fd);
			return NULL;
		}
		done += (size_t)n;
	}
	return dwmod__open(pid, name, fd, debuginfo_path);
}

void dwmod__free(struct dwmod *d)
{
	if (!d)
		return;
	if (d->dwfl)
		dwfl_end(d->dwfl);
	symtab__free(&d->tab);
	free(d->name);
	free(d->path);
	free(d);
}

static bool sym_is_func(const GElf_Sym *s, Elf *elf, GElf_Word shndx)
{
	int type = GELF_ST_TYPE(s->st_info);
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return true;
	/* Hand-written assembly often has no type, but a size in a code section. */
	if (type != STT_NOTYPE || !s->st_size || !elf)
		return false;
	scn = elf_getscn(elf, shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

static unsigned int sym_rank(const GElf_Sym *s)
{
	int bind = GELF_ST_BIND(s->st_info);

	return bind == STB_GLOBAL || bind == STB_GNU_UNIQUE ? 2 : bind == STB_WEAK;
}

/*
 * One pass over the symbol table dwfl chose: its function symbols, ranked
 * by binding so that symtab__finish keeps the best alias per address (a
 * debug file's local __GI_ names lose to the exported ones the .dynsym
 * knows), as the report's rules expect.  A symbol without a size (hand-
 * written assembly) then reaches the next symbol or its section's end,
 * whichever comes first, as dwfl takes it, not symtab's fixed span.
 */
static void index_syms(struct dwmod *d)
{
	int n = dwfl_module_getsymtab(d->mod);
	struct u64map sec_end = {}; /* sizeless symbol's address -> its section's end */
	uint64_t end;

	d->tab_done = true;
	for (int i = 1; i < n; i++) {
		GElf_Addr addr, bias;
		GElf_Word shndx;
		GElf_Shdr sh;
		GElf_Sym sym;
		Elf_Scn *scn;
		const char *name;
		Elf *elf;

		name = dwfl_module_getsym_info(d->mod, i, &sym, &addr, &shndx, &elf, &bias);
		if (!name || !*name || *name == '@' || sym.st_shndx == SHN_UNDEF ||
		    !sym_is_func(&sym, elf, shndx))
			continue;
		if (symtab__add(&d->tab, addr, sym.st_size, name, strcspn(name, "@"),
				sym_rank(&sym), 0))
			break;
		if (!sym.st_size && (scn = elf_getscn(elf, shndx)) && gelf_getshdr(scn, &sh))
			u64map_put(&sec_end, addr, sh.sh_addr + sh.sh_size + d->bias);
	}
	symtab__finish(&d->tab);
	for (size_t i = 0; i < d->tab.nsyms; i++) {
		struct sym *e = &d->tab.syms[i];

		if (e->size || !u64map_get(&sec_end, e->addr, &end))
			continue;
		if (i + 1 < d->tab.nsyms)
			end = GT_MIN(end, d->tab.syms[i + 1].addr);
		e->size = GT_MAX(end, e->addr + 1) - e->addr;
	}
	u64map_free(&sec_end);
}

const char *dwmod__symbol(struct dwmod *d, uint64_t vaddr, uint64_t *start)
{
	const struct sym *e;

	if (!d->tab_done)
		index_syms(d);
	e = symtab__find(&d->tab, vaddr + d->bias);
	if (!e || e->addr - d->bias > vaddr)
		return NULL;
	*start = e->addr - d->bias;
	return d->tab.strs + e->name;
}

/* The name to show for an inlined call: the linkage name (demangled later), else the plain one. */
static const char *inline_name(Dwarf_Die *scope)
{
	Dwarf_Attribute attr;
	Dwarf_Die origin;
	const char *s;

	if (!dwarf_attr_integrate(scope, DW_AT_abstract_origin, &attr) ||
	    !dwarf_formref_die(&attr, &origin))
		origin = *scope;
	if ((dwarf_attr_integrate(&origin, DW_AT_linkage_name, &attr) ||
	     dwarf_attr_integrate(&origin, DW_AT_MIPS_linkage_name, &attr)) &&
	    (s = dwarf_formstring(&attr)))
		return s;
	return dwarf_diename(&origin);
}

int dwmod__inlines(struct dwmod *d, uint64_t vaddr, const char **names, int max)
{
	GElf_Addr addr = vaddr + d->bias, bias = 0;
	Dwarf_Die *cu, *scopes = NULL;
	int n, out = 0;

	cu = dwfl_module_addrdie(d->mod, addr, &bias);
	if (!cu)
		return 0;
	n = dwarf_getscopes(cu, addr - bias, &scopes);
	/* Innermost first; the first subprogram ends the inline chain. */
	for (int i = 0; i < n && out < max; i++) {
		int tag = dwarf_tag(&scopes[i]);
		const char *name;

		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		name = inline_name(&scopes[i]);
		if (name && *name)
			names[out++] = name;
	}
	free(scopes);
	return out;
}

bool dwmod__has_dwarf(struct dwmod *d)
{
	GElf_Addr bias;

	return dwfl_module_getdwarf(d->mod, &bias) != NULL;
}

static bool elf_has_section(Elf *elf, uint32_t type, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		n = name ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (!name || (n && !strcmp(n, name)))
			return true;
	}
	return false;
}

bool dwmod__has_symtab(struct dwmod *d)
{
	const char *debugfile = NULL;
	GElf_Addr bias;
	Elf *elf;

	/* The symbol table search also looks for the separate debug file. */
	dwfl_module_getsymtab(d->mod);
	dwfl_module_info(d->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	if (debugfile)
		return true;
	elf = dwfl_module_getelf(d->mod, &bias);
	return elf_has_section(elf, SHT_SYMTAB, NULL) ||
	       elf_has_section(elf, SHT_PROGBITS, ".gnu_debugdata");
}

const char *dwmod__debug_file(struct dwmod *d)
{
	const char *debugfile = NULL;

	dwfl_module_info(d->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	return debugfile;
}
