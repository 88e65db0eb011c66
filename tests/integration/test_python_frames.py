# SPDX-License-Identifier: GPL-2.0-only
"""Python janks in Python's words, on CPython 3.11 to 3.14: Debian 12's python3.11, pyenv's 3.12
and 3.13 (shared libpython, no PGO), Debian 13's python3.13 and Debian unstable's python3.14
(each from its own archive, in a root scripts/pyroot.sh makes: PGO builds that split
_PyEval_EvalFrameDefault in two). An asyncio program (asyncio_busy.py) whose call_later timer,
on_timer, calls busy_work for 300 ms every second, ~60 ms late behind another callback (hog,
120 ms: no jank), beside a 50 ms ticker (on_light) that the jank makes ~250 ms late:
- every event's handler is "on_timer FILE:LINE";
- at least 90% of each jank's samples run busy_work, at a line of its body, under on_timer, in its
  stack log; `go tool pprof -top` of its profile lists busy_work;
- on_timer's and on_light's statistics rows have their lateness: max_delay_millis within 10% of
  the program's own largest (read from the caller's frame through the thread state; the frame's
  own link to it is not set yet at the probe, which gave nothing on 3.12 and later).
Then, on Debian's 3.11 and unstable's 3.14: two slow functions in one program are two groups, and
a callback asleep in time.sleep shows that Python line in its asleep stack."""
import csv
import glob
import re
import subprocess

from jwtest import *

require_bpf()
SRC = os.environ.get("JW_SRC", ".")
TARGETS = os.path.join(SRC, "tests/targets")
SCRIPT = os.path.realpath(os.path.join(TARGETS, "asyncio_busy.py"))
PYROOT = os.path.join(SRC, "scripts/pyroot.sh")
GO = shutil.which("go")
if not GO:
    fail("go is missing: scripts/setup.sh installs golang-go")
SCRATCH = tempfile.mkdtemp(prefix="jw-pyframes-")
GO_ENV = dict(os.environ, HOME=SCRATCH, PPROF_TMPDIR=SCRATCH, GOCACHE=SCRATCH + "/cache")
WATCH_S = 6


def def_line(name):
    for i, line in enumerate(open(SCRIPT), 1):
        if re.match(rf"(async )?def {name}\(", line):
            return i
    fail(f"{name} not in {SCRIPT}")


def body_lines(name):
    """The lines of function @name's body (to the next blank line)."""
    lines, first = open(SCRIPT).read().splitlines(), def_line(name)
    last = first
    while last < len(lines) and lines[last].strip():
        last += 1
    return range(first + 1, last + 1)


def interpreters():
    """(label, command prefix, the script's path as the program sees it)."""
    out = [("Debian 3.11", ["/usr/bin/python3.11"], SCRIPT)]
    for minor in (12, 13):
        found = sorted(glob.glob(f"/root/.pyenv/versions/3.{minor}.*/bin/python3.{minor}"))
        if not found:
            fail(f"no pyenv python3.{minor} on this machine (/root/.pyenv/versions)")
        out.append((f"pyenv 3.{minor}", [found[-1]], SCRIPT))
    for ver, where in (("3.13", "Debian 13"), ("3.14", "unstable")):
        r = subprocess.run([PYROOT, ver], capture_output=True, text=True, timeout=900)
        if r.returncode:
            fail(f"scripts/pyroot.sh {ver}: {r.stderr.strip()[-400:]}")
        out.append((f"{where} {ver}", [PYROOT, "--run", ver, "--bind", f"{TARGETS}:/jw", "--",
                                       f"python{ver}"], "/jw/asyncio_busy.py"))
    return out


# Tree lines: "N #DD pc ..." (native, kernel) and "N #DD at NAME (FILE:LINE)" (Python, JIT).
LINE = re.compile(r"^( *)(\d+) #(\d{2,}) (?:at (.+) \((.+):(\d+)\)|(.*))$")


def python_tree(text):
    """A stack log's tree as (count, depth, qualname or None, file, line, parent index)."""
    nodes, path = [], []
    for line in text.split("\n\n", 1)[1].splitlines():
        m = LINE.match(line)
        if not m:
            fail(f"not a frame line: {line!r}")
        depth = int(m.group(3))
        del path[depth:]
        nodes.append((int(m.group(2)), depth, m.group(4), m.group(5),
                      int(m.group(6)) if m.group(6) else 0, path[-1] if path else None))
        path.append(len(nodes) - 1)
    return nodes


def samples_in(nodes, func, under, file, lines):
    """Samples running @func (at one of @lines of @file) with @under among its callers: the
    counts of the outermost such frames."""
    total = 0
    for i, (count, _, name, f, line, parent) in enumerate(nodes):
        if name != func or f != file or line not in lines:
            continue
        callers, p = [], parent
        while p is not None:
            callers.append(nodes[p][2])
            p = nodes[p][5]
        if under in callers and func not in callers:
            total += count
    return total


class Window:
    """When jankwatch watched (time.monotonic()): started, said ready, was told to stop,
    exited. A run of the program between ready and stop, 0.2 s inside, was surely seen; one
    outside started..exited surely not."""

    def __init__(self, started, ready, stop, exited):
        self.started, self.ready, self.stop, self.exited = started, ready, stop, exited

    def surely_seen(self, t):
        return self.ready + 0.2 <= t <= self.stop - 0.2

    def maybe_seen(self, t):
        return self.started <= t <= self.exited


def watch(label, cmd, script, args, logs, fmt="tree,pprof", extra=()):
    target = Proc(cmd + [script] + args)
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 30, f"{label}: the target to be 3 s old")
        started = time.monotonic()
        jw = start_jankwatch(["-p", str(target.pid), "--set", "ignore_startup_time=3", "--all",
                              "--log-dir", logs.path, "--format", fmt, *extra])
        ready = time.monotonic()
        time.sleep(WATCH_S)
        stop = time.monotonic()
        rc = stop_jankwatch(jw, 90)
        window = Window(started, ready, stop, time.monotonic())
    finally:
        target.kill()
    check(rc == 0, f"{label}: jankwatch exits 0 ({rc}): {jw.err[-5:]}")
    check(any("loop python (auto: " in l and "Python frames in the stacks" in l for l in jw.err),
          f"{label}: it reads Python frames ({[l for l in jw.err if 'loop' in l]})")
    return target, json_lines(jw), window


def pprof_top(path):
    r = subprocess.run([GO, "tool", "pprof", "-top", "-nodecount=200", path],
                       capture_output=True, text=True, env=GO_ENV, timeout=120)
    check(r.returncode == 0, f"pprof -top reads {path} ({r.stderr.strip()[-300:]})")
    return r.stdout


def check_interpreter(label, cmd, script):
    logs = LogDir()
    target, events, window = watch(
        label, cmd, script, ["--light", "50", "--late", "60", "--every", "1000", "--ms", "300"],
        logs)
    check(len(events) >= 3, f"{label}: at least 3 janks ({len(events)})")
    handler = f"on_timer {script}:{def_line('on_timer')}"
    busy = body_lines("busy_work")
    for ev in events:
        check(ev["handler"] == handler, f"{label}: the handler is {handler} ({ev['handler']})")
        check(ev["group"] == "busy_work<-one_task",
              f"{label}: the group is the program's two innermost functions ({ev['group']})")
        stack = [p for p in ev["external_log"] if "/stack-" in p]
        check(len(stack) == 1, f"{label}: a stack log ({ev['external_log']})")
        with open(stack[0]) as f:
            text = f.read()
        nodes = python_tree(text)
        total = sum(n[0] for n in nodes if n[1] == 0)
        mine = samples_in(nodes, "busy_work", "on_timer", script, busy)
        check(total > 0 and mine >= 0.9 * total,
              f"{label}: {mine} of {total} samples run busy_work at a line of its body "
              f"({script}:{busy.start}-{busy.stop - 1}) under on_timer, at least 90%")
        profile = [p for p in ev["external_log"] if p.endswith(".pb.gz")]
        check(len(profile) == 1, f"{label}: a profile ({ev['external_log']})")
        top = pprof_top(profile[0])
        check(re.search(r"\sbusy_work$", top, re.M) is not None,
              f"{label}: pprof -top lists busy_work ({top[-600:]})")
    with open(os.path.join(logs.path, "stats.csv")) as f:
        rows = list(csv.DictReader(f))
    for name, what in (("on_light", "tick"), ("on_timer", "timer")):
        mine = [r for r in rows if r["message_name"].split()[0] == name]
        check(len(mine) == 1, f"{label}: one row of {name} ({len(mine)})")
        runs = [(int(m.group(1)) / 1e6, int(m.group(2)) / 1e9) for m in
                (re.match(rf"{what} \d+ late (\d+) at (\d+)$", l) for l in list(target.out))
                if m]
        # The largest lateness of the runs jankwatch surely saw, and of those it may have seen.
        seen = max([late for late, at in runs if window.surely_seen(at)], default=0)
        maybe = max([late for late, at in runs if window.maybe_seen(at)], default=0)
        got = int(mine[0]["max_delay_millis"])
        check(seen > 40 and 0.9 * seen <= got <= 1.1 * maybe,
              f"{label}: {name}'s max_delay_millis {got} within 10% of the program's own "
              f"largest lateness while watched: {seen:.3f} ms (surely seen) to {maybe:.3f} ms "
              f"(maybe seen; {max([l for l, _ in runs], default=0):.3f} in its whole run)")
    logs.cleanup()


def check_two_groups(label, cmd, script):
    """Also recorded raw: `jankwatch symbolize` writes the same stack logs from it, the
    Python frames named by what the capture recorded."""
    logs, again = LogDir(), LogDir()
    raw = os.path.join(logs.path, "py.raw")
    _, events, _ = watch(label, cmd, script, ["--alternate", "--every", "700", "--ms", "300"],
                         logs, "tree", ("--raw", raw))
    groups = {ev["group"] for ev in events}
    check(len(events) >= 4 and groups == {"busy_work<-one_task", "busy_other<-one_task"},
          f"{label}: two slow functions, two groups ({len(events)} janks: {sorted(groups)})")
    p = subprocess.run([JW_BIN, "symbolize", raw, "--log-dir", again.path],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"{label}: symbolize exits 0 ({p.stderr.strip()[-300:]})")
    for ev in events:
        path = next(p for p in ev["external_log"] if "/stack-" in p)
        with open(path) as f, open(os.path.join(again.path, os.path.basename(path))) as g:
            live, offline = f.read(), g.read()
        check(" at busy_" in offline and
              live.split("\n\n", 1)[1] == offline.split("\n\n", 1)[1],
              f"{label}: {os.path.basename(path)} symbolized offline is the live one, Python "
              f"frames included")
    logs.cleanup()
    again.cleanup()


def check_sleep(label, cmd, script):
    logs = LogDir()
    _, events, _ = watch(label, cmd, script, ["--sleep", "--every", "700", "--ms", "300"], logs,
                         "tree")
    check(len(events) >= 3, f"{label}: at least 3 sleeping janks ({len(events)})")
    sleep_line = next(i for i, l in enumerate(open(SCRIPT), 1) if "time.sleep(args.ms" in l)
    for ev in events:
        check(ev["cause"] == "blocked", f"{label}: a sleeping jank ({ev['cause']}, "
              f"offcpu_partial {split_hidden(ev)})")
        if split_hidden(ev):
            check(ev["wall_ms"] >= 290, f"{label}: a sleeping jank with a switch the kernel kept "
                  f"from tracing (offcpu_partial): where it slept not known ({ev['wall_ms']} ms)")
            continue
        with open(next(p for p in ev["external_log"] if "/stack-" in p)) as f:
            nodes = python_tree(f.read())
        total = sum(n[0] for n in nodes if n[1] == 0)
        asleep = samples_in(nodes, "one_task", "on_timer", script, [sleep_line])
        check(asleep >= 0.9 * total,
              f"{label}: {asleep} of {total} samples asleep at {script}:{sleep_line} "
              f"(time.sleep) in one_task under on_timer")
    logs.cleanup()


found = interpreters()
for label, cmd, script in found:
    check_interpreter(label, cmd, script)
for label, cmd, script in (found[0], found[-1]):
    check_two_groups(label, cmd, script)
    check_sleep(label, cmd, script)
print("PASS")
