# SPDX-License-Identifier: GPL-2.0-only
"""`jankwatch -- CMD` starts the program held before exec, attaches, then lets it run: its janks
are reported from its first task, and jankwatch exits with the program's status. --user runs it
as another user with that user's groups only. The program does not outlive jankwatch. A program
that cannot run: one line, exit 1."""
import subprocess

from jwtest import *

require_bpf()
logs = LogDir()
python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"
script = os.path.join(os.environ.get("JW_SRC", "."), "tests/targets/asyncio_busy.py")
p = subprocess.run([JW_BIN, "--set", "ignore_startup_time=3", "--all", "--log-dir", logs.path,
                    "--", python, script, "--ms", "300", "--every", "400", "--count", "12",
                    "--exit", "3", "--from-wait"], capture_output=True, text=True, timeout=120)
check(p.returncode == 3, f"jankwatch exits with the program's status 3 ({p.returncode})")
events = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
tasks = [TargetTask(l) for l in p.stdout.splitlines() if l.startswith("task ")]
check(len(tasks) == 12, f"the program ran its 12 tasks ({len(tasks)})")
check(events, "events")
# The startup window, from the process's start (the events' app_start_jiffies_time, on the boot
# clock, to the monotonic one the program prints): every task begun past the 3 s has its
# event, none before them (the start is known to a clock tick: 20 ms either way is left out).
boot_off = time.clock_gettime(time.CLOCK_BOOTTIME) - time.clock_gettime(time.CLOCK_MONOTONIC)
start = events[0]["app_start_jiffies_time"] / os.sysconf("SC_CLK_TCK") - boot_off
reported = {task_of(ev, tasks, "each event is a task of the program").n for ev in events}
late = {t.n for t in tasks if t.begin_ns / 1e9 - start >= 3.02}
early = {t.n for t in tasks if t.begin_ns / 1e9 - start < 2.98}
check(late and late <= reported and not early & reported,
      f"an event for every task past the startup window {sorted(late)}, none before it "
      f"(reported: {sorted(reported)})")
for ev in events:
    mine = task_of(ev, tasks, "each event is a task of the program")
    own_ms = mine.dur_ns / 1e6
    if mine.n == len(tasks):
        # The loop stops after its last task, and the exit ends it (CI: 31 ms more than the
        # program's own, and 15 ms with --from-wait, each time the last task's).
        check(ended_by_exit(ev, own_ms), f"the last task, ended by the exit, {ev['wall_ms']} ms "
              f"for the program's own {own_ms:.1f}")
        continue
    # Wait to wait, as the program times it (--from-wait): the loop's own work around the
    # callback is in both, a garbage collection in the poll after its wait returned in
    # jankwatch's alone.
    check(matches_own(ev, own_ms, before_ms=mine.gc_ns / 1e6),
          f"wall_ms {ev['wall_ms']} (runq {ev['runq_ms']}) within 5% of "
          f"{own_figures(mine, ev)}")
    check(ev["bundle_name"].startswith("python3"), f"named as the program ({ev['bundle_name']})")
check(any("started" in l for l in p.stderr.splitlines()), "it says it started the program")

p = subprocess.run([JW_BIN, "-q", "--user", "nobody", "--log-dir", logs.path, "--",
                    "/usr/bin/id"], capture_output=True, text=True, timeout=60)
check(p.returncode == 0 and "uid=65534(nobody)" in p.stdout and "groups=65534" in p.stdout
      and "groups=0" not in p.stdout and ",0(" not in p.stdout,
      f"--user nobody: the program runs as nobody, no root group ({p.stdout.strip()})")

# jankwatch keeps its own memory out of transparent huge pages (khugepaged, at nice 19, held its
# memory map 1-2 s beside a spinning loop on one CPU); the program it starts keeps what
# jankwatch inherited (this test's).
with open("/proc/self/status") as f:
    mine = [l.split()[1] for l in f if l.startswith("THP_enabled:")]
p = subprocess.run([JW_BIN, "-q", "--log-dir", logs.path, "--", "sh", "-c",
                    "grep THP_enabled /proc/$PPID/status /proc/self/status"],
                   capture_output=True, text=True, timeout=60)
said = [l.split()[-1] for l in p.stdout.splitlines()]	# jankwatch's, then the program's
if mine:
    check(p.returncode == 0 and said == ["0", mine[0]],
          f"jankwatch's THP_enabled 0, the program's {mine[0]} as this test's ({p.stdout.strip()})")
else:
    print("note: no THP_enabled in /proc/PID/status on this kernel: not checked")

p = subprocess.run([JW_BIN, "--log-dir", logs.path, "--", "sh", "-c", "exit 7"],
                   capture_output=True, text=True, timeout=60)
check(p.returncode == 7, f"a program's status comes back ({p.returncode})")

# The program lives no longer than jankwatch's watch of it, as the user or not: at --duration's
# end it is sent SIGTERM (here it handles it and says so), one that ignores SIGTERM gets SIGKILL
# 2 s later, and jankwatch exits with its own status (0); one whose jankwatch is killed dies
# with it (the parent-death signal, set again after --user's change of uid).
def gone(pid, within_s):
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if proc_state(pid) in (None, "Z", "X"):
            return True
        time.sleep(0.05)
    return False

handles = ("import os, signal, sys, time\n"
           "signal.signal(signal.SIGTERM, lambda *a: (print('TERM', flush=True), sys.exit(5)))\n"
           "print('pid', os.getpid(), flush=True)\ntime.sleep(600)\n")
ignores = ("import os, signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
           "print('pid', os.getpid(), flush=True)\ntime.sleep(600)\n")
for user in ([], ["--user", "nobody"]):
    for prog, sig in ((handles, "SIGTERM"), (ignores, "SIGKILL")):
        p = subprocess.run([JW_BIN, "--duration", "3", "--log-dir", logs.path, *user, "--",
                            python, "-c", prog], capture_output=True, text=True, timeout=60)
        pid = next((int(l.split()[1]) for l in p.stdout.splitlines() if l.startswith("pid ")), 0)
        said = [l for l in p.stderr.splitlines() if "still ran" in l]
        check(p.returncode == 0 and pid and gone(pid, 2) and len(said) == 1 and sig in said[0]
              and (sig != "SIGTERM" or "TERM" in p.stdout.splitlines()),
              f"{user} --duration 3: the program still running is ended by {sig}, jankwatch "
              f"exits 0 (rc {p.returncode}, pid {pid}, {said}, stdout {p.stdout.split()})")

    jw = subprocess.Popen([JW_BIN, "--log-dir", logs.path, *user, "--", "/bin/sleep", "600"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    child = None
    end = time.monotonic() + 30
    while not child and time.monotonic() < end and jw.poll() is None:
        child = next((k for k in children_of(jw.pid)
                      if os.path.realpath(f"/proc/{k}/exe").endswith("/sleep")), None)
        time.sleep(0.05)
    check(child, f"{user}: jankwatch started sleep ({jw.poll()})")
    jw.kill()
    jw.wait()
    check(gone(child, 3), f"{user}: the program dies with a jankwatch killed by SIGKILL")

for argv, what in ((["/nonexistent/prog"], "No such file"),
                   (["--user", "no_such_user_x", "--", "/usr/bin/id"], "no user no_such_user_x in /etc/passwd")):
    full = [JW_BIN, "--log-dir", logs.path, *(argv if argv[0] == "--user" else ["--", *argv])]
    p = subprocess.run(full, capture_output=True, text=True, timeout=60)
    err = p.stderr.strip().splitlines()
    check(p.returncode == 1 and len(err) == 1 and what in err[0], f"{argv}: {err}")
logs.cleanup()
print("PASS")
