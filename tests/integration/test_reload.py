# SPDX-License-Identifier: GPL-2.0-only
"""SIGHUP reloads the parameters: the --config file read again, --set on top. A target janking
300 ms every 700 ms, watched with threshold_ms=1000 in the config file: no event. Reloaded with
threshold_ms=150: events (the kernel's own threshold was lowered too, or no task would reach
user space), with sample_count=3. A bad config file on the next SIGHUP: one line saying so, and
the configuration in force is kept: events go on, of 3 samples each (not the defaults)."""
import signal

from jwtest import *

require_bpf()


def count_events(jw):
    return sum(1 for l in list(jw.out) if l.startswith("{"))


logs = LogDir()
conf = os.path.join(logs.path, "jankwatch.conf")
with open(conf, "w") as f:
    f.write("# the test's configuration\nthreshold_ms=1000\ntrace_threshold_ms=2000\n")
target = start_target("--busy", "--ms", "300", "--every", "700")
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    jw = start_jankwatch(["-p", str(target.pid), "--config", conf, "--set",
                          "ignore_startup_time=3", "--all", "--log-dir",
                          os.path.join(logs.path, "logs")])
    time.sleep(2.5)
    check(count_events(jw) == 0, f"threshold_ms=1000: no event ({count_events(jw)})")

    with open(conf, "w") as f:
        f.write("threshold_ms=150\ntrace_threshold_ms=2000\nsample_count=3\n")
    jw.p.send_signal(signal.SIGHUP)
    wait_for(lambda: any("SIGHUP: parameters reloaded from" in l for l in jw.err), 10,
             "the reload to be said")
    wait_for(lambda: count_events(jw) >= 2, 10, "events after threshold_ms=150")

    with open(conf, "w") as f:
        f.write("threshold_ms=oops\n")
    jw.p.send_signal(signal.SIGHUP)
    wait_for(lambda: any("configuration in force is kept" in l for l in jw.err), 10,
             "the bad reload to be said")
    bad = [l for l in jw.err if "configuration in force is kept" in l]
    check(len(bad) == 1 and "threshold_ms=oops" in bad[0],
          f"one line naming the bad value: {bad}")
    before = count_events(jw)
    wait_for(lambda: count_events(jw) >= before + 2, 10, "events to go on after the bad reload")
    # The configuration kept is the one in force, not the defaults: 3 samples a report (the
    # default is 10).
    after = [json.loads(l) for l in list(jw.out) if l.startswith("{")][before:]
    check(all(e["samples"] == 3 for e in after),
          f"sample_count=3 is kept: {[e['samples'] for e in after]} samples")
    jw.p.send_signal(signal.SIGINT)
    check(jw.wait(30) == 0, "jankwatch exits 0 after Ctrl-C")
    events = [json.loads(l) for l in jw.out if l.startswith("{")]
    check(all(e["wall_ms"] > 150 for e in events), "every event is over the threshold in force")
finally:
    target.kill()
    logs.cleanup()
print("PASS")
