#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Installs what is missing, builds, and runs every test under ctest: the unit tests plain and
# with AddressSanitizer + UndefinedBehaviorSanitizer, then the integration tests (root, real BPF,
# real processes), then the fuzz harnesses over their corpora. Under CI=true a skipped test is a
# failure. Leaves the binary at build/jankwatch.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
run() {
	local title=$1
	shift
	echo "== $title"
	(cd build && ctest --output-on-failure "$@") 2>&1 | tee -a "$log" || status=1
}
run "unit tests" -L plain
run "unit tests with ASan + UBSan" -L san
run "integration tests" -L integration
# The fuzz harnesses, built with clang, replay their committed corpora once (scripts/fuzz.sh
# runs them for real).
CC=clang cmake -S . -B build-fuzz -DJW_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzzers >/dev/null
echo "== fuzz corpora"
(cd build-fuzz && ctest --output-on-failure -L fuzz) 2>&1 | tee -a "$log" || status=1

skipped=$(grep -c '\*\*\*Skipped\|Not Run' "$log" || true)
if ((skipped > 0)); then
	echo "test.sh: $skipped test(s) skipped"
	if [[ ${CI:-} == true ]]; then
		echo "test.sh: a skipped test is a failure under CI=true" >&2
		status=1
	fi
fi
((status == 0)) && echo "test.sh: all tests passed" || echo "test.sh: FAILED" >&2
exit $status
