#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""stack_roots.py: the share of a capture's stacked off-CPU time whose user
stack reaches its thread's root (the outermost frame is start_thread, clone,
clone3, _start, __libc_start_main or main, or the kernel's CFI walk ended at
the frame the code's own CFI marks outermost: `dump -s` says ustack_root=1,
which holds where a stripped libc leaves clone3 and start_thread unnamed),
issue #26's measure.  With a
truth file, only intervals that began inside an injected window (the gaps)
count; without, every off-CPU interval of every thread.

Usage: stack_roots.py GAPTRACE CAPTURE [TRUTH.json] [--min-pct P]
Prints one summary line (last) and exits 0 when the share is at least P
(default 0: always, a measurement).
"""
import argparse
import json
import subprocess
import sys

ROOTS = {"start_thread", "clone", "clone3", "__clone", "__clone3", "_start",
         "__libc_start_main", "__libc_start_call_main", "main"}


def main():
    ap = argparse.ArgumentParser(description="share of stacked off-CPU time reaching a root")
    ap.add_argument("gaptrace")
    ap.add_argument("capture")
    ap.add_argument("truth", nargs="?")
    ap.add_argument("--min-pct", type=float, default=0.0)
    ap.add_argument("--show", type=int, default=5, help="stacks not reaching a root to print")
    a = ap.parse_args()
    windows = None
    if a.truth:
        info = json.loads(subprocess.check_output([a.gaptrace, "info", a.capture,
                                                   "--format", "json"]))
        t0 = int(info["header"]["start_mono_ns"])
        truth = json.load(open(a.truth))
        windows = sorted(((w["start_ns"] - t0) / 1e6, (w["end_ns"] - t0) / 1e6)
                         for w in truth["injections"])
    dump = subprocess.check_output([a.gaptrace, "dump", "-s", a.capture], text=True)
    total = rooted = 0.0
    n = nroot = 0
    misses = {}
    for line in dump.splitlines():
        f = line.split()
        if len(f) < 3 or f[1] != "offcpu":
            continue
        kv = dict(zip(f[2::2], f[3::2]))
        off, on = float(kv["off"]), float(kv["on"])
        if off <= 0:
            continue
        if windows is not None and not any(s <= off <= e for s, e in windows):
            continue
        frames = None
        for tok in f:
            if tok.startswith("ustack_frames=") or tok.startswith("ustack_dwarf="):
                frames = tok.split("=", 1)[1].split(";")
        if not frames:
            continue
        n += 1
        total += on - off
        if frames[-1] in ROOTS or "ustack_root=1" in f:
            nroot += 1
            rooted += on - off
        else:
            key = ";".join(frames[-4:])
            misses[key] = misses.get(key, 0.0) + on - off
    for k, v in sorted(misses.items(), key=lambda kv: -kv[1])[:a.show]:
        print("  no root (%.1f ms): ...%s" % (v, k))
    pct = 100.0 * rooted / total if total else 0.0
    print("%.1f%% of %.1f ms of stacked off-CPU time%s reaches a thread root "
          "(%d of %d intervals)" % (pct, total, " in injected windows" if windows else "",
                                    nroot, n))
    return 0 if total and pct >= a.min_pct else (0 if a.min_pct == 0 else 1)


if __name__ == "__main__":
    sys.exit(main())
