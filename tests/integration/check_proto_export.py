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
import hashlib
import json
import multiprocessing
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROTO = os.path.join(ROOT, "tests", "data", "perfetto_min.proto")
CHUNK = int(os.environ.get("GT_PROTO_CHUNK", 1 << 16))  # packets per protoc run


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

    def merge(self, o):
        self.n += o.n
        self.sum = (self.sum + o.sum) & ((1 << 64) - 1)
        self.c.update(o.c)

    def add(self, key):
        self.n += 1
        if self.digest:
            h = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
            self.sum = (self.sum + int.from_bytes(h, "little")) & ((1 << 64) - 1)
        else:
            self.c[key] += 1


def json_part(args):
    """Processes, threads and slices of the JSON lines in [lo, hi) (one event a line)."""
    path, lo, hi, digest = args
    procs, threads, sl = set(), set(), Slices(digest)
    with open(path, "rb") as f:
        f.seek(lo)
        if lo:
            f.readline()
        while f.tell() <= hi:
            raw = f.readline()
            if not raw:
                break
            line = raw.decode("utf-8").strip().lstrip(",")
            if line.endswith("]}"):
                line = line[:-2]
            if not line:
                continue
            # The first line holds otherData and the metadata events.
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


def read_json(path, digest, pool, jobs):
    size = os.path.getsize(path)
    step = max(size // (4 * jobs) + 1, 1 << 20)
    parts = [(path, lo, min(lo + step, size) - 1, digest) for lo in range(0, size, step)]
    procs, threads, sl = set(), set(), Slices(digest)
    for p, t, s in pool.imap(json_part, parts):
        procs |= p
        threads |= t
        sl.merge(s)
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
    """protoc's text of one chunk, and the interned names defined in it."""
    out = chunk[:-3] + ".txt"
    with open(chunk, "rb") as fi, open(out, "wb") as fo:
        r = subprocess.run(["protoc", "--decode=perfetto.protos.Trace", "-I", os.path.dirname(PROTO),
                            PROTO], stdin=fi, stdout=fo, stderr=subprocess.PIPE)
    if r.returncode:
        return out, "protoc cannot decode %s: %s" % (chunk, r.stderr.decode().strip()), None
    os.unlink(chunk)
    names, cats, cur, key = {}, {}, None, None
    with open(out, encoding="ascii") as f:
        for line in f:
            line = line.strip()
            if line in ("event_names {", "event_categories {"):
                cur, key = {}, line.split()[0]
            elif cur is not None and line == "}":
                (names if key == "event_names" else cats)[int(cur["iid"])] = unquote(cur["name"])
                cur = None
            elif cur is not None:
                k, _, v = line.partition(": ")
                cur[k] = v
    return out, None, (names, cats)


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


def parse_text(args):
    """
    One chunk's packets: its tracks, its slices matched inside the chunk, and
    per track the ends it could not match (they close slices of earlier
    chunks) and the begins left open, for the caller to join in order.
    """
    path, names, cats, digest = args
    st = {"procs": set(), "threads": set(), "tracks": {}, "open": {}, "ends": {},
          "slices": Slices(digest), "err": None, "used": set()}
    stack, cur = [], None
    with open(path, encoding="ascii") as f:
        for raw in f:
            line = raw.strip()
            if line.endswith("{"):
                stack.append(line[:-1].strip())
                if len(stack) == 1:
                    cur = {}
                continue
            if line == "}":
                stack.pop()
                if not stack:
                    packet(cur, st, names, cats)
                continue
            key, _, val = line.partition(": ")
            if key[0].isdigit():
                st["err"] = "protoc shows field %s that the minimal schema lacks" % key
                break
            if "interned_data" not in stack:
                cur["/".join(stack[1:] + [key])] = unquote(val) if val.startswith('"') else val
    os.unlink(path)
    return st


def packet(p, st, names, cats):
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
    stk = st["open"].setdefault(uuid, [])
    if p["track_event/type"] == "TYPE_SLICE_BEGIN":
        stk.append((ts, names[int(p["track_event/name_iid"])],
                    cats[int(p["track_event/category_iids"])]))
    elif not stk:
        st["ends"].setdefault(uuid, []).append(ts)
    else:
        b, name, cat = stk.pop()
        st["slices"].add(track_key(uuid) + (name, cat, b, ts - b))
    st["used"].add(uuid)


def track_key(uuid):
    """gaptrace's thread track uuid is pid << 32 | tid; the caller checks the descriptors agree."""
    return (uuid >> 32, uuid & 0xFFFFFFFF)


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
    pool = multiprocessing.Pool(a.jobs)
    names, cats, texts = {}, {}, []
    for out, err, interned in pool.imap(decode, chunks):
        if err:
            fail(err)
        names.update(interned[0])
        cats.update(interned[1])
        texts.append(out)
    t2 = time.time()
    st = {"procs": set(), "threads": set(), "tracks": {}, "open": {}, "used": set()}
    ps = Slices(a.digest)
    for cs in pool.imap(parse_text, [(t, names, cats, a.digest) for t in texts]):
        if cs["err"]:
            fail(cs["err"])
        st["procs"] |= cs["procs"]
        st["threads"] |= cs["threads"]
        st["tracks"].update(cs["tracks"])
        st["used"] |= cs["used"]
        # Slices still open from earlier chunks end first, then this chunk's open ones wait.
        for uuid, ends in cs["ends"].items():
            stk = st["open"].get(uuid, [])
            for ts in ends:
                if not stk:
                    fail("a slice end at %d on track %d with no slice open" % (ts, uuid))
                b, name, cat = stk.pop()
                ps.add(track_key(uuid) + (name, cat, b, ts - b))
        for uuid, begins in cs["open"].items():
            st["open"].setdefault(uuid, []).extend(begins)
        ps.merge(cs["slices"])
    left = sum(len(v) for v in st["open"].values())
    if left:
        fail("%d slices begun and never ended" % left)
    for uuid in st["used"]:
        if st["tracks"].get(uuid) != track_key(uuid):
            fail("events on track %d, which no thread descriptor names as %s"
                 % (uuid, track_key(uuid)))
    procs, threads, sl = read_json(js, a.digest, pool, a.jobs)
    pool.close()
    t3 = time.time()
    if procs != st["procs"]:
        fail("processes differ: JSON only %s, proto only %s"
             % (sorted(procs - st["procs"])[:5], sorted(st["procs"] - procs)[:5]))
    if threads != st["threads"]:
        fail("thread tracks differ: JSON only %s, proto only %s"
             % (sorted(threads - st["threads"])[:5], sorted(st["threads"] - threads)[:5]))
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
