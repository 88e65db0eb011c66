# SPDX-License-Identifier: GPL-2.0-only
"""python3 asyncio is recognized with no --probe: loop "python", the task bounded by the loop's
waits, and the handler the Python code the loop ran for it, read from the code object of the
frame CPython evaluated: "on_timer FILE:LINE" for a callback, "ticker FILE:LINE" for a coroutine
step. Debian's /usr/bin/python3.11 (the interpreter in the executable) and, where one is
installed, a python3.11 with a shared libpython. wall_ms within 5% of what the program measured
itself between its waits (asyncio_busy.py --from-wait); the stack logs show the Python frames, busy_work under the handler. The first task after attaching is not timed from a wait it did not see return."""
import glob
import subprocess

from jwtest import *

require_bpf()
SCRIPT = os.path.join(os.environ.get("JW_SRC", "."), "tests/targets/asyncio_busy.py")


def def_line(name):
    for i, line in enumerate(open(SCRIPT), 1):
        if line.startswith(f"def {name}(") or line.startswith(f"async def {name}("):
            return i
    fail(f"{name} not in {SCRIPT}")


def check_python(python, extra, handler, where):
    logs = LogDir()
    target = Proc([python, SCRIPT, "--ms", "300", "--every", "600", "--from-wait", *extra])
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        # A task every 900 ms or more (the callback, the timer's 600 ms, the loop's own
        # steps), the first after the attach not seen from its wait.
        rc, events, err = watch_until(["-p", str(target.pid), "--set", "ignore_startup_time=3",
                                       "--all", "--log-dir", logs.path], 3)
    finally:
        target.kill()
    what = f"{python} {' '.join(extra)}"
    check(rc == 0, f"{what}: jankwatch exits 0 ({rc})")
    check(any("loop python (auto: " in l and where in l and "code objects" in l for l in err),
          f"{what}: it says it chose python in {where}, and why")
    tasks = target_tasks(target)
    check(len(events) >= 3, f"{what}: at least 3 events ({len(events)})")
    want = f"{handler} {os.path.realpath(SCRIPT)}:{def_line(handler)}"
    for ev in events:
        check(ev["loop"] == "python" and ev["handler"] == want,
              f"{what}: handler {want} ({ev['loop']}, {ev['handler']})")
        # The task is from the wait's return to the next wait, and so is the program's own
        # (--from-wait): asyncio's own steps around the callback took 13 ms before it and 9 after
        # once under emulation (x86_64 6.1, two VMs on two CPUs), past 5% of the callback's 300.
        # A garbage collection started by the poll's result, after the system call returned,
        # is in the event's task and before the program's (it says how long: gc=).
        mine = task_of(ev, tasks, f"{what}: the event matches one task of the program", 20)
        own_ms = mine.dur_ns / 1e6
        check(matches_own(ev, own_ms, before_ms=mine.gc_ns / 1e6),
              f"{what}: wall_ms {ev['wall_ms']} (runq {ev['runq_ms']}) within 5% of "
              f"{own_figures(mine, ev)}")
        # The stacks in Python's words: the slow function, its file, under the handler.
        stack = [p for p in ev["external_log"] if "/stack-" in p]
        text = open(stack[0]).read() if stack else ""
        busy = f" at busy_work ({os.path.realpath(SCRIPT)}:"
        check(busy in text and f" at {handler} (" in text.split(busy)[0],
              f"{what}: its stack log shows busy_work with its file under {handler}")
    logs.cleanup()


debian = "/usr/bin/python3.11"
if not os.path.exists(debian):
    fail(f"{debian} is missing: scripts/setup.sh installs python3")
check_python(debian, [], "on_timer", debian)
check_python(debian, ["--coro"], "ticker", debian)

# A python3.11 whose interpreter is in a shared libpython (pyenv, a source build), if any.
shared = None
for cand in sorted(glob.glob("/root/.pyenv/versions/3.11*/bin/python3.11") +
                   glob.glob("/usr/local/bin/python3.11") + glob.glob("/opt/*/bin/python3.11")):
    ldd = subprocess.run(["ldd", cand], capture_output=True, text=True).stdout
    if "libpython3.11.so" in ldd:
        shared = cand
        break
if shared:
    check_python(shared, [], "on_timer", "libpython3.11.so")
else:
    print("note: no python3.11 with a shared libpython here; that case was not run")
print("PASS")
