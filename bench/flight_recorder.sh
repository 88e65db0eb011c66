#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What the flight recorder (flight_recorder_s) costs a context switch, side by side in one run:
# a pipe ping-pong between two processes (bench/pingpong.c), timed with nothing attached; with
# jankwatch watching another process (the scheduler programs run, trace events off); with the
# flight recorder on for that other process (a hash lookup per switch); and with the flight
# recorder on for the ping-pong itself (a ring buffer record per switch). Prints microseconds per
# round trip, the median of ROUNDS runs each, and their ratio to nothing attached.
# Usage: bench/flight_recorder.sh [ROUNDS]   (root; build first: cmake --build build)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=${1:-5}
N=200000
WORK=$(mktemp -d)
OTHER=
cleanup()
{
	[[ -n $OTHER ]] && kill "$OTHER" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

cc -O2 -o "$WORK/pingpong" "$ROOT/bench/pingpong.c"
"$ROOT/build/tests/targets/jw_target" --busy --ms 1 --every 1000 >/dev/null &
OTHER=$!

# One timed ping-pong under configuration $1; prints us per round trip.
measure()
{
	local jw=() pp
	case $1 in
	none) "$WORK/pingpong" "$N"; return ;;
	other) jw=(-p "$OTHER") ;;
	flight-other) jw=(-p "$OTHER" --set flight_recorder_s=5) ;;
	flight-self) jw=(--set flight_recorder_s=5) ;;
	esac
	"$WORK/pingpong" "$N" 2 >"$WORK/out" &
	pp=$!
	[[ $1 == flight-self ]] && jw=(-p "$pp" "${jw[@]}")
	"$ROOT/build/jankwatch" "${jw[@]}" --log-dir "$WORK/logs" -q --duration 30 \
		>/dev/null 2>"$WORK/err" &
	wait "$pp"
	kill -INT $! 2>/dev/null || true
	wait $! 2>/dev/null || true
	cat "$WORK/out"
}

declare -A RUNS
CONFIGS=(none other flight-other flight-self)
for ((r = 0; r < ROUNDS; r++)); do
	for c in "${CONFIGS[@]}"; do
		RUNS[$c]+="$(measure "$c") "
	done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
base=$(echo "${RUNS[none]}" | median)
printf '%-14s %10s %7s\n' config us/round ratio
for c in "${CONFIGS[@]}"; do
	m=$(echo "${RUNS[$c]}" | median)
	printf '%-14s %10s %7s\n' "$c" "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.2f", a / b }')"
done
