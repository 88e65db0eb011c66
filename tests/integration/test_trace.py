# SPDX-License-Identifier: GPL-2.0-only
"""Trace logs of long janks, on tests/targets/jw_glib (a GLib loop whose on_tick() spins 600 ms
every 2 s, and whose on_light() returns at once every 100 ms), watched with no --probe (the glib
preset).

(a) A 600 ms jank (over trace_threshold_ms, 450) gets a trace: its event lists a .ftrace and a
    .perf.txt file. Every line of the .ftrace file matches Perfetto's systrace line grammar
    (the tokenizer's regular expression, both the 2020 and the current one) and its fields parse
    as Perfetto's parser reads them; it holds the task's slice B|pid|H:on_tick ... E|pid| with
    the duration the program measured itself (within 5%), starting at the task's true start,
    and the scheduler events of the window (sched_switch and sched_waking lines of the target's
    thread); the window opened while the task ran covers about 3 s. The .perf.txt file holds the
    window's samples in perf script text, the task's from its start, naming busy_work and
    on_tick.
(b) With --set flight_recorder_s=2 the trace also shows the seconds before the jank: the light
    tasks' slices and switches from about 2 s before the crossing, and none from earlier.
"""
from jwtest import *

GLIB = os.path.join(TARGETS, "jw_glib")
JANK_MS = 600
LIGHT_MS = 100
# Perfetto's systrace line tokenizer (src/trace_processor/importers/systrace/
# systrace_line_tokenizer.cc): the 2020 expression and the current one.
GRAMMARS = [
    re.compile(r"-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*[a-zA-Z0-9.]{0,4}\s+(\d+\.\d+):\s+(\S+):"),
    re.compile(r"-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*(?:[a-zA-Z.]{3}[0-9a-f.]{1,2}\s*)?"
               r"(\d+\.\d+):\s+(\S+):"),
]
SWITCH_KEYS = ["prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid",
               "next_prio"]
WAKING_KEYS = ["comm", "pid", "prio", "target_cpu"]
SAMPLE = re.compile(r"^\S+ \d+ \d+\.\d{6}: 1 cpu-clock:$")
FRAME = re.compile(r"^\t *[0-9a-f]+ \S.* \([^\s()]+\)$")


class Line:
    def __init__(self, text):
        for g in GRAMMARS:
            m = g.search(text)
            if not m:
                fail(f"not Perfetto's systrace grammar: {text!r}")
        self.text = text
        self.tid = int(m.group(1))
        self.ts = float(m.group(4))
        self.event = m.group(5)
        self.rest = text[m.end():].strip()
        if self.event in ("sched_switch", "sched_waking"):
            fields = dict(kv.split("=", 1) for kv in self.rest.replace("==> ", "").split())
            keys = SWITCH_KEYS if self.event == "sched_switch" else WAKING_KEYS
            if sorted(fields) != sorted(keys) or not all(
                    fields[k].lstrip("-").isdigit() for k in keys if k.endswith(("pid", "prio",
                                                                                 "cpu"))):
                fail(f"{self.event} fields are not the kernel's: {text!r}")
            if self.event == "sched_switch" and not re.fullmatch(r"R\+|[RSDTtXZPI](\|[SDTtXZPI])*",
                                                                 fields["prev_state"]):
                fail(f"prev_state Perfetto cannot read: {text!r}")
            self.fields = fields
        elif self.event == "tracing_mark_write":
            if not re.fullmatch(r"B\|\d+\|H:\S.*|E\|\d+\||C\|\d+\|H:[^|]+\|-?\d+", self.rest):
                fail(f"not a HiTraceMeter marker: {text!r}")
        else:
            fail(f"unexpected event: {text!r}")


def read_trace(path):
    with open(path) as f:
        text = f.read()
    lines = text.splitlines()
    check(lines[0] == "# tracer: nop", f"{os.path.basename(path)} starts with '# tracer: nop'")
    body = [l for l in lines if not l.startswith("#")]
    check(all(not l.startswith("#") for l in lines[len(lines) - len(body):]),
          "comment lines only at the top")
    parsed = [Line(l) for l in body]
    print(f"ok: all {len(parsed)} lines of {os.path.basename(path)} match Perfetto's grammar")
    return parsed


def read_samples(path):
    """The perf script samples: [(tid, ts, [frame lines])]."""
    with open(path) as f:
        blocks = f.read().split("\n\n")
    samples = []
    for b in blocks:
        if not b.strip():
            continue
        head, *frames = b.strip("\n").split("\n")
        if not SAMPLE.match(head) or not frames or not all(FRAME.match(f) for f in frames):
            fail(f"not perf script text: {b!r}")
        _, tid, ts = head.split(" ")[:3]
        samples.append((int(tid), float(ts.rstrip(":")), frames))
    return samples


def trace_event(jw, tasks, after_ms):
    """The first event with trace files of a task begun after @after_ms (epoch) that the program
    reported, and its task. A jank inside a window an earlier one opened lists that window's
    files again: it is not one whose window began with it."""
    seen = set()
    for ev in json_lines(jw):
        files = tuple(ev["external_log"])
        earlier = files in seen
        seen.add(files)
        if files and files[0].endswith(".ftrace") and ev["begin_time"] >= after_ms and \
                not earlier:
            mine = [t for t in tasks if abs(mono_to_epoch_ms(t.begin_ns) - ev["begin_time"]) < 20]
            if mine:
                return ev, mine[0]
    return None


def run(extra, what, history_s=0, every_ms=2000):
    """Watches jw_glib (a jank every @every_ms) with @extra options until a jank begun @history_s
    after jankwatch was ready has its trace files; returns the parsed files, the program's task
    and the target."""
    logs = LogDir()
    target = Proc([GLIB, "--ms", str(JANK_MS), "--every", str(every_ms), "--light", str(LIGHT_MS)])
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        jw = start_jankwatch(["-p", str(target.pid), "--set", "ignore_startup_time=3", "--all",
                              "--log-dir", logs.path, *extra])
        after_ms = time.time() * 1000 + history_s * 1000
        found = []
        wait_for(lambda: found.append(trace_event(jw, target_tasks(target), after_ms)) or
                 found[-1], 20,
                 f"{what}: a jank with trace files")
        ev, task = found[-1]
        ftrace, perf = ev["external_log"]
        check(perf.endswith(".perf.txt") and os.path.basename(ftrace).startswith(
            f"trace-{target.pid}-"), f"{what}: the event lists {os.path.basename(ftrace)} and "
              f"{os.path.basename(perf)}")
        # The window closes 3 s after the crossing, then the files are written.
        wait_for(lambda: os.path.exists(ftrace) and os.path.exists(perf), 10,
                 f"{what}: the trace files")
        check(stop_jankwatch(jw) == 0, f"{what}: jankwatch exits 0")
        return read_trace(ftrace), read_samples(perf), task, target
    finally:
        target.kill()
        logs.cleanup()


require_bpf()

# (a) The trace of a 600 ms jank.
lines, samples, task, target = run([], "trace")
own_begin, own_ms = task.begin_ns / 1e9, task.dur_ns / 1e6
begins = [l for l in lines if l.event == "tracing_mark_write" and l.rest.startswith(
    f"B|{target.pid}|H:") and abs(l.ts - own_begin) < 0.005]
check(len(begins) == 1 and begins[0].rest == f"B|{target.pid}|H:on_tick" and
      begins[0].tid == target.pid, f"the task's slice begins at its true start, named on_tick "
      f"({[b.text for b in begins]})")
b = begins[0]
ends = [l for l in lines if l.ts > b.ts and l.rest == f"E|{target.pid}|" and l.tid == target.pid]
check(len(ends) >= 1, "the slice ends")
slice_ms = (ends[0].ts - b.ts) * 1000
check(abs(slice_ms - own_ms) <= 0.05 * own_ms, f"the slice lasts {slice_ms:.3f} ms, the "
      f"program's own {own_ms:.3f} ms within 5%")
switches = [l for l in lines if l.event == "sched_switch" and
            str(target.pid) in (l.fields["prev_pid"], l.fields["next_pid"])]
wakings = [l for l in lines if l.event == "sched_waking" and l.fields["pid"] == str(target.pid)]
check(len(switches) >= 2 and len(wakings) >= 1, f"the window's scheduler events: "
      f"{len(switches)} switches and {len(wakings)} wakeups of the target's thread")
sched = [l.ts for l in lines if l.event.startswith("sched_")]
span = max(sched) - own_begin
check(min(sched) >= b.ts and 2.5 <= span <= 3.7, f"without the flight recorder the window "
      f"starts with the task and covers about 3 s after the crossing ({span:.2f} s from the "
      f"task's start)")
in_task = [s for s in samples if s[0] == target.pid and b.ts <= s[1] <= ends[0].ts]
check(len(in_task) >= 0.5 * own_ms / 10, f"the perf text holds the task's samples "
      f"({len(in_task)} of ~{own_ms / 10:.0f} periods)")
check(min(s[1] for s in in_task) - b.ts < 0.05, "the samples start with the task")
named = [s for s in in_task if any(" busy_work+" in f for f in s[2]) and
         any(" on_tick+" in f for f in s[2])]
check(len(named) >= 0.9 * len(in_task), f"{len(named)} of {len(in_task)} samples name busy_work "
      "under on_tick")

# (b) The flight recorder: the seconds before the jank too.
# A jank every 4 s: each opens its own window (a window holds the janks that run inside it).
lines, samples, task, target = run(["--set", "flight_recorder_s=2"], "flight recorder",
                                   history_s=2.5, every_ms=4000)
own_begin = task.begin_ns / 1e9
before = [l for l in lines if l.ts < own_begin - 0.5]
# on_light's tasks are not reported, so their stacks are not read: their slices are named as their
# stats rows are, by the handler GLib's dispatch call was seen calling (its handler site).
light = [l for l in before if l.event == "tracing_mark_write" and
         l.rest == f"B|{target.pid}|H:on_light"]
check(len(light) >= 5 and any(l.event == "sched_switch" for l in before),
      f"with flight_recorder_s=2, {len(before)} lines from more than 0.5 s before the task "
      f"began, {len(light)} of them on_light's slices, and switches")
# The window opens at the crossing (the 450 ms threshold, seen within a sample_interval) and
# keeps the 2 s before it: from 1.4 to 1.6 s before the task's start; on_light runs every 100 ms.
first = min(l.ts for l in lines)
check(own_begin - 1.7 <= first <= own_begin - 1.2, f"the kept seconds reach "
      f"{own_begin - first:.2f} s before the task began (the crossing minus 2 s)")
span = max(l.ts for l in lines) - first
check(span <= 2 + 3 + 0.5, f"and the file covers at most the 2 s kept and the 3 s window "
      f"({span:.2f} s)")
