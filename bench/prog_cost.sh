#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What each of jankwatch's BPF programs costs a GET: one server (redis-server, or nginx as one
# process) on CPU 0 watched by `jankwatch -p` on CPU 1, its client (bench/getmix.c: batches of
# 10 GETs with one connection, of 2 on each of CLIENTS) on CPU 1 for SECONDS after a warm-up of
# 8 s, and the kernel's statistics of every loaded BPF program (kernel.bpf_stats_enabled) before
# and after: runs a GET, ns a run, ns a GET. A program's time is counted from its first
# instruction to its return (the kernel's clock read around it, ~90 ns a run here for an empty
# one); the hook's own cost (a uprobe's trap) is not in it.
# Usage: bench/prog_cost.sh [-c CLIENTS] [--nginx] [SECONDS] [BUILD_DIR] [-- JANKWATCH_ARGS...]
# (root). BUILD_DIR (default build/) lets a worktree's build of another commit be measured
# beside this one's, alternated: bench/prog_cost.sh 8 /tmp/prev/build; bench/prog_cost.sh 8; ...
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
CLIENTS=1 SERVER=redis
while [[ ${1:-} == -?* && $1 != -- ]]; do
	case $1 in
	-c)
		[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "-c: '${2:-}' is not a number of clients"
		CLIENTS=$2
		shift 2
		;;
	--nginx)
		SERVER=nginx
		shift
		;;
	*) die "$1: not an option (usage: bench/prog_cost.sh [-c CLIENTS] [--nginx] [SECONDS] [BUILD_DIR] [-- ARGS])" ;;
	esac
done
declare -a REST=()
bench_positional 8 "$@"
set -- "${REST[@]}"
# shellcheck disable=SC2034 # read by bench/lib.sh's wait_for_line and stop_tool
READY_TIMEOUT_MS=60000 STOP_TIMEOUT_MS=15000
WORK='' SERVER_PID='' TOOL_PID='' STATS_WAS=''

cleanup()
{
	reap "$TOOL_PID"
	reap "$SERVER_PID"
	[[ -z $STATS_WAS ]] || sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"
	halt_poll_restore
	[[ -z $WORK ]] || rm -rf "$WORK"
}

snapshot()
{
	bpftool prog show --json |
		python3 -c 'import json,sys
for p in json.load(sys.stdin):
    print(p["id"], p.get("name", "?"), p.get("run_cnt", 0), p.get("run_time_ns", 0))' >"$1"
}

main()
{
	local port gets batch=10
	local -a mix=()

	[[ $(id -u) == 0 ]] || die "run as root"
	[[ $SECONDS_EACH =~ ^[1-9][0-9]*$ ]] || die "SECONDS: '$SECONDS_EACH' is not a number of seconds"
	[[ -x $BUILD/jankwatch && -x $BUILD/bench/jw_bench_getmix ]] ||
		die "no $BUILD/jankwatch or $BUILD/bench/jw_bench_getmix (cmake --build)"
	need bpftool bpftool
	WORK=$(mktemp -d)
	trap cleanup EXIT
	halt_poll_on
	port=$(free_port)
	if [[ $SERVER == nginx ]]; then
		need nginx nginx
		need curl curl
		mix=(--http /small)
		start_bench_server nginx "$(command -v nginx)" "$port" "$WORK/nginx"
	else
		need redis-server redis-server
		need redis-tools redis-cli
		start_bench_server redis "$(command -v redis-server)" "$port" "$WORK/redis"
	fi
	SERVER_PID=$STARTED_PID
	((CLIENTS == 1)) || batch=2
	mix+=(-c "$CLIENTS")
	taskset -c 1 "$BUILD/jankwatch" -v -p "$SERVER_PID" --log-dir "$WORK/logs" "$@" \
		>"$WORK/jankwatch.out" 2>&1 &
	TOOL_PID=$!
	wait_for_line "$WORK/jankwatch.out" 'ready' "$TOOL_PID" jankwatch
	taskset -c 1 "$BUILD/bench/jw_bench_getmix" "${mix[@]}" 0 8 "$batch" "$port" >/dev/null
	STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1
	snapshot "$WORK/before"
	taskset -c 1 "$BUILD/bench/jw_bench_getmix" "${mix[@]}" 0 "$SECONDS_EACH" "$batch" "$port" \
		>"$WORK/rounds"
	snapshot "$WORK/after"
	gets=$(($(wc -l <"$WORK/rounds") * batch * CLIENTS))
	echo "$SERVER GET, $CLIENTS client(s), $SECONDS_EACH s: $((gets / SECONDS_EACH)) GETs a second;" \
		"$BUILD/jankwatch $*"
	python3 - "$WORK/before" "$WORK/after" "$gets" <<'EOF'
import sys
before = {}
for line in open(sys.argv[1]):
    i, name, runs, ns = line.split()
    before[i] = (int(runs), int(ns))
gets, total = int(sys.argv[3]), 0
print(f"{'program':24s} {'runs/GET':>9s} {'ns/run':>8s} {'ns/GET':>8s}")
for line in open(sys.argv[2]):
    i, name, runs, ns = line.split()
    r0, n0 = before.get(i, (0, 0))
    runs, ns = int(runs) - r0, int(ns) - n0
    if runs > 0:
        total += ns
        print(f"{name:24s} {runs / gets:9.3f} {ns / runs:8.1f} {ns / gets:8.1f}")
print(f"{'all':24s} {'':9s} {'':8s} {total / gets:8.1f}")
EOF
	grep -E "wait hooks|syscall mode|context switches" "$WORK/jankwatch.out" | cut -c1-160 || true
	stop_tool jankwatch "$WORK/jankwatch.out"
}

main "$@"
