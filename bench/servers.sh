#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What watching adds to a real server's requests. Debian's redis-server (GET, redis-benchmark)
# and nginx (one worker, a 6-byte file, ab), each pinned to CPU 0 with its client on CPU 1,
# with one client (each request one wait, one wakeup, one command: the added us per request)
# and with 50 (requests batched per wait: the throughput kept), each measured after WARMUP_S of
# the same load. Configurations, rotated over
# REPS repetitions on the same server: nothing attached (bare), jankwatch's default (-p PID),
# jankwatch --loop syscall, and bpftrace's uprobe + uretprobe pair with a histogram on the
# dispatch function (redis's call(), nginx's ngx_http_core_run_phases). Prints per workload the
# median us per request (1 client) or requests per second (50), what each adds over bare in the
# same repetition, and for one client jankwatch's added us over bpftrace's.
# Usage: bench/servers.sh [REPS] [REQUESTS]   (root; build first: cmake --build build)
# SERVERS_CONFIGS and SERVERS_WORKLOADS choose a part (below). The tools run on the client's CPU,
# so that the server's has its work alone; each run logs the time the host took from CPU 0
# meanwhile (steal, /proc/stat): a run with steal measured the host too.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build
REPS=${1:-5}
REQUESTS=${2:-60000}	# per client run with one client; 50 clients run 5 times as many
# shellcheck disable=SC2034 # read by bench/lib.sh's wait_for_line and stop_tool
READY_TIMEOUT_MS=60000 STOP_TIMEOUT_MS=15000
# The configurations (SERVERS_CONFIGS overrides: any of these; tracepoints, jankwatch's default
# with the waits on the system call tracepoints, --set wait_tracepoints=1, the wait system
# calls' own where the kernel has them; tracepoints-raw, the same on raw_syscalls') and the
# workloads (SERVERS_WORKLOADS: any of redis-c1 redis-c50 nginx-c1 nginx-c50). Two more show
# what a cpu-clock sampler alone costs, as jankwatch's stacks need one: perf-thread, perf record
# on the server's thread (an event of the thread's: the kernel starts and stops its timer at
# every switch of the thread), perf-cpu, on CPU 0 (one per CPU, that runs whoever is there);
# samplers-cpu and samplers-thread are jankwatch's default with samplers=1 and samplers=0 (its
# samplers one per CPU, one per watched thread; the default, samplers=2, chooses by the rates).
# switches is jankwatch's default with wait_tracepoints=3 (no hook on the waits: the scheduler's
# programs alone bound the tasks). For the workloads SERVERS_PROGRAMS_FOR names (default: the
# one-client ones, redis-c1 nginx-c1), one more run counts the BPF programs of a jankwatch
# configuration (SERVERS_PROGRAMS, default: default) when it is among them.
read -r -a CONFIGS <<<"${SERVERS_CONFIGS:-bare default syscall bpftrace}"
read -r -a WORKLOADS <<<"${SERVERS_WORKLOADS:-redis-c1 redis-c50 nginx-c1 nginx-c50}"
PROGRAMS=${SERVERS_PROGRAMS:-default}
PROGRAMS_FOR=" ${SERVERS_PROGRAMS_FOR:-redis-c1 nginx-c1} "
SETTLE_S=1		# after a tool says it is ready, before the client runs
# Then the load for this long, not measured, in every configuration alike: a server's steady
# state, where jankwatch's wait hooks have followed its pace (they switch within a few seconds).
WARMUP_S=${SERVERS_WARMUP_S:-4}
WORK=
SERVER_PID=
NGINX_WORKER=
TOOL_PID=
# RESULT[workload,config,rep]: us per request (c1) or requests per second (c50); CPU[...]: the
# server thread's CPU time per request, in us (its schedstat: exact, and blind to the host's
# steal and to the client's side, where the latency of one client sees both); MACHINE[...]: the
# whole machine's busy CPU time per request, in us (/proc/stat: the server's, the client's, the
# tools' and the kernel's; the host's steal and idle left out; in USER_HZ ticks, so a run of
# 30,000 requests reads it to ~0.3 us).
declare -A RESULT CPU MACHINE

# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

cleanup()
{
	reap "$TOOL_PID"
	reap "$SERVER_PID"
	halt_poll_restore
	[[ -z $WORK ]] || rm -rf "$WORK"
}

# CPU 0's steal time so far, in ms (/proc/stat's 8th field, in USER_HZ ticks).
cpu0_steal_ms()
{
	awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu0" { printf "%d\n", $9 * 1000 / hz }' /proc/stat
}

# The machine's busy CPU time so far, every CPU, in ns (/proc/stat's user, nice, system, irq
# and softirq; not idle, iowait or the host's steal).
machine_busy_ns()
{
	awk -v hz="$(getconf CLK_TCK)" \
		'$1 == "cpu" { printf "%.0f\n", ($2 + $3 + $4 + $7 + $8) * 1e9 / hz }' /proc/stat
}

# The CPU time thread @1 has run so far, in ns (/proc's schedstat, the scheduler's own sum).
thread_ns()
{
	cut -d' ' -f1 "/proc/$1/task/$1/schedstat"
}

# How many requests one measured client run of workload @1 sends (client() below).
requests_of()
{
	local n=$REQUESTS

	[[ $1 == *-c50 ]] && n=$((REQUESTS * 5))
	[[ $1 == nginx-* ]] && n=$((n / 3))
	echo "$n"
}

# Starts redis-server on port @1, pinned to CPU 0; sets SERVER_PID, the process to watch.
start_redis()
{
	taskset -c 0 redis-server --port "$1" --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no >"$WORK/redis.log" 2>&1 &
	SERVER_PID=$!
	until redis-cli -p "$1" ping >/dev/null 2>&1; do
		alive "$SERVER_PID" || die "redis-server exited: $(tail -n 3 "$WORK/redis.log")"
		sleep 0.05
	done
	redis-cli -p "$1" set key:__rand_int__ xxx >/dev/null
}

# Starts nginx (one worker) on port @1, pinned to CPU 0; sets SERVER_PID to its worker's pid.
start_nginx()
{
	local master

	# Its worker runs as nobody: $WORK must be open to it.
	chmod 755 "$WORK"
	write_nginx_conf "$WORK/nginx" "$1" worker
	taskset -c 0 nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" >"$WORK/nginx.log" 2>&1 &
	master=$!
	until nginx_answers "$1"; do
		alive "$master" || die "nginx exited: $(tail -n 3 "$WORK/nginx.log")"
		sleep 0.05
	done
	SERVER_PID=$master
	NGINX_WORKER=$(cat "/proc/$master/task/$master/children")
	NGINX_WORKER=${NGINX_WORKER%% *}
	[[ -n $NGINX_WORKER ]] || die "nginx started no worker"
}

# Attaches configuration @1 to process @2 (whose dispatch function is @3 of binary @4), its
# output in @5; TOOL_PID is the tool's, empty for bare.
attach()
{
	local cfg=$1 pid=$2 fn=$3 bin=$4 out=$5

	TOOL_PID=
	case $cfg in
	bare) return 0 ;;
	default | syscall | tracepoints | tracepoints-raw | samplers-cpu | samplers-thread | switches)
		local -a how=() env=()

		[[ $cfg == syscall ]] && how=(--loop syscall)
		[[ $cfg == samplers-cpu ]] && how=(--set samplers=1)
		[[ $cfg == samplers-thread ]] && how=(--set samplers=0)
		[[ $cfg == tracepoints* ]] && how=(--set wait_tracepoints=1)
		[[ $cfg == switches ]] && how=(--set wait_tracepoints=3)
		[[ $cfg == tracepoints-raw ]] && env=(JW_KERNEL_HIDE=syscall_events)
		mkdir -p "$WORK/logs"
		env "${env[@]}" taskset -c 1 "$BUILD/jankwatch" -v -p "$pid" "${how[@]}" \
			--duration 3600 --log-dir "$WORK/logs" >"$out" 2>&1 &
		TOOL_PID=$!
		wait_for_line "$out" 'ready' "$TOOL_PID" "jankwatch ($cfg)"
		;;
	bpftrace)
		write_pair_bt "$WORK/pair.bt" "$bin" "$fn"
		taskset -c 1 bpftrace -B line -p "$pid" "$WORK/pair.bt" >"$out" 2>&1 &
		TOOL_PID=$!
		wait_for_line "$out" '^ready' "$TOOL_PID" bpftrace
		;;
	perf-thread | perf-cpu)
		local -a on=(-t "$pid")

		[[ $cfg == perf-cpu ]] && on=(-C 0)
		# The period of jankwatch's default sample_period_ms, 10 ms.
		taskset -c 1 perf record -e cpu-clock -c 10000000 "${on[@]}" -o "$WORK/perf.data" \
			>"$out" 2>&1 &
		TOOL_PID=$!
		# perf says nothing when it runs: its event is open once its file has its header.
		sleep 1
		alive "$TOOL_PID" || die "perf record exited: $(tail -n 3 "$out")"
		;;
	esac
	sleep "$SETTLE_S"
}

# Stops perf record (output in @1): it exits 130 after SIGINT, its data written.
stop_perf()
{
	local rc=0

	kill -INT "$TOOL_PID"
	wait "$TOOL_PID" || rc=$?
	TOOL_PID=
	((rc == 0 || rc == 130)) || { sed 's/^/  | /' "$1" >&2; die "perf record exited with status $rc"; }
}

# One client run of workload @1 (redis-c1, redis-c50, nginx-c1, nginx-c50) on port @2, on CPU
# 1: prints requests per second. With @3, for that many seconds instead, printing nothing.
client()
{
	local n c=1 rps
	local -a limit=()

	# An nginx request (a connection each) takes some twice a redis GET's time: a third of
	# the requests (requests_of).
	n=$(requests_of "$1")
	[[ -z ${3:-} ]] || { limit=(timeout -s INT "$3"); n=$((n * 1000)); }
	[[ $1 == *-c50 ]] && c=50
	case $1 in
	redis-*)
		rps=$("${limit[@]}" taskset -c 1 redis-benchmark -p "$2" -t get -c "$c" -n "$n" -q \
			2>/dev/null | tr '\r' '\n' | awk '/^GET:/ { print $2 }' | tail -n 1)
		;;
	nginx-*)
		rps=$("${limit[@]}" taskset -c 1 ab -q -n "$n" -c "$c" "http://127.0.0.1:$2/small" \
			2>/dev/null | awk '/^Requests per second:/ { print $4 }')
		;;
	esac
	[[ -z ${3:-} ]] || return 0
	[[ -n $rps ]] || die "$1: the client printed no rate"
	echo "$rps"
}

# Runs workload @1 over REPS repetitions of every configuration on the server already started
# (port @2, watched process @3, dispatch function @4 of binary @5).
run_workload()
{
	local w=$1 port=$2 pid=$3 fn=$4 bin=$5 rep cfg rps out steal ran busy

	# One run thrown away: the first after a start finds the caches and the CPUs' clocks cold.
	client "$w" "$port" >/dev/null
	for ((rep = 0; rep < REPS; rep++)); do
		while read -r cfg; do
			out=$WORK/$w-$cfg-$rep.out
			attach "$cfg" "$pid" "$fn" "$bin" "$out"
			client "$w" "$port" "$WARMUP_S" || true
			steal=$(cpu0_steal_ms)
			ran=$(thread_ns "$pid")
			busy=$(machine_busy_ns)
			rps=$(client "$w" "$port")
			busy=$(($(machine_busy_ns) - busy))
			ran=$(($(thread_ns "$pid") - ran))
			steal=$(($(cpu0_steal_ms) - steal))
			if [[ $cfg == perf-* ]]; then
				stop_perf "$out"
			elif [[ -n $TOOL_PID ]]; then
				stop_tool "$cfg" "$out"
			fi
			alive "$pid" || die "$w: the server exited"
			if [[ $w == *-c1 ]]; then
				RESULT[$w,$cfg,$rep]=$(awk -v r="$rps" 'BEGIN { printf "%.2f", 1e6 / r }')
			else
				RESULT[$w,$cfg,$rep]=$rps
			fi
			CPU[$w,$cfg,$rep]=$(awk -v ns="$ran" -v n="$(requests_of "$w")" \
				'BEGIN { printf "%.3f", ns / n / 1e3 }')
			MACHINE[$w,$cfg,$rep]=$(awk -v ns="$busy" -v n="$(requests_of "$w")" \
				'BEGIN { printf "%.3f", ns / n / 1e3 }')
			log "$w rep $((rep + 1)) $cfg: ${RESULT[$w,$cfg,$rep]}, the server's CPU" \
				"${CPU[$w,$cfg,$rep]} us a request, the machine's ${MACHINE[$w,$cfg,$rep]}" \
				"(CPU 0's steal ${steal} ms)"
		done < <(rotated "$rep" "${CONFIGS[@]}")
	done
	[[ $PROGRAMS_FOR != *" $w "* || " ${CONFIGS[*]} " != *" $PROGRAMS "* ]] ||
		programs "$w" "$port" "$pid" >"$WORK/$w.programs"
}

# Prints "NAME RUN_COUNT RUN_TIME_NS" of each BPF program process @1 holds open
# (kernel.bpf_stats_enabled on).
held_prog_runs()
{
	bpftool prog show --json |
		python3 -c 'import json,sys
held = set(sys.argv[1].split())
for p in json.load(sys.stdin):
    if str(p["id"]) in held:
        print(p.get("name", "?"), p.get("run_cnt", 0), p.get("run_time_ns", 0))' \
			"$(held_prog_ids "$1")"
}

# One more measured run of workload @1 (port @2, watched process @3) under jankwatch's PROGRAMS,
# kernel.bpf_stats_enabled on for it alone (it adds two clock reads to every program run, so the
# repetitions above ran without): per BPF program of jankwatch's, its runs per request (those of
# the whole machine: the client's system calls and switches count too) and ns per run.
programs()
{
	local w=$1 port=$2 pid=$3 out=$WORK/$1-programs.out was n

	attach "$PROGRAMS" "$pid" "" "" "$out"
	client "$w" "$port" "$WARMUP_S" || true
	was=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1
	held_prog_runs "$TOOL_PID" >"$WORK/runs.before"
	client "$w" "$port" >/dev/null
	held_prog_runs "$TOOL_PID" >"$WORK/runs.after"
	sysctl -qw kernel.bpf_stats_enabled="$was"
	stop_tool "$PROGRAMS" "$out"
	n=$(requests_of "$w")
	printf '%s: jankwatch %s'"'"'s BPF programs per request (bpf_stats, one more run)\n' "$w" "$PROGRAMS"
	awk -v n="$n" 'NR == FNR { c[$1] = $2; t[$1] = $3; next }
		$2 > c[$1] { runs = $2 - c[$1]; ns = $3 - t[$1]; all += ns
			     printf "  %-20s %7.3f runs   %8.1f ns a run   %8.1f ns\n", $1,
				    runs / n, ns / runs, ns / n }
		END { printf "  %-20s %7s        %8s             %8.1f ns\n", "all", "", "", all / n }' \
		"$WORK/runs.before" "$WORK/runs.after"
}

# Prints per configuration the median of table @2 (an array like RESULT) for workload @1 and
# what it adds over bare in the same repetition: a difference with @3 "added", a ratio with
# "share"; then, with "added" and bpftrace among the configurations, each jankwatch's added over
# bpftrace's.
table()
{
	local w=$1 kind=$3 cfg rep v adds jw_over_bt
	local -n t=$2
	local -A added

	for cfg in "${CONFIGS[@]}"; do
		v='' adds=''
		for ((rep = 0; rep < REPS; rep++)); do
			v+=${t[$w,$cfg,$rep]}$'\n'
			adds+=$(awk -v a="${t[$w,$cfg,$rep]}" -v b="${t[$w,bare,$rep]}" -v kind="$kind" \
				'BEGIN { if (kind == "added") printf "%.2f", a - b
					 else printf "%.3f", a / b }')$'\n'
		done
		printf '  %-16s %10s   %s %8s   (quartiles %s)\n' "$cfg" \
			"$(median %.2f <<<"${v%$'\n'}")" "$kind" "$(median %.3f <<<"${adds%$'\n'}")" \
			"$(quartiles %.3f <<<"${adds%$'\n'}" | sed 's/ / to /')"
		added[$cfg]=$(median %.3f <<<"${adds%$'\n'}")
	done
	[[ $kind == added && " ${CONFIGS[*]} " == *" bpftrace "* ]] || return 0
	for cfg in "${CONFIGS[@]}"; do
		[[ $cfg != bare && $cfg != bpftrace ]] || continue
		jw_over_bt=''
		for ((rep = 0; rep < REPS; rep++)); do
			jw_over_bt+=$(awk -v j="${t[$w,$cfg,$rep]}" -v b="${t[$w,bare,$rep]}" \
				-v p="${t[$w,bpftrace,$rep]}" \
				'BEGIN { printf "%.3f", (p > b ? (j - b) / (p - b) : 0) }')$'\n'
		done
		printf '  jankwatch %s added / bpftrace added: %s (median of the repetitions'"'"' ratios; '\
'quartiles %s), %s (ratio of the medians)\n' "$cfg" "$(median %.2f <<<"${jw_over_bt%$'\n'}")" \
			"$(quartiles %.2f <<<"${jw_over_bt%$'\n'}" | sed 's/ / to /')" \
			"$(awk -v j="${added[$cfg]}" -v p="${added[bpftrace]}" \
				'BEGIN { if (p > 0) printf "%.2f", j / p; else print "n/a" }')"
	done
}

# Prints the best of the numbers on stdin: the least with @1 "added" (us), else the most (requests
# per second).
best()
{
	sort -g | if [[ $1 == added ]]; then head -n 1; else tail -n 1; fi
}

# Prints per configuration of table @2 (workload @1, @3 as table's) the best of the repetitions
# and how it differs from bare's best (the host's noise only slows a run, never speeds it: the
# best run is the one it touched least, as waitcost.c takes the least of its batches), the same
# for the even and the odd repetitions apart (two halves that agree say the best is not one
# lucky run); then each jankwatch's added over bpftrace's, by the best.
best_table()
{
	local w=$1 kind=$3 cfg rep half
	local -n t=$2
	local -A b
	local -a v

	for cfg in "${CONFIGS[@]}"; do
		for half in all 0 1; do
			v=()
			for ((rep = 0; rep < REPS; rep++)); do
				[[ $half == all || $((rep % 2)) == "$half" ]] && v+=("${t[$w,$cfg,$rep]}")
			done
			b[$cfg,$half]=$(printf '%s\n' "${v[@]}" | best "$kind")
		done
	done
	for cfg in "${CONFIGS[@]}"; do
		for half in all 0 1; do
			b[$cfg,$half,d]=$(awk -v a="${b[$cfg,$half]}" -v z="${b[bare,$half]}" -v k="$kind" \
				'BEGIN { if (k == "added") printf "%.2f", a - z; else printf "%.3f", a / z }')
		done
		printf '  %-16s %10s   %s %8s   (halves %s and %s)\n' "$cfg" "${b[$cfg,all]}" \
			"$kind" "${b[$cfg,all,d]}" "${b[$cfg,0,d]}" "${b[$cfg,1,d]}"
	done
	[[ $kind == added && " ${CONFIGS[*]} " == *" bpftrace "* ]] || return 0
	for cfg in "${CONFIGS[@]}"; do
		[[ $cfg != bare && $cfg != bpftrace ]] || continue
		printf '  jankwatch %s added / bpftrace added, by the best: %s (halves %s and %s)\n' \
			"$cfg" "$(ratio "${b[$cfg,all,d]}" "${b[bpftrace,all,d]}")" \
			"$(ratio "${b[$cfg,0,d]}" "${b[bpftrace,0,d]}")" \
			"$(ratio "${b[$cfg,1,d]}" "${b[bpftrace,1,d]}")"
	done
}

# Prints workload @1's lines: per configuration the median and what it adds over bare, for the
# client's figure (us per request with one client, requests per second with 50), for the
# server thread's CPU time per request and for the machine's.
report()
{
	local w=$1

	if [[ $w == *-c1 ]]; then
		printf '%s (1 client): us per request, added over bare in the same repetition\n' "$w"
		table "$w" RESULT added
		printf '%s: the best repetition'"'"'s us per request, added over bare'"'"'s best\n' "$w"
		best_table "$w" RESULT added
	else
		printf '%s (50 clients): requests per second, share of bare in the same repetition\n' "$w"
		table "$w" RESULT share
		printf '%s: the best repetition'"'"'s requests per second, share of bare'"'"'s best\n' "$w"
		best_table "$w" RESULT share
	fi
	printf '%s: the server thread'"'"'s CPU us per request, added over bare likewise\n' "$w"
	table "$w" CPU added
	printf '%s: the best repetition'"'"'s server CPU us per request, added over bare'"'"'s best\n' \
		"$w"
	best_table "$w" CPU added
	printf '%s: the machine'"'"'s busy CPU us per request (both sides, the tools, the kernel;\n' "$w"
	printf '  not the host'"'"'s steal), added over bare likewise\n'
	table "$w" MACHINE added
	printf '%s: the best repetition'"'"'s machine CPU us per request, added over bare'"'"'s best\n' \
		"$w"
	best_table "$w" MACHINE added
}

main()
{
	local port w

	[[ " ${CONFIGS[*]} " == *" bare "* ]] || die "SERVERS_CONFIGS must hold bare"
	[[ $(id -u) == 0 ]] || die "run as root"
	[[ -x $BUILD/jankwatch ]] || die "no $BUILD/jankwatch (cmake --build build)"
	need bpftrace bpftrace
	need apache2-utils ab
	need redis-tools redis-benchmark
	need curl curl
	WORK=$(mktemp -d)
	trap cleanup EXIT
	halt_poll_on

	if [[ " ${WORKLOADS[*]} " == *" redis-"* ]]; then
		port=$(free_port)
		start_redis "$port"
		log "redis-server pid $SERVER_PID on port $port (CPU 0), clients on CPU 1"
		for w in redis-c1 redis-c50; do
			[[ " ${WORKLOADS[*]} " != *" $w "* ]] ||
				run_workload "$w" "$port" "$SERVER_PID" call /usr/bin/redis-server
		done
		reap "$SERVER_PID"
		SERVER_PID=
	fi
	if [[ " ${WORKLOADS[*]} " == *" nginx-"* ]]; then
		port=$(free_port)
		start_nginx "$port"
		log "nginx worker pid $NGINX_WORKER on port $port (CPU 0), clients on CPU 1"
		for w in nginx-c1 nginx-c50; do
			[[ " ${WORKLOADS[*]} " != *" $w "* ]] ||
				run_workload "$w" "$port" "$NGINX_WORKER" ngx_http_core_run_phases \
					/usr/sbin/nginx
		done
		reap "$SERVER_PID"
		SERVER_PID=
	fi

	echo "servers: $REPS repetitions, medians; the machine: $(nproc) CPUs, $(uname -r)"
	for w in "${WORKLOADS[@]}"; do
		report "$w"
		[[ ! -s $WORK/$w.programs ]] || cat "$WORK/$w.programs"
	done
}

main "$@"
