# SPDX-License-Identifier: GPL-2.0-only
"""--exe PATH watches every process of a binary, the ones already running and the ones started
afterwards, each with its own start time: here two jw_targets (one before, one after), and
Debian's redis-server started after `--exe /usr/bin/redis-check-rdb` (the file behind the
redis-server symlink). A process that exits is forgotten; the others keep being watched. A path
that is not an executable: one line, exit 1."""
import subprocess

from jwtest import *

require_bpf()
logs = LogDir()
early = start_target("--busy", "--ms", "300", "--every", "700")
wait_for(lambda: process_age_s(early.pid) >= 3, 10, "the first target to be 3 s old")
jw = start_jankwatch(["--exe", TARGET, "--exe", "/usr/bin/redis-check-rdb", "--set",
                      "ignore_startup_time=3", "--all", "--log-dir", logs.path])
late = start_target("--busy", "--ms", "300", "--every", "700", "--count", "9")
redis = Redis()
try:
    wait_for(lambda: process_age_s(redis.pid) >= 3.2, 10, "redis to be 3 s old")
    before = time.time() * 1000
    redis.cli("DEBUG", "SLEEP", "0.3")
    after = time.time() * 1000
    late.wait(30)   # the late target runs its 9 tasks and exits
    wait_for(lambda: any(f"pid {late.pid} (jw_target) exited" in l for l in jw.err), 10,
             "jankwatch to forget the late target")
    time.sleep(1.5)   # the early target is still watched after the late one left
    jw.p.send_signal(2)
    rc = jw.wait(30)
finally:
    early.kill()
    late.kill()
    redis.kill()
check(rc == 0, f"jankwatch exits 0 after Ctrl-C ({rc})")
events = [json.loads(l) for l in jw.out if l.startswith("{")]
by_pid = {pid: [e for e in events if e["pid"] == pid] for pid in (early.pid, late.pid, redis.pid)}
check(len(by_pid[early.pid]) >= 4, f"the process running before: {len(by_pid[early.pid])} janks")
check(len(by_pid[late.pid]) >= 2, f"the process started after: {len(by_pid[late.pid])} janks")
ends = [e["end_time"] for e in by_pid[early.pid]]
check(max(ends) > max(e["end_time"] for e in by_pid[late.pid]),
      "the first process is still watched after the second exited")
for pid, proc in ((early.pid, early), (late.pid, late)):
    tasks = target_tasks(proc)
    for ev in by_pid[pid]:
        mine = [t for t in tasks if abs(mono_to_epoch_ms(t.begin_ns) - ev["begin_time"]) < 20]
        check(len(mine) == 1 and abs(ev["wall_ms"] - mine[0].dur_ns / 1e6) <= 0.05 *
              mine[0].dur_ns / 1e6, f"pid {pid}: wall_ms {ev['wall_ms']} within 5%")
    check(all(ev["app_start_jiffies_time"] == by_pid[pid][0]["app_start_jiffies_time"]
              for ev in by_pid[pid]), f"pid {pid}: its own start time")
check(by_pid[early.pid][0]["app_start_jiffies_time"] !=
      by_pid[late.pid][0]["app_start_jiffies_time"], "each process has its own start time")
sleeps = [e for e in by_pid[redis.pid] if before - 5 <= e["begin_time"] <= after + 5]
check(len(sleeps) == 1 and sleeps[0]["blocked_ms"] >= 280 and
      sleeps[0]["bundle_name"] == "redis-server",
      f"redis-server started after jankwatch: DEBUG SLEEP reported ({len(sleeps)})")

for path, what in (("/etc/passwd", "not an executable file"), ("/nonexistent", "No such file")):
    p = subprocess.run([JW_BIN, "--exe", path, "--log-dir", logs.path], capture_output=True,
                       text=True, timeout=30)
    err = p.stderr.strip().splitlines()
    check(p.returncode == 1 and len(err) == 1 and what in err[0], f"--exe {path}: {err}")

# Always on: the shipped example config names the targets (exe= lines) and the parameters.
example = os.path.join(os.environ.get("JW_SRC", "."), "scripts/jankwatch.conf.example")
p = subprocess.run([JW_BIN, "--config", example, "--log-dir", logs.path, "--duration", "1"],
                   capture_output=True, text=True, timeout=60)
check(p.returncode == 0 and "--exe /usr/bin/redis-check-rdb: watching its processes" in p.stderr,
      f"--config scripts/jankwatch.conf.example alone watches its exe= targets ({p.stderr})")
logs.cleanup()
print("PASS")
