#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cfi_check.py: user stacks of CPU samples in code without frame pointers
(a stripped libc: run with GAPTRACE_DEBUGINFO_PATH=none), against stacks
whose shape is known.  Prints one PASS or FAIL line per case.

deep: malloc_churn --depth 40 mallocs and frees 41 frames of `descend`
(frame pointers) below main, deeper than the 1 KiB stack snapshot reaches.
Where the sample's %rbp was a frame pointer, the recorder joins the kernel's
fp walk to the snapshot's CFI frames: every such stack (a DWARF stack deeper
than the snapshot) must hold exactly 41 `descend` frames and then `main` (a
join misaligned by a recursion repeats or drops frames), and at least
MIN_JOINED records must be joined.  (Plain fp walks are not judged: one
sampled in a prologue lacks a frame, as every fp walk does.)

syscall: prover_sim --scenario trim spends its gaps in malloc_trim, whose
internals call madvise with %rbp holding no frame pointer.  Those samples
take a snapshot too: at least 80% of the samples in madvise must name
malloc_trim as a caller (the fp walk alone gave `__madvise;?;?`).

Usage: cfi_check.py GAPTRACE OUTPUT_DIR WORK_DIR [deep|syscall ...]
"""
import json
import os
import subprocess
import sys

MIN_JOINED = 20
DEPTH = 40


def record(gt, work, name, cmd):
    cap = os.path.join(work, f"cfi-{name}.gtcap")
    env = dict(os.environ, GAPTRACE_DEBUGINFO_PATH="none")
    with open(os.path.join(work, f"cfi-{name}.log"), "w") as log:
        rc = subprocess.call([gt, "record", "--no-progress", "--stacks", "fp", "--gpu", "none", "-o", cap,
                          "--"]
                             + cmd, stdout=subprocess.DEVNULL, stderr=log, env=env)
    return rc, cap


def samples(gt, cap):
    """(syscall nr, [user frames, leaf first], unwound from a snapshot) of every CPU sample."""
    out = []
    text = subprocess.run([gt, "dump", cap, "-s"], capture_output=True, text=True).stdout
    for line in text.splitlines():
        f = line.split()
        if len(f) < 3 or f[1] != "sample":
            continue
        sys_nr = int(f[f.index("sys") + 1]) if "sys" in f else -1
        frames, cfi = [], False
        for w in f:
            if w.startswith("ustack_frames=") or w.startswith("ustack_dwarf="):
                frames = w.split("=", 1)[1].split(";")
                cfi = w.startswith("ustack_dwarf=")
        out.append((sys_nr, frames, cfi))
    return out


def check_deep(gt, outdir, work):
    rc, cap = record(gt, work, "deep", [os.path.join(outdir, "bench", "malloc_churn"),
                                        "--seconds", "1", "--warmup", "0",
                                        "--depth", str(DEPTH)])
    if rc != 0:
        return False, f"record exited {rc}"
    info = json.loads(subprocess.run([gt, "info", cap, "--format", "json"],
                                     capture_output=True, text=True).stdout)
    joined = (info.get("dwarf") or {}).get("stitched", 0)
    deep, bad = 0, []
    for _, fr, cfi in samples(gt, cap):
        n = fr.count("descend")
        if not cfi or n <= 8:  # a plain fp walk, or within the snapshot's reach
            continue
        deep += 1
        last = len(fr) - 1 - fr[::-1].index("descend")
        if n != DEPTH + 1 or last + 1 >= len(fr) or fr[last + 1] != "main":
            bad.append(f"{n} descend, then {fr[last + 1] if last + 1 < len(fr) else 'nothing'}")
    msg = (f"{joined} samples joined to the fp walk, {deep} stacks deeper than the snapshot, "
           f"{deep - len(bad)} with all {DEPTH + 1} descend frames then main")
    if bad:
        msg += "; wrong: " + "; ".join(bad[:3])
    return joined >= MIN_JOINED and deep >= MIN_JOINED and not bad, msg


def check_syscall(gt, outdir, work):
    rc, cap = record(gt, work, "syscall", [os.path.join(outdir, "workloads", "prover_sim"),
                                           "--scenario", "trim", "--units", "12", "--quiet"])
    if rc != 0:
        return False, f"record exited {rc}"
    madv = [fr for nr, fr, _ in samples(gt, cap) if nr == 28]
    named = sum(1 for fr in madv if "malloc_trim" in fr[1:])
    msg = f"{named}/{len(madv)} samples in madvise name malloc_trim as a caller"
    return len(madv) >= 20 and named * 10 >= len(madv) * 8, msg


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    gt, outdir, work = sys.argv[1:4]
    fails = 0
    for name in sys.argv[4:] or ["deep", "syscall"]:
        ok, msg = (check_deep if name == "deep" else check_syscall)(gt, outdir, work)
        print(f"{'PASS' if ok else 'FAIL'} cfi {name}: {msg}", flush=True)
        fails += not ok
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
