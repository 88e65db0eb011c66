# SPDX-License-Identifier: GPL-2.0-only
"""jankwatch as jankwatch.service runs it (jw_service_box): a user of its own, exactly the
capabilities the unit names (read from scripts/jankwatch.service.in), no new privileges, every
file system read-only but its log and runtime directories. Watching another user's process
(nobody's jw_target) by a config file's exe= line, as the unit's ExecStart reads
/etc/jankwatch.conf, and by -p: janks caught and measured, stacks named, files written by the
service's user and none readable by others (UMask=0027), `jankwatch stats` answered to root.
Each of the unit's capabilities removed in turn: exit 1, one line on stderr naming what is missing
(CAP_SYSLOG: it runs, one line says kernel frames go unnamed). A log directory the unit does not
let it write, and a runtime directory it cannot make: one line each.
Where strace and systemd-analyze are at hand (the machine, not the VMs): every system call
jankwatch made is one the unit's SystemCallFilter allows."""
import re
import shutil
import stat

from jwtest import *

require_bpf()
NOBODY = 65534
SERVICE = 61234		# the service's user: a DynamicUser= uid, no passwd entry
UNIT = os.path.join(os.environ.get("JW_SRC", "."), "scripts", "jankwatch.service.in")
BOX = os.path.join(TARGETS, "jw_service_box")


def unit_caps():
    """The unit's CapabilityBoundingSet=, checked equal to its AmbientCapabilities=: the
    capabilities' names as jw_service_box takes them (sys_admin)."""
    text = open(UNIT).read()
    sets = {k: v.split() for k, v in re.findall(r"^(CapabilityBoundingSet|AmbientCapabilities)="
                                                r"(.*)$", text, re.M)}
    check(len(sets) == 2 and sorted(sets["CapabilityBoundingSet"]) ==
          sorted(sets["AmbientCapabilities"]),
          f"the unit's bounding and ambient capabilities are one set ({sets})")
    return [c[len("CAP_"):].lower() for c in sets["CapabilityBoundingSet"]]


CAPS = unit_caps()
work = tempfile.mkdtemp(prefix="jw-service-")
os.chmod(work, 0o755)
jw_bin = shutil.copy(JW_BIN, os.path.join(work, "jankwatch"))
target_bin = shutil.copy(TARGET, os.path.join(work, "jw_target"))
for f in (jw_bin, target_bin):
    os.chmod(f, 0o755)
logs = os.path.join(work, "logs")	# LogsDirectory=jankwatch, LogsDirectoryMode=0750
run_dir = os.path.join(work, "run")	# RuntimeDirectory=jankwatch, RuntimeDirectoryMode=0755
for d, mode in ((logs, 0o750), (run_dir, 0o755)):
    os.mkdir(d)
    os.chown(d, SERVICE, SERVICE)
    os.chmod(d, mode)
# As /etc/jankwatch.conf: the executables to watch; and one without them, for -p.
conf = os.path.join(work, "jankwatch.conf")
plain = os.path.join(work, "plain.conf")
for path, lines in ((conf, f"exe={target_bin}\n"), (plain, "")):
    with open(path, "w") as f:
        f.write(f"{lines}log_dir={logs}\nignore_startup_time=3\n")
ENV = dict(os.environ, JANKWATCH_RUN_DIR=run_dir)


def boxed(caps, argv, rw=(logs, run_dir), uid=SERVICE):
    return [BOX, f"{uid}:{uid}", ",".join(caps) or "none",
            *[a for d in rw for a in ("--rw", d)], "--", *argv]


def refused(caps, argv, what, rw=(logs, run_dir), missing=False):
    """Runs jankwatch with @caps: exit 1 and one line on stderr saying @what (with @missing,
    after its "missing:")."""
    p = subprocess.run(boxed(caps, [jw_bin, *argv, "--duration", "2"], rw), env=ENV,
                       capture_output=True, text=True, timeout=60)
    err = p.stderr.strip().splitlines()
    said = err[0].split("missing:", 1)[-1] if missing and err else (err or [""])[0]
    check(p.returncode == 1 and len(err) == 1 and what in said,
          f"{caps}: exit 1, one line saying {'missing: ' if missing else ''}{what!r} "
          f"({p.returncode}, {err})")


def check_events(events, target, how):
    check(len(events) >= 2, f"{how}: janks caught ({len(events)})")
    tasks = target_tasks(target)
    for ev in events:
        own = task_of(ev, tasks, f"{how}: the event matches one task of the target")
        check(matches_own(ev, own.dur_ns / 1e6, waited_ms=own.waited_ns / 1e6),
              f"{how}: wall_ms {ev['wall_ms']} is the target's own {own.dur_ns / 1e6:.3f}")
        check("busy_work" in ev["heaviest_stack"] and "main" in ev["heaviest_stack"],
              f"{how}: the stack is named ({ev['heaviest_stack'][:120]})")
        for path in ev["external_log"]:
            st = os.stat(path)
            check(st.st_uid == SERVICE and not st.st_mode & 0o027,
                  f"{how}: {os.path.basename(path)} is the service's, not others' "
                  f"({st.st_uid}, {stat.filemode(st.st_mode)})")


def watch(argv, seconds, how):
    """jankwatch in the box for @seconds; `jankwatch stats` asked meanwhile. Its events."""
    jw = Proc(boxed(CAPS, [jw_bin, *argv, "--all", "--duration", str(seconds)]), env=ENV)
    wait_for(lambda: any("ready" in l for l in jw.err) or jw.p.poll() is not None, 60,
             f"{how}: jankwatch ready")
    check(jw.p.poll() is None, f"{how}: jankwatch runs in the box ({jw.err})")
    time.sleep(seconds / 2)
    stats = subprocess.run([JW_BIN, "stats"], env=ENV, capture_output=True, text=True,
                           timeout=30)
    rows = list(csv.DictReader(stats.stdout.splitlines()))
    check(stats.returncode == 0 and any(r["pid"] == str(target.pid) for r in rows),
          f"{how}: `jankwatch stats` as root is answered, the target's rows in it "
          f"({stats.returncode}, {len(rows)} rows, {stats.stderr.strip()})")
    rc = jw.wait(seconds + 30)
    check(rc == 0, f"{how}: jankwatch exits 0 ({rc}, {jw.err[-3:]})")
    return [json.loads(l) for l in jw.out if l.startswith("{")]


def allowed_syscalls():
    """The system calls of SystemCallFilter=@system-service bpf perf_event_open, as this
    machine's systemd expands its groups."""
    text = subprocess.run(["systemd-analyze", "syscall-filter", "--no-pager"],
                          capture_output=True, text=True, check=True).stdout
    groups, cur = {}, None
    for line in text.splitlines():
        s = line.strip()
        if line.startswith("@"):
            cur = groups.setdefault(s, [])
        elif cur is not None and s and not s.startswith("#"):
            cur.append(s)

    def expand(g, seen=()):
        out = set()
        for x in groups.get(g, []):
            out |= expand(x, seen + (g,)) if x.startswith("@") and x not in seen else {x}
        return out
    filt = re.search(r"^SystemCallFilter=(.*)$", open(UNIT).read(), re.M).group(1).split()
    allowed = set()
    for item in filt:
        allowed |= expand(item) if item.startswith("@") else {item}
    return allowed


target = Proc(boxed((), [target_bin, "--busy", "--ms", "300", "--every", "700"], rw=(),
                    uid=NOBODY))
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    # As the unit runs it: its config's exe= line.
    events = watch(["--config", conf], 6, "exe= in the config")
    check_events(events, target, "exe= in the config")
    check(os.path.exists(os.path.join(logs, "events.jsonl")),
          "exe= in the config: events.jsonl written in the log directory")
    # And -p, the config's log_dir.
    events = watch(["--config", plain, "-p", str(target.pid)], 5, "-p")
    check_events(events, target, "-p")

    # Each capability the unit gives, taken away: named. CAP_SYS_ADMIN holds CAP_BPF's and
    # CAP_PERFMON's part too: without it, those two are what is missing (and CAP_SYS_ADMIN where
    # the kernel keeps uprobes to it).
    for cap in CAPS:
        fewer = [c for c in CAPS if c != cap]
        if cap == "sys_admin":
            refused(fewer, ["--config", plain, "-p", str(target.pid)], "CAP_BPF, CAP_PERFMON",
                    missing=True)
            continue
        if cap == "syslog":
            # /proc/kallsyms without addresses: it runs, and says kernel frames go unnamed.
            p = subprocess.run(boxed(fewer, [jw_bin, "--config", plain, "-p", str(target.pid),
                                             "--duration", "1"]),
                               env=ENV, capture_output=True, text=True, timeout=60)
            said = [l for l in p.stderr.splitlines() if "CAP_SYSLOG" in l]
            check(p.returncode == 0 and len(said) == 1 and "kernel frames" in said[0],
                  f"without CAP_SYSLOG: it runs, one line says kernel frames go unnamed "
                  f"({p.returncode}, {said})")
            continue
        refused(fewer, ["--config", plain, "-p", str(target.pid)], f"CAP_{cap.upper()}",
                missing=True)

    # The paths: a log directory it may not write (it runs on, its events on stdout only), a
    # runtime directory it cannot make: one line each.
    p = subprocess.run(boxed(CAPS, [jw_bin, "--config", plain, "-p", str(target.pid),
                                    "--log-dir", os.path.join(work, "elsewhere"), "--duration",
                                    "1"], rw=(run_dir,)),
                       env=ENV, capture_output=True, text=True, timeout=60)
    said = [l for l in p.stderr.splitlines() if "log directory" in l]
    check(p.returncode == 0 and len(said) == 1 and "Read-only file system" in said[0] and
          "ReadWritePaths=" in said[0],
          f"a log directory the unit does not let it write: one line says so and how "
          f"({p.returncode}, {said})")
    p = subprocess.run(boxed(CAPS, [jw_bin, "--config", plain, "-p", str(target.pid),
                                    "--duration", "1"], rw=(logs,)),
                       env=dict(ENV, JANKWATCH_RUN_DIR=os.path.join(work, "norun")),
                       capture_output=True, text=True, timeout=60)
    said = [l for l in p.stderr.splitlines() if "jankwatch stats` cannot reach" in l]
    check(p.returncode == 0 and len(said) == 1 and "Read-only file system" in said[0],
          f"no runtime directory: it runs, and says in one line that `jankwatch stats` cannot "
          f"reach it ({p.returncode}, {said})")

    # Its system calls, against the unit's filter.
    if shutil.which("strace") and shutil.which("systemd-analyze"):
        trace = os.path.join(work, "strace.txt")
        p = subprocess.run(["strace", "-f", "-qq", "-o", trace,
                            *boxed(CAPS, [jw_bin, "--config", conf, "--all", "--duration", "4"])],
                           env=ENV, capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"under strace: jankwatch exits 0 ({p.returncode})")
        made, after = set(), False
        for line in open(trace):
            m = re.match(r"^\d+\s+([a-z_0-9]+)\(", line)
            if not m:
                continue
            if m.group(1) == "execve" and f'"{jw_bin}"' in line:
                after = True
            elif after:
                made.add(m.group(1))
        allowed = allowed_syscalls()
        # x86-64's uretprobe system call (335, 6.11 and newer; strace 6.1 knows it by number
        # only) is the kernel's return trampoline's, not jankwatch's code: it runs where
        # wait_tracepoints=2 times a uprobe pair on a function of its own, and seccomp lets it
        # through whatever the filter says (kernel commit "seccomp: passthrough uretprobe
        # systemcall without filtering").
        if os.uname().machine == "x86_64":
            made -= {"uretprobe", "syscall_0x14f"}
        check(after and len(made) > 20 and made <= allowed,
              f"the {len(made)} system calls jankwatch made are all in the unit's "
              f"SystemCallFilter (not: {sorted(made - allowed)})")
    else:
        print("ok: (strace or systemd-analyze missing here: the system calls are checked on "
              "the machine's own run)")
finally:
    target.kill()
    shutil.rmtree(work, ignore_errors=True)
print("PASS")
