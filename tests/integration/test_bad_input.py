# SPDX-License-Identifier: GPL-2.0-only
"""Every bad input gets one clear line on stderr, exit 2 for usage and 1 otherwise, and leaves
nothing behind (no log directory created, no probe left attached)."""
import os
import subprocess

from jwtest import *

require_bpf()


def run(args, user=None):
    argv = [JW_BIN, *args]
    if user:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *argv]
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
    expect(["-p", "999999", "--probe", probe], 1, "999999")
    expect(["-p", str(target.pid), "--probe", "/etc/passwd:main"], 1, "not an ELF file")
    expect(["-p", str(target.pid), "--probe", f"{TARGET}:dispatc"], 1, "close matches: dispatch")
    expect(["-p", str(target.pid), "--probe", f"{TARGET}:dispatch:no_exit_here"], 1,
           "no_exit_here")
    expect(["-p", str(target.pid), "--probe", "libnothere.so:f"], 1, "libnothere.so")
    expect(["-p", str(target.pid), "--probe", probe, "--thread", "999999"], 1, "999999")
    expect(["-p", str(target.pid), "--probe", probe], 1, "root", user="65534")
    go = Proc([os.path.join(TARGETS, "jw_fakego")])
    try:
        expect(["-p", str(go.pid)], 1, "is a Go program")
    finally:
        go.kill()
    # Help: exit 0, usage on stdout.
    p = subprocess.run([JW_BIN, "--help"], capture_output=True, text=True, timeout=10)
    check(p.returncode == 0 and "--probe" in p.stdout and p.stderr == "", "--help prints usage")
finally:
    target.kill()
print("PASS")
