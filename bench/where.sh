#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Where the time jankwatch adds to a server's requests goes, by the kernel's and the server's own
# functions: two servers alike (redis-server, or nginx as one process) on CPU 0, a watched by
# `jankwatch -p` on CPU 1 and b by nobody, one client (bench/getmix.c: batches of GETs to each
# in turns, so that both meet the same moments of the machine) on CPU 1, and `perf record -g`
# of CPU 0 at 5 kHz throughout. Prints each server's GETs and ns a GET (the client's medians),
# then the functions whose samples differ most between a and b, as ns a GET (both served the
# same GETs). Without a hardware PMU perf samples on a timer, which cannot interrupt code that
# runs with interrupts off: such time lands where they come back on, so a sample there is
# named by the callers of that point (its "<-" chain: a uprobe's trap, a lock held with them
# off). The difference between two unwatched servers is the pair's own noise: --bare runs
# that (no jankwatch).
# Usage: bench/where.sh [-c CLIENTS] [--nginx] [--bare] [SECONDS] [BUILD_DIR] [-- JANKWATCH_ARGS...]
# (root; default 1 client, redis, 30 s, build/).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
CLIENTS=1 SERVER=redis BARE=''
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
	--bare)
		BARE=1
		shift
		;;
	*) die "$1: not an option (usage: bench/where.sh [-c CLIENTS] [--nginx] [--bare] [SECONDS] [BUILD_DIR] [-- ARGS])" ;;
	esac
done
declare -a REST=()
bench_positional 30 "$@"
set -- "${REST[@]}"
# shellcheck disable=SC2034 # read by bench/lib.sh's wait_for_line and stop_tool
READY_TIMEOUT_MS=60000 STOP_TIMEOUT_MS=15000
WORK='' TOOL_PID='' PERF_PID=''
# perf's samples a second, and the client's warm-up (s), which the profile leaves out too.
PERF_HZ=5000 WARMUP_S=3
declare -a SERVERS=()

cleanup()
{
	local pid

	reap "$PERF_PID"
	reap "$TOOL_PID"
	for pid in "${SERVERS[@]}"; do
		reap "$pid"
	done
	halt_poll_restore
	[[ -z $WORK ]] || rm -rf "$WORK"
}

main()
{
	local port_a port_b bin batch=10
	local -a mix=()

	[[ $(id -u) == 0 ]] || die "run as root"
	[[ $SECONDS_EACH =~ ^[1-9][0-9]*$ && $SECONDS_EACH -ge 5 ]] ||
		die "SECONDS: '$SECONDS_EACH' is not a number of seconds, 5 or more"
	[[ -x $BUILD/jankwatch && -x $BUILD/bench/jw_bench_getmix ]] ||
		die "no $BUILD/jankwatch or $BUILD/bench/jw_bench_getmix (cmake --build)"
	need linux-perf perf
	if [[ $SERVER == nginx ]]; then
		need nginx nginx
		need curl curl
		mix=(--http /small)
		bin=$(command -v nginx)
	else
		need redis-server redis-server
		need redis-tools redis-cli
		bin=$(command -v redis-server)
	fi
	WORK=$(mktemp -d)
	trap cleanup EXIT
	halt_poll_on
	port_a=$(free_port)
	start_bench_server "$SERVER" "$bin" "$port_a" "$WORK/a"
	SERVERS+=("$STARTED_PID")
	port_b=$(free_port)
	start_bench_server "$SERVER" "$bin" "$port_b" "$WORK/b"
	SERVERS+=("$STARTED_PID")
	((CLIENTS == 1)) || batch=2
	mix+=(-c "$CLIENTS")
	if [[ -z $BARE ]]; then
		taskset -c 1 "$BUILD/jankwatch" -v -p "${SERVERS[0]}" --log-dir "$WORK/logs" "$@" \
			>"$WORK/jankwatch.out" 2>&1 &
		TOOL_PID=$!
		wait_for_line "$WORK/jankwatch.out" 'ready' "$TOOL_PID" jankwatch
	fi
	taskset -c 1 "$BUILD/bench/jw_bench_getmix" "${mix[@]}" "$WARMUP_S" "$SECONDS_EACH" "$batch" \
		"$port_a" "$port_b" >"$WORK/rounds" &
	local mix_pid=$!
	sleep "$WARMUP_S"
	perf record -q -g -C 0 -F "$PERF_HZ" -o "$WORK/perf.data" -- sleep "$((SECONDS_EACH - 1))" \
		>/dev/null 2>&1 &
	PERF_PID=$!
	wait "$mix_pid" || die "the client failed"
	wait "$PERF_PID" || die "perf record failed"
	PERF_PID=''
	local watcher="$BUILD/jankwatch $*"
	[[ -z $BARE ]] || watcher="nobody (--bare)"
	echo "$SERVER GET, $CLIENTS client(s), $SECONDS_EACH s; a: $watcher; b: nobody"
	if [[ -z $BARE ]]; then
		grep -E "syscall mode|context switches|handler sites" "$WORK/jankwatch.out" |
			cut -c1-200 || true
	fi
	perf script -i "$WORK/perf.data" -F pid,ip,sym >"$WORK/samples" 2>/dev/null
	python3 - "$WORK/rounds" "${SERVERS[0]}" "${SERVERS[1]}" "$batch" "$CLIENTS" \
		"$WORK/samples" "$PERF_HZ" <<'EOF'
import collections, statistics, sys

rounds = [l.split() for l in open(sys.argv[1]) if l.startswith("round ")]
a, b, batch, clients = (int(x) for x in sys.argv[2:6])
samples = open(sys.argv[6])
ns_per_sample = 1e9 / int(sys.argv[7])
gets = len(rounds) * batch * clients  # each server's, in every round
if not rounds:
    sys.exit("where.sh: the client made no round")
wall_a = statistics.median(float(r[4]) for r in rounds)
wall_b = statistics.median(float(r[5]) for r in rounds)
print(f"{gets} GETs each; ns a GET (the client's, medians of {len(rounds)} rounds): "
      f"a {wall_a:.0f}, b {wall_b:.0f}, a over b {wall_a - wall_b:+.0f}")

IRQ_ON = ("pvm_irq_enable", "native_irq_enable", "arch_local_irq_enable",
          "__raw_callee_save_pvm_irq_enable", "_raw_spin_unlock_irq",
          "_raw_spin_unlock_irqrestore", "__raw_callee_save___native_irq_enable")
count = collections.Counter()
total = collections.Counter()


def key_of(frames):
    """A sample's leaf; where interrupts come back on, the first caller that is not that."""
    if not frames:
        return "?"
    if frames[0] not in IRQ_ON:
        return frames[0]
    rest = [f for f in frames if f not in IRQ_ON]
    return "irqs on <- " + " <- ".join(rest[:2]) if rest else frames[0]


pid, frames = None, []
for line in list(samples) + [""]:
    s = line.strip()
    if not s:
        if pid in (a, b):
            count[(pid, key_of(frames))] += 1
            total[pid] += 1
        pid, frames = None, []
        continue
    f = s.split()
    if pid is None:
        pid = int(f[0]) if f[0].isdigit() else -1
    else:
        frames.append(f[1] if len(f) > 1 else "?")
per_get = lambda n: n * ns_per_sample / gets
print(f"CPU 0's samples: a {total[a]}, b {total[b]}: a over b {per_get(total[a] - total[b]):+.0f} "
      "ns a GET")
keys = {k for _, k in count}
rows = sorted(((count[(a, k)] - count[(b, k)], k) for k in keys), reverse=True)
print(f"{'ns a GET, a over b':>19s} {'a':>7s} {'b':>7s}  where")
for d, k in rows[:20]:
    print(f"{per_get(d):+19.1f} {count[(a, k)]:7d} {count[(b, k)]:7d}  {k}")
print("...")
for d, k in rows[-3:]:
    print(f"{per_get(d):+19.1f} {count[(a, k)]:7d} {count[(b, k)]:7d}  {k}")
EOF
	[[ -n $BARE ]] || stop_tool jankwatch "$WORK/jankwatch.out"
}

main "$@"
