# SPDX-License-Identifier: GPL-2.0-only
"""Probe placement on real builds of the test loop: where each probe goes, said on -v, and the
tasks still measured right where it moved.

(a) -fcf-protection=full (jw_target_cet): dispatch() starts with endbr64, which the kernel would
    single-step; the uprobe and the return probe go 4 bytes on, onto push %rbp. The 200 ms tasks
    have wall_ms within 5% of what the program measured, their stacks reach main through
    dispatch, and nested dispatches (--nest 3) are still one task each: the stack pointer there
    is the entry's.
(b) An exit symbol whose endbr64 is followed by a load from memory stays on its entry.
(c) Frame pointers (jw_target): push %rbp is emulated, the probe stays on the entry.
(d) No frame pointers (jw_chain): dispatch() starts with sub $8,%rsp, which moves the stack: the
    probe stays on the entry.
(e) No frame pointers, shrink-wrapped (jw_target_nofp --queue): run_queued() starts with a load
    and a test of its argument, then the branch of its early return; the probes go onto that
    branch, and the tasks are measured and unwound (DWARF) as on the entry.
"""
from jwtest import *

CET = os.path.join(TARGETS, "jw_target_cet")
CHAIN = os.path.join(TARGETS, "jw_chain")
NOFP = os.path.join(TARGETS, "jw_target_nofp")


def placed(err, path, func):
    """The -v lines saying where the probes on @path:@func went."""
    name = re.escape(os.path.basename(path))
    return [l for l in err
            if re.search(rf"(uprobe|uprobe session|return probe) on \S*/{name}:{func}: ", l)]


def watch(binary, probe, args, seconds=5):
    target = Proc([binary, *args])
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        rc, events, err = run_jankwatch(["-v", "-p", str(target.pid), "--probe", probe, "--set",
                                         "ignore_startup_time=3", "--all", "--duration",
                                         str(seconds), "--log-dir", logs.path], 60)
    finally:
        target.kill()
    check(rc == 0, f"jankwatch exits 0 on {os.path.basename(binary)} (got {rc})")
    return events, err, target_tasks(target)


require_bpf()
logs = LogDir()
try:
    # (a) and (b): endbr64 first.
    for nest in ("0", "3"):
        events, err, tasks = watch(CET, f"{CET}:dispatch:after_dispatch",
                                   ["--busy", "--ms", "200", "--every", "700", "--nest", nest])
        where = placed(err, CET, "dispatch")
        check(len(where) == 1 and "+4: past endbr64 to push %rbp, which is emulated" in where[0],
              f"(a) --nest {nest}: the dispatch uprobe moves past endbr64 onto push %rbp "
              f"({where})")
        stay = placed(err, CET, "after_dispatch")
        check(len(stay) == 1 and "on the entry: endbr64 is single-stepped" in stay[0],
              f"(b) the exit symbol's probe stays on its entry ({stay})")
        check(len(events) >= 4, f"(a) --nest {nest}: at least 4 janks in 5 s ({len(events)})")
        for ev in events:
            own_ms = task_of(ev, tasks, f"(a) --nest {nest}: the event matches one task "
                             "of the program").dur_ns / 1e6
            check(matches_own(ev, own_ms), f"(a) wall_ms {ev['wall_ms']} within 5% of the "
                  f"program's own {own_ms:.3f}")
        text = open(events[0]["external_log"][0]).read()
        check("(dispatch+" in text and "(main+" in text and "(busy_work+" in text,
              f"(a) --nest {nest}: the stacks reach main through dispatch")

    # (c) Frame pointers: push %rbp first.
    events, err, tasks = watch(TARGET, f"{TARGET}:dispatch",
                               ["--busy", "--ms", "200", "--every", "1000"], 4)
    where = placed(err, TARGET, "dispatch")
    check(where and all("on the entry: push %rbp is emulated" in l for l in where),
          f"(c) frame pointers: on the entry, push %rbp is emulated ({where})")

    # (d) No frame pointers: sub $8,%rsp first.
    events, err, tasks = watch(CHAIN, f"{CHAIN}:dispatch", ["--ms", "200", "--every", "1000"], 4)
    where = placed(err, CHAIN, "dispatch")
    check(where and all("on the entry:" in l and "single-stepped" in l for l in where),
          f"(d) no frame pointers: the probe stays on the entry ({where})")
    check(len(events) >= 2, f"(d) and the janks are still reported ({len(events)})")

    # (e) No frame pointers, shrink-wrapped: a load, a test, then the early return's branch.
    events, err, tasks = watch(NOFP, f"{NOFP}:run_queued",
                               ["--queue", "--busy", "--ms", "200", "--every", "700"])
    where = placed(err, NOFP, "run_queued")
    # One line for a uprobe session (entry and return), two for a uprobe and a return probe.
    pieces = 1 if where and "uprobe session on" in where[0] else 2
    check(len(where) == pieces and all(re.search(r": \+4: past mov mem,%rax and what follows "
                                                 r"to jcc, which is emulated", l) for l in where),
          f"(e) the uprobe and the return probe move past the load and the test onto the "
          f"branch ({where})")
    check(len(events) >= 4, f"(e) at least 4 janks in 5 s ({len(events)})")
    for ev in events:
        own_ms = task_of(ev, tasks, "(e) the event matches one task of the program").dur_ns / 1e6
        check(matches_own(ev, own_ms), f"(e) wall_ms {ev['wall_ms']} within 5% of the "
              f"program's own {own_ms:.3f}")
    text = open(events[0]["external_log"][0]).read()
    check("(run_queued+" in text and "(main+" in text and "(busy_work+" in text,
          f"(e) the stacks reach main through run_queued")
finally:
    logs.cleanup()
