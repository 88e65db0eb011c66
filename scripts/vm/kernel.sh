# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Sourced by scripts/vmtest.sh: Debian's kernel package of one series and architecture, resolved
# from its metapackage and unpacked in the cache, and the modules the VM loads from it. The
# series: Debian 12's own 6.1 and 6.12 (the system's package index), Debian 11's 5.10 and
# unstable's newest (private indexes, apt.sh).
# Needs: apt.sh, die().

# The kernel series, as --kernel names them.
# shellcheck disable=SC2034 # read by vmtest.sh
KERNEL_SERIES=(5.10 6.1 6.12 unstable)

# Modules the VM needs that Debian may build as modules: 9p over virtio for the shares, the
# virtio-rng entropy source. Built-in ones are skipped, dependencies come first.
KERNEL_WANTED_MODULES=(virtio_pci 9pnet_virtio 9p virtio_rng)

# kernel_metapackage DEB_ARCH SERIES: the metapackage that names the series' current kernel.
kernel_metapackage()
{
	case $2 in
	5.10 | 6.1 | unstable) echo "linux-image-$1" ;;
	6.12) echo "linux-image-6.12-$1" ;;
	*) die "no kernel series $2" ;;
	esac
}

# kernel_index SERIES: the package index that has the series (APT_INDEX): empty for the system's
# (Debian 12), bullseye for 5.10 (with its security updates), sid for unstable.
kernel_index()
{
	case $1 in
	5.10) echo bullseye ;;
	unstable) echo sid ;;
	*) echo ;;
	esac
}

# kernel_package DEB_ARCH SERIES: the concrete linux-image-<release> package of the series,
# from the metapackage's Depends; refreshes the package index once when it names none.
kernel_package()
{
	local meta pkg
	meta=$(kernel_metapackage "$1" "$2")
	pkg=$(apt_depends "$meta" "$1" | grep -m 1 '^linux-image-' || true)
	if [[ -z $pkg ]]; then
		apt_update /dev/null || die "apt-get update failed while resolving $meta:$1"
		pkg=$(apt_depends "$meta" "$1" | grep -m 1 '^linux-image-' || true)
	fi
	[[ -n $pkg ]] || die "cannot resolve $meta:$1 to a kernel package (no linux-image- dependency)"
	echo "$pkg"
}

# kernel_candidates DEB_ARCH META: the kernel packages of every version of metapackage META in
# APT_INDEX's private index, newest first (for bullseye: its security updates, then its last
# point release), each after its -unsigned build when the index has one; one a line.
kernel_candidates()
{
	local pkg
	apt_private_ready
	for pkg in $(apt_run apt-cache show "$2:$1" 2>/dev/null | sed -n 's/^Depends: //p' |
		tr ',' '\n' | sed -n 's/^ *\(linux-image-[^ ]*\).*/\1/p'); do
		[[ -n $(apt_field "$pkg-unsigned" "$1" Version) ]] && echo "$pkg-unsigned"
		echo "$pkg"
	done
}

# kernel_private_package DEB_ARCH SERIES: the kernel package of a series of a private index: the
# first of kernel_candidates whose packages the archive serves (a mirror may lack the newest of
# an architecture), saying so when it is not the newest.
kernel_private_package()
{
	local meta pkg part newest=
	meta=$(kernel_metapackage "$1" "$2")
	for pkg in $(kernel_candidates "$1" "$meta"); do
		newest=${newest:-${pkg%-unsigned}}
		for part in $(kernel_parts "$1" "$pkg"); do
			apt_fetchable "$part" "$1" || continue 2
		done
		[[ ${pkg%-unsigned} == "$newest" ]] ||
			echo "vmtest: the archive does not serve $newest:$1; using $pkg" >&2
		echo "$pkg"
		return 0
	done
	[[ -n $newest ]] || die "the $APT_INDEX package index has no $meta:$1"
	die "the archive serves none of the kernels $meta:$1 names (newest: $newest)"
}

# kernel_parts DEB_ARCH PKG: the packages that hold kernel package PKG's files, one a line: PKG,
# and when PKG only gathers them (unstable's linux-image-<release> depends on linux-base-,
# linux-binary- and linux-modules-<release>), the packages of its release it depends on.
kernel_parts()
{
	local release=${2#linux-image-} dep
	echo "$2"
	for dep in $(apt_depends "$2" "$1"); do
		[[ $dep == linux-*-"$release" ]] && echo "$dep"
	done
	return 0
}

# kernel_fetch DEB_ARCH SERIES: unpacks the kernel package (all its parts in one directory); sets
# KERNEL_PKG, KERNEL_ROOT, KERNEL_RELEASE, KERNEL_IMAGE, KERNEL_MODDIR. The image is
# /boot/vmlinuz-<release>, or /usr/lib/modules/<release>/vmlinuz where Debian now puts it.
kernel_fetch()
{
	local image APT_INDEX
	local -a parts
	# shellcheck disable=SC2034 # read by apt.sh's functions called from here
	APT_INDEX=$(kernel_index "$2")
	if [[ -z $APT_INDEX ]]; then
		KERNEL_PKG=$(kernel_package "$1" "$2")
	else
		KERNEL_PKG=$(kernel_private_package "$1" "$2")
	fi
	mapfile -t parts < <(kernel_parts "$1" "$KERNEL_PKG")
	KERNEL_ROOT=$(apt_unpack "$KERNEL_PKG" "$1" "${parts[@]:1}")
	image=$(find "$KERNEL_ROOT/boot" -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null |
		head -n 1 || true)
	if [[ -n $image ]]; then
		KERNEL_RELEASE=${image##*/vmlinuz-}
	else
		image=$(find "$KERNEL_ROOT"/{,usr/}lib/modules -mindepth 2 -maxdepth 2 -name vmlinuz \
			2>/dev/null | head -n 1 || true)
		[[ -n $image ]] || die "$KERNEL_PKG has no /boot/vmlinuz-* nor /usr/lib/modules/*/vmlinuz"
		KERNEL_RELEASE=${image%/vmlinuz}
		KERNEL_RELEASE=${KERNEL_RELEASE##*/}
	fi
	# shellcheck disable=SC2034 # read by qemu.sh
	KERNEL_IMAGE=$image
	KERNEL_MODDIR=$KERNEL_ROOT/lib/modules/$KERNEL_RELEASE
	[[ -d $KERNEL_MODDIR ]] || KERNEL_MODDIR=$KERNEL_ROOT/usr/lib/modules/$KERNEL_RELEASE
	[[ -d $KERNEL_MODDIR ]] || die "$KERNEL_PKG has no modules directory for $KERNEL_RELEASE"
}

# kernel_module_deps FILE: the modules an uncompressed module file depends on, one a line.
kernel_module_deps()
{
	readelf -p .modinfo "$1" 2>/dev/null | sed -n 's/.*\]  depends=//p' | tr ',' '\n' |
		sed '/^$/d'
}

# kernel_unpack_module SRC DEST: the module file SRC, decompressed, at DEST.
kernel_unpack_module()
{
	mkdir -p "${2%/*}"
	case $1 in
	*.xz) xz -dc "$1" >"$2" ;;
	*.zst) zstd -qdc "$1" >"$2" ;;
	*.gz) gzip -dc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac || die "cannot decompress kernel module $1"
}

# kernel_stage_modules ROOT: copies the wanted modules and their dependencies, decompressed,
# into ROOT/lib/modules/<release>/ and writes their load order to ROOT/etc/jw/modules.
kernel_stage_modules()
{
	local root=$1 f name
	local -A path=() builtin=() visited=()
	local -a order=()
	while read -r f; do
		name=${f##*/}
		name=${name%%.ko*}
		path[${name//-/_}]=${f#"$KERNEL_MODDIR"/}
	done < <(find "$KERNEL_MODDIR" -name '*.ko' -o -name '*.ko.*')
	while read -r f; do
		name=${f##*/}
		name=${name%%.ko*}
		builtin[${name//-/_}]=1
	done <"$KERNEL_MODDIR/modules.builtin"
	for name in "${KERNEL_WANTED_MODULES[@]}"; do
		kernel_visit_module "$name"
	done
	mkdir -p "$root/etc/jw"
	printf '%s\n' "${order[@]}" >"$root/etc/jw/modules"
}

# kernel_visit_module NAME: stages NAME after its dependencies (kernel_stage_modules' locals).
kernel_visit_module()
{
	local name=$1 rel dest dep
	[[ -n ${visited[$name]:-} || -n ${builtin[$name]:-} ]] && return 0
	visited[$name]=1
	rel=${path[$name]:-}
	[[ -n $rel ]] || die "kernel module $name is in neither $KERNEL_PKG nor its built-ins"
	rel=${rel%.xz}
	rel=${rel%.zst}
	rel=${rel%.gz}
	dest=$root/lib/modules/$KERNEL_RELEASE/$rel
	kernel_unpack_module "$KERNEL_MODDIR/${path[$name]}" "$dest"
	for dep in $(kernel_module_deps "$dest"); do
		kernel_visit_module "${dep//-/_}"
	done
	order+=("$rel")
}
