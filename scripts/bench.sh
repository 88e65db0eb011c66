#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Checks DESIGN.md's "Performance budget" in one run. What a probe on an event loop's dispatch
# function adds per task, configurations interleaved over REPS repetitions, medians: nothing
# attached, the floor (empty uprobe + uretprobe), jankwatch, bpftrace, libbpf-tools'
# funclatency and bcc's funclatency-bpfcc (where it runs), on three builds of the loop (frame
# pointers, none, -fcf-protection=full); syscall mode against the two bare tracepoints; then
# jankwatch's own CPU and memory over a minute at ~1000 tasks/s, the time from a slow task's end
# to its event line, and the per-sample cost of each --unwind mode. Plots the cost per task.
# Usage: scripts/bench.sh [--quick] [--samples-only]
#        (root; installs bpftrace, libbpf-tools and gnuplot from Debian when missing)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build
PLOT=$ROOT/bench/results.png
PROBE_CONFIGS=(none floor jankwatch bpftrace funclatency funclatency-bpfcc)
SYSCALL_CONFIGS=(none sys-floor tp-floor jankwatch jankwatch-up)
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
declare -A NS NS_REP SPREAD ON_CPU ON_CPU_REP FIRST_INSN JW_PLACE REF_REP XREF XREF_SPREAD
declare -a BUILDS=()
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

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

usage()
{
	cat <<EOF
Usage: scripts/bench.sh [--quick] [--samples-only]
  --quick          3 repetitions, shorter windows, a 20 s watch, 10 janks (noisier)
  --samples-only   only the per-sample cost of each --unwind mode
Runs as root. Builds build/, installs bpftrace, libbpf-tools and gnuplot when missing, prints
ns per task for each tool and build with ratios to the baseline and the floor, jankwatch's own
costs, whether DESIGN.md's budget holds, and plots the cost per task to bench/results.png.
EOF
}

parse_args()
{
	while (($#)); do
		case $1 in
		--quick)
			REPS=3 WINDOW_MS=200 MEASURE_WINDOWS=4 WATCH_S=20 JANKS=10
			SAMPLE_SECONDS=3
			;;
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
	reap "$REF_PID"
	reap "$READER_PID"
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
# where its output went. One more SIGINT when the first goes unanswered: bpftrace 0.17, once in
# some sixty stops here, did not exit on the first within 15 s, without a word as to why.
stop_tool()
{
	local what=$1 out=$2 deadline rc=0 tries limit=$((STOP_TIMEOUT_MS / 1000))

	for tries in 1 2; do
		kill -INT "$TOOL_PID"
		deadline=$(($(now_ms) + STOP_TIMEOUT_MS))
		while alive "$TOOL_PID" && (($(now_ms) < deadline)); do
			sleep 0.05
		done
		alive "$TOOL_PID" || break
		log "$what did not exit within $limit s of SIGINT $tries (in" \
			"$(cat "/proc/$TOOL_PID/wchan" 2>/dev/null || echo '?'))"
	done
	if alive "$TOOL_PID"; then
		sed 's/^/  | /' "$out" >&2
		die "$what did not exit after two SIGINTs"
	fi
	wait "$TOOL_PID" || rc=$?
	TOOL_PID=
	if ((rc != 0)); then
		sed 's/^/  | /' "$out" >&2
		die "$what exited with status $rc after SIGINT"
	fi
}

# Installs Debian package @1 when command @2 is missing: the bench's tools, not jankwatch's.
need()
{
	local pkg=$1 cmd=$2

	command -v "$cmd" >/dev/null && return 0
	log "installing $pkg"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || die "apt-get update failed"
	apt-get install -y -qq "$pkg" >/dev/null || die "apt-get install $pkg failed"
	command -v "$cmd" >/dev/null || die "$pkg installed no $cmd"
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
	grep -m1 -E "uprobe on [^ ]*:$2: " "$1" | sed -E "s/.*:$2: //"
}

# Starts configuration @1 on loop binary @2 and waits until it is attached; output in @3.
attach()
{
	local cfg=$1 bin=$2 out=$3

	case $cfg in
	none) return 0 ;;
	floor)
		"$BUILD/bench/jw_bench_floor" "$LOOP_PID" "$bin" dispatch >"$out" 2>&1 &
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
	tp-floor)
		"$BUILD/bench/jw_bench_tp_floor" >"$out" 2>&1 &
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

# Prints the median of the numbers on stdin, one a line, with printf format @1.
median()
{
	sort -g | awk -v fmt="$1\n" '{ v[NR] = $1 }
		END { printf fmt, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Prints the range of the numbers on stdin but the highest and the lowest (when there are 4
# or more: one odd value does not move a median either), in percent of @1.
spread_pct()
{
	sort -g | awk -v m="$1" '{ v[NR] = $1 } END { t = NR >= 4
		printf "%.1f\n", (m > 0 ? 100 * (v[NR - t] - v[1 + t]) / m : 0) }'
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

# Prints the configurations @2... rotated left by @1: each repetition starts elsewhere, so no
# configuration always follows the same one.
rotated()
{
	local k=$1 n i

	shift
	n=$#
	for ((i = 0; i < n; i++)); do
		printf '%s\n' "${@:$(((i + k) % n + 1)):1}"
	done
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

# Prints the sum of utime and stime of process @1, in clock ticks.
cpu_ticks()
{
	local stat

	stat=$(cat "/proc/$1/stat")
	stat=${stat##*) }
	awk '{ print $12 + $13 }' <<<"$stat"
}

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
anon_kb() { awk '/^RssAnon:/ { print $2 }' "/proc/$1/status"; }

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

# Prints the ns build @1's configuration @2 adds over "none".
added()
{
	awk -v a="${NS[$1,$2]}" -v b="${NS[$1,none]}" 'BEGIN { printf "%.1f", a - b }'
}

# Prints the median over the repetitions of build @1 of what configuration @2 added over what
# configuration @3 added in the same repetition (each against that repetition's none), then the
# spread of those ratios in percent: a pairing by repetition, where no twin function can carry
# a floor side by side (the tracepoints are the whole machine's).
paired()
{
	local rep ratios='' m

	for ((rep = 0; rep < REPS; rep++)); do
		ratios+=$(awk -v a="${NS_REP[$1,$2,$rep]}" -v f="${NS_REP[$1,$3,$rep]}" \
			-v n="${NS_REP[$1,none,$rep]}" \
			'BEGIN { printf "%.4f", (f > n ? (a - n) / (f - n) : 0) }')$'\n'
	done
	m=$(median %.2f <<<"${ratios%$'\n'}")
	printf '%s %s\n' "$m" "$(spread_pct "$m" <<<"${ratios%$'\n'}")"
}

# Prints the configurations measured on build @1, in the order of the tables.
configs_of()
{
	local cfg
	local -a all=("${PROBE_CONFIGS[@]}")

	[[ $1 != syscall ]] || all=("${SYSCALL_CONFIGS[@]}")
	for cfg in "${all[@]}"; do
		[[ -z ${NS[$1,$cfg]:-} ]] || printf '%s\n' "$cfg"
	done
}

# True when some configuration of build @1 ran on a busy machine (see NOISY_SPREAD_PCT): its
# repetitions spread too far (their x-ref where there is one) or the loop was off the CPU.
noisy()
{
	local cfg

	while read -r cfg; do
		# Where a twin carries the floor, the paired ratio is what the verdicts use.
		awk -v s="${XREF_SPREAD[$1,$cfg]:-${SPREAD[$1,$cfg]}}" -v c="${ON_CPU[$1,$cfg]}" \
			-v ms="$NOISY_SPREAD_PCT" \
			-v mc="$MIN_ON_CPU_PCT" 'BEGIN { exit !(s > ms || c < mc) }' && return 0
	done < <(configs_of "$1")
	return 1
}

# The budget lines of build @1; @2 is its floor configuration. On the uprobe builds every
# figure is the one measured against the floor on dispatch_ref() in the same windows (x-ref).
print_verdicts()
{
	local name=$1 floor=$2 jw peer r spread

	jw=$(added "$name" jankwatch)
	case $name in
	fp)
		r=$(ratio "${XREF[fp,jankwatch]}" 1)
		printf '  budget: jankwatch/floor %s <= 1.15: %s\n' "$r" "$(verdict "$r" "<=" 1.15)"
		for peer in bpftrace funclatency funclatency-bpfcc; do
			[[ -n ${NS[fp,$peer]:-} ]] || continue
			r=$(ratio "${XREF[fp,jankwatch]}" "${XREF[fp,$peer]}")
			printf '  budget: jankwatch/%s %s < 1: %s\n' "$peer" "$r" \
				"$(verdict "$r" "<" 1)"
		done
		;;
	syscall)
		read -r r spread < <(paired syscall jankwatch "$floor")
		printf '  budget: jankwatch/the wait'"'"'s two tracepoints %s <= 1.1: %s\n' "$r" \
			"$(verdict "$r" "<=" 1.1)"
		printf '  (the median of the %d repetitions'"'"' own ratios, spread %s%%; of the medians: %s)\n' \
			"$REPS" "$spread" "$(ratio "$jw" "$(added syscall "$floor")")"
		r=$(ratio "$(added syscall jankwatch-up)" "$(added syscall "$floor")")
		printf '  (jankwatch with wait_tracepoints=0, uprobes on libc'"'"'s wait functions: %s of' "$r"
		printf ' the wait'"'"'s two tracepoints)\n'
		r=$(ratio "$jw" "$(added syscall tp-floor)")
		printf '  (jankwatch against the raw sys_enter/sys_exit pair, when it runs on them: %s)\n' \
			"$r"
		;;
	*)
		r=$(ratio "${XREF[$name,jankwatch]}" "${XREF[$name,bpftrace]}")
		printf '  budget: jankwatch/bpftrace %s <= 0.25: %s\n' "$r" \
			"$(verdict "$r" "<=" 0.25)"
		# The quarter is for entries the kernel would single-step; an emulated one leaves
		# jankwatch nothing to move past, and its logic against bpftrace's is all there is.
		[[ ! ${FIRST_INSN[$name]} =~ ^(push|call|jmp) ]] ||
			printf '  (this entry, %s, is emulated: no probe moves, as on the fp build)\n' \
				"${FIRST_INSN[$name]}"
		;;
	esac
}

print_build()
{
	local name=$1 cfg floor=floor add

	[[ $name == syscall ]] && floor=sys-floor
	if [[ $name == syscall ]]; then
		printf '\nsyscall mode: a task is one epoll_wait(); libc epoll_wait starts with: %s\n' \
			"${FIRST_INSN[$name]}"
		printf '  probe at: sys-floor: syscalls:sys_enter_epoll_wait + sys_exit_epoll_wait, the\n'
		printf '  wait'"'"'s own tracepoints (empty programs); tp-floor: raw_tp sys_enter +\n'
		printf '  sys_exit, which every system call passes (empty programs);\n'
		printf '  jankwatch (-p PID, no --probe, wait_tracepoints=2): %s\n' "$JW_WAITS" |
			fold -s -w 96 | sed '2,$s/^/    /'
		printf '  jankwatch-up: -p PID --set wait_tracepoints=0: on libc epoll_wait: %s\n' \
			"${JW_PLACE[$name]:-?}"
	else
		printf '\n%s build: dispatch starts with: %s\n' "$name" "${FIRST_INSN[$name]}"
		printf '  probe at: floor, bpftrace, funclatency: the entry (%s);\n' \
			"${FIRST_INSN[$name]}"
		printf '  jankwatch: %s\n' "${JW_PLACE[$name]:-?}"
	fi
	printf '  %-18s %10s %9s %10s %8s %7s %7s %7s %7s\n' config ns/task x-none "added ns" \
		x-floor spread x-ref spread on-cpu
	while read -r cfg; do
		add=$(added "$name" "$cfg")
		printf '  %-18s %10s %9s %10s %8s %6s%% %7s %6s%% %6s%%\n' "$cfg" "${NS[$name,$cfg]}" \
			"$(ratio "${NS[$name,$cfg]}" "${NS[$name,none]}")" "$add" \
			"$(ratio "$add" "$(added "$name" "$floor")")" "${SPREAD[$name,$cfg]}" \
			"${XREF[$name,$cfg]:--}" "${XREF_SPREAD[$name,$cfg]:--}" "${ON_CPU[$name,$cfg]}"
	done < <(configs_of "$name")
	print_verdicts "$name" "$floor"
	if noisy "$name"; then
		printf '  WARNING: busy machine (spread over %s%% or loop on a CPU under %s%%);\n' \
			"$NOISY_SPREAD_PCT" "$MIN_ON_CPU_PCT"
		printf '  these ratios are unreliable: rerun when the machine is idle\n'
	fi
}

print_own_costs()
{
	local growth

	growth=$((RSS_LAST - RSS_BASE))
	printf '\njankwatch itself, watching jw_target --fast 1 (%s tasks/s, no jank) for %ss:\n' \
		"$WATCH_TASKS_S" "$WATCH_S"
	printf '  CPU (utime+stime): %s%% of a core (%s ticks of 1/%s s); budget < 1%%: %s\n' \
		"$WATCH_CPU_PCT" "$WATCH_TICKS" "$(getconf CLK_TCK)" "$(verdict "$WATCH_CPU_PCT" "<" 1)"
	printf '  RSS kB every %ss: %s\n' "$RSS_EVERY_S" "$RSS_SERIES"
	printf '  warm-up (the first %ss) %s kB; then %s kB over %ss; flat: %s\n' "$RSS_EVERY_S" \
		"$((RSS_BASE - RSS_FIRST))" "$growth" "$((WATCH_S - RSS_EVERY_S))" \
		"$( ((growth <= 0)) && echo met || echo "NOT met")"
	printf '  of which anonymous (RssAnon, kB): %s\n' "$ANON_SERIES"
	printf 'event latency, a 160 ms task'"'"'s end to its line on stdout, over %s janks:\n' \
		"$LAT_N"
	printf '  median %s ms, max %s ms; budget median < 100 ms: %s\n' "$LAT_MEDIAN" "$LAT_MAX" \
		"$(verdict "$LAT_MEDIAN" "<" 100)"
}

print_report()
{
	local machine=bare-metal name

	grep -qw hypervisor /proc/cpuinfo && machine=VM
	printf 'jankwatch bench, %s: %s, %s CPUs, %s, kernel %s\n' "$(date -u '+%F %H:%M UTC')" \
		"$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" "$(nproc)" \
		"$machine" "$(uname -r)"
	printf 'tools: %s; libbpf-tools %s; gnuplot %s\n' "$(bpftrace --version)" \
		"$(dpkg-query -W -f '${Version}' libbpf-tools)" \
		"$(dpkg-query -W -f '${Version}' gnuplot-nox 2>/dev/null || echo '?')"
	printf '%d repetitions, configurations interleaved (rotated order); per repetition the\n' \
		"$REPS"
	printf 'median of %d windows of %d ms after %d thrown away; figures: median over the\n' \
		"$MEASURE_WINDOWS" "$WINDOW_MS" "$SKIP_WINDOWS"
	printf 'repetitions. x-none: ns/task over "none"; added ns: over "none"; x-floor: added\n'
	printf 'over the floor'"'"'s added; spread: range of the repetitions but the highest and\n'
	printf 'the lowest, over the median; on-cpu: median share of a window the loop ran.\n'
	printf 'x-ref (uprobe builds): the loop calls dispatch() and a twin, dispatch_ref(), in\n'
	printf 'alternate batches; the floor stays on dispatch_ref() all along, so each window\n'
	printf 'measures a configuration and the floor side by side: x-ref is the added ns over\n'
	printf 'the floor'"'"'s in the same windows (median over the repetitions); the budget lines\n'
	printf 'use it. "floor" on dispatch() shows what x-ref gives for the same probe: ~1.00\n'
	printf 'load average at the start: %s\n' "$LOADAVG"
	[[ -z $BCC_SKIPPED ]] || printf 'funclatency-bpfcc (bcc) skipped: %s\n' "$BCC_SKIPPED"
	for name in "${BUILDS[@]}"; do
		print_build "$name"
	done
	print_own_costs
}

# The ns configuration @2 adds per task on build @1, as plotted: on a uprobe build, its ratio to
# the floor measured side by side times the floor's own median (the unpaired medians move with
# the host between windows); in syscall mode, the unpaired median.
plotted()
{
	if [[ -n ${XREF[$1,$2]:-} && $2 != floor ]]; then
		awk -v x="${XREF[$1,$2]}" -v f="$(added "$1" floor)" 'BEGIN { printf "%.1f", x * f }'
	else
		added "$1" "$2"
	fi
}

# Plots the ns each tool adds per task, by build, to PLOT (log scale: a single-stepped entry
# costs ten times an emulated one).
plot()
{
	local dat=$WORK/plot.dat name cfg v bcc=", '' using 7 title \"funclatency-bpfcc\""

	{
		printf '# build floor jankwatch jankwatch-up bpftrace funclatency funclatency-bpfcc\n'
		for name in "${BUILDS[@]}"; do
			printf '%s' "$name"
			for cfg in floor jankwatch jankwatch-up bpftrace funclatency funclatency-bpfcc; do
				[[ $name == syscall && $cfg == floor ]] && cfg=sys-floor
				v='?'
				[[ -z ${NS[$name,$cfg]:-} ]] || v=$(plotted "$name" "$cfg")
				printf ' %s' "$v"
			done
			printf '\n'
		done
	} >"$dat"
	[[ -z $BCC_SKIPPED ]] || bcc=''
	gnuplot <<EOF || die "gnuplot failed"
set terminal pngcairo size 900,540 noenhanced font ",10"
set output "$PLOT"
set title "ns added per task over nothing attached (uprobe builds: the floor's median times each tool's ratio to it side by side), $REPS runs\njankwatch bench, $(date -u +%F), $(uname -r)"
set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set logscale y
set yrange [10:*]
set ylabel "ns added per task (log scale)"
set xlabel "build of the loop (syscall: one epoll_wait per task; its floor is the wait's own two tracepoints)"
set key top left
set grid ytics
plot "$dat" using 2:xtic(1) title "floor", '' using 3 title "jankwatch", \
	'' using 4 title "jankwatch, wait_tracepoints=0", '' using 5 title "bpftrace", \
	'' using 6 title "funclatency (libbpf-tools)"$bcc
EOF
	log "plot: $PLOT"
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
		start_loop "$BUILD/bench/jw_bench_loop_fp" "$WORK/bcc-loop.out"
		check_bcc "$LOOP_PID" "$BUILD/bench/jw_bench_loop_fp"
		reap "$LOOP_PID"
		LOOP_PID=
		probe_build fp '^push +%rbp'
		probe_build nofp '^mov '
		probe_build cet '^endbr64'
		syscall_build
		watch_cost
		event_latency
		print_report
		plot
	fi
	sample_cost
}

main "$@"
