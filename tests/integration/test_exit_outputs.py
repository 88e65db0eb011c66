# SPDX-License-Identifier: GPL-2.0-only
"""One snapshot, one truth: everything jankwatch writes at exit comes from one read of the
kernel's counts, taken after its programs stopped: jankwatch, which reads the count again as it
exits, does not say they counted tasks since (a task a millisecond would). A loop still running at exit (jw_target: a
trivial task every millisecond, a 200 ms jank every 1.5 s) is watched with metrics_textfile, and
stopped twice as users stop it: --duration, then Ctrl-C. Each time the summary's task count,
stats.csv's message_count and the textfile's jankwatch_tasks_total are one number; the janks of
the summary, the textfile's jankwatch_janks_total and the event lines on stdout too; and the
textfile's runs the kernel skipped (jankwatch_bpf_missed_runs_total, one series per loaded
program where the kernel counts them) and its switches the kernel kept from jankwatch are what
the summary says it lost (nothing said: 0)."""
import csv

from jwtest import *

SUMMARY = re.compile(r"jankwatch: (\d+) tasks, (\d+) janks ")
MISSED = re.compile(r'^jankwatch_bpf_missed_runs_total\{program="([^"]+)"\} (\d+)$')
SKIPPED = re.compile(r"the kernel skipped (\d+) runs? of jankwatch's programs")
KEPT = re.compile(r"the kernel kept (\d+) context switch(?:es)? of watched threads")


def series_sum(text, name):
    """The sum of the samples of metric @name in Prometheus text @text."""
    return sum(float(l.rsplit(" ", 1)[1]) for l in text.splitlines()
               if l.startswith(name + "{") or l.startswith(name + " "))


def watch_once(target, stop):
    logs = LogDir()
    textfile = os.path.join(logs.path, "jankwatch.prom")
    args = ["-p", str(target.pid), "--probe", f"{TARGET}:dispatch", "--set",
            "ignore_startup_time=3", "--all", "--set", f"metrics_textfile={textfile}",
            "--log-dir", logs.path]
    if stop == "duration":
        jw = Proc([JW_BIN, *args, "--duration", "4"])
        rc = jw.wait(60)
    else:
        jw = start_jankwatch(args)
        time.sleep(4)
        jw.p.send_signal(2)
        rc = jw.wait(60)
    check(rc == 0, f"{stop}: jankwatch exits 0 ({rc}): {jw.err[-3:]}")
    check(target.p.poll() is None, f"{stop}: the loop still runs at exit")
    summary = [SUMMARY.search(l) for l in jw.err if SUMMARY.search(l)]
    check(len(summary) == 1, f"{stop}: one summary line ({jw.err[-4:]})")
    late = [l for l in jw.err if "after they were stopped" in l]
    check(not late, f"{stop}: the programs count nothing after the last read ({late})")
    tasks, janks = int(summary[0].group(1)), int(summary[0].group(2))
    with open(os.path.join(logs.path, "stats.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["pid"] == str(target.pid)]
    with open(textfile) as f:
        text = f.read()
    logs.cleanup()
    counted = sum(int(r["message_count"]) for r in rows)
    exported = series_sum(text, "jankwatch_tasks_total")
    check(tasks > 1000 and tasks == counted == exported,
          f"{stop}: the summary's {tasks} tasks, stats.csv's {counted} and the textfile's "
          f"{exported:.0f} are one count")
    events = [l for l in jw.out if l.startswith("{")]
    check(janks >= 2 and janks == series_sum(text, "jankwatch_janks_total") == len(events),
          f"{stop}: the summary's {janks} janks, the textfile's "
          f"{series_sum(text, 'jankwatch_janks_total'):.0f} and {len(events)} event lines agree")
    missed = {m.group(1): int(m.group(2)) for m in map(MISSED.match, text.splitlines()) if m}
    check("on_sched_switch" in missed and "dispatch_enter" in missed or
          "dispatch_session" in missed,
          f"{stop}: the textfile counts the skipped runs of each loaded program ({missed})")
    kept = sum(int(m.group(1)) for m in map(KEPT.search, jw.err) if m)
    unseen = series_sum(text, 'jankwatch_drops_total{what="switch_unseen"}')
    check(kept == unseen, f"{stop}: the summary's switches kept from jankwatch ({kept}) are the "
          f"textfile's ({unseen:.0f})")
    said = [int(m.group(1)) for m in map(SKIPPED.search, jw.err) if m]
    check(sum(said) == sum(missed.values()) and len(said) == (1 if said else 0),
          f"{stop}: the summary says the skipped runs the textfile counts ({said}, {missed})")


require_bpf()
target = start_target("--busy", "--fast", "1", "--every", "1500", "--ms", "200")
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    watch_once(target, "duration")
    watch_once(target, "sigint")
finally:
    target.kill()
print("PASS")
