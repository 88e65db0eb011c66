#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The observer effect: what watching does to a slow task's own time, side by side in one run.
# Two copies of bench/fixed_work.c, pinned to the same CPU, each running the same fixed work
# (about 0.7 s of multiply-adds) on demand and timing it itself; one watched by jankwatch
# (--probe its dispatch(), every jank reported with its files: --all, samples, stack log or
# trace), the other not. PAIRS pairs after a warm-up pair (the first report loads the modules'
# symbol tables), each a task of one copy then of the other, the order alternating. Prints each
# pair's ratio of the task's own wall time (watched / bare), their median and worst against the
# budget (median +2%, worst +5%), and the same for its CPU time.
# Usage: bench/observer.sh [PAIRS]   (root; build first: cmake --build build)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JW=$ROOT/build/jankwatch
WORKER=$ROOT/build/bench/jw_fixed_work
PAIRS=${1:-8}
TARGET_MS=700
CPU=$(($(nproc) - 1))
WORK=$(mktemp -d /tmp/jw-observer.XXXXXX)
PIDS=()
cleanup()
{
	local p

	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

((EUID == 0)) || { echo "observer.sh: run as root" >&2; exit 1; }
[[ -x $JW && -x $WORKER ]] || { echo "observer.sh: build first (cmake --build build)" >&2; exit 1; }

# Starts a worker of ITERS iterations pinned to CPU, its stdin on fd $2, its stdout on fd $3.
start_worker()
{
	local name=$1 iters=$2

	mkfifo "$WORK/$name.in" "$WORK/$name.out"
	taskset -c "$CPU" "$WORKER" "$iters" <"$WORK/$name.in" >"$WORK/$name.out" &
	PIDS+=($!)
	eval "WPID_$name=$!"
}

# Runs one task on the worker whose fds are $1 (in) and $2 (out); prints "wall_ns cpu_ns".
task()
{
	local word wall cpu

	echo go >&"$1"
	read -r -u "$2" word wall cpu
	[[ $word == done ]] || { echo "observer.sh: worker said '$word'" >&2; exit 1; }
	echo "$wall $cpu"
}

# Calibrates: 10^8 iterations timed, scaled to TARGET_MS.
start_worker cal 100000000
exec 3>"$WORK/cal.in" 4<"$WORK/cal.out"
read -r wall _ < <(task 3 4)
ITERS=$(awk -v w="$wall" -v t="$TARGET_MS" 'BEGIN { printf "%.0f", 1e8 * t * 1e6 / w }')
exec 3>&- 4<&-

start_worker bare "$ITERS"
start_worker watched "$ITERS"
exec 5>"$WORK/bare.in" 6<"$WORK/bare.out" 7>"$WORK/watched.in" 8<"$WORK/watched.out"
sleep 3.2	# past ignore_startup_time=3
"$JW" -p "$WPID_watched" --probe "$WORKER:dispatch" --set ignore_startup_time=3 --all \
	--log-dir "$WORK/logs" >/dev/null 2>"$WORK/jw.err" &
JPID=$!
PIDS+=("$JPID")
for _ in $(seq 300); do
	grep -q ready "$WORK/jw.err" && break
	kill -0 "$JPID" 2>/dev/null || { cat "$WORK/jw.err" >&2; exit 1; }
	sleep 0.1
done

ratios=()
cpu_ratios=()
bare_ms=()
watched_ms=()
for ((i = 0; i <= PAIRS; i++)); do
	if ((i % 2)); then
		read -r wb cb < <(task 5 6)
		read -r ww cw < <(task 7 8)
	else
		read -r ww cw < <(task 7 8)
		read -r wb cb < <(task 5 6)
	fi
	((i > 0)) || continue	# the warm-up pair
	ratios+=("$(awk -v a="$ww" -v b="$wb" 'BEGIN { printf "%.4f", a / b }')")
	cpu_ratios+=("$(awk -v a="$cw" -v b="$cb" 'BEGIN { printf "%.4f", a / b }')")
	bare_ms+=("$(awk -v a="$wb" 'BEGIN { printf "%.1f", a / 1e6 }')")
	watched_ms+=("$(awk -v a="$ww" 'BEGIN { printf "%.1f", a / 1e6 }')")
done
kill -INT "$JPID"
wait "$JPID" 2>/dev/null || true
janks=$(grep -c MAIN_THREAD_JANK "$WORK/logs/events.jsonl" 2>/dev/null || echo 0)

awk -v r="${ratios[*]}" -v c="${cpu_ratios[*]}" -v b="${bare_ms[*]}" -v w="${watched_ms[*]}" \
    -v pairs="$PAIRS" -v janks="$janks" -v iters="$ITERS" 'function med(s,  n, t, i, j, x) {
		n = split(s, t, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (t[j] < t[i]) { x = t[i]; t[i] = t[j]; t[j] = x }
		return n % 2 ? t[(n + 1) / 2] : (t[n / 2] + t[n / 2 + 1]) / 2 }
	function worst(s,  n, t, i, m) { n = split(s, t, " "); m = t[1]
		for (i = 2; i <= n; i++) if (t[i] > m) m = t[i]; return m }
	BEGIN {
	printf "\nobserver effect: a fixed task (%s iterations, %.0f ms bare), bare and watched, %d pairs:\n",
		iters, med(b), pairs
	printf "  bare    [%s] ms\n  watched [%s] ms\n", b, w
	m = med(r) - 1; x = worst(r) - 1
	printf "  wall: median %+.2f%% (budget 2%%): %s; worst %+.2f%% (budget 5%%): %s\n",
		100 * m, m <= 0.02 ? "within" : "OVER", 100 * x, x <= 0.05 ? "within" : "OVER"
	printf "  cpu:  median %+.2f%%, worst %+.2f%%   (%d janks reported, each with its files)\n",
		100 * (med(c) - 1), 100 * (worst(c) - 1), janks
}'
