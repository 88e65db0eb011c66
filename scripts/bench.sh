#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Measures what a probe on an event loop's dispatch function adds per dispatch, side by side in
# one run: nothing attached, the floor (empty uprobe + uretprobe), jankwatch, and bpftrace doing
# the same latency measurement; for a frame-pointer build of the loop (dispatch starts with an
# emulated `push %rbp`) and a CET build (it starts with a single-stepped `endbr64`).
# Usage: scripts/bench.sh [--quick] [--samples-only]   (root; installs bpftrace from Debian when missing)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build
CONFIGS=(none floor jankwatch bpftrace none-again)
READY_TIMEOUT_MS=60000	# bpftrace may take a while to compile and attach
STOP_TIMEOUT_MS=15000
SETTLE_S=0.2		# after a tool says it is ready, before windows are counted
NOISY_SPREAD_PCT=20	# windows further apart than this, or a loop on a CPU for less than
MIN_ON_CPU_PCT=90	# this share of its windows, and the machine was too busy to trust

WINDOW_MS=500		# the loop's window
SKIP_WINDOWS=2		# ~1 s thrown away after attaching: the window in flight mixes states
MEASURE_WINDOWS=8
SAMPLE_SECONDS=5	# per --unwind mode, for the per-sample cost
BPF_STATS_WAS=
ONLY_SAMPLES=

WORK=
LOADAVG=
LOOP_PID=
TOOL_PID=
declare -A NS SPREAD ON_CPU FIRST_INSN

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

usage()
{
	cat <<EOF
Usage: scripts/bench.sh [--quick] [--samples-only]
  --quick          shorter windows (about half the time, noisier)
  --samples-only   only the per-sample cost of each --unwind mode
Runs as root. Builds build/, installs bpftrace when missing, and prints ns per dispatch for
each configuration and the ratios of the added costs.
EOF
}

parse_args()
{
	while (($#)); do
		case $1 in
		--quick) WINDOW_MS=250 SKIP_WINDOWS=4 MEASURE_WINDOWS=6 SAMPLE_SECONDS=3 ;;
		--samples-only) ONLY_SAMPLES=1 ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown argument: $1" ;;
		esac
		shift
	done
}

now_ms()
{
	local t=${EPOCHREALTIME//[.,]/}

	echo $((t / 1000))
}

# True while @1 runs; a zombie (exited, not yet waited for) counts as gone.
alive()
{
	local stat

	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[[ ${stat%% *} != Z ]]
}

# Kills @1 (TERM, then KILL after 5 s) and reaps it; for the cleanup path, never fails.
reap()
{
	local pid=$1 deadline

	[[ -n $pid ]] || return 0
	kill -TERM "$pid" 2>/dev/null || true
	deadline=$(($(now_ms) + 5000))
	while alive "$pid" && (($(now_ms) < deadline)); do
		sleep 0.05
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

cleanup()
{
	reap "$TOOL_PID"
	reap "$LOOP_PID"
	[[ -z $BPF_STATS_WAS ]] || sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS_WAS"
	[[ -z $WORK ]] || rm -rf "$WORK"
}

# Waits until file @1 has a line matching @2 while process @3 (@4 names it) lives.
wait_for_line()
{
	local file=$1 re=$2 pid=$3 what=$4 deadline limit=$((READY_TIMEOUT_MS / 1000))

	deadline=$(($(now_ms) + READY_TIMEOUT_MS))
	until grep -qE "$re" "$file" 2>/dev/null; do
		if ! alive "$pid"; then
			sed 's/^/  | /' "$file" >&2
			die "$what exited before saying '$re'"
		fi
		(($(now_ms) < deadline)) || die "$what did not say '$re' within $limit s"
		sleep 0.05
	done
}

# Stops the running tool with SIGINT and checks that it exits 0 in time; @1 names it, @2 is
# where its output went.
stop_tool()
{
	local what=$1 out=$2 deadline rc=0 limit=$((STOP_TIMEOUT_MS / 1000))

	kill -INT "$TOOL_PID"
	deadline=$(($(now_ms) + STOP_TIMEOUT_MS))
	while alive "$TOOL_PID"; do
		(($(now_ms) < deadline)) || die "$what did not exit within $limit s of SIGINT"
		sleep 0.05
	done
	wait "$TOOL_PID" || rc=$?
	TOOL_PID=
	if ((rc != 0)); then
		sed 's/^/  | /' "$out" >&2
		die "$what exited with status $rc after SIGINT"
	fi
}

setup()
{
	((EUID == 0)) || die "must run as root (uprobes and BPF need CAP_BPF and CAP_PERFMON)"
	if [[ -x $ROOT/scripts/setup.sh ]]; then
		"$ROOT/scripts/setup.sh" || die "scripts/setup.sh failed"
	fi
	log "building $BUILD"
	cmake -S "$ROOT" -B "$BUILD" >/dev/null || die "cmake configure failed"
	cmake --build "$BUILD" -j2 >/dev/null || die "build failed (run: cmake --build $BUILD)"
	if ! command -v bpftrace >/dev/null; then
		log "installing bpftrace"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >/dev/null || die "apt-get update failed"
		apt-get install -y -qq bpftrace >/dev/null || die "apt-get install bpftrace failed"
	fi
	command -v objdump >/dev/null || die "objdump not found (binutils)"
}

# Prints the first instruction of dispatch() in binary @1, e.g. "push   %rbp".
first_insn()
{
	objdump -d --no-show-raw-insn --disassemble=dispatch "$1" |
		awk -F'\t' '/^ *[0-9a-f]+:\t/ { print $2; exit }'
}

# Sets LOOP_PID to a running loop @1 whose output goes to @2, once it has printed a window.
start_loop()
{
	"$1" "$WINDOW_MS" >"$2" 2>&1 &
	LOOP_PID=$!
	wait_for_line "$2" '^window ' "$LOOP_PID" "$(basename "$1")"
}

# Starts configuration @1 on loop binary @2 and waits until it is attached; output in @3.
attach()
{
	local cfg=$1 bin=$2 out=$3

	case $cfg in
	none | none-again) return 0 ;;
	floor)
		"$BUILD/bench/jw_bench_floor" "$LOOP_PID" "$bin" dispatch >"$out" 2>&1 &
		TOOL_PID=$!
		wait_for_line "$out" 'ready' "$TOOL_PID" jw_bench_floor
		;;
	jankwatch)
		mkdir -p "$WORK/logs"
		# --duration: should the bench itself be killed, jankwatch still ends.
		"$BUILD/jankwatch" -p "$LOOP_PID" --probe "$bin:dispatch" \
			--set ignore_startup_time=3 --duration 600 --log-dir "$WORK/logs" \
			>"$out" 2>&1 &
		TOOL_PID=$!
		wait_for_line "$out" 'ready' "$TOOL_PID" jankwatch
		;;
	bpftrace)
		cat >"$WORK/latency.bt" <<EOF
uprobe:$bin:dispatch { @start[tid] = nsecs; }
uretprobe:$bin:dispatch /@start[tid]/ { @ns = hist(nsecs - @start[tid]); delete(@start[tid]); }
EOF
		bpftrace -B line -p "$LOOP_PID" "$WORK/latency.bt" >"$out" 2>&1 &
		TOOL_PID=$!
		wait_for_line "$out" 'Attaching' "$TOOL_PID" bpftrace
		;;
	esac
	sleep "$SETTLE_S"
}

# Prints the median of the numbers on stdin, one a line, with printf format @1.
median()
{
	sort -g | awk -v fmt="$1\n" '{ v[NR] = $1 }
		END { printf fmt, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Waits for SKIP_WINDOWS + MEASURE_WINDOWS new windows in loop output @1 and, over the last
# MEASURE_WINDOWS of them, sets MEDIAN (ns per dispatch), SPREAD_PCT (the range of the windows
# but the highest and the lowest, over the median: one odd window does not move a median either)
# and ON_CPU_PCT (median share of the window the loop ran).
measure()
{
	local out=$1 base need deadline windows

	base=$(wc -l <"$out")
	need=$((base + SKIP_WINDOWS + MEASURE_WINDOWS))
	deadline=$(($(now_ms) + (SKIP_WINDOWS + MEASURE_WINDOWS) * WINDOW_MS * 3 + 10000))
	while (($(wc -l <"$out") < need)); do
		alive "$LOOP_PID" || die "the bench loop exited: $(tail -n 3 "$out")"
		(($(now_ms) < deadline)) || die "the bench loop printed no window for too long"
		sleep 0.05
	done
	windows=$(sed -n "$((base + SKIP_WINDOWS + 1)),${need}p" "$out")
	MEDIAN=$(awk '{ print $3 }' <<<"$windows" | median %.2f)
	ON_CPU_PCT=$(awk '{ print $5 }' <<<"$windows" | median %.1f)
	SPREAD_PCT=$(awk '{ print $3 }' <<<"$windows" | sort -g |
		awk -v m="$MEDIAN" '{ v[NR] = $1 } END { t = NR >= 4
			printf "%.1f\n", (m > 0 ? 100 * (v[NR - t] - v[1 + t]) / m : 0) }')
}

# Runs every configuration on loop binary @2 (build @1) and keeps the medians in NS.
run_build()
{
	local name=$1 bin=$2 expect=$3 cfg out

	FIRST_INSN[$name]=$(first_insn "$bin")
	[[ ${FIRST_INSN[$name]} =~ $expect ]] ||
		die "$bin: dispatch starts with '${FIRST_INSN[$name]}', expected $expect"
	log "$name: dispatch starts with ${FIRST_INSN[$name]}"
	start_loop "$bin" "$WORK/loop-$name.out"
	for cfg in "${CONFIGS[@]}"; do
		out=$WORK/$name-$cfg.out
		log "$name: $cfg"
		attach "$cfg" "$bin" "$out"
		measure "$WORK/loop-$name.out"
		NS[$name,$cfg]=$MEDIAN
		SPREAD[$name,$cfg]=$SPREAD_PCT
		ON_CPU[$name,$cfg]=$ON_CPU_PCT
		[[ -z $TOOL_PID ]] || stop_tool "$cfg" "$out"
	done
	reap "$LOOP_PID"
	LOOP_PID=
}

# Prints @1 / @2 with two decimals, or "n/a" when @2 is not above 0.
ratio()
{
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "n/a" }'
}

# Prints "met" when @1 @2 @3 holds for the floats @1 and @3 (@2: < or <=), else "NOT met".
verdict()
{
	awk -v a="$1" -v op="$2" -v b="$3" 'BEGIN {
		ok = a != "n/a" && (op == "<" ? a < b : a <= b)
		print ok ? "met" : "NOT met" }'
}

# True when some configuration of build @1 ran on a busy machine (see NOISY_SPREAD_PCT).
noisy()
{
	local cfg

	for cfg in "${CONFIGS[@]}"; do
		awk -v s="${SPREAD[$1,$cfg]}" -v c="${ON_CPU[$1,$cfg]}" -v ms="$NOISY_SPREAD_PCT" \
			-v mc="$MIN_ON_CPU_PCT" 'BEGIN { exit !(s > ms || c < mc) }' && return 0
	done
	return 1
}

print_build()
{
	local name=$1 cfg base added jf bf jb
	local -A add

	base=${NS[$name,none]}
	printf '\n%s build: dispatch starts with: %s\n' "$name" "${FIRST_INSN[$name]}"
	printf '  %-12s %12s %12s %9s %8s\n' config ns/dispatch "added ns" spread on-cpu
	for cfg in "${CONFIGS[@]}"; do
		added=$(awk -v a="${NS[$name,$cfg]}" -v b="$base" 'BEGIN { printf "%.1f", a - b }')
		add[$cfg]=$added
		printf '  %-12s %12s %12s %8s%% %7s%%\n' "$cfg" "${NS[$name,$cfg]}" "$added" \
			"${SPREAD[$name,$cfg]}" "${ON_CPU[$name,$cfg]}"
	done
	jf=$(ratio "${add[jankwatch]}" "${add[floor]}")
	bf=$(ratio "${add[bpftrace]}" "${add[floor]}")
	jb=$(ratio "${add[jankwatch]}" "${add[bpftrace]}")
	printf '  added cost: jankwatch/floor %s  bpftrace/floor %s  jankwatch/bpftrace %s\n' \
		"$jf" "$bf" "$jb"
	if [[ $name == fp ]]; then
		printf '  budget (DESIGN.md): jankwatch/floor <= 1.15: %s; ' \
			"$(verdict "$jf" "<=" 1.15)"
		printf 'jankwatch/bpftrace < 1: %s\n' "$(verdict "$jb" "<" 1)"
	else
		printf '  budget (DESIGN.md): jankwatch/bpftrace <= 0.25: %s\n' \
			"$(verdict "$jb" "<=" 0.25)"
	fi
	if noisy "$name"; then
		printf '  WARNING: busy machine (spread over %s%% or loop on a CPU under %s%%);\n' \
			"$NOISY_SPREAD_PCT" "$MIN_ON_CPU_PCT"
		printf '  these ratios are unreliable: rerun when the machine is idle\n'
	fi
}

print_report()
{
	local machine=bare-metal

	grep -qw hypervisor /proc/cpuinfo && machine=VM
	printf 'jankwatch bench: %s, %s CPUs, %s, kernel %s\n' \
		"$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" "$(nproc)" \
		"$machine" "$(uname -r)"
	printf 'median of %d windows of %d ms per configuration, after %d windows thrown away;\n' \
		"$MEASURE_WINDOWS" "$WINDOW_MS" "$SKIP_WINDOWS"
	printf 'added ns: over "none"; spread: range of the windows but the highest and\n'
	printf 'the lowest, over the median; on-cpu: median share of a window the loop ran\n'
	printf '(under 100: something else ran)\n'
	printf 'load average at the start: %s\n' "$LOADAVG"
	print_build fp
	print_build cet
}

# The per-sample cost of each --unwind mode on jw_chain (no frame pointers, a 900 ms task after
# each 300 ms wait, so most samples land in a task): the kernel side from the BPF run-time stats of
# the sampling program, user space from jankwatch's own -v timing of its reports.
sample_cost()
{
	local chain=$BUILD/tests/targets/jw_chain mode pid stats
	local -A knl usr

	BPF_STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1
	"$chain" --ms 900 --every 300 >/dev/null &
	LOOP_PID=$!
	pid=$LOOP_PID
	# jankwatch reports nothing in the target's first 3 s (ignore_startup_time).
	sleep 3.2
	for mode in fp auto dwarf; do
		log "sample cost: --unwind $mode"
		"$BUILD/jankwatch" -v -p "$pid" --probe "$chain:dispatch" --unwind "$mode" --all \
			--set ignore_startup_time=3 --log-dir "$WORK/samples-$mode" \
			>"$WORK/jw-$mode.out" 2>"$WORK/jw-$mode.err" &
		TOOL_PID=$!
		wait_for_line "$WORK/jw-$mode.err" ready "$TOOL_PID" jankwatch
		sleep "$SAMPLE_SECONDS"
		stats=$(bpftool prog show name on_sample --json |
			python3 -c 'import json,sys; p=json.load(sys.stdin); p=p[0] if isinstance(p,list) else p
print(p.get("run_time_ns",0), p.get("run_cnt",0))')
		stop_tool jankwatch "$WORK/jw-$mode.err"
		knl[$mode]=$(awk -v t="${stats% *}" -v n="${stats#* }" \
			'BEGIN { printf "%.1f us over %d samples", n ? t / n / 1000 : 0, n }')
		# The first report loads the modules' symbol and line tables: left out, as warm-up.
		usr[$mode]=$(awk '/unwound and named in/ && seen++ { n += $(NF-6); t += $(NF-1) }
			END { printf "%.1f us over %d samples", n ? t / n : 0, n }' "$WORK/jw-$mode.err")
	done
	reap "$pid"
	LOOP_PID=
	printf '\nper-sample cost on jw_chain (no frame pointers), %ss per mode:\n' "$SAMPLE_SECONDS"
	printf '  %-6s %-32s %s\n' mode "in the target (BPF program)" "in jankwatch (unwind+name)"
	for mode in fp auto dwarf; do
		printf '  %-6s %-32s %s\n' "$mode" "${knl[$mode]}" "${usr[$mode]}"
	done
}

main()
{
	parse_args "$@"
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	setup
	WORK=$(mktemp -d /tmp/jw-bench.XXXXXX)
	LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
	if [[ -z $ONLY_SAMPLES ]]; then
		run_build fp "$BUILD/bench/jw_bench_loop_fp" '^push +%rbp'
		run_build cet "$BUILD/bench/jw_bench_loop_cet" '^endbr64'
		print_report
	fi
	sample_cost
}

main "$@"
