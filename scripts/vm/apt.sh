# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Sourced by scripts/vmtest.sh: Debian packages of any architecture, downloaded with
# `apt-get download` into the cache and unpacked there with `dpkg-deb -x`.
# Needs: VM_CACHE (the cache directory), die().

# apt_stanzas ARCH PKG...: caches the candidate stanzas of PKG:ARCH... (apt-cache show, ~1 s a
# call, so one call for all that are not cached since the package index last changed) in
# VM_CACHE/apt/ARCH/PKG; a package apt does not know gets an empty file.
apt_stanzas()
{
	local arch=$1 dir="$VM_CACHE/apt/$1" pkg
	local -a want=()
	shift
	mkdir -p "$dir"
	for pkg in "$@"; do
		[[ -e $dir/$pkg && $dir/$pkg -nt /var/lib/apt/lists ]] || want+=("$pkg")
	done
	((${#want[@]})) || return 0
	for pkg in "${want[@]}"; do
		: >"$dir/$pkg"
	done
	apt-cache show --no-all-versions "${want[@]/%/:$arch}" 2>/dev/null |
		awk -v dir="$dir" '/^Package: / { out = dir "/" $2 } out { print > out }' || true
}

# apt_field PKG ARCH FIELD: FIELD of the candidate version of PKG:ARCH, empty when none.
apt_field()
{
	apt_stanzas "$2" "$1"
	sed -n "s/^$3: //p" "$VM_CACHE/apt/$2/$1" | head -n 1
}

# apt_depends PKG ARCH: the packages PKG:ARCH depends on (Depends and Pre-Depends), one a
# line, the first of each set of alternatives, without versions or architecture qualifiers.
apt_depends()
{
	{ apt_field "$1" "$2" Pre-Depends; apt_field "$1" "$2" Depends; } |
		tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*)//' -e 's/:any//' -e 's/[[:space:]]//g' |
		sed '/^$/d'
}

# apt_installed PKG ARCH: whether PKG:ARCH is installed on this machine.
apt_installed()
{
	local status
	status=$(dpkg-query -W -f='${db:Status-Status}' "$1:$2" 2>/dev/null || true)
	[[ $status == installed ]]
}

# apt_download PKG ARCH: prints the path of PKG:ARCH's .deb in the cache, downloading it if it
# is not there; runs `apt-get update` once when the download fails (a stale or missing index).
apt_download()
{
	local pkg=$1 arch=$2 dir="$VM_CACHE/debs" version deb_arch deb log
	mkdir -p "$dir"
	version=$(apt_field "$pkg" "$arch" Version)
	deb_arch=$(apt_field "$pkg" "$arch" Architecture)
	if [[ -n $version ]]; then
		deb="$dir/${pkg}_${version//:/%3a}_${deb_arch}.deb"
		[[ -s $deb ]] && { echo "$deb"; return 0; }
	fi
	log="$dir/apt-$pkg-$arch.log"
	if ! (cd "$dir" && apt-get download "$pkg:$arch") >"$log" 2>&1; then
		apt-get update -qq >>"$log" 2>&1 ||
			die "apt-get update failed while fetching $pkg:$arch (see $log)"
		(cd "$dir" && apt-get download "$pkg:$arch") >>"$log" 2>&1 ||
			die "cannot download $pkg:$arch with apt-get: $(grep -m1 '^E:' "$log" || tail -n 1 "$log")"
		version=$(apt_field "$pkg" "$arch" Version)
		deb_arch=$(apt_field "$pkg" "$arch" Architecture)
		deb="$dir/${pkg}_${version//:/%3a}_${deb_arch}.deb"
	fi
	[[ -s $deb ]] || die "apt-get download $pkg:$arch left no $deb"
	echo "$deb"
}

# apt_unpack PKG ARCH: prints the directory where PKG:ARCH's candidate .deb is unpacked,
# downloading and unpacking it first if needed.
apt_unpack()
{
	local deb root
	deb=$(apt_download "$1" "$2") || exit 1
	root="$VM_CACHE/root/$(basename "$deb" .deb)"
	if [[ ! -e $root/.unpacked ]]; then
		rm -rf "$root"
		mkdir -p "$root"
		dpkg-deb -x "$deb" "$root" || die "cannot unpack $deb with dpkg-deb"
		touch "$root/.unpacked"
	fi
	echo "$root"
}
