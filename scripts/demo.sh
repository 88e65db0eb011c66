#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Shows a real jank being caught: installs what is missing, builds, starts the bundled demo
# loop (a C event loop whose dispatch() spins 300 ms every 1.5 s between 5 ms trivial tasks),
# watches it with jankwatch for about ten seconds, then prints the events and a stack log.
set -euo pipefail
cd "$(dirname "$0")/.."

if ((EUID != 0)); then
	echo "demo.sh: run as root: jankwatch loads BPF programs" >&2
	exit 1
fi
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null

logdir=$(mktemp -d /tmp/jankwatch-demo.XXXXXX)
target=build/tests/targets/jw_target
"$target" --busy --ms 300 --every 1500 --fast 5 >/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT

echo "== demo loop: pid $pid ($target), a 300 ms task every 1.5 s"
echo "== build/jankwatch -p $pid --probe $target:dispatch --set ignore_startup_time=3 --all --duration 10 --log-dir $logdir"
build/jankwatch -p "$pid" --probe "$target:dispatch" --set ignore_startup_time=3 --all \
	--duration 10 --log-dir "$logdir"

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
