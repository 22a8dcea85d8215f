#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""follow_check.py: ground truth for following the whole program (issue #13
items 6-7), with tests/workloads/follow_sim.  Prints PASS/FAIL lines.

fork, orphan, exec, selfexec, dlopen: the new code fires N gpu_op probes (device 1,
op = pid << 32 | i) LATENCY_MS after the event; every one must be in the
capture, for the right pid.  Before them it fires an "early" op every
millisecond (device 0): the first one captured, minus the event (the fork
or exec TASK record, the dlopen marker op on device 2), is the attach
latency, which must be <= LATENCY_MS.  orphan: the parent exits right after
the fork; the recording must go on until the child, which fires its ops as
an orphan, exits (and stop then, by itself).
attach: record -p to a parent whose child, forked before the attach, spends
WORK_MS of CPU per request while the parent polls for the answer: every
whole gap's critical path reaches the child, the gap's cpu is 90-110%
(+0.5 ms) of WORK_MS and `wait` is under 10% of it.
nofollow: the same with --no-follow: the report names the child as the
waker it could not follow, in text and JSON.

Usage: follow_check.py GAPTRACE WORKLOADS_DIR WORK_DIR [SCENARIO...]
"""
import json
import os
import re
import subprocess
import sys
import time

N = 250
LATENCY_MS = 250
WORK_MS = 20
MS = 1_000_000


def run_record(gt, work, name, args, cmd):
    cap = os.path.join(work, f"follow-{name}.gtcap")
    with open(os.path.join(work, f"follow-{name}.out"), "w") as out, \
            open(os.path.join(work, f"follow-{name}.log"), "w") as log:
        rc = subprocess.call([gt, "record", "--no-progress", "-o", cap] + args + ["--"] + cmd,
                             stdout=out, stderr=log)
    return rc, cap


def events(work, name):
    """event NAME PID NS lines of the workload's stdout."""
    ev = []
    with open(os.path.join(work, f"follow-{name}.out")) as f:
        for line in f:
            p = line.split()
            if len(p) == 4 and p[0] == "event":
                ev.append((p[1], int(p[2]), int(p[3])))
    return ev


def dump(gt, cap):
    """(ops: [(dev, op, start_ms)], tasks: [(ts_ms, pid, event)]) from gaptrace dump."""
    text = subprocess.run([gt, "dump", cap], capture_output=True, text=True).stdout
    ops, tasks = [], []
    for line in text.splitlines():
        m = re.match(r"\s*([0-9.]+) gpu_op .* dev (\d+) stream \d+ op (\d+) start ([0-9.-]+)", line)
        if m:
            ops.append((int(m.group(2)), int(m.group(3)), float(m.group(4))))
            continue
        m = re.match(r"\s*([0-9.]+) task\s+tid (\d+) pid (\d+) event (\d+)", line)
        if m:
            tasks.append((float(m.group(1)), int(m.group(3)), int(m.group(4))))
    return ops, tasks


def probes(gt, wl, work, name):
    """fork/exec/selfexec/dlopen: (ok, message)."""
    sim = os.path.join(wl, "follow_sim")
    if name == "dlopen":
        cmd = [sim, "dlopen", os.path.abspath(os.path.join(wl, "libfollow_lib.so")),
               str(N), str(LATENCY_MS)]
    else:
        cmd = [sim, name, str(N), str(LATENCY_MS)]
    rc, cap = run_record(gt, work, name, [], cmd)
    if rc != 0:
        return False, f"record exited {rc}"
    fire = [pid for ev, pid, _ in events(work, name) if ev == "fire"]
    if name == "dlopen":
        fire = [pid for ev, pid, _ in events(work, name) if ev == "dlopen"]
    if not fire:
        return False, "the workload never fired"
    pid = fire[0]
    ops, tasks = dump(gt, cap)
    seen = {op & 0xffffffff for dev, op, _ in ops if dev == 1 and op >> 32 == pid}
    early = [t for dev, op, t in ops if dev == 0]
    # When the new code appeared, on the capture's clock.
    if name in ("fork", "orphan"):
        at = [ts for ts, p, e in tasks if p == pid and e == 2]
    elif name == "dlopen":
        at = [t for dev, op, t in ops if dev == 2]
    else:
        at = [ts for ts, p, e in tasks if p == pid and e == 5]
    msg = f"{len(seen)}/{N} ops of pid {pid}"
    if not at or not early:
        return False, msg + (", no event record" if not at else ", no early op seen")
    lat = min(early) - at[0]  # dump times are in ms
    msg += f", first probe hit {lat:.1f} ms after the {'dlopen' if name == 'dlopen' else name}"
    ok = len(seen) == N and 0 <= lat <= LATENCY_MS
    if name == "orphan":
        log = open(os.path.join(work, f"follow-{name}.log")).read()
        said = "recording the 1 process followed from it" in log
        msg += ("; record said it went on after the parent's exit" if said
                else "; record did not say it went on after the parent's exit")
        ok = ok and said
    return ok, msg


def attach(gt, wl, work, name, extra):
    """Records -p a running 'follow_sim pipe': (report json, text, child pid) or an error."""
    sim = os.path.join(wl, "follow_sim")
    out = open(os.path.join(work, f"follow-{name}.out"), "w")
    p = subprocess.Popen([sim, "pipe", "10", str(WORK_MS)], stdout=out)
    time.sleep(0.5)
    cap = os.path.join(work, f"follow-{name}.gtcap")
    with open(os.path.join(work, f"follow-{name}.log"), "w") as log:
        rc = subprocess.call([gt, "record", "--no-progress", "-p", str(p.pid), "-o", cap] + extra,
                             stderr=log)
    p.wait()
    out.close()
    child = None
    with open(os.path.join(work, f"follow-{name}.out")) as f:
        for line in f:
            if line.startswith("child "):
                child = int(line.split()[1])
    if rc != 0 or child is None:
        return None, None, f"record exited {rc}, child {child}"
    rep = subprocess.run([gt, "report", cap, "--format", "json"], capture_output=True, text=True)
    txt = subprocess.run([gt, "report", cap, "--top", "1000"], capture_output=True, text=True)
    with open(os.path.join(work, f"follow-{name}.report.txt"), "w") as f:
        f.write(txt.stdout)
    return json.loads(rep.stdout), txt.stdout, child


def check_attach(gt, wl, work):
    rep, _, child = attach(gt, wl, work, "attach", [])
    if rep is None:
        return False, child
    gaps = sorted(rep["gaps"], key=lambda g: g["start_ns"])[1:-1]  # whole gaps only
    bad = []
    for g in gaps:
        cats = g["by_category"]
        hop = [h for h in g["chain"] if h["tid"] == child]
        cpu = cats.get("cpu", 0)
        why = []
        if not hop:
            why.append("chain misses the child")
        if not 0.9 * WORK_MS * MS <= cpu <= 1.1 * WORK_MS * MS + 0.5 * MS:
            why.append(f"cpu {cpu / MS:.2f} ms")
        if cats.get("wait", 0) * 10 >= g["duration_ns"]:
            why.append(f"wait {cats['wait'] / MS:.2f} ms")
        if why:
            bad.append(f"gap {g['index']} ({g['duration_ns'] / MS:.2f} ms): {', '.join(why)}")
    msg = (f"{len(gaps) - len(bad)}/{len(gaps)} gaps: the child's {WORK_MS} ms of CPU on the "
           f"critical path as cpu (90-110%), wait < 10%")
    if bad:
        msg += "; " + "; ".join(bad[:4])
    return len(gaps) >= 5 and not bad, msg


def check_nofollow(gt, wl, work):
    rep, txt, child = attach(gt, wl, work, "nofollow", ["--no-follow"])
    if rep is None:
        return False, child
    gaps = sorted(rep["gaps"], key=lambda g: g["start_ns"])[1:-1]
    named = [g for g in gaps
             if any(h.get("untraced_waker", {}).get("pid") == child for h in g["chain"])]
    said = f"woken by pid {child} (follow_sim), not traced" in txt
    msg = (f"{len(named)}/{len(gaps)} gaps name pid {child} as untraced_waker in JSON; text "
           f"{'says' if said else 'does not say'} 'woken by pid {child} (follow_sim), not traced'")
    return len(gaps) >= 5 and len(named) == len(gaps) and said, msg


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    gt, wl, work = sys.argv[1:4]
    names = sys.argv[4:] or ["fork", "orphan", "exec", "selfexec", "dlopen", "attach", "nofollow"]
    fails = 0
    for name in names:
        if name == "attach":
            ok, msg = check_attach(gt, wl, work)
        elif name == "nofollow":
            ok, msg = check_nofollow(gt, wl, work)
        else:
            ok, msg = probes(gt, wl, work, name)
        print(f"{'PASS' if ok else 'FAIL'} follow {name}: {msg}", flush=True)
        fails += not ok
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
