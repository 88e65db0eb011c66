# SPDX-License-Identifier: GPL-2.0-only
"""A task that sleeps, then runs on the CPU (jw_target --mixed: sleep_work a third, busy_work the
rest) has its stack log's samples split as its time: the sleep's record stands for the periods
it slept, each on-CPU sample for the periods it ran. With the stacks' timers one per watched
thread (samplers=0) and one per CPU (samplers=1). A task's first on-CPU sample once stood for the
time since an earlier task's last one (sample_weight.h)."""
from jwtest import *

require_bpf()


def check_run(samplers):
    print(f"samplers={samplers}:")
    logs = LogDir()
    target = start_target("--mixed", "--ms", "300", "--every", "500")
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        # Four janks: the first after the attach, then three whose thread's state an earlier
        # task of the same pattern left behind.
        rc, events, _ = watch_until(["-p", str(target.pid), "--probe", f"{TARGET}:dispatch",
                                     "--set", "ignore_startup_time=3", "--all", "--log-dir",
                                     logs.path, "--set", f"samplers={samplers}"], 4)
    finally:
        target.kill()
    check(rc == 0, f"jankwatch exits 0 (got {rc})")
    events = [e for e in events if e.get("event") == "MAIN_THREAD_JANK"]
    check(len(events) >= 4, f"at least 4 events ({len(events)})")
    for ev in events:
        text = open(ev["external_log"][0]).read()
        frames = parse_tree(stack_tree(text))
        total = tree_samples(frames)
        asleep = samples_through(frames, "sleep_work")
        running = samples_through(frames, "busy_work")
        # The periods it slept against those it ran, by the event's own figures; the samples
        # the log holds are evenly spaced over them, whole ones: within one and a half.
        want = total * ev["blocked_ms"] / (ev["blocked_ms"] + ev["cpu_ms"])
        check(asleep + running >= total - 1 and abs(asleep - want) <= 1.5,
              f"{ev['begin_time']}: {asleep} of {total} samples in sleep_work, {running} in "
              f"busy_work: as its {ev['blocked_ms']} ms asleep and {ev['cpu_ms']} ms on the "
              f"CPU ({want:.1f} asleep)")
    logs.cleanup()


check_run(0)
check_run(1)
print("PASS")
