#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""core_fallback_check.py: the BPF object loads on kernels that lack the
fields bpf/core_fixes.bpf.h copes with (issue #25, item 3).  Each case
rewrites this kernel's BTF (/sys/kernel/btf/vmlinux) so that some struct
members are gone, as on a kernel built without their config option, and
loads every program of the object against it through libbpf (the open
option btf_custom_path: CO-RE relocations see the rewritten types, attach
targets the real ones).
A field read without a bpf_core_field_exists guard fails the load there.

  control      the BTF unchanged
  sched_info   no CONFIG_SCHED_INFO: struct sched_info without its fields
  fair_group   no CONFIG_FAIR_GROUP_SCHED: sched_entity::cfs_rq, cfs_rq::rq
  state        before Linux 5.14: task_struct::state, not __state
  uprobes      no CONFIG_UPROBES: task_struct::utask
  all          every one of these at once

Prints a PASS, FAIL or SKIP (this kernel lacks the fields already) line per
case, a failed case's libbpf log in WORK_DIR/CASE.log; exits 1 when any
fails.  Nothing stays loaded.

Usage: core_fallback_check.py BPF_OBJECT WORK_DIR [CASE...]   (root)
"""
import ctypes
import os
import struct
import subprocess
import sys

BTF_MAGIC = 0xEB9F
# Bytes after the 12-byte common header, per BTF kind (vlen: members).
KIND_EXTRA = {
    1: lambda v: 4, 2: lambda v: 0, 3: lambda v: 12, 4: lambda v: 12 * v,
    5: lambda v: 12 * v, 6: lambda v: 8 * v, 7: lambda v: 0, 8: lambda v: 0,
    9: lambda v: 0, 10: lambda v: 0, 11: lambda v: 0, 12: lambda v: 0,
    13: lambda v: 8 * v, 14: lambda v: 4, 15: lambda v: 12 * v, 16: lambda v: 0,
    17: lambda v: 4, 18: lambda v: 0, 19: lambda v: 12 * v,
}
STRUCT, UNION = 4, 5

# (struct, member) -> the member's name on the kernel each case stands for;
# None: the member is gone (renamed to a name no program asks for).
CASES = {
    "control": {},
    "sched_info": {("sched_info", f): None
                   for f in ("pcount", "run_delay", "last_arrival", "last_queued")},
    "fair_group": {("sched_entity", "cfs_rq"): None, ("cfs_rq", "rq"): None},
    "state": {("task_struct", "__state"): "state"},
    "uprobes": {("task_struct", "utask"): None},
}
CASES["all"] = {k: v for c in ("sched_info", "fair_group", "state", "uprobes")
                for k, v in CASES[c].items()}


def rewrite_btf(raw, renames):
    """raw BTF with the members of renames renamed; raises if one is missing."""
    (magic, _ver, _flags, hdr_len, type_off, type_len, str_off,
     str_len) = struct.unpack_from("<HBBIIIII", raw, 0)
    if magic != BTF_MAGIC:
        raise ValueError("not little-endian BTF")
    buf = bytearray(raw)
    strs = hdr_len + str_off
    if strs + str_len != len(raw):
        raise ValueError("BTF strings are not last: cannot append names")

    def name(off):
        end = raw.index(b"\0", strs + off)
        return raw[strs + off:end].decode()

    new_strings = bytearray()
    new_off = {}

    def add_string(s):
        if s not in new_off:
            new_off[s] = str_len + len(new_strings)
            new_strings.extend(s.encode() + b"\0")
        return new_off[s]

    found = set()
    pos, end = hdr_len + type_off, hdr_len + type_off + type_len
    while pos < end:
        name_off, info, _size = struct.unpack_from("<III", raw, pos)
        kind, vlen = (info >> 24) & 0x1F, info & 0xFFFF
        if kind not in KIND_EXTRA:
            raise ValueError(f"unknown BTF kind {kind}")
        if kind in (STRUCT, UNION):
            sname = name(name_off)
            for i in range(vlen):
                moff = pos + 12 + 12 * i
                key = (sname, name(struct.unpack_from("<I", raw, moff)[0]))
                if key in renames:
                    to = renames[key] or f"gt_absent_{key[1]}"
                    struct.pack_into("<I", buf, moff, add_string(to))
                    found.add(key)
        pos += 12 + KIND_EXTRA[kind](vlen)
    missing = set(renames) - found
    if missing and not found:
        raise LookupError(f"this kernel's BTF lacks {sorted(missing)} already")
    if missing:
        raise ValueError(f"this kernel's BTF lacks {sorted(missing)}")
    struct.pack_into("<I", buf, 20, str_len + len(new_strings))
    return bytes(buf + new_strings)


class OpenOpts(ctypes.Structure):
    """struct bpf_object_open_opts up to btf_custom_path (libbpf's stable ABI)."""
    _fields_ = [("sz", ctypes.c_size_t), ("object_name", ctypes.c_char_p),
                ("relaxed_maps", ctypes.c_bool), ("pin_root_path", ctypes.c_char_p),
                ("_attach_prog_fd", ctypes.c_uint32), ("kconfig", ctypes.c_char_p),
                ("btf_custom_path", ctypes.c_char_p)]


def load(obj, btf_path):
    """0 or libbpf's negative error of opening and loading obj against btf_path."""
    lib = ctypes.CDLL("libbpf.so.1", use_errno=True)
    lib.bpf_object__open_file.restype = ctypes.c_void_p
    lib.bpf_object__open_file.argtypes = [ctypes.c_char_p, ctypes.POINTER(OpenOpts)]
    lib.bpf_object__load.argtypes = [ctypes.c_void_p]
    lib.bpf_object__close.argtypes = [ctypes.c_void_p]
    lib.libbpf_get_error.argtypes = [ctypes.c_void_p]
    opts = OpenOpts(sz=ctypes.sizeof(OpenOpts), btf_custom_path=btf_path.encode())
    o = lib.bpf_object__open_file(obj.encode(), ctypes.byref(opts))
    if not o or lib.libbpf_get_error(o):
        return -ctypes.get_errno() or -1
    err = lib.bpf_object__load(o)
    lib.bpf_object__close(o)
    return err


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--load":
        return 0 if load(sys.argv[2], sys.argv[3]) == 0 else 1
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    obj, work = sys.argv[1], sys.argv[2]
    cases = sys.argv[3:] or list(CASES)
    os.makedirs(work, exist_ok=True)
    raw = open("/sys/kernel/btf/vmlinux", "rb").read()
    failed = 0
    for c in cases:
        try:
            btf = rewrite_btf(raw, CASES[c])
        except LookupError as e:
            # This kernel is already the one the case stands for: control covers it.
            print(f"SKIP core fallback {c}: {e}")
            continue
        except ValueError as e:
            print(f"FAIL core fallback {c}: {e}")
            failed += 1
            continue
        path = os.path.join(work, f"vmlinux.{c}.btf")
        with open(path, "wb") as f:
            f.write(btf)
        # A child per case: libbpf's log (stderr) stays with the case it belongs to.
        p = subprocess.run([sys.executable, __file__, "--load", obj, path],
                           capture_output=True, text=True, timeout=120)
        if p.returncode == 0:
            print(f"PASS core fallback {c}: every program loads")
        else:
            why = [l for l in p.stderr.splitlines() if "prog '" in l or "failed" in l]
            print(f"FAIL core fallback {c}: load failed: {(why or ['?'])[0].strip()}")
            with open(os.path.join(work, f"{c}.log"), "w") as f:
                f.write(p.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
