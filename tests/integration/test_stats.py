# SPDX-License-Identifier: GPL-2.0-only
"""The statistics (LooperStats) of a running jankwatch, read with `jankwatch stats`, on Debian's
redis-server driven by redis-benchmark.

(a) `redis-benchmark -n 10000 -t get,set` gives one row per command handler, getCommand and
    setCommand, each counting exactly 10000 tasks, all recorded; the log2 histogram (--hist)
    holds every recorded task; a syscall row counts the loop's iterations.
(b) `--reset` prints the rows, then empties them: the next dump counts only what came after.
(c) A second jankwatch on the same redis says that it is not alone; a third with its own socket
    directory, stats_max_entries=2 and stats_sampling_interval=4, keeps two rows and an
    OVERFLOW row, and records 1 task in 4 of each.
(d) At exit the statistics are written to <log dir>/stats.csv.
(e) Bad input: no jankwatch running, a socket left by a killed one, a bad flag.
"""
import csv
import io

from jwtest import *

BENCH = "/usr/bin/redis-benchmark"


def stats(*args, run_dir):
    r = subprocess.run([JW_BIN, "stats", *args], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "JANKWATCH_RUN_DIR": run_dir})
    return r.returncode, r.stdout, r.stderr


def rows(run_dir, pid):
    rc, out, err = stats("-p", str(pid), run_dir=run_dir)
    check(rc == 0, f"jankwatch stats -p {pid} exits 0 ({err.strip()})")
    return list(csv.DictReader(io.StringIO(out)))


def by_message(rs):
    return {r["message_name"]: r for r in rs}


def bench(port, n, tests):
    r = subprocess.run([BENCH, "-p", str(port), "-n", str(n), "-t", tests, "-q"],
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"redis-benchmark -n {n} -t {tests} ran")


def start_in(run_dir, args):
    """start_jankwatch with its own socket directory."""
    p = Proc([JW_BIN, *args], env={**os.environ, "JANKWATCH_RUN_DIR": run_dir})
    wait_for(lambda: any("ready" in l for l in p.err) or p.p.poll() is not None, 30,
             "jankwatch to be ready")
    if p.p.poll() is not None:
        fail("jankwatch exited early: " + "\n".join(p.err))
    return p


require_bpf()
if not os.access(BENCH, os.X_OK):
    fail(f"{BENCH} is missing: scripts/setup.sh installs redis-tools")

logs = LogDir()
run_a = tempfile.mkdtemp(prefix="jw-run-")
run_b = tempfile.mkdtemp(prefix="jw-run-")
redis = Redis()
procs = []
try:
    wait_for(lambda: process_age_s(redis.pid) >= 3, 10, "redis-server to be 3 s old")
    # Every command counted: redis-benchmark's pace is past handler_sites' default, which
    # would hook call() one second in N.
    jw = start_in(run_a, ["-p", str(redis.pid), "--log-dir", logs.path, "--set",
                          "handler_sites=1000000"])
    procs.append(jw)

    # (a) One row per command, exact counts.
    bench(redis.port, 10000, "get,set")
    got = by_message(rows(run_a, redis.pid))
    print("rows:", {k: v["message_count"] for k, v in got.items()})
    for cmd in ("getCommand", "setCommand"):
        check(cmd in got, f"a row for {cmd}")
        r = got[cmd]
        check(r["message_count"] == "10000", f"{cmd}: message_count {r['message_count']} == "
              "10000, the commands redis-benchmark sent")
        check(r["recorded_message_count"] == "10000", f"{cmd}: every task recorded")
        check(r["handler_class"] == "call" and r["thread_name"] == "redis-server" and
              r["pid"] == str(redis.pid) and r["work_source_uid"] == str(os.getuid()),
              f"{cmd}: handler_class call, thread redis-server, pid and uid")
        check(0 < int(r["max_latency_micros"]) <= int(r["total_latency_micros"]) and
              int(r["total_cpu_micros"]) <= int(r["total_latency_micros"]) + 10000,
              f"{cmd}: latency and CPU totals hang together ({r['max_latency_micros']} max, "
              f"{r['total_latency_micros']} total, {r['total_cpu_micros']} cpu)")
    check("syscall" in got and int(got["syscall"]["message_count"]) > 0,
          "a syscall row counts the loop's iterations")
    rc, out, err = stats("--hist", "-p", str(redis.pid), run_dir=run_a)
    check(rc == 0, "jankwatch stats --hist exits 0")
    part = out.split("call getCommand:")[1].split("\npid ")[0]
    counts = [int(m) for m in re.findall(r"-> \d+\s+: (\d+)", part)]
    check(sum(counts) == 10000, f"getCommand's histogram holds its 10000 tasks ({sum(counts)})")

    # (b) Reset: the rows printed, then gone.
    rc, out, err = stats("--reset", "-p", str(redis.pid), run_dir=run_a)
    check(rc == 0 and "getCommand" in out, "stats --reset prints the rows it empties")
    bench(redis.port, 300, "get")
    got = by_message(rows(run_a, redis.pid))
    check("setCommand" not in got and got.get("getCommand", {}).get("message_count") == "300",
          "after the reset only the 300 new GETs count")

    # (c) Not alone: a second instance says so; a third, capped and sampling.
    second = start_in(run_a, ["-p", str(redis.pid), "--log-dir", logs.path])
    procs.append(second)
    warned = [l for l in second.err if f"pid {redis.pid} is also watched by jankwatch" in l]
    check(len(warned) == 1, f"a second instance says the target is watched already: {warned}")
    stop_jankwatch(second)
    third = start_in(run_b, ["-p", str(redis.pid), "--log-dir", logs.path, "--set",
                             "stats_max_entries=2", "--set", "stats_sampling_interval=4"])
    procs.append(third)
    bench(redis.port, 1000, "get,set,incr")
    capped = rows(run_b, redis.pid)
    print("capped:", [(r["message_name"], r["message_count"], r["recorded_message_count"])
                      for r in capped])
    # The cap bounds the handlers' rows; a watched thread's iteration row is always kept.
    named = [r for r in capped if r["message_name"] not in ("OVERFLOW", "syscall")]
    over = [r for r in capped if r["message_name"] == "OVERFLOW"]
    check(len(named) == 2 and len(over) == 1 and
          [r["message_name"] for r in capped].count("syscall") == 1,
          "stats_max_entries=2: two handler rows, the iteration row and OVERFLOW")
    check(int(over[0]["message_count"]) >= 1000,
          f"OVERFLOW counts what did not fit ({over[0]['message_count']} >= 1000)")
    for r in capped:
        n, rec = int(r["message_count"]), int(r["recorded_message_count"])
        check(rec == (n + 3) // 4, f"{r['message_name']}: 1 in 4 recorded ({rec} of {n})")
    stop_jankwatch(third)

    # (d) The dump at exit.
    check(stop_jankwatch(jw) == 0, "jankwatch exits 0")
    with open(os.path.join(logs.path, "stats.csv")) as f:
        final = by_message(csv.DictReader(f))
    check(final.get("getCommand", {}).get("message_count") == "1300" and
          final.get("setCommand", {}).get("message_count") == "1000" and
          final.get("incrCommand", {}).get("message_count") == "1000",
          "stats.csv written at exit: 300 + 1000 GETs, 1000 SETs, 1000 INCRs since the reset")

    # (e) Bad input.
    rc, out, err = stats(run_dir=run_a)
    check(rc == 1 and "no jankwatch is running" in err and out == "",
          f"stats with no jankwatch running: one line, exit 1 ({err.strip()})")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(os.path.join(run_a, f"{absent_pid()}.sock"))
    sock.close()
    rc, out, err = stats(run_dir=run_a)
    check(rc == 1 and f"left by jankwatch pid {absent_pid()}" in err and
          not os.path.exists(os.path.join(run_a, f"{absent_pid()}.sock")),
          f"a socket left by a killed jankwatch is removed and said ({err.strip()})")
    rc, out, err = stats("--frobnicate", run_dir=run_a)
    check(rc == 2 and len(err.splitlines()) == 1, "a bad flag: one line, exit 2")
finally:
    for p in procs:
        p.kill()
    redis.kill()
    logs.cleanup()
    shutil.rmtree(run_a, ignore_errors=True)
    shutil.rmtree(run_b, ignore_errors=True)
