# SPDX-License-Identifier: GPL-2.0-only
"""SIGHUP and the traces (log_type, flight_recorder_s), and the report budgets, which only a file
written spends.

jw_glib, whose on_tick() spins 600 ms every 4 s (over trace_threshold_ms, 450) and on_light()
returns at once every 100 ms, watched with --all and a config file reloaded on SIGHUP:
(a) log_type=1: the jank gets a stack log, no trace.
(b) reloaded with log_type=0: jankwatch says traces begin; a jank begun after gets a trace,
    holding nothing from more than 0.5 s before its task (no flight recorder).
(c) reloaded with flight_recorder_s=2: the next trace holds on_light's slices from more than
    1 s before its task (the recorder on in the tracer running); with flight_recorder_s=0
    again, nothing from more than 0.5 s before.
(d) reloaded with log_type=1: jankwatch says the traces stop; the next jank gets a stack log and
    no trace file is made after.
(e) Budgets: jw_target janking 300 ms every 700 ms, log_type=1, report_times_per_app=2,
    log_quota_bytes=0, no --all: the janks get no file (log_over_limit) and the budgets file
    has nothing spent. Reloaded with the default quota, two later janks get their stack logs
    (the group's back-off lets some through) and the budgets file says 2 spent: the janks the
    quota withheld did not spend the budget.
"""
import glob

from jwtest import *

require_bpf()

GLIB = os.path.join(TARGETS, "jw_glib")
TICK = re.compile(r"^\s*\S+-(\d+)\s.*?(\d+\.\d+): tracing_mark_write: ([BE])\|(\d+)\|(.*)$")


def reload(jw, conf, text, said):
    with open(conf, "w") as f:
        f.write(text)
    jw.p.send_signal(signal.SIGHUP)
    wait_for(lambda: any(said in l for l in jw.err), 10, f"'{said}' after the reload")


def new_event(jw, after_ms, want):
    """The first event of a jank begun after @after_ms (epoch) with files of kind @want."""
    for ev in json_lines(jw):
        logs = ev["external_log"]
        if ev["begin_time"] >= after_ms and logs and logs[0].endswith(want):
            return ev
    return None


def wait_event(jw, after_ms, want, what):
    found = []
    wait_for(lambda: found.append(new_event(jw, after_ms, want)) or found[-1], 20, what)
    return found[-1]


def slice_begins(path):
    """The trace's task slices' begins: [(ts, name)]."""
    wait_for(lambda: os.path.exists(path), 10, f"{os.path.basename(path)} to be written")
    out = []
    with open(path) as f:
        for line in f:
            m = TICK.match(line)
            if m and m.group(3) == "B":
                out.append((float(m.group(2)), m.group(5)))
    return out


def history_s(ev, path, tasks):
    """How far before its task's start the trace of event @ev reaches with on_light's slices."""
    mine = [t for t in tasks if abs(mono_to_epoch_ms(t.begin_ns) - ev["begin_time"]) < 20]
    check(len(mine) == 1, f"the traced jank is one of the target's tasks ({ev['begin_time']})")
    begin = mine[0].begin_ns / 1e9
    light = [ts for ts, name in slice_begins(path) if name == "H:on_light"]
    return begin - min(light) if light else 0.0


logs = LogDir()
conf = os.path.join(logs.path, "jankwatch.conf")
out = os.path.join(logs.path, "logs")
# log_type 1 takes its own four parameters, all given.
LT1 = "log_type=1\nsample_interval=150\nsample_count=10\nreport_times_per_app=1\n"
with open(conf, "w") as f:
    f.write(LT1)
target = Proc([GLIB, "--ms", "600", "--every", "4000", "--light", "100"])
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    jw = start_jankwatch(["-p", str(target.pid), "--config", conf, "--set",
                          "ignore_startup_time=3", "--all", "--log-dir", out])
    # (a)
    ev = wait_event(jw, 0, ".txt", "(a) a jank with a stack log under log_type=1")
    check(len(ev["external_log"]) == 1, f"(a) log_type=1: a stack log only {ev['external_log']}")

    # (b) Traces begin, with no flight recorder: a window reaches back to its crossing only.
    reload(jw, conf, "log_type=0\nflight_recorder_s=0\n",
           "SIGHUP: log_type=0: traces from now on")
    ev = wait_event(jw, time.time() * 1000 + 500, ".ftrace", "(b) a trace after log_type=0")
    back = history_s(ev, ev["external_log"][0], target_tasks(target))
    check(back < 0.5, f"(b) the trace reaches only {back:.2f} s before its task")

    # (c) The flight recorder turned on in the tracer running.
    reload(jw, conf, "log_type=0\nflight_recorder_s=2\n", "SIGHUP: parameters reloaded")
    ev = wait_event(jw, time.time() * 1000 + 2500, ".ftrace",
                    "(c) a trace after flight_recorder_s=2")
    back = history_s(ev, ev["external_log"][0], target_tasks(target))
    check(back > 1.0, f"(c) flight_recorder_s=2: the trace reaches {back:.2f} s before its task")

    # (c') And off again.
    reload(jw, conf, "log_type=0\nflight_recorder_s=0\n", "SIGHUP: parameters reloaded")
    ev = wait_event(jw, time.time() * 1000 + 500, ".ftrace",
                    "(c') a trace after flight_recorder_s=0")
    back = history_s(ev, ev["external_log"][0], target_tasks(target))
    check(back < 0.5, f"(c') flight_recorder_s=0: the trace reaches only {back:.2f} s before "
          "its task")

    # (d) The traces of janks reported before the reload may still be written after it.
    reload(jw, conf, LT1, "SIGHUP: log_type=1: no more traces")
    traces = set(glob.glob(os.path.join(out, "trace-*")))
    traces |= {p for e in json_lines(jw) for p in e["external_log"]}
    after = time.time() * 1000
    ev = wait_event(jw, after, ".txt", "(d) a stack log after log_type=1")
    check(len(ev["external_log"]) == 1, f"(d) a stack log only: {ev['external_log']}")
    time.sleep(3.5)  # a window open at the reload would be written by now
    made = set(glob.glob(os.path.join(out, "trace-*"))) - traces
    check(not made, f"(d) no trace file made after log_type=1: {sorted(made)} ({sorted(traces)}, "
          f"{[(e['begin_time'], e['external_log']) for e in json_lines(jw)]})")
    check(stop_jankwatch(jw) == 0, "jankwatch exits 0")
finally:
    target.kill()
logs.cleanup()

# (e)
logs = LogDir()
conf = os.path.join(logs.path, "jankwatch.conf")
out = os.path.join(logs.path, "logs")
budgets = os.path.join(out, "budgets")
with open(conf, "w") as f:
    f.write(LT1.replace("report_times_per_app=1", "report_times_per_app=2") +
            "log_quota_bytes=0\n")
target = start_target("--busy", "--ms", "300", "--every", "700")
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    jw = start_jankwatch(["-p", str(target.pid), "--config", conf, "--set",
                          "ignore_startup_time=3", "--log-dir", out])
    wait_for(lambda: len(json_lines(jw)) >= 3, 20, "(e) 3 janks under log_quota_bytes=0")
    withheld = json_lines(jw)
    check(all(not e["external_log"] and e["log_over_limit"] for e in withheld),
          f"(e) quota 0: no file, log_over_limit ({[e['external_log'] for e in withheld]})")
    spent = open(budgets).read() if os.path.exists(budgets) else ""
    check(not re.search(r"^stack ", spent, re.M), f"(e) nothing spent for them: {spent!r}")
    reload(jw, conf, LT1.replace("report_times_per_app=1", "report_times_per_app=2"),
           "SIGHUP: parameters reloaded")
    wait_for(lambda: sum(1 for e in json_lines(jw) if e["external_log"]) >= 2, 30,
             "(e) two stack logs once the quota is lifted")
    check(stop_jankwatch(jw) == 0, "(e) jankwatch exits 0")
finally:
    target.kill()
spent = open(budgets).read()
check(re.search(rf"^stack {target.pid} \d+ 2 \d+$", spent, re.M),
      f"(e) the budgets file says 2 stack logs spent: {spent!r}")
logs.cleanup()
print("PASS")
