#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""attach_check.py GAPTRACE SWITCH_STRESS WORK RUNS

`record -p` on a live, busy target attaches its default uprobes every time
(#10 item 9): switch_stress --mode many --rate 200000 (32 threads on the
machine's CPUs) is attached RUNS times, 0.4 s or 1.0 s after it starts; the
target lives on until the recorder says it is recording, then is killed (a
uprobe's removal waits in the kernel for as long as the load lasts).  Each
capture must list malloc_trim among its attached uprobes (info --format
json), and the recorder must not have refused a probe.  Exit 0 when all
runs attached; the last line is the summary.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

# s from the recorder's start to "recording pid": the kernel's first uprobe
# registration alone took up to ~20 s here while the load ran
ATTACH_TIMEOUT = 30.0
RECORD_TIMEOUT = 20.0  # s for the recorder to stop once the target is gone


def read_lines(stream, lines, start):
    for line in stream:
        lines.append((time.monotonic() - start, line.rstrip("\n")))


def one_run(gt, ss, work, i, delay):
    cap = os.path.join(work, "attach.%d.gtcap" % i)
    tgt = subprocess.Popen([ss, "--mode", "many", "--rate", "200000", "--duration", "60"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rec = None
    try:
        time.sleep(delay)
        if tgt.poll() is not None:
            return False, "the target exited before the attach (status %s)" % tgt.returncode
        start = time.monotonic()
        rec = subprocess.Popen([gt, "record", "-p", str(tgt.pid), "--gpu", "none", "-d", "1s",
                                "--no-progress", "-v", "-o", cap],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               errors="replace")
        lines = []
        reader = threading.Thread(target=read_lines, args=(rec.stderr, lines, start), daemon=True)
        reader.start()
        attach_s = None
        while time.monotonic() - start < ATTACH_TIMEOUT and rec.poll() is None:
            hit = [t for t, l in list(lines) if "gaptrace: recording pid" in l]
            if hit:
                attach_s = hit[0]
                break
            time.sleep(0.02)
        alive = tgt.poll() is None
        # The 1 s recording, then the target goes (and the kernel's detach waits end).
        time.sleep(1.3)
        tgt.kill()
        tgt.wait()
        try:
            rc = rec.wait(timeout=RECORD_TIMEOUT)
        except subprocess.TimeoutExpired:
            rec.kill()
            rec.wait()
            return False, "the recorder did not stop %.0f s after the target was killed" % \
                RECORD_TIMEOUT
        reader.join(timeout=5)
        text = "\n".join(l for _, l in lines)
        with open(os.path.join(work, "attach.%d.log" % i), "w") as f:
            f.write("".join("%7.3f %s\n" % (t, l) for t, l in lines))
        if attach_s is None:
            return False, "no 'recording pid' line within %.0f s (attach.%d.log): %s" % (
                ATTACH_TIMEOUT, i, lines[-1][1] if lines else "no output")
        if not alive:
            return False, "the target was not alive when the recorder attached"
        if rc != 0:
            return False, "record exited %d: %s" % (rc, text[-300:])
        refused = [l for _, l in lines if "cannot attach" in l or "exited while gaptrace" in l]
        if refused:
            return False, "refused on a live target: %s" % refused[0]
        info = subprocess.run([gt, "info", "--format", "json", cap], capture_output=True,
                              text=True)
        try:
            attached = json.loads(info.stdout).get("uprobes_attached")
        except ValueError:
            return False, "info --format json is not JSON: %s" % info.stdout[:200]
        if attached is None:
            return False, "the capture does not say which uprobes were attached"
        if "malloc_trim" not in attached:
            return False, "malloc_trim not attached (attached: %s)" % ",".join(attached)
        return True, "attached in %.2f s: %s" % (attach_s, ",".join(attached))
    finally:
        if tgt.poll() is None:
            tgt.kill()
            tgt.wait()
        if rec is not None and rec.poll() is None:
            rec.send_signal(signal.SIGKILL)
            rec.wait()


def main():
    if len(sys.argv) != 5:
        print(__doc__.strip().splitlines()[0])
        return 2
    gt, ss, work, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    os.makedirs(work, exist_ok=True)
    good, times = 0, []
    for i in range(runs):
        delay = 0.4 if i % 2 == 0 else 1.0
        okay, what = one_run(gt, ss, work, i, delay)
        print("run %d (attach %.1f s after the target's start): %s: %s" %
              (i, delay, "ok" if okay else "FAILED", what), flush=True)
        if okay:
            good += 1
            times.append(float(what.split()[2]))
    span = " (attach took %.2f-%.2f s)" % (min(times), max(times)) if times else ""
    print("malloc_trim uprobe attached in %d of %d attaches to a live switch_stress --mode many "
          "--rate 200000%s" % (good, runs, span))
    return 0 if good == runs else 1


if __name__ == "__main__":
    sys.exit(main())
