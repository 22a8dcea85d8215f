#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""hostile_usdt_check.py: USDT and uprobe links at scale, and stops that
always end (issue #24 rows 11-14, items 3-4).  Prints a PASS or FAIL line
per case; exits 1 when any case fails.

The targets are one C program generated and built here three times (gcc,
-O0 so that every gpu_op site passes its arguments from the same stack
slots, one argument spec for all; unit_begin site k passes the constant
1000 + k, a spec of its own): with the 300 unit_begin sites, with the
2,000 gpu_op sites, and with neither for the storm.

  specs    300 unit_begin sites, each with an argument spec of its own (more
           than libbpf's default 256 spec ids), fired every 20 ms: no crash,
           rc 0 and every site's id (1000 + k) in the capture.
  storm    150 children forked 10 ms apart, each living 300 ms and firing a
           gpu_op (device 1, op pid << 32 | i) every 5 ms: every child has ops
           in the capture, the recorder's fds stay <= 1000.
  fdlimit  the storm under a 1,024-fd limit (soft and hard): still every
           child caught.
  sites    one object with 2,000 gpu_op sites: fds <= 1000, the recorder
           exits within 10 s of -d's end.
  signals  the 2,000-site target stopped by SIGINT, then by SIGTERM: the
           recorder exits within 5 s of the signal with a complete capture.

Every run is under a hard timeout, so a regression FAILs instead of hanging.

Usage: hostile_usdt_check.py GAPTRACE USDT_INCLUDE_DIR WORK_DIR [CASE...]
"""
import os
import re
import resource
import signal
import subprocess
import sys
import time

NSPEC = 300
NSITES = 2000
NCHILD = 150
FD_MAX = 1000

PROG = r"""
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace-usdt.h"

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void fire_specs(void)
{
SPEC_SITES
}

static void fire_sites(uint64_t op)
{
	uint32_t dev = 3, stream = 0;
	uint64_t t = now_ns();

	(void)dev, (void)stream, (void)t, (void)op;
SITE_LINES
}

static void storm(int n, int gap_ms, int life_ms)
{
	for (int c = 0; c < n; c++) {
		pid_t p = fork();

		if (p == 0) {
			uint64_t end = now_ns() + (uint64_t)life_ms * 1000000ull;
			uint64_t pid = (uint64_t)getpid();

			for (uint64_t i = 0; now_ns() < end; i++) {
				uint64_t t = now_ns();

				GAPTRACE_GPU_OP(1, 0, pid << 32 | i, t, t);
				usleep(5000);
			}
			_exit(0);
		}
		if (p > 0)
			printf("child %d\n", (int)p);
		usleep((useconds_t)gap_ms * 1000);
	}
	fflush(stdout);
	while (wait(NULL) > 0)
		;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	double secs = argc > 2 ? atof(argv[2]) : 1;
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);

	if (!strcmp(mode, "storm")) {
		storm(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
		return 0;
	}
	/* Let the recorder attach before the first firing counts. */
	usleep(300000);
	for (uint64_t k = 0; now_ns() < end; k++) {
		if (!strcmp(mode, "specs"))
			fire_specs();
		else
			fire_sites(k);
		usleep(!strcmp(mode, "specs") ? 20000 : 200000);
	}
	return 0;
}
"""


def build(cupti, work, name, nspec, nsites):
    """The target with nspec distinct-spec unit_begin sites and nsites gpu_op sites."""
    src = os.path.join(work, f"{name}.c")
    exe = os.path.join(work, name)
    specs = "\n".join(f"\tGAPTRACE_UNIT_BEGIN({1000 + k});" for k in range(nspec))
    sites = "\n".join("\tGAPTRACE_GPU_OP(dev, stream, op, t, t);" for _ in range(nsites))
    text = PROG.replace("SPEC_SITES", specs).replace("SITE_LINES", sites)
    with open(src, "w") as f:
        f.write(text)
    subprocess.run(["timeout", "300", "gcc", "-O0", "-g", "-I", cupti, src, "-o", exe],
                   check=True)
    return exe


def fd_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def record(gt, work, name, args, cmd, stop=None, limit=None, deadline=120):
    """Runs gaptrace record; stop = (signal, seconds after start) or None.
    Returns (rc, capture, peak fds, seconds from the stop to the exit, log)."""
    cap = os.path.join(work, f"hostile-{name}.gtcap")
    log = os.path.join(work, f"hostile-{name}.log")
    out = os.path.join(work, f"hostile-{name}.out")

    def pre():
        os.setsid()
        if limit:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    with open(out, "w") as o, open(log, "w") as e:
        p = subprocess.Popen([gt, "record", "--no-progress", "-o", cap] + args + ["--"] + cmd,
                             stdout=o, stderr=e, preexec_fn=pre)
        t0 = time.monotonic()
        peak, stopped, rc = 0, None, None
        while rc is None:
            now = time.monotonic()
            if now - t0 > deadline:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                return -9, cap, peak, None, log
            if stop and stopped is None and now - t0 >= stop[1]:
                p.send_signal(stop[0])
                stopped = now
            peak = max(peak, fd_count(p.pid))
            time.sleep(0.05)
            rc = p.poll()
        if stop:
            took = time.monotonic() - stopped if stopped else None
        else:
            took = None
    return rc, cap, peak, took, log


def dump(gt, cap):
    r = subprocess.run(["timeout", "120", gt, "dump", cap], capture_output=True, text=True)
    return r.stdout


def complete(gt, cap):
    """The capture has its END block (info reads it back)."""
    r = subprocess.run(["timeout", "60", gt, "info", cap], capture_output=True, text=True)
    return r.returncode == 0 and re.search(r"^capture: .*, complete\)$", r.stdout, re.M) is not None


def tail(log):
    try:
        with open(log) as f:
            lines = f.read().splitlines()
        return " | ".join(lines[-3:])
    except OSError:
        return ""


def case_specs(gt, exe, work):
    rc, cap, peak, _, log = record(gt, work, "specs", [], [exe, "specs", "2"], deadline=90)
    if rc != 0:
        return False, f"specs: {NSPEC} distinct specs: rc {rc} (want 0): {tail(log)}"
    ids = set(int(m) for m in re.findall(r" unit +tid \d+ begin (\d+)", dump(gt, cap)))
    want = set(range(1000, 1000 + NSPEC))
    got = len(ids & want)
    ok = got == NSPEC
    return ok, f"specs: {got} of {NSPEC} distinct-spec unit_begin sites in the capture, rc 0"


def storm_run(gt, exe, work, name, limit):
    rc, cap, peak, _, log = record(gt, work, name, [], [exe, "storm", str(NCHILD), "10", "300"],
                                   limit=limit, deadline=120)
    if rc != 0:
        return False, f"{name}: rc {rc}: {tail(log)}"
    with open(os.path.join(work, f"hostile-{name}.out")) as f:
        kids = set(int(x) for x in re.findall(r"child (\d+)", f.read()))
    ops = re.findall(r" gpu_op .* dev 1 stream \d+ op (\d+) ", dump(gt, cap))
    caught = set(int(o) >> 32 for o in ops) & kids
    ok = len(kids) == NCHILD and len(caught) == len(kids) and peak <= FD_MAX
    lim = f" under a {limit}-fd limit" if limit else ""
    return ok, (f"{name}: {len(caught)} of {len(kids)} short-lived children caught{lim}, "
                f"peak {peak} fds (<= {FD_MAX})")


def case_sites(gt, exe, work):
    t0 = time.monotonic()
    rc, cap, peak, _, log = record(gt, work, "sites", ["-d", "4s"], [exe, "sites", "30"],
                                   deadline=120)
    took = time.monotonic() - t0 - 4
    ops = len(re.findall(r" gpu_op .* dev 3 ", dump(gt, cap))) if rc == 0 else 0
    ok = rc == 0 and took <= 10 and peak <= FD_MAX and ops >= NSITES
    return ok, (f"sites: {NSITES} gpu_op sites: exit {took:.1f} s after -d 4s (<= 10), "
                f"peak {peak} fds (<= {FD_MAX}), {ops} ops, rc {rc}")


def case_signals(gt, exe, work):
    msgs, ok = [], True
    for sig in (signal.SIGINT, signal.SIGTERM):
        name = f"sig{sig.name[3:].lower()}"
        rc, cap, peak, took, log = record(gt, work, name, [], [exe, "sites", "60"],
                                          stop=(sig, 4), deadline=90)
        good = rc == 0 and took is not None and took <= 5 and complete(gt, cap)
        ok &= good
        t = f"{took:.1f} s" if took is not None else "never"
        msgs.append(f"{sig.name} -> exit in {t} (rc {rc})")
    return ok, f"signals: {NSITES}-site target: " + ", ".join(msgs) + " (<= 5 s)"


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    gt, cupti, work = sys.argv[1:4]
    cases = sys.argv[4:] or ["specs", "storm", "fdlimit", "sites", "signals"]
    os.makedirs(work, exist_ok=True)
    # Apart, so that the storm's children carry an ordinary program's few sites.
    spec_exe = build(cupti, work, "hostile_specs", NSPEC, 0)
    exe = build(cupti, work, "hostile_sites", 0, NSITES)
    storm_exe = build(cupti, work, "hostile_storm", 0, 0)
    fails = 0
    for c in cases:
        if c == "specs":
            ok, msg = case_specs(gt, spec_exe, work)
        elif c == "storm":
            ok, msg = storm_run(gt, storm_exe, work, "storm", None)
        elif c == "fdlimit":
            ok, msg = storm_run(gt, storm_exe, work, "fdlimit", 1024)
        elif c == "sites":
            ok, msg = case_sites(gt, exe, work)
        elif c == "signals":
            ok, msg = case_signals(gt, exe, work)
        else:
            print(f"unknown case {c}", file=sys.stderr)
            return 2
        fails += not ok
        print(("PASS " if ok else "FAIL ") + msg, flush=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
