# SPDX-License-Identifier: GPL-2.0-only
"""Nested dispatches (a loop run from inside a task) are one task: the outermost one's wall time,
not split at the inner returns."""
from jwtest import *

require_bpf()
logs = LogDir()
target = start_target("--busy", "--ms", "200", "--every", "500", "--nest", "3", "--fast", "7")
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    rc, events, err = run_jankwatch(
        ["-p", str(target.pid), "--probe", f"{TARGET}:dispatch", "--set",
         "ignore_startup_time=3", "--all", "--duration", "3", "--log-dir", logs.path], 60)
finally:
    target.kill()
check(rc == 0, f"jankwatch exits 0 (got {rc})")
tasks = target_tasks(target)
check(len(events) >= 4, f"at least 4 events (got {len(events)})")
for ev in events:
    mine = [t for t in tasks if abs(mono_to_epoch_ms(t.begin_ns) - ev["begin_time"]) < 20]
    check(len(mine) == 1, "each event is one outer task of the target")
    own_ms = mine[0].dur_ns / 1e6
    check(abs(ev["wall_ms"] - own_ms) <= 0.05 * own_ms,
          f"wall_ms {ev['wall_ms']} is the whole nested task ({own_ms:.3f})")
    text = open(ev["external_log"][0]).read()
    depth_of_busy = [l.split()[1] for l in stack_tree(text) if "(busy_work+" in l]
    check(depth_of_busy, "busy_work is in the stacks")
    dispatch_lines = [l for l in stack_tree(text) if "(dispatch+" in l]
    check(len({l.split()[1] for l in dispatch_lines}) >= 4, "four nested dispatch frames")
logs.cleanup()
print("PASS")
