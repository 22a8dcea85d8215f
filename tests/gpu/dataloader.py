#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""dataloader.py: a PyTorch training loop that waits for its DataLoader
(issue #13).  Worker processes (forked by torch's DataLoader, persistent)
spend --work-ms of CPU per sample; the loop copies each batch to the GPU and
runs a few matmuls, so the GPU sits idle while the loop waits in next() for
the workers.  The loop measures that wait itself: every next() is bracketed
by CLOCK_MONOTONIC reads (time.monotonic_ns) and written to --truth as JSON
(schema gaptrace.dataloader-truth/1: the loop's pid and tid, the workers'
pids and thread ids, and one [start_ns, end_ns] window per step).  gaptrace should explain
each gap as the workers' CPU time, reached through the critical path (the
loop is woken by a worker), in launch mode and when attached after the
workers started.  Prints READY once the workers run and the GPU is warm.

Usage: dataloader.py --seconds S --truth FILE [--work-ms 12] [--workers 2]
"""
import argparse
import json
import os
import sys
import threading
import time

import torch


class Samples(torch.utils.data.Dataset):
    def __init__(self, work_ns):
        self.work_ns = work_ns

    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        # Pure CPU in the worker: no syscall, no sleep.
        end = time.monotonic_ns() + self.work_ns
        x = 0
        while time.monotonic_ns() < end:
            x += 1
        return torch.full((256,), float(i % 1000))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--work-ms", type=float, default=12.0)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    dl = torch.utils.data.DataLoader(Samples(int(a.work_ms * 1e6)), batch_size=1,
                                     num_workers=a.workers, persistent_workers=True,
                                     prefetch_factor=1)
    it = iter(dl)
    w = torch.randn(1024, 1024, device="cuda")
    for _ in range(8):  # warm: CUDA context, cuBLAS handles, the workers
        b = next(it).cuda()
        y = w @ w
        torch.cuda.synchronize()
    workers = [p.pid for p in getattr(it, "_workers", [])]
    print("READY %d workers %s" % (os.getpid(), workers), flush=True)
    windows = []
    end = time.monotonic_ns() + int(a.seconds * 1e9)
    while time.monotonic_ns() < end:
        t0 = time.monotonic_ns()
        b = next(it)
        t1 = time.monotonic_ns()
        x = b.cuda()
        for _ in range(4):
            y = w @ w
        y += x.sum()
        torch.cuda.synchronize()
        windows.append((t0, t1))
    tids = []
    for pid in workers:
        try:
            tids += [int(t) for t in os.listdir("/proc/%d/task" % pid)]
        except OSError:
            pass
    with open(a.truth, "w") as f:
        json.dump({"schema": "gaptrace.dataloader-truth/1", "pid": os.getpid(),
                   "tid": threading.get_native_id(), "workers": workers, "worker_tids": tids,
                   "work_ms": a.work_ms, "windows": windows}, f)
    print("dataloader: %d steps, median wait %.2f ms" % (
        len(windows), sorted(t1 - t0 for t0, t1 in windows)[len(windows) // 2] / 1e6 if windows else 0),
        flush=True)
    sys.stdout.flush()
    os._exit(0)  # the persistent workers' shutdown is not what is measured


if __name__ == "__main__":
    main()
