# SPDX-License-Identifier: GPL-2.0-only
# scripts/bench.sh's helpers: messages, processes (start, wait for a line, stop, reap), the
# statistics of a series (median, spread) and the ratios and verdicts. Sourced, not run.

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

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

# Prints "RUN_TIME_NS RUN_COUNT" of the loaded BPF program named @1 (kernel.bpf_stats_enabled
# on), the first one of that name.
prog_stats()
{
	prog_stats_id "$(prog_ids "$1" | cut -d' ' -f1)"
}

# Prints the ids of the BPF programs process @1 holds open, on one line.
held_prog_ids()
{
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '/^prog_id:/ { print $2 }' | sort -u | tr '\n' ' '
}

# Prints the id of the BPF program named @2 that process @1 holds open (several jankwatch at once
# each have their own), or nothing.
prog_id_of()
{
	bpftool prog show --json |
		python3 -c 'import json,sys
held = set(sys.argv[2].split())
print(next((str(p["id"]) for p in json.load(sys.stdin)
            if p.get("name") == sys.argv[1] and str(p["id"]) in held), ""))' "$2" "$(held_prog_ids "$1")"
}

# Prints the run time in ns of every BPF program process @1 holds open, summed
# (kernel.bpf_stats_enabled on): what its programs have cost the processes they ran in.
prog_time_of()
{
	bpftool prog show --json |
		python3 -c 'import json,sys
held = set(sys.argv[1].split())
print(sum(p.get("run_time_ns", 0) for p in json.load(sys.stdin) if str(p["id"]) in held))' \
			"$(held_prog_ids "$1")"
}

# Prints the ids of the loaded BPF programs named @1, on one line.
prog_ids()
{
	bpftool prog show --json |
		python3 -c 'import json,sys
print(" ".join(str(p["id"]) for p in json.load(sys.stdin) if p.get("name") == sys.argv[1]))' "$1"
}

# Prints "RUN_TIME_NS RUN_COUNT" of the loaded BPF program of id @1.
prog_stats_id()
{
	bpftool prog show id "$1" --json |
		python3 -c 'import json,sys; p=json.load(sys.stdin)
print(p.get("run_time_ns",0), p.get("run_cnt",0))'
}

# Prints the median of the numbers on stdin, one a line, with printf format @1.
median()
{
	sort -g | awk -v fmt="$1\n" '{ v[NR] = $1 }
		END { printf fmt, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Prints the lower and upper quartiles of the numbers on stdin, in format @1 each (the medians
# of the lower and the upper half, the middle one left out of both when they are odd).
quartiles()
{
	sort -g | awk -v fmt="$1 $1\n" '{ v[NR] = $1 }
		function med(lo, hi,   n) { n = hi - lo + 1
			return n % 2 ? v[lo + (n - 1) / 2] : (v[lo + n / 2 - 1] + v[lo + n / 2]) / 2 }
		END { h = int(NR / 2); if (!h) { printf fmt, v[1], v[1]; exit }
		      printf fmt, med(1, h), med(NR - h + 1, NR) }'
}

# Prints the range of the numbers on stdin but the highest and the lowest (when there are 4
# or more: one odd value does not move a median either), in percent of @1.
spread_pct()
{
	sort -g | awk -v m="$1" '{ v[NR] = $1 } END { t = NR >= 4
		printf "%.1f\n", (m > 0 ? 100 * (v[NR - t] - v[1 + t]) / m : 0) }'
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

# A guest whose idle CPUs halt at once (cpuidle-haltpoll with guest_halt_poll_ns=0, as this
# VM's kernel command line sets) makes every wakeup of an idle CPU wait for the host: a request
# between two processes on two CPUs then takes ~100 us, most of it the host's, whose variation
# hides what runs on the CPUs. halt_poll_on sets KVM's default poll (200 us) for the run and
# halt_poll_restore puts back what was there; nothing where the module is not in use.
HALT_POLL=/sys/module/haltpoll/parameters/guest_halt_poll_ns
HALT_POLL_WAS=
halt_poll_on()
{
	[[ -w $HALT_POLL && ${SERVERS_HALT_POLL:-1} == 1 ]] || return 0
	HALT_POLL_WAS=$(cat "$HALT_POLL")
	((HALT_POLL_WAS == 0)) || { HALT_POLL_WAS=; return 0; }
	echo 200000 >"$HALT_POLL"
	log "guest_halt_poll_ns 0 -> 200000 for the run (restored after; SERVERS_HALT_POLL=0 to keep 0)"
}
halt_poll_restore()
{
	[[ -z $HALT_POLL_WAS ]] || echo "$HALT_POLL_WAS" >"$HALT_POLL"
	HALT_POLL_WAS=
}

# A free TCP port on the loopback.
free_port()
{
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Writes to @1 the bpftrace program the servers' benches compare with: a uprobe and a uretprobe
# on function @3 of binary @2, the call's time into a histogram; "ready" once attached.
write_pair_bt()
{
	cat >"$1" <<EOF
BEGIN { printf("ready\\n"); }
uprobe:$2:$3 { @start[tid] = nsecs; }
uretprobe:$2:$3 /@start[tid]/ { @ns = hist(nsecs - @start[tid]); delete(@start[tid]); }
EOF
}

# Whether the nginx of write_nginx_conf on port @1 serves its file.
nginx_answers()
{
	[[ $(curl -s "http://127.0.0.1:$1/small" 2>/dev/null) == hello ]]
}

# Writes nginx's configuration for the servers' benches into directory @1 (nginx.conf, and
# www/small, the 6-byte file every GET asks for), serving 127.0.0.1:@2; @3 "single": one
# process (master_process off) keeping a connection for every request, "worker": a master and
# one worker, which runs as nobody (the file readable to it).
write_nginx_conf()
{
	local dir=$1 port=$2 how keep=''

	mkdir -p "$dir/www"
	printf 'hello\n' >"$dir/www/small"
	case $3 in
	single)
		how="master_process off;"
		keep=" keepalive_requests 100000000;"
		;;
	worker)
		how="worker_processes 1;"
		chmod 755 "$dir" "$dir/www"
		chmod 644 "$dir/www/small"
		;;
	*) die "write_nginx_conf: '$3' is neither single nor worker" ;;
	esac
	cat >"$dir/nginx.conf" <<CONF
$how
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $dir/body;
	proxy_temp_path $dir/proxy;
	fastcgi_temp_path $dir/fastcgi;
	uwsgi_temp_path $dir/uwsgi;
	scgi_temp_path $dir/scgi;
	server {
		listen 127.0.0.1:$port;
		root $dir/www;$keep
	}
}
CONF
}

# Starts server @1 (redis or nginx: one process, write_nginx_conf's "single") from binary @2 on
# CPU 0, serving 127.0.0.1:@3, its files in directory @4 (nginx's configuration, the server's
# output in server.log): its pid in STARTED_PID once it answers, and for redis with
# key:__rand_int__ set (the key bench/getmix.c asks for).
start_bench_server()
{
	local kind=$1 bin=$2 port=$3 dir=$4

	mkdir -p "$dir"
	if [[ $kind == nginx ]]; then
		write_nginx_conf "$dir" "$port" single
		taskset -c 0 "$bin" -c "$dir/nginx.conf" -p "$dir" >"$dir/server.log" 2>&1 &
	else
		taskset -c 0 "$bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
			--daemonize no >"$dir/server.log" 2>&1 &
	fi
	STARTED_PID=$!
	until bench_server_answers "$kind" "$port"; do
		alive "$STARTED_PID" || die "$kind on port $port exited: $(tail -n 3 "$dir/server.log")"
		sleep 0.05
	done
	[[ $kind == nginx ]] || redis-cli -p "$port" set key:__rand_int__ xxx >/dev/null
}

# Whether server @1 (redis or nginx) on port @2 answers.
bench_server_answers()
{
	if [[ $1 == nginx ]]; then
		nginx_answers "$2"
	else
		redis-cli -p "$2" ping >/dev/null 2>&1
	fi
}

# A bench's positional arguments @2... as [SECONDS] [BUILD_DIR] [-- ARGS...]: SECONDS_EACH
# (default @1), BUILD (default build/ of the checkout) and the words after -- in REST.
bench_positional()
{
	local dflt=$1

	shift
	# shellcheck disable=SC2034 # the sourcing bench's
	SECONDS_EACH=$dflt BUILD=$ROOT/build
	if [[ ${1:-} != -- && $# -gt 0 ]]; then
		# shellcheck disable=SC2034
		SECONDS_EACH=$1
		shift
	fi
	if [[ ${1:-} != -- && $# -gt 0 ]]; then
		# shellcheck disable=SC2034
		BUILD=$1
		shift
	fi
	[[ ${1:-} != -- ]] || shift
	REST=("$@")
}
