#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cfi_dlopen_check.py: the CFI walk through code mapped after exec (#26).
tests/workloads/cfi_dlopen dlopen()s a library built without frame pointers
once it runs, and a new thread blocks inside it, three calls deep
(dl_leaf <- dl_mid <- dl_enter <- worker_main) or 120 frames of dl_deep deep,
while another thread sleeps in anonymous code (misses for the symbolizer).
With default options, launch and attach mode, the worker's intervals must
carry the whole named chain up to its thread's root: the walk knew the new
object's ranges and table, the symbolizer named its frames, and no stack was
cut at the depth cap.  And a big object's table (libLLVM, ~1 s to compile
here) is compiled off the run loop: the longest rescan stays under half the
compile time.  Prints one PASS/FAIL line per check.

Usage: cfi_dlopen_check.py OUTPUT_DIR
"""
import glob
import os
import re
import subprocess
import sys
import time

CHAIN = ["dl_leaf", "dl_mid", "dl_enter", "worker_main"]
ROOTS = {"start_thread", "clone", "clone3", "__clone", "__clone3"}


def worker_stacks(gt, cap, tid):
    """The worker's off-CPU intervals' user stacks (lists of names)."""
    dump = subprocess.check_output([gt, "dump", "-s", "-t", tid, cap], text=True)
    out = []
    for line in dump.splitlines():
        f = line.split()
        if len(f) < 3 or f[1] != "offcpu":
            continue
        for tok in f:
            if tok.startswith("ustack_frames="):
                out.append(tok.split("=", 1)[1].split(";"))
    return out


def whole(frames, depth):
    """Leaf to root through the library: the chain, or depth dl_deep frames."""
    if not frames or frames[-1] not in ROOTS or "worker_main" not in frames:
        return False
    if depth:
        # dl_deep(1) tail-calls dl_leaf: depth - 1 frames of it remain.
        return frames.count("dl_deep") == depth - 1 and "dl_leaf" in frames
    i = frames.index("dl_leaf") if "dl_leaf" in frames else -1
    return i >= 0 and frames[i:i + 4] == CHAIN


def judge(name, gt, cap, tid, depth, log):
    st = worker_stacks(gt, cap, tid)
    # The worker's own start (printf, its first calls) is no block in the library.
    inlib = [s for s in st if any(f.startswith("dl_") or f == "?" for f in s) or
             (s and s[0] == "clock_nanosleep")]
    good = sum(whole(s, depth) for s in inlib)
    if inlib and good >= 0.95 * len(inlib):
        print("PASS cfi dlopen %s: %d of %d intervals in the dlopen'ed library whole to the root"
              % (name, good, len(inlib)))
        return 0
    bad = {}
    for s in inlib:
        if not whole(s, depth):
            k = ";".join(s[:6]) + (";...;" + ";".join(s[-2:]) if len(s) > 6 else "")
            bad[k] = bad.get(k, 0) + 1
    worst = sorted(bad.items(), key=lambda kv: -kv[1])[:2]
    cfi = next((l for l in open(log).read().splitlines() if "cfi:" in l and "walked" in l), "")
    print("FAIL cfi dlopen %s: %d of %d intervals whole; e.g. %s; %s"
          % (name, good, len(inlib), worst, cfi.split("cfi: ", 1)[-1][:140]))
    return 1


def launch(gt, prog, lib, work, name, iters, depth):
    cap, log = os.path.join(work, name + ".gtcap"), os.path.join(work, name + ".log")
    with open(log, "w") as err:
        out = subprocess.run([gt, "record", "--no-progress", "-o", cap, "--", prog, lib,
                              str(iters), str(depth), "300"], stdout=subprocess.PIPE,
                             stderr=err, text=True, timeout=120)
    if out.returncode:
        raise RuntimeError("%s: record failed: %s" % (name, open(log).read().strip()[-200:]))
    return cap, out.stdout.split()[1], log


def attach(gt, prog, lib, work, name, iters):
    cap, log = os.path.join(work, name + ".gtcap"), os.path.join(work, name + ".log")
    tgt = subprocess.Popen([prog, lib, str(iters), "0", "-1"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)
    try:
        with open(log, "w") as err:
            rec = subprocess.Popen([gt, "record", "--no-progress", "-p", str(tgt.pid), "-o", cap],
                                   stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + 60
        while "recording pid" not in open(log).read():
            if time.monotonic() > deadline or rec.poll() is not None:
                raise RuntimeError("%s: the recorder did not attach: %s"
                                   % (name, open(log).read().strip()[-200:]))
            time.sleep(0.05)
        # Attached: now the library is mapped.
        tgt.stdin.write("x")
        tgt.stdin.flush()
        tid = tgt.stdout.readline().split()[1]
        tgt.wait(timeout=60)
        if rec.wait(timeout=60):
            raise RuntimeError("%s: record failed: %s" % (name, open(log).read().strip()[-200:]))
    finally:
        if tgt.poll() is None:
            tgt.kill()
    return cap, tid, log


def stall(gt, work):
    """A process dlopens libLLVM: the run loop's longest rescan against the compile time."""
    big = sorted(glob.glob("/usr/lib/x86_64-linux-gnu/libLLVM*.so.1") +
                 glob.glob("/usr/lib/llvm-*/lib/libLLVM*.so*"), key=os.path.getsize)
    if not big:
        print("FAIL cfi dlopen stall: no libLLVM to load (install llvm, as tools/install-deps does)")
        return 1
    log = os.path.join(work, "stall.log")
    code = ("import ctypes, time; time.sleep(0.3); ctypes.CDLL(%r); time.sleep(1.5)" % big[-1])
    with open(log, "w") as err:
        rc = subprocess.run([gt, "record", "--no-progress", "-o", os.path.join(work, "stall.gtcap"),
                             "--", sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                            stderr=err, timeout=120).returncode
    text = open(log).read()
    m = re.search(r"built in (\d+) ms \(longest rescan (\d+) ms\)", text)
    if rc or not m:
        print("FAIL cfi dlopen stall: no 'built in ... (longest rescan ...)' line: %s"
              % text.strip()[-200:])
        return 1
    build, longest = int(m.group(1)), int(m.group(2))
    if longest * 2 < build:
        print("PASS cfi dlopen stall: %s compiled off the run loop: tables %d ms, longest "
              "rescan %d ms" % (os.path.basename(big[-1]), build, longest))
        return 0
    print("FAIL cfi dlopen stall: longest rescan %d ms of %d ms of compiling" % (longest, build))
    return 1


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else ".output"
    gt = os.path.join(out, "gaptrace")
    prog = os.path.join(out, "workloads", "cfi_dlopen")
    lib = os.path.abspath(os.path.join(out, "workloads", "libcfi_dl_lib.so"))
    work = os.path.join(out, "integration", "cfi_dlopen")
    os.makedirs(work, exist_ok=True)
    fails = 0
    try:
        fails += judge("launch", gt, *launch(gt, prog, lib, work, "launch", 600, 0)[:2], 0,
                       os.path.join(work, "launch.log"))
        fails += judge("attach", gt, *attach(gt, prog, lib, work, "attach", 600)[:2], 0,
                       os.path.join(work, "attach.log"))
        # 120 frames of the library, ~125 in all: past the old 64-frame cap.
        fails += judge("120 frames deep", gt, *launch(gt, prog, lib, work, "deep", 300, 120)[:2],
                       120, os.path.join(work, "deep.log"))
        fails += stall(gt, work)
    except (RuntimeError, subprocess.SubprocessError, IndexError, OSError) as e:
        print("FAIL cfi dlopen: %s" % e)
        return 1
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
