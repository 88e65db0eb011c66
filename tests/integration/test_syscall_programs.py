# SPDX-License-Identifier: GPL-2.0-only
"""Real programs watched by their waits (syscall mode, test_syscall_loop.py's ways on jw_target): a
python3 asyncio loop (epoll_wait) told --loop syscall: loop and handler "syscall", each jank
within 5% of what the program measured itself, its stacks through the interpreter. Debian's
redis-server is recognized: loop "redis", and the handler of a task is the command's function,
read from call(c) as c->cmd->proc (debugCommand, evalCommand), whether the command sleeps or runs
on the CPU; of several commands run in one iteration, the longest."""
import socket
import sys

from jwtest import *
from syscall_mode import check_own, finish, watch

require_bpf()

# Debian's python3 (the one the packages ship), else whichever runs this test.
python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
py = Proc([python, os.path.join(os.environ.get("JW_SRC", "."), "tests/targets/asyncio_busy.py"),
           "--ms", "300", "--every", "700", "--from-wait"])
try:
    # The program times its task from its wait's return to its next wait (--from-wait), as
    # syscall mode does: the loop's own work around the callback is in both (17 ms of it once,
    # under arm64 emulation).
    jw, logs = watch(py, 3, ["--loop", "syscall"])
    events = finish(jw, 3.5)
    check_own(events, py, "asyncio")
    text = open(events[0]["external_log"][0]).read()
    check("_PyEval_EvalFrameDefault" in text or "PyEval" in text,
          "the asyncio stacks run through the interpreter")
finally:
    py.kill()

# redis-server: DEBUG SLEEP 0.3 happens between two epoll_waits.
def check_redis():
    redis = Redis()
    try:
        jw, logs = watch(redis, 0)
        marks = []
        for cmd in (["DEBUG", "SLEEP", "0.3"],
                    ["EVAL", "local i=0 while i<40000000 do i=i+1 end return i", "0"]):
            before = time.time() * 1000
            redis.cli(*cmd)
            marks.append((before, time.time() * 1000))
        # Three commands in one write: one iteration runs them all; the longest names the task.
        before = time.time() * 1000
        with socket.create_connection(("127.0.0.1", redis.port)) as sock:
            sock.sendall(b"PING\r\nDEBUG SLEEP 0.3\r\nPING\r\n")
            got = b""
            while got.count(b"\r\n") < 3:
                got += sock.recv(1024)
        marks.append((before, time.time() * 1000))
        events = finish(jw, 0.5)
        # A command's task begins after the client sent it and ends before the reply came back.
        mine = [[e for e in events if b - 5 <= e["begin_time"] and e["end_time"] <= a + 5]
                for b, a in marks]
        check([len(m) for m in mine] == [1, 1, 1], f"redis: one event per command ({mine})")
        sleep, lua, piped = mine[0][0], mine[1][0], mine[2][0]
        check(piped["handler"] == "debugCommand" and piped["wall_ms"] >= 300,
              f"redis: PING, DEBUG SLEEP, PING in one iteration: handler debugCommand, the longest "
              f"({piped['handler']}, {piped['wall_ms']} ms)")
        check(sleep["loop"] == "redis" and sleep["handler"] == "debugCommand",
              f"redis: DEBUG SLEEP handled by debugCommand ({sleep['loop']}, {sleep['handler']})")
        check(300 <= sleep["wall_ms"] <= marks[0][1] - marks[0][0],
              f"redis: wall_ms {sleep['wall_ms']} covers the sleep, within what the client waited")
        check(sleep["blocked_ms"] >= 280 and sleep["cause"] == "blocked",
              f"redis: blocked ({sleep['blocked_ms']} ms, {sleep['cause']}, offcpu_partial "
              f"{split_hidden(sleep)})")
        check(lua["handler"] == "evalCommand" and lua["cause"] in ("cpu", "runqueue"),
              f"redis: the Lua loop handled by evalCommand ({lua['handler']}, {lua['cause']})")
    finally:
        redis.kill()


check_redis()
print("PASS")
