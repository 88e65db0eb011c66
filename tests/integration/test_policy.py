# SPDX-License-Identifier: GPL-2.0-only
"""The seed's policy on a real target, with the defaults and with the seed's own examples.
(a) A target janking 200 ms every second, watched from its start for 42 s: no jank in its first
    10 s (ignore_startup_time), an event line for every later jank, and exactly one stack log
    (report_times_per_app 1 a day); with --dev --set report_times_per_app=3, three.
(b) The budget is kept in the log directory: a jankwatch started again on the same log
    directory and process writes no stack log, though every jank still has its event line.
(c) A 600 ms task under log_type 0 is a trace decision: the first gets a trace log (one per uid
a day), the next ones their events only; no stack log.
(d) The seed's log_type 1 example (sample_interval=100, ignore_startup_time=11,
    sample_count=21, report_times_per_app=3): a 120 ms task, sampled every 4 ms of its CPU time
    (~30 samples), gets a stack log of 21 samples, the most sample_count allows (all it took,
    when the targets running side by side left it the CPU for fewer than 23 periods).
(e) A quota reached: log_over_limit turns true, and no report passes the quota; with
    --format tree,svg, the stack logs and flame graphs together stay within it.
(f) burst=4/50/2: tasks of 60 ms, under the jank threshold, are reported once four of them
    came within 2 s, with "burst": 4."""
from jwtest import *

require_bpf()


def stacks(logs):
    return logs.files("stack-")


def events_of(jw):
    return [json.loads(l) for l in jw.out if l.startswith("{")]


# (a) and (c), (d) side by side: each target is its own process with its own start time.
a_target = start_target("--busy", "--ms", "200", "--every", "1000")
c_target = start_target("--busy", "--ms", "600", "--every", "1500")
d_target = start_target("--busy", "--ms", "120", "--every", "700")
a_logs, dev_logs, c_logs, d_logs = LogDir(), LogDir(), LogDir(), LogDir()
try:
    a_jw = start_jankwatch(["-p", str(a_target.pid), "--duration", "42", "--log-dir",
                            a_logs.path])
    a_ready = time.time() * 1000  # --duration counts from about here
    dev_jw = start_jankwatch(["-p", str(a_target.pid), "--duration", "42", "--dev", "--set",
                              "report_times_per_app=3", "--log-dir", dev_logs.path])
    c_jw = start_jankwatch(["-p", str(c_target.pid), "--set", "ignore_startup_time=3",
                            "--duration", "10", "--log-dir", c_logs.path])
    d_jw = start_jankwatch(["-p", str(d_target.pid), "--set", "log_type=1", "--set",
                            "sample_interval=100", "--set", "ignore_startup_time=11", "--set",
                            "sample_count=21", "--set", "report_times_per_app=3", "--set",
                            "sample_period_ms=4", "--duration", "16", "--log-dir", d_logs.path])
    for jw in (c_jw, d_jw, a_jw, dev_jw):
        check(jw.wait(90) == 0, "jankwatch exits 0 at the end of --duration")
    a_start = (time.time() - process_age_s(a_target.pid)) * 1000  # the process's start

    # (a)
    events = events_of(a_jw)
    tasks = target_tasks(a_target)
    check(all(e["begin_time"] >= a_start + 10000 - 50 for e in events),
          "(a) no event for a task in the first 10 s of the process")
    later = [t for t in tasks if a_start + 10500 <= mono_to_epoch_ms(t.begin_ns) and
             mono_to_epoch_ms(t.begin_ns + t.dur_ns) <= a_ready + 41500]
    seen = [t for t in later if any(abs(mono_to_epoch_ms(t.begin_ns) - e["begin_time"]) < 20
                                    for e in events)]
    check(len(later) >= 24 and len(seen) == len(later),
          f"(a) an event line for every jank after the startup window ({len(seen)} of "
          f"{len(later)})")
    check(len(stacks(a_logs)) == 1, f"(a) exactly one stack log ({stacks(a_logs)})")
    check(sum(1 for e in events if e["external_log"]) == 1, "(a) one event names it")
    # The others say why: the back-off (4th, 6th, 7th, ... of the group) or the spent budget.
    reasons = [e["withheld"] for e in events]
    check(all((r is None) == bool(e["external_log"]) for r, e in zip(reasons, events)) and
          {"back_off", "budget"} <= set(reasons) <= {None, "back_off", "budget"},
          f"(a) each event without files says why: back_off or budget ({reasons})")
    # Most share the group; a stack whose DWARF unwinding stopped early can differ.
    odd = [(e["group"], e["heaviest_stack"]) for e in events
           if e["group"] != "busy_work<-dispatch"]
    if odd:
        print(f"note: {len(odd)} of {len(events)} events in another group: {odd[:2]}")
    check(len(odd) < len(events) // 2,
          f"(a) most events have the group busy_work<-dispatch (but {odd})")
    check(len(stacks(dev_logs)) == 3, f"(a) --dev, report_times_per_app=3: three stack logs "
          f"({stacks(dev_logs)})")
    # The second jankwatch started, so ends, a little later: compare the janks both watched
    # to their end.
    def before_end(evs):
        return [e for e in evs if e["begin_time"] + e["wall_ms"] <= a_ready + 41500]
    a_in, dev_in = before_end(events), before_end(events_of(dev_jw))
    check(len(a_in) >= 24 and len(dev_in) == len(a_in) and
          all(any(abs(d["begin_time"] - e["begin_time"]) < 20 for d in dev_in) for e in a_in),
          f"(a) --dev: the same event lines ({len(dev_in)} and {len(a_in)} to the end)")

    # (b) The same process and log directory: the budget is spent already.
    b_jw = start_jankwatch(["-p", str(a_target.pid), "--duration", "4", "--log-dir",
                            a_logs.path])
    check(b_jw.wait(30) == 0, "(b) jankwatch exits 0")
    check(len(events_of(b_jw)) >= 2, f"(b) event lines go on ({len(events_of(b_jw))})")
    check(len(stacks(a_logs)) == 1 and not any(e["external_log"] for e in events_of(b_jw)),
          f"(b) no stack log: the budget was kept in the log directory ({stacks(a_logs)})")
    check("stack " in a_logs.read("budgets"), "(b) the budgets file holds it")

    # (c)
    events = events_of(c_jw)
    traced = [e for e in events if e["external_log"]]
    check(len(events) >= 3 and all(e["wall_ms"] > 450 for e in events) and len(traced) == 1 and
          traced[0] is events[0] and traced[0]["external_log"][0].endswith(".ftrace"),
          f"(c) 600 ms janks: the first has a trace log, the budget withholds the others' "
          f"({[e['external_log'] for e in events]})")
    check(not stacks(c_logs), "(c) no stack log in the directory")
    check([f for f in c_logs.files("trace-") if f.endswith(".ftrace")] ==
          [os.path.basename(traced[0]["external_log"][0])], "(c) its trace files are written")

    # (d)
    events = events_of(d_jw)
    with_logs = [e for e in events if e["external_log"]]
    check(events and all(110 <= e["wall_ms"] <= 200 for e in events),
          f"(d) 120 ms janks under log_type 1 ({[e['wall_ms'] for e in events]})")
    kept = [(e["samples"],
             tree_samples(parse_tree(stack_tree(open(e["external_log"][0]).read()))),
             e["cpu_ms"]) for e in with_logs]
    # The samples are of CPU time (cpu-clock, 4 ms): a task that had the CPU for at least
    # 23 periods took more than 21 and keeps exactly 21; one that waited for the CPU (the three
    # targets here share two) took fewer, and keeps them all (a period or two lost at its edges).
    # A sample whose timer fired late (the host stopped the VM's vCPU: CI saw 20 for 118 ms)
    # stands for the periods that passed, so the count follows cpu_ms there too.
    check(len(with_logs) == 3 and
          all(n == tree and (n == 21 if cpu >= 4 * 23 else int(cpu / 4) - 2 <= n <= 21)
              for n, tree, cpu in kept),
          f"(d) three stack logs of 21 samples each when the task ran 23 periods or more, of "
          f"the ~30 taken ((samples, in the tree, cpu_ms): {kept})")
finally:
    for p in (a_target, c_target, d_target):
        p.kill()
    for l in (a_logs, dev_logs, c_logs, d_logs):
        l.cleanup()

# (e) A quota of about two stack logs.
e_target = start_target("--busy", "--ms", "300", "--every", "600")
e_logs = LogDir()
try:
    wait_for(lambda: process_age_s(e_target.pid) >= 3, 10, "the target to be 3 s old")
    rc, events, err = run_jankwatch(["-p", str(e_target.pid), "--set", "ignore_startup_time=3",
                                     "--all", "--set", "log_quota_bytes=5000", "--duration",
                                     "6", "--log-dir", e_logs.path], 60)
    check(rc == 0, f"(e) jankwatch exits 0 ({rc})")
    sizes = [os.path.getsize(os.path.join(e_logs.path, f)) for f in stacks(e_logs)]
    check(len(events) >= 5 and sizes and sum(sizes) <= 5000,
          f"(e) the stack logs stay within the quota ({sizes}, {len(events)} events)")
    first_over = next((i for i, e in enumerate(events) if e["log_over_limit"]), None)
    check(first_over is not None and all(e["log_over_limit"] and not e["external_log"]
                                         for e in events[first_over:]),
          f"(e) log_over_limit turns true and stays ({[e['log_over_limit'] for e in events]})")
    check(len(events) == len(e_logs.read("events.jsonl").splitlines()),
          "(e) every event is still in events.jsonl")
    check(all(e["withheld"] == "quota" for e in events[first_over:]),
          f"(e) their files were withheld by the quota ({[e['withheld'] for e in events]})")

    # (e) The flame graphs (--format tree,svg) count in the quota as the stack logs do: all the
    # files together stay within it, an SVG is listed only when written.
    f_logs = LogDir()
    rc, events, err = run_jankwatch(["-p", str(e_target.pid), "--set", "ignore_startup_time=3",
                                     "--all", "--set", "log_quota_bytes=30000", "--format",
                                     "tree,svg", "--duration", "8", "--log-dir", f_logs.path], 60)
    files = [f for f in os.listdir(f_logs.path) if f.startswith(("stack-", "flame-"))]
    total = sum(os.path.getsize(os.path.join(f_logs.path, f)) for f in files)
    listed = [os.path.basename(p) for e in events for p in e["external_log"]]
    check(rc == 0 and any(f.startswith("flame-") for f in files) and total <= 30000 and
          sorted(listed) == sorted(files) and any(e["log_over_limit"] for e in events),
          f"(e) stack logs and flame graphs together stay within the quota ({total} bytes in "
          f"{len(files)} files, each listed by its event; {len(events)} events)")
    f_logs.cleanup()

    # A log directory that is a link another user planted: said once; the events still go to
    # stdout. (One of root's is followed: systemd's LogsDirectory= of a DynamicUser= service.)
    link = os.path.join(e_logs.path, "link")
    os.symlink("/tmp", link)
    os.lchown(link, 65534, 65534)
    rc, events, err = run_jankwatch(["-p", str(e_target.pid), "--set", "ignore_startup_time=3",
                                     "--duration", "3", "--log-dir", link], 60)
    check(rc == 0 and len(events) >= 2 and all(e["log_over_limit"] and not e["external_log"]
                                               for e in events),
          f"(e) a log directory that is another user's link: events on stdout, log_over_limit "
          f"({rc})")
    said = [l for l in err if "events go to stdout only" in l]
    check(len(said) == 1 and "a symlink not root's" in said[0], f"(e) said once: {said}")
finally:
    e_target.kill()
    e_logs.cleanup()
# (f) Short tasks in a burst.
f_target = start_target("--busy", "--ms", "60", "--every", "200")
f_logs = LogDir()
try:
    wait_for(lambda: process_age_s(f_target.pid) >= 3, 10, "the target to be 3 s old")
    rc, events, err = run_jankwatch(["-p", str(f_target.pid), "--set", "ignore_startup_time=3",
                                     "--set", "burst=4/50/2", "--duration", "4", "--log-dir",
                                     f_logs.path], 60)
    check(rc == 0, f"(f) jankwatch exits 0 ({rc})")
    check(len(events) >= 2 and
          all(e.get("burst") == 4 and 50 < e["wall_ms"] < 150 for e in events),
          f"(f) every fourth 60 ms task is reported with burst 4 "
          f"({[(e.get('burst'), e['wall_ms']) for e in events]})")
    check(len(stacks(f_logs)) == 1, f"(f) within the budget: one stack log ({stacks(f_logs)})")
finally:
    f_target.kill()
    f_logs.cleanup()
print("PASS")
