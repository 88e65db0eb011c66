#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Installs every build and test dependency of jankwatch from Debian's archive (--build-only:
# what building jankwatch and its plain targets needs, as scripts/demo.sh does: no server, no
# toolkit, no Go).
# The static libraries (.a) of the -dev packages build the static jankwatch (cmake/static.cmake);
# musl-tools (musl-gcc) and musl-dev:arm64 its test targets linked with musl. chromium (headless)
# opens the flame graphs in the tests, as a person's browser would.
# Quiet and quick when everything is present; runs `apt-get update` once when not.
#   --build-only   only the build's: a compiler, CMake, clang and bpftool, libbpf, elfutils,
#                  protobuf-c and the profile.proto it compiles
#   --arch arm64   also what the arm64 cross build needs (the :arm64 libraries, the cross
#                  compiler, qemu's user-mode emulation for its unit tests)
#   --vm           also what scripts/vmtest.sh needs (qemu, busybox, cpio, the archive keyring
#                  its kernels of Debian 11 and unstable are checked against)
set -euo pipefail

build=(
	build-essential cmake pkg-config
	clang llvm
	libbpf-dev bpftool
	libelf-dev libdw-dev zlib1g-dev
	protobuf-c-compiler libprotobuf-c-dev golang-github-google-pprof-dev
)
tests=(
	libclang-rt-14-dev
	libbz2-dev liblzma-dev libzstd-dev musl-tools
	golang-go
	debuginfod libdebuginfod1
	libcmocka-dev
	python3 valgrind strace tmux
	procps
	redis-server redis-tools nodejs
	nginx libnginx-mod-http-perl gunicorn
	libglib2.0-dev libuv1-dev libevent-dev
	libev-dev libsystemd-dev libpipewire-0.3-dev libwayland-dev
	qtbase5-dev qt6-base-dev libgtk-4-dev xvfb android-libutils-dev
	dpkg-dev systemd man-db
	prometheus prometheus-node-exporter systemd-journal-remote
	chromium
)
# npm fetches Node 22 for the node tests (scripts/node22.sh): Debian's nodejs comes without it
# (NodeSource's, which provides npm, conflicts with Debian's npm package).
command -v npm >/dev/null || tests+=(npm)
arm64=(
	crossbuild-essential-arm64
	libbpf-dev:arm64 libelf-dev:arm64 libdw-dev:arm64 zlib1g-dev:arm64 libcmocka-dev:arm64
	libprotobuf-c-dev:arm64 libbz2-dev:arm64 liblzma-dev:arm64 libzstd-dev:arm64 musl-dev:arm64
	qemu-user
)
vm=(qemu-system-x86 qemu-system-arm busybox-static cpio xz-utils zstd debian-archive-keyring)

packages=("${build[@]}")
extra=()
with_tests=1

while (($#)); do
	case $1 in
	--arch)
		[[ ${2:-} == arm64 || ${2:-} == x86_64 ]] || {
			echo "setup: --arch takes arm64 or x86_64" >&2
			exit 2
		}
		[[ $2 == arm64 ]] && extra+=("${arm64[@]}")
		shift 2
		;;
	--vm)
		extra+=("${vm[@]}")
		shift
		;;
	--build-only)
		with_tests=
		shift
		;;
	*)
		echo "setup: unknown option '$1' (--build-only, --arch arm64, --vm)" >&2
		exit 2
		;;
	esac
done

[[ -z $with_tests ]] || packages+=("${tests[@]}")
packages+=("${extra[@]}")

# Whether package $1 is installed: of the machine's architecture unless it names one (with arm64
# added, a library is installed once per architecture), or of none (arch: all).
installed() {
	local native status
	native=$(dpkg --print-architecture)
	[[ $1 == *:* ]] || status=$(dpkg-query -W -f='${db:Status-Status}' "$1:$native" 2>/dev/null)
	[[ ${status:-} == installed ]] && return 0
	status=$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)
	[[ $status == installed ]]
}

missing=()
for p in "${packages[@]}"; do
	installed "$p" || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

if ((EUID != 0)); then
	echo "setup: missing packages (${missing[*]}); run as root to install them" >&2
	exit 1
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Packages of another architecture need it added to dpkg's first.
for p in "${missing[@]}"; do
	if [[ $p == *:* ]] && ! dpkg --print-foreign-architectures | grep -qx "${p#*:}"; then
		dpkg --add-architecture "${p#*:}"
	fi
done
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
