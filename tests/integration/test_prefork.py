# SPDX-License-Identifier: GPL-2.0-only
"""Pre-fork workers: Debian's gunicorn (a python3.11 master forking 2 sync workers) serving
tests/targets/prefork_app.py, whose /jank?ms=N busy-loops in the worker and answers what it
measured and the worker's pid. `--exe` with gunicorn's interpreter, started before gunicorn: the
master is watched as it execs, each worker as its fork starts waiting, with its own pid; every jank
past the start-up window is one event of the worker that served it, wall_ms within 5% of the app's
own (from its worker's wait's return, where the task begins); both workers' janks are reported;
they are said to exit with gunicorn. `-p MASTER --follow` attached to a running gunicorn: a worker
killed and respawned by the master is watched with its new pid and its janks reported; the worker
forked before jankwatch is not watched (children started later). jankwatch exits 0 after Ctrl-C
both times."""
import subprocess
import threading

from jwtest import *

require_bpf()
GUNICORN = "/usr/bin/gunicorn"
if not os.path.exists(GUNICORN):
    fail(f"{GUNICORN} is not installed (scripts/setup.sh installs Debian's gunicorn)")
APP_DIR = os.path.realpath(os.path.join(os.environ.get("JW_SRC", "."), "tests/targets"))
STARTUP_S = 3
JANK_MS = 300
WARM_MS = 100   # a request's CPU time, at least: events of less are the loop's own work
# The second request of a pair comes this much later, well within the first one's busy loop (a
# sync worker that finishes accepts again before it waits) and far enough for the events' begin
# times (matched within 20 ms) to tell the two apart.
STAGGER_S = {JANK_MS: 0.1}
PAIRS = 3
SUMMARY = re.compile(r"processes: (\d+) forked and (\d+) execs seen, (\d+) watched, (\d+) "
                     r"exited \((\d+) of them never ran a loop\), (\d+) followed now")


def interpreter():
    """The file gunicorn runs as: the real path of the interpreter its shebang names."""
    with open(GUNICORN) as f:
        line = f.readline()
    if not line.startswith("#!"):
        fail(f"{GUNICORN} has no shebang: {line!r}")
    return os.path.realpath(line[2:].split()[0])


class Reply:
    """What /jank answered: the app's own measurement (a TargetTask) and the worker's pid."""

    def __init__(self, ms, body):
        lines = (body or "").splitlines()
        if len(lines) != 2 or not lines[0].startswith("task ") or not lines[1].startswith("pid "):
            fail(f"/jank?ms={ms} answered {body!r}")
        self.ms, self.task, self.pid = ms, TargetTask(lines[0]), int(lines[1].split()[1])


class Gunicorn:
    """Debian's gunicorn with 2 sync workers on a free loopback port, serving prefork_app."""

    def __init__(self):
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if k != "GUNICORN_CMD_ARGS"}
        self.proc = Proc([GUNICORN, "--workers", "2", "--worker-class", "sync", "--bind",
                          f"127.0.0.1:{self.port}", "--timeout", "120", "--chdir", APP_DIR,
                          "--config", "/dev/null", "prefork_app:app"], env=env)
        self.pid = self.proc.pid
        self.seen = set()
        try:
            wait_for(lambda: self.get("/") == "ok" or self.proc.p.poll() is not None, 30,
                     "gunicorn to answer")
            if self.proc.p.poll() is not None:
                fail("gunicorn exited: " + "\n".join(self.proc.err))
            self.wait_workers(lambda w: len(w) == 2, "gunicorn's 2 workers")
        except BaseException:
            self.kill()
            raise

    def workers(self):
        pids = children_of(self.pid)
        self.seen.update(pids)
        return pids

    def wait_workers(self, cond, what):
        wait_for(lambda: cond(self.workers()), 30, what)
        return self.workers()

    def get(self, path, timeout=30):
        """The body @path answers, None on a socket error. From a thread of its own: a socket
        with a timeout waits in poll(), and this process's main thread must never wait there
        (--exe on python3.11 would take this process for one that runs a loop)."""
        got = [None]

        def fetch():
            got[0] = http_get(self.port, path, timeout)

        t = threading.Thread(target=fetch)
        t.start()
        t.join(timeout + 5)
        return got[0]

    def pair(self, ms, replies):
        """Two /jank?ms=@ms requests at once, STAGGER_S[ms] apart: the first keeps one worker
        busy, so the other worker serves the second."""
        got = [None, None]

        def one(i):
            got[i] = self.get(f"/jank?ms={ms}")

        threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
        threads[0].start()
        time.sleep(STAGGER_S[ms])
        threads[1].start()
        for t in threads:
            t.join(60)
        pair = [Reply(ms, body) for body in got]
        replies.extend(pair)
        check(pair[0].pid != pair[1].pid,
              f"a pair of /jank?ms={ms} is served by both workers ({pair[0].pid}, {pair[1].pid})")

    def kill(self):
        # TERM: the master stops its workers (a killed master would leave them running).
        if self.proc.p.poll() is None:
            self.proc.p.terminate()
            try:
                self.proc.p.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        for w in self.seen:
            try:
                os.kill(w, signal.SIGKILL)
            except ProcessLookupError:
                pass


def end(jw):
    """A jankwatch left running by a failed check: Ctrl-C (it cleans up), SIGKILL if it hangs."""
    if jw.p.poll() is None:
        jw.p.send_signal(signal.SIGINT)
        try:
            jw.p.wait(30)
        except subprocess.TimeoutExpired:
            jw.kill()
        time.sleep(0.2)   # the last lines of its stderr
        print("\n".join(jw.err), file=sys.stderr)


def watched(jw, pid):
    return any(f"pid {pid} (" in l and "runs a loop: watched" in l for l in jw.err)


def make_janks(g, workers):
    """Janks once @workers are past the start-up window. No warm-up: each worker was watched
    while it sat in a wait entered before its probes, and the task that wait's end begins (its
    first request here) must be reported too."""
    wait_for(lambda: all(process_age_s(w) >= STARTUP_S + 0.3 for w in workers), 10,
             f"the workers {workers} to be {STARTUP_S} s old")
    warm = []
    janks = []
    for _ in range(PAIRS):
        g.pair(JANK_MS, janks)
    return warm, janks


def near(events, reply):
    """The events that began within 20 ms of what the app measured for @reply."""
    return [e for e in events
            if abs(mono_to_epoch_ms(reply.task.begin_ns) - e["begin_time"]) < 20]


def await_events(jw, janks, watched_pids, timeout=10):
    """Until an event has come for each jank a watched worker served (a task's event comes when
    its loop waits again, after the reply), or @timeout s: check_janks says what is missing."""
    deadline = time.monotonic() + timeout
    mine = [r for r in janks if r.pid in watched_pids]
    while time.monotonic() < deadline and jw.p.poll() is None:
        events = json_lines(jw)
        if all(near(events, r) for r in mine):
            return
        time.sleep(0.05)


def check_janks(what, events, tree, warm, janks, watched_pids, stopped_ms=None):
    """Each jank a watched worker served: exactly one event of the gunicorn tree within 20 ms of
    its beginning, with that worker's pid, wall_ms within 5% of the app's own. Janks of a
    worker that is not watched: none. Every event of a watched worker that spent a request's CPU
    time, and began before gunicorn was told to stop (@stopped_ms, epoch ms), is a request it
    served."""
    mine = [e for e in events if e["pid"] in tree]
    for r in janks:
        found = near(mine, r)
        if r.pid not in watched_pids:
            check(not found, f"{what}: the jank of unwatched worker {r.pid} has no event "
                  f"({[e['pid'] for e in found]})")
            continue
        seen = [(e["pid"], e["begin_time"], e["wall_ms"], e["cpu_ms"], e["handler"])
                for e in found]
        check(len(found) == 1, f"{what}: the jank worker {r.pid} served has one event "
              f"({seen}; the app's began at {mono_to_epoch_ms(r.task.begin_ns):.0f})")
        ev = found[0]
        check(ev["pid"] == r.pid, f"{what}: the event has the pid of the worker that served it "
              f"({ev['pid']}, served by {r.pid})")
        own_ms = r.task.dur_ns / 1e6
        check(matches_own(ev, own_ms, waited_ms=r.task.waited_ns / 1e6),
              f"{what}: wall_ms {ev['wall_ms']} (runq {ev['runq_ms']}) within 5% of "
              f"{own_figures(r.task, ev)}")
        check(ev["bundle_name"] == "gunicorn", f"{what}: bundle_name {ev['bundle_name']}")
    # An event is one of the requests when what the app measured lies within the event's task.
    # On a busy machine the loop's own short work can also wait past the threshold for a CPU:
    # only a worker's events with the CPU time of a request (50 ms at least) must be requests
    # (the master's loop is none of the app's).
    # A worker told to stop wakes from its wait and runs its exit (gunicorn's handlers, Python's
    # finalization: 353 ms of CPU once in CI) as one last task, which no request made.
    requests = warm + janks
    for ev in mine:
        if ev["pid"] not in watched_pids or ev["cpu_ms"] < WARM_MS / 2:
            continue
        if stopped_ms is not None and ev["begin_time"] >= stopped_ms:
            print(f"note: {what}: pid {ev['pid']}'s exit after gunicorn was told to stop, "
                  f"{ev['begin_time'] - stopped_ms:.0f} ms after: {ev['wall_ms']} ms, cpu "
                  f"{ev['cpu_ms']}, {ev['handler']}")
            continue
        within = [r for r in requests
                  if ev["begin_time"] - 5 <= mono_to_epoch_ms(r.task.begin_ns) and
                  mono_to_epoch_ms(r.task.begin_ns + r.task.dur_ns) <= ev["end_time"] + 5]
        check(any(r.pid == ev["pid"] for r in within),
              f"{what}: the event of pid {ev['pid']} at {ev['begin_time']} ({ev['wall_ms']} ms, "
              f"cpu {ev['cpu_ms']}, runq {ev['runq_ms']}, {ev['handler']}) is a request that "
              f"worker served (its requests, from the event's beginning: " +
              ", ".join(f"{mono_to_epoch_ms(r.task.begin_ns) - ev['begin_time']:.0f} ms for "
                        f"{r.task.dur_ns / 1e6:.0f} ms" for r in requests if r.pid == ev["pid"]) +
              ")")


def summary(jw, what):
    lines = [m for m in (SUMMARY.search(l) for l in jw.err) if m]
    check(len(lines) == 1, f"{what}: one processes summary line at exit ({len(lines)})")
    return [int(x) for x in lines[0].groups()]


def exe_variant(exe):
    """--exe on gunicorn's interpreter, gunicorn started afterwards."""
    logs = LogDir()
    jw = start_jankwatch(["--exe", exe, "--set", f"ignore_startup_time={STARTUP_S}", "--all",
                          "--log-dir", logs.path, "-v"])
    g = None
    try:
        g = Gunicorn()
        workers = g.workers()
        check(os.path.realpath(f"/proc/{g.pid}/exe") == exe,
              f"--exe: gunicorn's master runs {exe}")
        wait_for(lambda: all(watched(jw, p) for p in [g.pid, *workers]), 30,
                 f"jankwatch to watch the master {g.pid} and the workers {workers}")
        check(all(forked_and_watched(jw, w) for w in workers),
              "--exe: each worker is watched as a fork of a followed process")
        warm, janks = make_janks(g, workers)
        served = {r.pid for r in janks}
        check(served == set(workers), f"--exe: both workers served janks ({served})")
        await_events(jw, janks, set(workers))
        # Gunicorn stops: its workers and master exit, and jankwatch says so.
        master = g.pid
        stopped_ms = time.time() * 1000
        g.proc.p.terminate()
        check(g.proc.wait(30) == 0, "--exe: gunicorn stops on SIGTERM")
        wait_for(lambda: all(any(f"pid {p} (gunicorn) exited" in l for l in jw.err)
                             for p in [master, *workers]), 10,
                 "jankwatch to say the master and the workers exited")
        rc = stop_jankwatch(jw)
    finally:
        end(jw)
        if g:
            g.kill()
    check(rc == 0, f"--exe: jankwatch exits 0 after Ctrl-C ({rc})")
    events = json_lines(jw)
    check_janks("--exe", events, {master, *workers}, warm, janks, set(workers), stopped_ms)
    pids = {e["pid"] for e in events if e["pid"] in workers}
    check(len(pids) >= 2, f"--exe: events from both workers ({sorted(pids)})")
    forked, execs, nwatched, exited, _, _ = summary(jw, "--exe")
    check(forked >= 2 and execs >= 1 and nwatched >= 3 and exited >= 3,
          f"--exe: the summary counts gunicorn's exec, 2 forks, 3 watched, 3 exits "
          f"({forked} forked, {execs} execs, {nwatched} watched, {exited} exited)")
    logs.cleanup()


def follow_variant():
    """-p MASTER --follow on a running gunicorn; a worker killed, the master respawns it."""
    logs = LogDir()
    g = Gunicorn()
    jw = None
    try:
        old = g.workers()
        jw = start_jankwatch(["-p", str(g.pid), "--follow", "--set",
                              f"ignore_startup_time={STARTUP_S}", "--all", "--log-dir",
                              logs.path, "-v"])
        os.kill(old[0], signal.SIGKILL)
        workers = g.wait_workers(lambda w: len(w) == 2 and old[0] not in w and old[1] in w,
                                 "the master to respawn the killed worker")
        new = [w for w in workers if w not in old][0]
        wait_for(lambda: watched(jw, new), 30, f"jankwatch to watch the new worker {new}")
        check(forked_and_watched(jw, new), "--follow: the new worker is watched as a fork")
        warm, janks = make_janks(g, workers)
        served = {r.pid for r in janks}
        check(served == set(workers), f"--follow: both workers served janks ({served})")
        await_events(jw, janks, {new})
        rc = stop_jankwatch(jw)
    finally:
        if jw:
            end(jw)
        g.kill()
    check(rc == 0, f"--follow: jankwatch exits 0 after Ctrl-C ({rc})")
    check(not watched(jw, old[1]), f"--follow: the worker forked before jankwatch ({old[1]}) "
          "is not watched")
    events = json_lines(jw)
    check_janks("--follow", events, {g.pid, old[1], new}, warm, janks, {new})
    check(any(e["pid"] == new for e in events), f"--follow: events of the new worker {new}")
    forked, _, nwatched, _, _, _ = summary(jw, "--follow")
    check(forked >= 1 and nwatched >= 2,
          f"--follow: the summary counts the respawn's fork, the master and the new worker "
          f"watched ({forked} forked, {nwatched} watched)")
    logs.cleanup()


exe_variant(interpreter())
follow_variant()
print("PASS")
