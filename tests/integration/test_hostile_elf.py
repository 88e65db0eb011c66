# SPDX-License-Identifier: GPL-2.0-only
"""ELF and DWARF from a hostile binary: `jankwatch symbolize` names a capture's stacks from a
file found by build-id, which whoever controls the debug directory (or the binary) may have
broken. Each broken copy of the program (tests/targets/jw_chain, which needs its CFI to be
unwound) must neither crash nor hang jankwatch: it exits 0 within the time limit, with one JSON
event for each report captured, and every stack log it writes is well-formed.

Broken copies, each keeping the build-id note so that it is the file used: cut to a quarter;
the section header table pointed past the end of the file; a section header table whose sizes
and offsets are garbage; random bytes over .eh_frame and .eh_frame_hdr (the CFI); random bytes
over the DWARF sections; a symbol table whose entries point anywhere; a CFI entry whose length
loops back onto itself.
"""
import random
import struct
import subprocess

from jwtest import *

CHAIN = os.path.join(TARGETS, "jw_chain")


def sections(data):
    """{name: (header offset, sh_offset, sh_size)} of an ELF64 little-endian file."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx][4]
    out = {}
    for i, h in enumerate(heads):
        name = data[strtab + h[0]:data.index(b"\0", strtab + h[0])].decode()
        out[name] = (shoff + i * shentsize, h[4], h[5])
    return out


def scribble(data, names, rng):
    for n in names:
        if n in SECS:
            _, off, size = SECS[n]
            data[off:off + size] = bytes(rng.getrandbits(8) for _ in range(size))


def broken_copies(data):
    rng = random.Random(1234)
    note_end = SECS[".note.gnu.build-id"][1] + SECS[".note.gnu.build-id"][2]
    out = {}
    out["cut to a quarter"] = bytearray(data[:max(note_end, len(data) // 4)])
    d = bytearray(data)
    struct.pack_into("<Q", d, 0x28, len(data) * 16)
    out["section headers past the end"] = d
    d = bytearray(data)
    for name, (hdr, _, _) in SECS.items():
        if name and name != ".note.gnu.build-id":
            struct.pack_into("<QQ", d, hdr + 24, rng.getrandbits(63), rng.getrandbits(63))
    out["section offsets and sizes garbage"] = d
    d = bytearray(data)
    scribble(d, [".eh_frame", ".eh_frame_hdr"], rng)
    out["CFI random"] = d
    d = bytearray(data)
    scribble(d, [n for n in SECS if n.startswith(".debug_")], rng)
    out["DWARF random"] = d
    d = bytearray(data)
    if ".symtab" in SECS:
        _, off, size = SECS[".symtab"]
        for i in range(off + 24, off + size, 24):
            struct.pack_into("<QQ", d, i + 8, rng.getrandbits(64), rng.getrandbits(64))
    out["symbols anywhere"] = d
    d = bytearray(data)
    _, off, size = SECS[".eh_frame"]
    # The first CIE's length made to cover nothing but itself, then the next entry's too.
    struct.pack_into("<I", d, off, 0)
    struct.pack_into("<I", d, off + 4, 0xffffffff)
    out["CFI length loops"] = d
    return out


require_bpf()
live = LogDir()
work = tempfile.mkdtemp(prefix="jw-elf-")
raw = os.path.join(work, "capture.raw")
binary = os.path.join(work, "jw_chain_copy")
shutil.copy(CHAIN, binary)
data = open(binary, "rb").read()
SECS = sections(data)
note = data[SECS[".note.gnu.build-id"][1]:][:SECS[".note.gnu.build-id"][2]]
build_id = note[16:].hex()

rc, events = capture_raw(binary, ["--ms", "200", "--every", "500"], live.path, raw)
check(rc == 0 and len(events) >= 2, f"live: {len(events)} events, exit {rc}")
os.unlink(binary)

debug_dir = os.path.join(work, "debug")
os.makedirs(os.path.join(debug_dir, ".build-id", build_id[:2]))
found_at = os.path.join(debug_dir, ".build-id", build_id[:2], build_id[2:])
for what, copy in broken_copies(data).items():
    with open(found_at, "wb") as f:
        f.write(copy)
    out = os.path.join(work, what.replace(" ", "_"))
    try:
        p = subprocess.run([JW_BIN, "symbolize", raw, "--debug-dir", debug_dir, "--log-dir", out],
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        fail(f"{what}: jankwatch symbolize hangs")
    # A broken debug file costs names, never the reports: every one is written again.
    check(p.returncode == 0, f"{what}: exits 0, no crash ({p.returncode}: "
          f"{p.stderr.strip()[-200:]})")
    lines = p.stdout.splitlines()
    check(len(lines) == len(events) and
          all(json.loads(l)["event"] == "MAIN_THREAD_JANK" for l in lines),
          f"{what}: {len(lines)} events of the {len(events)} captured, each one JSON line")
    logs = [n for n in (os.listdir(out) if os.path.isdir(out) else []) if n.startswith("stack-")]
    if what in ("CFI random", "DWARF random", "CFI length loops"):
        # The symbol table is whole: the broken file was the one read.
        check(logs and all("/jw_chain_copy(level" in open(os.path.join(out, n)).read()
                           for n in logs), f"{what}: its frames are named from the broken file")
    for name in logs:
        if not name.startswith("stack-"):
            continue
        head, tree = open(os.path.join(out, name), errors="replace").read().split("\n\n", 1)
        check(all(re.fullmatch(r"[a-z_]+: .*", l) for l in head.splitlines()) and
              all(re.match(r"\s*\d+ #\d\d ", l) or l.startswith("wchan: ")
                  for l in tree.splitlines() if l.strip()),
              f"{what}: {name} is well-formed")
shutil.rmtree(work, ignore_errors=True)
live.cleanup()
