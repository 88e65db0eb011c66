# SPDX-License-Identifier: GPL-2.0-only
"""Syscall mode's waits follow the load (wait_tracepoints=2, the default): Debian's redis-server
watched by its preset while idle (about ten waits a second: uprobes on the C library's wait
functions, which cost nothing outside it), then loaded by one redis-benchmark client (thousands
of waits a second, where the wait system calls' tracepoints cost the machine less), then idle
again.

- -v says each switch, to the tracepoints and back, within a few seconds of the load's change;
- tasks stay whole across the switches: a DEBUG SLEEP 0.3 in each phase is one jank named by
  the command, its wall time at least the sleep and no longer than redis-cli waited, and no
  other task is one (a wait missed would leave a task open across the loop's next sleep);
- the stacks' samplers follow the load too (samplers=2, the default): one per watched thread
  while idle, one per CPU within a few seconds of the load (tens of thousands of switches a
  second, where a thread's own sampler's timer is started and stopped at each), one per thread
  again when it stops; the loaded sleep's stacks come from the CPUs' samplers;
- `jankwatch stats` says the kind in force and the switches made, of both; the summary too;
- call()'s probe (the preset's naming probe, a handler site) is sampled under the load
  (handler_sites a sixth of one client's pace, measured on this machine before the watch: the
  load is over it, hooked one second in several), said once, -v
  saying each window; the loaded phase's sleep, sent as a window ends, is named by the stacks
  (the probe off: debugCommand's row did not count it), and getCommand's row counts the GETs
  redis counted (INFO commandstats) within 2%, though it timed only a sample of them.
"""
import csv
import io
import re

from jwtest import *

BENCH = "/usr/bin/redis-benchmark"
TO_TRACEPOINTS = re.compile(r"syscall mode's waits now on (the wait system calls' own exit "
                            r"tracepoints|raw_syscalls' sys_exit tracepoint) \(wait_tracepoints"
                            r"=2: (\d+) system calls/s .* (\d+) watched waits/s")
TO_UPROBES = "syscall mode's waits now on uprobes on the C library's wait functions"
SAMPLED = re.compile(r"(\d+) callbacks/s through its handler sites, over handler_sites=(\d+): "
                     r"from now on they are hooked (?:one second in every|[\d.]+ s in every "
                     r"[\d.]+ s, one) (\d+)(?:-th of the time)? \(a sample, its rows' counts "
                     r"scaled")
WINDOW_OFF = re.compile(r"handler sites off; their window counted \d+ calls")
# What "a few seconds" allows: a second's rate, the machine counted 0.3 s, the costs measured
# once (a fraction of a second), and the loop's own pace.
FEW_S = 6
TO_CPU_SAMPLERS = re.compile(r"samplers: one sampler per CPU from now, \d+ taken off \(samplers=2: "
                             r"(\d+) switches a second of the watched threads against (\d+) "
                             r"firings")
TO_THREAD_SAMPLERS = "samplers: one sampler per watched thread from now"


def unwatched_pace():
    """GETs a second one redis-benchmark client gets from redis on this machine, unwatched (the
    machines this runs on differ fourfold); redis's command counts reset after it."""
    r = subprocess.run([BENCH, "-p", str(redis.port), "-c", "1", "-t", "get", "-n", "20000",
                        "--csv"], capture_output=True, text=True, timeout=120)
    m = re.search(r'^"GET","([0-9.]+)"', r.stdout, re.M)
    check(r.returncode == 0 and m is not None,
          f"redis-benchmark measures redis's pace unwatched: {m.group(1) if m else r.stdout} "
          "GETs/s")
    check(redis.cli("CONFIG", "RESETSTAT") == "OK", "redis's command counts reset")
    return float(m.group(1))


def stats_rows():
    """`jankwatch stats` of redis: its rows by message name."""
    r = subprocess.run([JW_BIN, "stats", "-p", str(redis.pid)], capture_output=True, text=True,
                       timeout=30)
    check(r.returncode == 0, f"jankwatch stats answers ({r.stderr.strip()})")
    return {row["message_name"]: row for row in csv.DictReader(io.StringIO(r.stdout))}


def line_after(pattern, since, timeout, what):
    """The first stderr line of jankwatch's after index @since that matches @pattern (a
    compiled regex or a string), and how long it took to come."""
    t0 = time.monotonic()

    def find():
        for l in jw.err[since:]:
            if (pattern.search(l) if isinstance(pattern, re.Pattern) else pattern in l):
                return l
        return None
    while not find() and jw.p.poll() is None and time.monotonic() - t0 < timeout:
        time.sleep(0.1)
    found = find()
    if found is None and jw.p.poll() is None:
        # What it chose meanwhile, and by which figures (-v): the machine's other system calls
        # weigh on the tracepoints' side.
        chosen = [l for l in jw.err[since:] if "wait hooks: staying" in l][-3:]
        fail(f"timed out after {timeout} s waiting for {what}; its last choices: {chosen}")
    if found is None:
        fail(f"jankwatch exited before {what}: " + "\n".join(jw.err))
    return found, time.monotonic() - t0


def slow_command(phase):
    """DEBUG SLEEP 0.3: one jank, named, as long as the sleep and no longer than the client
    waited."""
    before = time.time() * 1000
    check(redis.cli("DEBUG", "SLEEP", "0.3") == "OK", f"{phase}: DEBUG SLEEP 0.3 answers OK")
    after = time.time() * 1000

    def mine():
        return [e for e in json_lines(jw) if before - 5 <= e["begin_time"] <= after + 5]
    wait_for(lambda: mine() or jw.p.poll() is not None, 15, f"{phase}: the sleep's event")
    evs = mine()
    check(len(evs) == 1, f"{phase}: one event for the sleep ({len(evs)})")
    ev = evs[0]
    check(ev["handler"] == "debugCommand", f"{phase}: it names debugCommand ({ev['handler']})")
    check(300 <= ev["wall_ms"] <= after - before + 1,
          f"{phase}: wall_ms {ev['wall_ms']} is the sleep's, within the {after - before:.1f} ms "
          "redis-cli waited")


require_bpf()
if not os.access(BENCH, os.X_OK):
    fail(f"{BENCH} is missing: scripts/setup.sh installs redis-tools")
redis = Redis()
logs = LogDir()
jw = bench = None
try:
    wait_for(lambda: process_age_s(redis.pid) >= 3, 10, "redis-server to be 3 s old")
    # A sixth of the pace: hooked one second in about six under the load (at least three: off
    # long enough for a command sent as a window ends), the idle's few calls far under it.
    pace = unwatched_pace()
    sites = max(100, int(pace / 6))
    jw = start_jankwatch(["-p", str(redis.pid), "-v", "--set", "ignore_startup_time=3",
                          "--set", f"handler_sites={sites}", "--log-dir", logs.path])
    first = [l for l in jw.err if l.startswith("jankwatch: syscall mode on ")]
    check(len(first) == 1 and "uprobes on the C library's wait functions (wait_tracepoints=2:"
          in first[0] and "chosen again as the rates move" in first[0],
          f"idle, it starts on the uprobes, to be chosen again: {first}")
    first = [l for l in jw.err if l.startswith("jankwatch: samplers: ")]
    check(len(first) == 1 and "one sampler per watched thread (samplers=2" in first[0],
          f"idle, its stacks start on a sampler of the thread's own: {first}")

    # Idle past the first few seconds (no switch comes sooner than 5 s after the last).
    time.sleep(7)
    check(not any("waits now on" in l for l in jw.err), "idle, it stays on the uprobes")
    check(not any("sampler per CPU from now" in l for l in jw.err),
          "idle, its stacks stay on the thread's own sampler")
    slow_command("idle, on the uprobes")

    mark = len(jw.err)
    bench = Proc([BENCH, "-p", str(redis.port), "-c", "1", "-t", "get", "-n", "100000000",
                  "-q"])
    line, took = line_after(TO_TRACEPOINTS, mark, 30, "the switch to the tracepoints")
    m = TO_TRACEPOINTS.search(line)
    check(took <= FEW_S, f"loaded, it switches to the tracepoints {took:.1f} s after the load "
          f"began ({int(m.group(3))} waits/s, {int(m.group(2))} system calls/s on the machine)")
    line, took = line_after(TO_CPU_SAMPLERS, mark, 30, "the switch to the CPUs' samplers")
    m = TO_CPU_SAMPLERS.search(line)
    check(took <= FEW_S, f"loaded, its stacks move to one sampler per CPU {took:.1f} s after the "
          f"load began ({m.group(1)} switches/s against {m.group(2)} firings/s)")
    line, _ = line_after(SAMPLED, mark, 30, "call()'s probe to be sampled")
    rate, limit, every = (int(g) for g in SAMPLED.search(line).groups())
    # The rate said is rounded: every is the rate over the limit rounded up, within that.
    check(limit == sites and every >= 3 and (every - 1) * sites <= rate + 0.5
          and rate - 0.5 <= every * sites,
          f"loaded, call() is hooked one {every}-th of the time, its {rate} calls/s over "
          f"handler_sites={sites} (redis's pace unwatched: {pace:.0f} GETs/s): {line}")
    # Sent as a window ends, once its probe came off (~0.2 s here): off for N - 1 >= 2 s.
    line_after(WINDOW_OFF, len(jw.err), 30, "a window of call()'s probe to end")
    time.sleep(0.5)
    slow_command("loaded, on the tracepoints, call() off")
    rows = stats_rows()
    check(rows["debugCommand"]["recorded_message_count"] == "1",
          f"loaded, the stacks named it: debugCommand's row counts the idle sleep alone "
          f"({rows['debugCommand']})")
    # Long enough on the tracepoints that the next switch may come at once.
    time.sleep(6)
    check(not any(TO_UPROBES in l for l in jw.err[mark:]),
          "loaded, it stays on the tracepoints")

    mark = len(jw.err)
    bench.kill()
    bench = None
    line, took = line_after(TO_UPROBES, mark, 30, "the switch back to the uprobes")
    check(took <= FEW_S, f"idle again, it switches back to the uprobes {took:.1f} s after the "
          f"load stopped: {line}")
    line, took = line_after(TO_THREAD_SAMPLERS, mark, 30, "the switch back to the thread's sampler")
    check(took <= FEW_S, f"idle again, its stacks move back to the thread's own sampler "
          f"{took:.1f} s after the load stopped: {line}")
    time.sleep(1)	# settled: the uprobes alone count, the tracepoints gone
    slow_command("idle again, on the uprobes")

    gets = int(re.search(r"cmdstat_get:calls=(\d+)", redis.cli("INFO", "commandstats")).group(1))
    r = subprocess.run([JW_BIN, "stats"], capture_output=True, text=True, timeout=30)
    said = [l for l in r.stderr.splitlines() if "syscall mode's waits" in l]
    check(r.returncode == 0 and len(said) == 2 and
          "waits on uprobes on the C library's wait functions for" in said[0] and
          "switched 2 times" in said[1],
          f"jankwatch stats says the kind in force and the switches: {said}")
    said = [l for l in r.stderr.splitlines() if "samplers: " in l]
    check(len(said) == 2 and "samplers: one sampler per watched thread for" in said[0] and
          "samplers: switched 2 times" in said[1],
          f"jankwatch stats says the samplers in force and their switches: {said}")
finally:
    if bench:
        bench.kill()
    rc = stop_jankwatch(jw) if jw else None
    redis.kill()
check(rc == 0, f"jankwatch exits 0 (got {rc})")
# A wait missed at a switch would leave a task open across the loop's next sleep: a jank no
# command made.
evs = json_lines(jw)
check(len(evs) == 3, f"the three sleeps are the run's only janks ({len(evs)}: "
      f"{[(e['handler'], e['wall_ms']) for e in evs]})")
check(any("syscall mode's waits switched 2 times" in l for l in jw.err),
      "the summary says the two switches")
check(any("samplers switched 2 times" in l for l in jw.err),
      "the summary says the samplers' two switches")
with open(os.path.join(logs.path, "stats.csv")) as f:
    rows = {r["message_name"]: r for r in csv.DictReader(f) if r["pid"] == str(redis.pid)}
got, timed = int(rows["getCommand"]["message_count"]), int(rows["getCommand"]["recorded_message_count"])
check(abs(got - gets) <= 0.02 * gets and timed < 0.8 * got,
      f"getCommand's row counts the {gets} GETs redis counted within 2% ({got}), having timed a "
      f"sample of them ({timed})")
logs.cleanup()
print("PASS")
