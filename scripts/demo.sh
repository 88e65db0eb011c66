#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Shows a real jank being caught, as the README's first example watches a program: installs what
# building jankwatch needs (scripts/setup.sh --build-only: no server, no toolkit, no Go), builds
# jankwatch and the demo loop (a C event loop whose task spins 300 ms every 1.5 s between 5 ms
# trivial tasks), starts the loop and watches it with `jankwatch -p PID` for 16 s, defaults and
# all: its first 10 s are the start-up window, the first jank after gets the day's stack log of
# that process, the next ones their event lines. Then the stack log it wrote.
set -euo pipefail
cd "$(dirname "$0")/.."

if ((EUID != 0)); then
	echo "demo.sh: run as root: jankwatch loads BPF programs" >&2
	exit 1
fi
scripts/setup.sh --build-only
# A build/ configured before (scripts/test.sh's, with the tests) is kept as it is: only the two
# programs the demo runs are brought up to date.
[[ -f build/CMakeCache.txt ]] ||
	cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJW_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target jankwatch jw_target >/dev/null

logdir=$(mktemp -d /tmp/jankwatch-demo.XXXXXX)
target=build/tests/targets/jw_target
"$target" --busy --ms 300 --every 1500 --fast 5 >/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT

echo "== the demo loop: pid $pid ($target), a 300 ms task every 1.5 s"
echo "== build/jankwatch -p $pid --log-dir $logdir --duration 16"
build/jankwatch -p "$pid" --log-dir "$logdir" --duration 16

echo
echo "== $logdir"
ls -l "$logdir"
logs=("$logdir"/stack-*.txt)
first=${logs[0]}
if [[ ! -f $first ]]; then
	echo "demo.sh: no stack log was written" >&2
	exit 1
fi
echo
echo "== $first"
cat "$first"
echo
echo "== afterwards: build/jankwatch report $logdir (--html FILE: one page to look at)"
build/jankwatch report "$logdir"
