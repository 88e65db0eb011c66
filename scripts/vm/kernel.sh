# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Sourced by scripts/vmtest.sh: Debian 12's kernel package of one version and architecture,
# resolved from its metapackage and unpacked in the cache, and the modules the VM loads from it.
# Needs: apt.sh, die().

# Modules the VM needs that Debian may build as modules: 9p over virtio for the shares, the
# virtio-rng entropy source. Built-in ones are skipped, dependencies come first.
KERNEL_WANTED_MODULES=(virtio_pci 9pnet_virtio 9p virtio_rng)

# kernel_metapackage DEB_ARCH SERIES: the metapackage that names the series' current kernel.
kernel_metapackage()
{
	case $2 in
	6.1) echo "linux-image-$1" ;;
	6.12) echo "linux-image-6.12-$1" ;;
	*) die "no kernel series $2" ;;
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
		apt-get update -qq >/dev/null 2>&1 || die "apt-get update failed while resolving $meta:$1"
		pkg=$(apt_depends "$meta" "$1" | grep -m 1 '^linux-image-' || true)
	fi
	[[ -n $pkg ]] || die "cannot resolve $meta:$1 to a kernel package (no linux-image- dependency)"
	echo "$pkg"
}

# kernel_fetch DEB_ARCH SERIES: unpacks the kernel package; sets KERNEL_PKG, KERNEL_ROOT,
# KERNEL_RELEASE, KERNEL_IMAGE, KERNEL_MODDIR.
kernel_fetch()
{
	local image
	KERNEL_PKG=$(kernel_package "$1" "$2")
	KERNEL_ROOT=$(apt_unpack "$KERNEL_PKG" "$1")
	image=$(find "$KERNEL_ROOT/boot" -maxdepth 1 -name 'vmlinuz-*' | head -n 1)
	[[ -n $image ]] || die "$KERNEL_PKG has no /boot/vmlinuz-*"
	# shellcheck disable=SC2034 # read by qemu.sh
	KERNEL_IMAGE=$image
	KERNEL_RELEASE=${image##*/vmlinuz-}
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
