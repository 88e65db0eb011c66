#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs each libFuzzer harness of tests/fuzz for SECONDS (default 60), on a copy of its committed
# corpus; new inputs worth keeping are merged back into tests/fuzz/corpus/<name>/, and a crash,
# hang or sanitizer report leaves tests/fuzz/crash-* (or timeout-*, leak-*) and fails the run.
# Usage: scripts/fuzz.sh [SECONDS] [NAME...]     (names: fuzz_params fuzz_perfmap ...)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
scripts/setup.sh
CC=clang cmake -S . -B build-fuzz -DJW_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzzers

names=("$@")
if ((${#names[@]} == 0)); then
	for f in tests/fuzz/fuzz_*.c; do
		names+=("$(basename "$f" .c)")
	done
fi
status=0
for name in "${names[@]}"; do
	corpus=tests/fuzz/corpus/$name
	work=$(mktemp -d)
	mkdir -p "$corpus"
	cp -r "$corpus/." "$work/"
	echo "== $name: ${seconds}s"
	if ! build-fuzz/tests/fuzz/"$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -artifact_prefix=tests/fuzz/ -print_final_stats=1 "$work" 2>"$work.log"; then
		tail -40 "$work.log"
		echo "fuzz: $name failed; see tests/fuzz/ for the input" >&2
		status=1
	fi
	grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^#[0-9]+ +DONE' "$work.log" || true
	# Keep only the inputs that add coverage.
	build-fuzz/tests/fuzz/"$name" -merge=1 "$corpus" "$work" >/dev/null 2>&1 || true
	rm -rf "$work" "$work.log"
done
exit $status
