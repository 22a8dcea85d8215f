#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""check_export.py: parses a `gaptrace export --format perfetto` trace back
and checks it against the capture's `gaptrace report --format json`.

What a viewer needs: every event has ph/ts/pid/tid; slices on one track nest
properly (a viewer drops or mangles the rest); every flow has both ends and
each end lies inside a slice of its track.  What gaptrace promises: one
kernel slice per GPU op, one gap slice per reported gap with its breakdown,
the units, per-thread state slices that tile each thread's time, blocked
slices named by reason, wakeup and launch flows.
Usage: check_export.py TRACE.json REPORT.json [--expect-blocked NAME]...
Exit status 0 when every check holds, 1 otherwise.
"""
import collections
import json
import sys


def ns(us):
    # Timestamps are multiples of 1/8 us, so this is exact.
    return int(round(us * 1000))


def main():
    args = sys.argv[1:]
    want_blocked = [args[i + 1] for i, a in enumerate(args) if a == "--expect-blocked"]
    pos = [a for i, a in enumerate(args) if not a.startswith("--") and
           (i == 0 or args[i - 1] != "--expect-blocked")]
    if len(pos) != 2:
        print("usage: check_export.py TRACE.json REPORT.json [--expect-blocked NAME]...",
              file=sys.stderr)
        return 2
    with open(pos[0]) as f:
        trace = json.load(f)
    with open(pos[1]) as f:
        rep = json.load(f)
    fails = []

    def check(ok, msg):
        if not ok:
            fails.append(msg)

    evs = trace["traceEvents"]
    check(trace.get("displayTimeUnit") == "ns", "displayTimeUnit is not ns")
    for e in evs:
        for k in ("ph", "ts", "pid", "tid"):
            if k not in e:
                fails.append(f"event without {k}: {e}")
                break
    # Perfetto takes one tid under two pids for a recycled thread: tids must be unique.
    pid_of = {}
    for e in evs:
        if e["ph"] != "M" and pid_of.setdefault(e["tid"], e["pid"]) != e["pid"]:
            fails.append(f"tid {e['tid']} appears under pids {pid_of[e['tid']]} and {e['pid']}")
            break
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs
             if e["ph"] == "M" and e["name"] == "thread_name"}
    procs = {e["pid"]: e["args"]["name"] for e in evs
             if e["ph"] == "M" and e["name"] == "process_name"}

    tracks = collections.defaultdict(list)
    for e in evs:
        if e["ph"] == "X":
            check(e["dur"] > 0 and isinstance(e.get("name"), str), f"bad slice {e}")
            tracks[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e))
    # Nesting: sorted by start (longest first), each slice inside or after the open ones.
    for key, sl in tracks.items():
        sl.sort(key=lambda s: (s[0], -(s[1] - s[0])))
        stack = []
        for s, t, e in sl:
            while stack and stack[-1] <= s:
                stack.pop()
            if stack and t > stack[-1]:
                fails.append(f"track {key}: '{e['name']}' [{s}, {t}) overlaps its parent's end "
                             f"{stack[-1]}")
                break
            stack.append(t)

    def enclosing(key, t):
        return any(s <= t < u for s, u, _ in tracks.get(key, []))

    flows = collections.defaultdict(dict)
    for e in evs:
        if e["ph"] in ("s", "f"):
            flows[(e["cat"], e["id"])][e["ph"]] = e
            check(enclosing((e["pid"], e["tid"]), ns(e["ts"])),
                  f"flow {e['cat']} {e['id']} {e['ph']} at {e['ts']} has no slice around it")
    for k, v in flows.items():
        check("s" in v and "f" in v, f"flow {k} has one end only")
    nflow = collections.Counter(k[0] for k in flows)

    # GPU: one kernel/copy slice per op, gaps with breakdowns summing to their length.
    gpu_pids = {p for p, n in procs.items() if n.startswith("GPU ")}
    ops = [e for e in evs if e["ph"] == "X" and e["pid"] in gpu_pids and e.get("cat") == "gpu"]
    want_ops = sum(d["ops"] for d in rep["devices"])
    check(len(ops) == want_ops, f"{len(ops)} GPU op slices, report has {want_ops} ops")
    gaps = [e for e in evs if e["ph"] == "X" and e.get("cat") == "gap" and
            e["name"].startswith("gap:")]
    check(len(gaps) == len(rep["gaps"]), f"{len(gaps)} gap slices, report has {len(rep['gaps'])}")
    by_index = {g["index"]: g for g in rep["gaps"]}
    for e in gaps:
        a = e["args"]
        g = by_index.get(a["index"])
        if g is None:
            fails.append(f"gap slice {a['index']} is not in the report")
            continue
        check(sum(a["by_category_ns"].values()) == g["duration_ns"] == a["duration_ns"],
              f"gap {a['index']}: breakdown does not sum to its length")
        check(abs(ns(e["dur"]) - g["duration_ns"]) <= 125,
              f"gap {a['index']}: slice {ns(e['dur'])} ns, report {g['duration_ns']} ns")
        top = max(a["by_category_ns"], key=lambda c: a["by_category_ns"][c])
        check(e["name"].startswith("gap: " + top), f"gap {a['index']} named '{e['name']}', "
              f"largest category {top}")
    units = [e for e in evs if e["ph"] == "X" and e.get("cat") == "unit"]
    if rep["units"]["source"] == "usdt":
        check(len(units) == rep["units"]["count"],
              f"{len(units)} unit slices, report has {rep['units']['count']} units")
    check(nflow["launch"] > 0, "no launch -> kernel flow")
    check(nflow["wakeup"] > 0, "no waker -> wakee flow")

    # Threads: state slices tile each thread's time without holes or overlaps.
    states = collections.defaultdict(list)
    for key, sl in tracks.items():
        for s, t, e in sl:
            if e.get("cat") == "state":
                states[key].append((s, t, e["name"]))
    check(len(states) > 0, "no thread state tracks")
    for key, sl in states.items():
        sl.sort()
        for (s0, t0, n0), (s1, t1, n1) in zip(sl, sl[1:]):
            if t0 != s1:
                fails.append(f"thread {names.get(key, key)}: state '{n0}' ends at {t0}, "
                             f"next '{n1}' starts at {s1}")
                break
    all_states = collections.Counter(n for sl in states.values() for _, _, n in sl)
    for w in ["running", "runnable"] + want_blocked:
        check(all_states[w] > 0, f"no '{w}' state slice (have: {sorted(all_states)})")

    for msg in fails[:20]:
        print("FAIL " + msg)
    print(f"export: {len(evs)} events, {len(tracks)} tracks, {len(ops)} GPU ops, {len(gaps)} gaps, "
          f"{len(units)} units, flows {dict(nflow)}, {len(states)} threads; "
          f"{len(fails)} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
