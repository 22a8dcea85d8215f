// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwind.c: turns --stacks dwarf snapshots (user registers + the top of the
 * user stack) into frame lists with libdw's CFI unwinder, and audits fp
 * recordings for binaries whose frame-pointer stacks are truncated.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

#include "gaptrace/gaptrace.h"
#include "record/unwind.h"
#include "support/procfs.h"
#include "support/safeopen.h"
#include "support/util.h"
#include "symbols/bounds.h"
#include "symbols/debugfind.h"
#include "symbols/dwmod.h"
#include "symbols/zelf.h"

#define MAX_PROCS      64		     /* processes with a live Dwfl (LRU beyond) */
#define REREPORT_NS    (100 * NSEC_PER_MSEC) /* at most this often per process */
#define FP_MAX_FUNCS   2000
#define FP_MIN_FUNCS   3
#define FP_MIN_PERCENT 30 /* fp builds: ~100% of functions; -fomit-frame-pointer: ~0-5% */

struct unw_proc {
	uint32_t pid;
	Dwfl *dwfl;
	uint64_t reported_ns;
	uint64_t used; /* LRU tick */
	bool renewed;  /* read anew after a failed unwinding at least once */
};

struct unw_stack {
	uint64_t hash;
	uint32_t pid;
	uint16_t nr;
	int32_t id;
	uint64_t *ips;
};

struct unwinder {
	struct unw_proc procs[MAX_PROCS];
	uint64_t tick;
	/* The snapshot being unwound, for the callbacks. */
	uint32_t tid;
	const uint64_t *regs;
	const uint8_t *stack;
	size_t stack_len;
	uint64_t *ips;
	size_t nips, max;
	/* Interned stacks: open addressing on the hash, value = index + 1. */
	struct unw_stack *stacks;
	size_t nstacks, stacks_cap;
	uint32_t *slots;
	size_t nslots;
	int32_t next_id;
	struct unwind_stats st;
};

/*
 * find_elf has no context argument: the pid whose objects are being looked
 * up, set around every libdw call (the recorder is single-threaded).
 */
static uint32_t cur_pid;

/*
 * The objects dwfl_linux_proc_report names (maps texts) through safeopen:
 * the mapping itself (map_files: deleted files, escaped names, other mount
 * namespaces), never the text opened by name as root.  Only what has no
 * path ([vdso]) is left to dwfl, which reads it from the process's memory.
 */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	int fd;

	if (name[0] != '/')
		return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
	if (!cur_pid)
		return -1;
	fd = safeopen_mapped_name((pid_t)cur_pid, name, NULL);
	if (fd < 0)
		return -1;
	*file_name = strdup(name);
	return fd;
}

/*
 * GAPTRACE_DEBUGINFO_PATH=none: no separate debug files, only the CFI the
 * mapped objects carry (.eh_frame), as on a machine without debug packages.
 * Any other value is the search path, as for symbols (debugfind.h: the
 * same search, never dwfl's, which opens the target's files as root).
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const char *env = getenv(DWMOD_PATH_ENV);
	struct debugfind_req r = {};
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len, fd;

	if (env && !strcmp(env, "none"))
		return -1;
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	r.pid = (pid_t)cur_pid;
	r.name = modname;
	r.build_id = len > 0 ? bits : NULL;
	r.build_id_len = len > 0 ? (size_t)len : 0;
	r.link = debuglink_file;
	r.crc = debuglink_crc;
	r.path = env;
	fd = debugfind__open(&r, debuginfo_file_name);
	return fd >= 0 ? fd : -1;
}

/*
 * An object or debug file whose compressed DWARF would inflate past the
 * symbolizer's caps (bounds.h) is refused: libdw inflates it whole when
 * the CFI search reaches .debug_frame.  Unwinding stops at its frames.
 */
static int refuse_big_dwarf(int fd, char **file_name, const char *name)
{
	if (fd < 0 || zelf__fd_dwarf_fits(fd))
		return fd;
	bound__cut(BOUND_ZDWARF, name);
	close(fd);
	/* dwfl opens the name it is given when the descriptor is refused. */
	free(*file_name);
	*file_name = NULL;
	return -1;
}

static int find_elf_bounded(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
			    char **file_name, Elf **elfp)
{
	return refuse_big_dwarf(find_elf(mod, userdata, name, base, file_name, elfp), file_name,
				name);
}

static int find_debuginfo_bounded(Dwfl_Module *mod, void **userdata, const char *modname,
				  Dwarf_Addr base, const char *file_name,
				  const char *debuglink_file, GElf_Word debuglink_crc,
				  char **debuginfo_file_name)
{
	return refuse_big_dwarf(find_debuginfo(mod, userdata, modname, base, file_name,
					       debuglink_file, debuglink_crc, debuginfo_file_name),
				debuginfo_file_name, modname);
}

static char *debuginfo_path;
static const Dwfl_Callbacks proc_callbacks = {
    .find_elf = find_elf_bounded,
    .find_debuginfo = find_debuginfo_bounded,
    .debuginfo_path = &debuginfo_path,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwinder *u = arg;

	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return (pid_t)u->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct unwinder *u = arg;

	if ((uint32_t)tid != u->tid)
		return false;
	*thread_argp = u;
	return true;
}

/* Only the snapshot: the thread's live stack has changed since it was taken. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwinder *u = arg;
	uint64_t sp = u->regs[7];

	if (addr < sp || u->stack_len < sizeof(*result) ||
	    addr - sp > u->stack_len - sizeof(*result))
		return false;
	memcpy(result, u->stack + (addr - sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Word regs[GT_UREGS_NR];

	for (int i = 0; i < GT_UREGS_NR; i++)
		regs[i] = u->regs[i];
	if (!dwfl_thread_state_registers(thread, 0, GT_UREGS_NR, regs))
		return false;
	dwfl_thread_state_register_pc(thread, regs[16]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	/* A return address repeating forever is a loop in bad CFI, not a stack. */
	if (u->nips >= 2 && u->ips[u->nips - 1] == pc && u->ips[u->nips - 2] == pc)
		return DWARF_CB_ABORT;
	u->ips[u->nips++] = pc;
	return u->nips < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static void proc_drop(struct unw_proc *p)
{
	uint32_t pid = cur_pid;

	if (p->dwfl) {
		cur_pid = p->pid;
		dwfl_end(p->dwfl);
		cur_pid = pid;
	}
	memset(p, 0, sizeof(*p));
}

static int proc_report(struct unw_proc *p)
{
	int err;

	dwfl_report_begin(p->dwfl);
	err = dwfl_linux_proc_report(p->dwfl, (pid_t)p->pid);
	dwfl_report_end(p->dwfl, NULL, NULL);
	p->reported_ns = gt_now_mono_ns();
	return err;
}

/* The process's Dwfl, created on first use; NULL if its mappings cannot be read. */
static struct unw_proc *proc_get(struct unwinder *u, uint32_t pid)
{
	struct unw_proc *p = NULL, *lru = &u->procs[0];

	for (int i = 0; i < MAX_PROCS; i++) {
		if (u->procs[i].dwfl && u->procs[i].pid == pid) {
			p = &u->procs[i];
			break;
		}
		if (!u->procs[i].dwfl || u->procs[i].used < lru->used)
			lru = &u->procs[i];
	}
	if (!p) {
		p = lru;
		proc_drop(p);
		p->pid = pid;
		p->dwfl = dwfl_begin(&proc_callbacks);
		if (!p->dwfl)
			return NULL;
		if (proc_report(p) ||
		    !dwfl_attach_state(p->dwfl, NULL, (pid_t)pid, &thread_callbacks, u)) {
			gt_dbg("dwarf unwinding: cannot read pid %u's objects: %s", pid,
			       dwfl_errmsg(-1));
			proc_drop(p);
			return NULL;
		}
	}
	p->used = ++u->tick;
	return p;
}

struct unwinder *unwinder__new(void)
{
	struct unwinder *u = gt_xcalloc(1, sizeof(*u));
	const char *env = getenv(DWMOD_PATH_ENV);

	if (env && *env && strcmp(env, "none") && !debuginfo_path)
		debuginfo_path = gt_xstrdup(env);
	u->next_id = GT_STACK_DWARF_BASE;
	return u;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	for (int i = 0; i < MAX_PROCS; i++)
		proc_drop(&u->procs[i]);
	for (size_t i = 0; i < u->nstacks; i++)
		free(u->stacks[i].ips);
	free(u->stacks);
	free(u->slots);
	free(u);
}

int unwinder__prepare(struct unwinder *u, uint32_t pid)
{
	struct unw_proc *p;

	cur_pid = pid;
	p = proc_get(u, pid);
	cur_pid = 0;
	return p ? 0 : -ESRCH;
}

void unwinder__forget(struct unwinder *u, uint32_t pid)
{
	for (int i = 0; i < MAX_PROCS; i++)
		if (u->procs[i].dwfl && u->procs[i].pid == pid)
			proc_drop(&u->procs[i]);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* One unwinding pass over the snapshot set up in u; the frame count. */
static size_t unwind_once(struct unwinder *u, struct unw_proc *p)
{
	u->nips = 0;
	/* Ends with an error at the outermost frame or the snapshot's end: keep what came. */
	if (dwfl_getthread_frames(p->dwfl, (pid_t)u->tid, frame_cb, u) && u->nips < 2)
		gt_dbg("dwarf unwinding of tid %u stopped after %zu frames at ip %#llx: %s", u->tid,
		       u->nips, (unsigned long long)(u->nips ? u->ips[u->nips - 1] : u->regs[16]),
		       dwfl_errmsg(-1));
	return u->nips;
}

int unwinder__unwind(struct unwinder *u, uint32_t pid, uint32_t tid, const uint64_t *regs,
		     const void *stack, size_t stack_len, uint64_t *ips, size_t max)
{
	uint64_t t0 = thread_cpu_ns();
	struct unw_proc *p;
	char maps[64];
	int ret = 0;

	u->st.snapshots++;
	if (!max || !tid)
		goto out;
	cur_pid = pid;
	p = proc_get(u, pid);
	if (!p) {
		ret = -ESRCH;
		goto out;
	}
	u->tid = tid;
	u->regs = regs;
	u->stack = stack;
	u->stack_len = stack_len;
	u->ips = ips;
	u->max = max;
	ret = (int)unwind_once(u, p);
	/*
	 * Ended in a frame that lies in no known object (not one whose object
	 * has no CFI there, like glibc's clone3): the mappings were read
	 * before it was mapped (dlopen) or while the loader was still placing it
	 * (right after exec: libdwfl then knows it with a short range, and adding
	 * the whole range later fails as an overlap).  Read them anew, from
	 * scratch, while the process is there: at once the first time, then at
	 * most every REREPORT_NS (a bad stack can end anywhere).
	 */
	procfs_path(maps, sizeof(maps), (pid_t)pid, 0, "maps");
	if ((ret == 0 || !dwfl_addrmodule(p->dwfl, ret == 1 ? ips[0] : ips[ret - 1] - 1)) &&
	    (!p->renewed || gt_now_mono_ns() - p->reported_ns >= REREPORT_NS) &&
	    !access(maps, R_OK)) {
		proc_drop(p);
		p = proc_get(u, pid);
		if (p) {
			p->renewed = true;
			ret = (int)unwind_once(u, p);
		}
	}
	u->regs = NULL;
	u->stack = NULL;
	u->ips = NULL;
out:
	cur_pid = 0;
	if (ret <= 0)
		u->st.failed++;
	else if (ret <= 2)
		u->st.shallow++;
	if (ret > 0)
		u->st.frames += (uint64_t)ret;
	u->st.cpu_ns += thread_cpu_ns() - t0;
	return ret;
}

static uint64_t stack_hash(uint32_t pid, const uint64_t *ips, uint16_t nr)
{
	return gt_hash64(ips, (size_t)nr * sizeof(*ips), ((uint64_t)pid << 16) | nr);
}

static void slots_insert(struct unwinder *u, uint64_t hash, uint32_t idx)
{
	size_t i = hash & (u->nslots - 1);

	while (u->slots[i])
		i = (i + 1) & (u->nslots - 1);
	u->slots[i] = idx + 1;
}

int32_t unwinder__intern(struct unwinder *u, uint32_t pid, const uint64_t *ips, uint16_t nr,
			 bool *is_new)
{
	uint64_t hash = stack_hash(pid, ips, nr);
	struct unw_stack *s;
	size_t i;

	*is_new = false;
	if (u->nslots) {
		for (i = hash & (u->nslots - 1); u->slots[i]; i = (i + 1) & (u->nslots - 1)) {
			s = &u->stacks[u->slots[i] - 1];
			if (s->hash == hash && s->pid == pid && s->nr == nr &&
			    !memcmp(s->ips, ips, (size_t)nr * sizeof(*ips)))
				return s->id;
		}
	}
	if (u->next_id == INT32_MAX)
		return -1;
	if ((u->nstacks + 1) * 2 > u->nslots) {
		free(u->slots);
		u->nslots = u->nslots ? u->nslots * 2 : 1024;
		u->slots = gt_xcalloc(u->nslots, sizeof(*u->slots));
		for (i = 0; i < u->nstacks; i++)
			slots_insert(u, u->stacks[i].hash, (uint32_t)i);
	}
	gt_grow((void **)&u->stacks, &u->stacks_cap, u->nstacks, sizeof(*u->stacks));
	s = &u->stacks[u->nstacks];
	s->hash = hash;
	s->pid = pid;
	s->nr = nr;
	s->id = u->next_id++;
	s->ips = gt_xmalloc((size_t)nr * sizeof(*ips) + 1);
	memcpy(s->ips, ips, (size_t)nr * sizeof(*ips));
	slots_insert(u, hash, (uint32_t)u->nstacks++);
	*is_new = true;
	return s->id;
}

void unwinder__stats(const struct unwinder *u, struct unwind_stats *st)
{
	*st = u->st;
}

/* ---- frame-pointer detection ---- */

/*
 * push %rbp, then mov %rsp,%rbp: the scheduler may put other instructions
 * between them, an endbr64 or a shrink-wrapped early exit before.  Code
 * without frame pointers has no reason to copy %rsp into %rbp.
 */
static bool has_fp_prologue(const uint8_t *code, size_t len)
{
	static const uint8_t mov[] = {0x48, 0x89, 0xe5};
	bool pushed = false;

	for (size_t i = 0; i + sizeof(mov) <= len; i++) {
		if (code[i] == 0x55)
			pushed = true;
		else if (pushed && !memcmp(code + i, mov, sizeof(mov)))
			return true;
	}
	return false;
}

static int elf_fp_scan(Elf *elf, unsigned *checked, unsigned *with_fp)
{
	Elf_Scn *scn = NULL, *symscn = NULL;
	GElf_Shdr sh, symsh = {};
	GElf_Ehdr eh;
	Elf_Data *syms;
	size_t nsyms;

	if (!gelf_getehdr(elf, &eh))
		return -EINVAL;
	if (eh.e_machine != EM_X86_64)
		return -ENOTSUP;
	/* The full symbol table if there is one: .dynsym lists only exports. */
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !symscn)) {
			symscn = scn;
			symsh = sh;
		}
	}
	if (!symscn || !symsh.sh_entsize)
		return -ENODATA;
	syms = elf_getdata(symscn, NULL);
	if (!syms)
		return -ENODATA;
	nsyms = symsh.sh_size / symsh.sh_entsize;
	for (size_t i = 0; i < nsyms && *checked < FP_MAX_FUNCS; i++) {
		GElf_Sym sym;
		Elf_Scn *code;
		GElf_Shdr csh;
		Elf_Data *d;
		uint64_t off;

		/* Functions long enough to have a frame worth setting up. */
		if (!gelf_getsym(syms, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_size < 16 || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		code = elf_getscn(elf, sym.st_shndx);
		if (!code || !gelf_getshdr(code, &csh) || csh.sh_type != SHT_PROGBITS ||
		    !(csh.sh_flags & SHF_EXECINSTR) || sym.st_value < csh.sh_addr)
			continue;
		d = elf_getdata(code, NULL);
		off = sym.st_value - csh.sh_addr;
		if (!d || !d->d_buf || off >= d->d_size)
			continue;
		(*checked)++;
		if (has_fp_prologue((const uint8_t *)d->d_buf + off,
				    GT_MIN((size_t)GT_MIN(sym.st_size, 48), d->d_size - off)))
			(*with_fp)++;
	}
	if (*checked < FP_MIN_FUNCS)
		return -ENODATA;
	return *with_fp * 100 >= *checked * FP_MIN_PERCENT;
}

int unwind_elf_frame_pointers_fd(int fd, unsigned *checked, unsigned *with_fp)
{
	unsigned c = 0, f = 0;
	Elf *elf = NULL;
	int ret;

	if (fd < 0)
		return fd;
	elf_version(EV_CURRENT);
	ret = safeopen_check_fd(fd, NULL);
	if (!ret) {
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		ret = elf && elf_kind(elf) == ELF_K_ELF ? elf_fp_scan(elf, &c, &f) : -ENOEXEC;
	}
	elf_end(elf);
	close(fd);
	if (checked)
		*checked = c;
	if (with_fp)
		*with_fp = f;
	return ret;
}

int unwind_elf_frame_pointers(const char *path, unsigned *checked, unsigned *with_fp)
{
	return unwind_elf_frame_pointers_fd(safeopen_trusted(path, NULL), checked, with_fp);
}

struct fp_object {
	char *path;
	bool main;
	int fp; /* unwind_elf_frame_pointers() */
	unsigned checked, with_fp;
};

struct fp_audit {
	struct fp_object *objs;
	size_t nobjs, cap;
	uint64_t stacks, shallow;
};

struct fp_audit *fp_audit__new(void)
{
	return gt_xcalloc(1, sizeof(struct fp_audit));
}

void fp_audit__free(struct fp_audit *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nobjs; i++)
		free(a->objs[i].path);
	free(a->objs);
	free(a);
}

void fp_audit__object(struct fp_audit *a, uint32_t pid, const char *path, bool main)
{
	struct fp_object *o;
	char exe[64];
	int fd;

	if (!path || path[0] != '/')
		return;
	for (size_t i = 0; i < a->nobjs; i++) {
		if (!strcmp(a->objs[i].path, path)) {
			a->objs[i].main |= main;
			return;
		}
	}
	gt_grow((void **)&a->objs, &a->cap, a->nobjs, sizeof(*a->objs));
	o = &a->objs[a->nobjs++];
	memset(o, 0, sizeof(*o));
	o->path = gt_xstrdup(path);
	o->main = main;
	/*
	 * Checked now, while the process (and its mount namespace) is there,
	 * through its mapping (a deleted program's old name may be a FIFO the
	 * target made since); a command not yet exec'd by its name, with its
	 * rights; a running program whose name maps cannot show (a newline in
	 * it) through the kernel's link to its executable.
	 */
	fd = safeopen_mapped_name((pid_t)pid, path, NULL);
	if (fd < 0 && main && procfs_path(exe, sizeof(exe), (pid_t)pid, 0, "exe"))
		fd = safeopen_trusted(exe, NULL);
	o->fp = unwind_elf_frame_pointers_fd(fd, &o->checked, &o->with_fp);
	gt_dbg("frame pointers in %s: %u of %u functions set up %%rbp", gt_clean(path), o->with_fp,
	       o->checked);
}

void fp_audit__stack(struct fp_audit *a, uint16_t nr)
{
	a->stacks++;
	if (nr <= 2)
		a->shallow++;
}

bool unwind_system_object(const char *path)
{
	static const char *const dirs[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"};

	for (size_t i = 0; i < GT_ARRAY_SIZE(dirs); i++)
		if (!strncmp(path, dirs[i], strlen(dirs[i])))
			return true;
	return false;
}

unsigned fp_audit__report(struct fp_audit *a, uint64_t bytes_per_interval)
{
	char size[32], evidence[96] = "", names[256] = "";
	const char *first = NULL;
	unsigned n = 0;
	size_t len = 0;

	if (a->stacks)
		snprintf(evidence, sizeof(evidence), " (%.0f%% of the user stacks have 1-2 frames)",
			 100.0 * (double)a->shallow / (double)a->stacks);
	gt_fmt_bytes(bytes_per_interval, size, sizeof(size));
	for (size_t i = 0; i < a->nobjs; i++) {
		const struct fp_object *o = &a->objs[i];
		const char *base;

		if (o->fp != 0)
			continue;
		if (!o->main && unwind_system_object(o->path)) {
			/* Distribution libraries: usually without, nothing to rebuild. */
			gt_dbg("%s has no frame pointers (%u of %u functions): its callers' "
			       "frames may be missing from fp stacks",
			       o->path, o->with_fp, o->checked);
			continue;
		}
		gt_dbg("%s has no frame pointers (%u of %u functions)", o->path, o->with_fp,
		       o->checked);
		if (!first)
			first = o->path;
		/* The first four by name, then a count: one line however many there are. */
		base = strrchr(o->path, '/');
		base = base ? base + 1 : o->path;
		if (n < 4 && len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
						n ? ", " : "", base);
		n++;
	}
	if (n == 1)
		gt_warn("%s has no frame pointers: stacks are truncated%s; record with --stacks "
			"dwarf (costs ~%s per off-CPU interval >= --dwarf-min) or rebuild with "
			"-fno-omit-frame-pointer",
			first, evidence, size);
	else if (n > 1)
		gt_warn("%u libraries have no frame pointers (%s%s): stacks are truncated%s; "
			"record with --stacks dwarf (costs ~%s per off-CPU interval >= "
			"--dwarf-min) or rebuild them with -fno-omit-frame-pointer (-v lists them)",
			n, names, n > 4 ? ", ..." : "", evidence, size);
	return n;
}
