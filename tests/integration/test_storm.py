# SPDX-License-Identifier: GPL-2.0-only
"""A storm of short processes beside a real loop: `jankwatch -- sh storm` where the script starts
jw_target (a loop with a 200 ms jank every 700 ms) and forks and execs /bin/true as fast as it
can until the loop exits (about a thousand a second here). jankwatch follows every child, watches
the one that runs a loop, and keeps up: each jank of the loop past the start-up window has its
event, within 5% of what the loop measured, printed within a second of the task's end; the
summary counts the children that came and went; jankwatch exits with the script's status."""
import subprocess

from jwtest import *

require_bpf()
logs = LogDir()
tmp = tempfile.mkdtemp(prefix="jw-storm-")
os.chmod(tmp, 0o755)
storm = os.path.join(tmp, "storm.sh")
with open(storm, "w") as f:
    f.write(f"""#!/bin/sh
{TARGET} --busy --ms 200 --every 700 --count 10 &
loop=$!
n=0
start=$(date +%s%N)
while kill -0 $loop 2>/dev/null; do /bin/true; n=$((n + 1)); done
end=$(date +%s%N)
echo "storm $n children in $(( (end - start) / 1000000 )) ms"
exit 5
""")
os.chmod(storm, 0o755)

arrived = []   # (CLOCK_MONOTONIC ns, line) of every stdout line, as it came
jw = subprocess.Popen([JW_BIN, "--set", "ignore_startup_time=3", "--all", "--log-dir", logs.path,
                       "--", storm], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
err = []
pump = threading.Thread(target=lambda: err.extend(l.rstrip("\n") for l in jw.stderr), daemon=True)
pump.start()
cpu_s = 0.0
try:
    for line in jw.stdout:
        arrived.append((time.clock_gettime_ns(time.CLOCK_MONOTONIC), line.rstrip("\n")))
        try:
            with open(f"/proc/{jw.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            pass
    rc = jw.wait(60)
finally:
    if jw.poll() is None:
        jw.kill()
    pump.join(5)
    shutil.rmtree(tmp, ignore_errors=True)
if rc != 5 or os.environ.get("JW_TEST_VERBOSE"):
    print("\n".join(err), file=sys.stderr)
check(rc == 5, f"jankwatch exits with the script's status 5 ({rc})")

lines = [l for _, l in arrived]
stats = [l for l in lines if l.startswith("storm ")]
check(len(stats) == 1, "the storm says how many children it started")
children, ms = int(stats[0].split()[1]), int(stats[0].split()[4])
print(f"storm: {children} children in {ms} ms ({children * 1000 / max(ms, 1):.0f}/s); "
      f"jankwatch used {cpu_s:.2f} s of CPU")
check(children >= 1000, f"a storm: {children} short children")

tasks = [TargetTask(l) for l in lines if l.startswith("task ")]
events = [(t, json.loads(l)) for t, l in arrived if l.startswith("{")]
check(len(tasks) == 10, f"the loop ran its 10 tasks ({len(tasks)})")
loop_pids = {e["pid"] for _, e in events}
check(len(loop_pids) == 1, f"every event is the loop's ({loop_pids})")
start_s = events[0][1]["app_start_jiffies_time"] / os.sysconf("SC_CLK_TCK") - (
    time.clock_gettime(time.CLOCK_BOOTTIME) - time.clock_gettime(time.CLOCK_MONOTONIC))
late = [t for t in tasks if t.begin_ns / 1e9 - start_s > 3.3]
check(len(late) >= 5, f"{len(late)} tasks past the start-up window")
for t in late:
    mine = [(at, e) for at, e in events
            if abs(mono_to_epoch_ms(t.begin_ns) - e["begin_time"]) < 20]
    check(len(mine) == 1, f"task {t.n}: one event ({len(mine)})")
    at, ev = mine[0]
    check(matches_own(ev, t.dur_ns / 1e6, waited_ms=t.waited_ns / 1e6),
          f"task {t.n}: wall_ms {ev['wall_ms']} within 5% of the loop's own "
          f"{t.dur_ns / 1e6:.1f}")
    lag_ms = (at - t.begin_ns - t.dur_ns) / 1e6
    check(lag_ms < 1000, f"task {t.n}: its event came {lag_ms:.0f} ms after the task ended")
check(len(events) == len(late), f"no other event ({len(events)} for {len(late)} tasks)")

summary = [l for l in err if l.startswith("jankwatch: processes: ")]
check(len(summary) == 1, "the summary has a line of the processes that came and went")
forked = int(summary[0].split()[2])
check(forked >= children, f"it counts every child forked ({summary[0]})")
missed = [l for l in err if "processes might have been missed" in l]
check(not missed or re.search(r"\d+ not followed", missed[0]),
      f"what it could not follow is counted ({missed})")
check(not any("output might be incomplete" in l for l in err),
      "no task or sample of the loop was lost")
logs.cleanup()
print("PASS")
