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
#include "symbols/bounds.h"
#include "symbols/debugfind.h"
#include "symbols/dwmod.h"
#include "symbols/elf.h"
#include "symbols/syms_priv.h"
#include "symbols/zelf.h"

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
	/*
	 * MiniDebugInfo, inflated here under a cap and hidden from dwfl
	 * (which inflates it with none): its symbols join .dynsym's when
	 * dwfl finds no .symtab, as dwfl itself would add them.
	 */
	Elf *mini;
	void *mini_img;
	size_t mini_len;
	bool has_mini;
	/* Compressed DWARF too big to inflate (here or in the debug file): none read. */
	bool dwarf_refused;
};

/* The object's name, for warnings. */
static const char *dwmod_name(struct dwmod *d)
{
	const char *name = dwfl_module_info(d->mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

	return name ? name : "?";
}

/*
 * A separate debug file dwfl found (fd): its compressed DWARF is measured
 * before dwfl reads it; false refuses it (dwfl would inflate it as it
 * loads the DWARF, in the same call that finds it).
 */
static bool debug_fd_fits(struct dwmod *d, int fd)
{
	if (zelf__fd_dwarf_fits(fd))
		return true;
	bound__cut(BOUND_ZDWARF, dwmod_name(d));
	return false;
}

/*
 * Our own search (debugfind.h), not dwfl's standard one: that opens what
 * the target's directories hold as root and takes any ELF file there.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct dwmod *d = *userdata;
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
	if (fd < 0)
		return -1;
	if (!debug_fd_fits(d, fd)) {
		/* dwfl opens the name it is given when the descriptor is refused. */
		close(fd);
		free(*debuginfo_file_name);
		*debuginfo_file_name = NULL;
		return -1;
	}
	return fd;
}

/* MiniDebugInfo taken from the main file before dwfl can see it (zelf.c). */
static void take_minidebug(struct dwmod *d, Elf *elf)
{
	size_t len;
	int err = zelf__take_minidebug(elf, &d->mini_img, &len);

	d->mini_len = len;
	d->has_mini = err != -ENOENT;
	if (err == -E2BIG)
		bound__cut(BOUND_MINIDEBUG, dwmod_name(d));
	if (err)
		return;
	d->mini = elf_memory(d->mini_img, len);
	if (!d->mini || elf_kind(d->mini) != ELF_K_ELF) {
		gt_dbg("syms: %s: .gnu_debugdata holds no ELF image", dwmod_name(d));
		if (d->mini)
			elf_end(d->mini);
		d->mini = NULL;
	}
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
	/* The DWARF is read at the stop: what it must be measured on is fixed first. */
	if (!zelf__pin(elf) || !zelf__dwarf_fits(elf)) {
		d->dwarf_refused = true;
		bound__cut(BOUND_ZDWARF, name);
	}
	take_minidebug(d, elf);
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
	if (d->mini)
		elf_end(d->mini);
	free(d->mini_img);
	symtab__free(&d->tab);
	free(d->name);
	free(d->path);
	free(d);
}

size_t dwmod__bytes(const struct dwmod *d)
{
	return d ? sizeof(*d) + d->tab.cap * sizeof(*d->tab.syms) + d->tab.strs_cap + d->mini_len
		 : 0;
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

/* The first PT_LOAD's address: MiniDebugInfo and its file may be linked apart (prelink). */
static bool first_load_vaddr(Elf *elf, uint64_t *vaddr)
{
	size_t nph;

	if (elf_getphdrnum(elf, &nph))
		return false;
	for (size_t i = 0; i < GT_MIN(nph, (size_t)MAX_PHDRS); i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			*vaddr = ph.p_vaddr;
			return true;
		}
	}
	return false;
}

struct index_ctx {
	struct dwmod *d;
	struct u64map *sec_end; /* sizeless symbol's address -> its section's end */
	Elf *elf;
	uint64_t shift; /* added to the image's addresses */
};

/* Notes where a sizeless symbol's section ends; symtab__add's error ends the walk. */
static int index_add(struct index_ctx *x, const GElf_Sym *sym, uint64_t addr, const char *name,
		     size_t len, Elf *elf, GElf_Word shndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (symtab__add(&x->d->tab, addr, sym->st_size, name, len, sym_rank(sym), 0))
		return 1;
	if (!sym->st_size && (scn = elf_getscn(elf, shndx)) && gelf_getshdr(scn, &sh))
		u64map_put(x->sec_end, addr, sh.sh_addr + sh.sh_size + x->shift);
	return 0;
}

static int index_mini_sym(const GElf_Sym *s, const char *name, size_t len, void *ctx)
{
	struct index_ctx *x = ctx;

	if (*name == '@')
		return 0;
	return index_add(x, s, s->st_value + x->shift, name, len, x->elf, s->st_shndx);
}

/*
 * MiniDebugInfo's functions, when dwfl found no .symtab (it gave .dynsym
 * alone, every symbol from the main file), as dwfl would have added them.
 */
static void index_mini(struct dwmod *d, struct index_ctx *x, bool dynsym_only)
{
	uint64_t main_va, mini_va;
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(d->mod, &bias);

	if (!d->mini || !dynsym_only || !elf || elf_has_section(elf, SHT_SYMTAB, NULL) ||
	    !first_load_vaddr(elf, &main_va) || !first_load_vaddr(d->mini, &mini_va))
		return;
	x->elf = d->mini;
	x->shift = main_va - mini_va + d->bias;
	elf__for_each_func(d->mini, d->mini_len, index_mini_sym, x);
}

/*
 * One pass over the symbol table dwfl chose (and MiniDebugInfo's, when
 * that is .dynsym alone): its function symbols, ranked by binding so that
 * symtab__finish keeps the best alias per address (a debug file's local
 * __GI_ names lose to the exported ones the .dynsym knows), as the
 * report's rules expect.  A symbol without a size (hand-
 * written assembly) then reaches the next symbol or its section's end,
 * whichever comes first, as dwfl takes it, not symtab's fixed span.
 */
static void index_syms(struct dwmod *d)
{
	int n = dwfl_module_getsymtab(d->mod);
	struct u64map sec_end = {};
	struct index_ctx x = {.d = d, .sec_end = &sec_end, .shift = d->bias};
	GElf_Addr main_bias;
	Elf *main_elf = dwfl_module_getelf(d->mod, &main_bias);
	bool dynsym_only = true, full = false;
	uint64_t end;

	d->tab_done = true;
	for (int i = 1; i < n; i++) {
		GElf_Addr addr, bias;
		GElf_Word shndx;
		GElf_Sym sym;
		const char *name;
		Elf *elf;

		name = dwfl_module_getsym_info(d->mod, i, &sym, &addr, &shndx, &elf, &bias);
		if (!name || !*name || *name == '@' || sym.st_shndx == SHN_UNDEF ||
		    !sym_is_func(&sym, elf, shndx))
			continue;
		dynsym_only &= elf == main_elf;
		if (index_add(&x, &sym, addr, name, strcspn(name, "@"), elf, shndx)) {
			full = true;
			break;
		}
	}
	if (!full)
		index_mini(d, &x, dynsym_only);
	if (d->tab.names_cut)
		bound__cut(BOUND_NAMES, dwmod_name(d));
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

/*
 * The DIEs containing addr from cu down, walked with dwarf_child and
 * dwarf_siblingof in a loop: libdw's dwarf_getscopes recurses once per
 * nesting level (300,000 nested lexical blocks overflowed the stack), and
 * also reports only the innermost inlined call.  The inlined calls met
 * since the last function entered are kept, the innermost DWMOD_MAX_INLINE.
 * Returns how many are in ring (ring[(first + i) % DWMOD_MAX_INLINE]), -1
 * when a bound cut the walk.
 */
static int scope_chain(Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die *ring, int *first)
{
	unsigned int depth = 0, dies = 0;
	Dwarf_Die cur = *cu, child;
	int n = 0;

	*first = 0;
	while (dwarf_child(&cur, &child) == 0) {
		bool found = false;

		do {
			int tag = dwarf_tag(&child);

			if (++dies > BOUND_SCOPE_DIES)
				return -1;
			/* What dwarf_getscopes descends into (no namespaces: they hold no code ranges). */
			if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
			     tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
			     tag == DW_TAG_catch_block || tag == DW_TAG_with_stmt ||
			     tag == DW_TAG_entry_point || tag == DW_TAG_module) &&
			    dwarf_haspc(&child, addr) > 0) {
				found = true;
				break;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
		if (++depth > BOUND_SCOPE_DEPTH)
			return -1;
		if (dwarf_tag(&child) == DW_TAG_subprogram) {
			n = 0;
			*first = 0;
		} else if (dwarf_tag(&child) == DW_TAG_inlined_subroutine) {
			ring[(*first + n) % DWMOD_MAX_INLINE] = child;
			if (n < DWMOD_MAX_INLINE)
				n++;
			else
				*first = (*first + 1) % DWMOD_MAX_INLINE;
		}
		cur = child;
	}
	return n;
}

int dwmod__inlines(struct dwmod *d, uint64_t vaddr, const char **names, int max)
{
	GElf_Addr addr = vaddr + d->bias, bias = 0;
	Dwarf_Die ring[DWMOD_MAX_INLINE];
	Dwarf_Die *cu;
	int n, first, out = 0;

	if (d->dwarf_refused)
		return 0;
	cu = dwfl_module_addrdie(d->mod, addr, &bias);
	if (!cu)
		return 0;
	n = scope_chain(cu, addr - bias, ring, &first);
	if (n < 0) {
		bound__cut(BOUND_SCOPES, dwmod_name(d));
		return 0;
	}
	/* Innermost first. */
	for (int i = n - 1; i >= 0 && out < max; i--) {
		const char *name = inline_name(&ring[(first + i) % DWMOD_MAX_INLINE]);

		if (name && *name)
			names[out++] = name;
	}
	return out;
}

bool dwmod__has_dwarf(struct dwmod *d)
{
	GElf_Addr bias;

	return !d->dwarf_refused && dwfl_module_getdwarf(d->mod, &bias) != NULL;
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
	/* .gnu_debugdata is hidden from the ELF handle: d->has_mini tells it was there. */
	return elf_has_section(elf, SHT_SYMTAB, NULL) || d->has_mini;
}

const char *dwmod__debug_file(struct dwmod *d)
{
	const char *debugfile = NULL;

	dwfl_module_info(d->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	return debugfile;
}
