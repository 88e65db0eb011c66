#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# usage: scripts/pyroot.sh 3.13|3.14 [DIR]
#        scripts/pyroot.sh --run 3.13|3.14 [--root DIR] [--bind HOSTPATH:ROOTPATH]... -- CMD ARG...
#
# Makes a root directory in which Debian 13's (trixie) python3.13 or Debian unstable's (sid)
# python3.14 runs on this Debian 12 machine, whose glibc is too old for them, and prints its path
# (default JW_VM_CACHE/pyroot-3.13 or -3.14, JW_VM_CACHE being ~/.cache/jankwatch/vm). The root
# holds the dependency closure of python3.X (its libc6 among it) unpacked with `dpkg-deb -x`, no
# maintainer scripts run: the packages come from a private apt index of that release in the cache
# (scripts/vm/apt.sh), never the system's sources. /bin, /sbin, /lib and /lib64 are links into
# usr/, /tmp is there (mode 1777), /proc, /dev and /sys are empty directories. A stamp file in
# the root (.pyroot-stamp) names the package versions: a root whose versions the index still
# names is reused as it is (at once when the index did not change since it was made), else made
# again (what a test put in the old one is gone). Making one needs no root privileges; running in
# it does.
#
# python runs chrooted without /proc and /dev (`chroot DIR /usr/bin/python3.13 prog.py`: an
# asyncio program does; it draws randomness with getrandom()). --run mounts them all the same:
# in a private mount namespace (unshare -m --propagation private) it mounts /proc, binds /dev
# (recursively) and each --bind HOSTPATH (a directory or a file) at ROOTPATH inside the root, then
# runs CMD chrooted, its working directory /. The mounts are seen by nothing outside and go with
# the namespace's last process. Every step is an exec: the PID of `scripts/pyroot.sh --run` is
# CMD's (python's) once it has started, and its exit status CMD's. A test puts its program in
# with --bind, or copies it into DIR/tmp. Environment: JW_VM_CACHE, JW_PYROOT_ARCH (a Debian
# architecture, this machine's by default; --run needs it to be this machine's).
set -euo pipefail

SELF=$(readlink -f "${BASH_SOURCE[0]}")
SRC=$(cd "$(dirname "$SELF")/.." && pwd)
VM_CACHE=${JW_VM_CACHE:-$HOME/.cache/jankwatch/vm}
# shellcheck source=scripts/vm/apt.sh
. "$SRC/scripts/vm/apt.sh"

# The Debian architecture of the root.
PYROOT_ARCH=${JW_PYROOT_ARCH:-$(dpkg --print-architecture)}
# Changes when the layout of a root changes: a root stamped otherwise is made again.
PYROOT_FORMAT=1
# The stamp file, in the root, written last.
PYROOT_STAMP=.pyroot-stamp

# die MESSAGE...: MESSAGE on stderr, exit status 1.
die()
{
	echo "pyroot: $*" >&2
	exit 1
}

# bad_usage MESSAGE...: MESSAGE and where the usage is on stderr, exit status 2.
bad_usage()
{
	echo "pyroot: $* (see --help)" >&2
	exit 2
}

# usage: the help text.
usage()
{
	cat <<'EOF'
usage: scripts/pyroot.sh 3.13|3.14 [DIR]
       scripts/pyroot.sh --run 3.13|3.14 [--root DIR] [--bind HOSTPATH:ROOTPATH]... -- CMD ARG...

Makes (or reuses) a root directory holding Debian 13's python3.13 or Debian unstable's python3.14
with every package they depend on, from a private apt index in the cache, and prints its path
(default: $JW_VM_CACHE/pyroot-3.13 or -3.14, JW_VM_CACHE defaulting to ~/.cache/jankwatch/vm).
Made again when the package index names other versions.

  --run            make the root if needed, then, as root, in a private mount namespace: mount
                   /proc, bind /dev and each --bind inside it, and run CMD chrooted there (its
                   PID is that of this script, its exit status this script's)
  --root DIR       with --run: the root directory (default as above)
  --bind H:R       with --run: bind host directory or file H at R (absolute) inside the root
  -h, --help       this text

Environment: JW_VM_CACHE (the cache of package indexes, packages and roots), JW_PYROOT_ARCH (the
root's Debian architecture, this machine's by default).
EOF
}

# python_release VERSION: the Debian release whose python VERSION the root holds.
python_release()
{
	case $1 in
	3.13) echo trixie ;;
	3.14) echo sid ;;
	*) bad_usage "the python version must be 3.13 or 3.14, not '$1'" ;;
	esac
}

# default_dir VERSION: where the root of python VERSION is made when no DIR is given.
default_dir()
{
	if [[ $PYROOT_ARCH == "$(dpkg --print-architecture)" ]]; then
		echo "$VM_CACHE/pyroot-$1"
	else
		echo "$VM_CACHE/pyroot-$1-$PYROOT_ARCH"
	fi
}

# root_packages VERSION: the packages of python VERSION's root, "PACKAGE VERSION" a line, from
# APT_INDEX's index; fails naming a dependency the index does not have.
root_packages()
{
	local pkg version
	for pkg in $(apt_closure "$PYROOT_ARCH" true "python$1"); do
		version=$(apt_field "$pkg" "$PYROOT_ARCH" Version)
		[[ -n $version ]] || die "the $APT_INDEX package index has no $pkg:$PYROOT_ARCH"
		echo "$pkg $version"
	done
}

# stamp_text VERSION PACKAGES: what the stamp of python VERSION's root made of PACKAGES
# (root_packages' lines) holds.
stamp_text()
{
	echo "format $PYROOT_FORMAT python$1 $APT_INDEX $PYROOT_ARCH"
	echo "$2"
}

# root_current DIR VERSION: whether DIR is a complete root of python VERSION whose packages are
# those the index names (at once when the index is older than the stamp; else the stamp is
# touched when the versions are still those).
root_current()
{
	local dir=$1 stamp=$1/$PYROOT_STAMP packages
	[[ -f $stamp && -x $dir/usr/bin/python$2 ]] || return 1
	[[ $(head -n 1 "$stamp") == "$(stamp_text "$2" "")" ]] || return 1
	[[ $stamp -nt $(apt_lists) ]] && return 0
	packages=$(root_packages "$2") || exit 1
	[[ $(cat "$stamp") == "$(stamp_text "$2" "$packages")" ]] || return 1
	touch "$stamp"
}

# fetch_debs PACKAGES: prints the cached .deb of each of PACKAGES (root_packages' lines), one a
# line, downloading those not in the cache with one `apt-get download` first.
fetch_debs()
{
	local dir="$VM_CACHE/debs" pkg version deb
	local -a missing=()
	mkdir -p "$dir"
	while read -r pkg version; do
		deb=$(apt_deb "$pkg" "$PYROOT_ARCH")
		[[ -s $deb ]] || missing+=("$(apt_spec "$pkg" "$PYROOT_ARCH")")
	done <<<"$1"
	if ((${#missing[@]})); then
		echo "pyroot: downloading ${#missing[@]} packages from $APT_INDEX" >&2
		# Any package this leaves out, apt_download fetches again (or says why it cannot).
		(cd "$dir" && apt_run apt-get download "${missing[@]}") >"$dir/apt-pyroot.log" 2>&1 ||
			true
	fi
	while read -r pkg version; do
		apt_download "$pkg" "$PYROOT_ARCH" || exit 1
	done <<<"$1"
}

# merge_usr ROOT: /bin, /sbin, /lib and /lib64 as links into usr/ (merged /usr), what a package
# put in such a directory moved into usr/.
merge_usr()
{
	local root=$1 d
	for d in bin sbin lib lib64; do
		mkdir -p "$root/usr/$d"
		if [[ -d $root/$d && ! -L $root/$d ]]; then
			cp -a "$root/$d/." "$root/usr/$d/" || die "cannot move $root/$d into usr/$d"
			rm -rf "${root:?}/$d"
		fi
		ln -sfn "usr/$d" "$root/$d"
	done
}

# root_path ROOT PATH: PATH (absolute) inside ROOT with the symbolic links in it followed as in a
# chroot, printed as a path on this machine.
root_path()
{
	local root=$1 path=$2 real='' part link n=0
	while [[ -n $path ]]; do
		path=${path#/}
		part=${path%%/*}
		if [[ $path == */* ]]; then
			path=${path#*/}
		else
			path=''
		fi
		case $part in
		'' | .) continue ;;
		..) real=${real%/*}; continue ;;
		esac
		if [[ -L $root$real/$part ]]; then
			((++n <= 40)) || return 1
			link=$(readlink "$root$real/$part")
			[[ $link == /* ]] && real=''
			path=$link/$path
			continue
		fi
		real=$real/$part
	done
	echo "$root$real"
}

# root_layout ROOT VERSION: what a python needs in ROOT beside its packages: merged /usr, /tmp,
# mount points, a passwd, group and hosts file, python3 a link to python VERSION; fails when
# python's dynamic loader does not resolve inside ROOT.
root_layout()
{
	local root=$1 python=$1/usr/bin/python$2 interp
	merge_usr "$root"
	mkdir -p "$root"/{proc,dev,sys,run,root,etc}
	install -d -m 1777 "$root/tmp"
	[[ -e $root/etc/passwd ]] ||
		printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
			>"$root/etc/passwd"
	[[ -e $root/etc/group ]] || printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
	[[ -e $root/etc/hosts ]] || printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' >"$root/etc/hosts"
	[[ -x $python ]] || die "the python$2 packages hold no /usr/bin/python$2"
	ln -sfn "python$2" "$root/usr/bin/python3"
	interp=$(readelf -l "$python" 2>/dev/null |
		sed -n 's/.*Requesting program interpreter: \(.*\)\]$/\1/p')
	[[ -n $interp ]] || die "/usr/bin/python$2 names no dynamic loader"
	[[ -f $(root_path "$root" "$interp") ]] ||
		die "python$2's dynamic loader $interp is not in the root"
}

# root_check ROOT VERSION: runs python VERSION chrooted in ROOT (no /proc, no /dev) importing
# asyncio, when this machine can: as root, for its own architecture.
root_check()
{
	local out
	((EUID == 0)) && [[ $PYROOT_ARCH == "$(dpkg --print-architecture)" ]] || return 0
	out=$(chroot "$1" "/usr/bin/python$2" -c 'import asyncio, sys; print(sys.version)' 2>&1) ||
		die "python$2 does not run chrooted in $1: $(tail -n 1 <<<"$out")"
}

# root_make DIR VERSION PACKAGES: makes the root of python VERSION of PACKAGES (root_packages'
# lines) in DIR.part, then puts it in DIR's place.
root_make()
{
	local dir=$1 part=$1.part start=$SECONDS list deb
	local -a debs=()
	echo "pyroot: making $dir: python$2 of $APT_INDEX ($(wc -l <<<"$3") packages)" >&2
	list=$(fetch_debs "$3") || exit 1
	mapfile -t debs <<<"$list"
	rm -rf --one-file-system "$part"
	mkdir -p "$part"
	for deb in "${debs[@]}"; do
		dpkg-deb -x "$deb" "$part" || die "cannot unpack $deb with dpkg-deb"
	done
	root_layout "$part" "$2"
	root_check "$part" "$2"
	stamp_text "$2" "$3" >"$part/$PYROOT_STAMP"
	if [[ -e $dir ]]; then
		rm -rf --one-file-system "$dir.old"
		mv "$dir" "$dir.old"
	fi
	mv "$part" "$dir"
	rm -rf --one-file-system "$dir.old"
	echo "pyroot: made $dir in $((SECONDS - start)) s" >&2
}

# root_ready DIR VERSION: makes sure DIR is a current root of python VERSION (made when it is
# not), one process at a time (a lock beside DIR); refuses to replace a directory that is not
# empty and was not made here.
root_ready()
{
	local dir=$1 packages APT_INDEX
	APT_INDEX=$(python_release "$2")
	if [[ -e $dir && ! -e $dir/$PYROOT_STAMP && -n $(ls -A "$dir" 2>&1) ]]; then
		die "$dir is not empty and not a root made by pyroot.sh: not replacing it"
	fi
	mkdir -p "$(dirname "$dir")"
	exec 9>"$dir.lock"
	flock 9 || die "cannot lock $dir.lock"
	apt_private_ready
	if ! root_current "$dir" "$2"; then
		packages=$(root_packages "$2") || exit 1
		root_make "$dir" "$2" "$packages"
	fi
	exec 9>&-
}

# run_args ARGS...: parses --run's arguments into VERSION, DIR, BINDS, CMD.
run_args()
{
	VERSION='' DIR='' BINDS=() CMD=()
	while (($#)); do
		case $1 in
		--root | --bind)
			(($# >= 2)) || bad_usage "$1 needs a value"
			if [[ $1 == --root ]]; then
				DIR=$2
			else
				check_bind "$2"
				BINDS+=("$2")
			fi
			shift 2
			;;
		--) shift; CMD=("$@"); break ;;
		-*) bad_usage "unknown argument '$1'" ;;
		*)
			[[ -z $VERSION ]] || bad_usage "unexpected argument '$1' (the command goes after --)"
			VERSION=$1
			shift
			;;
		esac
	done
	[[ -n $VERSION ]] || bad_usage "--run needs the python version, 3.13 or 3.14"
	python_release "$VERSION" >/dev/null
	((${#CMD[@]})) || bad_usage "--run needs a command after --"
}

# check_bind HOSTPATH:ROOTPATH: fails unless HOSTPATH exists and ROOTPATH is absolute, without ..
check_bind()
{
	local host=${1%%:*} dest=${1#*:}
	[[ $1 == *:* && -n $host ]] || bad_usage "--bind wants HOSTPATH:ROOTPATH, not '$1'"
	[[ -e $host ]] || bad_usage "--bind: '$host' does not exist"
	[[ $dest == /* && /$dest/ != */../* ]] ||
		bad_usage "--bind: '$dest' must be an absolute path inside the root, without .."
}

# run: makes the root of VERSION in DIR if needed, then goes on as in_namespace (with BINDS and
# CMD) in a private mount namespace, in this process (run_args' VERSION, DIR, BINDS, CMD).
run()
{
	local bind
	local -a args=()
	((EUID == 0)) || die "--run needs root (mount, chroot)"
	[[ $PYROOT_ARCH == "$(dpkg --print-architecture)" ]] ||
		die "--run runs this machine's architecture only, not $PYROOT_ARCH"
	root_ready "$DIR" "$VERSION"
	for bind in "${BINDS[@]}"; do
		args+=(--bind "$bind")
	done
	exec unshare -m --propagation private -- "$BASH" "$SELF" --in-namespace "$DIR" \
		"${args[@]}" -- "${CMD[@]}"
}

# in_namespace DIR CMD...: in the private mount namespace: mounts /proc, /dev and BINDS in root
# DIR, then becomes CMD chrooted there.
in_namespace()
{
	local root=$1 bind host dest
	shift
	mount -t proc proc "$root/proc" || die "cannot mount /proc in $root"
	mount --rbind /dev "$root/dev" || die "cannot bind /dev in $root"
	for bind in "${BINDS[@]}"; do
		host=${bind%%:*} dest=$root${bind#*:}
		if [[ -d $host ]]; then
			mkdir -p "$dest"
		else
			mkdir -p "$(dirname "$dest")"
			[[ -e $dest ]] || : >"$dest"
		fi
		mount --bind "$host" "$dest" || die "cannot bind $host at $dest"
	done
	exec chroot "$root" "$@"
}

# main ARGS...: the build (VERSION [DIR]), --run or the namespace's side of --run.
main()
{
	local root
	case ${1:-} in
	-h | --help) usage ;;
	--run)
		shift
		run_args "$@"
		DIR=$(realpath -m "${DIR:-$(default_dir "$VERSION")}")
		run
		;;
	--in-namespace)
		(($# >= 2)) || die "--in-namespace is pyroot.sh's own"
		root=$2
		shift 2
		# --run's arguments as run() passed them on (any version will do: it is not used).
		run_args 3.13 "$@"
		in_namespace "$root" "${CMD[@]}"
		;;
	'') bad_usage "missing the python version, 3.13 or 3.14" ;;
	-*) bad_usage "unknown argument '$1'" ;;
	*)
		(($# <= 2)) || bad_usage "unexpected argument '$3'"
		python_release "$1" >/dev/null
		DIR=$(realpath -m "${2:-$(default_dir "$1")}")
		root_ready "$DIR" "$1"
		echo "$DIR"
		;;
	esac
}

main "$@"
