# SPDX-License-Identifier: GPL-2.0-only
"""Live use on a terminal (SPEC F14): one status line rewritten in place every second (processes,
tasks and tasks/s, janks, hangs, reports, drops), erased before other messages; at the end a
summary with the tasks counted in the kernel and the janks by cause. Not on a terminal: no status
line, the same summary. The terminal is script(1)'s pseudo-terminal."""
import shutil
import subprocess

from jwtest import *

require_bpf()
if not shutil.which("script"):
    fail("script(1) is missing (util-linux's bsdutils)")

target = start_target("--busy", "--ms", "200", "--every", "300", "--fast", "5")
logs = LogDir()
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    cmd = (f"{JW_BIN} -p {target.pid} --set ignore_startup_time=3 --duration 4 "
           f"--log-dir {logs.path} >/dev/null")
    tty = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True, text=True,
                         errors="replace", timeout=60)
    rc, events, err = run_jankwatch(["-p", str(target.pid), "--set", "ignore_startup_time=3",
                                     "--duration", "3", "--log-dir", logs.path], 60)
finally:
    target.kill()
    logs.cleanup()

check(tty.returncode == 0, f"on a terminal: exit 0 ({tty.returncode})")
pieces = [p for p in re.split(r"[\r\n]+|\x1b\[K", tty.stdout) if p.strip()]
status = [p for p in pieces if re.search(r"\d+ process, \d+ tasks \(\d+/s\), \d+ janks, \d+ hangs, "
                                         r"\d+ reports, \d+ dropped", p)]
# A message prints above the status line, which is then put back as it was: one line, not a new
# count (jankwatch says a withheld file once at a terminal).
status = [p for i, p in enumerate(status) if not i or p != status[i - 1]]
check(len(status) >= 3, f"a status line about every second ({len(status)})")
rates = [int(re.search(r"\((\d+)/s\)", p).group(1)) for p in status[1:]]
check(rates and all(r >= 100 for r in rates),
      f"tasks/s counts the fast tasks too (5 ms every 300 ms, {rates})")
check("\x1b[K" in tty.stdout, "the status line is erased in place, not scrolled")
summary = [p for p in pieces if "janks (cpu" in p]
check(len(summary) == 1 and re.search(r"\d+ tasks, [1-9]\d* janks \(cpu [1-9]", summary[0]),
      f"the summary counts tasks and janks by cause: {summary}")

check(rc == 0 and not any("\r" in l or "\x1b" in l for l in err),
      "not on a terminal: no status line")
check(any(re.search(r"\d+ tasks, \d+ janks \(cpu \d+, runqueue \d+, blocked \d+, io \d+\)", l)
          for l in err), f"not on a terminal: the same summary ({err[-1:]})")
print("PASS")
