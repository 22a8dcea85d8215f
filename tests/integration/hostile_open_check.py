#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""hostile_open_check.py: a target running as `nobody` points the root
recorder at files it must not open as root (issue 24, rows 1-5).  Each case
starts a small program (built here with gcc) that maps an object from a
directory `nobody` owns, then records it with `gaptrace record -p PID -d 2s`
under a hard timeout, and checks that the recording ends within 5 s of -d,
that the capture is complete (`gaptrace info`: END block) and, where the
case is about disclosure, that no symbol of the root-only file reached the
capture while the object's own .dynsym name did (a control: the frames were
symbolized at all).  Prints one PASS or FAIL line per case.

fifo:     a stripped object (no build id) with a FIFO named <object>.debug
zero:     a .gnu_debuglink whose file is a symlink to /dev/zero
secret:   <object>.debug is a symlink to a root-only ELF (0600 in a 0700
          directory) naming the object's function gt_secret_symbol_4242 (for
          one object without a build id, for another with the same build id
          as the root-only file, so only the target's rights keep it out); a
          second object's .gnu_debuglink is ../../../../etc/shadow; the
          recorder runs under strace: no open of either may return an fd
tied:     a control: debug files the target may read, tied by build id and by
          .gnu_debuglink CRC, beside the objects: their names must be used
deleted:  the program deletes its executable and its library and makes FIFOs
          named "<path> (deleted)"
newline:  the library's name holds a newline (maps shows \\012); a FIFO is
          named with the literal text
CASE+dwarf: the same with --stacks dwarf --dwarf-samples (the unwinder opens
          the objects too): a CFI-unwound stack must reach gt_hold_work;main

Usage: hostile_open_check.py GAPTRACE WORK_DIR [fifo|zero|secret|tied|deleted|newline[+dwarf] ...]
"""
import os
import pwd
import shutil
import struct
import subprocess
import sys
import threading
import time
import zlib

DURATION = 2.0  # -d of every recording, seconds
SLACK = 5.0  # the recording must end within this long after -d
HARD = 25  # seconds before `timeout` stops a hung recorder (then SIGKILL 5 s later)
SECRET = "gt_secret_symbol_4242"
TIED_ID, TIED_CRC = "gt_tied_by_build_id", "gt_tied_by_crc"
WORK_FN = "gt_hold_work"

HOLD_C = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* hold [--gone PATH]... LIB...: maps each LIB, then calls its work function forever. */
int main(int argc, char **argv)
{
	void (*fns[8])(void);
	char fifo[4200];
	int n = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--gone") || !strcmp(argv[i], "--self"))
			continue;
		if (i > 1 && !strcmp(argv[i - 1], "--gone"))
			continue;
		void *h = dlopen(argv[i], RTLD_NOW);
		if (!h || !(fns[n] = (void (*)(void))dlsym(h, "gt_hold_work"))) {
			fprintf(stderr, "hold: %s: %s\n", argv[i], dlerror());
			return 1;
		}
		n++;
	}
	for (int i = 1; i < argc; i++) {
		const char *gone = NULL;

		if (!strcmp(argv[i], "--gone") && i + 1 < argc)
			gone = argv[i + 1];
		else if (!strcmp(argv[i], "--self"))
			gone = argv[0];
		if (!gone)
			continue;
		snprintf(fifo, sizeof(fifo), "%s (deleted)", gone);
		if (unlink(gone) || mkfifo(fifo, 0644)) {
			perror(gone);
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		for (int i = 0; i < n; i++)
			fns[i]();
		usleep(2000);
	}
}
"""

LIB_C = r"""
#include <time.h>

volatile unsigned long gt_hold_sink;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Busy for 5 ms: the recorder's CPU samples land here and name this object. */
__attribute__((noinline)) void gt_hold_work(void)
{
	unsigned long long t0 = now_ns();

	while (now_ns() - t0 < 5000000ULL)
		gt_hold_sink++;
}
"""


def sh(*cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def debuglink_section(name, crc):
    """A .gnu_debuglink body: the name, NUL, padding to 4, the CRC (little-endian)."""
    body = name.encode() + b"\0"
    body += b"\0" * (-len(body) % 4)
    return body + struct.pack("<I", crc)


class Setup:
    """Builds the programs once: root-owned base, a `nobody` folder, a root-only folder."""

    def __init__(self, work):
        self.base = os.path.join(os.path.abspath(work), "hostile-open")
        shutil.rmtree(self.base, ignore_errors=True)
        os.makedirs(self.base)
        os.chmod(self.base, 0o755)
        nob = pwd.getpwnam("nobody")
        self.uid, self.gid = nob.pw_uid, nob.pw_gid
        self.build = os.path.join(self.base, "build")
        os.makedirs(self.build)
        with open(os.path.join(self.build, "hold.c"), "w") as f:
            f.write(HOLD_C)
        with open(os.path.join(self.build, "lib.c"), "w") as f:
            f.write(LIB_C)
        self.hold = os.path.join(self.build, "hold")
        sh("gcc", "-O1", "-fno-omit-frame-pointer", "-o", self.hold,
           os.path.join(self.build, "hold.c"), "-ldl")
        # No build id: only a CRC could tie a debug file to it.
        self.lib = os.path.join(self.build, "lib.so")
        sh("gcc", "-O1", "-fno-omit-frame-pointer", "-fPIC", "-shared", "-Wl,--build-id=none",
           "-o", self.lib, os.path.join(self.build, "lib.c"))
        self.stripped = os.path.join(self.build, "lib-stripped.so")
        sh("strip", "--strip-all", "-o", self.stripped, self.lib)
        # The root-only "debug file": the object itself, its function renamed.
        self.secret_dir = os.path.join(self.base, "rootonly")
        os.makedirs(self.secret_dir)
        os.chmod(self.secret_dir, 0o700)
        self.secret = os.path.join(self.secret_dir, "real.debug")
        sh("objcopy", f"--redefine-sym={WORK_FN}={SECRET}", self.lib, self.secret)
        os.chmod(self.secret, 0o600)
        # The same with a build id, which the root-only copy shares: only the
        # target's rights keep it out.
        lib_bid = os.path.join(self.build, "lib-bid.so")
        sh("gcc", "-O1", "-fno-omit-frame-pointer", "-fPIC", "-shared", "-Wl,--build-id=sha1",
           "-o", lib_bid, os.path.join(self.build, "lib.c"))
        self.stripped_bid = os.path.join(self.build, "lib-bid-stripped.so")
        sh("strip", "--strip-all", "-o", self.stripped_bid, lib_bid)
        self.lib_bid = lib_bid
        self.secret_bid = os.path.join(self.secret_dir, "real-bid.debug")
        sh("objcopy", f"--redefine-sym={WORK_FN}={SECRET}", lib_bid, self.secret_bid)
        os.chmod(self.secret_bid, 0o600)

    def folder(self, case):
        d = os.path.join(self.base, case)
        os.makedirs(d)
        os.chown(d, self.uid, self.gid)
        os.chmod(d, 0o755)
        return d

    def give(self, path):
        os.lchown(path, self.uid, self.gid)


def prepare(s, case, folder):
    """Files of one case; returns the target's argv."""
    d = s.folder(folder)
    exe = os.path.join(d, "hold")
    shutil.copy(s.hold, exe)
    s.give(exe)
    argv = [exe]

    def lib(name, src=None):
        p = os.path.join(d, name)
        shutil.copy(src or s.stripped, p)
        s.give(p)
        return p

    if case == "fifo":
        argv.append(lib("libfifo.so"))
        os.mkfifo(os.path.join(d, "libfifo.so.debug"))
    elif case == "zero":
        p = lib("libzero.so")
        dbg = os.path.join(d, "libzero.so.debug")
        with open(dbg, "wb") as f:
            f.write(b"not the debug file")
        sh("objcopy", f"--add-gnu-debuglink={dbg}", p)
        os.unlink(dbg)
        os.symlink("/dev/zero", dbg)
        argv.append(p)
    elif case == "secret":
        argv.append(lib("libsecret.so"))
        os.symlink(s.secret, os.path.join(d, "libsecret.so.debug"))
        argv.append(lib("libsecretid.so", s.stripped_bid))
        os.symlink(s.secret_bid, os.path.join(d, "libsecretid.so.debug"))
        p = lib("libshadow.so")
        blob = os.path.join(s.build, "shadow.link")
        with open(blob, "wb") as f:
            f.write(debuglink_section("../../../../etc/shadow", zlib.crc32(b"")))
        sh("objcopy", f"--add-section=.gnu_debuglink={blob}", p)
        argv.append(p)
    elif case == "tied":
        # Debug files the target may read, tied by build id and by CRC: used.
        argv.append(lib("libtiedid.so", s.stripped_bid))
        sh("objcopy", f"--redefine-sym={WORK_FN}={TIED_ID}", s.lib_bid,
           os.path.join(d, "libtiedid.so.debug"))
        p = lib("libtiedcrc.so")
        dbg = os.path.join(d, "libtiedcrc.debug")
        sh("objcopy", f"--redefine-sym={WORK_FN}={TIED_CRC}", s.lib, dbg)
        sh("objcopy", f"--add-gnu-debuglink={dbg}", p)
        argv.append(p)
    elif case == "deleted":
        p = lib("libdel.so")
        argv = [exe, "--self", "--gone", p, p]
    elif case == "newline":
        argv.append(lib("lib\nnl.so"))
        os.mkfifo(os.path.join(d, "lib\\012nl.so"))
    for name in os.listdir(d):
        s.give(os.path.join(d, name))
    return argv


def root_opens(slog):
    """Names of the root-only debug file and /etc/shadow that an open returned an fd for."""
    found = set()
    with open(slog, errors="replace") as f:
        for ln in f:
            if "= -1" in ln or " = " not in ln:
                continue
            for what in ("etc/shadow", "libsecret.so.debug", "libsecretid.so.debug",
                         "real.debug", "real-bid.debug"):
                if what in ln:
                    found.add(what)
    return found


def run_case(gt, s, name):
    case, _, mode = name.partition("+")
    extra = ["--stacks", "dwarf", "--dwarf-samples"] if mode == "dwarf" else []
    argv = prepare(s, case, name.replace("+", "-"))
    target = subprocess.Popen(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                               "--"] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              cwd="/")
    try:
        line = target.stdout.readline()
        if line != b"ready\n":
            return False, f"target did not start: {target.stderr.read().decode()[:300]}"
        cap = os.path.join(s.base, f"{name}.gtcap")
        log = os.path.join(s.base, f"{name}.log")
        t0 = time.monotonic()
        # secret: every open the recorder makes is traced (strace, when installed).
        slog = os.path.join(s.base, f"{name}.strace") if case == "secret" else None
        trace = (["strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=open,openat,openat2",
                  "-o", slog] if slog and shutil.which("strace") else [])
        rec = subprocess.Popen(["timeout", "-k", "5", str(HARD)] + trace +
                               [gt, "record", "--no-progress",
                                "--gpu", "none", "-p", str(target.pid), "-d",
                                f"{DURATION:g}s", "-o", cap] + extra,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        started = []
        lines = []

        def reader():
            for ln in rec.stderr:
                lines.append(ln.decode(errors="replace"))
                if "gaptrace: recording" in lines[-1] and not started:
                    started.append(time.monotonic())

        th = threading.Thread(target=reader)
        th.start()
        rc = rec.wait()
        end = time.monotonic()
        th.join()
        with open(log, "w") as f:
            f.writelines(lines)
    finally:
        target.kill()
        target.wait()
    total = end - t0
    hung = rc in (124, 137, -9, -15)
    if not started:
        return False, f"recording never started (rc {rc}, stopped by the hard timeout after {total:.1f} s)"
    late = end - started[0] - DURATION
    info = subprocess.run([gt, "info", cap], capture_output=True, text=True)
    complete = info.returncode == 0 and "complete" in info.stdout.split("\n")[0]
    dump = subprocess.run([gt, "dump", cap, "-s"], capture_output=True, text=True).stdout
    problems = []
    if hung:
        problems.append(f"hung: stopped by the hard timeout after {total:.1f} s")
    elif rc != 0:
        problems.append(f"record exited {rc}")
    if late > SLACK:
        problems.append(f"ended {late:.1f} s after -d")
    if not complete:
        problems.append("capture incomplete (no END block)")
    if SECRET in dump:
        problems.append(f"{dump.count(SECRET)} mentions of {SECRET} from the root-only file")
    named = WORK_FN in dump
    if case in ("fifo", "secret") and not named:
        problems.append(f"{WORK_FN} never named: the control failed")
    if slog:
        opened = root_opens(slog) if os.path.exists(slog) else None
        if opened is None:
            problems.append("strace missing or its log: opens not checked (install strace)")
        elif opened:
            problems.append("opened as root: " + ", ".join(sorted(opened)))
    for want in (TIED_ID, TIED_CRC) if case == "tied" else ():
        if want not in dump:
            problems.append(f"{want} (from a debug file the target may read) never named")
    unwound = sum(1 for w in dump.split() if w.startswith("ustack_dwarf=")
                  and f"{WORK_FN};main" in w)
    if mode == "dwarf" and not unwound:
        problems.append(f"no CFI-unwound stack reached {WORK_FN};main")
    msg = (f"ended {late:.1f} s after -d ({total:.1f} s in all), capture "
           f"{'complete' if complete else 'incomplete'}, {dump.count(SECRET)} secret symbols, "
           f"{WORK_FN} {'named' if named else 'not named'}"
           + (f", {unwound} unwound stacks through it" if mode == "dwarf" else "")
           + (f", {TIED_ID} {dump.count(TIED_ID)}x and {TIED_CRC} {dump.count(TIED_CRC)}x"
              if case == "tied" else ""))
    return not problems, msg if not problems else "; ".join(problems) + f" ({msg})"


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    gt, work = os.path.abspath(sys.argv[1]), sys.argv[2]
    cases = sys.argv[3:] or ["fifo", "zero", "secret", "tied", "deleted", "newline",
                             "deleted+dwarf", "newline+dwarf"]
    if os.geteuid() != 0:
        print("SKIP hostile open: needs root")
        return 0
    s = Setup(work)
    failed = 0
    for c in cases:
        ok, msg = run_case(gt, s, c)
        print(f"{'PASS' if ok else 'FAIL'} hostile open {c}: {msg}", flush=True)
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
