# SPDX-License-Identifier: GPL-2.0-only
"""A 300 ms busy task is reported with wall_ms within 5% of what the target measured itself, and
its stack log names the busy function under main, from the task's start: with the stacks'
timers one per watched thread (samplers=0) and one per CPU (samplers=1); the default, samplers=2,
chooses between them as the threads switch (test_wait_switch)."""
import re

from jwtest import *

require_bpf()


def check_run(samplers):
    """One run, its stacks taken by samplers=@samplers (one timer per thread, or per CPU)."""
    print(f"samplers={samplers}:")
    logs = LogDir()
    target = start_target("--busy", "--ms", "300", "--every", "700", "--fast", "5")
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        rc, events, err = watch_until(
            ["-p", str(target.pid), "--probe", f"{TARGET}:dispatch", "--set",
             "ignore_startup_time=3", "--all", "--log-dir", logs.path,
             "--set", f"samplers={samplers}"], 4)
    finally:
        target.kill()
    check(rc == 0, f"jankwatch exits 0 (got {rc})")
    tasks = [t for t in target_tasks(target)]
    check(len(events) >= 4, f"at least 4 events (got {len(events)})")

    for ev in events:
        check(ev["event"] == "MAIN_THREAD_JANK" and ev["pid"] == target.pid and
              ev["tid"] == target.pid and ev["handler"] == "dispatch",
              "event names pid, tid, handler")
        mine = task_of(ev, tasks, f"event at {ev['begin_time']} matches one task of the target")
        own_ms = mine.dur_ns / 1e6
        # The probe sees the call from dispatch()'s entry: the part of the program's figure before
        # it is the call's edges, which the program measures (see test_sleep_task.py).
        check(matches_own(ev, own_ms, body_ms=mine.body_ns / 1e6),
              f"wall_ms {ev['wall_ms']} (runq {ev['runq_ms']}) within 5% of "
              f"{own_figures(mine, ev)}")
        # On a loaded machine part of a busy task waits for a CPU: on-CPU + run queue is the task.
        check(ev["cpu_ms"] + ev["runq_ms"] >= 0.97 * ev["wall_ms"] and ev["blocked_ms"] < 5,
              f"cpu_ms {ev['cpu_ms']} + runq_ms {ev['runq_ms']} make the task, not blocked")
        check(ev["cause"] in ("cpu", "runqueue"), f"cause is cpu or runqueue ({ev['cause']})")
        check(ev["samples"] == 10, f"10 samples kept (sample_count default), got {ev['samples']}")
        check(len(ev["external_log"]) == 1, "one stack log per event")
        check(ev["bundle_name"] == "jw_target" and re.fullmatch(r"[0-9a-f]{40}",
              ev["bundle_version"] or ""), "bundle name and build-id")
        # The times are whole ms, each rounded down: they span the event's wall_ms (held to the
        # program's own above, the call's edges allowed for by name) to within a millisecond.
        span = ev["end_time"] - ev["begin_time"]
        check(abs(span - ev["wall_ms"]) <= 1,
              f"begin and end times span the task ({span} ms, wall_ms {ev['wall_ms']})")

        text = open(ev["external_log"][0]).read()
        h = header(text)
        check(h["pid"] == str(target.pid) and h["samples"] == "10", "stack log header")
        tree = stack_tree(text)
        roots = [l for l in tree if re.match(r"\d+ #00 ", l)]
        check(sum(int(l.split()[0]) for l in roots) == 10, "#00 counts sum to the samples")
        check(len(roots) == 1 and "(_start+" in roots[0], f"every sample reaches _start: {roots}")
        busy = [l for l in tree if "(busy_work+" in l]
        main = [l for l in tree if "(main+" in l]
        check(main and busy, "the tree names main and busy_work")
        check(sum(int(l.split()[0]) for l in busy) >= 9,
              "busy_work is in at least 9 of the 10 samples")
        check(all(l.index("#") > main[0].index("#") for l in busy), "busy_work sits under main")
        check("heaviest_stack" in h and "busy_work" in ev["heaviest_stack"],
              f"heaviest stack names busy_work: {ev['heaviest_stack']}")

    lines = logs.read("events.jsonl").splitlines()
    check(len(lines) == len(events), "every event line is also in events.jsonl")
    logs.cleanup()


for samplers in (0, 1):
    check_run(samplers)
print("PASS")
