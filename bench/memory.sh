#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Whether jankwatch's memory stays bounded while it watches a busy loop for a long time: runs
# tests/targets/jw_target at about 1000 tasks/s (a fast task every ms, a 200 ms jank every 5 s,
# every jank reported with --all), samples jankwatch's resident memory every 10 s, and prints
# it after the first minute and at the end, with their ratio.
# Usage: bench/memory.sh [SECONDS]   (root; default 1800; build first: cmake --build build)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DURATION=${1:-1800}
WORK=$(mktemp -d)
TARGET_PID=
JW_PID=
cleanup()
{
	[[ -n $JW_PID ]] && kill -INT "$JW_PID" 2>/dev/null && sleep 2
	[[ -n $TARGET_PID ]] && kill "$TARGET_PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

"$ROOT/build/tests/targets/jw_target" --busy --ms 200 --every 5000 --fast 1 >/dev/null &
TARGET_PID=$!
sleep 4	# past ignore_startup_time=3
"$ROOT/build/jankwatch" -p "$TARGET_PID" --probe "$ROOT/build/tests/targets/jw_target:dispatch" \
	--set ignore_startup_time=3 --all --log-dir "$WORK/logs" >"$WORK/events" 2>"$WORK/err" &
JW_PID=$!
sleep 2
first=
start=$SECONDS
printf '%8s %10s %8s\n' seconds rss_kb janks
while ((SECONDS - start < DURATION)); do
	sleep 10
	kill -0 "$JW_PID" 2>/dev/null || { cat "$WORK/err" >&2; echo "memory: jankwatch exited" >&2; exit 1; }
	rss=$(rss_kb "$JW_PID")
	elapsed=$((SECONDS - start))
	printf '%8d %10d %8d\n' "$elapsed" "$rss" "$(grep -c . "$WORK/events" || true)"
	if [[ -z $first ]] && ((elapsed >= 60)); then
		first=$rss
	fi
done
last=$(rss_kb "$JW_PID")
kill -INT "$JW_PID"
wait "$JW_PID" || true
summary=$(grep -o '[0-9]* tasks, [0-9]* janks' "$WORK/err" | tail -1)
JW_PID=
echo "memory: after the first minute ${first} kB, after ${DURATION} s ${last} kB," \
	"ratio $(awk -v a="$last" -v b="$first" 'BEGIN { printf "%.3f", a / b }'); ${summary}" \
	"(tasks/s: $(awk -v s="$summary" -v d="$DURATION" 'BEGIN { split(s, f, " "); printf "%.0f", f[1] / (d + 2) }'))"
