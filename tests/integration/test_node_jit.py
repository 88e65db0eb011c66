# SPDX-License-Identifier: GPL-2.0-only
"""A node timer callback that busy-loops 300 ms in the JS function busyWork is reported, and its
stack logs name busyWork as a JIT frame (from node's perf map) with its source position.

node links libuv statically, with local symbols: uv__run_timers, entered once per loop iteration
that has due timers, is the task. node's JIT code has no CFI; node keeps frame pointers in its C++
and JIT code, which elfutils' x86-64 unwinder falls back to and --unwind auto continues with.
With no --probe, the node preset is picked: the handler is the program's own JS callback (onTick),
the first JS function below uv_run that is not node's internal JS. A second node without the
flags, watched in the same run, has no perf map: nothing names its JS (nor V8's builtins, which
V8 maps again beside its JIT code), and its handler is node's C++ callback libuv called,
node::Environment::RunTimers, not what the JS called (the vdso's clock).

Debian's node, or with JW_NODE=22 Node 22 from the npm registry (ctest's *_node22 runs)."""
import os
import re
import subprocess

from jwtest import *

require_bpf()
NODE = node_binary()
SCRIPT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                      "targets", "node_busy.js"))
NODE_FLAGS = ["--perf-basic-prof", "--interpreted-frames-native-stack"]

v8_options = subprocess.run([NODE, "--v8-options"], capture_output=True, text=True).stdout
for flag in NODE_FLAGS:
    if flag not in v8_options:
        fail(f"{NODE} does not know {flag}")

# Where V8 says busyWork starts: the line of its definition, the column of its "(".
with open(SCRIPT) as f:
    BUSY_LINE = next(i for i, l in enumerate(f, 1) if l.startswith("function busyWork("))
JIT_BUSY = re.compile(r" #\d{2,} at busyWork \((.*)\)$")
TREE_LINE = re.compile(r"^( *)(\d+) #(\d{2,}) (.*)$")


def busy_samples(tree):
    """Samples whose stack holds a JIT frame busyWork with its source: the counts of the
    outermost such lines. Also checks that each of those lines names node_busy.js:LINE:COL."""
    total, path = 0, []
    for line in tree:
        m = TREE_LINE.match(line)
        if not m:
            fail(f"not a frame line: {line!r}")
        depth, count, busy = int(m.group(3)), int(m.group(2)), JIT_BUSY.search(line)
        del path[depth:]
        if busy:
            check(re.fullmatch(re.escape(SCRIPT) + rf":{BUSY_LINE}:\d+", busy.group(1)),
                  f"busyWork's source is node_busy.js:{BUSY_LINE}:COL: {busy.group(1)}")
            if not any(path):
                total += count
        path.append(bool(busy))
    return total


logs = LogDir()
# With these flags V8 also writes isolate-*-v8.log into its working directory.
target = Proc([NODE, *NODE_FLAGS, SCRIPT], cwd=logs.path)
plain = Proc([NODE, SCRIPT], cwd=logs.path)
perf_map = f"/tmp/perf-{target.pid}.map"
try:
    for node in (target, plain):
        wait_for(lambda: any(l.startswith("ready") for l in node.out) or
                 node.p.poll() is not None, 30, "node to start")
        if node.p.poll() is not None:
            fail(f"node exited early: {node.err}")
    wait_for(lambda: process_age_s(plain.pid) >= 3, 10, "node to be 3 s old")
    rc, events, err = run_jankwatch(
        ["-p", str(target.pid), "--probe", f"{os.path.realpath(NODE)}:uv__run_timers", "--set",
         "ignore_startup_time=3", "--all", "--duration", "5", "--log-dir", logs.path], 60)
    # With no --probe: the node preset, the handler the program's own JS callback.
    auto_rc, auto_events, auto_err = run_jankwatch(
        ["-p", f"{target.pid},{plain.pid}", "--set", "ignore_startup_time=3", "--all",
         "--duration", "3", "--log-dir", logs.path], 60)
finally:
    target.kill()
    plain.kill()
    if os.path.exists(perf_map):
        os.unlink(perf_map)
check(rc == 0, f"jankwatch exits 0 (got {rc})")
slow = [ev for ev in events if ev["wall_ms"] >= 280]
check(len(slow) >= 2, f"at least 2 events of 280 ms or more in 5 s (got {len(slow)} of "
      f"{len(events)})")

for ev in slow:
    check(ev["pid"] == target.pid and ev["handler"] == "uv__run_timers",
          f"event names pid {target.pid} and handler uv__run_timers")
    check(len(ev["external_log"]) == 1, "one stack log per event")
    text = open(ev["external_log"][0]).read()
    samples = int(header(text)["samples"])
    busy = busy_samples(stack_tree(text))
    check(samples > 0 and 2 * busy >= samples,
          f"busyWork is a JIT frame in {busy} of {samples} samples (at least half)")

check(auto_rc == 0, f"auto: jankwatch exits 0 (got {auto_rc})")
RUN_TIMERS = "node::Environment::RunTimers(uv_timer_s*)"
for pid, handler in ((target.pid, "onTick"), (plain.pid, RUN_TIMERS)):
    of_pid = [ev for ev in auto_events if ev["pid"] == pid]
    check(len(of_pid) >= 2, f"auto: at least 2 events of pid {pid} in 3 s ({len(of_pid)})")
    for ev in of_pid:
        check(ev["loop"] == "node" and ev["handler"] == handler and ev["wall_ms"] >= 280,
              f"auto: loop node, handler {handler}, wall_ms {ev['wall_ms']} "
              f"({ev['loop']}, {ev['handler']})")

logs.cleanup()
print("PASS")
