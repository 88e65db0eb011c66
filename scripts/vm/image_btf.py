#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Cuts the BTF of a kernel out of its boot image: image_btf.py VMLINUZ OUT.

A kernel built with CONFIG_DEBUG_INFO_BTF carries its BTF blob (what /sys/kernel/btf/vmlinux
shows) in its image. The blob starts with a fixed header (magic 0xeb9f, version 1, header
length 24, then the type and string sections' offsets and lengths), which says where it ends.
The image may be plain (arm64's Image), gzip-compressed, or an x86 bzImage, whose payload is
an xz or zstd stream somewhere inside (zstd through the zstd command).
"""
import gzip
import lzma
import shutil
import subprocess
import struct
import sys

HEADER = struct.Struct("<HBBIIIII")


def find_btf(image):
    at = 0
    while True:
        at = image.find(b"\x9f\xeb\x01\x00\x18\x00\x00\x00", at)
        if at < 0:
            return None
        _, _, _, _, type_off, type_len, str_off, str_len = HEADER.unpack_from(image, at)
        end = at + 24 + str_off + str_len
        if type_off == 0 and str_off == type_len and type_len and end <= len(image):
            return image[at:end]
        at += 1


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: image_btf.py VMLINUZ OUT")
    image = open(sys.argv[1], "rb").read()
    if image[:2] == b"\x1f\x8b":
        image = gzip.decompress(image)
    btf = find_btf(image)
    xz = image.find(b"\xfd7zXZ\x00")
    if btf is None and xz >= 0:
        btf = find_btf(lzma.LZMADecompressor().decompress(image[xz:]))
    zst = image.find(b"\x28\xb5\x2f\xfd")
    if btf is None and zst >= 0 and shutil.which("zstd"):
        out = subprocess.run(["zstd", "-dcq"], input=image[zst:], capture_output=True).stdout
        btf = find_btf(out)
    if btf is None:
        sys.exit(f"image_btf.py: no BTF in {sys.argv[1]} (a kernel without CONFIG_DEBUG_INFO_BTF?)")
    open(sys.argv[2], "wb").write(btf)


if __name__ == "__main__":
    main()
