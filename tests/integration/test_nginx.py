# SPDX-License-Identifier: GPL-2.0-only
"""Debian's nginx is recognized with no --probe: loop "nginx", the task bounded by the worker's
waits (ngx_process_events_and_timers holds the wait, so it is never timed whole), and the handler
the module's request handler read from the stacks past nginx's event and HTTP core
(ngx_http_perl_handle_request for the perl jank). wall_ms within 5% of what the handler measured
itself. Given the master's PID, jankwatch says the master runs no loop and watches its worker.

The handler sites (where nginx calls an event's handler) give every task a statistics row of its
handler: the worker's accept handler (ngx_event_accept) counts each connection; the request's
read handler (static, so named by its module and offset, nginx+0x...) each request, the janks
among them: its maximum latency the longest jank's own within 5%."""
import csv

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
    with open(os.path.join(logs.path, "stats.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["handler_class"] == "ngx event handler"]
    logs.cleanup()
    check_rows(rows, own, n)
    return [json.loads(l) for l in jw.out if l.startswith("{")], jw.err, own


def check_rows(rows, own, n):
    names = [r["message_name"] for r in rows]
    accept = [r for r in rows if r["message_name"] == "ngx_event_accept"]
    check(len(accept) == 1 and int(accept[0]["message_count"]) >= n,
          f"a row of nginx's accept handler counting the {n} connections ({names})")
    own_max = max(t.dur_ns for t in own) / 1e3
    jank = [r for r in rows if abs(int(r["max_latency_micros"]) - own_max) <= 0.05 * own_max]
    check(len(jank) == 1 and jank[0]["message_name"].startswith("nginx+0x") and
          int(jank[0]["message_count"]) >= n,
          f"a row of the request's handler, nginx+0x..., whose max latency is the longest "
          f"jank's own {own_max:.0f} us ({[(r['message_name'], r['max_latency_micros']) for r in rows]})")


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
