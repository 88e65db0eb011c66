# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Sourced by scripts/vmtest.sh: boots the kernel and initramfs under qemu (KVM when the host can
# run the guest's architecture with it, TCG otherwise), streams what the VM's command prints,
# keeps the whole console in a log and kills the VM after a timeout.
# Needs: die(), ARCH_* (ARCH_CPU: qemu's -cpu, ARCH_SMP: its vCPUs), KERNEL_IMAGE, VERBOSE,
# TIMEOUT, SHARE, RUN_DIR.

# qemu_args INITRD: sets QEMU_ARGS, qemu's arguments: the machine, KVM first when the guest is
# the host's architecture and /dev/kvm is usable (qemu falls back to TCG), the shares over virtio
# 9p, the kernel and its command line.
qemu_args()
{
	QEMU_ARGS=(-M "$ARCH_MACHINE" -cpu "$ARCH_CPU" -smp "${JW_VM_SMP:-$ARCH_SMP}" -m 2048 -nodefaults -no-user-config -no-reboot
		   -display none -monitor none -serial stdio)
	if qemu_kvm_usable; then
		QEMU_ARGS+=(-accel kvm)
	fi
	QEMU_ARGS+=(-accel "tcg,thread=${JW_VM_TCG_THREAD:-$ARCH_TCG_THREAD}" -device virtio-rng-pci)
	qemu_share out jwout "$RUN_DIR/out"
	[[ -z $SHARE ]] || qemu_share share jwshare "$SHARE"
	QEMU_ARGS+=(-kernel "$KERNEL_IMAGE" -initrd "$1" -append "$(qemu_cmdline)")
}

# qemu_kvm_usable: whether KVM can run the guest: the host's architecture, /dev/kvm, and on x86
# the CPU's virtualization extensions (a /dev/kvm without them opens, then fails on the vCPU).
qemu_kvm_usable()
{
	[[ $(uname -m) == "$ARCH_UNAME" && -w /dev/kvm ]] || return 1
	case $ARCH_UNAME in
	x86_64) grep -qwE 'vmx|svm' /proc/cpuinfo ;;
	*) return 0 ;;
	esac
}

# qemu_share ID TAG DIR: adds host directory DIR to QEMU_ARGS, exported over virtio 9p as TAG.
qemu_share()
{
	QEMU_ARGS+=(-fsdev "local,id=$1,path=${3//,/,,},security_model=none"
		    -device "virtio-9p-pci,fsdev=$1,mount_tag=$2")
}

# qemu_cmdline: the kernel's command line. A panic (a soft lockup too) ends the VM at once.
qemu_cmdline()
{
	local cmd="console=$ARCH_CONSOLE rdinit=/init panic=-1 softlockup_panic=1 $ARCH_KERNEL_ARGS"
	if ((VERBOSE)); then
		echo "$cmd loglevel=7"
	else
		echo "$cmd quiet loglevel=3"
	fi
}

# qemu_console LOG: copies the console to LOG and prints what the VM's command prints (between
# the begin marker and the status marker, dmesg excluded unless -v); everything with -v.
qemu_console()
{
	local line shown=$VERBOSE
	while IFS= read -r line || [[ -n $line ]]; do
		line=${line%$'\r'}
		printf '%s\n' "$line" >>"$1"
		if [[ $line == *@@jw-* ]]; then
			# A marker; what precedes it is output that did not end its line.
			((shown)) && [[ -n ${line%%@@jw-*} ]] && printf '%s\n' "${line%%@@jw-*}"
			case $line in
			*@@jw-begin@@* | *@@jw-dmesg-end@@*) shown=1 ;;
			*) shown=$VERBOSE ;;
			esac
			continue
		fi
		((shown)) && printf '%s\n' "$line"
	done
	return 0
}

# qemu_run INITRD LOG: runs the VM to its end; returns 0, or 124 when it was killed on timeout.
qemu_run()
{
	local rc
	qemu_args "$1"
	: >"$2"
	set +e
	timeout -k 10 "$TIMEOUT" "$ARCH_QEMU" "${QEMU_ARGS[@]}" </dev/null 2>"$RUN_DIR/qemu.err" |
		qemu_console "$2"
	rc=${PIPESTATUS[0]}
	set -e
	case $rc in
	0) return 0 ;;
	124 | 137) return 124 ;;
	*) die "$ARCH_QEMU failed (exit $rc): $(head -n 1 "$RUN_DIR/qemu.err")" ;;
	esac
}
