# SPDX-License-Identifier: GPL-2.0-only
"""Every bad input gets one clear line on stderr, exit 2 for usage and 1 otherwise, and leaves
nothing behind (no log directory created, no probe left attached)."""
import os
import shutil
import signal
import subprocess

from jwtest import *

require_bpf()
NO_PID = absent_pid()


# jankwatch for another user to run: a copy in a directory anyone can read.
SHARED_BIN = shutil.copy(JW_BIN, os.path.join(LogDir().shared(), "jankwatch"))


def run(args, user=None):
    argv = [JW_BIN, *args]
    if user:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", SHARED_BIN,
                *args]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr.strip().splitlines()


def expect(args, rc, pattern, user=None):
    logdir = os.path.join(LogDir().path, "never")
    got, out, err = run([*args, "--log-dir", logdir] if "--help" not in args else args, user)
    check(got == rc, f"{' '.join(args)}: exit {rc} (got {got}; stderr {err})")
    check(len(err) == 1 and err[0].startswith("jankwatch: ") and pattern in err[0],
          f"one line on stderr naming the problem: {err}")
    check(out == "", "nothing on stdout")
    check(not os.path.exists(logdir), "no log directory left behind")


target = start_target("--busy", "--ms", "10", "--every", "1000")
try:
    probe = f"{TARGET}:dispatch"
    # Usage: exit 2.
    expect(["--bogus"], 2, "--bogus")
    expect(["-p", str(target.pid), "--probe", probe, "--set", "sample_interval=40"], 2,
           "sample_interval=40")
    expect(["-p", str(target.pid), "--probe", probe, "--set", "no_such_key=1"], 2, "no_such_key")
    expect(["-p", "abc", "--probe", probe], 2, "abc")
    expect(["--probe", probe], 2, "-p")
    expect(["-p", str(target.pid), "--loop", "bogus"], 2, "--loop bogus")
    expect(["-p", str(target.pid), "--probe", "nocolon"], 2, "nocolon")
    # Failures: exit 1.
    expect(["-p", str(NO_PID), "--probe", probe], 1, str(NO_PID))
    expect(["-p", str(target.pid), "--probe", "/etc/passwd:main"], 1, "not an ELF file")
    expect(["-p", str(target.pid), "--probe", f"{TARGET}:dispatc"], 1, "close matches: dispatch")
    expect(["-p", str(target.pid), "--probe", f"{TARGET}:dispatch:no_exit_here"], 1,
           "no_exit_here")
    expect(["-p", str(target.pid), "--probe", "libnothere.so:f"], 1, "libnothere.so")
    expect(["-p", str(target.pid), "--probe", probe, "--thread", str(NO_PID)], 1, str(NO_PID))
    expect(["-p", str(target.pid), "--probe", probe], 1, "root", user="65534")
    go = Proc([os.path.join(TARGETS, "jw_fakego")])
    try:
        expect(["-p", str(go.pid)], 1, "is a Go program")
    finally:
        go.kill()
    # A preset forced on a program that is not that loop, a loop thread that is not there.
    expect(["-p", str(target.pid), "--loop", "glib"], 1, "maps no libglib-2.0.so")
    expect(["-p", str(target.pid), "--loop", "redis"], 1, "does not export aeMain")
    # a preset of two libraries names both, and its functions as C++ reads them
    expect(["-p", str(target.pid), "--loop", "qt"], 1,
           "maps no libQt5Core.so or libQt6Core.so with "
           "QCoreApplication::notifyInternal2(QObject*, QEvent*)")
    expect(["-p", str(target.pid), "--thread", "no-such-thread"], 1, "no-such-thread")
    expect(["-p", str(target.pid), "--loop", "glib", "--probe", probe], 2, "give one way")

    # A jankwatch that was killed leaves its statistics socket behind. The next monitor clears
    # it as housekeeping (logged at the info level, so not with -q); `jankwatch stats` says so.
    logs = LogDir()

    def killed_jankwatch():
        jw = start_jankwatch(["-p", str(target.pid), "--probe", probe, "--log-dir", logs.path])
        sock = f"/run/jankwatch/{jw.pid}.sock"
        check(os.path.exists(sock), f"a running jankwatch has {sock}")
        os.kill(jw.pid, signal.SIGKILL)
        jw.wait(10)
        check(os.path.exists(sock), "a killed jankwatch leaves its socket")
        return jw.pid, sock

    dead, sock = killed_jankwatch()
    rc, out, err = run(["-p", str(target.pid), "--probe", probe, "--duration", "0.5",
                        "--log-dir", logs.path])
    check(rc == 0 and not os.path.exists(sock) and
          any(f"removed {sock}, left by jankwatch pid {dead} which no longer runs" in l
              for l in err), f"the next monitor removes it and says so at the info level: {err}")
    dead, sock = killed_jankwatch()
    p = subprocess.run([JW_BIN, "stats"], capture_output=True, text=True, timeout=30)
    check(not os.path.exists(sock) and
          f"jankwatch stats: removed {sock}, left by jankwatch pid {dead} which no longer runs"
          in p.stderr, f"`jankwatch stats` removes it and says so: {p.stderr!r}")
    dead, sock = killed_jankwatch()

    # Among several targets, the one that cannot be watched is said so; the others are watched.
    # (A socket left by a killed jankwatch is cleared without a word under -q.)
    rc, out, err = run(["-p", f"{target.pid},{NO_PID}", "--duration", "1", "--log-dir", logs.path,
                        "-q"])
    check(rc == 0, f"-p LIVE,{NO_PID}: exit 0 ({rc}; {err})")
    check(len(err) == 1 and str(NO_PID) in err[0], f"one line for the missing process: {err}")
    check(not os.path.exists(sock), f"{sock} removed")
    glib = Proc([os.path.join(TARGETS, "jw_glib"), "--ms", "10", "--every", "500"])
    try:
        rc, out, err = run(["-p", f"{target.pid},{glib.pid}", "--loop", "glib", "--duration",
                            "1", "--log-dir", logs.path, "-v"])
    finally:
        glib.kill()
    check(rc == 0, f"--loop glib on a GLib and a plain program: exit 0 ({rc})")
    check(any("maps no libglib-2.0.so" in l and str(target.pid) in l for l in err) and
          any(f"watching pid {glib.pid}" in l for l in err) and
          not any(f"watching pid {target.pid}" in l for l in err),
          f"the plain one is refused, the GLib one watched: {err}")
    logs.cleanup()

    # Help: exit 0, usage on stdout.
    p = subprocess.run([JW_BIN, "--help"], capture_output=True, text=True, timeout=10)
    check(p.returncode == 0 and "--probe" in p.stdout and p.stderr == "", "--help prints usage")
finally:
    target.kill()
print("PASS")
