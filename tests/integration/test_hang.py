# SPDX-License-Identifier: GPL-2.0-only
"""A task stuck past hang_ms (6 s by default) gets a MAIN_THREAD_HANG event while it still runs,
about hang_ms after its start (checked every sample_interval), with the stacks so far: where it
sleeps, from the stack it went to sleep with, or where it spins. When the task ends it gets its
MAIN_THREAD_JANK event as usual, wall_ms within 5% of what the program measured itself."""
from jwtest import *

require_bpf()


def check_hang(kind, task_ms, hang_ms, extra, frame):
    logs = LogDir()
    # One task, 500 ms after the target is let go: once jankwatch is ready and the target is past
    # ignore_startup_time, however long that takes (a slow emulated VM).
    target = start_target(f"--{kind}", "--ms", str(task_ms), "--every", "500", "--count", "1",
                          "--hold")
    try:
        wait_for(lambda: "hold" in target.out, 10, "the target to hold")
        jw = start_jankwatch(["-p", str(target.pid), "--set", "ignore_startup_time=3",
                              "--log-dir", logs.path, "--all", *extra])
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        os.kill(target.pid, signal.SIGUSR1)
        rc = jw.wait(task_ms / 1000 + 20)
    finally:
        target.kill()
    check(rc == 0, f"{kind}: jankwatch exits 0 when the target is gone ({rc})")
    events = [json.loads(l) for l in jw.out if l.startswith("{")]
    tasks = target_tasks(target)
    hangs = [e for e in events if e["event"] == "MAIN_THREAD_HANG"]
    janks = [e for e in events if e["event"] == "MAIN_THREAD_JANK"]
    if len(hangs) != 1 or len(janks) != 1:
        print("\n".join(jw.err))
    check(len(hangs) == 1 and len(janks) == 1,
          f"{kind}: one hang and one jank event ({[e['event'] for e in events]})")
    hang, jank = hangs[0], janks[0]
    check(events.index(hang) < events.index(jank), f"{kind}: the hang comes first")
    if hang["begin_time"] != jank["begin_time"]:
        print("\n".join(jw.err))
        print("\n".join(l for l in jw.out if l.startswith("{")))
        print("\n".join(target.out))
    check(hang["begin_time"] == jank["begin_time"],
          f"{kind}: both are the same task (begun {hang['begin_time']} and {jank['begin_time']})")
    mine = task_of(jank, tasks, f"{kind}: the events match one task of the program")
    end_ms = mono_to_epoch_ms(mine.begin_ns + mine.dur_ns)
    # Raised once the task had run hang_ms, within a few checks (sample_interval, 150 ms).
    late = hang["time"] - hang["begin_time"] - hang_ms
    check(0 <= late <= 600, f"{kind}: raised {late} ms after hang_ms, within 600 ms")
    check(hang["time"] < end_ms - 500, f"{kind}: raised while the task still ran")
    check(abs(hang["wall_ms"] - (hang["end_time"] - hang["begin_time"])) <= 2,
          f"{kind}: the hang's wall_ms {hang['wall_ms']} is the time so far")
    check(hang["heaviest_stack"] and frame in hang["heaviest_stack"] and
          "dispatch" in hang["heaviest_stack"],
          f"{kind}: the stacks so far show {frame} under dispatch ({hang['heaviest_stack']})")
    check(len(hang["external_log"]) == 1 and os.path.exists(hang["external_log"][0]),
          f"{kind}: the hang has its stack log")
    own_ms = mine.dur_ns / 1e6
    check(matches_own(jank, own_ms),
          f"{kind}: the jank's wall_ms {jank['wall_ms']} within 5% of the program's {own_ms:.0f}")
    check(any("a task has been running for" in l for l in jw.err), f"{kind}: said on stderr")
    logs.cleanup()


# Defaults: hang_ms 6000; the task sleeps 8 s.
check_hang("sleep", 8000, 6000, [], "sleep_work")
# A task that spins, with hang_ms lowered.
check_hang("busy", 4000, 2500, ["--set", "hang_ms=2500"], "busy_work")
print("PASS")
