# SPDX-License-Identifier: GPL-2.0-only
"""A program of jankwatch's interrupted on its thread by another of its own leaves the task's
figures whole. The sampler's program runs from its timer's interrupt, and may run inside a
uprobe's program on the same thread (since 6.0 those run outside the count that keeps one
perf event program from running inside another). Both may take the thread's switch back in
(sched_hooks=1: no program sees it; the first to run after does): taken twice, the time off the
CPU read 0 after the other's catch-up, and the task got the whole clock since boot as blocked or
run-queue time (seen: runq_ms 150378 of a 300 ms python task in the x86-64 6.12 VM; 182 events of
894 with the naps below, before the catch-up claimed the time before counting it).

jw_target --naps 40: each task sleeps 40 naps of 50 us, each in a dispatch() nested in the
task's, whose return probe runs right after the switch back in; the sampler fires every 1 ms.
Every event's run-queue and blocked time within its wall time, and the naps' sleep seen."""
from jwtest import *

require_bpf()
SECONDS = 15
logs = LogDir()
target = start_target("--naps", "40", "--ms", "2", "--every", "10")
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    rc, events, err = run_jankwatch(
        ["-p", str(target.pid), "--probe", f"{TARGET}:dispatch", "--set", "ignore_startup_time=3",
         "--set", "threshold_ms=1", "--set", "sample_period_ms=1", "--all", "--duration",
         str(SECONDS), "--log-dir", logs.path], SECONDS + 60)
finally:
    target.kill()
check(rc == 0, f"jankwatch exits 0 (got {rc})")
tasks = target_tasks(target)
# ~60 tasks a second of ~6 ms each (40 naps of 50 us and their timers' slack); under emulation
# fewer.
check(len(events) >= 5 * SECONDS, f"at least {5 * SECONDS} events (got {len(events)})")
over = [ev for ev in events if ev["runq_ms"] + ev["blocked_ms"] > ev["wall_ms"] + 0.002]
check(not over, f"no event's run-queue and blocked time past its wall time ({len(over)} of "
      f"{len(events)}" + (f"; the first: wall_ms {over[0]['wall_ms']}, runq_ms "
                          f"{over[0]['runq_ms']}, blocked_ms {over[0]['blocked_ms']})" if over
                          else ")"))
# The naps sleep most of each task by the program's own clock (its task less what it ran and
# waited for a CPU): the events see that sleep, summed over them (a nap's switch hidden by the
# kernel, split_hidden(), moves little of it).
own_wall = sum(t.dur_ns for t in tasks) / 1e6
own_slept = sum(t.dur_ns - t.cpu_ns - t.waited_ns for t in tasks) / 1e6
wall = sum(ev["wall_ms"] for ev in events)
blocked = sum(ev["blocked_ms"] for ev in events)
check(own_wall > 0 and wall > 0 and blocked / wall >= 0.8 * own_slept / own_wall,
      f"the events' blocked time {blocked:.1f} ms of {wall:.1f} at least 80% of the share the "
      f"program slept by its own clock ({own_slept:.1f} ms of {own_wall:.1f})")
logs.cleanup()
print("PASS")
