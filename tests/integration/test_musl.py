# SPDX-License-Identifier: GPL-2.0-only
"""Programs linked with musl instead of glibc (Debian's musl-gcc), watched by this build: syscall
mode finds musl's wait functions in its libc.so (which is also its loader, ld-musl-<arch>.so.1),
or in a statically linked program itself, whether the program runs already (-p) or is started
by jankwatch (-- CMD, held before its exec: found from the interpreter it names, not from
jankwatch's own C library), on uprobes (wait_tracepoints=0), on the tracepoints (1) and as
wait_tracepoints=2 chooses. Each busy 300 ms task is reported within 5% of the program's own
figure, its stack log naming busy_work under dispatch under main (through musl's functions,
which have no CFI, by their prologues); a sleeping task's stack names musl's frames and reaches
main. A program whose wait functions are nowhere to be found is refused in one
line, by -p and by -- CMD: never watched silently."""
import re
import shutil

from jwtest import *

require_bpf()

MUSL = os.path.join(TARGETS, "jw_target_musl")
STATIC = os.path.join(TARGETS, "jw_target_musl_static")
NOFP = os.path.join(TARGETS, "jw_target_musl_nofp")
if not all(os.path.exists(t) for t in (MUSL, STATIC, NOFP)):
    print("SKIP: no musl targets (scripts/setup.sh installs musl-tools)", file=sys.stderr)
    sys.exit(SKIP)
BUSY = ["--busy", "--ms", "300", "--every", "700", "--fast", "5"]


def by_pid(binary, wt, logs, target_args=BUSY):
    """jankwatch -p on a running program (@wt None: wait_tracepoints as jankwatch chooses):
    (rc, events, stderr, the program's tasks)."""
    target = Proc([binary, *target_args])
    chosen = [] if wt is None else ["--set", f"wait_tracepoints={wt}"]
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        rc, events, err = run_jankwatch(
            ["-p", str(target.pid), "--set", "ignore_startup_time=3", *chosen, "--all",
             "--duration", "4", "--log-dir", logs.path], 60)
    finally:
        target.kill()
    return rc, events, err, target_tasks(target)


def by_cmd(binary, wt, logs):
    """jankwatch -- CMD: the program's lines and jankwatch's events share its stdout."""
    jw = Proc([JW_BIN, "--set", "ignore_startup_time=3", "--set", f"wait_tracepoints={wt}",
               "--all", "--duration", "7", "--log-dir", logs.path, "--", binary, *BUSY])
    rc = jw.wait(60)
    if rc != 0 or os.environ.get("JW_TEST_VERBOSE"):
        print("\n".join(jw.err), file=sys.stderr)
    return rc, events_of(jw.out), jw.err, tasks_of(jw.out)


def check_busy(what, binary, rc, events, err, tasks):
    check(rc == 0, f"{what}: jankwatch exits 0 (got {rc})")
    check(len(events) >= 3, f"{what}: at least 3 janks ({len(events)})")
    hooked = [l for l in err if "syscall mode on" in l]
    check(len(hooked) == 1, f"{what}: one line says how the waits are hooked ({hooked})")
    # Where its wait functions were found: musl's libc.so, or the static program itself; never
    # glibc's libc.so.6 (jankwatch's own, which a program held before its exec has not mapped).
    where = [l for l in err if "wait functions in" in l]
    want = os.path.realpath(binary) if binary == STATIC else "-musl/libc.so"
    check(len(where) == 1 and want in where[0] and "libc.so.6" not in where[0],
          f"{what}: its wait functions are musl's ({where})")
    for ev in events:
        check(ev["loop"] == "syscall" and ev["handler"] == "syscall",
              f"{what}: loop and handler are syscall")
        mine = task_of(ev, tasks, f"{what}: the event matches one task of the program")
        own_ms = mine.dur_ns / 1e6
        check(matches_own(ev, own_ms, around_ms=mine.around_ms(ev)),
              f"{what}: wall_ms {ev['wall_ms']} (runq {ev['runq_ms']}) within 5% of "
              f"{own_figures(mine, ev)}")
        frames = parse_tree(stack_tree(open(ev["external_log"][0]).read()))
        names = {f.symbol for f in frames}
        check({"busy_work", "dispatch", "main"} <= names,
              f"{what}: the stack log names busy_work, dispatch and main "
              f"({sorted(map(str, names))})")
        busy = [f for f in frames if f.symbol == "busy_work"]
        check(all(any(a.symbol == "main" for a in f.ancestors()) for f in busy),
              f"{what}: busy_work sits under main")
        check("busy_work" in ev["heaviest_stack"], f"{what}: heaviest {ev['heaviest_stack']}")


for binary in (MUSL, STATIC):
    name = os.path.basename(binary)
    for wt in (2, 0, 1):
        for how, run in (("-p", by_pid), ("-- CMD", by_cmd)):
            logs = LogDir()
            check_busy(f"{name} by {how}, wait_tracepoints={wt}", binary,
                       *run(binary, wt, logs))
            logs.cleanup()

# No hook on the waits (wait_tracepoints=3): the switches alone see a static C library's waits
# as any other's.
logs = LogDir()
check_busy("jw_target_static by -p, wait_tracepoints=3", STATIC, *by_pid(STATIC, 3, logs))
logs.cleanup()

# An epoll loop: musl's epoll_wait is a jump into epoll_pwait, whose probe alone sees the wait
# (probes on both would see each wait entered twice and returned twice, the second return closing
# a task that never was: every task counted twice, half of them "exits lost").
logs = LogDir()
check_busy("jw_target_musl --epoll, wait_tracepoints=0", MUSL,
           *by_pid(MUSL, 0, logs, [*BUSY, "--epoll"]))
with open(os.path.join(logs.path, "stats.csv")) as f:
    rows = [r for r in csv.DictReader(f) if r["handler_class"] == "syscall"]
check(len(rows) == 1 and int(rows[0]["message_count"]) > 100 and
      rows[0]["exception_count"] == "0",
      f"epoll: one syscall row, every task closed at a wait ({rows})")
logs.cleanup()

# A program without frame pointers spending its tasks in musl's printf (jw_target --format):
# the functions under snprintf have neither a symbol nor CFI in musl's libc.so; their entries come
# from the library's calls (and the callbacks it takes), loops and jump tables from the frames the
# code had at its branches, checked by the return address they give: every sample reaches main.
logs = LogDir()
rc, events, err, _ = by_pid(NOFP, None, logs, [*BUSY, "--format"])
check(rc == 0 and len(events) >= 3, f"format: jankwatch exits 0 with 3 janks ({rc}, {len(events)})")
unnamed = 0
for ev in events:
    text = open(ev["external_log"][0]).read()
    frames = parse_tree(stack_tree(text))
    through_main = sum(f.count for f in frames if f.symbol == "main")
    check(through_main == tree_samples(frames),
          f"format: each sample's stack reaches main ({through_main} of {tree_samples(frames)}):"
          f"\n{text}")
    check("format_work" in {f.symbol for f in frames}, "format: the stack log names format_work")
    # musl's frames with no name, under its named vfprintf: its static printf_core and the like.
    unnamed += sum(f.count for f in frames if f.symbol is None and f.parent and
                   f.parent.symbol == "vfprintf")
check(unnamed > 0, f"format: samples in musl's unnamed functions, unwound ({unnamed})")
logs.cleanup()

# A sleeping task: musl's own functions are named in its stack (nanosleep is its libc.so's).
logs = LogDir()
rc, events, err, tasks = by_pid(MUSL, None, logs, ["--sleep", "--ms", "300", "--every", "600"])
check(rc == 0 and len(events) >= 3, f"sleep: jankwatch exits 0 with 3 janks ({rc}, {len(events)})")
for ev in events:
    mine = task_of(ev, tasks, "sleep: the event matches one task of the program")
    check(matches_own(ev, mine.dur_ns / 1e6, around_ms=mine.around_ms(ev)),
          f"sleep: wall_ms {ev['wall_ms']} within 5% of {own_figures(mine, ev)}")
    # A switch the kernel kept from tracing leaves an off-CPU period uncounted: the event says
    # so (offcpu_partial), and only then may its cause be other than blocked.
    check(ev["cause"] == "blocked" or ev.get("offcpu_partial"),
          f"sleep: cause blocked, or a switch unseen said so ({json.dumps(ev)})")
    frames = parse_tree(stack_tree(open(ev["external_log"][0]).read()))
    # musl's libc.so has symbols for its exported functions only, and CFI for a few assembly
    # ones: its frames are named by them (the one that calls main is hidden: unnamed), and the
    # unwinding goes on from its frames by their prologues, or by the frame pointer chain (which
    # skips the function that called into the C library).
    musl = [f for f in frames if re.match(r"/\S*/(libc\.so|ld-musl-[^(/]+)\(", f.rest)]
    inner = max(musl, key=lambda f: f.depth) if musl else None
    check(inner and inner.symbol,
          f"sleep: the frame in musl's libc.so the thread slept in is named "
          f"({[f.rest for f in musl]})")
    check({"dispatch", "main"} <= {f.symbol for f in frames},
          "sleep: the stack names dispatch and main")
logs.cleanup()

# A static program stripped of its symbols: no wait function can be found. Refused, in one line.
scratch = LogDir()
stripped = os.path.join(scratch.path, "jw_target_musl_stripped")
shutil.copy(STATIC, stripped)
subprocess.run(["strip", "--strip-all", stripped], check=True)
target = Proc([stripped, *BUSY])
try:
    rc, events, err = run_jankwatch(["-p", str(target.pid), "--duration", "2", "--log-dir",
                                     scratch.path], 60)
finally:
    target.kill()
said = [l for l in err if "no wait function" in l]
check(rc != 0 and not events and len(said) == 1,
      f"stripped static, -p: refused in one line (rc {rc}, {said})")
jw = Proc([JW_BIN, "--duration", "2", "--log-dir", scratch.path, "--", stripped, *BUSY])
rc = jw.wait(60)
said = [l for l in jw.err if "no wait function" in l]
check(rc != 0 and not tasks_of(jw.out) and len(said) == 1,
      f"stripped static, -- CMD: refused in one line, the program never run ({rc}, {jw.err})")
scratch.cleanup()
print("PASS")
