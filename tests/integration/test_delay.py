# SPDX-License-Identifier: GPL-2.0-only
"""Queueing delay (SPEC: how long a task's work waited before it began), held to what the
target measured itself. jw_target --fed 2: every 900 ms its feeder thread posts two items at
once, each a 200 ms busy task; the loop sleeps in poll() on the feeder's pipe, then runs the
two one after the other, and prints how long each waited from its post to its begin.

Each watch lasts the target's 8 tasks, 4 posts of two; it begins before the first post.

(a) --probe dispatch, a task per item. The first item's delay runs from the loop's wakeup to its
    start: no more than the target measured (which also holds the post before the wakeup). The
    second's is the time behind the first: ~200 ms, the target's own figure within 5% + 3 ms.
    The events say so in delay_ms, the stack logs in their header, and in stats.csv the
    dispatch row counts a delay for each recorded task, its maximum the largest the target saw.
(b) --loop syscall, a task per iteration (both items, poll to poll): its delay is the wakeup to
    the poll's return, no more than what the first item waited.
"""
import csv

from jwtest import *

require_bpf()

ITEM_MS = 200


def own_ms(t):
    return t.queued_ns / 1e6


def watch(args):
    """Watches a --fed 2 target through its 8 tasks (it is held until jankwatch is ready and
    it is past ignore_startup_time); returns (log dir, events, its tasks, stats.csv rows)."""
    logs = LogDir()
    target = start_target("--fed", "2", "--busy", "--ms", str(ITEM_MS), "--every", "900",
                          "--count", "8", "--hold")
    try:
        wait_for(lambda: "hold" in target.out, 10, "the target to hold")
        jw = start_jankwatch(["-p", str(target.pid), *args, "--set", "ignore_startup_time=3",
                              "--all", "--log-dir", logs.path])
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        os.kill(target.pid, signal.SIGUSR1)
        rc = jw.wait(60)
    finally:
        target.kill()
    check(rc == 0, f"{args}: jankwatch exits 0 (got {rc}): {jw.err}")
    events = json_lines(jw)
    with open(os.path.join(logs.path, "stats.csv")) as f:
        rows = list(csv.DictReader(f))
    tasks = target_tasks(target)
    return logs, events, tasks, rows


# (a) A task per item.
logs, events, tasks, rows = watch(["--probe", f"{TARGET}:dispatch"])
check(len(events) == 8, f"(a) an event for each of the 8 tasks (got {len(events)})")
seen = {1: 0, 2: 0}
for ev in events:
    mine = task_of(ev, tasks, "(a) the event matches one task of the target")
    own = own_ms(mine)
    second = mine.n % 2 == 0
    seen[2 if second else 1] += 1
    check(ev["delay_ms"] is not None, f"(a) task {mine.n}: delay_ms is known")
    if second:
        check(abs(ev["delay_ms"] - own) <= 0.05 * own + 3 and own >= ITEM_MS * 0.95,
              f"(a) task {mine.n}, behind the first: delay_ms {ev['delay_ms']} is the target's "
              f"own {own:.3f} within 5% + 3 ms")
    else:
        check(0 <= ev["delay_ms"] <= own + 1,
              f"(a) task {mine.n}, first after the wakeup: delay_ms {ev['delay_ms']} at most the "
              f"target's own {own:.3f} (+1)")
    text = open(ev["external_log"][0]).read()
    check(abs(float(header(text)["delay_ms"]) - ev["delay_ms"]) < 0.001,
          f"(a) task {mine.n}: the stack log's header says delay_ms {ev['delay_ms']}")
check(seen[1] == 4 and seen[2] == 4, f"(a) first and second items all reported: {seen}")
row = [r for r in rows if r["message_name"] == "dispatch"]
check(len(row) == 1, f"(a) one dispatch row in stats.csv: {rows}")
row = row[0]
recorded, delays = int(row["recorded_message_count"]), int(row["recorded_delay_message_count"])
check(recorded == 8 and delays == 8, f"(a) a delay for each of the 8 tasks: {delays} of {recorded}")
top = max(own_ms(t) for t in tasks)
check(abs(int(row["max_delay_millis"]) - top) <= 0.05 * top + 3,
      f"(a) max_delay_millis {row['max_delay_millis']} is the target's largest, {top:.1f}")
check(int(row["total_delay_millis"]) >= 0.95 * sum(own_ms(t) for t in tasks if t.n % 2 == 0),
      f"(a) total_delay_millis {row['total_delay_millis']} holds the second items' waits")
logs.cleanup()

# (b) A task per iteration.
logs, events, tasks, rows = watch(["--loop", "syscall"])
slow = [e for e in events if e["wall_ms"] >= 1.9 * ITEM_MS]
check(len(slow) == 4, f"(b) the 4 iterations of two items reported ({len(events)} events)")
for ev in slow:
    mine = task_of(ev, tasks, "(b) the iteration begins with one task of the target")
    check(mine.n % 2 == 1, f"(b) the iteration begins with a first item (task {mine.n})")
    check(ev["delay_ms"] is not None and 0 <= ev["delay_ms"] <= own_ms(mine) + 1,
          f"(b) delay_ms {ev['delay_ms']} at most what the first item waited, "
          f"{own_ms(mine):.3f} (+1)")
row = [r for r in rows if r["handler_class"] == "syscall"]
check(len(row) == 1 and int(row[0]["recorded_delay_message_count"]) >= 4 and
      int(row[0]["max_delay_millis"]) < ITEM_MS / 2,
      f"(b) the syscall row counts delays, all short: {row}")
logs.cleanup()
print("PASS")
