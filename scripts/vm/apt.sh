# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Sourced by scripts/vmtest.sh and scripts/pyroot.sh: Debian packages of any architecture,
# downloaded with `apt-get download` into the cache and unpacked there with `dpkg-deb -x`. They
# come from the system's package index (Debian 12's), or when APT_INDEX names one (a caller sets
# it as a local), from a private index of another Debian release kept in the cache
# (apt_private_sources): its own sources list, lists, cache and status under VM_CACHE/apt-INDEX/,
# the system's sources untouched. Needs: VM_CACHE (the cache directory), die().

# The index asked: empty for the system's, else bullseye, trixie or sid (a private one).
APT_INDEX=
# The architectures a private index holds.
APT_PRIVATE_ARCHS=amd64,arm64
# A private index older than this (minutes) is refreshed before it is used.
APT_PRIVATE_MAX_AGE=1440

# apt_private_sources INDEX: the sources.list lines of private index INDEX, from Debian's
# archive, checked against Debian 12's debian-archive-keyring (it holds Debian 11's keys, and
# those of 12 and 13 that sign unstable).
apt_private_sources()
{
	local opts="[arch=$APT_PRIVATE_ARCHS signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
	case $1 in
	bullseye)
		echo "deb $opts http://deb.debian.org/debian bullseye main"
		echo "deb $opts http://deb.debian.org/debian bullseye-updates main"
		echo "deb $opts http://deb.debian.org/debian-security bullseye-security main"
		;;
	trixie)
		echo "deb $opts http://deb.debian.org/debian trixie main"
		echo "deb $opts http://deb.debian.org/debian trixie-updates main"
		echo "deb $opts http://deb.debian.org/debian-security trixie-security main"
		;;
	sid) echo "deb $opts http://deb.debian.org/debian sid main" ;;
	*) die "no private package index $1" ;;
	esac
}

# apt_private_dir: the directory of APT_INDEX's private index.
apt_private_dir()
{
	echo "$VM_CACHE/apt-$APT_INDEX"
}

# apt_run COMMAND ARGS...: apt-get or apt-cache COMMAND on APT_INDEX's index: for a private one,
# with its own sources, lists, cache and an empty dpkg status and preferences (nothing installed
# or pinned here bears on it).
apt_run()
{
	local cmd=$1 dir
	shift
	if [[ -z $APT_INDEX ]]; then
		"$cmd" "$@"
		return
	fi
	dir=$(apt_private_dir)
	"$cmd" -o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts="$dir/empty" \
		-o Dir::Etc::Preferences="$dir/empty/preferences" \
		-o Dir::Etc::PreferencesParts="$dir/empty" -o Dir::State::Lists="$dir/lists" \
		-o Dir::State::Status="$dir/status" -o Dir::Cache="$dir/cache" \
		-o Dir::Cache::pkgcache="$dir/cache/pkgcache.bin" \
		-o Dir::Cache::srcpkgcache="$dir/cache/srcpkgcache.bin" \
		-o APT::Architectures="$APT_PRIVATE_ARCHS" -o Acquire::Languages=none \
		-o APT::Default-Release= "$@"
}

# apt_lists: the directory of APT_INDEX's package lists, whose change outdates cached stanzas.
apt_lists()
{
	if [[ -z $APT_INDEX ]]; then
		echo /var/lib/apt/lists
	else
		echo "$(apt_private_dir)/lists"
	fi
}

# apt_update LOG: `apt-get update` of APT_INDEX's index, its output appended to LOG; for a
# private one, lays its directories out first.
apt_update()
{
	local dir
	if [[ -z $APT_INDEX ]]; then
		apt-get update -qq >>"$1" 2>&1
		return
	fi
	dir=$(apt_private_dir)
	mkdir -p "$dir"/{lists/partial,cache/archives/partial,empty}
	apt_private_sources "$APT_INDEX" >"$dir/sources.list"
	[[ -e $dir/status ]] || : >"$dir/status"
	apt_run apt-get update -qq >>"$1" 2>&1 || return 1
	rm -f "$dir/unavailable"
	touch "$dir/updated"
}

# apt_private_ready: makes APT_INDEX's private index usable: fetched when it never was,
# refreshed when older than APT_PRIVATE_MAX_AGE minutes (an index that cannot be refreshed is
# used as it is, with a warning). Nothing to do for the system's.
apt_private_ready()
{
	local dir log
	[[ -n $APT_INDEX ]] || return 0
	dir=$(apt_private_dir)
	[[ -e $dir/updated && -z $(find "$dir/updated" -mmin +"$APT_PRIVATE_MAX_AGE") ]] &&
		return 0
	mkdir -p "$dir"
	log=$dir/update.log
	: >"$log"
	if ! apt_update "$log"; then
		[[ -e $dir/updated ]] ||
			die "cannot fetch the $APT_INDEX package index: $(grep -m1 '^E:' "$log" || tail -n 1 "$log")"
		echo "$(basename "$0" .sh): cannot refresh the $APT_INDEX package index," \
			"using the old one (see $log)" >&2
		touch "$dir/updated"
	fi
}

# apt_stanza_dir ARCH: where the stanzas of APT_INDEX's packages of ARCH are cached.
apt_stanza_dir()
{
	if [[ -z $APT_INDEX ]]; then
		echo "$VM_CACHE/apt/$1"
	else
		echo "$(apt_private_dir)/stanzas/$1"
	fi
}

# apt_stanzas ARCH PKG...: caches the candidate stanzas of PKG:ARCH... (apt-cache show, ~1 s a
# call, so one call for all that are not cached since the package index last changed) in
# apt_stanza_dir; a package apt does not know gets an empty file. For an architecture not this
# machine's, a package apt does not know as PKG:ARCH is asked again as PKG:all (apt knows an
# "Architecture: all" package under this machine's architecture and all only).
apt_stanzas()
{
	local arch=$1 dir lists pkg
	local -a want=() again=()
	shift
	apt_private_ready
	dir=$(apt_stanza_dir "$arch")
	lists=$(apt_lists)
	mkdir -p "$dir"
	for pkg in "$@"; do
		[[ -e $dir/$pkg && $dir/$pkg -nt $lists ]] || want+=("$pkg")
	done
	((${#want[@]})) || return 0
	for pkg in "${want[@]}"; do
		: >"$dir/$pkg"
	done
	apt_run apt-cache show --no-all-versions "${want[@]/%/:$arch}" 2>/dev/null |
		awk -v dir="$dir" '/^Package: / { out = dir "/" $2 } out { print > out }' || true
	[[ $arch != "$(dpkg --print-architecture)" ]] || return 0
	for pkg in "${want[@]}"; do
		[[ -s $dir/$pkg ]] || again+=("$pkg")
	done
	((${#again[@]})) || return 0
	# Stanzas of packages not "Architecture: all" (apt's answer for this machine's) are left out.
	apt_run apt-cache show --no-all-versions "${again[@]/%/:all}" 2>/dev/null |
		awk -v dir="$dir" -v RS= '/(^|\n)Architecture: all(\n|$)/ &&
			match($0, /(^|\n)Package: [^\n]+/) {
				out = substr($0, RSTART, RLENGTH); sub(/^\n?Package: /, "", out)
				print $0 "\n" > (dir "/" out) }' || true
}

# apt_field PKG ARCH FIELD: FIELD of the candidate version of PKG:ARCH, empty when none.
apt_field()
{
	apt_stanzas "$2" "$1"
	sed -n "s/^$3: //p" "$(apt_stanza_dir "$2")/$1" | head -n 1
}

# apt_depends PKG ARCH: the packages PKG:ARCH depends on (Depends and Pre-Depends), one a
# line, the first of each set of alternatives, without versions or architecture qualifiers.
apt_depends()
{
	{ apt_field "$1" "$2" Pre-Depends; apt_field "$1" "$2" Depends; } |
		tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*)//' -e 's/:any//' -e 's/[[:space:]]//g' |
		sed '/^$/d'
}

# apt_closure ARCH FOLLOW PKG...: PKG:ARCH... and, transitively, the packages they depend on
# (apt_depends) for which `FOLLOW DEP ARCH` succeeds, each once, one a line, level by level.
apt_closure()
{
	local arch=$1 follow=$2 pkg dep
	local -A seen=()
	local -a level=("${@:3}") next
	while ((${#level[@]})); do
		apt_stanzas "$arch" "${level[@]}"
		next=()
		for pkg in "${level[@]}"; do
			[[ -n ${seen[$pkg]:-} ]] && continue
			seen[$pkg]=1
			echo "$pkg"
			for dep in $(apt_depends "$pkg" "$arch"); do
				if [[ -z ${seen[$dep]:-} ]] && "$follow" "$dep" "$arch"; then
					next+=("$dep")
				fi
			done
		done
		level=("${next[@]}")
	done
}

# apt_spec PKG ARCH: what apt-get download names PKG:ARCH's candidate by: PKG:ARCH, or PKG:all
# for an "Architecture: all" package.
apt_spec()
{
	if [[ $(apt_field "$1" "$2" Architecture) == all ]]; then
		echo "$1:all"
	else
		echo "$1:$2"
	fi
}

# apt_installed PKG ARCH: whether PKG:ARCH is installed on this machine.
apt_installed()
{
	local status
	status=$(dpkg-query -W -f='${db:Status-Status}' "$1:$2" 2>/dev/null || true)
	[[ $status == installed ]]
}

# apt_deb PKG ARCH: the path PKG:ARCH's candidate .deb has in the cache (downloaded or not),
# empty when the index has no such package.
apt_deb()
{
	local version deb_arch
	version=$(apt_field "$1" "$2" Version)
	[[ -n $version ]] || return 0
	deb_arch=$(apt_field "$1" "$2" Architecture)
	echo "$VM_CACHE/debs/${1}_${version//:/%3a}_${deb_arch}.deb"
}

# apt_fetchable PKG ARCH: whether the archive serves PKG:ARCH's candidate from APT_INDEX's
# private index: its .deb is in the cache, or downloads now. A download that fails (a package
# the index names but the mirror lacks) is remembered until the index is next refreshed.
apt_fetchable()
{
	local dir="$VM_CACHE/debs" deb list
	deb=$(apt_deb "$1" "$2")
	[[ -n $deb ]] || return 1
	[[ -s $deb ]] && return 0
	list=$(apt_private_dir)/unavailable
	grep -qxF "${deb##*/}" "$list" 2>/dev/null && return 1
	mkdir -p "$dir"
	(cd "$dir" && apt_run apt-get download "$(apt_spec "$1" "$2")") >"$dir/apt-$1-$2.log" 2>&1 &&
		[[ -s $deb ]] && return 0
	echo "${deb##*/}" >>"$list"
	return 1
}

# apt_download PKG ARCH: prints the path of PKG:ARCH's .deb in the cache, downloading it if it
# is not there; runs `apt-get update` once when the download fails (a stale or missing index).
apt_download()
{
	local pkg=$1 arch=$2 dir="$VM_CACHE/debs" deb log
	mkdir -p "$dir"
	deb=$(apt_deb "$pkg" "$arch")
	[[ -n $deb && -s $deb ]] && { echo "$deb"; return 0; }
	log="$dir/apt-$pkg-$arch.log"
	if ! (cd "$dir" && apt_run apt-get download "$(apt_spec "$pkg" "$arch")") >"$log" 2>&1; then
		apt_update "$log" || die "apt-get update failed while fetching $pkg:$arch (see $log)"
		(cd "$dir" && apt_run apt-get download "$(apt_spec "$pkg" "$arch")") >>"$log" 2>&1 ||
			die "cannot download $pkg:$arch with apt-get: $(grep -m1 '^E:' "$log" || tail -n 1 "$log")"
		deb=$(apt_deb "$pkg" "$arch")
	fi
	[[ -n $deb && -s $deb ]] || die "apt-get download $pkg:$arch left no ${deb:-.deb}"
	echo "$deb"
}

# apt_unpack PKG ARCH [PKG2...]: prints the directory where PKG:ARCH's candidate .deb is
# unpacked (with those of PKG2...:ARCH beside it, when given), downloading and unpacking first
# if needed.
apt_unpack()
{
	local arch=$2 deb root pkg
	local -a debs=()
	deb=$(apt_download "$1" "$arch") || exit 1
	root="$VM_CACHE/root/$(basename "$deb" .deb)"
	[[ -e $root/.unpacked ]] && { echo "$root"; return 0; }
	debs=("$deb")
	for pkg in "${@:3}"; do
		deb=$(apt_download "$pkg" "$arch") || exit 1
		debs+=("$deb")
	done
	rm -rf "$root"
	mkdir -p "$root"
	for deb in "${debs[@]}"; do
		dpkg-deb -x "$deb" "$root" || die "cannot unpack $deb with dpkg-deb"
	done
	touch "$root/.unpacked"
	echo "$root"
}
