#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A busy loop at 100,000 iterations a second (bench/rate_loop.c: one epoll_wait() that returns at
# once and one task a period), watched in each of jankwatch's ways of seeing its tasks: --probe
# on its dispatch(), syscall mode on the wait's tracepoints (wait_tracepoints=1), and syscall mode
# on uprobes on libc's epoll_wait (wait_tracepoints=0); nothing attached between them. REPS
# repetitions, the configurations in a rotated order. Prints for each: the ns an iteration spends
# outside its task's work (the wait, the call, the probes) and what jankwatch adds to that over
# nothing attached in the same repetition, the rate the loop kept, and jankwatch's own CPU (every
# thread's, from schedstat) over the windows, in % of a core, against the budget of 1%.
# Usage: bench/rate.sh [REPS] [RATE]   (root; build first: cmake --build build)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build
LOOP=$BUILD/bench/jw_bench_rate
REPS=${1:-3}
RATE=${2:-100000}
WINDOW_MS=500
SKIP_WINDOWS=2
MEASURE_WINDOWS=8
BUDGET_PCT=1
# shellcheck disable=SC2034 # read by bench/lib.sh's wait_for_line and stop_tool
READY_TIMEOUT_MS=60000 STOP_TIMEOUT_MS=15000
CONFIGS=(none probe sys-tracepoints sys-uprobes)
WORK=
LOOP_PID=
TOOL_PID=

# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

cleanup()
{
	reap "$TOOL_PID"
	reap "$LOOP_PID"
	[[ -z $WORK ]] || rm -rf "$WORK"
}

# CPU time of every thread of process @1, ns.
cpu_ns()
{
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ t += $1 } END { printf "%.0f", t }'
}

# Starts jankwatch in configuration @1 on the loop, output in @2, and waits until it is ready.
attach()
{
	local -a how

	case $1 in
	probe) how=(--probe "$LOOP:dispatch") ;;
	sys-tracepoints) how=(--set wait_tracepoints=1) ;;
	sys-uprobes) how=(--set wait_tracepoints=0) ;;
	esac
	"$BUILD/jankwatch" -p "$LOOP_PID" "${how[@]}" --duration 600 \
		--log-dir "$WORK/logs-$1" >"$2" 2>&1 &
	TOOL_PID=$!
	wait_for_line "$2" ready "$TOOL_PID" "jankwatch ($1)"
}

# Waits until the loop's output @1 has @2 lines, while the loop runs.
wait_windows()
{
	while (($(wc -l <"$1") < $2)); do
		alive "$LOOP_PID" || die "the loop exited: $(tail -n 3 "$1")"
		sleep 0.02
	done
}

# Waits for SKIP_WINDOWS + MEASURE_WINDOWS new windows of the loop; sets OUTSIDE (median ns an
# iteration spent outside its work), KEPT (median iterations a second) and JW_PCT (jankwatch's
# CPU over the measured windows in % of a core; empty without one).
measure()
{
	local out=$WORK/loop.out base need t0 t1 c0='' c1 windows

	base=$(wc -l <"$out")
	need=$((base + SKIP_WINDOWS))
	wait_windows "$out" "$need"
	t0=$(now_ms)
	[[ -z $TOOL_PID ]] || c0=$(cpu_ns "$TOOL_PID")
	need=$((need + MEASURE_WINDOWS))
	wait_windows "$out" "$need"
	t1=$(now_ms)
	JW_PCT=''
	if [[ -n $TOOL_PID ]]; then
		alive "$TOOL_PID" || die "jankwatch exited while watching"
		c1=$(cpu_ns "$TOOL_PID")
		JW_PCT=$(awk -v a="$c0" -v b="$c1" -v ms=$((t1 - t0)) \
			'BEGIN { printf "%.3f", 100 * (b - a) / (ms * 1e6) }')
	fi
	windows=$(sed -n "$((base + SKIP_WINDOWS + 1)),${need}p" "$out")
	OUTSIDE=$(awk '{ print $3 }' <<<"$windows" | median %.1f)
	KEPT=$(awk '{ print $5 }' <<<"$windows" | median %.0f)
}

main()
{
	local rep cfg out
	local -A outside kept pct added

	trap cleanup EXIT
	((EUID == 0)) || die "rate.sh: run as root"
	[[ -x $LOOP && -x $BUILD/jankwatch ]] || die "rate.sh: build first (cmake --build build)"
	WORK=$(mktemp -d /tmp/jw-rate.XXXXXX)
	"$LOOP" "$RATE" "$WINDOW_MS" >"$WORK/loop.out" 2>&1 &
	LOOP_PID=$!
	wait_for_line "$WORK/loop.out" '^window ' "$LOOP_PID" jw_bench_rate
	for ((rep = 0; rep < REPS; rep++)); do
		log "rate: repetition $((rep + 1)) of $REPS"
		while read -r cfg; do
			out=$WORK/jw-$cfg.out
			[[ $cfg == none ]] || attach "$cfg" "$out"
			measure
			outside[$cfg]+="$OUTSIDE "
			kept[$cfg]+="$KEPT "
			outside[$cfg,$rep]=$OUTSIDE
			[[ -z $JW_PCT ]] || pct[$cfg]+="$JW_PCT "
			[[ -z $TOOL_PID ]] || stop_tool "jankwatch ($cfg)" "$out"
		done < <(rotated "$rep" "${CONFIGS[@]}")
		for cfg in "${CONFIGS[@]:1}"; do
			added[$cfg]+="$(awk -v a="${outside[$cfg,$rep]}" -v n="${outside[none,$rep]}" \
				'BEGIN { printf "%.1f", a - n }') "
		done
	done
	printf '\na busy loop at %s iterations/s (an epoll_wait and a task each), %d repetitions, medians:\n' \
		"$RATE" "$REPS"
	printf '  %-16s %12s %10s %12s %16s\n' config "outside ns" "added ns" "iter/s" "jankwatch CPU"
	for cfg in "${CONFIGS[@]}"; do
		local o a k p=''
		o=$(tr ' ' '\n' <<<"${outside[$cfg]}" | sed '/^$/d' | median %.1f)
		k=$(tr ' ' '\n' <<<"${kept[$cfg]}" | sed '/^$/d' | median %.0f)
		a=-
		[[ $cfg == none ]] || a=$(tr ' ' '\n' <<<"${added[$cfg]}" | sed '/^$/d' | median %.1f)
		[[ $cfg == none ]] || p=$(tr ' ' '\n' <<<"${pct[$cfg]}" | sed '/^$/d' | median %.3f)
		printf '  %-16s %12s %10s %12s %15s%%\n' "$cfg" "$o" "$a" "$k" "${p:--}"
	done
	for cfg in "${CONFIGS[@]:1}"; do
		p=$(tr ' ' '\n' <<<"${pct[$cfg]}" | sort -g | tail -1)
		printf '  budget: %s, jankwatch'"'"'s own CPU at %s/s, worst of %d: %s%% <= %s%%: %s\n' \
			"$cfg" "$RATE" "$REPS" "$p" "$BUDGET_PCT" "$(verdict "$p" "<=" "$BUDGET_PCT")"
	done
	for cfg in sys-tracepoints sys-uprobes; do
		printf '  (%s: %s)\n' "$cfg" "$(grep -m1 -oE 'syscall mode on [^(]*[^( ]' "$WORK/jw-$cfg.out" ||
			echo '?')"
	done
}

main "$@"
