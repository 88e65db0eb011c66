#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Installs what is missing, builds everything, and runs every test under ctest: the unit tests
# plain, with AddressSanitizer + UndefinedBehaviorSanitizer and the arm64 build's under emulation,
# the fuzz harnesses over their corpora, then the integration tests (root, real BPF, real
# processes), part of them again against a jankwatch built with ASan + UBSan, and the VM matrix
# (the VM suite on Debian 11's kernel 5.10, Debian 12's 6.1 and 6.12 and unstable's
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
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJW_TESTS=ON -DJW_VM_TESTS=ON >/dev/null
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
trap 'rm -f "$log"' EXIT
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

run "integration tests" -L integration
# jankwatch built with ASan + UBSan against the integration tests that reach most of its code:
# statistics, traces, faults, hostile input, raw captures, processes that exec, fork workers and
# come and go by the thousand, the exit's one read, a log directory's page (its stack logs read
# back).
stage "integration tests against jankwatch built with ASan + UBSan"
(cd build-asan && ctest --output-on-failure -L integration \
	-R 'integration_(bad_input|busy_task|debuginfod|exec_chain|exit_outputs|faults|hostile_elf|hostile_names|nginx_workers|pprof|prefork|raw_symbolize|report_html|stats|storm|trace)$') \
	2>&1 | tee -a "$log" || status=1
# Both builds in VMs of Debian's own kernels, two side by side (a guest is one busy host thread;
# the longest first: tests/CMakeLists.txt). After the integration tests, never beside them: a
# VM's emulator on one CPU slows what the tests' programs do (gunicorn's logging took 151 ms,
# a jank no request made) and adds to the machine's load, which some of jankwatch's choices
# weigh.
run "VM matrix (x86_64, arm64 x 5.10, 6.1, 6.12, unstable; x86_64 5.10 without BTF)" -L vm -j2

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
