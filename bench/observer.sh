#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The observer effect: what watching does to a slow task's own time, side by side in one run.
# Two copies of bench/fixed_work.c, pinned to the same CPU, each running the same fixed work
# (about 0.7 s of multiply-adds) on demand and timing it itself; one watched by jankwatch
# (--probe its dispatch(), every jank reported with its files: --all, samples, stack log or
# trace), the other not. PAIRS pairs after a warm-up pair (the first report loads the modules'
# symbol tables), each a task of one copy then of the other, the order alternating. Prints each
# pair's ratio of the task's own wall time (watched / bare), their median and worst against the
# budget (median +2%, worst +5%), the same for its CPU time; what jankwatch's BPF programs ran in
# the watched task's time (their run time, kernel.bpf_stats_enabled), and jankwatch's own CPU per
# jank (unwinding, naming, writing its files: a CPU it takes from the others on a busy machine).
# Usage: bench/observer.sh [PAIRS]   (root; build first: cmake --build build)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JW=$ROOT/build/jankwatch
WORKER=$ROOT/build/bench/jw_fixed_work
PAIRS=${1:-8}
TARGET_MS=700
CPU=$(($(nproc) - 1))
# shellcheck disable=SC2034 # read by bench/lib.sh's wait_for_line and stop_tool
READY_TIMEOUT_MS=60000 STOP_TIMEOUT_MS=15000
WORK=
PIDS=()
TOOL_PID=
STATS_WAS=

# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

cleanup()
{
	local p

	for p in "$TOOL_PID" "${PIDS[@]}"; do
		reap "$p"
	done
	[[ -z $STATS_WAS ]] || sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"
	[[ -z $WORK ]] || rm -rf "$WORK"
}

# CPU time of every thread of process @1, ns.
cpu_ns()
{
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ t += $1 } END { printf "%.0f", t }'
}

# Starts worker @1 of @2 iterations pinned to CPU, talking through fifos $WORK/@1.{in,out}; its
# pid in WPID.
start_worker()
{
	mkfifo "$WORK/$1.in" "$WORK/$1.out"
	taskset -c "$CPU" "$WORKER" "$2" <"$WORK/$1.in" >"$WORK/$1.out" &
	WPID=$!
	PIDS+=("$WPID")
}

# Runs one task on the worker whose fds are @1 (in) and @2 (out); prints "wall_ns cpu_ns".
task()
{
	local word wall cpu

	echo go >&"$1"
	read -r -u "$2" word wall cpu
	[[ $word == "done" ]] || die "observer.sh: the worker said '$word'"
	echo "$wall $cpu"
}

main()
{
	local i wall ww cw wb cb watched t0 t1 c0 c1 janks
	local -a ratios=() cpu_ratios=() bare_ms=() watched_ms=()

	trap cleanup EXIT
	((EUID == 0)) || die "observer.sh: run as root"
	[[ -x $JW && -x $WORKER ]] || die "observer.sh: build first (cmake --build build)"
	WORK=$(mktemp -d /tmp/jw-observer.XXXXXX)
	STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1

	# Calibrates: 10^8 iterations timed, scaled to TARGET_MS.
	start_worker cal 100000000
	exec 3>"$WORK/cal.in" 4<"$WORK/cal.out"
	read -r wall _ < <(task 3 4)
	ITERS=$(awk -v w="$wall" -v t="$TARGET_MS" 'BEGIN { printf "%.0f", 1e8 * t * 1e6 / w }')
	exec 3>&- 4<&-

	start_worker bare "$ITERS"
	start_worker watched "$ITERS"
	watched=$WPID
	exec 5>"$WORK/bare.in" 6<"$WORK/bare.out" 7>"$WORK/watched.in" 8<"$WORK/watched.out"
	sleep 3.2	# past ignore_startup_time=3
	"$JW" -p "$watched" --probe "$WORKER:dispatch" --set ignore_startup_time=3 --all \
		--log-dir "$WORK/logs" >/dev/null 2>"$WORK/jw.err" &
	TOOL_PID=$!
	wait_for_line "$WORK/jw.err" ready "$TOOL_PID" jankwatch

	for ((i = 0; i <= PAIRS; i++)); do
		if ((i == 1)); then
			t0=$(prog_time_of "$TOOL_PID")
			c0=$(cpu_ns "$TOOL_PID")
		fi
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
	sleep 1	# the last jank's report
	t1=$(prog_time_of "$TOOL_PID")
	c1=$(cpu_ns "$TOOL_PID")
	stop_tool jankwatch "$WORK/jw.err"
	janks=$(grep -c MAIN_THREAD_JANK "$WORK/logs/events.jsonl" 2>/dev/null || echo 0)

	awk -v r="${ratios[*]}" -v c="${cpu_ratios[*]}" -v b="${bare_ms[*]}" \
	    -v w="${watched_ms[*]}" -v pairs="$PAIRS" -v janks="$janks" -v iters="$ITERS" \
	    -v bpf=$((t1 - t0)) -v own=$((c1 - c0)) 'function med(s,  n, t, i, j, x) {
			n = split(s, t, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
				if (t[j] < t[i]) { x = t[i]; t[i] = t[j]; t[j] = x }
			return n % 2 ? t[(n + 1) / 2] : (t[n / 2] + t[n / 2 + 1]) / 2 }
		function worst(s,  n, t, i, m) { n = split(s, t, " "); m = t[1]
			for (i = 2; i <= n; i++) if (t[i] > m) m = t[i]; return m }
		function sum(s,  n, t, i, m) { n = split(s, t, " "); for (i = 1; i <= n; i++) m += t[i]
			return m }
		BEGIN {
		printf "\nobserver effect: a fixed task (%s iterations, %.0f ms bare), bare and watched, %d pairs:\n",
			iters, med(b), pairs
		printf "  bare    [%s] ms\n  watched [%s] ms\n", b, w
		m = med(r) - 1; x = worst(r) - 1
		printf "  wall: median %+.2f%% (budget 2%%): %s; worst %+.2f%% (budget 5%%): %s\n",
			100 * m, m <= 0.02 ? "within" : "OVER", 100 * x, x <= 0.05 ? "within" : "OVER"
		printf "  cpu:  median %+.2f%%, worst %+.2f%%   (%d janks reported, each with its files)\n",
			100 * (med(c) - 1), 100 * (worst(c) - 1), janks
		printf "  jankwatch'"'"'s BPF programs in the watched tasks: %.3f%% of their time (%.2f ms a task)\n",
			100 * bpf / (sum(w) * 1e6), bpf / pairs / 1e6
		printf "  jankwatch'"'"'s own CPU: %.1f ms a jank (unwinding, naming, writing; another CPU here)\n",
			own / pairs / 1e6
	}'
}

main "$@"
