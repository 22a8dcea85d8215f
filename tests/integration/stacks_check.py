#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# stacks_check.py: checks a recording of `switch_stress --mode stacks --depth D`
# (issue #12, stacks that last).  Its initiator thread blocks at the leaf of
# walk0 -> (walk0|walk1)^D -> leaf, the path's bits chosen by a counter that
# grows by one per round trip, so every recorded stack has a known shape and
# consecutive ones decode to nearby paths: a stack id that resolved to
# another stack (a recycled or mis-mapped id) shows up as a far jump.
# Usage: stacks_check.py GAPTRACE CAPTURE DEPTH [MIN_DISTINCT_PATHS]
import json
import subprocess
import sys

# The outermost frames of a whole user stack, as stack_roots.py counts them.
from stack_roots import ROOTS

# The initiator switches out once or more per round trip (preempted in the
# write, or blocked in the read), and the memo (bpf/sched.bpf.c,
# STACK_REUSE_MAX) reuses a stack for at most 64 more: consecutive stacks
# are at most 65 paths apart.  A wrong stack lands anywhere in 2^depth.
MAX_STEP = 65


def main():
    gt, cap, depth = sys.argv[1], sys.argv[2], int(sys.argv[3])
    min_distinct = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    bad = []
    info = json.loads(subprocess.run([gt, "info", cap, "--format", "json"], check=True,
                                     capture_output=True, text=True).stdout)
    if info["lost"]["stacks"] != 0:
        bad.append("lost.stacks %d" % info["lost"]["stacks"])
    dump = subprocess.run([gt, "dump", cap, "-s"], check=True, capture_output=True,
                          text=True).stdout
    frames_of = {}  # capture ustack id -> frames
    ids_of = {}     # frames of a blocked switch-out at a leaf -> capture ids
    paths = []      # (off time, path) of the initiator's switch-outs at a leaf
    walk_stacks = 0
    for line in dump.splitlines():
        f = line.split()
        if len(f) < 2 or f[1] not in ("offcpu", "sample"):
            continue
        kv = dict(x.split("=", 1) for x in f if "=" in x)
        uid = int(f[f.index("ustack") + 1]) if "ustack" in f else -1
        kid = int(f[f.index("kstack") + 1]) if "kstack" in f else -1
        # A sample in code without frame pointers (libc) has a stack unwound
        # from its snapshot (issue #13), which dump prints as ustack_dwarf.
        if "ustack_dwarf" in kv:
            kv["ustack_frames"] = kv["ustack_dwarf"]
        if uid >= 0 and "ustack_frames" not in kv:
            bad.append("ustack %d has no frames" % uid)
        if kid >= 0 and "kstack_frames" not in kv:
            bad.append("kstack %d has no frames" % kid)
        if "schedule" in kv.get("ustack_frames", "").split(";"):
            bad.append("kernel frame in user stack %d" % uid)
        uf = kv.get("ustack_frames", "").split(";")
        # A walk cut short (its object's CFI table still being compiled in
        # the first milliseconds of an attach: "ended: N no table") ends
        # elsewhere; its switch-out is left out of the paths, so the two
        # around it are not consecutive and may lie far apart without any
        # stack being wrong: such a cut breaks the chain.
        if f[1] == "offcpu" and uf != [""] and uf[-1] not in ROOTS \
                and "ustack_root=1" not in f:
            paths.append((float(f[f.index("off") + 1]), None))
        if uid >= 0:
            if frames_of.setdefault(uid, uf) != uf:
                bad.append("ustack %d printed two ways" % uid)
        if not any(x in ("walk0", "walk1", "leaf") for x in uf):
            continue
        walk_stacks += 1
        # A sample or a preemption may land in a prologue, where a
        # frame-pointer walk skips the caller: only switch-outs in the leaf's
        # pipe read or write have exact shapes.
        # round_a, leaf's callee, is a frame of its own (gcc keeps it out of
        # line): the CFI walk (--stacks cfi) shows it, a frame-pointer walk
        # skips it, as it skips any caller of a libc function without a frame.
        if len(uf) > 2 and uf[1] == "round_a":
            uf = uf[:1] + uf[2:]
        if f[1] != "offcpu" or len(uf) < 2 or uf[0] not in ("read", "write") or uf[1] != "leaf":
            continue
        i = 2
        j = i
        while j < len(uf) and uf[j] in ("walk0", "walk1"):
            j += 1
        walks = uf[i:j]
        if j >= len(uf) or uf[j] != "run_a" or len(walks) != depth + 1 or walks[-1] != "walk0" \
                or any(x in ("leaf", "walk0", "walk1") for x in uf[j:]):
            bad.append("malformed stack %d: %s" % (uid, ";".join(uf)))
            continue
        # Blocked inside the syscall, the user ips are exact: one id per stack.
        if f[f.index("sys") + 1] != "-1":
            ids_of.setdefault(";".join(uf), set()).add(uid)
        # walks[-1] is the top call; walks[-2-k] took bit k of the path.
        p = sum(1 << k for k in range(depth) if walks[-2 - k] == "walk1")
        paths.append((float(f[f.index("off") + 1]), p))
    dup = sum(1 for v in ids_of.values() if len(v) > 1)
    if dup:
        bad.append("%d stacks written under more than one id" % dup)
    paths.sort(key=lambda x: x[0])
    worst = 0
    for (_, a), (_, b) in zip(paths, paths[1:]):
        if a is not None and b is not None:
            worst = max(worst, (b - a) % (1 << depth))
    cuts = sum(1 for _, p in paths if p is None)
    paths = [x for x in paths if x[1] is not None]
    if worst > MAX_STEP:
        bad.append("path jumped by %d between consecutive switch-outs (wrong stack)" % worst)
    distinct = len(set(p for _, p in paths))
    if distinct < min_distinct:
        bad.append("only %d distinct paths (want >= %d)" % (distinct, min_distinct))
    if not paths:
        bad.append("no switch-out at a leaf")
    # Cuts weaken the check: a few at the attach are expected, more are a fault.
    if cuts > len(paths) // 100:
        bad.append("%d stacks cut short (more than 1%% of %d)" % (cuts, len(paths)))
    summary = ("%d walk stacks, %d leaf switch-outs at %d distinct paths, largest path step %d, "
               "%d stacks of blocked ones each under one id, %d cut short") % (
        walk_stacks, len(paths), distinct, worst, len(ids_of), cuts)
    if bad:
        print("stacks_check: " + summary)
        for b in bad[:20]:
            print("  " + b)
        return 1
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
