# SPDX-License-Identifier: GPL-2.0-only
"""An asyncio loop with many handlers, for what the metrics cost at the statistics' row limit:
--handlers N distinct callbacks (h0 .. hN-1, each a function of its own), called one after the
other with call_soon at about --rate a second, and every --jank-every seconds a callback that
spins --jank-ms (a jank: an event line, a journal entry)."""
import argparse
import asyncio
import time

ap = argparse.ArgumentParser()
ap.add_argument("--handlers", type=int, default=1500)
ap.add_argument("--rate", type=int, default=1000)
ap.add_argument("--jank-every", type=float, default=2.0)
ap.add_argument("--jank-ms", type=int, default=200)
args = ap.parse_args()

handlers = []
for i in range(args.handlers):
    ns = {}
    exec(f"def h{i}():\n    return {i}\n", ns)
    handlers.append(ns[f"h{i}"])


def jank():
    end = time.monotonic() + args.jank_ms / 1000
    while time.monotonic() < end:
        pass


async def main():
    loop = asyncio.get_running_loop()
    n = 0
    next_jank = time.monotonic() + args.jank_every
    batch = max(1, args.rate // 100)
    while True:
        for _ in range(batch):
            loop.call_soon(handlers[n % len(handlers)])
            n += 1
        if time.monotonic() >= next_jank:
            loop.call_soon(jank)
            next_jank += args.jank_every
        await asyncio.sleep(0.01)


asyncio.run(main())
