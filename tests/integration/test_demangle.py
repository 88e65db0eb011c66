# SPDX-License-Identifier: GPL-2.0-only
"""C++ frames are shown demangled: jw_cxx's slow task spins in app::Job::run() const, called by
app::Loop<app::Job>::dispatch(app::Job const&). Watched in syscall mode (no --probe), each
300 ms task is reported within 5% of the program's own figure; its event's heaviest_stack and
group, its stack log (tree and folded) name both methods as C++ reads them, and no mangled
name (_Z...) is left anywhere; hooked by its mangled name (--probe BIN:_ZN...), the handler in
the events and the statistics reads as C++ too."""
from jwtest import *

CXX = os.path.join(TARGETS, "jw_cxx")
RUN = "app::Job::run() const"
DISPATCH = "app::Loop<app::Job>::dispatch(app::Job const&)"

require_bpf()


def watch(extra):
    logs = LogDir()
    target = Proc([CXX, "--ms", "300", "--every", "700"])
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        rc, events, _ = run_jankwatch(["-p", str(target.pid), "--set", "ignore_startup_time=3",
                                       "--all", "--duration", "3", "--log-dir", logs.path,
                                       *extra], 60)
    finally:
        target.kill()
    check(rc == 0, f"jankwatch exits 0 (got {rc})")
    check(len(events) >= 2, f"at least 2 events in 3 s (got {len(events)})")
    return logs, events, target_tasks(target)


logs, events, tasks = watch([])
for ev in events:
    mine = task_of(ev, tasks, f"event at {ev['begin_time']} matches one task of the program")
    check(matches_own(ev, mine.dur_ns / 1e6),
          f"wall_ms {ev['wall_ms']} within 5% of the program's own {mine.dur_ns / 1e6:.3f}")
    check(f"{RUN}<-{DISPATCH}<-main<-" in ev["heaviest_stack"],
          f"heaviest_stack names the methods demangled ({ev['heaviest_stack']})")
    check("_Z" not in ev["group"] and RUN in ev["group"], f"so does the group ({ev['group']})")
    text = open(ev["external_log"][0]).read()
    frames = parse_tree(stack_tree(text))
    check(chain_samples(frames, ["main", DISPATCH, RUN]) >= 0.9 * tree_samples(frames),
          "the stack log's samples run main -> dispatch -> run, demangled")
    check("_Z" not in text, "no mangled name in the stack log")
logs.cleanup()

logs, events, _ = watch(["--format", "folded"])
text = open(events[0]["external_log"][0]).read()
lines = [l for l in text.splitlines() if l.count(";") >= 2]
check(any(f";main;{DISPATCH};{RUN}" in l for l in lines) and "_Z" not in text,
      f"folded lines name them too ({lines[:1]})")
logs.cleanup()

# Hooked by its mangled name: the handler, in the events and the statistics, reads as C++.
logs, events, _ = watch(["--probe", f"{CXX}:_ZN3app4LoopINS_3JobEE8dispatchERKS1_"])
check(all(e["handler"] == DISPATCH for e in events),
      f"--probe BIN:_ZN...: the events' handler is {DISPATCH} ({[e['handler'] for e in events]})")
stats = logs.read("stats.csv")
check(DISPATCH in stats and "_Z" not in stats, f"so are the statistics' rows ({stats!r})")
logs.cleanup()
print("PASS")
