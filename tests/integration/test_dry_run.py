# SPDX-License-Identifier: GPL-2.0-only
"""--dry-run names what a watch would hook, and hooks nothing: on Debian's redis-server, nginx
(its master, whose workers are watched), python3 running an asyncio loop, a Qt 5 program
(jw_qt5) and a process with no loop (sleep); and redis with --probe. For each, the loop it names is the watch's, and
every uprobe, return probe and uprobe session it says it would attach (file, function, placed
file offset, pid) is one the watch then attaches (its -v "attached ..." lines), none missing,
none more; under strace the dry run loads none of jankwatch's programs (BPF_PROG_LOAD of a name
in bpf/) and makes no perf_event_open() and no bpf() call that attaches (BPF_LINK_CREATE,
BPF_RAW_TRACEPOINT_OPEN, BPF_PROG_ATTACH), where the watch makes them all. Where a watch
would fail (no such process, a --loop the program does not run), the dry run fails the same
way, in one line, exit 1; a program after -- is not started."""
import re

from jwtest import *

require_bpf()

HOOK = re.compile(r"(?:would attach|attached) (.+?) to (\S+?):(\S+) at file offset (0x[0-9a-f]+) "
                  r"\(pid (\d+)\)")
# The waits on uprobes in both: wait_tracepoints=2 measures the machine when a watch starts.
SAME = ["--set", "wait_tracepoints=0"]


def own_program_names():
    """jankwatch's BPF programs' names (as the kernel keeps them: 15 bytes), from bpf/."""
    names = set()
    src = os.path.join(os.environ.get("JW_SRC", "."), "bpf")
    for name in os.listdir(src):
        if not name.endswith((".c", ".h")):
            continue
        lines = open(os.path.join(src, name)).read().splitlines()
        for before, line in zip(lines, lines[1:]):
            m = re.match(r"int (?:BPF_PROG\()?(\w+)\(?", line)
            if m and re.match(r"(SEC|JW_\w+)\(", before):
                names.add(m[1][:15])
    return names


OWN = own_program_names()


# The system calls that hook something: a uprobe or a perf event, a link, a tracepoint.
ATTACHING = re.compile(r"perf_event_open\(|BPF_LINK_CREATE|BPF_RAW_TRACEPOINT_OPEN|"
                       r"BPF_PROG_ATTACH")


def attaching_calls(argv, timeout):
    """Runs @argv under strace (bpf and perf_event_open only): (its result, the calls that
    attach or load one of jankwatch's own programs; the kernel's facilities are probed with
    programs of other names)."""
    trace = tempfile.NamedTemporaryFile(prefix="jw-strace-", delete=False).name
    try:
        got = subprocess.run(["strace", "-f", "-qq", "-e", "trace=bpf,perf_event_open", "-o",
                              trace, *argv], capture_output=True, text=True, timeout=timeout)
        with open(trace) as f:
            calls = [l.strip() for l in f if ATTACHING.search(l) or
                     any(f'prog_name="{n}"' in l for n in OWN)]
    finally:
        os.unlink(trace)
    return got, calls


def hooks(lines):
    return sorted(HOOK.search(l).groups() for l in lines if HOOK.search(l))


def loops_said(lines):
    return sorted(set(re.findall(r"pid (\d+) \([^)]*\): loop (\S+) \(", "\n".join(lines))))


def compare(what, pid, extra=()):
    dry, calls = attaching_calls([JW_BIN, "--dry-run", "-p", str(pid), *SAME, *extra],
                                 60 + LOAD_ALLOWANCE_S)
    check(not calls, f"{what}: the dry run loads none of jankwatch's programs and attaches "
          f"nothing ({calls[:3]})")
    check(dry.returncode == 0, f"{what}: --dry-run exits 0 ({dry.returncode}: {dry.stderr})")
    planned = hooks(dry.stdout.splitlines())
    check(planned, f"{what}: the dry run names hooks:\n{dry.stdout}")
    check("nothing attached" in dry.stdout and "log directory" in dry.stdout and
          "budgets" in dry.stdout and "kernel " in dry.stdout,
          f"{what}: the kernel's plan, the log directory and the budgets said")
    logs = LogDir()
    try:
        rc, _, err = run_jankwatch(["-p", str(pid), "-v", "--duration", "1.5", "--log-dir",
                                    logs.path, *SAME, *extra], 60)
    finally:
        logs.cleanup()
    check(rc == 0, f"{what}: the watch exits 0 ({rc})")
    hooked = hooks(err)
    missing = sorted(set(hooked) - set(planned))
    more = sorted(set(planned) - set(hooked))
    check(not missing and not more and planned == hooked,
          f"{what}: the dry run's {len(planned)} hooks are the watch's {len(hooked)}: not "
          f"planned {missing}, not hooked {more}")
    dry_loops = loops_said(dry.stderr.splitlines())
    check((dry_loops or "--probe" in extra) and dry_loops == loops_said(err),
          f"{what}: the loop named {dry_loops}, the watch's {loops_said(err)}")
    print(f"{what}: {len(planned)} hooks, loop {[l for _, l in dry_loops]}, the same as the "
          f"watch's")
    return dry


def main():
    check(len(OWN) >= 15 and "on_sched_switch" in OWN and "dispatch_sessio" in OWN,
          f"jankwatch's program names read from bpf/ ({sorted(OWN)})")
    redis = Redis()
    try:
        compare("redis-server", redis.pid)
        compare("redis-server --probe call", redis.pid,
                ["--probe", "/usr/bin/redis-server:call"])
        logs = LogDir()
        watch, calls = attaching_calls([JW_BIN, "-p", str(redis.pid), "--duration", "1",
                                        "--log-dir", logs.path, *SAME], 60 + LOAD_ALLOWANCE_S)
        logs.cleanup()
        loads = [c for c in calls if "BPF_PROG_LOAD" in c]
        check(watch.returncode == 0 and len(calls) - len(loads) >= 9 and len(loads) >= 10,
              f"the same strace sees a watch load its programs ({len(loads)}) and attach "
              f"({len(calls) - len(loads)})")
        dry = subprocess.run([JW_BIN, "--dry-run", "-p", str(redis.pid), "--loop", "qt"],
                             capture_output=True, text=True, timeout=60)
        check(dry.returncode == 1 and len(dry.stderr.strip().splitlines()) == 1 and
              "--loop qt" in dry.stderr, f"--loop qt on redis: one line, exit 1 "
              f"({dry.returncode}: {dry.stderr!r})")
    finally:
        redis.kill()

    nginx = Nginx(workers=2)
    try:
        dry = compare("nginx master", nginx.pid)
        check(f"pid {nginx.pid}: a master process" in dry.stdout and
              all(f"\npid {w} (nginx)" in dry.stdout for w in nginx.workers),
              f"nginx: the master said, its workers {nginx.workers} planned")
    finally:
        nginx.kill()

    script = os.path.join(os.environ.get("JW_SRC", "."), "tests/targets/asyncio_busy.py")
    py = Proc(["python3", script, "--ms", "50", "--every", "500"])
    try:
        wait_for(lambda: process_age_s(py.pid) >= 1, 10, "python to run its loop")
        compare("python3 asyncio", py.pid)
    finally:
        py.kill()

    qt = Proc([os.path.join(TARGETS, "jw_qt5"), "--ms", "50", "--every", "1000", "--mode",
               "timer"])
    try:
        wait_for(lambda: process_age_s(qt.pid) >= 1, 10, "jw_qt5 to run its loop")
        compare("jw_qt5", qt.pid)
    finally:
        qt.kill()

    idle = Proc(["sleep", "300"])
    try:
        wait_for(lambda: process_age_s(idle.pid) >= 0.5, 10, "sleep to run")
        compare("sleep (no loop)", idle.pid)
    finally:
        idle.kill()

    dry = subprocess.run([JW_BIN, "--dry-run", "-p", str(absent_pid())], capture_output=True,
                         text=True, timeout=60)
    check(dry.returncode == 1 and len(dry.stderr.strip().splitlines()) == 1 and
          str(absent_pid()) in dry.stderr, f"no such process: one line, exit 1 ({dry.returncode}: "
          f"{dry.stderr!r})")
    marker = f"jw-dry-{os.getpid()}"
    dry = subprocess.run([JW_BIN, "--dry-run", "--", "sh", "-c", f"touch /tmp/{marker}"],
                         capture_output=True, text=True, timeout=60)
    check(dry.returncode == 0 and "not started" in dry.stdout and
          not os.path.exists(f"/tmp/{marker}"),
          f"-- CMD: said, not started ({dry.returncode}: {dry.stdout[-300:]!r})")
    print("ok")


main()
