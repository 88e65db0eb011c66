#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Prints the path of the BTF of Debian's kernel for ARCH (arm64, x86_64) and VERSION (6.1, the
# default, or 6.12), taken from the kernel package itself: what a cross build makes its
# vmlinux.h from. The package is fetched with apt-get into the cache that scripts/vmtest.sh
# uses (JW_VM_CACHE, default ~/.cache/jankwatch/vm); the BTF blob is cut out of the kernel
# image (its header says where it ends), so no debug package is needed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
VM_CACHE=${JW_VM_CACHE:-$HOME/.cache/jankwatch/vm}
# shellcheck source=vm/apt.sh
. "$here/vm/apt.sh"
# shellcheck source=vm/kernel.sh
. "$here/vm/kernel.sh"

die() {
	echo "kernel-btf: $*" >&2
	exit 1
}

(($# >= 1 && $# <= 2)) && [[ $1 == x86_64 || $1 == arm64 ]] && [[ ${2:-6.1} == 6.1 || ${2:-6.1} == 6.12 ]] || {
	echo "usage: scripts/kernel-btf.sh x86_64|arm64 [6.1|6.12]" >&2
	exit 2
}
deb=$1
[[ $deb == x86_64 ]] && deb=amd64
if ! grep -qx "$deb" <(dpkg --print-architecture; dpkg --print-foreign-architectures); then
	die "$deb is not a dpkg architecture here: run scripts/setup.sh --arch $1"
fi
kernel_fetch "$deb" "${2:-6.1}"
out=$KERNEL_ROOT/vmlinux.btf
if [[ ! -s $out ]]; then
	python3 "$here/vm/image_btf.py" "$KERNEL_IMAGE" "$out.tmp"
	mv "$out.tmp" "$out"
fi
echo "$out"
