// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * doctor_gpu.c: `gaptrace doctor`'s GPU side: the CUPTI library gaptrace
 * would inject and the libcupti it needs, libcuda, and whether ptrace (Yama)
 * allows the injection into a running process.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/doctor_priv.h"
#include "record/gpu.h"
#include "support/util.h"

/* The toolkit's usual homes of libcupti, where no rpath or ld.so.conf names them. */
static const char *const cupti_dirs[] = {
    "/usr/local/cuda/lib64",
    "/usr/local/cuda/extras/CUPTI/lib64",
    "/usr/local/cuda/lib",
};

/*
 * The libcupti soname path needs (DT_NEEDED) and its RUNPATH/RPATH: read
 * from the file, not by loading it (its constructor starts CUPTI).
 */
static int cupti_needs(const char *path, char *soname, size_t slen, char *runpath, size_t rlen)
{
	Elf_Scn *scn = NULL;
	int fd, ret = -1;
	Elf *elf;

	soname[0] = runpath[0] = '\0';
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(d, (int)i, &dyn))
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RUNPATH &&
			    dyn.d_tag != DT_RPATH)
				continue;
			s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_NEEDED && !strncmp(s, "libcupti.so", 11))
				snprintf(soname, slen, "%s", s);
			else if (dyn.d_tag != DT_NEEDED)
				snprintf(runpath, rlen, "%s", s);
		}
		ret = 0;
	}
	elf_end(elf);
	close(fd);
	return ret;
}

/* Where the loader finds name: a directory of dirs (':'-separated), else its own search. */
static bool find_lib(const char *name, const char *dirs, char *out, size_t len)
{
	char buf[4096], *save = NULL;
	struct link_map *lm = NULL;
	void *h;

	snprintf(buf, sizeof(buf), "%s", dirs ? dirs : "");
	for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/%s", d, name);
		if (!access(out, R_OK))
			return true;
	}
	/* libcupti and libcuda have no constructors that touch the GPU. */
	h = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return false;
	if (!dlinfo(h, RTLD_DI_LINKMAP, &lm) && lm && lm->l_name)
		snprintf(out, len, "%s", lm->l_name);
	else
		snprintf(out, len, "%s", name);
	dlclose(h);
	return true;
}

static void check_cupti(void)
{
	const char *lib = gpu_find_cupti_lib(NULL);
	char soname[256], runpath[2048], dirs[4096], found[PATH_MAX + 300];
	char detail[2 * PATH_MAX + 1024];

	if (!lib) {
		doctor__check(DOCTOR_WARN, "CUPTI library",
			      "libgaptrace-cupti.so not found ($GAPTRACE_CUPTI_LIB, next to "
			      "gaptrace, ../lib/gaptrace, /usr/local/lib/gaptrace): GPU activity "
			      "comes from libcuda uprobes, a host-side view",
			      "build it with a CUDA toolkit installed ('make', CUDA_HOME) and "
			      "'make install', or pass --cupti-lib PATH");
		snprintf(soname, sizeof(soname), "libcupti.so");
		runpath[0] = '\0';
	} else {
		snprintf(detail, sizeof(detail), "%s", lib);
		doctor__check(DOCTOR_OK, "CUPTI library", detail, NULL);
		if (cupti_needs(lib, soname, sizeof(soname), runpath, sizeof(runpath)) ||
		    !soname[0])
			snprintf(soname, sizeof(soname), "libcupti.so");
	}
	snprintf(dirs, sizeof(dirs), "%s%s%s:%s:%s", runpath, runpath[0] ? ":" : "", cupti_dirs[0],
		 cupti_dirs[1], cupti_dirs[2]);
	if (find_lib(soname, dirs, found, sizeof(found))) {
		snprintf(detail, sizeof(detail), "%s: %s", soname, found);
		doctor__check(DOCTOR_OK, "libcupti", detail, NULL);
	} else {
		snprintf(detail, sizeof(detail),
			 "%s not found (the CUPTI library's rpath, the loader's path, %s, %s): "
			 "launched CUDA programs fall back to libcuda uprobes",
			 soname, cupti_dirs[0], cupti_dirs[1]);
		doctor__check(DOCTOR_WARN, "libcupti", detail,
			      "install the CUDA toolkit's CUPTI (cuda-cupti-XX package) or add its "
			      "lib64 directory to /etc/ld.so.conf.d and run ldconfig");
	}
}

static void check_cuda(void)
{
	char found[PATH_MAX + 64], detail[2 * PATH_MAX];

	if (find_lib("libcuda.so.1", NULL, found, sizeof(found))) {
		snprintf(detail, sizeof(detail), "libcuda.so.1: %s", found);
		doctor__check(DOCTOR_OK, "libcuda", detail, NULL);
	} else {
		doctor__check(DOCTOR_WARN, "libcuda",
			      "libcuda.so.1 not found: no NVIDIA driver here, so no CUDA program "
			      "can run (recording CPU-only programs works)",
			      "install the NVIDIA driver (libcuda1 / nvidia-driver packages)");
	}
}

/*
 * Live injection (record -p into a CUDA program) attaches with ptrace:
 * Yama's ptrace_scope 3 forbids it to everyone until a reboot; 1 and 2 let
 * root (CAP_SYS_PTRACE) through.
 */
static void check_ptrace(void)
{
	char buf[32], detail[256];
	long scope = -1;

	if (gt_read_file("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf)) > 0)
		scope = strtol(buf, NULL, 10);
	if (scope == 3) {
		doctor__check(DOCTOR_WARN, "ptrace (live inject)",
			      "Yama ptrace_scope is 3: no process may be ptraced, so record -p "
			      "cannot load the CUPTI library into a running program (it falls "
			      "back to libcuda uprobes)",
			      "boot with kernel.yama.ptrace_scope=1 (3 cannot be lowered until a "
			      "reboot), or start the program under 'gaptrace record --'");
		return;
	}
	if (scope < 0)
		snprintf(detail, sizeof(detail), "no Yama restriction (no ptrace_scope)");
	else
		snprintf(detail, sizeof(detail), "Yama ptrace_scope %ld: root may ptrace", scope);
	if (geteuid() != 0 && scope >= 1) {
		doctor__check(DOCTOR_WARN, "ptrace (live inject)", detail,
			      "run as root (CAP_SYS_PTRACE) for record -p to inject");
		return;
	}
	doctor__check(DOCTOR_OK, "ptrace (live inject)", detail, NULL);
}

void doctor__check_gpu(void)
{
	check_cupti();
	check_cuda();
	check_ptrace();
}
