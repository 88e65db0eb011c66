# SPDX-License-Identifier: GPL-2.0-only
"""The presets of the loops devices and servers run below the toolkits, each recognized from the
library the program maps and named from the loop's own data at the call of the callback (its
handler site), not from the stacks:

- libev (jw_ev: an ev_timer on_slow spinning 300 ms a second, an ev_timer on_tick every 50 ms, an
  ev_io on_pipe the slow one wakes): handler "on_slow (EV_TIMER)", the events it was called for
  from revents, under ev_invoke_pending; on_pipe's row "on_pipe (EV_READ)".
- sd-event (jw_sdevent: timer sources described "catalog-reindex" and "light-tick"): the
  handler on_reindex, its class the source's description, read through the source at the field
  sd_event_source_get_description reads. Debian's systemd-journald too (systemd's own daemons
  run sd-event from their private libsystemd-shared): a callback's row counts the syslog
  messages it was sent.
- pipewire (jw_pw: timers of a pw_main_loop, on_reindex spinning 300 ms a second, on_tick every
  50 ms): the callback, read through the source at the call of loop.c's timer wrapper in the
  stripped libspa-support.so (the loop's own call of the source's func names the wrapper, which
  that call renames), class pw_loop_iterate.
- gtk (jw_gtk, a GTK 4 window on a headless X server): a slow frame named by the frame clock's
  phase that took the time (GdkFrameClock::paint, ::update, ::layout), found in the stripped
  libgtk-4 by its code.
- wayland (jw_wl: a compositor on libwayland-server and its client): each request named by its
  interface and name, read from the program's wl_interface tables at libffi's call of its
  handler: the slow task wl_surface.commit, class wl_surface.

Each jank is within 5% of what the program measured itself, its group the callback's frames; the
statistics rows have the same names, the slow callback's row counts every task reported and the
ticker's row every tick the program ran while watched."""
import shutil
import subprocess
import tempfile

from jwtest import *

require_bpf()

WATCH_S = 5


def check_event(label, ev, tasks, cls, handler, group):
    """@ev names @cls / @handler, matches one of the program's own @tasks within 5% and has
    @group."""
    check(ev["handler"] == handler and ev["handler_class"] == cls,
          f"{label}: the event names {cls} / {handler} ({ev['handler_class']} / "
          f"{ev['handler']})")
    mine = task_of(ev, tasks, f"{label}: the event matches one task of the program")
    check(matches_own(ev, mine.dur_ns / 1e6),
          f"{label}: wall_ms {ev['wall_ms']} within 5% of the program's own "
          f"{mine.dur_ns / 1e6:.3f}")
    check(ev["group"] == group, f"{label}: group {ev['group']!r} is the callback's frames")


def check_loop(binary, loop, cls, handler, group, tick_class, tick_handler, args=()):
    argv = [os.path.join(TARGETS, binary), "--ms", "300", "--every", "1000", "--light", "50",
            *args]
    w = watch_loop(Proc(argv), WATCH_S)
    check(w.rc == 0, f"{loop}: jankwatch exits 0 ({w.rc})")
    check(any(f"loop {loop} (auto: " in l and "callbacks named" in l for l in w.err),
          f"{loop}: the preset is picked, its handler sites found "
          f"({[l for l in w.err if 'loop' in l]})")
    check(len(w.events) >= WATCH_S - 2, f"{loop}: the tasks' events ({len(w.events)})")
    for ev in w.events:
        check(ev["loop"] == loop, f"{loop}: the event's loop ({ev['loop']})")
        check_event(loop, ev, w.tasks, cls, handler, group)
    rows = {(r["handler_class"], r["message_name"]): r for r in w.rows}
    slow, tick = rows.get((cls, handler)), rows.get((tick_class, tick_handler))
    check(slow is not None and int(slow["message_count"]) == len(w.events),
          f"{loop}: the row of {cls} / {handler} counts the {len(w.events)} tasks "
          f"({slow['message_count'] if slow else sorted(rows)})")
    n = int(tick["message_count"]) if tick else -1
    check(w.ticks[0] <= n <= w.ticks[1],
          f"{loop}: the row of {tick_class} / {tick_handler} counts the ticks the program ran "
          f"while watched ({n}: {w.ticks[0]} surely, {w.ticks[1]} at most; {sorted(rows)})")
    return w, rows


w, rows = check_loop("jw_ev", "libev", "ev_invoke_pending", "on_slow (EV_TIMER)",
                     "busy_work<-on_slow", "ev_invoke_pending", "on_tick (EV_TIMER)")
# The slow timer writes to a pipe after each task: its reader runs once a task, for EV_READ.
pipe = rows.get(("ev_invoke_pending", "on_pipe (EV_READ)"))
n = int(pipe["message_count"]) if pipe else -1
check(abs(n - len(w.events)) <= 1,
      f"libev: on_pipe (EV_READ) runs once a task ({n}, {len(w.events)} tasks)")

check_loop("jw_sdevent", "sd-event", "catalog-reindex", "on_reindex", "busy_work<-on_reindex",
           "light-tick", "on_tick")

# PipeWire: its timers' callbacks are called by loop.c's wrapper of a timer source, in the
# stripped libspa-support.so that libpipewire opens once the program runs.
check_loop("jw_pw", "pipewire", "pw_loop_iterate", "on_reindex", "busy_work<-on_reindex",
           "pw_loop_iterate", "on_tick")


def check_journald():
    """Debian's systemd-journald, an sd-event daemon on systemd's private libsystemd-shared, run
    in a mount namespace of its own (tmpfs on /run/systemd, /run/log and /var/log/journal):
    picked as sd-event, and its syslog socket's callback (journald reads one datagram a call)
    has a row that counts the messages sent while watched."""
    script = ("for d in /run/systemd /run/log /var/log/journal; do mkdir -p $d && "
              "mount -t tmpfs tmpfs $d || exit 1; done; mkdir -p /run/systemd/journal; "
              "exec /lib/systemd/systemd-journald")
    journald = Proc(["unshare", "-m", "--propagation", "private", "sh", "-c", script])
    logs = LogDir()
    sent = 20
    try:
        wait_for(lambda: process_age_s(journald.pid) >= 3, 10, "journald to be 3 s old")
        jw = start_jankwatch(["-p", str(journald.pid), "--set", "ignore_startup_time=3",
                              "--log-dir", logs.path])
        for i in range(sent):
            subprocess.run(["nsenter", "-t", str(journald.pid), "-m", "--", "logger", "-u",
                            "/run/systemd/journal/dev-log", f"jankwatch test {i}"], check=True)
        time.sleep(1)
        jw.p.send_signal(2)
        rc = jw.wait(30)
    finally:
        journald.kill()
    check(rc == 0, f"journald: jankwatch exits 0 ({rc})")
    check(any("loop sd-event (auto: " in l and "libsystemd-shared" in l for l in jw.err),
          f"journald: sd-event on libsystemd-shared ({[l for l in jw.err if 'loop' in l]})")
    with open(os.path.join(logs.path, "stats.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["pid"] == str(journald.pid)]
    counts = [int(r["message_count"]) for r in rows if r["message_name"] != "syscall"]
    check(sent in counts, f"journald: a callback's row counts the {sent} messages "
          f"({[(r['handler_class'], r['message_name'], r['message_count']) for r in rows]})")
    logs.cleanup()


def check_wayland():
    """jw_wl's server, a compositor on libwayland-server whose wl_surface.commit handler spins
    300 ms when the surface was damaged since the last commit; its client commits every 50 ms
    and damages then commits once a second. Each request is named by its interface and name
    from the program's wl_interface tables: the slow task wl_surface.commit, class wl_surface;
    the damage row counts the slow commits, the commit row those and the ticks."""
    runtime = tempfile.mkdtemp(prefix="jw-wl-")
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
    binary = os.path.join(TARGETS, "jw_wl")
    server = Proc([binary, "--server", "--ms", "300"], env=env)
    wait_for(lambda: os.path.exists(os.path.join(runtime, "jw-wayland-0")), 10,
             "the compositor's socket")
    client = Proc([binary, "--client", "--every", "1000", "--light", "50"], env=env)
    try:
        w = watch_loop(server, WATCH_S)
    finally:
        client.kill()
        shutil.rmtree(runtime, ignore_errors=True)
    check(w.rc == 0, f"wayland: jankwatch exits 0 ({w.rc})")
    check(any("loop wayland (auto: " in l and "requests named" in l for l in w.err),
          f"wayland: the preset is picked ({[l for l in w.err if 'loop' in l]})")
    check(len(w.events) >= WATCH_S - 2, f"wayland: the tasks' events ({len(w.events)})")
    for ev in w.events:
        check_event("wayland", ev, w.tasks, "wl_surface", "wl_surface.commit",
                    "busy_work<-surface_commit")
    rows = {(r["handler_class"], r["message_name"]): int(r["message_count"]) for r in w.rows}
    damage = rows.get(("wl_surface", "wl_surface.damage"), -1)
    commit = rows.get(("wl_surface", "wl_surface.commit"), -1)
    # A damage request comes right before its slow commit: at the window's end the damage may
    # be counted and its commit's task end after the probes came out.
    check(len(w.events) <= damage <= len(w.events) + 1,
          f"wayland: the damage row counts the {len(w.events)} slow commits ({rows})")
    check(w.ticks[0] + len(w.events) <= commit <= w.ticks[1] + len(w.events),
          f"wayland: the commit row counts the slow commits and the ticks ({commit}: "
          f"{len(w.events)} + {w.ticks[0]} to {w.ticks[1]})")


def xvfb():
    """A headless X server on a free display: (its Popen, DISPLAY)."""
    binary = shutil.which("Xvfb")
    if not binary:
        fail("Xvfb is missing: scripts/setup.sh installs xvfb")
    number = next(n for n in range(90, 200)
                  if not os.path.exists(f"/tmp/.X11-unix/X{n}") and
                  not os.path.exists(f"/tmp/.X{n}-lock"))
    server = subprocess.Popen([binary, f":{number}", "-screen", "0", "640x480x24", "-nolisten",
                               "tcp", "-noreset"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    wait_for(lambda: os.path.exists(f"/tmp/.X11-unix/X{number}") or server.poll() is not None,
             15, "Xvfb's socket")
    if server.poll() is not None:
        fail(f"Xvfb :{number} exited ({server.returncode})")
    return server, f":{number}"


def check_gtk():
    """jw_gtk, a GTK 4 window on a headless X server, whose frame clock phase --in spins 300 ms
    once a second (and, but for paint, whose light timeout redraws every 100 ms): picked as gtk,
    each slow frame named by the phase that took the time. paint and update (a tick callback)
    from the phase hooked in the kernel, the frame's GLib dispatch its class; paint's row counts
    the slow frames (no other frame paints), update's at least those (every frame runs the tick
    callback); layout: GTK's X11 backend waits for the server inside the frame (the resize's
    round trip), which ends the task there, so the rest of the frame is a task of its own, its
    handler the phase its stacks show (GdkFrameClock::layout, a frame named from the phases in
    the stripped libgtk-4 too)."""
    server, display = xvfb()
    env = dict(os.environ, DISPLAY=display, GDK_BACKEND="x11", GSK_RENDERER="cairo")
    try:
        for phase in ("paint", "update", "layout"):
            name = f"GdkFrameClock::{phase}"
            # paint: no light redraws, so that only the slow frames paint
            light = "0" if phase == "paint" else "100"
            target = Proc([os.path.join(TARGETS, "jw_gtk"), "--ms", "300", "--every", "1000",
                           "--light", light, "--in", phase], env=env)
            wait_for(lambda: process_age_s(target.pid) >= 3 or target.p.poll() is not None, 10,
                     "jw_gtk to be 3 s old")
            if target.p.poll() is not None:
                time.sleep(0.2)
                fail(f"gtk {phase}: jw_gtk exited ({target.p.returncode}): "
                     f"{' '.join(target.err)[-600:]}")
            # The sites hooked throughout: GTK's frame clock alone passes the default
            # handler_sites (~170 calls a second here), and the sites' names are what this tests.
            w = watch_loop(target, 4, ("--set", "handler_sites=500"))
            check(w.rc == 0, f"gtk {phase}: jankwatch exits 0 ({w.rc})")
            check(any("loop gtk (auto: " in l and "phase that took longest" in l
                      for l in w.err),
                  f"gtk {phase}: the preset is picked, the phases found "
                  f"({[l for l in w.err if 'loop' in l]})")
            check(len(w.events) >= 2, f"gtk {phase}: the slow frames' events ({len(w.events)})")
            cls = "syscall" if phase == "layout" else "g_main_context_dispatch"
            for ev in w.events:
                check(ev["loop"] == "gtk", f"gtk {phase}: the event's loop ({ev['loop']})")
                check_event(f"gtk {phase}", ev, w.tasks, cls, name, "busy_work<-spin")
                check(f"<-{name}<-" in ev["heaviest_stack"],
                      f"gtk {phase}: the stack names the phase ({ev['heaviest_stack']})")
            rows = {(r["handler_class"], r["message_name"]): int(r["message_count"])
                    for r in w.rows}
            n = rows.get((cls, name), -1)
            if phase == "paint":
                check(n == len(w.events), f"gtk paint: the row of {cls} / {name} counts the "
                      f"{len(w.events)} slow frames, the only ones that paint ({rows})")
            elif phase == "update":
                # every frame runs the tick callback: a light frame's longest phase may be another
                check(n >= len(w.events), f"gtk update: the row of {cls} / {name} counts the "
                      f"{len(w.events)} slow frames at least ({rows})")
    finally:
        server.terminate()  # its socket and lock go with it
        server.wait(10)


check_wayland()
check_gtk()
if os.path.exists("/lib/systemd/systemd-journald"):
    check_journald()
else:
    print("ok: no systemd-journald here: its part left out")
print("PASS")
