# SPDX-License-Identifier: GPL-2.0-only
"""Nested dispatches (a loop run from inside a task) are one task: the outermost one's wall time,
not split at the inner returns (each level of jw_target's --nest spins half of its time after
its inner dispatch returned, so a task split there would be half or less). Their stacks unwind
through every pending return probe: in pure DWARF mode that needs the real return addresses the
uprobes trampoline hid put back.

The innermost level runs 25 ms of the 200: a report keeps sample_count of the task's samples (10 by
default, one in two of a 10 ms period's), so a late sample (a vCPU the host stopped) could leave
that level out of the report. The runs keep every sample (sample_count=40 at sample_interval=50),
and a 25 ms stretch always holds one."""
from jwtest import *

require_bpf()
target = start_target("--busy", "--ms", "200", "--every", "400", "--nest", "3", "--fast", "7")
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    for mode in ("auto", "dwarf"):
        logs = LogDir()
        rc, events, err = run_jankwatch(
            ["-p", str(target.pid), "--probe", f"{TARGET}:dispatch", "--set",
             "ignore_startup_time=3", "--set", "sample_interval=50", "--set", "sample_count=40",
             "--all", "--duration", "2.5", "--unwind", mode,
             "--log-dir", logs.path], 60)
        check(rc == 0, f"{mode}: jankwatch exits 0 (got {rc})")
        tasks = target_tasks(target)
        check(len(events) >= 3, f"{mode}: at least 3 events (got {len(events)})")
        for ev in events:
            mine = task_of(ev, tasks, f"{mode}: each event is one outer task of the target")
            own_ms = mine.dur_ns / 1e6
            check(abs(ev["wall_ms"] - own_ms) <= 0.05 * own_ms,
                  f"{mode}: wall_ms {ev['wall_ms']} is the whole nested task ({own_ms:.3f})")
            tree = stack_tree(open(ev["external_log"][0]).read())
            check(any("(busy_work+" in l for l in tree), f"{mode}: busy_work is in the stacks")
            depths = {l.split()[1] for l in tree if "(dispatch+" in l}
            if len(depths) != 4:
                print("\n".join(tree))
            check(len(depths) == 4, f"{mode}: four nested dispatch frames ({sorted(depths)})")
            check(tree[0].startswith(f"{ev['samples']} #00 ") and "(_start+" in tree[0],
                  f"{mode}: every one of the {ev['samples']} samples reaches _start: {tree[0]}")
        logs.cleanup()
finally:
    target.kill()
print("PASS")
