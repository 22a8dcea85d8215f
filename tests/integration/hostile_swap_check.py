#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""hostile_swap_check: a traced program swaps the file behind the name of
an object it maps between the recorder's check of it and libbpf's attach
(issue #24, the by-path race).  The kernel looks a uprobe's path up when
the link is made and probes that inode: a name resolved again there lets
the target point the probes at another file (here a copy, whose inode
never runs) or at a FIFO.

The swap is made deterministic by a shim preloaded into gaptrace: just
before the first multi-uprobe link on the library (the bpf() call whose
path, or the file a /proc/self/fd path names, is it), it renames a fresh
copy over the library's name.  The target dlopens the library and fires
its gaptrace:unit_begin probe (ids 7000 + k) every 20 ms; the capture must
hold them: probes on the copy would see none.

Usage: hostile_swap_check.py GAPTRACE CUPTI_DIR WORKDIR
Prints one PASS/FAIL line; exits 1 on failure.
"""
import os
import re
import shutil
import subprocess
import sys

LIB_C = r"""
#include <stdint.h>
#include "gaptrace-usdt.h"
void swap_fire(uint64_t k)
{
	GAPTRACE_UNIT_BEGIN(7000 + k);
}
"""

TARGET_C = r"""
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	void (*fire)(uint64_t);

	if (!h)
		return 1;
	fire = (void (*)(uint64_t))dlsym(h, "swap_fire");
	/* Let the recorder attach before the first firing counts. */
	usleep(500000);
	for (uint64_t k = 0; k < (uint64_t)atoi(argv[2]); k++) {
		fire(k % 1000);
		usleep(20000);
	}
	return 0;
}
"""

# Preloaded into gaptrace: the swap, once, right before the kernel resolves the path.
SHIM_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <linux/bpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int swapped;

static int names_lib(const char *path, const char *lib)
{
	char real[PATH_MAX];
	ssize_t n;

	if (!strncmp(path, "/proc/self/fd/", 14)) {
		n = readlink(path, real, sizeof(real) - 1);
		if (n < 0)
			return 0;
		real[n] = 0;
		path = real;
	}
	n = (ssize_t)strlen(path) - (ssize_t)strlen(lib);
	return n >= 0 && !strcmp(path + n, lib);
}

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	va_list ap;
	long a[6];

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (nr == SYS_bpf && a[0] == BPF_LINK_CREATE && !swapped) {
		union bpf_attr *attr = (union bpf_attr *)a[1];
		const char *lib = getenv("SWAP_LIB"), *copy = getenv("SWAP_COPY");

		if (attr->link_create.attach_type == BPF_TRACE_UPROBE_MULTI && lib && copy &&
		    names_lib((const char *)(unsigned long)attr->link_create.uprobe_multi.path,
			      lib)) {
			swapped = 1;
			if (rename(copy, lib))
				perror("swap shim: rename");
			else
				fprintf(stderr, "swap shim: %s swapped\n", lib);
		}
	}
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
"""


def build(work, cupti):
    paths = {}
    for name, src, flags in (("libswap.so", LIB_C, ["-shared", "-fPIC", "-I", cupti]),
                             ("swap_target", TARGET_C, ["-ldl"]),
                             ("swap_shim.so", SHIM_C, ["-shared", "-fPIC", "-ldl"])):
        c = os.path.join(work, name + ".c")
        out = os.path.join(work, name)
        with open(c, "w") as f:
            f.write(src)
        subprocess.run(["gcc", "-O1", "-g", c, "-o", out] + flags, check=True)
        paths[name] = out
    return paths


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    gt, cupti, work = sys.argv[1], sys.argv[2], os.path.join(sys.argv[3], "hostile-swap")
    os.makedirs(work, exist_ok=True)
    p = build(work, cupti)
    lib, copy = p["libswap.so"], os.path.join(work, "libswap.copy")
    # The copy: the same bytes under another inode, ready to be renamed over lib.
    shutil.copyfile(lib, copy)
    cap = os.path.join(work, "swap.gtcap")
    env = dict(os.environ, LD_PRELOAD=p["swap_shim.so"], SWAP_LIB=lib, SWAP_COPY=copy)
    r = subprocess.run(["timeout", "120", gt, "record", "--no-progress", "-o", cap, "--",
                        p["swap_target"], lib, "100"], env=env, capture_output=True, text=True)
    swapped = "swap shim:" in r.stderr and "swapped" in r.stderr
    dump = subprocess.run(["timeout", "60", gt, "dump", cap], capture_output=True,
                          text=True).stdout if r.returncode == 0 else ""
    ids = set(int(m) for m in re.findall(r" unit +tid \d+ begin (\d+)", dump))
    fired = len(ids & set(range(7000, 7100)))
    why = []
    if r.returncode != 0:
        why.append("rc %d: %s" % (r.returncode, r.stderr.strip().splitlines()[-1:]))
    if not swapped:
        why.append("the shim made no swap (no multi-uprobe link on the library?)")
    if fired < 50:
        why.append("%d of 100 unit_begin firings recorded" % fired)
    if why:
        print("FAIL swap: %s" % "; ".join(why))
        return 1
    print("PASS swap: the library's name swapped before the link; %d of 100 firings "
          "recorded from the mapped inode" % fired)
    return 0


if __name__ == "__main__":
    sys.exit(main())
