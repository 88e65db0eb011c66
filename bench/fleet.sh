#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What the metrics and the journal cost jankwatch, side by side in one run: two copies of
# bench/many_handlers.py (1500 handlers, ~1000 callbacks a second, a 200 ms jank every 2 s: the
# statistics at their row limit), each watched by a jankwatch of its own, at once: one as before
# (no metrics, no journal), one with metrics_textfile rewritten every 15 s, metrics_listen scraped
# every 15 s and journal=1 into a journald of its own (a private mount namespace). Prints each
# one's CPU time over WINDOW_S seconds (every thread's, from schedstat) in % of a core and the
# difference, against the budget of 0.1% of a core; the size of a scrape and how long one took;
# and how long `jankwatch stats` took to answer while a scraper held a connection without reading
# (the loop must not wait for it).
# Usage: bench/fleet.sh [WINDOW_S]   (root; build first: cmake --build build)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JW=$ROOT/build/jankwatch
WINDOW_S=${1:-60}
BUDGET_PCT=0.1

if [[ ${JW_FLEET_INSIDE:-} != 1 ]]; then
	((EUID == 0)) || { echo "fleet.sh: run as root" >&2; exit 1; }
	[[ -x $JW ]] || { echo "fleet.sh: no $JW: build first" >&2; exit 1; }
	[[ -x /lib/systemd/systemd-journald ]] || { echo "fleet.sh: no systemd-journald" >&2; exit 1; }
	exec env JW_FLEET_INSIDE=1 unshare -m --propagation private "$0" "$@"
fi

WORK=$(mktemp -d /tmp/jw-fleet.XXXXXX)
PIDS=()
cleanup()
{
	local p

	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

# A journald of this namespace's own.
for d in /run/systemd /run/log /var/log/journal; do
	mkdir -p "$d"
	mount -t tmpfs tmpfs "$d"
done
mkdir -p /run/systemd/journal
/lib/systemd/systemd-journald >"$WORK/journald.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
	[[ -S /run/systemd/journal/socket ]] && break
	sleep 0.1
done

# CPU time of every thread of process $1, ns.
cpu_ns()
{
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ t += $1 } END { printf "%.0f", t }'
}

free_port()
{
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts jankwatch $1 (a name) on a new copy of the program with the arguments after it; sets
# TOOL_$1 and TARGET_$1.
start()
{
	local name=$1 target tool
	shift

	python3.11 "$ROOT/bench/many_handlers.py" >/dev/null &
	target=$!
	PIDS+=("$target")
	sleep 3.2
	"$JW" -p "$target" --set ignore_startup_time=3 --all --log-dir "$WORK/logs-$name" "$@" \
		>/dev/null 2>"$WORK/$name.err" &
	tool=$!
	PIDS+=("$tool")
	for _ in $(seq 600); do
		grep -q ready "$WORK/$name.err" && break
		kill -0 "$tool" 2>/dev/null || { cat "$WORK/$name.err" >&2; exit 1; }
		sleep 0.1
	done
	printf -v "TOOL_$name" %s "$tool"
	printf -v "TARGET_$name" %s "$target"
}

PORT=$(free_port)
start before
start after --set metrics_textfile="$WORK/jankwatch.prom" --set metrics_listen=127.0.0.1:"$PORT" \
	--set metrics_interval_s=15 --set journal=1
echo "fleet: both watching; settling 20 s (every handler's row made and named)" >&2
sleep 20

b0=$(cpu_ns "$TOOL_before")
a0=$(cpu_ns "$TOOL_after")
scrapes=0
scrape_ms=()
start_s=$SECONDS
while ((SECONDS - start_s < WINDOW_S)); do
	t=$(date +%s%N)
	size=$(curl -s "http://127.0.0.1:$PORT/metrics" | wc -c)
	scrape_ms+=("$(( ($(date +%s%N) - t) / 1000000 ))")
	scrapes=$((scrapes + 1))
	sleep $((15 < WINDOW_S - (SECONDS - start_s) ? 15 : WINDOW_S - (SECONDS - start_s) > 0 ?
		WINDOW_S - (SECONDS - start_s) : 0))
done
b1=$(cpu_ns "$TOOL_before")
a1=$(cpu_ns "$TOOL_after")
elapsed=$((SECONDS - start_s))

# A scraper that connects, asks, and never reads: the loop answers `jankwatch stats` meanwhile.
exec 9<>/dev/tcp/127.0.0.1/"$PORT"
printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n' >&9
exec 8<>/dev/tcp/127.0.0.1/"$PORT"	# and one that sends nothing
sleep 0.5
t=$(date +%s%N)
"$JW" stats -p "$TARGET_after" >/dev/null
stats_ms=$(( ($(date +%s%N) - t) / 1000000 ))
exec 9>&- 8>&-

janks=$(grep -c MAIN_THREAD_JANK "$WORK/logs-after/events.jsonl" || true)
journal=$(journalctl -o json MESSAGE_ID=bb3435124ce041ce9bc73d84c2ccbf9c 2>/dev/null | wc -l)
rows=$("$JW" stats -p "$TARGET_after" | wc -l)
awk -v b="$((b1 - b0))" -v a="$((a1 - a0))" -v s="$elapsed" -v budget="$BUDGET_PCT" \
    -v rows="$((rows - 1))" -v janks="$janks" -v journal="$journal" -v size="$size" \
    -v scrapes="$scrapes" -v ms="${scrape_ms[*]}" -v stats_ms="$stats_ms" 'BEGIN {
	pb = 100 * b / (s * 1e9); pa = 100 * a / (s * 1e9); d = pa - pb
	printf "\nwhat the metrics and the journal cost jankwatch (%d statistics rows, %d s, side by side):\n", rows, s
	printf "  jankwatch as before                                    %.3f%% of a core\n", pb
	printf "  + metrics_textfile and metrics_listen every 15 s, journal=1  %.3f%% of a core\n", pa
	printf "  difference %+.3f%% of a core (budget %.1f%%): %s\n", d, budget, d <= budget ? "within" : "OVER"
	printf "  %d scrapes of %d bytes, each took [%s] ms; %d janks, %d journal entries\n", scrapes, size, ms, janks, journal
	printf "  jankwatch stats answered in %d ms while a scraper held a connection unread\n", stats_ms
}'
