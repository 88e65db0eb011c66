#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Checks DESIGN.md's "Performance budget" in one run. What a probe on an event loop's dispatch
# function adds per task, configurations interleaved over REPS repetitions, medians: nothing
# attached, the floor (empty uprobe + uretprobe), jankwatch, bpftrace, libbpf-tools'
# funclatency and bcc's funclatency-bpfcc (where it runs), on three builds of the loop (frame
# pointers, none, -fcf-protection=full); syscall mode against the two bare tracepoints; a glib
# and a libuv loop with and without the handler sites' probes per callback; then
# jankwatch's own CPU and memory over a minute at ~1000 tasks/s, the time from a slow task's end
# to its event line, and the per-sample cost of each --unwind mode, and of a thread's Python
# frames; what naming a Python callback costs on each CPython; a busy loop at 100,000 tasks a
# second in each mode (bench/rate.sh); what watching does to a slow task's own time
# (bench/observer.sh); what the metrics and the journal cost jankwatch (bench/fleet.sh); and what
# watching adds to real servers' requests, redis and nginx (bench/servers.sh), and to redis's
# beside a server nobody watches, in the same moments (bench/side_by_side.sh).
# Plots the cost per task.
# Usage: scripts/bench.sh [--quick] [--fp-only | --syscall-only | --samples-only | --sites-only |
#                          --fleet-only | --rate-only | --observer-only | --servers-only |
#                          --page-only]
#        (root; installs bpftrace, libbpf-tools and gnuplot from Debian when missing)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build
PLOT=$ROOT/bench/results.png
PROBE_CONFIGS=(none floor jankwatch bpftrace funclatency funclatency-bpfcc)
SYSCALL_CONFIGS=(none sys-floor tp-floor tp-floor-clock jankwatch jankwatch-up)
SITE_CONFIGS=(none jankwatch-nosites jankwatch-sites)
READY_TIMEOUT_MS=60000	# bpftrace and bcc may take a while to compile and attach
STOP_TIMEOUT_MS=15000
SETTLE_S=0.2		# after a tool says it is ready, before windows are counted
NOISY_SPREAD_PCT=20	# repetitions further apart than this, or a loop on a CPU for less than
MIN_ON_CPU_PCT=90	# this share of its windows, and the machine was too busy to trust

REPS=7			# each a pass over every configuration, in a rotated order
WINDOW_MS=250		# the loop's window
SKIP_WINDOWS=2		# thrown away after attaching: the window in flight mixes states
MEASURE_WINDOWS=6	# per configuration and repetition
WATCH_S=70		# jankwatch's own CPU and memory: how long it watches (10 s of warm-up + a minute)
RSS_EVERY_S=10
JANKS=20		# slow tasks timed from their end to their event line
SAMPLE_SECONDS=5	# per --unwind mode, for the per-sample cost
BPF_STATS_WAS=
ONLY_SAMPLES=
ONLY_SITES=
ONLY_FLEET=
ONLY_FP=
ONLY_SYSCALL=
ONLY_RATE=
ONLY_OBSERVER=
ONLY_SERVERS=
ONLY_PAGE=
SERVERS_REPS=5		# bench/servers.sh's repetitions
SIDE_BY_SIDE_S=120	# bench/side_by_side.sh's seconds a measure
FLEET_S=60		# bench/fleet.sh's window
RATE_REPS=3		# bench/rate.sh's repetitions
OBSERVER_PAIRS=12	# bench/observer.sh's pairs
BCC_SKIPPED=		# why funclatency-bpfcc is left out, when it is
JW_WAITS=		# syscall mode: what wait_tracepoints=2 chose, as jankwatch said it

WORK=
LOADAVG=
LOOP_PID=
REF_PID=		# the floor that stays on dispatch_ref() while a build runs
TOOL_PID=
READER_PID=
# NS, SPREAD, ON_CPU: per "build,config" over the repetitions; NS_REP per "build,config,rep".
# REF_REP: dispatch_ref()'s ns per call in the same windows, the floor on it; XREF, XREF_SPREAD:
# per "build,config", the added ns over the floor's added ns in those windows.
declare -A NS NS_REP SPREAD ON_CPU ON_CPU_REP FIRST_INSN JW_PLACE JW_GUARD REF_REP XREF XREF_SPREAD
declare -a BUILDS=() SITE_BUILDS=()
WATCH_CPU_PCT=''
WATCH_TICKS=''
WATCH_TASKS_S=''
RSS_SERIES=''
RSS_FIRST=''
RSS_BASE=''	# the reading after the first RSS_EVERY_S: the warm-up is over
RSS_LAST=''
ANON_SERIES=''	# RssAnon beside VmRSS: heap and stacks, apart from pages of mapped files
LAT_MEDIAN=''
LAT_MAX=''
LAT_N=''

# Helpers (processes, statistics, verdicts) and the report and plot, sourced.
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
# shellcheck source=bench/report.sh
source "$ROOT/bench/report.sh"

usage()
{
	cat <<EOF
Usage: scripts/bench.sh [--quick] [--fp-only | --syscall-only | --samples-only | --sites-only |
                         --fleet-only | --rate-only | --observer-only | --servers-only |
                         --page-only]
  --quick          3 repetitions, shorter windows, a 20 s watch, 10 janks, 8 pairs (noisier)
  --fp-only        only the frame-pointer build's table and budget lines (a few minutes: to
                   set two commits side by side)
  --syscall-only   only syscall mode's table and budget lines (a loop whose every task is one
                   epoll_wait(), against its tracepoints with empty programs), the same way
  --samples-only   only the per-sample cost of each --unwind mode, of a thread's Python
                   frames, and of naming a Python callback on each CPython
  --sites-only     only the handler sites' cost, on glib, libuv, libev, sd-event and Qt
                   loops
  --fleet-only     only what the metrics and the journal cost jankwatch (bench/fleet.sh)
  --rate-only      only a busy loop at 100,000 tasks a second in each mode (bench/rate.sh)
  --observer-only  only what watching does to a slow task's own time (bench/observer.sh)
  --servers-only   only what watching adds to redis's and nginx's requests, with 1 client
                   and with 50, beside bpftrace (bench/servers.sh); then both with 1 and
                   50 side by side with a server nobody watches (bench/side_by_side.sh)
  --page-only      only report --html over 10,000 and 20,000 events: the page's size, the
                   time to write it and chromium's to load it (bench/page.py)
Runs as root. Builds build/, installs bpftrace, libbpf-tools and gnuplot when missing, prints
ns per task for each tool and build with ratios to the baseline and the floor, jankwatch's own
costs, whether DESIGN.md's budget holds, and plots the cost per task to bench/results.png.
PY_BASE=PATH: a jankwatch built from an earlier commit names a python3.11 ticker beside the
others, and the Python naming costs are compared with it.
EOF
}

parse_args()
{
	while (($#)); do
		case $1 in
		--quick)
			REPS=3 WINDOW_MS=200 MEASURE_WINDOWS=4 WATCH_S=20 JANKS=10
			SAMPLE_SECONDS=3 FLEET_S=30 RATE_REPS=2 OBSERVER_PAIRS=8 SERVERS_REPS=3
			SIDE_BY_SIDE_S=40
			;;
		--samples-only) ONLY_SAMPLES=1 ;;
		--sites-only) ONLY_SITES=1 ;;
		--fleet-only) ONLY_FLEET=1 ;;
		--fp-only) ONLY_FP=1 ;;
		--syscall-only) ONLY_SYSCALL=1 ;;
		--rate-only) ONLY_RATE=1 ;;
		--observer-only) ONLY_OBSERVER=1 ;;
		--servers-only) ONLY_SERVERS=1 ;;
		--page-only) ONLY_PAGE=1 ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown argument: $1" ;;
		esac
		shift
	done
}

cleanup()
{
	local pid

	# REF_PID and LOOP_PID may hold several (python_naming_cost).
	for pid in $TOOL_PID $REF_PID $READER_PID $LOOP_PID; do
		reap "$pid"
	done
	[[ -z $BPF_STATS_WAS ]] || sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS_WAS"
	[[ -z $WORK ]] || rm -rf "$WORK"
}

setup()
{
	((EUID == 0)) || die "must run as root (uprobes and BPF need CAP_BPF and CAP_PERFMON)"
	if [[ -x $ROOT/scripts/setup.sh ]]; then
		"$ROOT/scripts/setup.sh" || die "scripts/setup.sh failed"
	fi
	log "building $BUILD"
	cmake -S "$ROOT" -B "$BUILD" -DJW_TESTS=ON >/dev/null || die "cmake configure failed"
	cmake --build "$BUILD" -j2 >/dev/null || die "build failed (run: cmake --build $BUILD)"
	need bpftrace bpftrace
	need libbpf-tools funclatency
	need gnuplot-nox gnuplot
	command -v objdump >/dev/null || die "objdump not found (binutils)"
	command -v python3 >/dev/null || die "python3 not found"
}

# Sets BCC_SKIPPED unless bcc's funclatency can run here. bcc compiles its programs at start
# and needs the running kernel's headers (a -dev package or CONFIG_IKHEADERS); without them it
# is not even installed. Where it is installed, a trial attach on loop @1 (binary @2) decides.
check_bcc()
{
	local pid=$1 bin=$2 kver out=$WORK/bcc-trial.out

	kver=$(uname -r)
	if ! command -v funclatency-bpfcc >/dev/null &&
		[[ ! -e /lib/modules/$kver/build && ! -e /sys/kernel/kheaders.tar.xz ]]; then
		BCC_SKIPPED="no headers for kernel $kver (/lib/modules/$kver/build and"
		BCC_SKIPPED+=" /sys/kernel/kheaders.tar.xz absent; Debian ships none for it)"
	elif ! command -v funclatency-bpfcc >/dev/null; then
		need bpfcc-tools funclatency-bpfcc
	fi
	if [[ -z $BCC_SKIPPED ]]; then
		funclatency-bpfcc -p "$pid" -d 1 "$bin:dispatch" >"$out" 2>&1 ||
			BCC_SKIPPED="it fails here: $(grep -m1 -iE 'unable|error|fail' "$out")"
	fi
	[[ -z $BCC_SKIPPED ]] || log "funclatency-bpfcc skipped: $BCC_SKIPPED"
}

# check_bcc on a loop of the fp build started for it alone.
bcc_trial()
{
	start_loop "$BUILD/bench/jw_bench_loop_fp" "$WORK/bcc-loop.out"
	check_bcc "$LOOP_PID" "$BUILD/bench/jw_bench_loop_fp"
	reap "$LOOP_PID"
	LOOP_PID=
}

# Prints the first instruction of function @2 in ELF file @1, e.g. "push   %rbp". By address:
# objdump's --disassemble=SYM misses libc's versioned names (epoll_wait@@GLIBC_2.3.2).
first_insn()
{
	local addr

	addr=$({ nm "$1" 2>/dev/null; nm -D "$1"; } | awk -v s="$2" '
		($3 == s || index($3, s "@") == 1) && $2 ~ /[tTiW]/ { print $1; exit }')
	[[ -n $addr ]] || die "$1: no function $2"
	objdump -d --no-show-raw-insn --start-address=$((16#$addr)) \
		--stop-address=$((16#$addr + 16)) "$1" |
		awk -F'\t' '/^ *[0-9a-f]+:\t/ { sub(/ +#.*/, "", $2); print $2; exit }'
}

# Sets LOOP_PID to a running loop @1 whose output goes to @2, once it has printed a window.
start_loop()
{
	"$1" "$WINDOW_MS" >"$2" 2>&1 &
	LOOP_PID=$!
	wait_for_line "$2" '^window ' "$LOOP_PID" "$(basename "$1")"
}

# Prints where jankwatch's -v output @1 says its entry probe went, e.g. "+4: past endbr64 to
# push %rbp, which is emulated (endbr64 is single-stepped)", for the function @2.
jw_placement()
{
	local place

	place=$(grep -m1 -E "uprobe (session )?on [^ ]*:$2: " "$1" | sed -E "s/.*:$2: //")
	if grep -q -E "uprobe session on [^ ]*:$2: " "$1"; then
		place+="; entry and return one uprobe session"
	fi
	echo "$place"
}

# Starts configuration @1 on loop binary @2 and waits until it is attached; output in @3.
attach()
{
	local cfg=$1 bin=$2 out=$3

	case $cfg in
	none) return 0 ;;
	floor | floor-clock)
		local -a clock=()
		[[ $cfg == floor ]] || clock=(--clock)
		"$BUILD/bench/jw_bench_floor" "${clock[@]}" "$LOOP_PID" "$bin" dispatch >"$out" 2>&1 &
		TOOL_PID=$!
		wait_for_line "$out" 'ready' "$TOOL_PID" jw_bench_floor
		;;
	sys-floor)
		# The wait's own tracepoints: libbpf finds their ids in tracefs, mounted here in a
		# mount namespace of the floor's own when the machine has none mounted ($0: the
		# inner shell's, on purpose).
		# shellcheck disable=SC2016
		unshare -m sh -c 'mountpoint -q /sys/kernel/tracing ||
			mount -t tracefs nodev /sys/kernel/tracing && exec "$0" --syscall epoll_wait' \
			"$BUILD/bench/jw_bench_tp_floor" >"$out" 2>&1 &
		TOOL_PID=$!
		wait_for_line "$out" 'ready' "$TOOL_PID" "jw_bench_tp_floor --syscall"
		;;
	tp-floor | tp-floor-clock)
		local -a tp_clock=()
		[[ $cfg == tp-floor ]] || tp_clock=(--clock)
		"$BUILD/bench/jw_bench_tp_floor" "${tp_clock[@]}" >"$out" 2>&1 &
		TOOL_PID=$!
		wait_for_line "$out" 'ready' "$TOOL_PID" jw_bench_tp_floor
		;;
	jankwatch)
		mkdir -p "$WORK/logs"
		# --duration: should the bench itself be killed, jankwatch still ends. Without
		# --probe (syscall mode) it sees the waits as wait_tracepoints=2 chooses, and says
		# which. -v: where the probe went.
		"$BUILD/jankwatch" -v -p "$LOOP_PID" ${bin:+--probe "$bin:dispatch"} \
			--set ignore_startup_time=3 --duration 600 --log-dir "$WORK/logs" \
			>"$out" 2>&1 &
		TOOL_PID=$!
		wait_for_line "$out" 'ready' "$TOOL_PID" jankwatch
		;;
	jankwatch-nosites | jankwatch-sites)
		# A glib or libuv loop: its preset without handler sites (the waits alone), or with
		# them kept whatever their rate (the default samples them on so fast a loop).
		mkdir -p "$WORK/logs"
		"$BUILD/jankwatch" -v -p "$LOOP_PID" \
			--set "handler_sites=$([[ $cfg == jankwatch-sites ]] && echo 1000000 || echo 0)" \
			--set ignore_startup_time=3 --duration 600 --log-dir "$WORK/logs" \
			>"$out" 2>&1 &
		TOOL_PID=$!
		wait_for_line "$out" 'ready' "$TOOL_PID" jankwatch
		;;
	jankwatch-up)
		# Syscall mode on uprobes on libc's wait functions, whatever the default chooses.
		mkdir -p "$WORK/logs"
		"$BUILD/jankwatch" -v -p "$LOOP_PID" --set wait_tracepoints=0 \
			--set ignore_startup_time=3 --duration 600 --log-dir "$WORK/logs" \
			>"$out" 2>&1 &
		TOOL_PID=$!
		wait_for_line "$out" 'ready' "$TOOL_PID" jankwatch
		;;
	bpftrace)
		# BEGIN runs once every probe is attached: its line, not "Attaching", says ready.
		cat >"$WORK/latency.bt" <<EOF
BEGIN { printf("ready\\n"); }
uprobe:$bin:dispatch { @start[tid] = nsecs; }
uretprobe:$bin:dispatch /@start[tid]/ { @ns = hist(nsecs - @start[tid]); delete(@start[tid]); }
EOF
		bpftrace -B line -p "$LOOP_PID" "$WORK/latency.bt" >"$out" 2>&1 &
		TOOL_PID=$!
		wait_for_line "$out" '^ready' "$TOOL_PID" bpftrace
		;;
	funclatency)
		# ":dispatch": the pid's own executable (a path before the colon is taken for a
		# library name); stdbuf: its "Tracing" line would sit in a full buffer.
		stdbuf -oL funclatency -p "$LOOP_PID" :dispatch >"$out" 2>&1 &
		TOOL_PID=$!
		wait_for_line "$out" '^Tracing' "$TOOL_PID" funclatency
		;;
	funclatency-bpfcc)
		funclatency-bpfcc -p "$LOOP_PID" "$bin:dispatch" >"$out" 2>&1 &
		TOOL_PID=$!
		wait_for_line "$out" '^Tracing' "$TOOL_PID" funclatency-bpfcc
		;;
	esac
	sleep "$SETTLE_S"
}

# Waits for SKIP_WINDOWS + MEASURE_WINDOWS new windows in loop output @1 and, over the last
# MEASURE_WINDOWS of them, sets MEDIAN (ns per task), ON_CPU_PCT (median share of the window
# the loop ran) and, from a loop that prints it, REF_MEDIAN (dispatch_ref()'s ns per call).
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
	REF_MEDIAN=''
	[[ $(awk '{ print NF; exit }' <<<"$windows") -lt 6 ]] ||
		REF_MEDIAN=$(awk '{ print $6 }' <<<"$windows" | median %.2f)
}

# Sets NS, SPREAD and ON_CPU of build @1, configuration @2, from its repetitions.
summarize()
{
	local name=$1 cfg=$2 rep vals='' cpus=''

	for ((rep = 0; rep < REPS; rep++)); do
		vals+="${NS_REP[$name,$cfg,$rep]}"$'\n'
		cpus+="${ON_CPU_REP[$name,$cfg,$rep]}"$'\n'
	done
	NS[$name,$cfg]=$(median %.2f <<<"${vals%$'\n'}")
	SPREAD[$name,$cfg]=$(spread_pct "${NS[$name,$cfg]}" <<<"${vals%$'\n'}")
	ON_CPU[$name,$cfg]=$(median %.1f <<<"${cpus%$'\n'}")
}

# Sets XREF and XREF_SPREAD of build @1, configuration @2: per repetition, the ns it added over
# "none" against the ns the floor on dispatch_ref() added in the same windows; their median. Run
# after "none" is summarized: a call's bare cost is the same in the twin functions.
summarize_ref()
{
	local name=$1 cfg=$2 rep ratios=''

	[[ -n ${REF_REP[$name,$cfg,0]:-} ]] || return 0
	for ((rep = 0; rep < REPS; rep++)); do
		ratios+=$(awk -v a="${NS_REP[$name,$cfg,$rep]}" -v r="${REF_REP[$name,$cfg,$rep]}" \
			-v n="${NS[$name,none]}" 'BEGIN { printf "%.4f", (r > n ? (a - n) / (r - n) : 0) }')
		ratios+=$'\n'
	done
	XREF[$name,$cfg]=$(median %.3f <<<"${ratios%$'\n'}")
	XREF_SPREAD[$name,$cfg]=$(spread_pct "${XREF[$name,$cfg]}" <<<"${ratios%$'\n'}")
}

# Runs every configuration @4... on loop binary @2 (build @1, probing @3:dispatch; @3 empty for
# syscall mode) REPS times, interleaved, and keeps the medians.
run_build()
{
	local name=$1 loop=$2 bin=$3 cfg out rep

	shift 3
	BUILDS+=("$name")
	start_loop "$loop" "$WORK/loop-$name.out"
	if [[ -n $bin ]]; then
		# The reference: the floor on the twin function for the whole run of the build.
		"$BUILD/bench/jw_bench_floor" "$LOOP_PID" "$bin" dispatch_ref \
			>"$WORK/$name-ref.out" 2>&1 &
		REF_PID=$!
		wait_for_line "$WORK/$name-ref.out" 'ready' "$REF_PID" "jw_bench_floor (dispatch_ref)"
	fi
	for ((rep = 0; rep < REPS; rep++)); do
		log "$name: repetition $((rep + 1)) of $REPS"
		while read -r cfg; do
			out=$WORK/$name-$cfg.out
			attach "$cfg" "$bin" "$out"
			measure "$WORK/loop-$name.out"
			NS_REP[$name,$cfg,$rep]=$MEDIAN
			ON_CPU_REP[$name,$cfg,$rep]=$ON_CPU_PCT
			[[ -z $REF_MEDIAN ]] || REF_REP[$name,$cfg,$rep]=$REF_MEDIAN
			[[ -z $TOOL_PID ]] || stop_tool "$cfg" "$out"
		done < <(rotated "$rep" "$@")
	done
	if [[ -n $REF_PID ]]; then
		alive "$REF_PID" || die "the floor on dispatch_ref exited: $(tail -n 3 "$WORK/$name-ref.out")"
		reap "$REF_PID"
		REF_PID=
	fi
	reap "$LOOP_PID"
	LOOP_PID=
	for cfg in "$@"; do
		summarize "$name" "$cfg"
	done
	for cfg in "$@"; do
		summarize_ref "$name" "$cfg"
	done
	if [[ -n $bin ]]; then
		JW_PLACE[$name]=$(jw_placement "$WORK/$name-jankwatch.out" dispatch)
	elif [[ $name != syscall ]]; then
		# A handler sites' loop: the preset jankwatch chose and the sites it found.
		JW_PLACE[$name]=$(grep -m1 -o 'loop [a-z-]* (auto: .*' \
			"$WORK/$name-jankwatch-sites.out" || echo '?')
	else
		JW_PLACE[$name]=$(jw_placement "$WORK/$name-jankwatch-up.out" epoll_wait)
		# What wait_tracepoints=2 chose in the default configuration's last run, and why.
		JW_WAITS=$(grep -m1 -o 'syscall mode on .*' "$WORK/$name-jankwatch.out" || echo '?')
	fi
}

# Runs the uprobe configurations on the build @1 of the loop, after checking that its dispatch()
# starts with an instruction matching @2.
probe_build()
{
	local name=$1 bin=$BUILD/bench/jw_bench_loop_$1 expect=$2
	local -a cfgs=()

	FIRST_INSN[$name]=$(first_insn "$bin" dispatch)
	[[ ${FIRST_INSN[$name]} =~ $expect ]] ||
		die "$bin: dispatch starts with '${FIRST_INSN[$name]}', expected $expect"
	[[ $(first_insn "$bin" dispatch_ref) == "${FIRST_INSN[$name]}" ]] ||
		die "$bin: dispatch_ref does not start as dispatch does"
	log "$name: dispatch starts with ${FIRST_INSN[$name]}"
	for cfg in "${PROBE_CONFIGS[@]}"; do
		[[ $cfg == funclatency-bpfcc && -n $BCC_SKIPPED ]] || cfgs+=("$cfg")
		# On the fp build, the floor whose probes read the clock once each: what timing alone
		# costs, below which no timing tool goes.
		[[ $name != fp || $cfg != floor ]] || cfgs+=(floor-clock)
	done
	run_build "$name" "$bin" "$bin" "${cfgs[@]}"
}

# Syscall mode: jankwatch's probes on libc's epoll_wait against the raw sys_enter/sys_exit
# tracepoints, on a loop whose every task is one epoll_wait().
syscall_build()
{
	FIRST_INSN[syscall]=$(first_insn \
		"$(ldd "$BUILD/bench/jw_bench_epoll" | awk '/libc\.so/ { print $3 }')" epoll_wait)
	run_build syscall "$BUILD/bench/jw_bench_epoll" "" "${SYSCALL_CONFIGS[@]}"
}

# Handler sites: a glib, a libuv, a libev, an sd-event and a Qt loop, a callback per iteration;
# jankwatch's preset with and without its probes per callback (handler_sites; Qt's are two pairs:
# the event's notifyInternal2 and the slot's call).
sites_build()
{
	local name out

	for name in glib libuv libev sdevent qt; do
		run_build "$name" "$BUILD/bench/jw_bench_${name#lib}" "" "${SITE_CONFIGS[@]}"
		unset 'BUILDS[-1]'
		SITE_BUILDS+=("$name")
		# The default (handler_sites=500) on so fast a loop: what it says as it samples them.
		out=$WORK/$name-default.out
		start_loop "$BUILD/bench/jw_bench_${name#lib}" "$WORK/loop-$name-default.out"
		"$BUILD/jankwatch" -p "$LOOP_PID" --set ignore_startup_time=3 --duration 3 \
			--log-dir "$WORK/logs" >"$out" 2>&1 || die "jankwatch failed: $(tail -n 3 "$out")"
		JW_GUARD[$name]=$(grep -m1 -o '[0-9]* callbacks/s through .*' "$out" || echo 'kept')
		reap "$LOOP_PID"
		LOOP_PID=
	done
}

# jankwatch's own cost while it watches jw_target's ~1000 fast tasks/s and no jank, for
# WATCH_S: its CPU (utime+stime) in percent of a core, and its resident memory every
# RSS_EVERY_S (flat: no growth from the end of the first interval to the end of the watch). The
# first interval is warm-up: a sample that lands in a task is copied to the heap until the task
# ends, and the heap keeps the pages its largest burst of held samples used, so the first
# seconds may take a page or three, once, at a moment the sampling clock decides.
watch_cost()
{
	local target=$BUILD/tests/targets/jw_target out=$WORK/watch.err t0 t1 tasks elapsed life

	log "jankwatch's own CPU and memory over ${WATCH_S}s"
	"$target" --fast 1 --every 86400000 >/dev/null &
	LOOP_PID=$!
	life=$(now_ms)
	"$BUILD/jankwatch" -p "$LOOP_PID" --probe "$target:dispatch" \
		--set ignore_startup_time=3 --duration 600 --log-dir "$WORK/watch-logs" \
		>/dev/null 2>"$out" &
	TOOL_PID=$!
	wait_for_line "$out" ready "$TOOL_PID" jankwatch
	sleep 4	# past ignore_startup_time and the first loading of the process's modules
	t0=$(cpu_ticks "$TOOL_PID")
	RSS_FIRST=$(rss_kb "$TOOL_PID")
	RSS_SERIES=$RSS_FIRST
	ANON_SERIES=$(anon_kb "$TOOL_PID")
	for ((elapsed = RSS_EVERY_S; elapsed <= WATCH_S; elapsed += RSS_EVERY_S)); do
		sleep "$RSS_EVERY_S"
		alive "$TOOL_PID" || die "jankwatch exited while watching: $(tail -n 3 "$out")"
		RSS_LAST=$(rss_kb "$TOOL_PID")
		RSS_SERIES+=" $RSS_LAST"
		[[ -n $RSS_BASE ]] || RSS_BASE=$RSS_LAST
		ANON_SERIES+=" $(anon_kb "$TOOL_PID")"
	done
	t1=$(cpu_ticks "$TOOL_PID")
	stop_tool jankwatch "$out"
	life=$(($(now_ms) - life))
	reap "$LOOP_PID"
	LOOP_PID=
	WATCH_TICKS=$((t1 - t0))
	WATCH_CPU_PCT=$(awk -v d="$WATCH_TICKS" -v hz="$(getconf CLK_TCK)" -v s="$WATCH_S" \
		'BEGIN { printf "%.2f", 100 * d / hz / s }')
	tasks=$(grep -o '[0-9]* tasks' "$out" | tail -1)
	# Its count covers its whole life, start-up included: the rate the loop ran at.
	WATCH_TASKS_S=$(awk -v n="${tasks% *}" -v ms="$life" 'BEGIN { printf "%.0f", n * 1000 / ms }')
}

# Reads jankwatch's event lines on stdin and prints, for each as it arrives,
# "<CLOCK_MONOTONIC ns on arrival> <CLOCK_REALTIME - CLOCK_MONOTONIC ns> <begin_time ms>".
# shellcheck disable=SC2016
LINE_READER='
import json, sys, time
for line in sys.stdin:
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    off = time.clock_gettime_ns(time.CLOCK_REALTIME) - time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    try:
        ev = json.loads(line)
    except ValueError:
        continue
    print(now, off, ev.get("begin_time", 0), flush=True)
'

# Pairs the event arrivals in @1 with the slow tasks of jw_target's output @2 (begin within
# 20 ms) and prints one latency a line, in ms, from the task's end to its event line.
latencies()
{
	awk 'NR == FNR { if ($1 == "task") { b[++n] = $4; e[n] = $4 + $5 } next }
		{ begin = $3 * 1e6 - $2; best = 0
		  for (i = 1; i <= n; i++) {
			d = b[i] - begin; if (d < 0) d = -d
			if (d < 20e6 && (!best || d < bd)) { best = i; bd = d }
		  }
		  if (best) printf "%.2f\n", ($1 - e[best]) / 1e6 }' "$2" "$1"
}

# The time from a slow task's end to jankwatch's event line for it on stdout, over JANKS janks
# of 160 ms every 300 ms (each reported: --all), read as they arrive.
event_latency()
{
	local target=$BUILD/tests/targets/jw_target fifo=$WORK/events.fifo arrivals=$WORK/arrivals
	local deadline

	log "event latency over $JANKS janks"
	mkfifo "$fifo"
	"$target" --busy --ms 160 --every 300 >"$WORK/janks.out" &
	LOOP_PID=$!
	# Made before the reader starts: the loop below counts its lines from the first moment.
	: >"$arrivals"
	python3 -u -c "$LINE_READER" <"$fifo" >>"$arrivals" &
	READER_PID=$!
	"$BUILD/jankwatch" -p "$LOOP_PID" --probe "$target:dispatch" --all \
		--set ignore_startup_time=3 --duration 600 --log-dir "$WORK/latency-logs" \
		>"$fifo" 2>"$WORK/latency.err" &
	TOOL_PID=$!
	deadline=$(($(now_ms) + 3000 + JANKS * 1000 + 30000))
	while (($(wc -l <"$arrivals") < JANKS)); do
		alive "$TOOL_PID" || die "jankwatch exited: $(tail -n 3 "$WORK/latency.err")"
		(($(now_ms) < deadline)) || die "fewer than $JANKS events within the time allowed"
		sleep 0.1
	done
	stop_tool jankwatch "$WORK/latency.err"
	reap "$READER_PID"
	READER_PID=
	reap "$LOOP_PID"
	LOOP_PID=
	latencies "$arrivals" "$WORK/janks.out" >"$WORK/latencies"
	LAT_N=$(wc -l <"$WORK/latencies")
	((LAT_N > 0)) || die "no event matched a slow task of jw_target"
	LAT_MEDIAN=$(median %.1f <"$WORK/latencies")
	LAT_MAX=$(sort -g "$WORK/latencies" | tail -1)
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
		stats=$(prog_stats on_sample)
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

# What reading a thread's Python frames adds to a sample: asyncio_busy.py on Debian's python3.11,
# its 900 ms janks run 50 Python frames deep. Two jankwatch watch it at once, one with the python
# preset (its frames read with each sample), one with --loop syscall (the same thread's sample as
# it was before they were read): on_sample's BPF run time per sample of each over the same
# windows, so that the machine's noise falls on both alike. The one attached second runs its
# samples a little cheaper (the first one's warmed the caches): the order alternates each round,
# PY_ROUNDS rounds, the median of the rounds' ratios.
PY_ROUNDS=4
python_sample_cost()
{
	local prog=$ROOT/tests/targets/asyncio_busy.py round pid ratios=
	local -a order ids
	local -A per

	sysctl -qw kernel.bpf_stats_enabled=1
	/usr/bin/python3.11 "$prog" --depth 50 --ms 900 --every 300 >/dev/null &
	LOOP_PID=$!
	pid=$LOOP_PID
	sleep 3.2
	for ((round = 0; round < PY_ROUNDS; round++)); do
		order=(syscall python)
		((round % 2)) && order=(python syscall)
		log "python sample cost, round $((round + 1)): ${order[*]}"
		start_py_watch "$pid" "${order[0]}" "$round"
		TOOL_PID=$WATCH_PID
		ids=("$WATCH_PROG")
		start_py_watch "$pid" "${order[1]}" "$round"
		REF_PID=$WATCH_PID
		ids+=("$WATCH_PROG")
		[[ -n ${ids[0]} && -n ${ids[1]} ]] || die "no on_sample program of the two jankwatch"
		local -a t0 t1
		t0=("$(prog_stats_id "${ids[0]}")" "$(prog_stats_id "${ids[1]}")")
		sleep "$SAMPLE_SECONDS"
		t1=("$(prog_stats_id "${ids[0]}")" "$(prog_stats_id "${ids[1]}")")
		stop_tool jankwatch "$WORK/py-${order[0]}.err"
		TOOL_PID=$REF_PID
		REF_PID=
		stop_tool jankwatch "$WORK/py-${order[1]}.err"
		local i ns
		local -A now
		for i in 0 1; do
			ns=$(awk -v a="${t0[i]}" -v b="${t1[i]}" 'BEGIN { split(a, x, " "); split(b, y, " ")
				printf "%.0f", (y[2] > x[2] ? (y[1] - x[1]) / (y[2] - x[2]) : 0) }')
			if ((ns <= 0)); then
				sed 's/^/  | /' "$WORK/py-${order[i]}.err" >&2
				die "jankwatch --loop ${order[i]} (on_sample id ${ids[i]}) took no sample in" \
					"$SAMPLE_SECONDS s"
			fi
			now[${order[i]}]=$ns
			per[${order[i]}]+="$ns "
		done
		ratios+="$(awk -v a="${now[python]}" -v b="${now[syscall]}" 'BEGIN { printf "%.2f", a / b }') "
	done
	reap "$pid"
	LOOP_PID=
	PY_SYSCALL=$(tr ' ' '\n' <<<"${per[syscall]}" | sed '/^$/d' | median %.0f)
	PY_PYTHON=$(tr ' ' '\n' <<<"${per[python]}" | sed '/^$/d' | median %.0f)
	PY_RATIO=$(tr ' ' '\n' <<<"$ratios" | sed '/^$/d' | median %.2f)
	printf '\nper-sample cost of a thread 50 Python frames deep (python3.11), BPF run time, side by side, %d rounds:\n' \
		"$PY_ROUNDS"
	printf '  without its Python frames (--loop syscall)  %s ns   [%s]\n' "$PY_SYSCALL" "${per[syscall]% }"
	printf '  with them (python preset)                    %s ns   [%s]\n' "$PY_PYTHON" "${per[python]% }"
	awk -v r="$PY_RATIO" -v all="${ratios% }" 'BEGIN {
		printf "  ratio %.2f [%s] (budget 1.5): %s\n", r, all, r <= 1.5 ? "within" : "OVER" }'
}

# Starts jankwatch on python pid @1 with --loop @2 (python: its preset), logs of round @3, and
# waits until it is ready: its pid in WATCH_PID, the id of the on_sample program it loaded in
# WATCH_PROG. A child of this shell, so that stop_tool sees how it exits.
start_py_watch()
{
	local pid=$1 loop=$2 round=$3 try
	local -a args=(--all --set ignore_startup_time=3)

	[[ $loop == python ]] || args+=(--loop "$loop")
	"$BUILD/jankwatch" -p "$pid" "${args[@]}" --log-dir "$WORK/py-$loop-$round" \
		>/dev/null 2>"$WORK/py-$loop.err" &
	WATCH_PID=$!
	wait_for_line "$WORK/py-$loop.err" ready "$WATCH_PID" jankwatch
	# Asked up to 20 times: once, in a fourth round, the first answer did not have it (not
	# understood; the jankwatch of the round before had just exited).
	for ((try = 0; try < 20; try++)); do
		WATCH_PROG=$(prog_id_of "$WATCH_PID" on_sample)
		[[ -z $WATCH_PROG ]] || break
		sleep 0.05
	done
}

# What naming a Python callback costs on each CPython: asyncio_busy.py's 1 ms call_later ticker
# (each tick one evaluation entered under the waits, its code object and its timer's due time
# read) on 3.11 (Debian), 3.12 and 3.13 (pyenv, where present), 3.13 and 3.14 (roots of
# scripts/pyroot.sh), all at once, each watched by a jankwatch of its own: dispatch_enter's BPF
# run time per task (a task, one loop iteration between two waits, runs one tick) over the same
# PY_ROUNDS windows, and its ratio to 3.11's in each window, medians. With PY_BASE=JANKWATCH (a
# build of an earlier commit), a 3.11 ticker watched by that one comes first, the others' ratio
# is to it.
python_naming_cost()
{
	local prog=$ROOT/tests/targets/asyncio_busy.py label pid round i tasks base_rpt=0
	local -a cmd labels=() ids=() tools=() loops=() t0 t1 runs all=()
	local -A ns
	local tool hide

	sysctl -qw kernel.bpf_stats_enabled=1
	[[ -z ${PY_BASE:-} ]] || all+=(base-3.11)
	for label in "${all[@]}" 3.11 pyenv-3.12 pyenv-3.13 3.13 3.14; do
		tool=$BUILD/jankwatch
		case $label in
		base-3.11)
			[[ -x $PY_BASE ]] || die "PY_BASE: no jankwatch at $PY_BASE"
			tool=$PY_BASE
			cmd=(/usr/bin/python3.11 "$prog")
			;;
		3.11) cmd=(/usr/bin/python3.11 "$prog") ;;
		pyenv-*)
			cmd=("$(ls -d /root/.pyenv/versions/"${label#pyenv-}".*/bin/python"${label#pyenv-}" 2>/dev/null |
				tail -1)" "$prog")
			[[ -x ${cmd[0]} ]] || continue
			;;
		*)
			"$ROOT/scripts/pyroot.sh" "$label" >/dev/null || continue
			cmd=("$ROOT/scripts/pyroot.sh" --run "$label" --bind "$ROOT/tests/targets:/jw" --
			     "python$label" /jw/asyncio_busy.py)
			;;
		esac
		"${cmd[@]}" --light 1 --every 100000 >/dev/null &
		pid=$!
		loops+=("$pid")
		LOOP_PID="${loops[*]}"
		sleep 3.2
		# dispatch_enter's own run time: where the kernel has uprobe sessions, this build's
		# entry and return would run as one program (dispatch_session); the pair is asked for.
		hide=
		[[ $tool != "$BUILD/jankwatch" ]] || hide=uprobe_session
		JW_KERNEL_HIDE=$hide "$tool" -p "$pid" --set ignore_startup_time=3 \
			--log-dir "$WORK/py-name-$label" >/dev/null 2>"$WORK/py-name-$label.err" &
		tools+=($!)
		REF_PID="${tools[*]}"
		wait_for_line "$WORK/py-name-$label.err" ready "${tools[-1]}" jankwatch
		labels+=("$label")
		ids+=("$(prog_id_of "${tools[-1]}" dispatch_enter)")
		[[ -n ${ids[-1]} ]] || die "jankwatch on $label loaded no dispatch_enter"
	done
	((${#labels[@]})) || return 0
	log "python naming cost: ${labels[*]} side by side, $PY_ROUNDS windows of $SAMPLE_SECONDS s"
	for ((round = 0; round < PY_ROUNDS; round++)); do
		t0=(); t1=()
		for i in "${!ids[@]}"; do t0+=("$(prog_stats_id "${ids[i]}")"); done
		sleep "$SAMPLE_SECONDS"
		for i in "${!ids[@]}"; do t1+=("$(prog_stats_id "${ids[i]}")"); done
		for i in "${!ids[@]}"; do
			ns[$i]+="$(awk -v a="${t0[i]}" -v b="${t1[i]}" 'BEGIN { split(a, x, " "); split(b, y, " ")
				printf "%.0f", (y[2] > x[2] ? (y[1] - x[1]) / (y[2] - x[2]) : 0) }') "
		done
	done
	# Runs a task over the whole run: dispatch_enter's count before it goes, jankwatch's tasks.
	runs=()
	for i in "${!ids[@]}"; do runs+=("$(prog_stats_id "${ids[i]}")"); done
	for i in "${!tools[@]}"; do
		TOOL_PID=${tools[i]}
		stop_tool jankwatch "$WORK/py-name-${labels[i]}.err"
	done
	REF_PID=
	for pid in "${loops[@]}"; do
		reap "$pid"
	done
	LOOP_PID=
	printf '\nnaming a Python callback (dispatch_enter, BPF run time, a 1 ms ticker each), side by side, median of %d windows:\n' \
		"$PY_ROUNDS"
	for i in "${!labels[@]}"; do
		tasks=$(sed -n 's/^jankwatch: \([0-9]*\) tasks, .*/\1/p' "$WORK/py-name-${labels[i]}.err")
		[[ $i == 0 ]] && base_rpt=$(awk -v k="${tasks:-0}" -v n="${runs[i]#* }" \
			'BEGIN { printf "%.4f", k ? n / k : 0 }')
		awk -v per="${ns[$i]% }" -v base="${ns[0]% }" -v k="${tasks:-0}" -v n="${runs[i]#* }" \
		    -v l="${labels[i]}" -v l0="${labels[0]}" -v first="$i" -v brpt="$base_rpt" 'function med(a, m,  c, t, j, q) {
				c = split(a, t, " "); for (j = 1; j <= c; j++) for (q = j + 1; q <= c; q++)
					if (t[q] < t[j]) { m = t[j]; t[j] = t[q]; t[q] = m }
				return c % 2 ? t[(c + 1) / 2] : (t[c / 2] + t[c / 2 + 1]) / 2 }
			BEGIN { rpt = k ? n / k : 0; c = split(per, p, " "); split(base, b, " ")
				for (j = 1; j <= c; j++)
					r = r sprintf("%s%.2f", j > 1 ? " " : "", b[j] * brpt ? p[j] * rpt / (b[j] * brpt) : 0)
				printf "  %-12s %5.0f ns a task, %4.0f ns a run (%.2f runs a task)", l, med(per) * rpt,
					med(per), rpt
				if (first == 0) { printf "\n"; exit }
				m = med(r)
				printf "   x%.2f of %s [%s]: %s\n", m, l0, r,
					!(m > 0) ? "NOT measured" : m <= 1.05 ? "within" : "OVER" }'
	done
}

# redis's and nginx's requests, with 1 client and with 50, each tool beside a server nobody
# watches.
side_by_side()
{
	local server clients

	for server in redis nginx; do
		for clients in 1 50; do
			"$ROOT/bench/side_by_side.sh" "$SIDE_BY_SIDE_S" "$clients" "$server"
		done
	done
}

main()
{
	local name

	parse_args "$@"
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	setup
	WORK=$(mktemp -d /tmp/jw-bench.XXXXXX)
	LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
	if [[ -n $ONLY_FLEET ]]; then
		"$ROOT/bench/fleet.sh" "$FLEET_S"
		return 0
	fi
	if [[ -n $ONLY_FP ]]; then
		bcc_trial
		probe_build fp '^push +%rbp'
		print_build fp
		return 0
	fi
	if [[ -n $ONLY_SYSCALL ]]; then
		syscall_build
		print_build syscall
		return 0
	fi
	if [[ -n $ONLY_RATE ]]; then
		"$ROOT/bench/rate.sh" "$RATE_REPS"
		return 0
	fi
	if [[ -n $ONLY_OBSERVER ]]; then
		"$ROOT/bench/observer.sh" "$OBSERVER_PAIRS"
		return 0
	fi
	if [[ -n $ONLY_SERVERS ]]; then
		"$ROOT/bench/servers.sh" "$SERVERS_REPS"
		side_by_side
		return 0
	fi
	if [[ -n $ONLY_PAGE ]]; then
		python3 "$ROOT/bench/page.py" "$BUILD/jankwatch" 10000 5
		return 0
	fi
	if [[ -n $ONLY_SITES ]]; then
		sites_build
		for name in "${SITE_BUILDS[@]}"; do
			print_sites "$name"
		done
		return 0
	fi
	if [[ -z $ONLY_SAMPLES ]]; then
		bcc_trial
		probe_build fp '^push +%rbp'
		probe_build nofp '^mov '
		probe_build cet '^endbr64'
		probe_build narrow '^movslq'
		syscall_build
		sites_build
		watch_cost
		event_latency
		print_report
		plot
	fi
	sample_cost
	python_sample_cost
	python_naming_cost
	[[ -z $ONLY_SAMPLES ]] || return 0
	"$ROOT/bench/rate.sh" "$RATE_REPS"
	"$ROOT/bench/observer.sh" "$OBSERVER_PAIRS"
	"$ROOT/bench/fleet.sh" "$FLEET_S"
	"$ROOT/bench/servers.sh" "$SERVERS_REPS"
	side_by_side
}

main "$@"
