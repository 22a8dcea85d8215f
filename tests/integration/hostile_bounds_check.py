#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""hostile_bounds_check: objects a traced program maps, built to bloat,
stall or crash the root recorder that parses them (issue #24 rows 6-10, 15),
each recorded for a few seconds while the recorder's peak RSS (VmHWM) and
open fds are read from /proc.  A case passes when the recorder exits 0
with an END block, within 5 s of -d, under 512 MiB and 1,000 fds, and
says which bound cut (and, where a case has one, the symbol or inline name
it must still find is in the capture).

  minidebug  .gnu_debugdata: an xz stream of 1 GiB of zeros (one 64 MiB
             LZMA2 block repeated; ~100 KiB)
  zdwarf     SHF_COMPRESSED .debug_info inflating 1 KiB-deflate blocks to 1 GiB
  names      65,535 local function symbols at one address, one 64 KiB name
  usdt       16 MB of .note.stapsdt, distinct gaptrace:* names
  scopes     .debug_info with 300,000 nested lexical blocks around the
             code; 'scopes8' nests 8 and must name the inlined call
  objects    3,000 distinct memfd ELF objects mapped and run

Usage: hostile_bounds_check.py GAPTRACE WORKDIR [CASE...]
Prints one PASS/FAIL line per case; exits 1 if any failed.
"""
import lzma
import os
import signal
import struct
import subprocess
import sys
import time
import zlib

RSS_MAX_KB = 512 * 1024
FDS_MAX = 1000
DURATION_S = 3
# Past -d: the stop itself, the symbols and inline chains read at the stop.
STOP_SLACK_S = 5

LIB_C = r"""
#include <time.h>
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
__attribute__((noinline)) void bomb_spin(double secs)
{
	volatile unsigned long x = 0;
	double end = now() + secs;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			x += i;
}
"""

TARGET_C = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	void (*spin)(double);

	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	spin = (void (*)(double))dlsym(h, "bomb_spin");
	printf("ready\n");
	fflush(stdout);
	spin(atof(argv[2]));
	return 0;
}
"""

# Maps N memfd copies of an object and runs the leaf function of each in turn.
OBJECTS_C = r"""
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "rb");
	int n = atoi(argv[2]);
	unsigned long off = strtoul(argv[3], NULL, 0);
	void (**fn)(void) = calloc(n, sizeof(*fn));
	static char buf[1 << 20];
	size_t len = fread(buf, 1, sizeof(buf), f);

	for (int i = 0; i < n; i++) {
		int fd = memfd_create("obj", MFD_CLOEXEC);
		char *p;

		if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
			return 1;
		p = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			return 1;
		close(fd);
		fn[i] = (void (*)(void))(p + off);
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		for (int i = 0; i < n; i++)
			fn[i]();
}
"""

LEAF_C = r"""
void obj_leaf(void)
{
	volatile unsigned long x = 0;

	for (int i = 0; i < 300000; i++)
		x += i;
}
"""


def run(cmd, **kw):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)


def cc(work, name, src, out, flags):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(src)
    run(["gcc", "-O1", "-fno-omit-frame-pointer"] + flags + [path, "-o", out])


# ---- ELF64 little-endian, just enough to patch section flags and symbols ----

def cstr(data, off):
    return bytes(data[off:data.index(b"\0", off)]).decode("latin-1")


def sections(data):
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    out = []
    for i in range(shnum):
        hdr = shoff + i * shentsize
        f = struct.unpack_from("<IIQQQQIIQQ", data, hdr)
        out.append({"hdr": hdr, "name_off": f[0], "type": f[1], "flags": f[2],
                    "offset": f[4], "size": f[5], "link": f[6], "entsize": f[9]})
    strs = out[shstrndx]["offset"]
    for s in out:
        s["name"] = cstr(data, strs + s["name_off"])
    return out


def section(data, name):
    return next(s for s in sections(data) if s["name"] == name)


# ---- the bombs ----

def xz_bomb(blocks, block_mib=64):
    """One xz stream of blocks x block_mib MiB of zeros, one LZMA2 block repeated."""
    raw = lzma.compress(bytes(block_mib << 20), format=lzma.FORMAT_RAW,
                        filters=[{"id": lzma.FILTER_LZMA2, "dict_size": 1 << 20,
                                  "preset": 0}])
    # Block header: size, flags (one filter), LZMA2 (0x21), 1 property byte: 1 MiB dictionary.
    hdr = bytes([0, 0x00, 0x21, 0x01, 16])
    hdr += bytes(-(len(hdr) + 4) % 4)
    hdr = bytes([(len(hdr) + 4) // 4 - 1]) + hdr[1:]
    hdr += struct.pack("<I", zlib.crc32(hdr))
    block = hdr + raw + bytes(-len(raw) % 4)
    unpadded = len(hdr) + len(raw)

    def varint(n):
        out = b""
        while n >= 0x80:
            out += bytes([(n & 0x7f) | 0x80])
            n >>= 7
        return out + bytes([n])

    index = b"\0" + varint(blocks) + (varint(unpadded) + varint(block_mib << 20)) * blocks
    index += bytes(-len(index) % 4)
    index += struct.pack("<I", zlib.crc32(index))
    flags = b"\0\0"  # no check
    head = b"\xfd7zXZ\0" + flags + struct.pack("<I", zlib.crc32(flags))
    back = struct.pack("<I", len(index) // 4 - 1) + flags
    foot = struct.pack("<I", zlib.crc32(back)) + back + b"YZ"
    return head + block * blocks + index + foot


def zlib_bomb(chunks, chunk_mib=16):
    """A zlib stream of chunks x chunk_mib MiB of zeros: one flushed deflate run repeated."""
    zeros = bytes(chunk_mib << 20)
    co = zlib.compressobj(9)
    first = co.compress(zeros) + co.flush(zlib.Z_FULL_FLUSH)
    adler = 1
    for _ in range(chunks):
        adler = zlib.adler32(zeros, adler)
    # The header, the byte-aligned run repeated, an empty final block, the checksum.
    return first[:2] + first[2:] * chunks + b"\x03\x00" + struct.pack(">I", adler)


def build_lib(work, name, extra_src=None):
    """LIB_C as a shared object, extra_src (assembly) in the same unit: its aliases need it."""
    out = os.path.join(work, name + ".so")
    path = os.path.join(work, name + ".c")
    asm = os.path.join(work, name + ".s")
    with open(path, "w") as f:
        f.write(LIB_C)
    run(["gcc", "-O1", "-fno-omit-frame-pointer", "-fPIC", "-S", path, "-o", asm])
    if extra_src:
        with open(asm, "a") as f:
            f.write(extra_src)
    run(["gcc", "-shared", "-Wl,-z,noexecstack", asm, "-o", out])
    return out


def lib_minidebug(work):
    lib = build_lib(work, "minidebug")
    run(["strip", "--strip-all", lib])
    bomb = os.path.join(work, "bomb.xz")
    with open(bomb, "wb") as f:
        f.write(xz_bomb(16))
    run(["objcopy", "--add-section", ".gnu_debugdata=" + bomb, lib])
    return lib, "bounds.minidebuginfo", "bomb_spin", None


def lib_zdwarf(work):
    lib = build_lib(work, "zdwarf")
    blob = os.path.join(work, "zdebug.bin")
    size = 1 << 30
    with open(blob, "wb") as f:
        # Elf64_Chdr: ELFCOMPRESS_ZLIB, reserved, ch_size, ch_addralign.
        f.write(struct.pack("<IIQQ", 1, 0, size, 1) + zlib_bomb(size >> 24))
    run(["objcopy", "--add-section", ".debug_info=" + blob, lib])
    data = bytearray(open(lib, "rb").read())
    s = section(data, ".debug_info")
    struct.pack_into("<Q", data, s["hdr"] + 8, s["flags"] | 0x800)  # SHF_COMPRESSED
    open(lib, "wb").write(data)
    return lib, "bounds.compressed_dwarf", "bomb_spin", None


def lib_names(work, n=65535, name_len=65536):
    long_name = "L" * (name_len - 1)
    asm = [".text", ".set %s, bomb_spin" % long_name, ".type %s, @function" % long_name,
           ".size %s, 64" % long_name]
    for i in range(n - 1):
        asm += [".set a%d, bomb_spin" % i, ".type a%d, @function" % i, ".size a%d, 64" % i]
    lib = build_lib(work, "names", "\n".join(asm) + "\n")
    data = bytearray(open(lib, "rb").read())
    symtab = section(data, ".symtab")
    strtab = sections(data)[symtab["link"]]
    syms = []
    long_off = None
    for off in range(symtab["offset"], symtab["offset"] + symtab["size"], 24):
        st_name = struct.unpack_from("<I", data, off)[0]
        name = cstr(data, strtab["offset"] + st_name)
        if name == long_name:
            long_off = st_name
        elif name.startswith("a") and name[1:].isdigit():
            syms.append(off)
    # Every alias shares the one 64 KiB name.
    for off in syms:
        struct.pack_into("<I", data, off, long_off)
    open(lib, "wb").write(data)
    # .dynsym's exported bomb_spin outranks the local aliases.
    return lib, "bounds.symbol_names", "bomb_spin", None


def lib_usdt(work, size=16 << 20):
    lib = build_lib(work, "usdt")
    notes = bytearray()
    i = 0
    while len(notes) < size:
        desc = struct.pack("<QQQ", 0, 0, 0) + b"gaptrace\0" + b"p%07d\0" % i + b"\0"
        desc += bytes(-len(desc) % 4)
        notes += struct.pack("<III", 8, len(desc), 3) + b"stapsdt\0" + desc
        i += 1
    blob = os.path.join(work, "notes.bin")
    with open(blob, "wb") as f:
        f.write(notes)
    run(["objcopy", "--add-section", ".note.stapsdt=" + blob, lib])
    assert section(open(lib, "rb").read(), ".note.stapsdt")["type"] == 7  # SHT_NOTE
    return lib, "bounds.usdt_notes", "bomb_spin", None


def scopes_asm(depth):
    """DWARF 4: a CU, bomb_spin, depth nested lexical blocks, an inlined call inside."""
    span = "\t.quad bomb_spin\n\t.quad 0x10000\n"
    name_lo_hi = "\t.uleb128 0x03\n\t.uleb128 0x08\n\t.uleb128 0x11\n\t.uleb128 0x01\n" \
        "\t.uleb128 0x12\n\t.uleb128 0x07\n"
    return (".section .debug_abbrev,\"\",@progbits\n.Labbrev:\n"
            # 1 compile_unit, 2 subprogram: name, low_pc, high_pc (data8: a length)
            "\t.uleb128 1\n\t.uleb128 0x11\n\t.byte 1\n" + name_lo_hi + "\t.byte 0, 0\n"
            "\t.uleb128 2\n\t.uleb128 0x2e\n\t.byte 1\n" + name_lo_hi + "\t.byte 0, 0\n"
            # 3 lexical_block: low_pc, high_pc
            "\t.uleb128 3\n\t.uleb128 0x0b\n\t.byte 1\n"
            "\t.uleb128 0x11\n\t.uleb128 0x01\n\t.uleb128 0x12\n\t.uleb128 0x07\n\t.byte 0, 0\n"
            # 4 inlined_subroutine: abstract_origin (ref4), low_pc, high_pc
            "\t.uleb128 4\n\t.uleb128 0x1d\n\t.byte 0\n"
            "\t.uleb128 0x31\n\t.uleb128 0x13\n\t.uleb128 0x11\n\t.uleb128 0x01\n"
            "\t.uleb128 0x12\n\t.uleb128 0x07\n\t.byte 0, 0\n"
            # 5 the inlined function's abstract subprogram: name, inline
            "\t.uleb128 5\n\t.uleb128 0x2e\n\t.byte 0\n"
            "\t.uleb128 0x03\n\t.uleb128 0x08\n\t.uleb128 0x20\n\t.uleb128 0x0b\n\t.byte 0, 0\n"
            "\t.byte 0\n"
            ".section .debug_info,\"\",@progbits\n.Linfo:\n"
            "\t.long .Linfo_end - .Linfo_start\n.Linfo_start:\n"
            "\t.value 4\n\t.long .Labbrev\n\t.byte 8\n"
            "\t.uleb128 1\n\t.string \"deep.c\"\n" + span +
            ".Labstract:\n\t.uleb128 5\n\t.string \"deep_inline\"\n\t.byte 3\n"
            "\t.uleb128 2\n\t.string \"bomb_spin\"\n" + span +
            ".rept %d\n\t.uleb128 3\n%s.endr\n" % (depth, span) +
            "\t.uleb128 4\n\t.long .Labstract - .Linfo\n" + span +
            ".rept %d\n\t.byte 0\n.endr\n" % depth +
            "\t.byte 0\n\t.byte 0\n.Linfo_end:\n"
            ".section .debug_aranges,\"\",@progbits\n"
            "\t.long .Lar_end - .Lar_start\n.Lar_start:\n"
            "\t.value 2\n\t.long .Linfo\n\t.byte 8\n\t.byte 0\n\t.long 0\n" + span +
            "\t.quad 0\n\t.quad 0\n.Lar_end:\n")


def lib_scopes(work, depth=300000):
    lib = build_lib(work, "scopes%d" % depth, scopes_asm(depth))
    if depth > 1024:
        return lib, "bounds.dwarf_scopes", "bomb_spin", None
    return lib, None, "bomb_spin", "deep_inline"


# ---- running the recorder and watching it ----

def watch(proc, deadline):
    """Peak VmHWM (kB) and fd count of proc until it exits or deadline passes."""
    hwm = fds = 0
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            with open("/proc/%d/status" % proc.pid) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        hwm = max(hwm, int(line.split()[1]))
            fds = max(fds, len(os.listdir("/proc/%d/fd" % proc.pid)))
        except (FileNotFoundError, ProcessLookupError):
            pass
        time.sleep(0.05)
    return hwm, fds


def record(gt, work, name, target_cmd):
    cap = os.path.join(work, name + ".gtcap")
    for p in (cap, cap + ".old"):
        if os.path.exists(p):
            os.unlink(p)
    target = subprocess.Popen(target_cmd, stdout=subprocess.PIPE, text=True)
    if target.stdout.readline().strip() != "ready":
        target.kill()
        return None, "target did not start"
    errpath = os.path.join(work, name + ".stderr")
    with open(errpath, "w") as err:
        t0 = time.monotonic()
        rec = subprocess.Popen([gt, "record", "--no-progress", "-p", str(target.pid),
                                "-d", "%ds" % DURATION_S, "-o", cap],
                               stdout=subprocess.DEVNULL, stderr=err)
        hwm, fds = watch(rec, t0 + DURATION_S + 60)
        if rec.poll() is None:
            rec.send_signal(signal.SIGKILL)
        rc = rec.wait()
        secs = time.monotonic() - t0
    target.kill()
    target.wait()
    return {"cap": cap, "rc": rc, "secs": secs, "hwm": hwm, "fds": fds,
            "stderr": open(errpath).read()}, None


def check(gt, res, key, symbol, inline):
    why = []
    if res["rc"] != 0:
        why.append("rc %d" % res["rc"])
    if res["secs"] > DURATION_S + STOP_SLACK_S:
        why.append("took %.1f s for -d %ds" % (res["secs"], DURATION_S))
    if res["hwm"] > RSS_MAX_KB:
        why.append("RSS %d MiB" % (res["hwm"] // 1024))
    if res["fds"] > FDS_MAX:
        why.append("%d fds" % res["fds"])
    if key and key not in res["stderr"]:
        why.append("no '%s' warning" % key)
    info = subprocess.run([gt, "info", res["cap"]], capture_output=True, text=True)
    if info.returncode != 0 or "stop_reason" not in info.stdout + info.stderr and \
            "stop" not in info.stdout:
        why.append("capture unreadable or without END")
    if symbol:
        dump = subprocess.run([gt, "dump", "-s", res["cap"]], capture_output=True,
                              text=True).stdout
        if symbol not in dump:
            why.append("no frame named %s" % symbol)
    # The INLINES block holds the names as they are (no command prints them without gaps).
    if inline and inline.encode() not in open(res["cap"], "rb").read():
        why.append("no inlined frame %s" % inline)
    return why


def case_lib(gt, work, name, builder):
    lib, key, symbol, inline = builder(work)
    target = os.path.join(work, "hostile_target")
    if not os.path.exists(target):
        cc(work, "hostile_target.c", TARGET_C, target, ["-ldl"])
    return record(gt, work, name, [target, lib, "600"]), key, symbol, inline


def case_objects(gt, work, n=3000):
    leaf = os.path.join(work, "leaf.so")
    cc(work, "leaf.c", LEAF_C, leaf, ["-shared", "-fPIC"])
    data = open(leaf, "rb").read()
    dynsym = section(data, ".dynsym")
    dynstr = sections(data)[dynsym["link"]]
    off = None
    for o in range(dynsym["offset"], dynsym["offset"] + dynsym["size"], 24):
        st_name, _, _, _, st_value, _ = struct.unpack_from("<IBBHQQ", data, o)
        if cstr(data, dynstr["offset"] + st_name) == "obj_leaf":
            off = st_value
    prog = os.path.join(work, "hostile_objects")
    cc(work, "hostile_objects.c", OBJECTS_C, prog, [])
    return record(gt, work, "objects", [prog, leaf, str(n), hex(off)]), \
        "bounds.objects_closed", "obj_leaf", None


CASES = {
    "minidebug": lambda gt, w: case_lib(gt, w, "minidebug", lib_minidebug),
    "zdwarf": lambda gt, w: case_lib(gt, w, "zdwarf", lib_zdwarf),
    "names": lambda gt, w: case_lib(gt, w, "names", lib_names),
    "usdt": lambda gt, w: case_lib(gt, w, "usdt", lib_usdt),
    "scopes": lambda gt, w: case_lib(gt, w, "scopes", lib_scopes),
    "scopes8": lambda gt, w: case_lib(gt, w, "scopes8", lambda d: lib_scopes(d, 8)),
    "objects": case_objects,
}


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    gt, work = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or list(CASES)
    work = os.path.join(work, "hostile-bounds")
    os.makedirs(work, exist_ok=True)
    failed = 0
    for name in names:
        (res, err), key, symbol, inline = CASES[name](gt, work)
        if err:
            why = [err]
        else:
            why = check(gt, res, key, symbol, inline)
        figures = "" if err else "%.1f s, peak RSS %d MiB, %d fds" % (
            res["secs"], res["hwm"] // 1024, res["fds"])
        if why:
            failed += 1
            print("FAIL hostile %s: %s (%s)" % (name, "; ".join(why), figures))
        else:
            print("PASS hostile %s: %s" % (name, figures))
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
