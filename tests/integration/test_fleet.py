# SPDX-License-Identifier: GPL-2.0-only
"""Off the machine, through what fleets already run, all on loopback with Debian's own programs.

(a) Prometheus: Debian's redis-server watched with metrics_textfile (in the directory of
    Debian's prometheus-node-exporter's textfile collector) and metrics_listen, rewritten every
    second; two stuck scrapers (one asks and never reads, one never asks) stall nothing:
    `jankwatch stats` answers at once; Debian's prometheus scrapes both every second for 30 s:
    `up` stays 1 for both, the
    textfile collector never reports an error, `promtool check metrics` passes on both texts;
    getCommand's task counter equals `jankwatch stats`' message_count for it (the GETs
    redis-benchmark sent); the median of debugCommand's histogram (DEBUG SLEEP 0.3) falls in the
    log2 bucket of 300 ms; the janks by cause equal the events of events.jsonl.
(b) The journal: systemd-journald, systemd-journal-remote and systemd-journal-upload in a private
    mount namespace (tmpfs on /run/systemd, /run/log, /var/log/journal): with journal=1, every
    event of a watched loop arrives at the remote journal once (by jank id), its JANKWATCH_JSON
    equal to the events.jsonl line and its JANKWATCH_* fields equal to the line's, with the
    MESSAGE_ID of a jank and PRIORITY 4.
(c) No journald (an empty /run/systemd): one line on stderr says so, and events.jsonl holds
    every event.
(d) A 200-frame C++ stack of long template names (jw_cxx --depth 200): each events.jsonl line
    is at most events_line_max (4096) bytes; its heaviest_stack is the innermost frames of the
    stack log's, then "<-[+N frames]" counting the rest; the stack log keeps them all.
"""
import collections
import io
import urllib.parse
import urllib.request

from jwtest import *

PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"
NODE_EXPORTER = "/usr/bin/prometheus-node-exporter"
JOURNALD = "/lib/systemd/systemd-journald"
REMOTE = "/lib/systemd/systemd-journal-remote"
UPLOAD = "/lib/systemd/systemd-journal-upload"
BENCH = "/usr/bin/redis-benchmark"
JANK_ID = "bb3435124ce041ce9bc73d84c2ccbf9c"
WINDOW_S = 30

require_bpf()
for tool in (PROMETHEUS, PROMTOOL, NODE_EXPORTER, JOURNALD, REMOTE, UPLOAD, BENCH):
    if not os.access(tool, os.X_OK):
        fail(f"{tool} is missing: scripts/setup.sh installs prometheus, "
             "prometheus-node-exporter, systemd-journal-remote and redis-tools")


def promql(port, query):
    """The vector a PromQL query gives now: {frozenset(labels): value}."""
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": query})
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    check(body.get("status") == "success", f"prometheus answers {query}: {body}")
    return {frozenset(s["metric"].items()): float(s["value"][1])
            for s in body["data"]["result"]}


def one_value(port, query):
    v = promql(port, query)
    check(len(v) == 1, f"{query} gives one value ({v})")
    return next(iter(v.values()))


def promtool_check(text, what):
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0, f"promtool check metrics passes on {what} "
          f"({(r.stdout + r.stderr).strip()[:500]})")


def events_of(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def part_prometheus():
    logs = LogDir()
    run_dir = tempfile.mkdtemp(prefix="jw-run-")
    textdir = tempfile.mkdtemp(prefix="jw-textfile-")
    tsdb = tempfile.mkdtemp(prefix="jw-tsdb-")
    prom_file = os.path.join(textdir, "jankwatch.prom")
    jport, nport, pport = free_port(), free_port(), free_port()
    env = {**os.environ, "JANKWATCH_RUN_DIR": run_dir}
    redis = Redis()
    procs = [redis.proc]
    try:
        wait_for(lambda: process_age_s(redis.pid) >= 3, 10, "redis-server to be 3 s old")
        # Every GET counted: redis-benchmark's pace is past handler_sites' default, which
        # would hook call() one second in N.
        jw = Proc([JW_BIN, "-p", str(redis.pid), "--log-dir", logs.path, "--all",
                   "--set", "ignore_startup_time=3", "--set", "handler_sites=1000000",
                   "--set", f"metrics_textfile={prom_file}",
                   "--set", f"metrics_listen=127.0.0.1:{jport}",
                   "--set", "metrics_interval_s=1"], env=env)
        procs.append(jw)
        wait_for(lambda: any("ready" in l for l in jw.err) or jw.p.poll() is not None, 30,
                 "jankwatch to be ready")
        check(jw.p.poll() is None, "jankwatch runs: " + "\n".join(jw.err))
        check(any(f"metrics on http://127.0.0.1:{jport}/metrics" in l for l in jw.err),
              "jankwatch says where its metrics are")
        check(oct(os.stat(prom_file).st_mode & 0o777) == "0o644",
              "the metrics file is written at start, readable by node_exporter's user")
        node = Proc([NODE_EXPORTER, "--collector.disable-defaults", "--collector.textfile",
                     f"--collector.textfile.directory={textdir}",
                     f"--web.listen-address=127.0.0.1:{nport}"])
        procs.append(node)
        wait_for(lambda: "node_textfile_scrape_error" in (http_get(nport, "/metrics", timeout=2)
                                                          or "") or node.p.poll() is not None,
                 30, "node_exporter to answer")
        check(node.p.poll() is None, "node_exporter answers on its own port: " +
              "\n".join(node.err))
        cfg = os.path.join(tsdb, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n"
                    f"  - job_name: jankwatch\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{jport}']\n"
                    f"  - job_name: node\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{nport}']\n")
        prom = Proc([PROMETHEUS, f"--config.file={cfg}", f"--storage.tsdb.path={tsdb}/data",
                     f"--web.listen-address=127.0.0.1:{pport}"])
        procs.append(prom)
        wait_for(lambda: http_get(pport, "/-/ready", timeout=2) is not None and
                 "Ready" in (http_get(pport, "/-/ready", timeout=2) or ""), 60,
                 "prometheus to be ready")
        start = time.time()

        # Scrapers that hold connections: one asks and never reads, one never asks. The loop
        # answers `jankwatch stats` meanwhile, and Prometheus' scrapes go on (up, below).
        stuck = [socket.create_connection(("127.0.0.1", jport)) for _ in range(2)]
        stuck[0].sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        t = time.time()
        r = subprocess.run([JW_BIN, "stats", "-p", str(redis.pid)], capture_output=True,
                           text=True, timeout=60, env=env)
        check(r.returncode == 0 and time.time() - t < 2,
              f"jankwatch stats answers in {time.time() - t:.2f} s while two scrapers stall")

        # The work: 10000 GETs, three 300 ms DEBUG SLEEPs (janks).
        r = subprocess.run([BENCH, "-p", str(redis.port), "-n", "10000", "-t", "get", "-q"],
                           capture_output=True, text=True, timeout=300)
        check(r.returncode == 0, "redis-benchmark sent 10000 GETs")
        for _ in range(3):
            redis.cli("DEBUG", "SLEEP", "0.3")
            time.sleep(0.5)
        # 30 s of rewrites and scrapes from the start.
        time.sleep(max(0.0, WINDOW_S - (time.time() - start)) + 2)

        window = f"[{WINDOW_S}s]"
        up = promql(pport, f"min_over_time(up{window})")
        print("up:", {dict(k)["job"]: v for k, v in up.items()})
        check(len(up) == 2 and all(v == 1 for v in up.values()),
              f"both targets up through {WINDOW_S} s of scrapes ({up})")
        check(one_value(pport, f"max_over_time(node_textfile_scrape_error{window})") == 0,
              "node_exporter's textfile collector never failed to read the file")
        check(one_value(pport, f"count_over_time(jankwatch_build_info{{job=\"node\"}}{window})")
              >= WINDOW_S - 5, "the textfile's series were scraped each second")
        with open(prom_file) as f:
            promtool_check(f.read(), "metrics_textfile")
        promtool_check(http_get(jport, "/metrics") + "\n", "metrics_listen's /metrics")

        # The task counter of getCommand, from both paths, against the statistics.
        r = subprocess.run([JW_BIN, "stats", "-p", str(redis.pid)], capture_output=True,
                           text=True, timeout=60, env=env)
        check(r.returncode == 0, f"jankwatch stats answers ({r.stderr.strip()})")
        rows = {row["message_name"]: row for row in csv.DictReader(io.StringIO(r.stdout))}
        want = int(rows["getCommand"]["message_count"])
        check(want == 10000, f"stats: getCommand counted the 10000 GETs ({want})")
        for job in ("jankwatch", "node"):
            got = one_value(pport, f'jankwatch_tasks_total{{job="{job}",handler="getCommand"}}')
            check(got == want, f"{job}: jankwatch_tasks_total of getCommand {got} == stats' "
                  f"message_count {want}")
        q = one_value(pport, "histogram_quantile(0.5, jankwatch_task_duration_seconds_bucket"
                      '{job="jankwatch",handler="debugCommand"})')
        check(0.262144 < q <= 0.524288, f"the median of debugCommand's histogram, {q:.3f} s, "
              "is in the bucket of its 300 ms tasks (0.262144..0.524288]")

        # The janks by cause, against the events.
        events = events_of(os.path.join(logs.path, "events.jsonl"))
        janks = collections.Counter(e["cause"] for e in events
                                    if e["event"] == "MAIN_THREAD_JANK")
        check(sum(janks.values()) >= 3, f"the three DEBUG SLEEPs are janks ({janks})")
        got = {dict(k)["cause"]: v for k, v in promql(
            pport, 'jankwatch_janks_total{job="jankwatch"}').items()}
        print("janks by cause:", got, "events:", dict(janks))
        check(all(got.get(c, 0) == janks.get(c, 0) for c in ("cpu", "runqueue", "blocked", "io")),
              f"jankwatch_janks_total by cause {got} == the events' causes {dict(janks)}")
        check(not any(l.startswith("jankwatch: metrics") and "cannot" in l for l in jw.err),
              "no metrics write failed")
        check(stop_jankwatch(jw) == 0, "jankwatch exits 0")
        for sock in stuck:
            sock.close()
    finally:
        for p in reversed(procs):
            p.kill()
        logs.cleanup()
        for d in (run_dir, textdir, tsdb):
            shutil.rmtree(d, ignore_errors=True)


# The journal's part runs in a private mount namespace: this script, with its directory as $1.
JOURNAL_SCRIPT = r"""
set -eu
out=$1; mode=$2; target=$3; jw=$4; rport=$5
mkdir -p /run/systemd /run/log /var/log/journal /var/lib/systemd
for d in /run/systemd /run/log /var/log/journal /var/lib/systemd; do
	mount -t tmpfs tmpfs "$d"
done
pids=
cleanup() { kill $pids 2>/dev/null || true; }
trap cleanup EXIT
if [ "$mode" = journal ]; then
	mkdir -p /run/systemd/journal "$out/remote"
	/lib/systemd/systemd-journald >"$out/journald.log" 2>&1 &
	pids="$pids $!"
	i=0
	while [ ! -S /run/systemd/journal/socket ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	/lib/systemd/systemd-journal-remote --listen-http=127.0.0.1:$rport \
		--output="$out/remote/" >"$out/remote.log" 2>&1 &
	pids="$pids $!"
	sleep 0.5
	/lib/systemd/systemd-journal-upload --url=http://127.0.0.1:$rport \
		--save-state="$out/upload.state" >"$out/upload.log" 2>&1 &
	pids="$pids $!"
fi
"$target" --busy --ms 300 --every 700 >"$out/target.out" &
tpid=$!
pids="$pids $tpid"
sleep 3.2
"$jw" -p $tpid --all --duration 4 --set journal=1 --set ignore_startup_time=3 \
	--log-dir "$out/logs" >"$out/stdout.jsonl" 2>"$out/stderr" || echo "rc=$?" >>"$out/stderr"
kill $tpid
if [ "$mode" = journal ]; then
	# Until every event reached the remote journal, at most 20 s.
	n=$(wc -l <"$out/stdout.jsonl")
	i=0
	while [ $i -lt 200 ]; do
		got=$(journalctl --directory="$out/remote" -o json MESSAGE_ID=%s 2>/dev/null | wc -l)
		[ "$got" -ge "$n" ] && break
		sleep 0.1
		i=$((i + 1))
	done
	journalctl --directory="$out/remote" -o json MESSAGE_ID=%s >"$out/remote.json"
fi
""" % (JANK_ID, JANK_ID)


def in_namespace(mode):
    out = tempfile.mkdtemp(prefix=f"jw-{mode}-")
    script = os.path.join(out, "run.sh")
    with open(script, "w") as f:
        f.write(JOURNAL_SCRIPT)
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", script, out, mode,
                        os.path.join(TARGETS, "jw_target"), JW_BIN, str(free_port())],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"the {mode} namespace ran ({r.stderr.strip()[-500:]})")
    return out


def part_journal():
    out = in_namespace("journal")
    try:
        err = open(os.path.join(out, "stderr")).read()
        check("rc=" not in err and "journal=1" not in err,
              f"jankwatch ran with journald there, silent about it:\n{err}")
        lines = [l for l in open(os.path.join(out, "logs", "events.jsonl")) if l.strip()]
        check(len(lines) >= 3, f"at least 3 events in 4 s ({len(lines)})")
        remote = [json.loads(l) for l in open(os.path.join(out, "remote.json")) if l.strip()]
        ids = collections.Counter(e["JANKWATCH_JANK_ID"] for e in remote)
        check(all(n == 1 for n in ids.values()), f"each jank id arrived once ({ids})")
        by_id = {e["JANKWATCH_JANK_ID"]: e for e in remote}
        for line in lines:
            ev = json.loads(line)
            entry = by_id.get(ev["jank_id"])
            check(entry is not None, f"event {ev['jank_id']} reached the remote journal")
            check(entry["JANKWATCH_JSON"] == line.rstrip("\n"),
                  "its JANKWATCH_JSON is the events.jsonl line")
            for field, key in (("JANKWATCH_EVENT", "event"), ("JANKWATCH_PID", "pid"),
                               ("JANKWATCH_TID", "tid"), ("JANKWATCH_HANDLER", "handler"),
                               ("JANKWATCH_CAUSE", "cause"), ("JANKWATCH_GROUP", "group"),
                               ("JANKWATCH_BUNDLE_NAME", "bundle_name"),
                               ("JANKWATCH_BEGIN_TIME", "begin_time"),
                               ("JANKWATCH_SAMPLES", "samples")):
                check(entry.get(field) == str(ev[key]),
                      f"{field} {entry.get(field)!r} == the line's {key} {ev[key]!r}")
            check(float(entry["JANKWATCH_WALL_MS"]) == ev["wall_ms"], "JANKWATCH_WALL_MS")
            check(entry["PRIORITY"] == "4" and entry["SYSLOG_IDENTIFIER"] == "jankwatch" and
                  entry["OBJECT_PID"] == str(ev["pid"]),
                  "PRIORITY warning, SYSLOG_IDENTIFIER jankwatch, OBJECT_PID the target")
        print(f"journal: {len(lines)} events, each once in the remote journal")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def part_no_journal():
    out = in_namespace("nojournal")
    try:
        err = open(os.path.join(out, "stderr")).read().splitlines()
        said = [l for l in err if "journal=1" in l]
        check(len(said) == 1 and "no journal at /run/systemd/journal/socket" in said[0],
              f"one line says the journal is missing ({said})")
        check(not any(l.startswith("rc=") for l in err), "jankwatch exits 0")
        printed = [l for l in open(os.path.join(out, "stdout.jsonl")) if l.strip()]
        kept = [l for l in open(os.path.join(out, "logs", "events.jsonl")) if l.strip()]
        check(len(kept) >= 3 and kept == printed,
              f"events.jsonl holds every event ({len(kept)} of {len(printed)})")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def part_deep_stack():
    logs = LogDir()
    target = Proc([os.path.join(TARGETS, "jw_cxx"), "--ms", "300", "--every", "700",
                   "--depth", "200"])
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "jw_cxx to be 3 s old")
        rc, events, _ = run_jankwatch(["-p", str(target.pid), "--set", "ignore_startup_time=3",
                                       "--all", "--duration", "3", "--log-dir", logs.path], 60)
    finally:
        target.kill()
    try:
        check(rc == 0 and len(events) >= 2, f"jankwatch exits 0 with 2 events ({rc}, "
              f"{len(events)})")
        lines = open(os.path.join(logs.path, "events.jsonl")).read().splitlines(True)
        for line in lines:
            check(len(line.encode()) <= 4096, f"a line of {len(line.encode())} bytes <= 4096")
        for ev in events:
            stack = ev["heaviest_stack"]
            m = re.search(r"<-\[\+(\d+) frames\]$", stack)
            check(m is not None, f"heaviest_stack ends with its marker ({stack[-80:]})")
            kept = stack[:m.start()].split("<-")
            text = open(ev["external_log"][0]).read()
            full = header(text)["heaviest_stack"].split("<-")
            print(f"deep stack: {len(kept)} frames in the line, {m.group(1)} left out, "
                  f"{len(full)} in the stack log")
            check(len(full) >= 120 and kept == full[:len(kept)] and
                  len(kept) + int(m.group(1)) == len(full),
                  "the line keeps the innermost frames of the stack log's heaviest stack and "
                  "counts the rest")
            check(sum("descend(unsigned int, app::Job const&)" in f for f in full) >= 100,
                  "the stack log holds the deep frames")
    finally:
        logs.cleanup()


part_deep_stack()
part_no_journal()
part_journal()
part_prometheus()
print("ok")
