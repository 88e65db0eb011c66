#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs jankwatch in a VM on Debian's kernel of a given series and architecture (Debian 12's own
# 6.1 and 6.12, Debian 11's 5.10, unstable's newest): fetches the kernel package (and Debian 12's
# busybox and python3.11 of that architecture) with apt into a cache, builds a busybox initramfs
# holding the architecture's build, its libraries and the test targets, boots it under qemu, and
# either runs a command inside or runs the VM suite (tests/vm/) followed by one test on the host
# (the VM's raw capture named by the host's build).
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VM_CACHE=${JW_VM_CACHE:-$HOME/.cache/jankwatch/vm}
HOST_BUILD=${JW_BUILD:-$SRC/build}
ARM64_BUILD=${JW_BUILD_ARM64:-$SRC/build-arm64}
# The static jankwatch of each architecture (cmake -DJW_STATIC=ON), for the device test.
STATIC_BUILD=${JW_BUILD_STATIC:-$SRC/build-static}
ARM64_STATIC_BUILD=${JW_BUILD_ARM64_STATIC:-$SRC/build-arm64-static}
# shellcheck source=scripts/vm/apt.sh
. "$SRC/scripts/vm/apt.sh"
# shellcheck source=scripts/vm/kernel.sh
. "$SRC/scripts/vm/kernel.sh"
# shellcheck source=scripts/vm/image.sh
. "$SRC/scripts/vm/image.sh"
# shellcheck source=scripts/vm/qemu.sh
. "$SRC/scripts/vm/qemu.sh"
# shellcheck source=scripts/vm/hosttest.sh
. "$SRC/scripts/vm/hosttest.sh"

usage()
{
	cat <<'EOF'
usage: scripts/vmtest.sh --arch x86_64|arm64 --kernel 5.10|6.1|6.12|unstable [OPTIONS] [-- CMD ...]

Boots Debian's kernel of that series and architecture under qemu (6.1, 6.12: Debian 12's own;
5.10: Debian 11's; unstable: Debian unstable's newest) with jankwatch's build (build/ for
x86_64, build-arm64/ for arm64), its libraries, the test targets and Debian 12's python3.11.
With -- CMD: runs CMD inside as root (one argument: a shell command line; several: the argv),
prints its output and exits with its status. Without: runs the VM suite (tests/vm/tests.list)
and one host test; the last line is "N passed, M failed".

  --share DIR      share host directory DIR read-write at the same path (cwd of CMD)
  --timeout SEC    kill the VM after SEC seconds (default 600 with CMD, 3600 for the suite)
  --no-build       boot without jankwatch's build (with -- CMD only)
  --hide-btf       a kernel without BTF of its own: /sys/kernel/btf is mounted away inside, and
                   the kernel's BTF, cut out of its image and reduced (scripts/make-btf.sh), is
                   in /var/lib/jankwatch/btf; the suite runs test_btf_file.py too
  -v, --verbose    show the boot and the kernel log
  -h, --help       this text

Environment: JW_VM_CACHE (the cache of packages and console logs, ~/.cache/jankwatch/vm),
JW_BUILD and JW_BUILD_ARM64 (the x86-64 and arm64 build directories, build/ and build-arm64/:
brought up to date first), JW_BUILD_STATIC and JW_BUILD_ARM64_STATIC (their static builds,
build-static/ and build-arm64-static/: the static jankwatch, for the device test),
JW_VM_SMP (the guest's vCPUs, 1 by default) and JW_VM_TCG_THREAD=single|multi (under TCG, one
host thread for every vCPU, the default, or one each).
EOF
}

die()
{
	echo "vmtest: $*" >&2
	exit 1
}

bad_usage()
{
	echo "vmtest: $* (see --help)" >&2
	exit 2
}

# kernel_series_list SEP: the kernel series --kernel takes, joined by SEP.
kernel_series_list()
{
	local IFS=$'\n' list
	list="${KERNEL_SERIES[*]}"
	echo "${list//$'\n'/$1}"
}

# parse_args ARGS...: sets ARCH, SERIES, SHARE, TIMEOUT, VERBOSE, NO_BUILD, CMD.
parse_args()
{
	ARCH='' SERIES='' SHARE='' TIMEOUT='' VERBOSE=0 NO_BUILD=0 HIDE_BTF=0 CMD=() HAVE_CMD=0
	while (($#)); do
		case $1 in
		--arch | --kernel | --share | --timeout)
			(($# >= 2)) || bad_usage "$1 needs a value"
			set_option "$1" "$2"
			shift 2
			;;
		--arch=* | --kernel=* | --share=* | --timeout=*)
			set_option "${1%%=*}" "${1#*=}"
			shift
			;;
		--no-build) NO_BUILD=1; shift ;;
		--hide-btf) HIDE_BTF=1; shift ;;
		-v | --verbose) VERBOSE=1; shift ;;
		-h | --help) usage; exit 0 ;;
		--) shift; CMD=("$@"); HAVE_CMD=1; break ;;
		*) bad_usage "unknown argument '$1'" ;;
		esac
	done
	[[ -n $ARCH ]] || bad_usage "--arch x86_64|arm64 is required"
	[[ -n $SERIES ]] || bad_usage "--kernel $(kernel_series_list '|') is required"
	((!HAVE_CMD || ${#CMD[@]})) || bad_usage "-- needs a command"
	((HAVE_CMD || !NO_BUILD)) || bad_usage "--no-build runs a command only (-- CMD)"
	((!HIDE_BTF || !NO_BUILD)) || bad_usage "--hide-btf needs jankwatch's build (not --no-build)"
	if [[ -z $TIMEOUT ]]; then
		TIMEOUT=$((HAVE_CMD ? 600 : 3600))
	fi
}

# set_option NAME VALUE: one option with a value, checked.
set_option()
{
	case $1 in
	--arch)
		[[ $2 == x86_64 || $2 == arm64 ]] || bad_usage "--arch must be x86_64 or arm64, not '$2'"
		ARCH=$2
		;;
	--kernel)
		[[ " ${KERNEL_SERIES[*]} " == *" $2 "* ]] ||
			bad_usage "--kernel must be one of $(kernel_series_list ', '), not '$2'"
		SERIES=$2
		;;
	--share)
		[[ -d $2 ]] || bad_usage "--share: '$2' is not a directory"
		SHARE=$(cd "$2" && pwd -P)
		[[ $SHARE != *[[:space:]\']* ]] || bad_usage "--share: '$SHARE' holds a space or a quote"
		;;
	--timeout)
		[[ $2 =~ ^[1-9][0-9]*$ ]] || bad_usage "--timeout must be a number of seconds, not '$2'"
		TIMEOUT=$2
		;;
	esac
}

# arch_setup: what differs between the architectures (ARCH_*), and BUILD_DIR.
arch_setup()
{
	case $ARCH in
	x86_64)
		ARCH_DEB=amd64 ARCH_UNAME=x86_64 ARCH_TRIPLET=x86_64-linux-gnu
		ARCH_QEMU=qemu-system-x86_64 ARCH_MACHINE=q35 ARCH_CONSOLE=ttyS0
		# Under TCG the clocksource watchdog may drop the TSC for the HPET, which would take
		# clock_gettime() out of the vDSO: the targets' own timing would change.
		ARCH_KERNEL_ARGS="tsc=reliable"
		# Multi-threaded TCG runs an x86 guest's vCPUs on host threads of their own, and the
		# guest kernel's live patching of its text (int3 first, text_poke_bp) then oopses now
		# and then as tracepoints and probes come and go ("Oops: int3" in syscall_trace_enter):
		# JW_VM_TCG_THREAD=multi is not for x86 guests.
		ARCH_CPU=max
		BUILD_DIR=$HOST_BUILD
		IMAGE_STATIC_BUILD=$STATIC_BUILD
		;;
	arm64)
		ARCH_DEB=arm64 ARCH_UNAME=aarch64 ARCH_TRIPLET=aarch64-linux-gnu
		ARCH_QEMU=qemu-system-aarch64 ARCH_MACHINE=virt ARCH_CONSOLE=ttyAMA0
		ARCH_KERNEL_ARGS=
		# Debian's arm64 kernels sign every return address (pointer authentication): QARMA5,
		# the architected algorithm, is slow to emulate; the implementation-defined one is
		# not, and the guest cannot tell.
		ARCH_CPU=max,pauth-impdef=on
		BUILD_DIR=$ARM64_BUILD
		IMAGE_STATIC_BUILD=$ARM64_STATIC_BUILD
		;;
	esac
	# One vCPU on one host thread, so two guests run side by side on a host of two CPUs (ctest
	# -j2). Two vCPUs on one thread take turns of up to 100 ms (TCG's round robin): a stall the
	# guest cannot see, neither as steal nor as a run queue's wait, that lands in a task as time
	# no clock in the guest accounts for.
	ARCH_TCG_THREAD=single
	ARCH_SMP=1
	command -v "$ARCH_QEMU" >/dev/null || die "$ARCH_QEMU is not installed"
}

# build_complete DIR: whether build directory DIR holds jankwatch and the targets the image takes.
build_complete()
{
	local t
	[[ -x $1/jankwatch ]] || return 1
	for t in "${IMAGE_TARGETS[@]}"; do
		[[ -x $1/tests/targets/$t ]] || return 1
	done
}

# ensure_build DIR TOOLCHAIN STATIC: brings build directory DIR up to date (a stale build would
# test old code), configuring it first (with cmake toolchain file TOOLCHAIN, none when empty;
# -DJW_STATIC=ON and only jankwatch built when STATIC is 1) when it has never been; fails with
# one line when it cannot.
ensure_build()
{
	local dir=$1 name=${1#"$SRC"/}/ log
	local -a configure=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) build=(-j"$(nproc)")
	if [[ -n $2 ]]; then
		[[ -f $SRC/$2 ]] || die "cannot build $name: $2 does not exist"
		configure+=(-DCMAKE_TOOLCHAIN_FILE="$2")
	fi
	if (($3)); then
		configure+=(-DJW_STATIC=ON)
		build+=(--target jankwatch)
	fi
	mkdir -p "$VM_CACHE/logs"
	log=$VM_CACHE/logs/build-${dir##*/}.log
	if [[ -f $dir/CMakeCache.txt ]]; then
		cmake --build "$dir" "${build[@]}" >"$log" 2>&1 ||
			die "cannot build $name: $(build_error "$log")"
	else
		echo "vmtest: building $name (log: $log)" >&2
		(cd "$SRC" && cmake -S . -B "$dir" "${configure[@]}" &&
			cmake --build "$dir" "${build[@]}") >"$log" 2>&1 ||
			die "cannot build $name: $(build_error "$log")"
	fi
	if (($3)); then
		[[ -x $dir/jankwatch ]] || die "$name was built but lacks jankwatch"
	else
		build_complete "$dir" || die "$name was built but lacks jankwatch or a test target"
	fi
}

# ensure_builds: the builds of the VM's architecture (the static one too), and the host's for
# the host test.
ensure_builds()
{
	((NO_BUILD)) && return 0
	if [[ $ARCH == arm64 ]]; then
		ensure_build "$ARM64_BUILD" cmake/aarch64-linux-gnu.cmake 0
		ensure_build "$ARM64_STATIC_BUILD" cmake/aarch64-linux-gnu.cmake 1
	else
		ensure_build "$STATIC_BUILD" "" 1
	fi
	if [[ $ARCH == x86_64 || $HAVE_CMD == 0 ]]; then
		ensure_build "$HOST_BUILD" "" 0
	fi
}

# build_error LOG: the first error line of a build log.
build_error()
{
	grep -m 1 -E 'error|Error|ERROR' "$1" || tail -n 1 "$1"
}

# write_config ROOT: what the VM runs (/etc/jw/config and /etc/jw/cmd), and with --hide-btf
# the kernel's BTF where jankwatch looks for it.
write_config()
{
	local root=$1 arg line='' btf=/var/lib/jankwatch/btf/$KERNEL_RELEASE.btf
	if ((HIDE_BTF)); then
		mkdir -p "$root${btf%/*}"
		"$SRC/scripts/make-btf.sh" --objects "$BUILD_DIR/bpf" "$KERNEL_IMAGE" "$root$btf" \
			>/dev/null || die "cannot make the BTF file of $KERNEL_PKG"
	fi
	{
		echo "JW_MODE=$( ((HAVE_CMD)) && echo cmd || echo suite)"
		echo "JW_SHARE='$SHARE'"
		echo "JW_VERBOSE=$VERBOSE"
		echo "JW_HIDE_BTF=$HIDE_BTF"
		if ((HIDE_BTF)); then
			echo "JW_TEST_BTF=$btf"
		fi
	} >"$root/etc/jw/config"
	if ((${#CMD[@]} == 1)); then
		line=${CMD[0]}
	else
		for arg in "${CMD[@]}"; do
			line+="'${arg//\'/\'\\\'\'}' "
		done
	fi
	printf '%s\n' "$line" >"$root/etc/jw/cmd"
}

# make_image: the initramfs at RUN_DIR/initrd.
make_image()
{
	local build=$BUILD_DIR
	((NO_BUILD)) && build=
	image_assemble "$RUN_DIR/root" "$build" "$RUN_DIR/initrd" write_config
}

# vm_status LOG: the exit status the VM reported (its status file, else the console), or empty.
vm_status()
{
	if [[ -s $RUN_DIR/out/status ]]; then
		head -n 1 "$RUN_DIR/out/status"
	else
		grep -o '@@jw-status [0-9]*@@' "$1" | tail -n 1 | tr -dc '0-9' || true
	fi
}

# kernel_error LOG: the first line of the console where the VM's kernel broke, empty if none.
kernel_error()
{
	grep -m 1 -E 'Kernel panic|BUG:|Oops' "$1" | sed 's/^\[ *[0-9.]*\] //' || true
}

# console_tail LOG: the end of the console when the VM never came up (nothing was shown).
console_tail()
{
	((VERBOSE)) && return 0
	grep -q '@@jw-begin@@' "$1" && return 0
	tail -n 30 "$1" >&2
}

# boot LOG: runs the VM; fails on a timeout or when the VM reported no status, with the kernel's
# error line if it has one.
boot()
{
	local start=$SECONDS status oops
	qemu_run "$RUN_DIR/initrd" "$1" || {
		oops=$(kernel_error "$1")
		console_tail "$1"
		die "the VM did not finish within $TIMEOUT s: killed${oops:+ ($oops)} (console: $1)"
	}
	status=$(vm_status "$1")
	if [[ -z $status ]]; then
		oops=$(kernel_error "$1")
		console_tail "$1"
		die "the VM stopped without reporting a status${oops:+: $oops} (console: $1)"
	fi
	((VERBOSE)) && echo "vmtest: the VM ran $((SECONDS - start)) s" >&2
	VM_STATUS=$status
}

# suite_result LOG: the final line, counting the VM's tests and the host's; exits non-zero on
# any failure.
suite_result()
{
	local counts passed failed
	counts=$(grep -o '@@jw-suite [0-9]* [0-9]*@@' "$1" | tail -n 1 | tr -d '@' || true)
	[[ -n $counts ]] || die "the VM suite did not finish (console: $1)"
	read -r _ passed failed <<<"$counts"
	if host_test "$RUN_DIR/out"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
	echo "$passed passed, $failed failed"
	((failed == 0))
}

main()
{
	local log lock
	parse_args "$@"
	arch_setup
	# One vmtest.sh at a time builds, fetches and unpacks into the cache (ctest runs two x86-64
	# VMs side by side): the other waits for it, then boots beside it.
	mkdir -p "$VM_CACHE/logs"
	exec {lock}>"$VM_CACHE/prepare.lock"
	flock "$lock"
	ensure_builds
	kernel_fetch "$ARCH_DEB" "$SERIES"
	RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/jw-vm.XXXXXX")
	trap 'rm -rf "$RUN_DIR"' EXIT
	mkdir "$RUN_DIR/out"
	make_image
	exec {lock}>&-
	log=$VM_CACHE/logs/console-$ARCH-$SERIES.log
	((!HIDE_BTF)) || log=${log%.log}-nobtf.log
	boot "$log"
	if ((HAVE_CMD)); then
		((VM_STATUS == 0)) || echo "vmtest: the command exits $VM_STATUS (kernel log: $log)" >&2
		exit "$VM_STATUS"
	fi
	suite_result "$log"
}

main "$@"
