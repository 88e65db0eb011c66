# SPDX-License-Identifier: GPL-2.0-only
"""Servers fork their workers. `--exe /usr/sbin/nginx` with nginx started afterwards with 2
workers: janks from both workers, each with its own pid (the master, which runs no loop, is
followed and not watched); `nginx -s reload`: the new workers' janks, the old workers forgotten
with nothing of theirs left attached (jankwatch holds as many perf event links as before). Given
the master's PID (-p MASTER), a worker killed and respawned by the master is watched too.
Each jank has one event; any other event must be a real jank of a kind the test names: an old
worker's last task, ended by its exit after the reload (a few ms of work made long by waiting
for a CPU on a busy machine: seen once, 14 events for 12 janks), or a task long only by its
wait for a CPU."""
import subprocess

from jwtest import *

require_bpf()


def perf_fds(pid):
    """jankwatch's perf event fds: one per probe link and per sampler."""
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            n += os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:[perf_event]"
        except OSError:
            pass
    return n


def janks_from(nginx, workers, rounds=3, ms=300):
    """Two requests 50 ms apart, @rounds times: the worker busy with the first leaves the second
    connection to the other, so that both jank (sent at the same instant, one worker's accept
    loop may take both). Returns [(TargetTask, worker pid)] and checks both answered."""
    own = []
    for _ in range(rounds):
        out = [None, None]
        threads = [threading.Thread(target=lambda k=k: out.__setitem__(k, nginx.jank(ms)))
                   for k in range(2)]
        for t in threads:
            t.start()
            time.sleep(0.05)
        for t in threads:
            t.join(30)
        own += [o for o in out if o]
        time.sleep(0.2)
    served = {pid for _, pid in own}
    check(served == set(workers), f"both workers {sorted(workers)} served janks "
          f"({sorted(served)})")
    return own


def matched(events, own):
    """The events of @own's janks (TargetTask, worker pid): each began within 20 ms of its
    jank, in its worker."""
    return [e for task, pid in own for e in events
            if e["pid"] == pid and abs(mono_to_epoch_ms(task.begin_ns) - e["begin_time"]) < 20]


def allowed(ev, err, old_workers):
    """Why an event of no jank the test made is a jank all the same, or None. Two kinds are
    real and named: an old worker's last task, which its exit after the reload's QUIT ends
    (jankwatch says "pid N exited M ms into a task"), a few ms of work made long by the wait
    for a CPU of both old workers woken at once on a busy machine; and any worker's task that
    is long only because it waited for a CPU (cause runqueue, under the threshold without it)."""
    exited = [float(m.group(1)) for m in
              (re.search(rf"pid {ev['pid']} exited (\d+) ms into a task", l) for l in err) if m]
    if ev["pid"] in old_workers and any(abs(ms - ev["wall_ms"]) <= 1 for ms in exited):
        return "an old worker's last task, ended by its exit"
    if ev["cause"] == "runqueue" and ev["wall_ms"] - ev["runq_ms"] < 150:
        return "a task long only by its wait for a CPU"
    return None


def check_events(events, own, what):
    for task, pid in own:
        near = [e for e in events if abs(mono_to_epoch_ms(task.begin_ns) - e["begin_time"]) < 20]
        mine = [e for e in near if e["pid"] == pid]
        check(len(mine) == 1, f"{what}: the jank of worker {pid} has one event with its pid "
              f"({[e['pid'] for e in near]})")
        ev = mine[0]
        check(ev["loop"] == "nginx" and ev["handler"] == "ngx_http_perl_handle_request",
              f"{what}: loop nginx, handler ngx_http_perl_handle_request ({ev['loop']}, "
              f"{ev['handler']})")
        check(matches_own(ev, task.dur_ns / 1e6),
              f"{what}: wall_ms {ev['wall_ms']} (runq {ev['runq_ms']}) within 5% of "
              f"{own_figures(task, ev)}")


logs = LogDir()
jw = start_jankwatch(["--exe", "/usr/sbin/nginx", "--set", "ignore_startup_time=3", "--all",
                      "--log-dir", logs.path, "-v"])
nginx = Nginx(workers=2)
try:
    first = nginx.workers
    wait_for(lambda: all(forked_and_watched(jw, w) for w in first), 15,
             "both workers to be watched")
    check(not any(f"pid {nginx.pid} (nginx)" in l and "watched" in l and "runs a loop" in l
                  for l in jw.err), "the master, which runs no loop, is not watched")
    wait_for(lambda: min(process_age_s(w) for w in first) >= 3.2, 10, "the workers to be 3 s old")
    own = janks_from(nginx, first)
    links = perf_fds(jw.pid)

    subprocess.run(["/usr/sbin/nginx", "-c", nginx.conf, "-p", nginx.dir, "-s", "reload"],
                   check=True, capture_output=True, timeout=30)
    # One read of the children per look (see respawned() below).
    def replaced():
        now = nginx.children()
        return len(now) == 2 and not set(now) & set(first)

    wait_for(replaced, 20, "the reload's new workers to replace the old")
    second = nginx.workers = nginx.children()
    wait_for(lambda: all(any(f"pid {w} (nginx) exited" in l for l in jw.err) for w in first),
             10, "jankwatch to forget the old workers")
    wait_for(lambda: all(forked_and_watched(jw, w) for w in second), 15,
             "the new workers to be watched")
    # Detached in the background (a uprobe's detach waits for the kernel's grace periods).
    deadline = time.monotonic() + 20
    while perf_fds(jw.pid) != links and time.monotonic() < deadline:
        time.sleep(0.1)
    check(perf_fds(jw.pid) == links, f"nothing of the old workers is left attached "
          f"({perf_fds(jw.pid)} perf event links, {links} before the reload)")
    wait_for(lambda: min(process_age_s(w) for w in second) >= 3.2, 10,
             "the new workers to be 3 s old")
    own2 = janks_from(nginx, second)
    wait_for(lambda: len(matched(json_lines(jw), own + own2)) >= len(own) + len(own2), 10,
             "an event for every jank")
    rc = stop_jankwatch(jw)
finally:
    nginx.kill()
check(rc == 0, f"jankwatch exits 0 after Ctrl-C ({rc})")
events = json_lines(jw)
check_events(events, own, "--exe, first workers")
check_events(events, own2, "--exe, after the reload")
mine = matched(events, own + own2)
others = [(e, allowed(e, jw.err, first)) for e in events if e not in mine]
for e, why in others:
    print(f"note: pid {e['pid']} ({'old' if e['pid'] in first else 'new'} worker), an event of "
          f"no jank of the test: {why}")
check(len(mine) == len(own) + len(own2) and all(why for _, why in others),
      f"one event per jank, and nothing else but real janks named ({len(mine)} for "
      f"{len(own) + len(own2)} janks; others: "
      f"{[(e['pid'], e['begin_time'], e['wall_ms'], e['runq_ms'], e['cause'], e['handler']) for e, why in others if not why]})")
check(any(l.startswith("jankwatch: processes: ") for l in jw.err),
      "the summary says which processes came and went")
logs.cleanup()

# -p MASTER: its workers now, and the one it forks when a worker dies.
nginx = Nginx(workers=2)
logs = LogDir()
try:
    wait_for(lambda: process_age_s(nginx.pid) >= 3, 10, "nginx to be 3 s old")
    jw = start_jankwatch(["-p", str(nginx.pid), "--set", "ignore_startup_time=3", "--all",
                          "--log-dir", logs.path])
    check(any(f"pid {nginx.pid} is nginx's master process" in l for l in jw.err),
          "-p MASTER: it says it watches the master's workers")
    killed = nginx.workers[0]
    os.kill(killed, signal.SIGKILL)
    # One read of the children per look: two reads could see the killed worker (a zombie)
    # counted in the first and reaped, before its replacement is forked, in the second.
    def respawned():
        now = nginx.children()
        return len(now) == 2 and killed not in now

    wait_for(respawned, 10, "the master to respawn the worker")
    old = nginx.workers
    nginx.workers = nginx.children()
    new = [w for w in nginx.workers if w not in old]
    check(len(new) == 1, f"-p MASTER: one new worker ({new})")
    wait_for(lambda: forked_and_watched(jw, new[0]), 15, "the respawned worker to be watched")
    wait_for(lambda: process_age_s(new[0]) >= 3.2, 10, "the respawned worker to be 3 s old")
    own = janks_from(nginx, nginx.workers)
    wait_for(lambda: len(matched(json_lines(jw), own)) >= len(own), 10,
             "an event for every jank")
    rc = stop_jankwatch(jw)
finally:
    nginx.kill()
check(rc == 0, f"-p MASTER: jankwatch exits 0 after Ctrl-C ({rc})")
events = json_lines(jw)
check_events(events, own, "-p MASTER")
check(any(e["pid"] == new[0] for e in events), "-p MASTER: the respawned worker's janks reported")
logs.cleanup()
print("PASS")
