#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Makes the BTF file jankwatch needs on a kernel built without BTF of its own (--btf, or
# /var/lib/jankwatch/btf/<release>.btf), from what a kernel build leaves:
#   - a boot image whose kernel carries BTF (vmlinuz, bzImage, Image, Image.gz), or a Debian
#     kernel package (.deb) holding one: the blob is cut out of it (scripts/vm/image_btf.py);
#   - a vmlinux ELF file: its .BTF section, or where it has none, its DWARF encoded by pahole
#     (Debian's -dbg kernel packages, an Android build's vmlinux);
#   - a BTF file (/sys/kernel/btf/vmlinux of a kernel of the same build, BTFHub's).
# Then reduced to the types jankwatch's BPF programs use (bpftool gen min_core_btf, against the
# two builds of the object in build/bpf/), a few KiB instead of megabytes; --full keeps it whole.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

usage()
{
	echo "usage: scripts/make-btf.sh [--full] [--objects DIR] KERNEL OUT.btf" >&2
	echo "  KERNEL: a boot image, a kernel .deb, a vmlinux (with .BTF or DWARF), or a BTF file" >&2
	exit 2
}

die()
{
	echo "make-btf: $*" >&2
	exit 1
}

full=0
# The BPF objects: beside this script in a release tarball (scripts/dist.sh), else the build's.
objects=$here/../build/bpf
[[ -d $here/bpf ]] && objects=$here/bpf
while (($#)); do
	case $1 in
	--full) full=1; shift ;;
	--objects) (($# >= 2)) || usage; objects=$2; shift 2 ;;
	-h | --help) usage ;;
	-*) echo "make-btf: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
(($# == 2)) || usage
kernel=$1 out=$2
[[ -r $kernel ]] || die "cannot read $kernel"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# is_btf FILE: whether FILE is a raw BTF blob (magic 0xeb9f, little-endian).
is_btf()
{
	[[ $(od -An -tx1 -N2 "$1" | tr -d ' ') == 9feb ]]
}

# is_elf FILE: whether FILE is an ELF file.
is_elf()
{
	[[ $(od -An -c -N4 "$1" | tr -d ' ') == 177ELF ]]
}

# elf_has_section FILE NAME
elf_has_section()
{
	readelf -S -W "$1" 2>/dev/null | grep -q " $2 "
}

btf=$work/full.btf
if [[ $kernel == *.deb ]]; then
	dpkg-deb -x "$kernel" "$work/deb" || die "cannot unpack $kernel"
	image=$(find "$work/deb/boot" -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | head -n 1)
	[[ -n $image ]] || die "$kernel has no /boot/vmlinuz-*"
	python3 "$here/vm/image_btf.py" "$image" "$btf" ||
		die "$image carries no BTF: make it from the kernel's vmlinux with DWARF instead"
elif is_btf "$kernel"; then
	cp "$kernel" "$btf"
elif is_elf "$kernel" && elf_has_section "$kernel" .BTF; then
	cp "$kernel" "$btf"
elif is_elf "$kernel" && elf_has_section "$kernel" .debug_info; then
	command -v pahole >/dev/null ||
		die "pahole is needed to encode $kernel's DWARF as BTF (apt-get install dwarves)"
	pahole --btf_encode_detached="$btf" "$kernel" >"$work/pahole.log" 2>&1 ||
		die "pahole could not encode $kernel: $(tail -n 1 "$work/pahole.log")"
elif is_elf "$kernel"; then
	die "$kernel has neither BTF nor DWARF (a stripped vmlinux: use the -dbg package's)"
else
	python3 "$here/vm/image_btf.py" "$kernel" "$btf" ||
		die "$kernel carries no BTF: make it from the kernel's vmlinux with DWARF instead"
fi

if ((full)); then
	bpftool btf dump file "$btf" format raw >/dev/null 2>&1 || die "$kernel gave no readable BTF"
	if is_btf "$btf"; then
		cp "$btf" "$out"
	else
		# An ELF file's .BTF section, as a raw blob.
		objcopy -O binary --only-section=.BTF "$btf" "$out" || die "cannot copy .BTF out of $kernel"
	fi
else
	objs=()
	for o in jankwatch.bpf.o jankwatch_compat.bpf.o; do
		[[ -s $objects/$o ]] || die "no $objects/$o: build jankwatch first, or give --objects DIR"
		objs+=("$objects/$o")
	done
	bpftool gen min_core_btf "$btf" "$out" "${objs[@]}" >"$work/min.log" 2>&1 ||
		die "bpftool gen min_core_btf failed: $(tail -n 1 "$work/min.log")"
fi
echo "make-btf: $out ($(stat -c %s "$out") bytes)"
