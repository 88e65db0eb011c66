# SPDX-License-Identifier: GPL-2.0-only
# Debian 12's own kernels, fetched with apt-get into a cache: sourced by scripts/kernel-btf.sh
# and scripts/vmtest.sh. A kernel is named by its architecture (x86_64, arm64) and its version
# (6.1: the release's kernel, linux-image-<arch>; 6.12: linux-image-6.12-<arch>).

JW_VM_CACHE=${JW_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jankwatch/vm}

# Succeeds when ARCH and VERSION name a kernel this knows.
jw_kernel_check() {
	[[ $1 == x86_64 || $1 == arm64 ]] && [[ $2 == 6.1 || $2 == 6.12 ]]
}

# Debian's name of the architecture: amd64, arm64.
jw_debian_arch() {
	[[ $1 == x86_64 ]] && echo amd64 || echo "$1"
}

# apt-get download PACKAGE... into the current folder, after an apt-get update if an index
# lacks them (a fresh machine, or arm64 just added as an architecture).
jw_apt_download() {
	apt-get download -q "$@" >/dev/null 2>&1 && return 0
	apt-get update -qq >/dev/null 2>&1 || true
	apt-get download -q "$@" >/dev/null 2>&1 || {
		echo "jankwatch: cannot download $* with apt-get" >&2
		return 1
	}
}

# Prints the concrete package a metapackage depends on: linux-image-arm64 -> linux-image-6.1.0-NN-arm64.
jw_kernel_package() {
	local arch=$1 version=$2 deb meta
	deb=$(jw_debian_arch "$arch")
	[[ $version == 6.1 ]] && meta=linux-image-$deb || meta=linux-image-$version-$deb
	apt-cache depends "$meta:$deb" 2>/dev/null | awk '/Depends: linux-image-/ { print $2; exit }'
}

# Fetches the kernel package of ARCH and VERSION and unpacks it once into the cache; prints its
# folder (boot/vmlinuz-*, boot/config-*, lib/modules/*).
jw_kernel_fetch() {
	local arch=$1 version=$2 deb pkg dir
	deb=$(jw_debian_arch "$arch")
	if ! grep -qx "$deb" <(dpkg --print-architecture; dpkg --print-foreign-architectures); then
		echo "jankwatch: $deb is not a dpkg architecture here: run scripts/setup.sh --arch $arch" >&2
		return 1
	fi
	pkg=$(jw_kernel_package "$arch" "$version")
	if [[ -z $pkg ]]; then
		apt-get update -qq >/dev/null 2>&1 || true
		pkg=$(jw_kernel_package "$arch" "$version")
	fi
	if [[ -z $pkg ]]; then
		echo "jankwatch: apt knows no Debian kernel $version for $arch" >&2
		return 1
	fi
	pkg=${pkg%%:*}
	dir=$JW_VM_CACHE/kernel/$pkg
	if [[ ! -d $dir/boot ]]; then
		mkdir -p "$JW_VM_CACHE/debs" "$dir.tmp"
		(cd "$JW_VM_CACHE/debs" && ls "${pkg}"_*.deb >/dev/null 2>&1 ||
			jw_apt_download "$pkg:$deb") || return 1
		dpkg-deb -x "$JW_VM_CACHE/debs/${pkg}"_*.deb "$dir.tmp"
		rm -rf "$dir"
		mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}
