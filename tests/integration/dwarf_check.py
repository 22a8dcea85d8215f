#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""dwarf_check.py: checks the stacks of a --stacks dwarf capture of
tests/workloads/prover_sim built without frame pointers against its ground
truth: every off-CPU interval of the gpu-worker that began inside an injected
delay (its stack is taken at switch-out) and lasted at least --dwarf-min must
have a stack that names the injection function (issue #4: at least 95%).

Usage: dwarf_check.py GAPTRACE CAPTURE TRUTH.json [--min-pct 95] [--min-ms 1]
Prints one summary line (last) and exits 0 when the share is reached.
"""
import argparse
import json
import subprocess
import sys

# The function of tests/workloads/delay_common.h that runs each kind.
DELAY_FUNC = {
    "lock": "delay_lock",  # the one that calls pthread_mutex_lock
    "trim": "delay_alloc",  # malloc_trim
    "munmap": "delay_alloc",
    "sched": "delay_sched",
    "sleep": "delay_sleep",
    "cpu": "delay_cpu",
    "io": "delay_io",
}
# Kinds whose delay is off-CPU by construction: some intervals must exist.
OFFCPU_KINDS = {"lock", "sleep", "io", "sched"}


def main():
    ap = argparse.ArgumentParser(description="checks --stacks dwarf stacks against the truth")
    ap.add_argument("gaptrace")
    ap.add_argument("capture")
    ap.add_argument("truth")
    ap.add_argument("--min-pct", type=float, default=95.0)
    ap.add_argument("--min-ms", type=float, default=1.0, help="the recording's --dwarf-min")
    a = ap.parse_args()
    gt, cap, truth_path, min_pct, min_ms = a.gaptrace, a.capture, a.truth, a.min_pct, a.min_ms
    truth = json.load(open(truth_path))
    info = json.loads(subprocess.check_output([gt, "info", cap, "--format", "json"]))
    t0 = int(info["header"]["start_mono_ns"])
    worker = truth["worker_tid"]
    dump = subprocess.check_output([gt, "dump", "-s", "-t", str(worker), cap], text=True)

    windows = [((w["start_ns"] - t0) / 1e6, (w["end_ns"] - t0) / 1e6, w["kind"])
               for w in truth["injections"]]
    total = good = deep = short = 0
    kinds = set()
    misses = []
    shallow = []
    for line in dump.splitlines():
        f = line.split()
        if len(f) < 3 or f[1] != "offcpu":
            continue
        kv = dict(zip(f[2::2], f[3::2]))
        off, on = float(kv["off"]), float(kv["on"])
        win = next((w for w in windows if w[0] <= off <= w[1]), None)
        if not win:
            continue
        if on - off < min_ms:
            short += 1
            continue
        total += 1
        kinds.add(win[2])
        frames = []
        for tok in f:
            if tok.startswith("ustack_dwarf=") or tok.startswith("ustack_frames="):
                frames = tok.split("=", 1)[1].split(";")
        want = DELAY_FUNC[win[2]]
        if want in frames:
            good += 1
            if "worker_main" in frames[frames.index(want):]:
                deep += 1
            else:
                shallow.append("%.3f-%.3f ms %s: %s" % (off, on, win[2], ";".join(frames)))
        else:
            misses.append("%.3f ms %s: %s" % (off, win[2], ";".join(frames) or "(none)"))
    for m in misses[:10]:
        print("  miss " + m)
    for m in shallow[:5]:
        print("  short stack " + m)
    if total == 0:
        need = OFFCPU_KINDS & {w[2] for w in windows}
        print("no off-CPU interval >= %g ms began in an injected delay (%d shorter)%s"
              % (min_ms, short, "" if not need else ": expected some for " + ",".join(sorted(need))))
        return 1 if need else 0
    pct = 100.0 * good / total
    print("%.1f%% of %d worker off-CPU intervals >= %g ms in injected delays name %s "
          "(%.1f%% also reach worker_main; %d shorter ones keep fp stacks)"
          % (pct, total, min_ms, ",".join(sorted({DELAY_FUNC[k] for k in kinds})),
             100.0 * deep / total, short))
    return 0 if pct >= min_pct else 1


if __name__ == "__main__":
    sys.exit(main())
