# SPDX-License-Identifier: GPL-2.0-only
"""An asyncio loop for the integration tests: every --every ms a callback (on_timer; with --coro a
coroutine step of ticker) busy-loops --ms (or sleeps in time.sleep with --sleep; with --alternate
every other one busy-loops in busy_other, a second function); it prints what it measured itself,
like jw_target: "task <n> <kind> <begin_ns> <duration_ns>" (CLOCK_MONOTONIC). With --light MS a
ticker, on_light (a call_later timer), ticks every MS ms and prints how late it ran by its own
handle's due time and when it ran, "tick <n> late <ns> at <ns>"; with --posted 1 it posts the busy
task, on_posted (call_soon), every --every ms, right after its tick. With --late MS a callback, hog,
due MS ms before each on_timer, busy-loops 2 * MS ms (under the jank threshold when MS < 75), so
that on_timer runs about MS ms late; on_timer prints how late it ran by its own handle's due time,
"timer <n> late <ns> at <ns>" (at: time.monotonic_ns()). With --from-wait a task is the interval
jankwatch's syscall mode times: from the return of the loop's wait (epoll_wait, timed as the epoll
object's poll returns, before the selector's own Python work) before the callback to the loop's next
wait, the loop's own bookkeeping around the callback included (milliseconds of it under an
emulator); its line is printed when that next wait begins (or when the loop stops), with "gc=NS":
how long the interpreter's garbage collector ran inside that wait's poll, after the system call
returned (the result's allocation may start a collection): inside jankwatch's task, not the
program's."""
import argparse
import asyncio
import gc
import selectors
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--ms", type=int, default=300)
ap.add_argument("--every", type=int, default=700)
ap.add_argument("--sleep", action="store_true")
ap.add_argument("--count", type=int, default=0)
ap.add_argument("--exit", type=int, default=0, help="exit status after --count tasks")
ap.add_argument("--coro", action="store_true", help="the jank is a step of a coroutine")
ap.add_argument("--light", type=int, default=0)
ap.add_argument("--posted", type=int, default=0)
ap.add_argument("--alternate", action="store_true", help="every other jank in busy_other")
ap.add_argument("--depth", type=int, default=0, help="Python frames between the task and its work")
ap.add_argument("--late", type=int, default=0, help="on_timer this many ms late, behind hog")
ap.add_argument("--from-wait", action="store_true", help="a task begins when the wait returned")
args = ap.parse_args()
n = 0


def busy_work(ms):
    end = time.monotonic_ns() + ms * 1_000_000
    while time.monotonic_ns() < end:
        pass


def busy_other(ms):
    """The same work as busy_work's, as another function: a jank group of its own."""
    end = time.monotonic_ns() + ms * 1_000_000
    while time.monotonic_ns() < end:
        pass


def nest(depth, work, ms):
    """@work(@ms) @depth Python frames down (a deep stack for the sampling's cost)."""
    if depth > 0:
        return nest(depth - 1, work, ms)
    return work(ms)


class GcPauses:
    """The garbage collector's runs (gc.callbacks): how long it ran since a mark."""
    began = None
    since = 0

    @staticmethod
    def note(phase, info):
        now = time.monotonic_ns()
        if phase == "start":
            GcPauses.began = now
        elif GcPauses.began is not None:
            GcPauses.since += now - GcPauses.began
            GcPauses.began = None


class TimedPoll:
    """The selector's epoll object, noting when each poll (the epoll_wait) returned: the
    closest Python comes to the system call's return."""

    def __init__(self, epoll):
        self.epoll = epoll

    def poll(self, *args):
        ready = self.epoll.poll(*args)
        TimedSelector.returned_ns = time.monotonic_ns()
        TimedSelector.gc_ns = GcPauses.since
        return ready

    def __getattr__(self, name):
        return getattr(self.epoll, name)


class TimedSelector(selectors.EpollSelector):
    """The loop's selector, noting when each wait returned; a task's line waits for the next."""
    returned_ns = None
    gc_ns = 0
    pending = None

    def __init__(self):
        super().__init__()
        self._selector = TimedPoll(self._selector)
        gc.callbacks.append(GcPauses.note)

    def select(self, timeout=None):
        TimedSelector.flush()
        GcPauses.since = 0
        return super().select(timeout)

    @staticmethod
    def flush():
        """Prints the task that ended as the loop went back to its wait (or stopped)."""
        if TimedSelector.pending:
            line, begin, gc_ns = TimedSelector.pending
            TimedSelector.pending = None
            print(f"{line} {begin} {time.monotonic_ns() - begin} gc={gc_ns}", flush=True)


def one_task():
    """Makes one jank; returns whether that was the last."""
    global n
    begin = time.monotonic_ns()
    gc_ns = 0
    if args.from_wait and TimedSelector.returned_ns is not None:
        begin = TimedSelector.returned_ns
        gc_ns = TimedSelector.gc_ns
    if args.depth:
        nest(args.depth, busy_work, args.ms)
    elif args.sleep:
        time.sleep(args.ms / 1000)
    elif args.alternate and n % 2:
        busy_other(args.ms)
    else:
        busy_work(args.ms)
    n += 1
    line = f"task {n} {'sleep' if args.sleep else 'busy'}"
    if args.from_wait and TimedSelector.returned_ns is not None:
        TimedSelector.pending = (line, begin, gc_ns)
    else:
        print(f"{line} {begin} {time.monotonic_ns() - begin}", flush=True)
    return args.count and n >= args.count


timers = 0


def schedule_timer(loop):
    """on_timer in --every ms, told its own handle's due time; hog --late ms before it."""
    handle = loop.call_later(args.every / 1000, on_timer, loop, None)
    handle._args = (loop, handle.when())
    if args.late:
        loop.call_later((args.every - args.late) / 1000, hog)


def hog():
    end = time.monotonic_ns() + 2 * args.late * 1_000_000
    while time.monotonic_ns() < end:
        pass


def on_timer(loop, due):
    global timers
    timers += 1
    if due is not None:
        now = time.monotonic_ns()
        print(f"timer {timers} late {max(0, now - int(due * 1e9))} at {now}", flush=True)
    if one_task():
        loop.stop()
        return
    schedule_timer(loop)


async def ticker(loop):
    while True:
        await asyncio.sleep(args.every / 1000)
        if one_task():
            loop.stop()
            return


ticks = 0


def on_posted():
    one_task()


def on_light(loop, due):
    global ticks
    ticks += 1
    if due is not None:
        now = time.monotonic_ns()
        print(f"tick {ticks} late {max(0, now - int(due * 1e9))} at {now}", flush=True)
    handle = loop.call_later(args.light / 1000, on_light, loop, None)
    # The handle's own due time, in the loop's clock (time.monotonic()).
    handle._args = (loop, handle.when())
    if args.posted and ticks % (args.every // args.light) == 0:
        loop.call_soon(on_posted)


async def chatter():
    """Other coroutine steps between the janks."""
    while True:
        await asyncio.sleep(0.01)


loop = asyncio.SelectorEventLoop(TimedSelector()) if args.from_wait else asyncio.new_event_loop()
if args.light:
    loop.call_later(args.light / 1000, on_light, loop, None)
    if not args.posted:
        schedule_timer(loop)
elif args.coro:
    loop.create_task(ticker(loop))
    loop.create_task(chatter())
else:
    schedule_timer(loop)
loop.run_forever()
TimedSelector.flush()
sys.exit(args.exit)
