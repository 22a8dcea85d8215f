#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""monitor_check.py GAPTRACE PROVER_SIM WORK [DASHBOARD]

`gaptrace monitor` end to end, with a real Prometheus server (Debian's
/usr/bin/prometheus, on loopback, scrape_interval 1s) scraping its
/metrics while prover_sim runs under a name of its own (so that no other
prover_sim on the host matches):

  1. after a first run of the target, Prometheus's gaptrace_gap_seconds_total
     summed by category agrees within 1% with `gaptrace report --format
     json` summed over the saved segments (each segment is one window);
  2. a second run of the target (a restart the --match finds) gives
     gaptrace_target_restarts_total 1 and more gap seconds (data flows);
  3. `monitor --snapshot` (SIGUSR1) and --snapshot-below keep snapshots
     that report reads, and a second monitor on the same --dir is refused;
  4. after SIGTERM (exit 0) the textfile agrees with every segment too;
  5. every metric the Grafana dashboard queries is in the exporter's output.

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
import threading
import time
import urllib.parse
import urllib.request

UNITS = 120  # ~5 s of prover_sim --scenario mixed
WINDOW = "2s"
TOL = 0.01


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def metric_values(text, name):
    """{labels string: value} of one metric in exposition text."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^%s(\{[^}]*\})? (\S+)$" % re.escape(name), line)
        if m:
            out[m.group(1) or ""] = float(m.group(2))
    return out


def by_category_text(text):
    cats = {}
    for labels, v in metric_values(text, "gaptrace_gap_seconds_total").items():
        c = re.search(r'category="([^"]+)"', labels).group(1)
        cats[c] = cats.get(c, 0.0) + v
    return cats


def by_category_segments(gt, segdir):
    cats, n = {}, 0
    for seg in sorted(glob.glob(os.path.join(segdir, "seg-*.gtcap"))):
        out = subprocess.run([gt, "report", "--format", "json", seg], capture_output=True,
                             text=True, check=True).stdout
        for g in json.loads(out)["gaps"]:
            for c, ns in g["by_category"].items():
                cats[c] = cats.get(c, 0.0) + ns / 1e9
        n += 1
    return cats, n


def agree(a, b):
    """Per category within 1% (or 100 us for tiny ones); a list of mismatches."""
    bad = []
    for c in sorted(set(a) | set(b)):
        x, y = a.get(c, 0.0), b.get(c, 0.0)
        if abs(x - y) > max(TOL * max(abs(x), abs(y)), 1e-4):
            bad.append("%s %.6f vs %.6f" % (c, x, y))
    return bad


def prom_query(port, q):
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": q}))
    r = json.loads(get(url))
    if r.get("status") != "success":
        raise RuntimeError("query %s: %s" % (q, r))
    return r["data"]["result"]


def wait_for(pred, timeout, step=0.2):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            v = pred()
            if v:
                return v
        except (OSError, ValueError, RuntimeError):
            pass
        time.sleep(step)
    return None


def dashboard_metrics(path):
    d = json.load(open(path, encoding="utf-8"))
    names = set()

    def walk(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if k == "expr" and isinstance(v, str):
                    names.update(re.findall(r"\bgaptrace_[a-z_]+", v))
                else:
                    walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(d)
    return names


def main():
    gt, sim, work = sys.argv[1], sys.argv[2], sys.argv[3]
    here = os.path.dirname(os.path.abspath(__file__))
    dash = sys.argv[4] if len(sys.argv) > 4 else os.path.join(here, "../../docs/grafana-dashboard.json")
    w = os.path.join(work, "monitor")
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(os.path.join(w, "tf"))
    # A name of its own: another prover_sim on the host must not match.
    target = os.path.join(w, "prover_sim_mon")
    shutil.copy(sim, target)
    mport, pport = free_port(), free_port()
    with open(os.path.join(w, "prometheus.yml"), "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: gaptrace\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % mport)
    mlog = open(os.path.join(w, "monitor.log"), "w")
    plog = open(os.path.join(w, "prometheus.log"), "w")
    mon = subprocess.Popen([gt, "monitor", "--match", "^prover_sim_mon$", "--window", WINDOW,
                            "--dir", os.path.join(w, "seg"), "--listen", "127.0.0.1:%d" % mport,
                            "--textfile", os.path.join(w, "tf"), "--keep", "0",
                            "--keep-size", "4096", "--snapshot-below", "0.99",
                            "--gpu-duty", "always", "--record-opt=--gpu", "--record-opt=none"],
                           stdout=mlog, stderr=subprocess.STDOUT)
    prom = subprocess.Popen(["/usr/bin/prometheus", "--config.file=" + os.path.join(w, "prometheus.yml"),
                             "--storage.tsdb.path=" + os.path.join(w, "prom-data"),
                             "--web.listen-address=127.0.0.1:%d" % pport],
                            stdout=plog, stderr=subprocess.STDOUT)
    fails, notes = [], []
    seen = set()  # metric names in any scrape of ours (a gauge may be absent at times)

    def metrics():
        text = get("http://127.0.0.1:%d/metrics" % mport)
        seen.update(re.findall(r"^(gaptrace_[a-z_]+)", text, re.M))
        return text
    try:
        if not wait_for(lambda: "gaptrace_windows_total" in metrics(), 10):
            raise RuntimeError("the monitor serves no /metrics")
        if not wait_for(lambda: get("http://127.0.0.1:%d/-/ready" % pport), 20):
            raise RuntimeError("prometheus did not become ready")
        for status in ("404", "405"):
            req = urllib.request.Request("http://127.0.0.1:%d/%s" % (mport, "x" if status == "404" else "metrics"),
                                         method="GET" if status == "404" else "POST", data=None)
            try:
                urllib.request.urlopen(req, timeout=5)
                fails.append("no %s" % status)
            except urllib.error.HTTPError as e:
                if str(e.code) != status:
                    fails.append("got %d for %s" % (e.code, status))

        def run_target():
            subprocess.run([target, "--scenario", "mixed", "--units", str(UNITS), "--quiet",
                            "--io-file", os.path.join(w, "sim.io")], check=True, timeout=60,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # The monitor ends the target's last segment and analyses it.
            if not wait_for(lambda: metric_values(metrics(), "gaptrace_target_attached").get("") == 0, 20):
                raise RuntimeError("the monitor did not see the target exit")

        run_target()
        text1 = metrics()
        # A second monitor must not share the folder (retention would fight).
        r = subprocess.run([gt, "monitor", "--match", "nothing", "--dir", os.path.join(w, "seg")],
                           capture_output=True, text=True, timeout=20)
        if r.returncode != 1 or "another monitor" not in r.stderr:
            fails.append("a second monitor on the same --dir: exit %d, %s" % (r.returncode, r.stderr.strip()))
        # Prometheus has scraped what the monitor now says (one scrape a second).
        want = sum(by_category_text(text1).values())
        got = wait_for(lambda: (lambda r: r and abs(float(r[0]["value"][1]) - want) <= 1e-6 * max(want, 1) and r)(
            prom_query(pport, "sum(gaptrace_gap_seconds_total)")), 10)
        if not got:
            fails.append("prometheus never scraped the first run's final values")
        scraped = {r["metric"]["category"]: float(r["value"][1])
                   for r in prom_query(pport, "sum by (category) (gaptrace_gap_seconds_total)")}
        segs, nseg = by_category_segments(gt, os.path.join(w, "seg"))
        total1 = sum(segs.values())
        if nseg < 2 or total1 <= 0.1:
            fails.append("run 1: %d segments, %.3f s of gaps: too little to compare" % (nseg, total1))
        bad = agree(scraped, segs)
        if bad:
            fails.append("run 1 prometheus vs report: " + "; ".join(bad))
        notes.append("run 1: %d segments, %.3f s of gaps, prometheus = report within 1%%" % (nseg, total1))
        restarts = prom_query(pport, "gaptrace_target_restarts_total")
        if not restarts or float(restarts[0]["value"][1]) != 0:
            fails.append("restarts after the first run: %s" % restarts)

        # The target restarts: found again by --match, counted, and data keeps flowing;
        # SIGUSR1 meanwhile snapshots the window it ends and the one before.
        usr1 = threading.Timer(3.0, lambda: subprocess.run(
            [gt, "monitor", "--snapshot", "--dir", os.path.join(w, "seg")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        usr1.start()
        run_target()
        usr1.cancel()
        ok = wait_for(lambda: (lambda r: r and float(r[0]["value"][1]) == 1 and r)(
            prom_query(pport, "gaptrace_target_restarts_total")), 10)
        if not ok:
            fails.append("prometheus never saw gaptrace_target_restarts_total 1")
        want = sum(by_category_text(metrics()).values())
        wait_for(lambda: (lambda r: r and abs(float(r[0]["value"][1]) - want) <= 1e-6 * max(want, 1) and r)(
            prom_query(pport, "sum(gaptrace_gap_seconds_total)")), 10)
        scraped2 = {r["metric"]["category"]: float(r["value"][1])
                    for r in prom_query(pport, "sum by (category) (gaptrace_gap_seconds_total)")}
        segs2, nseg2 = by_category_segments(gt, os.path.join(w, "seg"))
        if sum(scraped2.values()) < total1 + 0.1 or nseg2 < nseg + 2:
            fails.append("no new data after the restart: %.3f s then %.3f s of gaps, %d then %d segments"
                         % (total1, sum(scraped2.values()), nseg, nseg2))
        bad = agree(scraped2, segs2)
        if bad:
            fails.append("run 2 prometheus vs report: " + "; ".join(bad))
        notes.append("restart followed (%d segments, %.3f s)" % (nseg2, sum(segs2.values())))

        for kind in ("signal", "low-efficiency"):
            snaps = glob.glob(os.path.join(w, "seg", "snapshots", kind + "-*", "seg-*.gtcap"))
            if not snaps:
                fails.append("no %s snapshot" % kind)
            for snap in snaps:
                r = subprocess.run([gt, "report", snap], capture_output=True, text=True)
                if r.returncode != 0 or "GPU" not in r.stdout:
                    fails.append("report of the snapshot %s: exit %d" % (snap, r.returncode))
        notes.append("signal and low-efficiency snapshots read by report")

        missing = sorted(n for n in dashboard_metrics(dash)
                         if n not in seen)
        if missing:
            fails.append("the dashboard queries metrics the exporter lacks: " + ", ".join(missing))
        if not dashboard_metrics(dash):
            fails.append("the dashboard queries no gaptrace metric")

        mon.send_signal(signal.SIGTERM)
        rc = mon.wait(timeout=30)
        if rc != 0:
            fails.append("monitor exit %d after SIGTERM" % rc)
        tf = open(os.path.join(w, "tf", "gaptrace.prom"), encoding="utf-8").read()
        segs3, _ = by_category_segments(gt, os.path.join(w, "seg"))
        bad = agree(by_category_text(tf), segs3)
        if bad:
            fails.append("textfile vs report: " + "; ".join(bad))
        if metric_values(tf, "gaptrace_target_restarts_total").get("") != 1:
            fails.append("textfile restarts %s" % metric_values(tf, "gaptrace_target_restarts_total"))
        if metric_values(tf, "gaptrace_lost_events_total").get("") != 0:
            notes.append("lost events %s" % metric_values(tf, "gaptrace_lost_events_total"))
    except (RuntimeError, OSError, subprocess.SubprocessError, ValueError, KeyError) as e:
        fails.append(str(e))
    finally:
        for p in (mon, prom):
            if p.poll() is None:
                p.kill()
                p.wait()
        mlog.close()
        plog.close()
    if fails:
        print("FAIL monitor: " + "; ".join(fails) + " (logs in %s)" % w)
        return 1
    print("monitor: " + "; ".join(notes) + "; textfile agrees; dashboard metrics exported")
    return 0


if __name__ == "__main__":
    sys.exit(main())
