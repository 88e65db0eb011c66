# SPDX-License-Identifier: GPL-2.0-only
"""Debian's nginx is recognized with no --probe: loop "nginx", the task bounded by the worker's
waits (ngx_process_events_and_timers holds the wait, so it is never timed whole), and the handler
the module's request handler read from the stacks past nginx's event and HTTP core
(ngx_http_perl_handle_request for the perl jank). wall_ms within 5% of what the handler measured
itself. Given the master's PID, jankwatch says the master runs no loop and watches its worker.

The handler sites (where nginx calls an event's handler) give every task a statistics row of its
handler: the worker's accept handler (ngx_event_accept) counts each connection; the request's
read handler (static, so named by its module and offset, nginx+0x...) each request, the janks
among them: its maximum latency the longest jank's own within 5%. A timer's row has its lateness: a connection left idle times out 1 s after
it was accepted (client_header_timeout), during a 400 ms jank; the timer's handler closes the
connection late (after the jank, and after the wait nginx then makes for the rest of the timeout
by its clock cached before the jank: ~400 ms), and its row under ngx_event_expire_timers says how
late, within 15 ms of when the client saw the close less the due time (nginx reads its clock
coarsely), or later by what the client measured of its own wait for a CPU after the close woke
it. The close comes from inside the handler, whose row is counted when it returns: Ctrl-C waits
for the worker back in its wait (on a busy machine the worker may lose its CPU right after the
close, and jankwatch, stopped at once, read the maps before the handler returned)."""
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
    # Each request's rows are counted when its handlers return: the worker back in its wait.
    wait_for(lambda: asleep_in_wait(nginx.workers[0]), 10, "the worker back in its wait")
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


def check_timer(nginx, worker):
    logs = LogDir()
    jw = start_jankwatch(["-p", str(worker), "--set", "ignore_startup_time=3", "--log-dir",
                          logs.path])
    wait_for(lambda: any("ready" in l for l in jw.err) or jw.p.poll() is not None, 30,
             "jankwatch to be ready")
    idle = socket.create_connection(("127.0.0.1", nginx.port))
    connected_ms = time.monotonic() * 1000
    time.sleep(0.8)
    jank, _ = nginx.jank(400)
    idle.settimeout(5)
    waited_ms = own_run_delay_ms()
    closed = idle.recv(1) == b""
    closed_ms = time.monotonic() * 1000
    # How long this thread waited for a CPU after the close woke it: closed_ms is that late.
    waited_ms = own_run_delay_ms() - waited_ms
    idle.close()
    # The close comes from inside the timer's handler; its row is counted when the handler
    # returns, which a busy machine may not let it do before jankwatch stops: wait for the
    # worker back in its wait (the handler's task ended) before Ctrl-C.
    wait_for(lambda: asleep_in_wait(worker), 10, "the worker back in its wait after the close")
    jw.p.send_signal(2)
    rc = jw.wait(30)
    check(rc == 0 and closed, f"timer: jankwatch exits 0 ({rc}), nginx timed the connection out")
    with open(os.path.join(logs.path, "stats.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["handler_class"] == "ngx_event_expire_timers"]
    logs.cleanup()
    late = closed_ms - (connected_ms + 1000)
    check((jank.begin_ns + jank.dur_ns) / 1e6 < closed_ms, "timer: closed after the jank")
    check(len(rows) == 1 and int(rows[0]["recorded_delay_message_count"]) >= 1,
          f"timer: a row of the timed-out connection's handler, with a delay "
          f"({[(r['message_name'], r['recorded_delay_message_count']) for r in rows]})")
    got = int(rows[0]["max_delay_millis"])
    check(late > 100 and -15 <= late - got <= 15 + waited_ms,
          f"timer: max_delay_millis {got} is how late the timer ran, {late:.1f} ms as the "
          f"client saw the close ({waited_ms:.1f} ms of it waiting for a CPU after the close)")


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
    check_timer(nginx, worker)
finally:
    nginx.kill()
print("PASS")
