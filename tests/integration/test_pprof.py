# SPDX-License-Identifier: GPL-2.0-only
"""--format pprof writes, beside each stack log, a gzipped profile.proto that Go's pprof
(Debian's golang-go) reads: `pprof -top` names where a CPU jank's time went first (the leaf of
its heaviest stack) and, for a sleeping jank, the kernel function it blocked in; the samples carry
the jank's labels; the profile's wall total is the task's own time less its wait for a CPU
(runq_ms: no sample stands for it). `jankwatch export` merges a
log directory's profiles into one (all of them, a time range, a process); `jankwatch report`
summarizes the directory's events by group, also over a few hundred events."""
import gzip
import re
import subprocess

from jwtest import *

require_bpf()
GO = shutil.which("go")
if not GO:
    fail("go is missing: scripts/setup.sh installs golang-go")
PERIOD_MS = 10
SCRATCH = tempfile.mkdtemp(prefix="jw-pprof-")
GO_ENV = dict(os.environ, HOME=SCRATCH, PPROF_TMPDIR=SCRATCH, GOCACHE=SCRATCH + "/cache")


def pprof(*args):
    """`go tool pprof ARGS`: its stdout; fails the test if pprof refuses the file."""
    r = subprocess.run([GO, "tool", "pprof", *args], capture_output=True, text=True,
                       env=GO_ENV, timeout=120)
    check(r.returncode == 0, f"pprof {' '.join(args)} reads it ({r.stderr.strip()[-300:]})")
    return r.stdout


# "flat flat% sum% cum cum% name", a zero without its unit.
ROW = re.compile(r"^\s*([\d.]+)(?:ms)?\s+[\d.]+%\s+[\d.]+%\s+([\d.]+)(?:ms)?\s+[\d.]+%\s+(.+)$")


def top(path, *extra):
    """pprof -top in ms: (total ms, [(flat_ms, cum_ms, name)] by flat, largest first)."""
    out = pprof("-top", "-unit=ms", "-nodecount=500", *extra, path)
    m = re.search(r"Showing nodes accounting for ([\d.]+)ms", out)
    check(m is not None, f"pprof -top says its total ({out[:300]})")
    rows = [(float(r.group(1)), float(r.group(2)), r.group(3).strip())
            for r in map(ROW.match, out.splitlines()) if r]
    return float(m.group(1)), rows


def tags(path):
    """pprof -tags: {key: {value: share %}}. (-unit would also turn unitless numbers, pid and
    tid, into milliseconds.)"""
    out, key, got = pprof("-tags", path), None, {}
    for line in out.splitlines():
        m = re.match(r"^\s*(\w+): Total", line)
        if m:
            key = m.group(1)
            got[key] = {}
            continue
        m = re.match(r"^\s*[\d.]+\w* \(\s*([\d.]+)%\): (.+)$", line)
        if m and key:
            got[key][m.group(2).strip()] = float(m.group(1))
    return got


def watch(kind, logs):
    target = start_target(f"--{kind}", "--ms", "300", "--every", "700")
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        rc, events, err = run_jankwatch(
            ["-p", str(target.pid), "--probe", f"{TARGET}:dispatch", "--set",
             "ignore_startup_time=3", "--all", "--duration", "3.5", "--format", "pprof",
             "--log-dir", logs.path], 60)
    finally:
        target.kill()
    check(rc == 0, f"{kind}: jankwatch exits 0 ({rc})")
    check(len(events) >= 3, f"{kind}: at least 3 events ({len(events)})")
    return target, events


def profile_of(ev, kind):
    logs = ev["external_log"]
    check(len(logs) == 2 and re.search(r"/stack-\d+-\d{14}-\d{3}\.txt$", logs[0]) and
          re.search(r"/profile-\d+-\d{14}-\d{3}\.pb\.gz$", logs[1]),
          f"{kind}: the event lists its stack log, then its profile ({logs})")
    with open(logs[1], "rb") as f:
        check(f.read(2) == b"\x1f\x8b", f"{kind}: the profile is gzipped")
    return logs[1]


def check_busy(logs):
    target, events = watch("busy", logs)
    tasks = target_tasks(target)
    for ev in events:
        path = profile_of(ev, "busy")
        own = task_of(ev, tasks, "busy: the event matches one task of the target")
        own_ms = own.dur_ns / 1e6
        check(matches_own(ev, own_ms, waited_ms=own.waited_ns / 1e6),
              f"busy: wall_ms {ev['wall_ms']} (runq {ev['runq_ms']}) within 5% of "
              f"{own_figures(own, ev)}")
        total, rows = top(path)
        leaf = ev["heaviest_stack"].split("<-")[0]
        # First, or tied with the first: pprof orders equal flat times by name (CI: 120 ms in
        # [vdso]+0x7bd, listed first, and 120 in __vdso_clock_gettime, the heaviest's leaf).
        first = [r[2] for r in rows if r[0] == rows[0][0]] if rows else []
        check(leaf in first,
              f"busy: pprof -top names first where the time went, the heaviest stack's leaf "
              f"{leaf} ({rows[:3]})")
        busy = [r for r in rows if r[2] == "busy_work"]
        check(busy and busy[0][1] >= 0.9 * total,
              f"busy: busy_work holds the jank's time in pprof (cum {busy and busy[0][1]} of "
              f"{total} ms)")
        # Whole sampling periods stand for the task's time on the CPU and asleep: within one
        # period more or less. Its wait for a CPU (runq_ms: preempted, on a busy machine) has
        # no sample, on-CPU or asleep, to stand for it.
        sampled = ev["wall_ms"] - ev["runq_ms"]
        check(abs(total - sampled) <= 0.05 * sampled + PERIOD_MS,
              f"busy: the profile's wall total {total} ms is the task's time on the CPU and "
              f"asleep, {sampled:.3f} ms (wall_ms {ev['wall_ms']} less runq_ms {ev['runq_ms']})")
        t = tags(path)
        jank = os.path.basename(path)[len("profile-"):-len(".pb.gz")]
        check(list(t.get("jank", {})) == [jank] and list(t.get("cause", {})) == ["cpu"] and
              list(t.get("handler", {})) == ["dispatch"] and
              list(t.get("pid", {})) == [str(target.pid)],
              f"busy: every sample is labelled with its jank {jank}, cause, handler, pid ({t})")
    return events


def sched_text():
    """The kernel's scheduler functions (those in __sched_text, as /proc/PID/wchan skips them)."""
    addr, lo, hi = {}, None, None
    with open("/proc/kallsyms") as f:
        for line in f:
            a, _, name = line.split()[:3]
            addr.setdefault(name, int(a, 16))
    lo, hi = addr.get("__sched_text_start"), addr.get("__sched_text_end")
    check(lo and hi, "/proc/kallsyms shows the scheduler text's bounds")
    return {name for name, a in addr.items() if lo <= a < hi}


def check_sleep(logs):
    sched = sched_text()
    target, events = watch("sleep", logs)
    for ev in events:
        path = profile_of(ev, "sleep")
        # A switch out the kernel kept from tracing leaves no stack of the sleep (a switch in
        # kept from it still sends the one seen going to sleep): an empty profile, said.
        if ev.get("offcpu_partial") and not ev["samples"]:
            print(f"note: sleep: a switch out the kernel kept from tracing: {json.dumps(ev)}")
            continue
        total, rows = top(path)
        stack = ev["heaviest_stack"].split("<-")
        first = rows[0][2] if rows else None
        # The scheduler's own frames are left out: the leaf is the function that slept.
        check(first in stack and all(f in sched for f in stack[:stack.index(first)]) and
              first not in sched,
              f"sleep: pprof -top names first the kernel function it blocked in ({first}; "
              f"heaviest stack {ev['heaviest_stack']})")
        off, _ = top(path, "-sample_index=off_cpu")
        check(abs(off - ev["blocked_ms"]) <= 0.05 * ev["blocked_ms"] + PERIOD_MS,
              f"sleep: the off_cpu total {off} ms is the event's blocked_ms {ev['blocked_ms']}")
        sampled = ev["wall_ms"] - ev["runq_ms"]
        check(abs(total - sampled) <= 0.05 * sampled + PERIOD_MS,
              f"sleep: the wall total {total} ms is the event's wall_ms {ev['wall_ms']} less "
              f"its runq_ms {ev['runq_ms']}")
    return events


def export(logs, *extra):
    out = os.path.join(SCRATCH, "merged.pb.gz")
    r = subprocess.run([JW_BIN, "export", "--format", "pprof", logs.path, "-o", out, *extra],
                       capture_output=True, text=True, timeout=60)
    return r, out


def check_export(logs, busy, sleep):
    events = busy + sleep
    r, out = export(logs)
    check(r.returncode == 0 and f"{len(events)} profiles merged" in r.stderr,
          f"export merges the {len(events)} profiles ({r.returncode}: {r.stderr.strip()})")
    total, rows = top(out)
    # Each profile's wall is its event's time on the CPU and asleep, its run-queue time left out
    # (check_busy(), check_sleep()): so is the merged one's.
    want = sum(ev["wall_ms"] - ev["runq_ms"] for ev in events)
    check(abs(total - want) <= 0.05 * want + PERIOD_MS * len(events),
          f"export: the merged wall total {total} ms is the events' wall_ms less their runq_ms, "
          f"{want:.3f} ms")
    t = tags(out)
    check(len(t.get("jank", {})) == len(events) and set(t.get("cause", {})) == {"cpu", "blocked"},
          f"export: one jank label per event, both causes ({t.get('jank')}, {t.get('cause')})")
    # --since the first sleeping jank: the busy ones are left out.
    since = min(ev["begin_time"] for ev in sleep)
    r, out = export(logs, "--since", f"@{since // 1000}")
    t = tags(out) if r.returncode == 0 else {}
    check(r.returncode == 0 and set(t.get("cause", {})) == {"blocked"},
          f"export --since: only the janks that began from then ({r.stderr.strip()}; {t})")
    r, out = export(logs, "--pid", str(busy[0]["pid"]))
    t = tags(out) if r.returncode == 0 else {}
    check(r.returncode == 0 and set(t.get("cause", {})) == {"cpu"},
          f"export --pid: only that process's ({r.stderr.strip()})")
    # A damaged profile is skipped with one line; the others are merged.
    with open(os.path.join(logs.path, "profile-1-20260101000000-000.pb.gz"), "wb") as f:
        f.write(gzip.compress(b"not a profile")[:-4])
    r, out = export(logs)
    check(r.returncode == 0 and "skipped" in r.stderr and f"{len(events)} profiles merged"
          in r.stderr, f"export skips a damaged profile, says so ({r.stderr.strip()})")
    os.unlink(os.path.join(logs.path, "profile-1-20260101000000-000.pb.gz"))
    r, _ = export(logs, "--until", "2000-01-01")
    check(r.returncode == 1 and "no profile" in r.stderr,
          f"export with nothing in range: one line, exit 1 ({r.stderr.strip()})")


def report(path, *extra):
    r = subprocess.run([JW_BIN, "report", path, *extra], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 0, f"report {' '.join(extra)} exits 0 ({r.stderr.strip()})")
    return r.stdout


def check_report(logs, busy, sleep):
    rep = json.loads(report(logs.path, "--json"))
    groups = {g["group"]: g for g in rep["groups"]}
    check(rep["janks"] == len(busy) + len(sleep) and len(groups) == 2,
          f"report: {len(busy) + len(sleep)} janks in 2 groups ({rep['janks']}, {list(groups)})")
    for evs, cause in ((busy, "cpu"), (sleep, "blocked")):
        g = groups.get(evs[0]["group"])
        walls = sorted(ev["wall_ms"] for ev in evs)
        check(g and g["janks"] == len(evs) and g["cause"][cause] == len(evs) and
              abs(g["wall_ms"]["max"] - walls[-1]) < 0.001 and
              abs(g["wall_ms"]["p50"] - walls[(len(walls) + 1) // 2 - 1]) < 0.001 and
              g["handler"] == "dispatch" and g["files_written"] == len(evs),
              f"report: the {cause} group's count, max, median, handler and files ({g}; "
              f"walls {walls})")
    text = report(logs.path)
    check(f"{len(busy) + len(sleep)} janks, 0 hangs in 2 groups" in text and
          "#1 jw_target: " in text and "heaviest " in text,
          f"report: the text summary ({text[:400]})")
    # A few hundred events, as a device's log directory holds after a while, three groups, some
    # of them withheld; and a damaged line.
    many = LogDir()
    with open(os.path.join(many.path, "events.jsonl"), "w") as f:
        for i in range(600):
            ev = dict((busy + sleep)[i % len(busy + sleep)])
            ev["pid"] = 1000 + i % 3
            ev["bundle_name"] = ["app", "app", "other"][i % 3]
            ev["wall_ms"] = 100 + i
            if i % 4:
                ev["external_log"], ev["withheld"] = [], "back_off"
            f.write(json.dumps(ev) + "\n")
        f.write('{"event":"MAIN_THREAD_JANK","wall_ms":\n')
    t0 = time.monotonic()
    rep = json.loads(report(many.path, "--json", "--top", "0"))
    took = time.monotonic() - t0
    check(rep["janks"] == 600 and rep["bad_lines"] == 1 and rep["withheld"]["back_off"] == 450 and
          rep["files_written"] == 150 and rep["groups_total"] == 4,
          f"report: 600 events in 4 groups, 450 withheld by the back-off, the damaged line "
          f"counted ({ {k: rep[k] for k in ('janks', 'bad_lines', 'groups_total')} })")
    print(f"note: report read 600 events in {took * 1000:.0f} ms")
    many.cleanup()
    r = subprocess.run([JW_BIN, "report", "/nonexistent"], capture_output=True, text=True)
    check(r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1,
          f"report on a missing directory: one line, exit 1 ({r.stderr.strip()})")


logs = LogDir()
busy = check_busy(logs)
sleep = check_sleep(logs)
check_export(logs, busy, sleep)
check_report(logs, busy, sleep)
logs.cleanup()
shutil.rmtree(SCRATCH, ignore_errors=True)
print("PASS")
