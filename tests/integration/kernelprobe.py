# SPDX-License-Identifier: GPL-2.0-only
"""What the running kernel allows, found without jankwatch: the tests' own answer to compare
jankwatch's choices with. fexit_attaches(): whether an fexit program loads on a wait system call's
function and attaches (BPF trampolines), by the bpf() system call itself, the function's id read
from the kernel's BTF."""
import ctypes
import os
import platform
import struct

BTF_PATH = "/sys/kernel/btf/vmlinux"
BTF_KIND_FUNC = 12
# Bytes after a type's 12-byte header, by kind: fixed, and per vlen item.
_EXTRA = {1: (4, 0), 3: (12, 0), 4: (0, 12), 5: (0, 12), 6: (0, 8), 13: (0, 8), 14: (4, 0),
          15: (0, 12), 17: (4, 0), 19: (0, 12)}
_SYSCALL = {"x86_64": (321, "__x64_sys_"), "aarch64": (280, "__arm64_sys_")}
BPF_PROG_LOAD, BPF_RAW_TRACEPOINT_OPEN = 5, 17
BPF_PROG_TYPE_TRACING, BPF_TRACE_FEXIT = 26, 25


def btf_func_id(name, path=BTF_PATH):
    """The BTF id of function @name in the kernel's BTF, or None."""
    try:
        data = open(path, "rb").read()
    except OSError:
        return None
    magic, _, _, hdr_len, type_off, type_len, str_off, _ = struct.unpack_from("<HBBIIIII", data)
    if magic != 0xEB9F:
        return None
    types, strs = hdr_len + type_off, hdr_len + str_off
    want = name.encode()
    pos, tid = types, 1
    while pos < types + type_len:
        name_off, info, _ = struct.unpack_from("<III", data, pos)
        kind, vlen = (info >> 24) & 0x1F, info & 0xFFFF
        if kind == BTF_KIND_FUNC:
            end = data.index(b"\0", strs + name_off)
            if data[strs + name_off:end] == want:
                return tid
        fixed, per = _EXTRA.get(kind, (0, 0))
        pos += 12 + fixed + per * vlen
        tid += 1
    return None


def _bpf(nr, cmd, attr):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    buf = ctypes.create_string_buffer(bytes(attr), len(attr))
    return libc.syscall(ctypes.c_long(nr), ctypes.c_long(cmd), buf, ctypes.c_uint(len(attr)))


def fexit_attaches():
    """Whether an fexit program on the first wait system call's function of this machine's
    architecture loads and attaches (detached at once)."""
    arch = _SYSCALL.get(platform.machine())
    if not arch:
        return False
    nr, prefix = arch
    fid = next((i for i in (btf_func_id(prefix + n) for n in ("poll", "select", "epoll_wait",
                                                               "pselect6", "ppoll"))
                if i), None)
    if not fid:
        return False
    # r0 = 0; exit
    insns = ctypes.create_string_buffer(bytes([0xB7, 0, 0, 0, 0, 0, 0, 0,
                                               0x95, 0, 0, 0, 0, 0, 0, 0]), 16)
    lic = ctypes.create_string_buffer(b"GPL")
    attr = bytearray(128)
    struct.pack_into("<IIQQ", attr, 0, BPF_PROG_TYPE_TRACING, 2, ctypes.addressof(insns),
                     ctypes.addressof(lic))
    struct.pack_into("<I", attr, 68, BPF_TRACE_FEXIT)
    struct.pack_into("<I", attr, 108, fid)
    prog = _bpf(nr, BPF_PROG_LOAD, attr)
    if prog < 0:
        return False
    try:
        attr = bytearray(16)
        struct.pack_into("<QI", attr, 0, 0, prog)
        link = _bpf(nr, BPF_RAW_TRACEPOINT_OPEN, attr)
        if link < 0:
            return False
        os.close(link)
        return True
    finally:
        os.close(prog)


if __name__ == "__main__":
    print("fexit attaches" if fexit_attaches() else "no fexit")
