# SPDX-License-Identifier: GPL-2.0-only
"""Nested dispatches (a loop run from inside a task) are one task: the outermost one's wall time,
not split at the inner returns (each level of jw_target's --nest spins half of its time after
its inner dispatch returned, so a task split there would be half or less). Their stacks unwind
through every pending return probe: in pure DWARF mode that needs the real return addresses the
uprobes trampoline hid put back.

Of a 400 ms task the four levels spin 50 (the innermost, first), 50, 100 and 200 ms. The runs
keep every sample (sample_count=40 at sample_interval=50), but under emulation a vCPU the host
holds takes one late sample for all the periods it missed, so a short level can go without one
(CI: a 25 ms level had none, 18 samples of a 200 ms task). Hence: each event's levels are the
outer ones without a gap, at least the three outer (150 ms and more), and all four are seen in
a run; a mismatch prints the tree and the machine's steal time over the run."""
from jwtest import *


def steal_ms():
    """The time the host held this machine's CPUs (all of them), from /proc/stat."""
    with open("/proc/stat") as f:
        ticks = int(f.readline().split()[8])
    return ticks * 1000 / os.sysconf("SC_CLK_TCK")


require_bpf()
target = start_target("--busy", "--ms", "400", "--every", "200", "--nest", "3", "--fast", "7")
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    for mode in ("auto", "dwarf"):
        logs = LogDir()
        stolen = steal_ms()
        rc, events, err = run_jankwatch(
            ["-p", str(target.pid), "--probe", f"{TARGET}:dispatch", "--set",
             "ignore_startup_time=3", "--set", "sample_interval=50", "--set", "sample_count=40",
             "--all", "--duration", "2.5", "--unwind", mode,
             "--log-dir", logs.path], 60)
        stolen = steal_ms() - stolen
        check(rc == 0, f"{mode}: jankwatch exits 0 (got {rc})")
        tasks = target_tasks(target)
        check(len(events) >= 3, f"{mode}: at least 3 events (got {len(events)})")
        seen = set()
        for ev in events:
            mine = task_of(ev, tasks, f"{mode}: each event is one outer task of the target")
            own_ms = mine.dur_ns / 1e6
            check(abs(ev["wall_ms"] - own_ms) <= 0.05 * own_ms,
                  f"{mode}: wall_ms {ev['wall_ms']} is the whole nested task ({own_ms:.3f})")
            tree = stack_tree(open(ev["external_log"][0]).read())
            check(any("(busy_work+" in l for l in tree), f"{mode}: busy_work is in the stacks")
            depths = sorted({int(l.split()[1][1:]) for l in tree if "(dispatch+" in l})
            seen.add(len(depths))
            whole = len(depths) >= 3 and depths == list(range(depths[0], depths[0] + len(depths)))
            if not whole:
                print(json.dumps(ev))
                print("\n".join(tree))
                print(f"steal time over the run: {stolen:.0f} ms")
            check(whole, f"{mode}: the outer nested dispatch frames, at least 3, no gap "
                  f"({depths})")
            check(tree[0].startswith(f"{ev['samples']} #00 ") and "(_start+" in tree[0],
                  f"{mode}: every one of the {ev['samples']} samples reaches _start: {tree[0]}")
        if 4 not in seen:
            print(f"steal time over the run: {stolen:.0f} ms")
        check(4 in seen, f"{mode}: an event holds all four nested dispatch frames ({seen})")
        logs.cleanup()
finally:
    target.kill()
print("PASS")
