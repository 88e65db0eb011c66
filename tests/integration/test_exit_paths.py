# SPDX-License-Identifier: GPL-2.0-only
"""The two ways a task can end besides a plain return probe: an exit symbol (--probe
BIN:ENTRY:EXIT, the task ends when EXIT is entered), and a lost exit (the task leaves the hooked
function by longjmp, its return never comes): the stale task is closed at the next dispatch and
the thread is not wedged."""
from jwtest import *

require_bpf()


def watch(target_args, probe, seconds):
    logs = LogDir()
    target = start_target(*target_args)
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        rc, events, err = run_jankwatch(
            ["-p", str(target.pid), "--probe", probe, "--set", "ignore_startup_time=3", "--all",
             "--duration", str(seconds), "--log-dir", logs.path], 60)
    finally:
        target.kill()
    check(rc == 0, f"jankwatch exits 0 (got {rc})")
    logs.cleanup()
    return events, target_tasks(target)


def matching(ev, tasks):
    mine = task_of(ev, tasks, f"event at {ev['begin_time']} matches one slow task of the target")
    return mine.dur_ns / 1e6


# Exit symbol: dispatch's entry starts the task, after_dispatch's entry ends it. A slow task
# every 750 ms: 5 in the 4 s watched, give or take the edges. No trivial tasks in between: a
# task whose end were missed would run on to the next dispatch, 500 ms later.
events, tasks = watch(["--busy", "--ms", "250", "--every", "500"],
                      f"{TARGET}:dispatch:after_dispatch", 4)
check(len(events) >= 4, f"exit symbol: at least 4 events (got {len(events)})")
for ev in events:
    own_ms = matching(ev, tasks)
    check(abs(ev["wall_ms"] - own_ms) <= 0.05 * own_ms,
          f"exit symbol: wall_ms {ev['wall_ms']} within 5% of {own_ms:.3f}")

# Lost exit: each slow task longjmps out of dispatch; a 5 ms trivial task follows soon after,
# and its entry closes the stale one. Every slow task is still reported: nothing wedges.
events, tasks = watch(["--busy", "--ms", "250", "--every", "500", "--fast", "5", "--longjmp"],
                      f"{TARGET}:dispatch", 4)
check(len(events) >= 4, f"longjmp: at least 4 events, the thread is not wedged ({len(events)})")
for ev in events:
    own_ms = matching(ev, tasks)
    check(own_ms <= ev["wall_ms"] <= own_ms + 15,
          f"longjmp: wall_ms {ev['wall_ms']} runs to the next dispatch ({own_ms:.3f} + < 15 ms)")
print("PASS")
