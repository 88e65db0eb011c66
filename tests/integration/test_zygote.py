# SPDX-License-Identifier: GPL-2.0-only
"""--name on processes started the way Android starts apps: jw_looper --zygote is a parent that
forks a child on request (no exec); the child renames itself as an app does (its main thread's
comm the name's last 15 bytes, its argv rewritten to the name, 27 bytes) and runs jw_looper's
SurfaceFlinger-shaped loop on Debian's libutils: a 300 ms message every 700 ms.

- jankwatch --name NAME started before the parent: the child named NAME is watched once it runs
  its loop, its janks reported with bundle_name NAME (not its comm), its own pid, each within 5%
  of what it measured, stacks reaching its loop (Looper::pollOnce); a child named OTHER, whose
  comm is the same 15 bytes (only its argv differs), is not watched.
- Started after a child already has the name: found in /proc, the same.
- Children that come and go (20 in half a minute, each living 2.5 s): each is watched and each
  exit said; afterwards nothing is followed (the summary), and jankwatch holds the descriptors it
  held before the first child once its links are destroyed (a thread of its own does that, in
  the background: within 15 s)."""

from jwtest import *

require_bpf()

LOOPER = os.path.join(TARGETS, "jw_looper")
NAME = "org.jankwatch.zygote.looper"
OTHER = "com.jankwatch.zygote.looper"	# the same last 15 bytes: the same comm
SLOW = ["--ms", "300", "--every", "700"]
POLL_ONCE = "android::Looper::pollOnce(int, int*, int*, void**)"


class Zygote:
    """jw_looper --zygote: forks children on request; their lines go to files of their own."""

    def __init__(self, tmp):
        self.tmp = tmp
        # Room in its arguments for the children's names, as zygote's own command line has.
        self.p = subprocess.Popen([LOOPER, "--zygote", "x" * 64], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        self.children = []

    def fork(self, name, *opts):
        """A child named @name running the loop with @opts: (pid, the file of its lines)."""
        out = os.path.join(self.tmp, f"child-{len(self.children)}.out")
        self.p.stdin.write(f"fork {name} --out {out} {' '.join(opts)}\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline().split()
        check(len(line) == 3 and line[0] == "child" and line[2] == name,
              f"the zygote forks a child named {name} ({line})")
        pid = int(line[1])
        self.children.append(pid)
        wait_for(lambda: cmdline0(pid) == name, 10, f"child {pid} to take the name {name}")
        return pid, out

    def close(self):
        for pid in self.children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.p.stdin.close()
        self.p.wait(10)


def cmdline0(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return None


def comm(pid):
    with open(f"/proc/{pid}/comm") as f:
        return f.read().strip()


def own_tasks(path):
    with open(path) as f:
        return [TargetTask(l) for l in f if l.startswith("task ")]


def check_named_child(what, jw, events, pid, out):
    """The child @pid's janks: its name, its pid, its figures, its loop in its stacks."""
    check(any(f"pid {pid} (" in l and f"named {NAME}, runs a loop: watched" in l
              for l in jw.err), f"{what}: jankwatch says child {pid} is watched by its name")
    mine = [e for e in events if e["pid"] == pid and e["event"] == "MAIN_THREAD_JANK"]
    check(len(mine) >= 2, f"{what}: janks of child {pid} ({len(mine)})")
    tasks = own_tasks(out)
    for ev in mine:
        check(ev["bundle_name"] == NAME and ev["tid"] == pid,
              f"{what}: bundle_name {ev['bundle_name']!r} is the name, not the comm "
              f"{NAME[-15:]!r}; tid {ev['tid']}")
        check(ev["handler_class"] == "SlowHandler" and ev["loop"] == "android",
              f"{what}: the jank is SlowHandler's message on the android preset "
              f"({ev['handler_class']}, {ev['loop']})")
        task = task_of(ev, tasks, f"{what}: child {pid}'s own task of the jank")
        check(matches_own(ev, task.dur_ns / 1e6, waited_ms=task.waited_ns / 1e6),
              f"{what}: wall_ms {ev['wall_ms']} within 5% of {own_figures(task, ev)}")
        with open(ev["external_log"][0]) as f:
            log = f.read()
        check(header(log)["pid"] == str(pid), f"{what}: the stack log is child {pid}'s")
        frames = parse_tree(stack_tree(log))
        check(chain_samples(frames, ["zygote(int, char**)", "run_loop()", POLL_ONCE]) ==
              tree_samples(frames) > 0,
              f"{what}: every sample of the stack log goes through the child's loop, "
              f"forked from the zygote (zygote() <- run_loop() <- Looper::pollOnce)")


def start_named(logs):
    """jankwatch --name NAME, its janks from the children's third second, -v."""
    return start_jankwatch(["--name", NAME, "--set", "ignore_startup_time=3", "--all",
                            "--log-dir", logs.path, "-v"])


def watch_before(tmp):
    logs = LogDir()
    zyg = None
    jw = start_named(logs)
    try:
        zyg = Zygote(tmp)
        named, out = zyg.fork(NAME, *SLOW)
        other, _ = zyg.fork(OTHER, *SLOW)
        check(comm(named) == comm(other) == NAME[-15:],
              f"both children's comm is the name's last 15 bytes ({comm(named)!r}, "
              f"{comm(other)!r})")
        time.sleep(6.5)
        rc = stop_jankwatch(jw)
    finally:
        if zyg:
            zyg.close()
        jw.kill()
    check(rc == 0, f"started before the zygote: jankwatch exits 0 ({rc})")
    events = json_lines(jw)
    check_named_child("started before the zygote", jw, events, named, out)
    check(not [e for e in events if e["pid"] == other],
          f"the child named {OTHER} (its comm the same) is not reported")
    check(not any(f"pid {other} (" in l and "watched" in l and "not watched" not in l
                  for l in jw.err), f"the child named {OTHER} is not watched")
    logs.cleanup()


def watch_after(tmp):
    logs = LogDir()
    zyg = Zygote(tmp)
    jw = None
    try:
        named, out = zyg.fork(NAME, *SLOW)
        time.sleep(1)
        jw = start_named(logs)
        time.sleep(5.5)
        rc = stop_jankwatch(jw)
    finally:
        zyg.close()
        if jw:
            jw.kill()
    check(rc == 0, f"started after the child: jankwatch exits 0 ({rc})")
    check_named_child("started after the child", jw, json_lines(jw), named, out)
    logs.cleanup()


def fds_of(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def churn(tmp):
    logs = LogDir()
    zyg = None
    jw = start_named(logs)
    try:
        zyg = Zygote(tmp)
        time.sleep(0.5)
        before = fds_of(jw.pid)
        pids = []
        for _ in range(20):
            pids.append(zyg.fork(NAME, "--life", "2500", *SLOW)[0])
            time.sleep(1.5)
        wait_for(lambda: all(cmdline0(p) is None for p in pids), 10, "the children to exit")
        wait_for(lambda: all(any(f"pid {p} (" in l and "exited" in l for l in jw.err)
                             for p in pids), 10, "jankwatch to see every child exit")
        # A process's links are destroyed by a thread of jankwatch's, ~100 ms each: in a few s.
        settled = time.monotonic()
        while fds_of(jw.pid) != before and time.monotonic() - settled < 15:
            time.sleep(0.2)
        after, settled = fds_of(jw.pid), time.monotonic() - settled
        rc = stop_jankwatch(jw)
    finally:
        if zyg:
            zyg.close()
        jw.kill()
    check(rc == 0, f"churn: jankwatch exits 0 ({rc})")
    unwatched = [p for p in pids if not any(f"pid {p} (" in l and "runs a loop: watched" in l
                                            for l in jw.err)]
    check(not unwatched, f"churn: every child was watched (not: {unwatched})")
    check(after == before, f"churn: jankwatch holds {after} descriptors after the children "
          f"(and {settled:.1f} s), {before} before the first")
    summary = [l for l in jw.err if "followed now" in l]
    check(summary and summary[-1].endswith(" 0 followed now"),
          f"churn: nothing followed at the end ({summary})")
    named = [l for l in jw.err if "took a --name name" in l and "processes:" in l]
    check(named and "20 took" in named[-1], f"churn: 20 processes took the name ({named})")
    logs.cleanup()


tmp = tempfile.mkdtemp(prefix="jw-zygote-")
try:
    watch_before(tmp)
    watch_after(tmp)
    churn(tmp)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("zygote: ok")
