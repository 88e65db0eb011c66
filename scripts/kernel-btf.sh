#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Prints the path of the BTF of Debian's kernel for ARCH (arm64, x86_64) and VERSION (6.1, the
# default, or 6.12), taken from the kernel package itself: what a cross build makes its
# vmlinux.h from. The package is fetched with apt-get into the cache that scripts/vmtest.sh
# uses (JW_VM_CACHE, default ~/.cache/jankwatch/vm); the BTF blob is cut out of the kernel
# image (its header says where it ends), so no debug package is needed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=kernel/kernel.sh
. "$here/kernel/kernel.sh"

usage() {
	echo "usage: scripts/kernel-btf.sh x86_64|arm64 [6.1|6.12]" >&2
	exit 2
}
(($# >= 1 && $# <= 2)) || usage
arch=$1
version=${2:-6.1}
jw_kernel_check "$arch" "$version" || usage

dir=$(jw_kernel_fetch "$arch" "$version")
out=$dir/vmlinux.btf
if [[ ! -s $out ]]; then
	python3 "$here/kernel/image_btf.py" "$dir"/boot/vmlinuz-* "$out.tmp"
	mv "$out.tmp" "$out"
fi
echo "$out"
