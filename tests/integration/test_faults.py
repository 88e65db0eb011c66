# SPDX-License-Identifier: GPL-2.0-only
"""Faults while watching: what survives, and that nothing is lost without being counted.

(a) jankwatch gets SIGKILL: none of its BPF programs, and no perf event link of them, is left
    in the kernel (they are held by its file descriptors), and the target runs on.
(b) The log directory's disk fills (a 16 KiB tmpfs): every jank still gets its event line on
    stdout, the files that did not fit are counted as failed writes in the summary, and
    jankwatch exits 0.
(c) The target forks a child that runs the same loop: the parent's janks are still reported,
    the child's are not (it was not asked for), and nothing else is.
(d) The ring buffer overflows: jankwatch is stopped (SIGSTOP) for 3 s while the target janks
    nearly all the time with 64 KiB stack copies every 10 ms (about 16 MiB for an 8 MiB buffer); once it runs again the lost samples are counted in the
    events ("dropped") and the summary, and the janks after it are reported whole.
(e) The watched thread exits while the process sleeps on: jankwatch says so and exits by itself,
    the thread's last jank ended by its exit.
(f) The target execs a new program: jankwatch says so and hooks the new program, whose janks
    match what it measured itself.
(g) A watched process exits and a new one gets its pid: nothing of the newcomer is reported.
(h) Two jankwatch instances on one target: the second says so, both report every jank.
(i) The target execs while jankwatch is still attaching to what it was: said the same way, the
    new program watched.
"""
import json
import subprocess

from jwtest import *

OURS = {"dispatch_enter", "dispatch_exit", "on_sample", "on_sched_switch", "on_sched_waking",
        "wait_return", "wait_enter", "on_exec", "on_exit"}


def progs():
    out = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True, text=True,
                         check=True).stdout
    return {p["id"] for p in json.loads(out) if p.get("name") in OURS}


def links_to(ids):
    out = subprocess.run(["bpftool", "link", "show", "-j"], capture_output=True, text=True,
                         check=True).stdout
    return [l for l in json.loads(out) if l.get("prog_id") in ids]


SPAWNED = []


def spawn(proc):
    """Keeps @proc to be killed at the end, whatever check fails first."""
    SPAWNED.append(proc)
    return proc


require_bpf()
if not shutil.which("bpftool"):
    fail("bpftool is missing: scripts/setup.sh installs it")
logs = LogDir()
target = spawn(start_target("--busy", "--ms", "200", "--every", "700"))
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")

    # (a) SIGKILL.
    before = progs()
    jw = start_jankwatch(["-p", str(target.pid), "--probe", f"{TARGET}:dispatch", "--set",
                          "ignore_startup_time=3", "--log-dir", logs.path])
    mine = progs() - before
    check(len(mine) >= 3 and links_to(mine), f"(a) jankwatch's programs are loaded and linked "
          f"({len(mine)} programs, {len(links_to(mine))} links)")
    jw.p.kill()
    jw.wait(10)
    wait_for(lambda: not (progs() & mine) and not links_to(mine), 10,
             "(a) the kernel to drop the programs of a killed jankwatch")
    check(True, "(a) after SIGKILL none of its programs or links is left")
    check(target.p.poll() is None, "(a) the target runs on")

    # (b) A full disk.
    full = tempfile.mkdtemp(prefix="jw-full-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", full], check=True)
    try:
        rc, events, err = run_jankwatch(["-p", str(target.pid), "--probe", f"{TARGET}:dispatch",
                                         "--set", "ignore_startup_time=3", "--all",
                                         "--stack-bytes", "65536", "--duration", "6",
                                         "--log-dir", full], 60)
        written = [e for e in events if e["external_log"]]
        summary = [l for l in err if "file writes" in l]
        failed = int(re.search(r"(\d+) file writes", summary[0]).group(1)) if summary else 0
        print(f"(b) {len(events)} events, {len(written)} with files, {failed} failed writes")
        check(rc == 0, f"(b) jankwatch exits 0 on a full disk (got {rc})")
        check(len(events) >= 5, f"(b) every jank still has its event line ({len(events)})")
        check(len(written) < len(events) and failed + len(written) >= len(events) - 1,
              f"(b) the files that did not fit are counted: {len(written)} written, {failed} "
              f"failed writes of {len(events)} janks")
    finally:
        subprocess.run(["umount", full], check=False)
        os.rmdir(full)

    # (c) A fork: a select() loop with a 200 ms jank every 0.7 s forks 5 s in; both go on.
    forker = spawn(Proc([sys.executable, "-c", """
import os, select, sys, time
start, forked, n = time.monotonic(), False, 0
while True:
    select.select([], [], [], 0.5)
    begin = time.monotonic_ns()
    while time.monotonic_ns() < begin + 200_000_000:
        pass
    n += 1
    print(f"task {n} {os.getpid()} {begin}", flush=True)
    if not forked and time.monotonic() - start > 5:
        forked = True
        if os.fork() == 0:
            print(f"child {os.getpid()}", flush=True)
"""]))
    wait_for(lambda: process_age_s(forker.pid) >= 3, 10, "the forking target to be 3 s old")
    jw = start_jankwatch(["-p", str(forker.pid), "--set", "ignore_startup_time=3", "--all",
                          "--log-dir", logs.path])
    wait_for(lambda: any(l.startswith("child ") for l in forker.out), 15, "(c) the fork")
    fork_ns = time.monotonic_ns()
    child_pid = int([l for l in forker.out if l.startswith("child ")][0].split()[1])
    time.sleep(3)
    check(stop_jankwatch(jw) == 0, "(c) jankwatch exits 0")
    evs = json_lines(jw)
    after = [e for e in evs if e["begin_time"] >= mono_to_epoch_ms(fork_ns)]
    check(evs and all(e["pid"] == forker.pid for e in evs),
          f"(c) only the watched parent's janks ({len(evs)} events, none of child {child_pid})")
    check(len(after) >= 2, f"(c) the parent's janks after the fork are still reported "
          f"({len(after)})")
    forker.kill()
    try:
        os.kill(child_pid, 9)
    except ProcessLookupError:
        pass
    # (d) A full ring buffer: 300 ms janks 100 ms apart, 64 KiB per sample, 3 s unread.
    target.kill()
    target = spawn(start_target("--busy", "--ms", "300", "--every", "100"))
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    jw = start_jankwatch(["-p", str(target.pid), "--probe", f"{TARGET}:dispatch", "--set",
                          "ignore_startup_time=3", "--all", "--stack-bytes", "65536",
                          "--log-dir", logs.path])
    wait_for(lambda: len(json_lines(jw)) >= 1, 10, "(d) a first jank")
    jw.p.send_signal(signal.SIGSTOP)
    time.sleep(3)
    stopped_until = time.time() * 1000
    jw.p.send_signal(signal.SIGCONT)
    wait_for(lambda: [e for e in json_lines(jw) if e["begin_time"] > stopped_until + 100], 10,
             "(d) a jank after jankwatch ran again")
    time.sleep(1.5)
    check(stop_jankwatch(jw) == 0, "(d) jankwatch exits 0")
    evs = json_lines(jw)
    dropped = sum(e["dropped"] for e in evs)
    summary = [l for l in jw.err if "samples (ring buffer full)" in l]
    lost = int(re.search(r"(\d+) samples \(ring buffer full\)", summary[0]).group(1)) \
        if summary else 0
    check(lost > 0 and dropped > 0, f"(d) the overflow is counted: {lost} samples lost in the "
          f"summary, {dropped} dropped in the events")
    later = [e for e in evs if e["begin_time"] > stopped_until + 100]
    check(later and all(e["dropped"] == 0 and e["samples"] == 10 for e in later),
          f"(d) the janks after it are whole ({[(e['samples'], e['dropped']) for e in later]})")
    # (e) The watched thread exits; the process sleeps on.
    threaded = spawn(Proc([sys.executable, "-c", """
import select, threading, time
def loop():
    print("tid", threading.get_native_id(), flush=True)
    start = time.monotonic()
    while time.monotonic() - start < 6:
        select.select([], [], [], 0.3)
        begin = time.monotonic_ns()
        while time.monotonic_ns() < begin + 200_000_000:
            pass
t = threading.Thread(target=loop)
t.start()
t.join()
print("thread done", flush=True)
time.sleep(60)
"""]))
    wait_for(lambda: any(l.startswith("tid ") for l in threaded.out), 10, "(e) the loop thread")
    tid = int([l for l in threaded.out if l.startswith("tid ")][0].split()[1])
    wait_for(lambda: process_age_s(threaded.pid) >= 3, 10, "(e) the target to be 3 s old")
    rc, evs, err = run_jankwatch(["-p", str(threaded.pid), "--thread", str(tid), "--set",
                                  "ignore_startup_time=3", "--log-dir", logs.path], 30)
    check(rc == 0 and threaded.p.poll() is None, f"(e) jankwatch exits 0 by itself while the "
          f"process lives (rc {rc})")
    check(any(f"its watched thread {tid} exited" in l for l in err),
          "(e) it says the watched thread exited")
    check(evs and all(e["tid"] == tid for e in evs) and
          any(f"thread {tid} exited" in l and "into a task" in l for l in err),
          f"(e) {len(evs)} janks of the thread, the last one ended by its exit")
    threaded.kill()

    # (f) An exec.
    execer = spawn(Proc([sys.executable, "-c", f"""
import os, select, time
start = time.monotonic()
while time.monotonic() - start < 5:
    select.select([], [], [], 0.3)
    begin = time.monotonic_ns()
    while time.monotonic_ns() < begin + 200_000_000:
        pass
os.execv({TARGET!r}, [{TARGET!r}, "--busy", "--ms", "250", "--every", "700"])
"""]))
    wait_for(lambda: process_age_s(execer.pid) >= 3, 10, "(f) the target to be 3 s old")
    jw = start_jankwatch(["-p", str(execer.pid), "--set", "ignore_startup_time=3", "--all",
                          "--log-dir", logs.path])
    wait_for(lambda: len([e for e in json_lines(jw) if e["bundle_name"] == "jw_target"]) >= 3,
             20, "(f) three janks of the new program")
    check(stop_jankwatch(jw) == 0, "(f) jankwatch exits 0")
    check(any(f"pid {execer.pid} (python3" in l and "exec'd jw_target" in l for l in jw.err),
          "(f) it says the process exec'd and hooks the new program")
    evs = json_lines(jw)
    new = [e for e in evs if e["bundle_name"] == "jw_target"]
    tasks = target_tasks(execer)
    check(len(new) >= 2 and all("busy_work" in (e["heaviest_stack"] or "") for e in new),
          f"(f) the janks after the exec name jw_target and busy_work ({len(new)})")
    for ev in new:
        own = task_of(ev, tasks, "(f) the event matches one task of the new program")
        check(matches_own(ev, own.dur_ns / 1e6, waited_ms=own.waited_ns / 1e6),
              f"(f) wall_ms {ev['wall_ms']} within 5% of the program's own "
              f"{own.dur_ns / 1e6:.3f} (it waited {own.waited_ns / 1e6:.3f} ms for a CPU)")
    execer.kill()

    # (g) A PID reused.
    old = spawn(start_target("--busy", "--ms", "200", "--every", "700"))
    other = spawn(start_target("--busy", "--ms", "200", "--every", "700"))
    wait_for(lambda: process_age_s(other.pid) >= 3, 10, "(g) the targets to be 3 s old")
    jw = start_jankwatch(["-p", f"{old.pid},{other.pid}", "--probe", f"{TARGET}:dispatch",
                          "--set", "ignore_startup_time=3", "--all", "--log-dir", logs.path])
    reused_pid = old.pid
    old.kill()
    wait_for(lambda: any(f"pid {reused_pid} (jw_target) exited" in l for l in jw.err), 10,
             "(g) jankwatch to see the first target exit")
    newcomer = None
    for _ in range(20):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(reused_pid - 1))
        p = spawn(start_target("--busy", "--ms", "200", "--every", "700"))
        if p.pid == reused_pid:
            newcomer = p
            break
        p.kill()
    check(newcomer is not None, f"(g) a new process got pid {reused_pid}")
    time.sleep(5)
    check(stop_jankwatch(jw) == 0, "(g) jankwatch exits 0")
    evs = json_lines(jw)
    killed_ms = time.time() * 1000 - 5000
    check(not [e for e in evs if e["pid"] == reused_pid and e["begin_time"] > killed_ms],
          "(g) no event of the process that reused the pid")
    check(len([e for e in evs if e["pid"] == other.pid and e["begin_time"] > killed_ms]) >= 4,
          "(g) the other target's janks go on")
    newcomer.kill()
    other.kill()

    # (h) Two instances on one target.
    both = spawn(start_target("--busy", "--ms", "200", "--every", "700"))
    wait_for(lambda: process_age_s(both.pid) >= 3, 10, "(h) the target to be 3 s old")
    args = ["-p", str(both.pid), "--probe", f"{TARGET}:dispatch", "--set",
            "ignore_startup_time=3", "--all", "--log-dir", logs.path]
    first_jw = start_jankwatch(args)
    second_jw = start_jankwatch(args)
    time.sleep(5)
    check(stop_jankwatch(second_jw) == 0 and stop_jankwatch(first_jw) == 0,
          "(h) both exit 0")
    check(any(f"pid {both.pid} is also watched by jankwatch pid {first_jw.pid}" in l
              for l in second_jw.err), "(h) the second says the target is watched already")
    tasks = target_tasks(both)
    for name, inst in (("first", first_jw), ("second", second_jw)):
        evs = json_lines(inst)
        check(len(evs) >= 5, f"(h) the {name} instance reports the janks ({len(evs)})")
        for ev in evs:
            own = task_of(ev, tasks, f"(h) {name}: the event matches one task")
            check(matches_own(ev, own.dur_ns / 1e6, waited_ms=own.waited_ns / 1e6),
                  f"(h) {name}: wall_ms {ev['wall_ms']} within 5% of {own.dur_ns / 1e6:.3f} "
                  f"(it waited {own.waited_ns / 1e6:.3f} ms for a CPU, "
                  f"{ev['runq_ms']} of them in the task)")
    both.kill()

    # (i) An exec while jankwatch attaches: the program it read is gone once it is hooked.
    racer = spawn(Proc([sys.executable, "-c", f"""
import os, time
time.sleep(0.3)
os.execv({TARGET!r}, [{TARGET!r}, "--busy", "--ms", "250", "--every", "700"])
"""]))
    jw = start_jankwatch(["-p", str(racer.pid), "--set", "ignore_startup_time=3", "--all",
                          "--log-dir", logs.path])
    wait_for(lambda: len([e for e in json_lines(jw) if e["bundle_name"] == "jw_target"]) >= 2,
             20, "(i) two janks of the new program")
    check(stop_jankwatch(jw) == 0, "(i) jankwatch exits 0")
    said = [l for l in jw.err if f"pid {racer.pid} (python3" in l and "exec'd jw_target" in l]
    check(said, "(i) it says the process exec'd jw_target" +
          (" while being attached" if any("while being attached" in l for l in said) else ""))
    racer.kill()
finally:
    for proc in SPAWNED:
        proc.kill()
    logs.cleanup()
