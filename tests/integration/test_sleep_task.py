# SPDX-License-Identifier: GPL-2.0-only
"""A 300 ms sleeping task is reported with its wall time, cpu_ms near 0 and the time blocked."""
from jwtest import *

require_bpf()
logs = LogDir()
target = start_target("--sleep", "--ms", "300", "--every", "600")
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    rc, events, err = run_jankwatch(
        ["-p", str(target.pid), "--probe", f"{TARGET}:dispatch", "--set",
         "ignore_startup_time=3", "--all", "--duration", "4", "--log-dir", logs.path], 60)
finally:
    target.kill()
check(rc == 0, f"jankwatch exits 0 (got {rc})")
tasks = target_tasks(target)
check(len(events) >= 3, f"at least 3 events in 4 s (got {len(events)})")
for ev in events:
    mine = [t for t in tasks if abs(mono_to_epoch_ms(t.begin_ns) - ev["begin_time"]) < 20]
    check(len(mine) == 1, "the event matches one task of the target")
    own_ms = mine[0].dur_ns / 1e6
    check(abs(ev["wall_ms"] - own_ms) <= 0.05 * own_ms,
          f"wall_ms {ev['wall_ms']} within 5% of the target's own {own_ms:.3f}")
    check(ev["cpu_ms"] < 5, f"cpu_ms {ev['cpu_ms']} is near 0")
    check(ev["blocked_ms"] >= 0.95 * own_ms, f"blocked_ms {ev['blocked_ms']} covers the sleep")
    check(ev["cause"] == "blocked", f"cause is blocked (got {ev['cause']})")
logs.cleanup()
print("PASS")
