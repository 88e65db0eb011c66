#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Makes the release files: for x86_64 and arm64, the static jankwatch (cmake -DJW_STATIC=ON: no
# shared library, no interpreter; it starts on any Linux userland) stripped, in
# jankwatch-VERSION-linux-ARCH.tar.gz with its man page, scripts/make-btf.sh and what it needs
# (the BPF objects it reduces a kernel's BTF against), and README.txt (docs/device.md's first
# section); and SHA256SUMS of the tarballs. Builds build-static/ and build-arm64-static/ (configured when
# missing; scripts/setup.sh --arch arm64 installs what they need).
#   scripts/dist.sh [--out DIR] [--arch x86_64|arm64]...   (default: dist/, both)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
cd "$SRC"

die()
{
	echo "dist: $*" >&2
	exit 1
}

out=$SRC/dist
arches=()
while (($#)); do
	case $1 in
	--out)
		(($# >= 2)) || die "--out needs a directory"
		out=$2
		shift 2
		;;
	--arch)
		[[ ${2:-} == x86_64 || ${2:-} == arm64 ]] || die "--arch takes x86_64 or arm64"
		arches+=("$2")
		shift 2
		;;
	-h | --help)
		sed -n '3,9p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) die "unknown argument '$1' (--out DIR, --arch x86_64|arm64)" ;;
	esac
done
((${#arches[@]})) || arches=(x86_64 arm64)
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(sed -n 's/^project(jankwatch VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[[ -n $version ]] || die "no version in CMakeLists.txt's project()"

# build ARCH: the static build of ARCH, brought up to date; prints its directory.
build()
{
	local dir=build-static
	local -a configure=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DJW_STATIC=ON)
	if [[ $1 == arm64 ]]; then
		dir=build-arm64-static
		configure+=(-DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake)
	fi
	if [[ ! -f $dir/CMakeCache.txt ]]; then
		cmake -S . -B "$dir" "${configure[@]}" >"$out/build-$1.log" 2>&1 ||
			die "cannot configure $dir (log: $out/build-$1.log)"
	fi
	cmake --build "$dir" -j"$(nproc)" --target jankwatch >>"$out/build-$1.log" 2>&1 ||
		die "cannot build $dir (log: $out/build-$1.log)"
	rm -f "$out/build-$1.log"
	echo "$dir"
}

# strip_for ARCH: the strip of ARCH's binutils.
strip_for()
{
	[[ $1 == arm64 ]] && echo aarch64-linux-gnu-strip || echo strip
}

tarballs=()
for arch in "${arches[@]}"; do
	dir=$(build "$arch")
	name=jankwatch-$version-linux-$arch
	stage=$(mktemp -d)
	trap 'rm -rf "$stage"' EXIT
	mkdir -p "$stage/$name/bpf" "$stage/$name/vm"
	"$(strip_for "$arch")" -o "$stage/$name/jankwatch" "$dir/jankwatch"
	if readelf -d "$stage/$name/jankwatch" 2>/dev/null | grep -q NEEDED ||
		readelf -l "$stage/$name/jankwatch" | grep -q INTERP; then
		die "$dir/jankwatch is not static"
	fi
	cp docs/jankwatch.8 "$stage/$name/"
	cp scripts/make-btf.sh "$stage/$name/"
	cp scripts/vm/image_btf.py "$stage/$name/vm/"
	cp "$dir"/bpf/jankwatch.bpf.o "$dir"/bpf/jankwatch_compat.bpf.o "$stage/$name/bpf/"
	sed -n '/^## One file per architecture/,/^## /p' docs/device.md | sed '$d' \
		>"$stage/$name/README.txt"
	[[ -s $stage/$name/README.txt ]] ||
		die "docs/device.md has no \"## One file per architecture\" section"
	tar -C "$stage" --owner=0 --group=0 --sort=name -czf "$out/$name.tar.gz" "$name"
	size=$(stat -c %s "$stage/$name/jankwatch")
	rm -rf "$stage"
	trap - EXIT
	tarballs+=("$name.tar.gz")
	echo "dist: $out/$name.tar.gz ($(stat -c %s "$out/$name.tar.gz") bytes; the stripped" \
		"jankwatch $size bytes)"
done
(cd "$out" && sha256sum "${tarballs[@]}" >SHA256SUMS)
echo "dist: $out/SHA256SUMS"
