# SPDX-License-Identifier: GPL-2.0-only
"""The android preset on AOSP's native Looper (Debian's android-libutils), with no options:
jw_looper is shaped like SurfaceFlinger's main thread (pollOnce(-1) in a loop): TickHandler's
message (what 1) every 16 ms, SlowHandler's (what 7) spinning 300 ms once a second, a
LooperCallback (PipeCallback) spinning 200 ms once on a pipe, and a plain function (addFd with a
Looper_callbackFunc: Looper wraps it in a SimpleLooperCallback) on an eventfd every 100 ms.

- Each message and fd callback pollInner dispatches is a task of its own: the slow message's
  jank is the message alone, within 5% of what the program measured, named by its handler's
  class (SlowHandler, from its vtable's RTTI) and its what (0x7); the fd callback's by its class
  (PipeCallback) and its function with the fd's events.
- The statistics rows: one per handler class and message (or callback and events), counting
  what the program counted while watched; the ticker's delay is how late its messages ran after
  their due time, its largest within 10% of the largest the program measured.
- The same program stripped: the classes still named (RTTI survives strip), the fd callback's
  function by its address in the module.
- --mode java: the thread takes one item of its own queue between calls of pollOnce (Java's
  MessageQueue): each item is one task, from pollOnce's return to its next call, within 5%.
- handler_sites=0: no site hooked, said so; the waits bound the tasks."""

from jwtest import *

require_bpf()

WATCH_S = 5
LOOPER = os.path.join(TARGETS, "jw_looper")


def own_lines(target, kind, lo, hi):
    """The program's "@kind N NS [VALUE]" lines whose NS (CLOCK_MONOTONIC) is within [lo, hi]
    (time.monotonic() seconds): their values, or their times."""
    out = []
    for line in list(target.out):
        f = line.split()
        if len(f) >= 3 and f[0] == kind and lo <= int(f[2]) / 1e9 <= hi:
            out.append(int(f[3]) if len(f) > 3 else int(f[2]))
    return out


def watch(binary, *args, extra=(), on_ready=None):
    """Watches @binary (jw_looper's options @args) for WATCH_S s once it is 3 s old."""
    target = Proc([os.path.join(TARGETS, binary), *args])
    w = watch_loop(target, WATCH_S, extra, on_ready)
    what = f"{binary} {' '.join(args)} {' '.join(extra)}".strip()
    check(w.rc == 0, f"{what}: jankwatch exits 0 ({w.rc})")
    return what, target, w


def row_count(rows, key):
    by_name = {(r["handler_class"], r["message_name"]): r for r in rows}
    check(key in by_name, f"a row of {key} ({sorted(by_name)})")
    return by_name[key]


def native(binary, fd_handler):
    """The SurfaceFlinger-shaped loop: its slow message's and fd callback's janks and rows."""
    # The pipe written 2.5 s after jankwatch is ready (a fixed 5.5 s from the start was before
    # it, under load, where its start took past 2.5 s): its callback surely watched.
    what, target, w = watch(binary, "--fd-at", "usr1",
                            on_ready=lambda t: threading.Timer(
                                2.5, os.kill, (t.pid, signal.SIGUSR1)).start())
    picked = [l for l in w.err if "loop android (auto: " in l]
    check(picked and "libutils.so" in picked[0] and "each message and fd callback a task" in
          picked[0], f"{what}: the android preset is picked ({[l for l in w.err if 'loop' in l]})")
    slow = [ev for ev in w.events if ev["handler_class"] == "SlowHandler"]
    fds = [ev for ev in w.events if ev["handler_class"] == "PipeCallback"]
    check(len(slow) >= WATCH_S - 2 and len(fds) == 1 and len(slow) + len(fds) == len(w.events),
          f"{what}: the slow messages' and the fd callback's janks, nothing else "
          f"({[(ev['handler_class'], ev['handler']) for ev in w.events]})")
    for ev in w.events:
        mine = task_of(ev, w.tasks, f"{what}: the event matches one task of the program")
        kind = "message" if ev["handler_class"] == "SlowHandler" else "fd"
        check(mine.kind == kind, f"{what}: {ev['handler_class']}'s event is the program's "
              f"{kind} task ({mine.kind})")
        check(matches_own(ev, mine.dur_ns / 1e6, waited_ms=mine.waited_ns / 1e6),
              f"{what}: wall_ms {ev['wall_ms']} within 5% of {own_figures(mine, ev)}")
        want = "0x7" if kind == "message" else fd_handler
        check(ev["handler"] == want and ev["loop"] == "android",
              f"{what}: {ev['handler_class']}'s event names {want} ({ev['handler']})")
    rows = w.rows
    lo, hi = w.ticks
    n = int(row_count(rows, ("SlowHandler", "0x7"))["message_count"])
    check(n == len(slow), f"{what}: SlowHandler's row counts its {len(slow)} messages ({n})")
    n = int(row_count(rows, ("PipeCallback", fd_handler))["message_count"])
    check(n == 1, f"{what}: PipeCallback's row counts its one call ({n})")
    tick = row_count(rows, ("TickHandler", "0x1"))
    n = int(tick["message_count"])
    check(lo <= n <= hi, f"{what}: TickHandler's row counts the ticks the program ran while "
          f"watched ({n}: {lo} surely, {hi} at most)")
    # The ticker waits behind each slow message: its largest delay is ~300 ms.
    late = max(own_lines(target, "late", 0, 1e12)) / 1e6
    got = float(tick["max_delay_millis"])
    check(abs(got - late) <= 0.1 * late, f"{what}: the ticker's largest delay {got} ms within "
          f"10% of the program's own {late:.3f}")
    simple = [r for r in rows if r["handler_class"] == "android::SimpleLooperCallback"]
    check(len(simple) == 1 and simple[0]["message_name"].endswith(" (EVENT_INPUT)") and
          int(simple[0]["message_count"]) >= 4 * WATCH_S,
          f"{what}: the plain function's row, by its function and events "
          f"({[(r['message_name'], r['message_count']) for r in simple]})")
    return simple[0]["message_name"]


name = native("jw_looper", "PipeCallback::handleEvent(int, int, void*) (EVENT_INPUT)")
check(name == "on_eventfd(int, int, void*) (EVENT_INPUT)",
      f"the plain function is named by its symbol ({name})")
at = symbol_offset(LOOPER, "_ZN12PipeCallback11handleEventEiiPv")
name = native("jw_looper_stripped", f"jw_looper_stripped+0x{at:x} (EVENT_INPUT)")
at = symbol_offset(LOOPER, "_ZL10on_eventfdiiPv")
check(name == f"jw_looper_stripped+0x{at:x} (EVENT_INPUT)",
      f"stripped: the plain function by its address ({name})")

# Java's way: each item the thread takes between calls of pollOnce is a task.
what, target, w = watch("jw_looper", "--mode", "java", "--fd-at", "100000")
check(len(w.events) >= WATCH_S - 2, f"{what}: the items' janks ({len(w.events)})")
for ev in w.events:
    mine = task_of(ev, w.tasks, f"{what}: the event matches one item of the program")
    check(mine.kind == "work" and matches_own(ev, mine.dur_ns / 1e6,
                                              waited_ms=mine.waited_ns / 1e6),
          f"{what}: wall_ms {ev['wall_ms']} within 5% of {own_figures(mine, ev)}")

# handler_sites=0: no site; the waits bound the tasks, the stacks name the handlers.
what, target, w = watch("jw_looper", "--fd-at", "100000", extra=("--set", "handler_sites=0"))
check(any("loop android (auto: " in l and "handler_sites=0" in l for l in w.err),
      f"{what}: it says no site is hooked ({[l for l in w.err if 'loop' in l]})")
check([r["message_name"] for r in w.rows] == ["syscall"],
      f"{what}: only the iterations' row ({[r['message_name'] for r in w.rows]})")
check(len(w.events) >= WATCH_S - 2 and
      all(ev["handler"] == "SlowHandler::handleMessage(android::Message const&)"
          for ev in w.events),
      f"{what}: the stacks name the slow handler ({[ev['handler'] for ev in w.events]})")
print("PASS")
