# SPDX-License-Identifier: GPL-2.0-only
"""DWARF unwinding walks a program built without frame pointers: jw_chain's slow task runs in
main -> dispatch -> level1 -> level2 -> level3 -> level4 -> level5, none of which sets up a frame
pointer. jankwatch (default --unwind auto) reports each 300 ms task with wall_ms within 5% of the
target's own figure, and at least 95% of the samples of every stack log hold the whole chain, in
that order of depth. The target also says how much of its figure ran inside dispatch()'s body:
the probes time the call between the two, and what lies outside the body (the probes' traps; in
an emulated VM, its vCPU stopped meanwhile: 22 ms once) is allowed for by that measure. The same
target watched with --unwind fp does not get the chain at all: the check can fail, and it is
DWARF CFI that makes it pass."""
from jwtest import *

CHAIN_BIN = os.path.join(TARGETS, "jw_chain")
CHAIN = ["main", "dispatch", "level1", "level2", "level3", "level4", "level5"]

require_bpf()
logs, fp_logs = LogDir(), LogDir()
target = Proc([CHAIN_BIN, "--ms", "300", "--every", "1000"])
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    watch = ["-p", str(target.pid), "--probe", f"{CHAIN_BIN}:dispatch", "--set",
             "ignore_startup_time=3", "--all"]
    rc, events, err = watch_until(watch + ["--log-dir", logs.path], 3)
    rc_fp, fp_events, fp_err = run_jankwatch(
        watch + ["--unwind", "fp", "--duration", "3", "--log-dir", fp_logs.path], 60)
finally:
    target.kill()
tasks = target_tasks(target)

check(rc == 0, f"jankwatch exits 0 (got {rc})")
check(len(events) >= 3, f"at least 3 events (got {len(events)})")
for ev in events:
    check(ev["pid"] == target.pid and ev["handler"] == "dispatch" and
          ev["bundle_name"] == "jw_chain", "event names pid, handler and jw_chain")
    mine = task_of(ev, tasks, f"event at {ev['begin_time']} matches one task of the target")
    check(matches_own(ev, mine.dur_ns / 1e6, waited_ms=mine.waited_ns / 1e6,
                      body_ms=mine.body_ns / 1e6),
          f"wall_ms {ev['wall_ms']} (runq {ev['runq_ms']}) within 5% of {own_figures(mine, ev)}")
    check(len(ev["external_log"]) == 1, "one stack log per event")

    frames = parse_tree(stack_tree(open(ev["external_log"][0]).read()))
    total = tree_samples(frames)
    check(total == ev["samples"] and total > 0, f"#00 counts sum to the {ev['samples']} samples")
    whole = chain_samples(frames, CHAIN)
    check(whole >= 0.95 * total,
          f"{whole} of {total} samples hold the whole chain main -> ... -> level5")
    check(samples_through(frames, "main") >= 0.95 * total,
          "those stacks go on past main to the thread's first frame")

check(rc_fp == 0, f"jankwatch --unwind fp exits 0 (got {rc_fp})")
check(len(fp_events) >= 1, f"--unwind fp reports the janks too (got {len(fp_events)})")
for ev in fp_events:
    frames = parse_tree(stack_tree(open(ev["external_log"][0]).read()))
    whole = chain_samples(frames, CHAIN)
    check(whole == 0, f"with frame pointers only, {whole} of {tree_samples(frames)} samples hold "
          "the chain (none expected: jw_chain has no frame pointers)")

logs.cleanup()
fp_logs.cleanup()
print("PASS")
