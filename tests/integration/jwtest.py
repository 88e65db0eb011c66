# SPDX-License-Identifier: GPL-2.0-only
"""What every integration test needs: the binaries, targets, jankwatch runs, waits with deadlines.

A test that cannot run because BPF is unavailable (not root, no bpf() syscall) exits 77, which
ctest reports as skipped; scripts/test.sh turns a skip into a failure under CI=true.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77
JW_BIN = os.environ.get("JW_BIN", "build/jankwatch")
TARGETS = os.environ.get("JW_TARGETS", "build/tests/targets")
TARGET = os.path.join(TARGETS, "jw_target")


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print(f"ok: {msg}")


def require_bpf():
    """Skips (exit 77) only when BPF truly cannot be used here."""
    if os.geteuid() != 0:
        print("SKIP: integration tests need root", file=sys.stderr)
        sys.exit(SKIP)
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        print("SKIP: the kernel has no BTF (/sys/kernel/btf/vmlinux)", file=sys.stderr)
        sys.exit(SKIP)


def wait_for(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    fail(f"timed out after {timeout}s waiting for {what}")


class Proc:
    """A child whose stdout and stderr lines are collected as they come."""

    def __init__(self, argv, **kw):
        self.argv = argv
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, errors="replace", **kw)
        self.out, self.err = [], []
        self._threads = [threading.Thread(target=self._pump, args=(s, l), daemon=True)
                         for s, l in ((self.p.stdout, self.out), (self.p.stderr, self.err))]
        for t in self._threads:
            t.start()

    def _pump(self, stream, lines):
        for line in stream:
            lines.append(line.rstrip("\n"))

    @property
    def pid(self):
        return self.p.pid

    def wait(self, timeout):
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            fail(f"{self.argv[0]} did not exit within {timeout}s")
        for t in self._threads:
            t.join(5)
        return rc

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


class TargetTask:
    def __init__(self, line):
        _, n, kind, begin, dur = line.split()
        self.n, self.kind = int(n), kind
        self.begin_ns, self.dur_ns = int(begin), int(dur)


def start_target(*args):
    return Proc([TARGET, *args])


def target_tasks(proc):
    return [TargetTask(l) for l in list(proc.out) if l.startswith("task ")]


def process_age_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")


def mono_to_epoch_ms(mono_ns):
    offset = time.time() - time.clock_gettime(time.CLOCK_MONOTONIC)
    return mono_ns / 1e6 + offset * 1000


class LogDir:
    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="jw-test-")

    def files(self, prefix=""):
        return sorted(f for f in os.listdir(self.path) if f.startswith(prefix))

    def read(self, name):
        with open(os.path.join(self.path, name)) as f:
            return f.read()

    def cleanup(self):
        shutil.rmtree(self.path, ignore_errors=True)


def run_jankwatch(args, timeout):
    """Runs jankwatch to completion; returns (rc, events, stderr lines)."""
    p = Proc([JW_BIN, *args])
    rc = p.wait(timeout)
    events = []
    for line in p.out:
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            fail(f"stdout line is not JSON: {line!r}")
    if rc != 0 or os.environ.get("JW_TEST_VERBOSE"):
        print("\n".join(p.err), file=sys.stderr)
    return rc, events, p.err


def start_jankwatch(args):
    p = Proc([JW_BIN, *args])
    wait_for(lambda: any("ready" in l for l in p.err) or p.p.poll() is not None, 30,
             "jankwatch to be ready")
    if p.p.poll() is not None:
        fail("jankwatch exited early: " + "\n".join(p.err))
    return p


def stack_tree(text):
    """The tree part of a stack log: the lines after the first blank line."""
    return text.split("\n\n", 1)[1].splitlines()


def header(text):
    head = text.split("\n\n", 1)[0]
    return dict(l.split(": ", 1) for l in head.splitlines())
