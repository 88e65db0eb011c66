#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What watching a redis-server adds to each GET of one client, each tool measured side by side
# with a server nobody watches. Three redis-servers (a, b, c), each run from its own copy of
# the binary (bpftrace 0.17's -p does not keep its uprobes to the process: they fire in every
# process of the file), on CPU 0; one client (bench/getmix.c) on CPU 1 sends them batches of 10
# GETs in turns, each batch timed by the wall clock and by CPU time (the server's thread and the
# client's), so that what slows the machine for a while slows both servers of a round alike.
#   1. jankwatch's default on a; rounds of a and c: a's GETs over c's.
#   2. bpftrace's uprobe + uretprobe pair with a histogram on b's call(); rounds of b and c.
#   3. Nobody watching; jw_bench_tp_floor --machine --toggle: empty programs where jankwatch's
#      default hooks every thread of the machine (sched_switch, sched_waking, the wait system
#      calls' exits unless its waits ended on the uprobes, a sampler on each CPU), attached and
#      detached every 500 ms; rounds of a, b and c. What the hooks cost every process's GETs,
#      c's too, which 1. cannot see: each on span against the off spans around it. And a's and
#      b's own difference from c, taken off 1. and 2. Where jankwatch hooked its threads' own
#      switch events (sched_hooks=1, not sched_switch), an empty program on a's as well: what
#      that hook costs a's GETs (a's on spans against b's and c's), a part of 1. said apart,
#      the rest of 1. being what jankwatch's programs do; the servers' own difference then from
#      the off spans alone.
# jankwatch's default adds 1. + 3.; bpftrace's pair adds 2. (no program of it runs elsewhere).
# Usage: bench/side_by_side.sh [SECONDS] [CLIENTS] [redis|nginx]   (root; cmake --build build)
# With nginx, three nginx servers instead (one process each, master_process off, from its own
# copy of the binary), each GET a request for a 6-byte file on a kept-alive HTTP/1.1
# connection, and bpftrace's pair on ngx_http_core_run_phases() (bench/servers.sh's).
# SECONDS (default 120) is each measure's length, after a warm-up of WARMUP_S. CLIENTS (default
# 1): the client's connections to each server; with more than one, a batch sends a GET on each
# and then reads the replies, twice (each server finds CLIENTS requests ready at a wait, as
# under that many clients), and the figures that matter are the GETs a second kept.
# JANKWATCH_ARGS (words) are added to jankwatch's command line: a configuration against its
# default (JANKWATCH_ARGS='--set wait_tracepoints=3'). With JANKWATCH_B_ARGS set, two
# configurations instead, in the same rounds: jankwatch with JANKWATCH_ARGS on a, a second one
# with JANKWATCH_B_ARGS on b, c bare; each server over c, and b over a: their servers' parts
# (what each hooks on the whole machine, both pay alike, c too, so it is not seen).
# FLOOR_PARTS (switch,waking,waits,samplers,thread, comma-separated) measures 3. alone, with the
# parts named: what each of the machine's hooks costs a GET (FLOOR_PARTS=waking, then =waits,
# ...), each server's apart too; thread: an empty program on server a's own switch event, the
# hook jankwatch's default puts on a watched thread (b and c, unhooked, are its control).
# ROUNDS_DIR (a folder) keeps the rounds, the toggles and what jankwatch said, for
# bench/side_by_side.py to read again.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build
SECONDS_EACH=${1:-120}
CLIENTS=${2:-1}
SERVER=${3:-redis}
# jankwatch's wait hooks and samplers follow the load within a few seconds; the same for all.
WARMUP_S=10
PARTS='switch|waking|waits|samplers|thread'	# FLOOR_PARTS' names
FLOOR_THREAD=()	# (thread) once measure_floor hooked a's own switch event too
BATCH=10	# GETs a batch with one client; with more, 2 on each connection
TOGGLE_MS=500
# shellcheck disable=SC2034 # read by bench/lib.sh's wait_for_line and stop_tool
READY_TIMEOUT_MS=60000 STOP_TIMEOUT_MS=15000
WORK=
TOOL_PID=
declare -A PID PORT TOOLS
# The server's binary, the function bpftrace's pair is on, and jw_bench_getmix's options.
BIN='' PAIR_FN=''
declare -a GETMIX_ARGS=()

# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

cleanup()
{
	local s

	reap "$TOOL_PID"
	for s in "${!TOOLS[@]}"; do
		reap "${TOOLS[$s]}"
	done
	for s in "${!PID[@]}"; do
		reap "${PID[$s]}"
	done
	halt_poll_restore
	[[ -z $WORK ]] && return
	if [[ -n ${ROUNDS_DIR:-} ]]; then
		mkdir -p "$ROUNDS_DIR"
		cp "$WORK"/*.rounds "$WORK"/*.toggles "$WORK"/*.said "$ROUNDS_DIR"/ 2>/dev/null || true
	fi
	rm -rf "$WORK"
}

# Starts server @1 (a, b or c) from its own copy of the server's binary, on CPU 0.
start_server()
{
	local s=$1 dir=$WORK/$1

	mkdir -p "$dir"
	cp -L "$BIN" "$dir/${BIN##*/}"
	PORT[$s]=$(free_port)
	start_bench_server "$SERVER" "$dir/${BIN##*/}" "${PORT[$s]}" "$dir"
	PID[$s]=$STARTED_PID
}

# The client's rounds over servers @3... into @1, after a warm-up of @2 s.
rounds()
{
	local out=$1 warmup=$2 s
	local -a servers=()

	shift 2
	for s in "$@"; do
		servers+=("${PORT[$s]}:${PID[$s]}")
	done
	taskset -c 1 "$BUILD/bench/jw_bench_getmix" -c "$CLIENTS" "${GETMIX_ARGS[@]}" "$warmup" \
		"$SECONDS_EACH" \
		"$BATCH" "${servers[@]}" >"$out" || die "jw_bench_getmix failed"
	for s in "$@"; do
		alive "${PID[$s]}" || die "$SERVER $s exited"
	done
}

# Starts jankwatch on server @1 (on the client's CPU), its output in @2, its logs in @3,
# with the words of @4 added to its line, and waits until it is ready: its pid in TOOL_PID.
start_jankwatch()
{
	local s=$1 out=$2 logs=$3

	mkdir -p "$logs"
	# shellcheck disable=SC2086 # words, as on a command line
	taskset -c 1 "$BUILD/jankwatch" -v -p "${PID[$s]}" --duration 3600 --log-dir "$logs" \
		$4 >"$out" 2>&1 &
	TOOL_PID=$!
	wait_for_line "$out" 'ready' "$TOOL_PID" "jankwatch on $s"
}

measure_jankwatch()
{
	local out=$WORK/jankwatch.out

	start_jankwatch a "$out" "$WORK/logs" "${JANKWATCH_ARGS:-}"
	log "jankwatch on a: ${SECONDS_EACH} s of rounds of a and c, after ${WARMUP_S} s"
	rounds "$WORK/jankwatch.rounds" "$WARMUP_S" a c
	cp "$out" "$WORK/jankwatch.said"
	stop_tool jankwatch "$out"
}

# Two configurations, one jankwatch each, on a and on b: rounds of a, b and c.
measure_two()
{
	local s

	for s in a b; do
		local args=${JANKWATCH_ARGS:-}

		[[ $s == a ]] || args=$JANKWATCH_B_ARGS
		start_jankwatch "$s" "$WORK/jankwatch.$s.out" "$WORK/logs/$s" "$args"
		TOOLS[$s]=$TOOL_PID
	done
	log "jankwatch '${JANKWATCH_ARGS:-}' on a, '$JANKWATCH_B_ARGS' on b: ${SECONDS_EACH} s of" \
		"rounds of a, b and c, after ${WARMUP_S} s"
	rounds "$WORK/two.rounds" "$WARMUP_S" a b c
	for s in a b; do
		TOOL_PID=${TOOLS[$s]}
		cp "$WORK/jankwatch.$s.out" "$WORK/jankwatch.$s.said"
		stop_tool "jankwatch on $s" "$WORK/jankwatch.$s.out"
		unset "TOOLS[$s]"
	done
	echo "two configurations side by side: ${SECONDS_EACH} s, batches of $BATCH GETs on each" \
		"of $CLIENTS connection(s); the machine: $(nproc) CPUs, $(uname -r)"
	echo "us a GET over c's in the same round: name mean ci95 median q1 q3 rounds (cpu: by the CPU)"
	python3 "$ROOT/bench/side_by_side.py" pairs "$WORK/two.rounds" a b c c
	echo "b over a:"
	python3 "$ROOT/bench/side_by_side.py" pairs "$WORK/two.rounds" a b c a | grep -E '^(cpu:)?b-a '
	for s in a b; do
		echo "jankwatch on $s said, when the rounds ended:"
		grep -E "syscall mode|wait hooks: (staying|now)" "$WORK/jankwatch.$s.said" |
			sed 's/^jankwatch: /  /' | cut -c1-200 || true
	done
}

measure_bpftrace()
{
	local out=$WORK/bpftrace.out

	write_pair_bt "$WORK/pair.bt" "$WORK/b/${BIN##*/}" "$PAIR_FN"
	taskset -c 1 bpftrace -B line -p "${PID[b]}" "$WORK/pair.bt" >"$out" 2>&1 &
	TOOL_PID=$!
	wait_for_line "$out" '^ready' "$TOOL_PID" bpftrace
	log "bpftrace on b: ${SECONDS_EACH} s of rounds of b and c, after ${WARMUP_S} s"
	rounds "$WORK/bpftrace.rounds" "$WARMUP_S" b c
	stop_tool bpftrace "$out"
}

# The parts of the machine's hooks jankwatch had in at the end of its rounds (it says at -v
# where its waits are, at start and at each change): its waits on the uprobes hook nothing on
# the machine's system calls; with sched_hooks=1 no switch of the machine runs a program.
floor_parts()
{
	local switch=switch,

	! grep -q "context switches: each watched thread's own" "$WORK/jankwatch.said" ||
		switch=thread,
	if grep -E "syscall mode on|syscall mode's waits now on|wait hooks: staying on" \
		"$WORK/jankwatch.said" | tail -n 1 |
		grep -Eq "on (uprobes on the C library|the scheduler's switches alone)"; then
		echo "${switch}waking,samplers"
	else
		echo "${switch}waking,waits,samplers"
	fi
}

measure_floor()
{
	local out=$WORK/floor.out parts=${FLOOR_PARTS:-} tid=()

	[[ -n $parts ]] || parts=$(floor_parts)
	if [[ ,$parts, == *,thread,* ]]; then
		tid=(--tid "${PID[a]}")
		FLOOR_THREAD=(thread)
	fi
	# The wait system calls' tracepoints: libbpf finds their ids in tracefs, mounted in a
	# mount namespace of the floor's own when the machine has none ($0: the inner shell's).
	# shellcheck disable=SC2016
	taskset -c 1 unshare -m sh -c 'mountpoint -q /sys/kernel/tracing ||
		mount -t tracefs nodev /sys/kernel/tracing &&
		t=$1 p=$2 && shift 2 && exec "$0" --machine --parts "$p" --toggle "$t" "$@"' \
		"$BUILD/bench/jw_bench_tp_floor" "$TOGGLE_MS" "$parts" "${tid[@]}" \
		>"$WORK/floor.toggles" 2>"$out" &
	TOOL_PID=$!
	wait_for_line "$out" 'ready' "$TOOL_PID" "jw_bench_tp_floor --machine --toggle"
	log "nobody watching, the machine's hooks as jankwatch had them ($parts) on and off every" \
		"$TOGGLE_MS ms: ${SECONDS_EACH} s of rounds of a, b and c"
	rounds "$WORK/floor.rounds" 2 a b c
	stop_tool "jw_bench_tp_floor" "$out"
}

main()
{
	local s

	[[ $(id -u) == 0 ]] || die "run as root"
	[[ -x $BUILD/jankwatch && -x $BUILD/bench/jw_bench_getmix ]] ||
		die "no $BUILD/jankwatch or jw_bench_getmix (cmake --build build)"
	[[ $SECONDS_EACH =~ ^[1-9][0-9]*$ ]] || die "SECONDS: '$SECONDS_EACH' is not a number of seconds"
	if [[ ! $CLIENTS =~ ^[1-9][0-9]*$ ]] || ((CLIENTS > 256)); then
		die "CLIENTS: '$CLIENTS' is not a number from 1 to 256"
	fi
	((CLIENTS == 1)) || BATCH=2
	[[ -n ${JANKWATCH_B_ARGS:-}${FLOOR_PARTS:-} ]] || need bpftrace bpftrace
	[[ -z ${FLOOR_PARTS:-} ]] || [[ $FLOOR_PARTS =~ ^($PARTS)(,($PARTS))*$ ]] ||
		die "FLOOR_PARTS: '$FLOOR_PARTS' is not a list of ${PARTS//|/, }"
	case $SERVER in
	redis)
		need redis-server redis-server
		need redis-tools redis-cli
		BIN=$(command -v redis-server) PAIR_FN=call
		;;
	nginx)
		need nginx nginx
		need curl curl
		BIN=/usr/sbin/nginx PAIR_FN=ngx_http_core_run_phases
		GETMIX_ARGS=(--http /small)
		;;
	*) die "SERVER: '$SERVER' is neither redis nor nginx" ;;
	esac
	WORK=$(mktemp -d)
	trap cleanup EXIT
	halt_poll_on
	for s in a b c; do
		start_server "$s"
	done
	log "$SERVER servers a ${PID[a]}, b ${PID[b]}, c ${PID[c]} on CPU 0; the client and the tools on CPU 1"
	if [[ -n ${JANKWATCH_B_ARGS:-} ]]; then
		measure_two
		return
	fi
	if [[ -n ${FLOOR_PARTS:-} ]]; then
		measure_floor
		echo "the machine's hooks ($FLOOR_PARTS), empty, on and off every $TOGGLE_MS ms:" \
			"${SECONDS_EACH} s, batches of $BATCH GETs on each of $CLIENTS connection(s)"
		echo "us a GET, each on span less the off spans around it: mean ci95 median q1 q3 spans"
		python3 "$ROOT/bench/side_by_side.py" toggle "$WORK/floor.rounds" "$WORK/floor.toggles" \
			a b c
		return
	fi
	measure_jankwatch
	measure_bpftrace
	measure_floor
	echo "side by side: ${SECONDS_EACH} s each, batches of $BATCH GETs on each of $CLIENTS" \
		"connection(s); the machine: $(nproc) CPUs, $(uname -r)"
	python3 "$ROOT/bench/side_by_side.py" report "$WORK/jankwatch.rounds" \
		"$WORK/bpftrace.rounds" "$WORK/floor.rounds" "$WORK/floor.toggles" "$CLIENTS" "$SERVER" \
		"${FLOOR_THREAD[@]}"
	echo "jankwatch said, when the rounds ended:"
	grep -E "syscall mode|wait hooks: (staying|now)|samplers: one|handler sites, over" \
		"$WORK/jankwatch.said" | sed 's/^jankwatch: /  /' | cut -c1-200 || true
}

main "$@"
