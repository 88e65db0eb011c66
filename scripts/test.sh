#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Installs what is missing, builds everything, and runs every test under ctest: the unit tests
# plain, with AddressSanitizer + UndefinedBehaviorSanitizer and the arm64 build's under emulation,
# the fuzz harnesses over their corpora, then the integration tests (root, real BPF, real
# processes), part of them again against a jankwatch built with ASan + UBSan, and beside them the
# VM matrix (the VM suite on Debian 11's kernel 5.10, Debian 12's 6.1 and 6.12 and unstable's
# newest for x86-64 and arm64 under qemu, and 5.10 with its BTF hidden: scripts/vmtest.sh). Under
# CI=true a skipped test is a failure. Leaves the binary at build/jankwatch.
set -euo pipefail
cd "$(dirname "$0")/.."

# stage TITLE: a stage's header, with the time since the start (the whole run must stay under ~75
# minutes on a new machine: where it goes is read off these).
stage()
{
	printf '== %s (at %d:%02d)\n' "$1" $((SECONDS / 60)) $((SECONDS % 60))
}

stage "set-up and builds"
scripts/setup.sh --arch arm64 --vm
# Node 22 for the node tests' *_node22 runs, from the npm registry into the cache: without it they
# are skipped, which CI=true does not allow.
scripts/node22.sh >/dev/null || [[ ${CI:-} != true ]]
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJW_VM_TESTS=ON >/dev/null
cmake --build build -j"$(nproc)"
# The static jankwatch (one file for a device, cmake/static.cmake): test_device.py runs it in a
# root without glibc, and the VMs too.
cmake -S . -B build-static -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJW_STATIC=ON >/dev/null
cmake --build build-static -j"$(nproc)" --target jankwatch >/dev/null
# jankwatch itself built with ASan + UBSan (and the targets with it), for part of the
# integration tests below.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug \
	-DCMAKE_C_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	>/dev/null
cmake --build build-asan -j"$(nproc)" >/dev/null
# The arm64 build (cross-compiled) and its static jankwatch: its unit tests under qemu's
# user-mode emulation, and the arm64 VMs.
cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-arm64 -j"$(nproc)" >/dev/null
cmake -S . -B build-arm64-static -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DJW_STATIC=ON >/dev/null
cmake --build build-arm64-static -j"$(nproc)" --target jankwatch >/dev/null
# The fuzz harnesses, built with clang, replay their committed corpora once (scripts/fuzz.sh
# runs them for real).
CC=clang cmake -S . -B build-fuzz -DJW_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzzers >/dev/null

log=$(mktemp)
lanes=$(mktemp -d)
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$log" "$lanes"' EXIT
status=0
run() {
	local title=$1
	shift
	stage "$title"
	(cd build && ctest --output-on-failure "$@") 2>&1 | tee -a "$log" || status=1
}
run "unit tests" -L plain
run "unit tests with ASan + UBSan" -L san
stage "arm64 unit tests (qemu-aarch64)"
(cd build-arm64 && ctest --output-on-failure -L unit) 2>&1 | tee -a "$log" || status=1
stage "fuzz corpora"
(cd build-fuzz && ctest --output-on-failure -L fuzz) 2>&1 | tee -a "$log" || status=1

# The VM matrix (x86_64, arm64 x 5.10, 6.1, 6.12, unstable; x86_64 5.10 without BTF) runs in two
# lanes that take its VMs from one queue, the longest first: a guest is one busy host thread.
# The first lane starts now, pinned to CPU 1, beside the integration tests (which pass beside a
# CPU hog on one core: tests/README.md); the second once they are done, on CPU 0. All builds are
# done: a VM's own build step finds them up to date.
# The order: seen in CI, arm64 6.12 (with the device test) ~13 minutes, x86_64 5.10 with and
# without its BTF ~11, the unstable kernels 8-9, the rest 5-7 (a VM not named here goes last).
(cd build && ctest -N -L vm | sed -n 's/^ *Test *#[0-9]*: //p') |
	awk 'BEGIN { n = split("vm_arm64_6.12 vm_x86_64_5.10_nobtf vm_x86_64_5.10 " \
			       "vm_arm64_unstable vm_x86_64_unstable vm_x86_64_6.12 vm_arm64_5.10 " \
			       "vm_arm64_6.1 vm_x86_64_6.1", names)
		     for (i = 1; i <= n; i++) order[names[i]] = i }
	     { print (($0 in order) ? order[$0] : 99), $0 }' | sort -n -s | cut -d' ' -f2 >"$lanes/queue"
# vm_lane CPU OUT: runs the queue's next VM on CPU until the queue is empty, ctest's output to
# OUT (printed whole at the end), a line for each VM as it ends.
vm_lane()
{
	local name start how
	while :; do
		name=$(flock "$lanes/lock" sh -c 'head -n1 "$1" && sed -i 1d "$1"' sh "$lanes/queue")
		[[ -n $name ]] || return 0
		start=$SECONDS how=passed
		(cd build && taskset -c "$1" ctest --output-on-failure -R "^$name\$") >>"$2" 2>&1 ||
			how=FAILED
		[[ $how == passed ]] || echo "vm lane: $name failed" >>"$2"
		printf 'vm lane on CPU %s: %s %s in %d s (at %d:%02d)\n' "$1" "$name" "$how" \
			$((SECONDS - start)) $((SECONDS / 60)) $((SECONDS % 60))
	done
}
vm_lane 1 "$lanes/lane1" &
lane1=$!

run "integration tests" -L integration
stage "integration tests against jankwatch built with ASan + UBSan"
(cd build-asan && ctest --output-on-failure -L integration \
	-R 'integration_(bad_input|busy_task|debuginfod|exec_chain|exit_outputs|faults|hostile_elf|hostile_names|nginx_workers|pprof|prefork|raw_symbolize|stats|storm|trace)$') \
	2>&1 | tee -a "$log" || status=1
stage "VM matrix: the second lane (the first began with the integration tests)"
vm_lane 0 "$lanes/lane2"
wait "$lane1"
for lane in lane1 lane2; do
	echo "-- VM lane ${lane#lane}"
	cat "$lanes/$lane"
done | tee -a "$log"
grep -q '^vm lane: ' "$lanes/lane1" "$lanes/lane2" && status=1

skipped=$(grep -c '\*\*\*Skipped\|Not Run' "$log" || true)
if ((skipped > 0)); then
	echo "test.sh: $skipped test(s) skipped"
	if [[ ${CI:-} == true ]]; then
		echo "test.sh: a skipped test is a failure under CI=true" >&2
		status=1
	fi
fi
# The failures again at the end, where a log cut in the middle still shows them: each failed
# test's name, a VM suite's failed tests with their first lines, and every test's FAIL line.
if ((status != 0)); then
	echo "== what failed"
	grep -E '^[[:space:]]*[0-9]+ - .*\((Failed|Timeout|Not Run|SEGFAULT|Child aborted)\)|^[[:space:]]*FAIL' \
		-A3 "$log" | grep -v '^--$' | head -n 120 || true
fi
stage "end"
((status == 0)) && echo "test.sh: all tests passed" || echo "test.sh: FAILED" >&2
exit $status
