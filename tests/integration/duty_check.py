#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""duty_check.py GAPTRACE PROVER_SIM WORK

`gaptrace monitor --gpu-duty`: GPU collection in whole windows, off between.
prover_sim (under a name of its own) reports its simulated kernels through
the gaptrace USDT probes, as the CUPTI library does, and the monitor takes
those probes off and puts them back with --window 1s --gpu-duty 1s/3s:

  1. each segment's GPU source (its END, as `gaptrace report` shows it)
     follows the cycle: windows 0, 3, 6, ... collected (the first after the
     attach "partial", the others complete but for a rare one whose probes
     the kernel registered late), the rest "none";
  2. collected windows hold GPU work; windows without collection hold
     little (the probes really went off: at most the records fired before
     they closed and in the lead before the next collected window);
  3. the scraped /metrics and the textfile: busy and gap seconds per
     category agree within 1% with `gaptrace report` summed over the
     collected segments only (the others add nothing), and the window
     counts by coverage match the segments;
  4. a first run with gpu_op per kernel, a second (a restart) with one
     gpu_batch per unit, the way the CUPTI library reports.

Exit 0 when all hold; the last line is the summary.
"""
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

WINDOW, DUTY, PERIOD = "1s", "1s/3s", 3
TOL = 0.01


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def metric_values(text, name):
    out = {}
    for line in text.splitlines():
        m = re.match(r"^%s(\{[^}]*\})? (\S+)$" % re.escape(name), line)
        if m:
            out[m.group(1) or ""] = float(m.group(2))
    return out


def exported(text):
    """{category: s, "busy": s} of the exposition text."""
    out = {"busy": sum(metric_values(text, "gaptrace_gpu_busy_seconds_total").values())}
    for labels, v in metric_values(text, "gaptrace_gap_seconds_total").items():
        c = re.search(r'category="([^"]+)"', labels).group(1)
        out[c] = out.get(c, 0.0) + v
    return out


def segments(gt, segdir):
    """[(index, source, ops, {category: s, "busy": s})] of every segment, in order."""
    out = []
    for seg in sorted(glob.glob(os.path.join(segdir, "seg-*.gtcap"))):
        idx = int(re.search(r"-(\d+)\.gtcap$", seg).group(1))
        r = json.loads(subprocess.run([gt, "report", "--format", "json", seg], capture_output=True,
                                      text=True, check=True).stdout)
        figs = {"busy": sum(d["busy_ns"] for d in r["devices"]) / 1e9}
        for g in r["gaps"]:
            for c, ns in g["by_category"].items():
                figs[c] = figs.get(c, 0.0) + ns / 1e9
        out.append((idx, r["capture"]["gpu_source"], sum(d["ops"] for d in r["devices"]), figs))
    return out


def agree(a, b):
    bad = []
    for c in sorted(set(a) | set(b)):
        x, y = a.get(c, 0.0), b.get(c, 0.0)
        if abs(x - y) > max(TOL * max(abs(x), abs(y)), 1e-4):
            bad.append("%s %.6f vs %.6f" % (c, x, y))
    return bad


def wait_for(pred, timeout, step=0.2):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            v = pred()
            if v:
                return v
        except (OSError, ValueError):
            pass
        time.sleep(step)
    return None


def check_life(segs, fails, what):
    """The segments of one target life (indexes from its first): the cycle's pattern."""
    covered, none = [], []
    for k, (idx, src, ops, figs) in enumerate(segs):
        on = k % PERIOD == 0
        if on != (not src.startswith("none")):
            fails.append("%s window %d (segment %d): source '%s', wanted %s" %
                         (what, k, idx, src, "collected" if on else "none"))
        if on and k == 0 and "partial" not in src:
            fails.append("%s: the first window after the attach is not said partial: %s" % (what, src))
        (covered if on else none).append((idx, ops, figs))
    # The probes go on half a window ahead; a uprobe registration can take the kernel
    # longer on a loaded host, and the window then says partial: rare, never the rule.
    late = sum(1 for k, s in enumerate(segs) if k and k % PERIOD == 0 and "partial" in s[1])
    if late * 2 > len(covered) - 1:
        fails.append("%s: %d of %d collected windows after the first say partial" %
                     (what, late, len(covered) - 1))
    return covered, none


def main():
    gt, sim, work = sys.argv[1], sys.argv[2], sys.argv[3]
    w = os.path.join(work, "duty")
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(os.path.join(w, "tf"))
    target = os.path.join(w, "prover_sim_duty")
    shutil.copy(sim, target)
    segdir = os.path.join(w, "seg")
    mport = free_port()
    mlog = open(os.path.join(w, "monitor.log"), "w")
    mon = subprocess.Popen([gt, "monitor", "--match", "^prover_sim_duty$", "--window", WINDOW,
                            "--gpu-duty", DUTY, "--dir", segdir, "--listen", "127.0.0.1:%d" % mport,
                            "--textfile", os.path.join(w, "tf"), "--keep", "0", "--keep-size", "4096",
                            "--record-opt=--gpu", "--record-opt=none", "-v"],
                           stdout=mlog, stderr=subprocess.STDOUT)
    fails, notes = [], []

    def metrics():
        return urllib.request.urlopen("http://127.0.0.1:%d/metrics" % mport, timeout=5).read().decode()

    def run_target(extra, units):
        subprocess.run([target, "--scenario", "mixed", "--units", str(units), "--quiet",
                        "--io-file", os.path.join(w, "sim.io")] + extra, check=True, timeout=90,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wait_for(lambda: metric_values(metrics(), "gaptrace_target_attached").get("") == 0, 20):
            raise RuntimeError("the monitor did not see the target exit")

    try:
        if not wait_for(lambda: "gaptrace_windows_total" in metrics(), 10):
            raise RuntimeError("the monitor serves no /metrics")
        if metric_values(metrics(), "gaptrace_gpu_duty_ratio").get("") != round(1 / PERIOD, 6):
            fails.append("gaptrace_gpu_duty_ratio %s" % metric_values(metrics(), "gaptrace_gpu_duty_ratio"))
        run_target([], 150)
        first = segments(gt, segdir)
        run_target(["--batch"], 150)
        scraped = exported(metrics())
        windows = metric_values(metrics(), "gaptrace_gpu_windows_total")
        mon.send_signal(signal.SIGTERM)
        if mon.wait(timeout=30) != 0:
            fails.append("monitor exit %d after SIGTERM" % mon.returncode)
        tf = exported(open(os.path.join(w, "tf", "gaptrace.prom"), encoding="utf-8").read())
        segs = segments(gt, segdir)
        lives = [("run 1 (gpu_op)", segs[:len(first)]), ("run 2 (gpu_batch)", segs[len(first):])]
        want, ncov, nnone = {}, 0, 0
        for what, life in lives:
            if len(life) < 3 * PERIOD:
                fails.append("%s: %d windows, too few" % (what, len(life)))
                continue
            covered, none = check_life(life, fails, what)
            # The first (partial: the target may not have started) and the last (it ends
            # with the target) may be too short for GPU work.
            empty = [idx for idx, ops, _ in covered[1:] if not ops and idx != life[-1][0]]
            if empty:
                fails.append("%s: collected windows without GPU work: %s" % (what, empty))
            per_cov = sum(ops for _, ops, _ in covered) / len(covered)
            per_none = sum(ops for _, ops, _ in none) / max(len(none), 1)
            # Off for the whole window but the lead before the next (<= half a window).
            if per_none > 0.5 * per_cov:
                fails.append("%s: %.0f GPU ops per window without collection, %.0f with: the "
                             "probes did not go off" % (what, per_none, per_cov))
            notes.append("%s: %d windows, %d collected (%.0f ops each), %d not (%.0f ops each, "
                         "not counted)" % (what, len(life), len(covered), per_cov, len(none), per_none))
            for _, _, figs in covered:
                for c, v in figs.items():
                    want[c] = want.get(c, 0.0) + v
            ncov += len(covered)
            nnone += len(none)
        if want.get("busy", 0) <= 0.5 or sum(v for c, v in want.items() if c != "busy") <= 0.1:
            fails.append("too little in the collected windows to compare: %s" % want)
        bad = agree(scraped, want)
        if bad:
            fails.append("/metrics vs report of the collected segments: " + "; ".join(bad))
        bad = agree(tf, want)
        if bad:
            fails.append("textfile vs report of the collected segments: " + "; ".join(bad))
        got_cov = windows.get('{coverage="full"}', 0) + windows.get('{coverage="partial"}', 0)
        if got_cov != ncov or windows.get('{coverage="none"}') != nnone:
            fails.append("gaptrace_gpu_windows_total %s, segments: %d collected, %d not" %
                         (windows, ncov, nnone))
        notes.append("busy %.3f s and gaps %.3f s exported = report of the collected segments" %
                     (want.get("busy", 0), sum(v for c, v in want.items() if c != "busy")))
    except (RuntimeError, OSError, subprocess.SubprocessError, ValueError, KeyError) as e:
        fails.append(str(e))
    finally:
        if mon.poll() is None:
            mon.kill()
            mon.wait()
        mlog.close()
    if fails:
        print("FAIL duty: " + "; ".join(fails) + " (logs in %s)" % w)
        return 1
    print("duty: " + "; ".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
