# SPDX-License-Identifier: GPL-2.0-only
"""Programs started the way they really are: through wrappers that exec again. `jankwatch -- CMD`
where CMD is a two-script shim chain ending in python3.11, `env`, `sh -c 'exec ...'`, and a Python
wrapper calling os.execv: the last program is watched as if started directly (its preset, its
name), every jank of it past the start-up window is reported once with wall_ms within 5% of what it
measured itself from its wait's return to its next wait (asyncio_busy.py --from-wait), its exit
status comes back, and jankwatch does not crash. The same chain under `-p PID` (jankwatch attached
to the first shim, which then execs): watched anew. A command that starts a loop in the background
and exits: the loop is followed to its end, and jankwatch exits with the command's status. A new
program watched while it sits in its first wait (entered before its probes): the task that wait's
end begins is reported too. A process caught by -p between its exec and its loader's mapping of
the C library: its waits are its interpreter's C library's."""
import ctypes
import stat
import subprocess

from jwtest import *

require_bpf()
PY = "/usr/bin/python3.11"
if not os.path.exists(PY):
    fail(f"{PY} is not installed")
APP = os.path.join(os.environ.get("JW_SRC", "."), "tests/targets/asyncio_busy.py")
APP_ARGS = ["--ms", "300", "--every", "700", "--count", "8", "--exit", "3", "--from-wait"]
STARTUP_S = 3

tmp = tempfile.mkdtemp(prefix="jw-shims-")
os.chmod(tmp, 0o755)


def script(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)
    return path


# A version manager's shim: a script that execs another script that execs the interpreter.
inner = script("python3-real", f'#!/bin/sh\nexec {PY} "$@"\n')
shim = script("python3", f'#!/bin/sh\n# a version-manager shim\nexec "{inner}" "$@"\n')
wrapper = script("wrapper.py", f"#!{PY}\nimport os, sys\n"
                 f"os.execv('{PY}', ['python3.11'] + sys.argv[1:])\n")

CHAINS = {
    "shim chain": [shim, APP],
    "env": ["env", "PATH=/usr/bin:/bin", "python3.11", APP],
    "sh -c exec": ["sh", "-c", f'exec python3.11 "$0" "$@"', APP],
    "os.execv wrapper": [wrapper, APP],
}


def boot_to_mono_s():
    return time.clock_gettime(time.CLOCK_BOOTTIME) - time.clock_gettime(time.CLOCK_MONOTONIC)


def check_janks(what, events, tasks):
    """Every event is a task of the program within 5%; every task past the start-up window
    (counted from the process's own start, which exec keeps) has its event."""
    check(len(tasks) == 8, f"{what}: the program ran its 8 tasks ({len(tasks)})")
    check(len(events) >= 1, f"{what}: janks reported ({len(events)})")
    start_s = events[0]["app_start_jiffies_time"] / os.sysconf("SC_CLK_TCK") - boot_to_mono_s()
    for ev in events:
        mine = task_of(ev, tasks, f"{what}: each event is a task of the program")
        own_ms = mine.dur_ns / 1e6
        if mine.n == len(tasks):
            check(ended_by_exit(ev, own_ms),
                  f"{what}: the last task, ended by the exit, {ev['wall_ms']} ms for the "
                  f"program's own {own_ms:.1f}")
            continue
        check(matches_own(ev, own_ms, before_ms=mine.gc_ns / 1e6),
              f"{what}: wall_ms {ev['wall_ms']} (runq {ev['runq_ms']}) within 5% of "
              f"{own_figures(mine, ev)}")
        check(ev["bundle_name"] == "python3.11" and ev["loop"] == "python",
              f"{what}: watched as the last program ({ev['bundle_name']}, loop {ev['loop']})")
        check(ev["handler"].startswith("on_timer "),
              f"{what}: its handler named by the preset ({ev['handler']})")
    late = [t for t in tasks if t.begin_ns / 1e9 - start_s > STARTUP_S + 0.3]
    reported = [t for t in late if any(abs(mono_to_epoch_ms(t.begin_ns) - e["begin_time"]) < 20
                                       for e in events)]
    check(len(late) >= 3 and len(reported) == len(late),
          f"{what}: every task past the start-up window reported ({len(reported)} of "
          f"{len(late)})")


def run_command(what, argv, want_rc):
    """`jankwatch -- ARGV` to its end: checks its status; returns (events, tasks, stderr lines)."""
    logs = LogDir()
    p = subprocess.run([JW_BIN, "--set", f"ignore_startup_time={STARTUP_S}", "--all",
                        "--log-dir", logs.path, "--", *argv],
                       capture_output=True, text=True, timeout=120)
    logs.cleanup()
    if p.returncode != want_rc or os.environ.get("JW_TEST_VERBOSE"):
        print(p.stderr, file=sys.stderr)
    check(p.returncode == want_rc, f"{what}: jankwatch exits with the program's status "
          f"{want_rc} ({p.returncode})")
    return ([json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")],
            [TargetTask(l) for l in p.stdout.splitlines() if l.startswith("task ")],
            p.stderr.splitlines())


def check_loop_janks(what, events, tasks):
    """Every event is a task of jw_target within 5% (what it waited for a CPU allowed for)."""
    for ev in events:
        own = task_of(ev, tasks, f"{what}: each event is a task of the loop")
        check(ev["bundle_name"] == "jw_target" and
              matches_own(ev, own.dur_ns / 1e6, waited_ms=own.waited_ns / 1e6,
                          around_ms=own.around_ms(ev)),
              f"{what}: task {own.n}: wall_ms {ev['wall_ms']} (runq {ev['runq_ms']}) within 5% "
              f"of the loop's own {own.dur_ns / 1e6:.1f}")


try:
    for what, argv in CHAINS.items():
        events, tasks, err = run_command(what, [*argv, *APP_ARGS], 3)
        check_janks(what, events, tasks)
        check(any("runs a loop: watched" in l for l in err),
              f"{what}: it says the last program runs a loop and is watched")
        check(len({e["pid"] for e in events}) == 1, f"{what}: one process throughout")

    # A command that leaves a loop running and exits (a daemon's way): followed until it ends.
    events, tasks, err = run_command(
        "daemon", ["sh", "-c", f"{TARGET} --busy --ms 250 --every 700 --count 8 & exit 4"], 4)
    check(any("still run: following them until they exit" in l for l in err),
          "daemon: it says it follows what the command left running")
    check(len(tasks) == 8 and len(events) >= 3,
          f"daemon: the loop it left ran to its end, its janks reported ({len(events)} of "
          f"{len(tasks)})")
    check_loop_janks("daemon", events, tasks)

    # A new program is watched once it sits in a wait, entered before its probes: the wakeup
    # from that wait still begins its first task (here 4 s later, past the start-up window).
    events, tasks, err = run_command(
        "first wait", ["sh", "-c", f"exec {TARGET} --busy --ms 250 --every 4000 --count 3"], 0)
    check(len(tasks) == 3 and len(events) == 3,
          f"first wait: each of the 3 tasks reported, the first one too ({len(events)})")
    check_loop_janks("first wait", events, tasks)

    # -p on the first shim, held until jankwatch is ready: it execs twice after attaching.
    logs = LogDir()
    go_r, go_w = os.pipe()
    held = script("held.sh", f'#!/bin/sh\nread x <&{go_r}\nexec "{shim}" "$@"\n')
    target = Proc([held, APP, *APP_ARGS], pass_fds=(go_r,))
    os.close(go_r)
    try:
        # Once it is held.sh (the fork's exec done; its loader may still run: see below).
        wait_for(lambda: open(f"/proc/{target.pid}/comm").read().strip() == "held.sh", 10,
                 "the shim to be exec'd")
        jw = start_jankwatch(["-p", str(target.pid), "--set", f"ignore_startup_time={STARTUP_S}",
                              "--all", "--log-dir", logs.path])
        os.write(go_w, b"go\n")
        os.close(go_w)
        rc = target.wait(60)
        check(rc == 3, f"-p: the program ran to its end ({rc})")
        wait_for(lambda: jw.p.poll() is not None, 10, "jankwatch to exit with its target")
        rc = stop_jankwatch(jw)
    finally:
        target.kill()
    check(rc == 0, f"-p: jankwatch exits 0 once its target is gone ({rc})")
    check(any(f"pid {target.pid} (held.sh) exec'd" in l for l in jw.err),
          "-p: it says the process exec'd a new program")
    check_janks("-p", json_lines(jw), target_tasks(target))
    logs.cleanup()

    # -p on a process caught between its exec and its loader's mapping of the C library (held
    # there by ptrace, as a race with a fresh exec can catch one): the waits are the ones its
    # interpreter will map, and its janks are reported once it runs.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    PTRACE_TRACEME, PTRACE_DETACH = 0, 17
    out = tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(out.fileno(), 1)
            libc.ptrace(PTRACE_TRACEME, 0, None, None)
            os.execv(TARGET, [TARGET, "--busy", "--ms", "250", "--every", "700", "--count", "8"])
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, 0)
    try:
        check(os.WIFSTOPPED(status), f"caught at exec: stopped after its exec ({status:#x})")
        with open(f"/proc/{pid}/maps") as f:
            maps = f.read()
        check("libc.so.6" not in maps and "ld-linux" in maps,
              "caught at exec: its loader is mapped, its C library not yet")
        logs = LogDir()
        jw = start_jankwatch(["-p", str(pid), "--set", f"ignore_startup_time={STARTUP_S}",
                              "--all", "--log-dir", logs.path])
        libc.ptrace(PTRACE_DETACH, pid, None, None)
        _, status = os.waitpid(pid, 0)
        rc = stop_jankwatch(jw)
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
    out.seek(0)
    tasks = tasks_of(out.read().decode().splitlines())
    events = json_lines(jw)
    check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and rc == 0,
          f"caught at exec: the program and jankwatch end well ({status:#x}, {rc})")
    check(len(tasks) == 8 and len(events) >= 3,
          f"caught at exec: its janks past the start-up window reported ({len(events)} of "
          f"{len(tasks)})")
    check_loop_janks("caught at exec", events, tasks)
    logs.cleanup()
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("PASS")
