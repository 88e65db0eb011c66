# SPDX-License-Identifier: GPL-2.0-only
"""jankwatch runs without root, on capabilities: user nobody with CAP_BPF, CAP_PERFMON (and
CAP_SYS_ADMIN where the kernel keeps uprobes to it) watches its own 300 ms janks. Without one of
them it exits 1 with one line naming what is missing; on another user's process without
CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH, one line naming the missing; with them, it runs."""
import shutil
import stat

from jwtest import *

require_bpf()
NOBODY = 65534
work = tempfile.mkdtemp(prefix="jw-caps-")
os.chmod(work, 0o755)
jw_bin = shutil.copy(JW_BIN, os.path.join(work, "jankwatch"))
target_bin = shutil.copy(TARGET, os.path.join(work, "jw_target"))
logdir = os.path.join(work, "logs")
os.mkdir(logdir)
os.chown(logdir, NOBODY, NOBODY)
for f in (jw_bin, target_bin):
    os.chmod(f, 0o755)


def as_nobody(argv, caps=()):
    pre = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    if caps:
        pre += [f"--inh-caps={','.join('+' + c for c in caps)}",
                f"--ambient-caps={','.join('+' + c for c in caps)}"]
    return pre + argv


def run(caps, pid, extra=()):
    p = subprocess.run(as_nobody([jw_bin, "-p", str(pid), "--probe", f"{target_bin}:dispatch",
                                  "--log-dir", logdir, "--duration", "1", *extra], caps),
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr.strip().splitlines()


def refused(caps, pid, missing):
    rc, out, err = run(caps, pid)
    check(rc == 1 and len(err) == 1 and err[0].startswith("jankwatch: ") and missing in err[0]
          and out == "", f"{caps}: exit 1, one line naming {missing!r} ({rc}, {err})")


BASE = ("bpf", "perfmon")
mine = Proc(as_nobody([target_bin, "--busy", "--ms", "300", "--every", "700"]))
theirs = Proc([target_bin, "--busy", "--ms", "300", "--every", "700"])
try:
    wait_for(lambda: process_age_s(mine.pid) >= 3, 10, "the target to be 3 s old")
    # The two the kernel asks of every BPF tracing program and perf event: each named.
    refused((), mine.pid, "missing: CAP_BPF, CAP_PERFMON")
    refused(("bpf",), mine.pid, "missing: CAP_PERFMON")
    refused(("perfmon", "sys_ptrace"), mine.pid, "missing: CAP_BPF")
    # Uprobes: CAP_PERFMON was enough until Linux 6.5 (and its stable backports) gave them back
    # to CAP_SYS_ADMIN; either the two run, or CAP_SYS_ADMIN is named.
    rc, out, err = run(BASE, mine.pid)
    need_admin = rc != 0
    if need_admin:
        check(rc == 1 and len(err) == 1 and "missing: CAP_SYS_ADMIN" in err[0],
              f"CAP_BPF and CAP_PERFMON: this kernel's uprobes need CAP_SYS_ADMIN, said in one "
              f"line ({rc}, {err})")
    caps = BASE + (("sys_admin",) if need_admin else ())
    # Another user's process: CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH (its auxv and mem are
    # its owner's alone), each named when missing.
    refused(caps, theirs.pid, f"pid {theirs.pid} (jw_target): another user's process (uid 0) "
            "needs CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH; missing: CAP_SYS_PTRACE, "
            "CAP_DAC_READ_SEARCH")
    refused(caps + ("sys_ptrace",), theirs.pid, "missing: CAP_DAC_READ_SEARCH")
    # Its own process: a jank caught, its stack log written, by nobody.
    rc, out, err = run(caps, mine.pid, ["--set", "ignore_startup_time=3", "--all", "--duration",
                                        "2.5"])
    events = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    check(rc == 0 and events, f"{caps}: jankwatch runs as nobody and reports ({rc}, {err})")
    tasks = target_tasks(mine)
    for ev in events:
        own = task_of(ev, tasks, "the event matches one task of the target")
        check(matches_own(ev, own.dur_ns / 1e6, waited_ms=own.waited_ns / 1e6),
              f"wall_ms {ev['wall_ms']} is the target's own {own.dur_ns / 1e6:.3f}")
        path = ev["external_log"][0]
        check(os.stat(path).st_uid == NOBODY and "busy_work" in open(path).read(),
              f"{os.path.basename(path)} is nobody's and names busy_work")
    # And with both, root's process too.
    rc, out, err = run(caps + ("sys_ptrace", "dac_read_search"), theirs.pid)
    check(rc == 0 and any(f"watching pid {theirs.pid}" in l for l in err),
          f"root's process with CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH: watched ({rc}, {err})")
finally:
    mine.kill()
    theirs.kill()
    shutil.rmtree(work, ignore_errors=True)
print("PASS")
