# SPDX-License-Identifier: GPL-2.0-only
"""The wall clock stepped while jankwatch watches (NTP's first answer, a phone's network time, a
virtual machine restored from a snapshot): the monotonic clock the kernel's programs stamp the
tasks with does not move, so an event's begin_time, converted from it, must use the offset of the
moment it is reported, not the one jankwatch read at its start. A run of CI once had six tests
fail at once by ~40 ms when the machine's VM was forked under it.

jw_target makes a 200 ms jank every 700 ms; 3 s into the watch the wall clock is stepped 5 s
ahead (clock_adjtime's ADJ_SETOFFSET: relative, exact), 4 s later back, 4 s more watched. Every event must begin
where its task began by the wall clock of its time, and jankwatch says each step once; the
capture (--raw) keeps the steps, so that `jankwatch symbolize` gives its events the same times."""
import ctypes
import ctypes.util

from jwtest import *

ADJ_SETOFFSET, ADJ_NANO = 0x0100, 0x2000
STEP_S = 5


class Timex(ctypes.Structure):
    # struct timex of <linux/timex.h>: the fields before `time`, then room for the rest.
    _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
                ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long),
                ("status", ctypes.c_int), ("constant", ctypes.c_long),
                ("precision", ctypes.c_long), ("tolerance", ctypes.c_long),
                ("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long),
                ("rest", ctypes.c_char * 160)]


libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def step_wall_clock(seconds):
    """Moves CLOCK_REALTIME by @seconds (whole), at once; returns the monotonic time it did."""
    tx = Timex(modes=ADJ_SETOFFSET | ADJ_NANO, tv_sec=seconds, tv_nsec=0)
    if libc.clock_adjtime(time.CLOCK_REALTIME, ctypes.byref(tx)) < 0:
        fail(f"clock_adjtime(ADJ_SETOFFSET {seconds:+d} s): {os.strerror(ctypes.get_errno())}")
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


require_bpf()
logs = LogDir()
raw = os.path.join(logs.path, "capture.raw")
target = start_target("--busy", "--ms", "200", "--every", "700")
stepped = back = None
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    before = wall_offset_ns()
    jw = start_jankwatch(["-p", str(target.pid), "--set", "ignore_startup_time=3", "--all",
                          "--log-dir", logs.path, "--raw", raw])
    try:
        time.sleep(3)
        stepped = step_wall_clock(STEP_S)
        time.sleep(4)
        back = step_wall_clock(-STEP_S)
        time.sleep(4)
    finally:
        if stepped is not None and back is None:
            step_wall_clock(-STEP_S)
        rc = stop_jankwatch(jw)
finally:
    target.kill()
after = wall_offset_ns()
check(abs(after - before) < 5_000_000,
      f"the wall clock is back where it was ({(after - before) / 1e6:+.1f} ms)")
check(rc == 0, f"jankwatch exits 0 ({rc})")
events = [e for e in json_lines(jw) if e.get("event") == "MAIN_THREAD_JANK"]
tasks = target_tasks(target)


def near_step(mono_ns):
    """Within 0.2 s of a step, a task may have begun under one offset and been reported under
    the other (both place a step where a reading saw it)."""
    return any(abs(mono_ns - at) < 200_000_000 for at in (stepped, back))


def begins_ms(t):
    """Where task @t began by the wall clock of its moment; near a step, by either offset."""
    own = mono_to_epoch_ms(t.begin_ns)
    return [own, own - STEP_S * 1000, own + STEP_S * 1000] if near_step(t.begin_ns) else [own]


by_part = {"before": 0, "stepped": 0, "after": 0}
for ev in events:
    near = [t for t in tasks
            if any(abs(b - ev["begin_time"]) < 20 + ev["runq_ms"] for b in begins_ms(t))]
    check(len(near) == 1, f"the event at {ev['begin_time']} is one task of the target by the "
          f"wall clock of its time ({len(near)})")
    t = near[0].begin_ns
    if not near_step(t):
        by_part["stepped" if stepped < t < back else "before" if t < stepped else "after"] += 1
print(f"events matched by the wall clock of their time: {by_part}")
check(all(n >= 2 for n in by_part.values()),
      f"at least 2 janks before the step, while stepped and after it was undone ({by_part})")
# Only this test's steps are counted: the machine's own (a VM restored under the run) are said too.
said = [l for l in jw.err if "wall clock was stepped" in l and
        any(f"{s * 1000:+.1f} ms" in l for s in (STEP_S, -STEP_S))]
check(len(said) == 2 and f"{STEP_S * 1000:+.1f} ms" in said[0] and
      f"{-STEP_S * 1000:+.1f} ms" in said[1], f"each step said once ({said})")

# The capture keeps the steps: its events, named again, have the live ones' times.
replayed = subprocess.run([JW_BIN, "symbolize", raw, "--log-dir", os.path.join(logs.path, "re")],
                          capture_output=True, text=True, timeout=120)
check(replayed.returncode == 0, f"symbolize exits 0 ({replayed.stderr.strip()})")
again = [json.loads(l) for l in replayed.stdout.splitlines() if l.startswith("{")]
check([(e["begin_time"], e["end_time"]) for e in again] ==
      [(e["begin_time"], e["end_time"]) for e in events],
      f"the capture's {len(again)} events begin and end where the {len(events)} live ones did")
logs.cleanup()
print("PASS")
