# SPDX-License-Identifier: GPL-2.0-only
"""With no --probe, jankwatch hooks the loop by its wait calls (--loop auto falls back to
syscall): a task is the time between the thread's wait returning and its next wait. Checked on
jw_target (poll), a python3 asyncio loop (epoll_wait) and Debian's redis-server (DEBUG SLEEP):
each jank within 5% of what the program measured itself, and the event's handler is "syscall"."""
import socket
import subprocess
import sys

from jwtest import *

require_bpf()


def watch(proc, seconds, extra=()):
    logs = LogDir()
    wait_for(lambda: process_age_s(proc.pid) >= 3, 10, "the target to be 3 s old")
    jw = start_jankwatch(["-p", str(proc.pid), "--set", "ignore_startup_time=3", "--all",
                          "--log-dir", logs.path, *extra])
    return jw, logs


def finish(jw, seconds):
    time.sleep(seconds)
    jw.p.send_signal(2)
    rc = jw.wait(30)
    check(rc == 0, f"jankwatch exits 0 after Ctrl-C (got {rc})")
    check(any("loop syscall (auto" in l for l in jw.err), "it says it fell back to syscall")
    return [json.loads(l) for l in jw.out if l.startswith("{")]


def check_own(events, proc, what):
    tasks = target_tasks(proc)
    check(len(events) >= 2, f"{what}: at least 2 events ({len(events)})")
    for ev in events:
        check(ev["handler"] == "syscall", f"{what}: handler is syscall")
        mine = [t for t in tasks if abs(mono_to_epoch_ms(t.begin_ns) - ev["begin_time"]) < 20]
        check(len(mine) == 1, f"{what}: the event matches one task of the program")
        own_ms = mine[0].dur_ns / 1e6
        check(abs(ev["wall_ms"] - own_ms) <= 0.05 * own_ms,
              f"{what}: wall_ms {ev['wall_ms']} within 5% of the program's own {own_ms:.3f}")


target = start_target("--busy", "--ms", "300", "--every", "700", "--fast", "5")
try:
    jw, logs = watch(target, 3)
    check_own(finish(jw, 3), target, "jw_target")
finally:
    target.kill()

# Debian's python3 (the one the packages ship), else whichever runs this test.
python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
py = Proc([python, os.path.join(os.environ.get("JW_SRC", "."), "tests/targets/asyncio_busy.py"),
           "--ms", "300", "--every", "700"])
try:
    jw, logs = watch(py, 3)
    events = finish(jw, 3.5)
    check_own(events, py, "asyncio")
    text = open(events[0]["external_log"][0]).read()
    check("_PyEval_EvalFrameDefault" in text or "PyEval" in text,
          "the asyncio stacks run through the interpreter")
finally:
    py.kill()

# redis-server: DEBUG SLEEP 0.3 happens between two epoll_waits.
with socket.socket() as sock:
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
redis = Proc(["/usr/bin/redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
              "--appendonly", "no", "--enable-debug-command", "local"])
try:
    cli = ["/usr/bin/redis-cli", "-p", str(port)]
    wait_for(lambda: subprocess.run([*cli, "PING"], capture_output=True, text=True).stdout
             .strip() == "PONG", 10, "redis to answer")
    jw, logs = watch(redis, 0)
    before = time.time() * 1000
    subprocess.run([*cli, "DEBUG", "SLEEP", "0.3"], capture_output=True, timeout=30)
    after = time.time() * 1000
    events = [e for e in finish(jw, 0.5) if before - 5 <= e["begin_time"] <= after + 5]
    check(len(events) == 1, f"redis: one event for DEBUG SLEEP ({len(events)})")
    ev = events[0]
    check(ev["handler"] == "syscall" and 300 <= ev["wall_ms"] <= after - before,
          f"redis: wall_ms {ev['wall_ms']} covers the sleep, within what the client waited")
    check(ev["blocked_ms"] >= 280 and ev["cause"] == "blocked", "redis: blocked")
finally:
    redis.kill()
print("PASS")
