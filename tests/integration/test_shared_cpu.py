# SPDX-License-Identifier: GPL-2.0-only
"""Another thread of the watched process calls the same dispatch() without pause, on the same CPU
as the loop (jw_target --twin): the two take turns on it all the time, and every probe hit must
be told apart by the thread it runs on, whatever ran on the CPU before. Only the loop's tasks are
counted, in a row of its own and no more of them than it made; its janks are its own, within 5%
of what it measured, the twin's share of the CPU in their run-queue time."""
import csv
import re

from jwtest import *

require_bpf()
logs = LogDir()
target = start_target("--twin", "--busy", "--ms", "200", "--every", "600", "--fast", "5")
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    rc, events, err = run_jankwatch(
        ["-p", str(target.pid), "--probe", f"{TARGET}:dispatch", "--set",
         "ignore_startup_time=3", "--all", "--duration", "5", "--log-dir", logs.path], 60)
    # Its own count, printed after each slow task, once jankwatch has stopped.
    time.sleep(0.7)
finally:
    target.kill()
check(rc == 0, f"jankwatch exits 0 (got {rc})")

stats = os.path.join(logs.path, "stats.csv")
check(os.path.exists(stats), "a statistics file was written: the loop's tasks were counted")
with open(stats) as f:
    rows = [r for r in csv.DictReader(f) if r["pid"] == str(target.pid)]
names = sorted({r["thread_name"] for r in rows})
check(names == ["jw_target"], f"rows for the loop's thread alone, none for jw-twin ({names})")
counted = sum(int(r["message_count"]) for r in rows)
made = [int(m.group(1)) for m in (re.fullmatch(r"dispatched (\d+)", l) for l in list(target.out))
        if m]
check(made, "the target said how many tasks it dispatched")
# The loop runs a trivial task every 5 ms and a 200 ms one every 600 ms: over 5 s, some 500.
check(300 <= counted <= made[-1],
      f"the loop's row counts its tasks: {counted}, of the {made[-1]} it made in its life")

tasks = target_tasks(target)
check(len(events) >= 4, f"at least 4 janks in 5 s (got {len(events)})")
for ev in events:
    check(ev["tid"] == target.pid, f"the jank is the loop's (tid {ev['tid']})")
    mine = task_of(ev, tasks, "the event matches one task of the loop")
    own_ms = mine.dur_ns / 1e6
    check(matches_own(ev, own_ms, waited_ms=mine.waited_ns / 1e6),
          f"wall_ms {ev['wall_ms']} (runq {ev['runq_ms']}) within 5% of the loop's own "
          f"{own_ms:.3f}")
    # The twin had the CPU for much of it: time in the run queue, which the loop saw too.
    check(ev["runq_ms"] > 0.2 * own_ms, f"runq_ms {ev['runq_ms']}: the twin shared the CPU")
logs.cleanup()
print("PASS")
