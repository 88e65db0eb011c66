# SPDX-License-Identifier: GPL-2.0-only
"""What the syscall-mode tests share (test_syscall_loop.py, test_syscall_programs.py): a watch of
a running program from when it is 3 s old, its end by Ctrl-C, and each event held to the task
the program measured itself."""
from jwtest import *


def watch(proc, seconds, extra=()):
    logs = LogDir()
    wait_for(lambda: process_age_s(proc.pid) >= 3, 10, "the target to be 3 s old")
    jw = start_jankwatch(["-p", str(proc.pid), "--set", "ignore_startup_time=3", "--all",
                          "--log-dir", logs.path, *extra])
    return jw, logs


def finish(jw, seconds):
    time.sleep(seconds)
    jw.p.send_signal(2)
    rc = jw.wait(30)
    check(rc == 0, f"jankwatch exits 0 after Ctrl-C (got {rc})")
    check(any("(auto: " in l or "(as asked)" in l for l in jw.err),
          "it says which loop it chose and why")
    return [json.loads(l) for l in jw.out if l.startswith("{")]


def check_own(events, proc, what):
    tasks = target_tasks(proc)
    check(len(events) >= 2, f"{what}: at least 2 events ({len(events)})")
    for ev in events:
        check(ev["handler"] == "syscall" and ev["loop"] == "syscall",
              f"{what}: loop and handler are syscall")
        mine = task_of(ev, tasks, f"{what}: the event matches one task of the program")
        own_ms = mine.dur_ns / 1e6
        # Wait to wait: time waiting for a CPU around the callback is not in the program's own,
        # nor a garbage collection in the poll after its wait returned (asyncio, gc=), nor the
        # program's own work between its waits and its figure (jw_target's "around").
        check(matches_own(ev, own_ms, before_ms=mine.gc_ns / 1e6,
                          around_ms=mine.around_ms(ev)),
              f"{what}: wall_ms {ev['wall_ms']} (runq {ev['runq_ms']}) within 5% of "
              f"{own_figures(mine, ev)}")
