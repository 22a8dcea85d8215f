#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# check_proto_export.py: `gaptrace export --format perfetto-proto` decoded by
# protoc against the minimal Perfetto schema (tests/data/perfetto_min.proto)
# must hold the same tracks and slices as the JSON export of the same capture.
# Usage: check_proto_export.py GAPTRACE CAPTURE WORKDIR [--digest] [--jobs N]
#   --digest: compare the slice multisets by count and an order-free sum of
#   hashes instead of holding them (for captures of a gigabyte or more).
# Prints one summary line; exits 1 with the first differences on a mismatch.
import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROTO = os.path.join(ROOT, "tests", "data", "perfetto_min.proto")
CHUNK = 1 << 16  # packets per protoc run


def fail(msg):
    print("check_proto_export: FAIL: " + msg)
    sys.exit(1)


def us_to_ns(s):
    whole, _, frac = s.partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])


class Slices:
    """A multiset of slices: exact, or a count and an order-free digest."""

    def __init__(self, digest):
        self.digest = digest
        self.c = collections.Counter()
        self.n = 0
        self.sum = 0

    def add(self, key):
        self.n += 1
        if self.digest:
            h = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
            self.sum = (self.sum + int.from_bytes(h, "little")) & ((1 << 64) - 1)
        else:
            self.c[key] += 1


def read_json(path, digest):
    procs, threads, sl = set(), set(), Slices(digest)
    with open(path, encoding="utf-8") as f:
        for line in f:
            # One event a line; the first line holds otherData and the metadata events.
            line = line.strip().lstrip(",")
            if line.endswith("]}"):
                line = line[:-2]
            if not line:
                continue
            if '"traceEvents"' in line:
                line = line[line.index('"traceEvents"') + 14 :].strip()
                evs = json.loads(line + "]", parse_float=str)
            else:
                evs = [json.loads(line, parse_float=str)]
            for e in evs:
                ph = e["ph"]
                if ph == "M" and e["name"] == "process_name":
                    procs.add((e["pid"], e["args"]["name"]))
                elif ph == "M" and e["name"] == "thread_name":
                    threads.add((e["pid"], e["tid"], e["args"]["name"]))
                elif ph == "X":
                    sl.add((e["pid"], e["tid"], e["name"], e["cat"], us_to_ns(e["ts"]),
                            us_to_ns(e["dur"])))
    return procs, threads, sl


def split_packets(path, outdir):
    """Cuts the Trace into chunks of whole packets (each a valid Trace itself)."""
    data = open(path, "rb").read()
    chunks, off, start, n = [], 0, 0, 0

    def varint(i):
        v = s = 0
        while True:
            b = data[i]
            v |= (b & 0x7F) << s
            i += 1
            s += 7
            if not b & 0x80:
                return v, i

    while off < len(data):
        tag, off = varint(off)
        if tag != (1 << 3 | 2):
            fail("byte %d: a Trace holds only packets (field 1, length-delimited), found tag %d"
                 % (off, tag))
        ln, off = varint(off)
        off += ln
        if off > len(data):
            fail("the last packet runs past the end of the file")
        n += 1
        if n % CHUNK == 0 or off == len(data):
            p = os.path.join(outdir, "chunk%06d.pb" % len(chunks))
            with open(p, "wb") as f:
                f.write(data[start:off])
            chunks.append(p)
            start = off
    return chunks, n


def decode(chunk):
    out = chunk[:-3] + ".txt"
    with open(chunk, "rb") as fi, open(out, "wb") as fo:
        r = subprocess.run(["protoc", "--decode=perfetto.protos.Trace", "-I", os.path.dirname(PROTO),
                            PROTO], stdin=fi, stdout=fo, stderr=subprocess.PIPE)
    if r.returncode:
        fail("protoc cannot decode %s: %s" % (chunk, r.stderr.decode().strip()))
    os.unlink(chunk)
    return out


def unquote(s):
    """A protoc text-format string literal (octal and C escapes) as text."""
    s = s[1:-1]
    out, i = bytearray(), 0
    esc = {"n": 10, "t": 9, "r": 13, '"': 34, "'": 39, "\\": 92}
    while i < len(s):
        ch = s[i]
        if ch != "\\":
            out += ch.encode()
            i += 1
        elif s[i + 1] in esc:
            out.append(esc[s[i + 1]])
            i += 2
        elif s[i + 1] == "x":
            out.append(int(s[i + 2 : i + 4], 16))
            i += 4
        else:
            out.append(int(s[i + 1 : i + 4], 8))
            i += 4
    return out.decode("utf-8")


def parse_text(path, st):
    """Walks protoc's text output packet by packet, keeping interned names and track stacks."""
    stack, cur = [], None
    with open(path, encoding="ascii") as f:
        for raw in f:
            line = raw.strip()
            if line.endswith("{"):
                name = line[:-1].strip()
                stack.append(name)
                if stack == ["packet"]:
                    cur = {"names": [], "cats": []}
                elif name in ("event_names", "event_categories"):
                    cur["_intern"] = {}
                continue
            if line == "}":
                name = stack.pop()
                if name in ("event_names", "event_categories"):
                    d = cur.pop("_intern")
                    (st["names"] if name == "event_names" else st["cats"])[d["iid"]] = d["name"]
                elif name == "packet":
                    packet(cur, st)
                continue
            key, _, val = line.partition(": ")
            if key[0].isdigit():
                fail("protoc shows field %s that the minimal schema lacks" % key)
            val = unquote(val) if val.startswith('"') else val
            if "_intern" in cur and stack[-1] in ("event_names", "event_categories"):
                cur["_intern"][key] = int(val) if key == "iid" else val
            else:
                cur["/".join(stack[1:] + [key])] = val


def packet(p, st):
    if "track_descriptor/uuid" in p:
        uuid = int(p["track_descriptor/uuid"])
        if "track_descriptor/process/pid" in p:
            st["procs"].add((int(p["track_descriptor/process/pid"]),
                             p["track_descriptor/process/process_name"]))
        if "track_descriptor/thread/tid" in p:
            pid, tid = int(p["track_descriptor/thread/pid"]), int(p["track_descriptor/thread/tid"])
            st["threads"].add((pid, tid, p["track_descriptor/thread/thread_name"]))
            st["tracks"][uuid] = (pid, tid)
        return
    if "track_event/type" not in p:
        return
    uuid = int(p["track_event/track_uuid"])
    ts = int(p.get("timestamp", "0"))
    if uuid not in st["tracks"]:
        fail("an event on track %d, which no descriptor named" % uuid)
    stk = st["open"].setdefault(uuid, [])
    if p["track_event/type"] == "TYPE_SLICE_BEGIN":
        stk.append((ts, st["names"][int(p["track_event/name_iid"])],
                    st["cats"][int(p["track_event/category_iids"])]))
    elif p["track_event/type"] == "TYPE_SLICE_END":
        if not stk:
            fail("a slice end at %d on track %d with no slice open" % (ts, uuid))
        b, name, cat = stk.pop()
        pid, tid = st["tracks"][uuid]
        st["slices"].add((pid, tid, name, cat, b, ts - b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gaptrace")
    ap.add_argument("capture")
    ap.add_argument("workdir")
    ap.add_argument("--digest", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    js, pb = os.path.join(a.workdir, "x.trace.json"), os.path.join(a.workdir, "x.pftrace")
    t0 = time.time()
    for fmt, out in (("perfetto", js), ("perfetto-proto", pb)):
        r = subprocess.run([a.gaptrace, "export", "-f", fmt, "-o", out, a.capture],
                           stderr=subprocess.PIPE)
        if r.returncode:
            fail("export -f %s: %s" % (fmt, r.stderr.decode().strip()))
    t1 = time.time()
    chunks, npk = split_packets(pb, a.workdir)
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        texts = list(ex.map(decode, chunks))
    t2 = time.time()
    st = {"procs": set(), "threads": set(), "tracks": {}, "open": {}, "names": {}, "cats": {},
          "slices": Slices(a.digest)}
    for t in texts:
        parse_text(t, st)
        os.unlink(t)
    left = sum(len(v) for v in st["open"].values())
    if left:
        fail("%d slices begun and never ended" % left)
    procs, threads, sl = read_json(js, a.digest)
    t3 = time.time()
    if procs != st["procs"]:
        fail("processes differ: JSON only %s, proto only %s"
             % (sorted(procs - st["procs"])[:5], sorted(st["procs"] - procs)[:5]))
    if threads != st["threads"]:
        fail("thread tracks differ: JSON only %s, proto only %s"
             % (sorted(threads - st["threads"])[:5], sorted(st["threads"] - threads)[:5]))
    ps = st["slices"]
    if sl.n != ps.n or sl.sum != ps.sum or sl.c != ps.c:
        extra = ""
        if not a.digest:
            extra = ": JSON only %s, proto only %s" % (list((sl.c - ps.c).items())[:3],
                                                       list((ps.c - sl.c).items())[:3])
        fail("slices differ (JSON %d, proto %d)%s" % (sl.n, ps.n, extra))
    print("check_proto_export: ok: %d processes, %d thread tracks, %d slices equal; "
          "JSON %.1f MB, proto %.1f MB (%d packets); export %.1f s, protoc %.1f s, compare %.1f s"
          % (len(procs), len(threads), sl.n, os.path.getsize(js) / 1e6, os.path.getsize(pb) / 1e6,
             npk, t1 - t0, t2 - t1, t3 - t2))
    os.unlink(js)
    os.unlink(pb)


main()
