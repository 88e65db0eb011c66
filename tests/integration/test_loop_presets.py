# SPDX-License-Identifier: GPL-2.0-only
"""GLib, libuv (shared) and libevent loops are recognized with no --probe: the task bounded by the
loop's waits, loop "glib", "libuv" or "libevent", and the handler the program's timer callback
(on_tick, on_timer) read from the task's stacks below the library's dispatch function; wall_ms
within 5% of what the program measured itself."""
import subprocess

from jwtest import *

require_bpf()


def check_preset(binary, loop, dispatch, handler):
    logs = LogDir()
    target = Proc([os.path.join(TARGETS, binary), "--ms", "300", "--every", "600"])
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        rc, events, err = run_jankwatch(["-p", str(target.pid), "--set", "ignore_startup_time=3",
                                         "--all", "--duration", "5", "--log-dir", logs.path], 60)
    finally:
        target.kill()
    check(rc == 0, f"{loop}: jankwatch exits 0 ({rc})")
    check(any(f"loop {loop} (auto: " in l and dispatch in l for l in err),
          f"{loop}: it says it chose {loop} and why")
    tasks = target_tasks(target)
    # A task every 900 ms (300 ms, then 600 ms to the next): 5 or 6 in 5 s, whatever the phase.
    check(len(events) >= 4, f"{loop}: at least 4 events in 5 s ({len(events)})")
    for ev in events:
        check(ev["loop"] == loop and ev["handler"] == handler,
              f"{loop}: handler {handler} ({ev['loop']}, {ev['handler']})")
        mine = task_of(ev, tasks, f"{loop}: the event matches one task of the program")
        own_ms = mine.dur_ns / 1e6
        check(matches_own(ev, own_ms),
              f"{loop}: wall_ms {ev['wall_ms']} within 5% of the program's own {own_ms:.3f}")
    logs.cleanup()


check_preset("jw_glib", "glib", "g_main_context_dispatch", "on_tick")

# Started by jankwatch, before its libraries are mapped: the preset is found once it runs.
logs = LogDir()
p = subprocess.run([JW_BIN, "--set", "ignore_startup_time=3", "--all", "--log-dir", logs.path,
                    "--", os.path.join(TARGETS, "jw_glib"), "--ms", "300", "--every", "600",
                    "--count", "7"], capture_output=True, text=True, timeout=60)
check(p.returncode == 0, f"-- jw_glib: jankwatch exits with the program's status 0 ({p.returncode})")
events = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
check(len(events) >= 2 and all(e["loop"] == "glib" and e["handler"] == "on_tick"
                               for e in events),
      f"-- jw_glib: loop glib, handler on_tick ({[(e['loop'], e['handler']) for e in events]})")
logs.cleanup()
check_preset("jw_uv", "libuv", "uv_run", "on_timer")
check_preset("jw_event", "libevent", "event_base_loop", "on_timer")
print("PASS")
