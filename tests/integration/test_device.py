# SPDX-License-Identifier: GPL-2.0-only
"""The static jankwatch (cmake -DJW_STATIC=ON) on a device-shaped root that holds no glibc at all:
a static busybox, the static jankwatch, programs linked with musl and musl's libc.so, and none of
/etc (no passwd, no localtime), /tmp, /var/log, /run; /proc, /sys and /dev mounted, the kernel's
BTF hidden (/sys/kernel/btf mounted away, given by --btf), tracefs not mounted, kptr_restrict=2.
Driven from outside the root through chroot. There, with the device's defaults:
- it starts, says it writes to /data/local/tmp/jankwatch (there is no /var/log), and writes there;
- a busy 300 ms task of a musl program with frame pointers (-p) and of one without (-- CMD, held
  before its exec) is reported within 5% of the program's own figure in syscall mode, on uprobes
  on musl's wait functions and on the tracepoints, and under --probe; the stack log reaches main
  by name;
- a sleeping task: blocked, its unnamed kernel frames one [kernel] in the event's stack (the stack
  log keeps their addresses), kptr_restrict said once; a hang is raised while the task runs;
- without --btf it refuses in one line; --user takes uid:gid with no /etc/passwd, and a name is
  refused in one line; times are UTC, said so, and the file names are in UTC;
- `jankwatch stats` reaches the running instance through the device's run directory;
- the release tarball, unpacked into an empty directory and run there in a chroot with only
  /proc, /sys and /dev, watches a process of the host.
In the VM matrix (JW_VM=1) the kernel-independent parts are left to the host's run."""
import calendar
import platform
import re
import shutil
import subprocess
import tempfile

from jwtest import *

require_bpf()
STATIC = os.environ.get("JW_STATIC_BIN", "")
ARCH = platform.machine()
LOADER = f"/lib/ld-musl-{ARCH}.so.1"
MUSL = [os.path.join(TARGETS, n) for n in ("jw_target_musl", "jw_target_musl_nofp")]
BUSYBOX = shutil.which("busybox") or "/bin/busybox"
CHROOT = shutil.which("chroot") or "/usr/sbin/chroot"
# The kernel's BTF, given to the device as a file: its own, or in the VM without it the one
# vmtest.sh cut from its image.
KERNEL_BTF = ("/sys/kernel/btf/vmlinux" if os.path.exists("/sys/kernel/btf/vmlinux") else
              os.environ.get("JW_TEST_BTF", ""))
missing = [p for p in (STATIC, LOADER, BUSYBOX, KERNEL_BTF, *MUSL)
           if not p or not os.path.exists(p)]
if missing:
    print(f"SKIP: missing {missing} (scripts/test.sh builds build-static; scripts/setup.sh "
          "installs musl-tools and busybox-static)", file=sys.stderr)
    sys.exit(SKIP)
IN_VM = os.environ.get("JW_VM") == "1"
BUSY = ["--busy", "--ms", "300", "--every", "700", "--fast", "5"]
BTF = "/data/local/tmp/vmlinux.btf"
LOGS = "/data/local/tmp/jankwatch"


class Device:
    """The device-shaped root: built in a temporary directory, its mounts undone at the end."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="jw-device-")
        os.chmod(self.root, 0o755)  # as a device's /: --user's programs run from it
        self.mounts = []
        for d in ("jw/targets", "data/local/tmp", "bin", "lib", "proc", "sys", "dev"):
            os.makedirs(self.path(d))
        shutil.copy(STATIC, self.path("jw/jankwatch"))
        for t in MUSL:
            shutil.copy(t, self.path("jw/targets"))
        shutil.copy(os.path.realpath(LOADER), self.path(LOADER))
        shutil.copy(BUSYBOX, self.path("bin/busybox"))
        os.symlink("busybox", self.path("bin/sh"))
        shutil.copy(KERNEL_BTF, self.path(BTF))
        self.mount(["-t", "proc", "proc"], "proc")
        self.mount(["-t", "sysfs", "sysfs"], "sys")
        self.mount(["-t", "tmpfs", "none"], "sys/kernel/btf")
        self.mount(["--bind", "/dev"], "dev")
        with open("/proc/sys/kernel/kptr_restrict") as f:
            self.kptr = f.read().strip()
        with open("/proc/sys/kernel/kptr_restrict", "w") as f:
            f.write("2")

    def path(self, p):
        return os.path.join(self.root, p.lstrip("/"))

    def mount(self, how, at):
        subprocess.run(["mount", *how, self.path(at)], check=True)
        self.mounts.append(self.path(at))

    def run(self, *argv):
        """A process in the root (chroot execs it: the pid is the program's)."""
        return Proc([CHROOT, self.root, *argv], env={"PATH": "/bin"})

    def target(self, binary, *args):
        """A test program in the root, once chroot has exec'd it: before that the pid is
        chroot's, a glibc program outside the root, which jankwatch -p would refuse."""
        target = self.run(f"/jw/targets/{binary}", *args)

        def execd():
            try:
                return os.readlink(f"/proc/{target.pid}/exe").endswith(f"/{binary}")
            except OSError:
                return target.p.poll() is not None
        wait_for(execd, 10, f"{binary} to be exec'd")
        return target

    def close(self):
        # What jankwatch started with -- CMD and left running when it stopped (--duration, a
        # SIGINT to it alone): every process whose root is this one.
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if os.readlink(f"/proc/{pid}/root") == self.root:
                    os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
        with open("/proc/sys/kernel/kptr_restrict", "w") as f:
            f.write(self.kptr)
        for m in reversed(self.mounts):
            subprocess.run(["umount", "-l", m])
        shutil.rmtree(self.root, ignore_errors=True)


def jankwatch(dev, args, seconds, cmd=None, btf=True):
    """Runs the static jankwatch in the root for @seconds; returns it once it has exited."""
    jw = dev.run("/jw/jankwatch", *(["--btf", BTF] if btf else []), "--all", "--duration",
                 str(seconds), *args, *(["--", *cmd] if cmd else []))
    rc = jw.wait(seconds + 60)
    if rc != 0 or os.environ.get("JW_TEST_VERBOSE"):
        print("\n".join(jw.err), file=sys.stderr)
    jw.rc = rc
    return jw


# A watch of 6 s: a task a second (BUSY's 300 ms and its 700 ms wait, longer in an emulated VM)
# ends 5 or 6 times in it. It was 4 s, whose 3 or 4 (3 in 5 of 21 cases in arm64's VM, run
# alone) left no room for the task a slower start or end loses, against check_busy's 3.
def by_pid(dev, binary, args, seconds=6, target_args=BUSY):
    target = dev.target(binary, *target_args)
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        jw = jankwatch(dev, ["-p", str(target.pid), "--set", "ignore_startup_time=3", *args],
                       seconds)
    finally:
        target.kill()
    return jw, events_of(jw.out), target_tasks(target)


def by_cmd(dev, binary, args, seconds=7):
    jw = jankwatch(dev, ["--set", "ignore_startup_time=3", *args], seconds,
                   cmd=[f"/jw/targets/{binary}", *BUSY])
    return jw, events_of(jw.out), tasks_of(jw.out)


def check_said_once(what, jw, text):
    said = [l for l in jw.err if text in l]
    check(len(said) == 1, f"{what}: said once: {text!r} ({len(said)} times)")


def check_busy(dev, what, jw, events, tasks):
    check(jw.rc == 0, f"{what}: the static jankwatch exits 0 ({jw.rc})")
    check(len(events) >= 3, f"{what}: at least 3 janks ({len(events)})")
    check_said_once(what, jw, f"ready, writing to {LOGS} (no /var/log to write in here")
    check_said_once(what, jw, "kptr_restrict=2")
    for ev in events:
        mine = task_of(ev, tasks, f"{what}: the event matches one task of the program")
        own_ms = mine.dur_ns / 1e6
        check(matches_own(ev, own_ms, around_ms=mine.around_ms(ev)),
              f"{what}: wall_ms {ev['wall_ms']} (runq {ev['runq_ms']}) within 5% of "
              f"{own_figures(mine, ev)}")
        log = ev["external_log"][0]
        check(log.startswith(LOGS + "/"), f"{what}: the stack log is in {LOGS} ({log})")
        frames = parse_tree(stack_tree(open(dev.path(log)).read()))
        names = {f.symbol for f in frames}
        check({"busy_work", "dispatch", "main"} <= names,
              f"{what}: the stack log reaches main by name ({sorted(map(str, names))})")
        # Every sample, wherever it stood (the vdso, musl's clock_gettime, a PLT stub).
        through_main = sum(f.count for f in frames if f.symbol == "main")
        if through_main != tree_samples(frames):
            print(f"note: {what}: the stack log's tree ({log}):\n" +
                  "\n".join(f.line for f in frames))
        check(through_main == tree_samples(frames),
              f"{what}: each sample's stack reaches main ({through_main} of "
              f"{tree_samples(frames)})")


# The root's mounts and kptr_restrict=2 are the machine's until dev.close(): a SIGTERM (a harness
# stopping the run) goes through it too, where Python's default would leave them behind.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
dev = Device()
try:
    # Syscall mode on uprobes on musl's wait functions, then on the tracepoints (no tracefs).
    for wt in (0, 1):
        what = f"jw_target_musl -p, wait_tracepoints={wt}"
        check_busy(dev, what, *by_pid(dev, "jw_target_musl", ["--loop", "syscall", "--set",
                                                               f"wait_tracepoints={wt}"]))
    # A program without frame pointers, started by the static jankwatch (which maps no C library
    # of its own): musl's wait functions found from the interpreter the program names.
    what = "jw_target_musl_nofp -- CMD, wait_tracepoints=0"
    jw, events, tasks = by_cmd(dev, "jw_target_musl_nofp", ["--set", "wait_tracepoints=0"])
    check_busy(dev, what, jw, events, tasks)
    check(any("wait functions in /lib/ld-musl-" in l or "-musl/libc.so" in l for l in jw.err),
          f"{what}: the waits hooked are musl's")
    # Under --probe.
    check_busy(dev, "jw_target_musl_nofp -p --probe", *by_pid(
        dev, "jw_target_musl_nofp", ["--probe", "/jw/targets/jw_target_musl_nofp:dispatch"]))

    # A sleeping task: blocked; the kernel's frames cannot be named, one [kernel] in the event.
    jw, events, tasks = by_pid(dev, "jw_target_musl", [], target_args=["--sleep", "--ms", "300",
                                                                       "--every", "600"])
    check(jw.rc == 0 and len(events) >= 3, f"sleep: 3 janks ({jw.rc}, {len(events)})")
    for ev in events:
        mine = task_of(ev, tasks, "sleep: the event matches one task of the program")
        check(matches_own(ev, mine.dur_ns / 1e6, around_ms=mine.around_ms(ev)),
              f"sleep: wall_ms {ev['wall_ms']} within 5% of {own_figures(mine, ev)}")
        # A switch the kernel kept from tracing still leaves the cause blocked (the time it hid
        # is put where the kernel's own counts say); the event says so (offcpu_partial), and
        # where the thread slept is known only when its switch out was seen.
        check(ev["cause"] == "blocked", f"sleep: cause blocked ({json.dumps(ev)})")
        if split_hidden(ev):
            print(f"note: sleep: a switch the kernel kept from tracing: {json.dumps(ev)}; "
                  f"{[l for l in jw.err if 'kept' in l or 'skipped' in l]}")
            continue
        stack = ev["heaviest_stack"]
        check(stack.startswith("[kernel]<-") and "[kernel]+0x" not in stack and
              stack.count("[kernel]") == 1,
              f"sleep: the kernel's frames are one [kernel] ({stack})")
        check("dispatch" in stack and "main" in stack, f"sleep: the stack reaches main ({stack})")
        text = open(dev.path(ev["external_log"][0])).read()
        check("[kernel]+0x" in text or " [kernel]" in text,
              "sleep: the stack log keeps the kernel frames' addresses")

    # A hang, raised while the task still runs.
    target = dev.target("jw_target_musl", "--sleep", "--ms", "5000", "--every", "500",
                     "--count", "1", "--hold")
    try:
        wait_for(lambda: "hold" in target.out, 10, "the target to hold")
        jw = dev.run("/jw/jankwatch", "--btf", BTF, "--all", "-p", str(target.pid), "--set",
                     "ignore_startup_time=3", "--set", "hang_ms=2500")
        wait_for(lambda: any("ready" in l for l in jw.err) or jw.p.poll() is not None, 60,
                 "jankwatch to be ready")
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        os.kill(target.pid, signal.SIGUSR1)
        rc = jw.wait(60)
    finally:
        target.kill()
    kinds = [e["event"] for e in events_of(jw.out)]
    check(rc == 0 and kinds == ["MAIN_THREAD_HANG", "MAIN_THREAD_JANK"],
          f"hang: a hang, then its jank, once the program is gone ({rc}, {kinds})")

    if not IN_VM:
        # Without --btf: one line, saying how.
        target = dev.target("jw_target_musl", *BUSY)
        try:
            jw = jankwatch(dev, ["-p", str(target.pid)], 1, btf=False)
        finally:
            target.kill()
        said = [l for l in jw.err if "--btf" in l]
        check(jw.rc != 0 and len(said) == 1, f"no BTF: refused in one line ({jw.err})")
        # --user without /etc/passwd: numbers run, a name is refused in one line.
        jw = dev.run("/jw/jankwatch", "--btf", BTF, "--user", "2000:2001", "--",
                     "/jw/targets/jw_target_musl", *BUSY)
        wait_for(lambda: any("started " in l for l in jw.err) or jw.p.poll() is not None, 60,
                 "the program to start")
        started = [l for l in jw.err if "started " in l]
        ids = []
        if started:
            pid = int(started[0].rsplit(" ", 1)[1])
            with open(f"/proc/{pid}/status") as f:
                ids = [l.split()[1:3] for l in f if l.startswith(("Uid", "Gid"))]
        jw.p.send_signal(signal.SIGINT)
        rc = jw.wait(60)
        check(rc == 0 and ids == [["2000", "2000"], ["2001", "2001"]],
              f"--user 2000:2001 with no /etc/passwd: the program runs so ({rc}, {ids})")
        check(started and not os.path.exists(f"/proc/{pid}")
              and any("still ran: ended it" in l for l in jw.err),
              f"--user 2000:2001: the program ended with jankwatch ({jw.err[-3:]})")
        jw = jankwatch(dev, ["--user", "shell"], 2, cmd=["/bin/busybox", "true"])
        said = [l for l in jw.err if "--user shell" in l]
        check(jw.rc != 0 and len(said) == 1 and "/etc/passwd" in said[0],
              f"--user NAME with no /etc/passwd: refused in one line ({jw.err})")
        # No /etc/localtime: UTC, said at exit; the stack logs' names in UTC.
        jw, events, tasks = by_pid(dev, "jw_target_musl", [], seconds=3)
        check_said_once("utc", jw, "are UTC: no TZ and no /etc/localtime")
        check(events, "utc: janks")
        for ev in events:
            # stack-PID-YYYYmmddHHMMSS-mmm.txt, at the event's time.
            name = os.path.basename(ev["external_log"][0])
            stamp = re.search(r"-(\d{14})-\d{3}\.txt$", name)
            named = calendar.timegm(time.strptime(stamp.group(1), "%Y%m%d%H%M%S")) if stamp else 0
            check(abs(named - ev["time"] / 1000) < 2, f"utc: {name} is named in UTC")
        # Nothing of glibc's shared world is reached at run time: under strace, with
        # DEBUGINFOD_URLS set (libdw's debuginfod client dlopens libdebuginfod then), no loader
        # cache, shared C library, NSS or gconv module is opened after jankwatch starts; one
        # line says that no debug files are fetched.
        target = dev.target("jw_target_musl", *BUSY)
        trace = dev.path("/data/local/tmp/strace.out")
        try:
            wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
            run = subprocess.run(
                ["strace", "-f", "-e", "trace=open,openat,execve", "-o", trace, CHROOT, dev.root,
                 "/jw/jankwatch", "--btf", BTF, "-p", str(target.pid), "--set",
                 "ignore_startup_time=3", "--all", "--duration", "3"],
                env={"PATH": "/bin", "DEBUGINFOD_URLS": "http://127.0.0.1:9"},
                capture_output=True, text=True, timeout=120)
        finally:
            target.kill()
        with open(trace) as f:
            lines = f.read().splitlines()
        start = next((i for i, l in enumerate(lines) if 'execve("/jw/jankwatch"' in l), None)
        check(run.returncode == 0 and start is not None and run.stdout.count("\n") >= 2,
              f"strace: the static jankwatch ran and reported ({run.returncode})")
        shared = [l for l in lines[start:] if re.search(
            r'"[^"]*(ld\.so\.cache|/etc/ld\.so|libc\.so\.6|libdebuginfod|libcurl|nsswitch|'
            r'libnss_|gconv|locale)', l)]
        check(not shared, f"strace: nothing of a shared glibc is opened ({shared[:3]})")
        said = [l for l in run.stderr.splitlines() if "fetches no debug files" in l]
        check(len(said) == 1, f"DEBUGINFOD_URLS: one line says no debug files come ({said})")

        # `jankwatch stats` finds the running instance in the device's run directory.
        target = dev.target("jw_target_musl", *BUSY)
        try:
            jw = dev.run("/jw/jankwatch", "--btf", BTF, "-p", str(target.pid))
            wait_for(lambda: any("ready" in l for l in jw.err) or jw.p.poll() is not None, 60,
                     "jankwatch to be ready")
            time.sleep(1.5)
            stats = subprocess.run([CHROOT, dev.root, "/jw/jankwatch", "stats"],
                                   capture_output=True, text=True, timeout=60)
            jw.p.send_signal(signal.SIGINT)
            rc = jw.wait(60)
        finally:
            target.kill()
        check(stats.returncode == 0 and "jw_target_musl" in stats.stdout,
              f"stats: reaches the instance ({stats.returncode}, {stats.stderr.strip()}; the "
              f"instance: {rc}, {jw.err})")
        check(os.path.isdir(dev.path("/data/local/tmp/jankwatch-run")),
              "stats: its socket is in /data/local/tmp/jankwatch-run")
finally:
    dev.close()

if not IN_VM:
    # The release tarball (scripts/dist.sh), unpacked into an empty directory and run from there
    # with only /proc, /sys and /dev mounted: it watches a process of the host, whose files it
    # reaches under the process's own root.
    out = tempfile.mkdtemp(prefix="jw-dist-")
    made = subprocess.run([os.path.join(os.environ.get("JW_SRC", "."), "scripts/dist.sh"),
                           "--arch", {"aarch64": "arm64"}.get(ARCH, ARCH), "--out", out],
                          capture_output=True, text=True, timeout=900)
    check(made.returncode == 0, f"dist.sh makes the tarball ({made.stderr.strip()})")
    tarball = [f for f in os.listdir(out) if f.endswith(".tar.gz")]
    check(len(tarball) == 1 and "SHA256SUMS" in os.listdir(out),
          f"one tarball and its sums ({tarball})")
    empty = tempfile.mkdtemp(prefix="jw-empty-")
    os.chmod(empty, 0o755)
    subprocess.run(["tar", "-C", empty, "-xzf", os.path.join(out, tarball[0])], check=True)
    top = os.path.join(empty, tarball[0][:-len(".tar.gz")])
    mounts = []
    target = start_target(*BUSY)
    try:
        for how, at in ((["-t", "proc", "proc"], "proc"), (["-t", "sysfs", "sysfs"], "sys"),
                        (["--bind", "/dev"], "dev")):
            os.makedirs(os.path.join(top, at))
            subprocess.run(["mount", *how, os.path.join(top, at)], check=True)
            mounts.append(os.path.join(top, at))
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        jw = Proc([CHROOT, top, "/jankwatch", "-p", str(target.pid), "--set",
                   "ignore_startup_time=3", "--all", "--duration", "4", "--log-dir", "/logs"],
                  env={"PATH": "/"})
        rc = jw.wait(120)
    finally:
        target.kill()
        for m in reversed(mounts):
            subprocess.run(["umount", "-l", m])
    events = events_of(jw.out)
    tasks = target_tasks(target)
    check(rc == 0 and len(events) >= 3, f"tarball: a host process's janks ({rc}, {len(events)}, "
          f"{jw.err[-3:]})")
    for ev in events:
        mine = task_of(ev, tasks, "tarball: the event matches one task of the program")
        check(matches_own(ev, mine.dur_ns / 1e6, around_ms=mine.around_ms(ev)),
              f"tarball: wall_ms {ev['wall_ms']} within 5% of {own_figures(mine, ev)}")
        check(os.path.exists(os.path.join(top, ev["external_log"][0].lstrip("/"))),
              "tarball: its stack log is in the directory it runs in")
        check("busy_work" in (ev["heaviest_stack"] or ""), f"tarball: {ev['heaviest_stack']}")
    shutil.rmtree(empty, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
print("PASS")
