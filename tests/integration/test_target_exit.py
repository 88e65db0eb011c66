# SPDX-License-Identifier: GPL-2.0-only
"""When the watched process exits, jankwatch says so, keeps what it already wrote, and exits 0."""
from jwtest import *

require_bpf()
logs = LogDir()
target = start_target("--busy", "--ms", "250", "--every", "400", "--count", "12")
wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
jw = start_jankwatch(["-p", str(target.pid), "--probe", f"{TARGET}:dispatch", "--set",
                      "ignore_startup_time=3", "--all", "--log-dir", logs.path])
rc = jw.wait(60)
target.wait(10)
check(rc == 0, f"jankwatch exits 0 after its target exits (got {rc})")
check(any(f"pid {target.pid} (jw_target) exited" in l for l in jw.err), "it says the target exited")
events = [l for l in jw.out if l.startswith("{")]
check(len(events) >= 1, f"events were printed before the exit ({len(events)})")
check(len(logs.read("events.jsonl").splitlines()) == len(events), "events.jsonl holds them all")
stacks = logs.files("stack-")
check(len(stacks) == len(events), "a stack log per event")
check(not logs.files("."), "no temporary file left behind")
logs.cleanup()
print("PASS")
