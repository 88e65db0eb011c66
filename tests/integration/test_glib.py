# SPDX-License-Identifier: GPL-2.0-only
"""A GLib main loop is recognized with no --probe: loop "glib", the task bounded by the loop's
waits, and the handler the timeout callback g_main_context_dispatch ran (on_tick), read from the
task's stacks; wall_ms within 5% of what the program measured itself."""
from jwtest import *

require_bpf()
logs = LogDir()
target = Proc([os.path.join(TARGETS, "jw_glib"), "--ms", "300", "--every", "600"])
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    rc, events, err = run_jankwatch(["-p", str(target.pid), "--set", "ignore_startup_time=3",
                                     "--all", "--duration", "3", "--log-dir", logs.path], 60)
finally:
    target.kill()
check(rc == 0, f"jankwatch exits 0 ({rc})")
check(any("loop glib (auto: it maps" in l for l in err), "it says it chose glib and why")
tasks = target_tasks(target)
check(len(events) >= 3, f"at least 3 events ({len(events)})")
for ev in events:
    check(ev["loop"] == "glib" and ev["handler"] == "on_tick",
          f"loop glib, handler on_tick ({ev['loop']}, {ev['handler']})")
    mine = [t for t in tasks if abs(mono_to_epoch_ms(t.begin_ns) - ev["begin_time"]) < 20]
    check(len(mine) == 1, "the event matches one task of the program")
    own_ms = mine[0].dur_ns / 1e6
    check(abs(ev["wall_ms"] - own_ms) <= 0.05 * own_ms,
          f"wall_ms {ev['wall_ms']} within 5% of the program's own {own_ms:.3f}")
logs.cleanup()
print("PASS")
