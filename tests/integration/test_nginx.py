# SPDX-License-Identifier: GPL-2.0-only
"""Debian's nginx is recognized with no --probe: loop "nginx", the task bounded by the worker's
waits (ngx_process_events_and_timers holds the wait, so it is never timed whole), and the handler
the module's request handler read from the stacks past nginx's event and HTTP core
(ngx_http_perl_handle_request for the perl jank). wall_ms within 5% of what the handler measured
itself. Given the master's PID, jankwatch says the master runs no loop and watches its worker."""
from jwtest import *

require_bpf()


def watch_janks(nginx, pid, n=3):
    logs = LogDir()
    wait_for(lambda: process_age_s(nginx.pid) >= 3, 10, "nginx to be 3 s old")
    jw = start_jankwatch(["-p", str(pid), "--set", "ignore_startup_time=3", "--all",
                          "--log-dir", logs.path])
    wait_for(lambda: any("ready" in l for l in jw.err) or jw.p.poll() is not None, 30,
             "jankwatch to be ready")
    own = []
    for _ in range(n):
        body = nginx.get("/jank?ms=300")
        check(body and body.startswith("task "), f"the jank answers ({body!r})")
        own.append(TargetTask(body.splitlines()[0]))
        time.sleep(0.2)
    time.sleep(0.5)
    jw.p.send_signal(2)
    rc = jw.wait(30)
    check(rc == 0, f"jankwatch exits 0 after Ctrl-C ({rc})")
    logs.cleanup()
    return [json.loads(l) for l in jw.out if l.startswith("{")], jw.err, own


def check_events(events, own, worker, what):
    check(len(events) == len(own), f"{what}: one event per jank ({len(events)} for {len(own)})")
    for ev in events:
        check(ev["pid"] == worker, f"{what}: the event is the worker's ({ev['pid']})")
        check(ev["loop"] == "nginx" and ev["handler"] == "ngx_http_perl_handle_request",
              f"{what}: loop nginx, handler ngx_http_perl_handle_request "
              f"({ev['loop']}, {ev['handler']})")
        mine = task_of(ev, own, f"{what}: the event matches one request's jank")
        own_ms = mine.dur_ns / 1e6
        check(matches_own(ev, own_ms),
              f"{what}: wall_ms {ev['wall_ms']} (runq {ev['runq_ms']}) within 5% of the "
              f"handler's own {own_ms:.3f}")


nginx = Nginx()
try:
    check(len(nginx.workers) == 1, f"nginx runs one worker ({nginx.workers})")
    worker = nginx.workers[0]
    events, err, own = watch_janks(nginx, worker)
    check(any("loop nginx (auto: " in l and "ngx_process_events_and_timers" in l for l in err),
          "it says it chose nginx, and why")
    check_events(events, own, worker, "-p WORKER")

    events, err, own = watch_janks(nginx, nginx.pid)
    check(any(f"pid {nginx.pid} is nginx's master process" in l and str(worker) in l
              for l in err), "given the master, it says it watches the worker instead")
    check_events(events, own, worker, "-p MASTER")
finally:
    nginx.kill()
print("PASS")
