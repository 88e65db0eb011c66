# SPDX-License-Identifier: GPL-2.0-only
"""An asyncio loop for the integration tests: every --every ms a callback busy-loops --ms (or
sleeps in time.sleep with --sleep); it prints what it measured itself, like jw_target:
"task <n> <kind> <begin_ns> <duration_ns>" (CLOCK_MONOTONIC)."""
import argparse
import asyncio
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--ms", type=int, default=300)
ap.add_argument("--every", type=int, default=700)
ap.add_argument("--sleep", action="store_true")
ap.add_argument("--count", type=int, default=0)
ap.add_argument("--exit", type=int, default=0, help="exit status after --count tasks")
args = ap.parse_args()
n = 0


def busy_work(ms):
    end = time.monotonic_ns() + ms * 1_000_000
    while time.monotonic_ns() < end:
        pass


def on_timer(loop):
    global n
    begin = time.monotonic_ns()
    if args.sleep:
        time.sleep(args.ms / 1000)
    else:
        busy_work(args.ms)
    n += 1
    print(f"task {n} {'sleep' if args.sleep else 'busy'} {begin} {time.monotonic_ns() - begin}",
          flush=True)
    if args.count and n >= args.count:
        loop.stop()
        return
    loop.call_later(args.every / 1000, on_timer, loop)


loop = asyncio.new_event_loop()
loop.call_later(args.every / 1000, on_timer, loop)
loop.run_forever()
sys.exit(args.exit)
