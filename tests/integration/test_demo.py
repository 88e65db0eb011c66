# SPDX-License-Identifier: GPL-2.0-only
"""The README's first command, `scripts/demo.sh`, as a newcomer runs it once the packages are in:
it exits 0, its loop's 300 ms tasks past the start-up window come out as jank events (and no
5 ms one does), it prints the one stack log it wrote, down to busy_work under dispatch, and the
report names the group; its loop is gone when it ends, and the build/ it found is kept as it was
(scripts/test.sh's, tests and all). Run by anyone else, it says in one line that it needs root."""
import glob
import shutil
import subprocess

from jwtest import *

require_bpf()
SRC = os.path.realpath(os.environ.get("JW_SRC", "."))
DEMO = os.path.join(SRC, "scripts/demo.sh")
CACHE = os.path.join(SRC, "build/CMakeCache.txt")


def cache_options():
    if not os.path.exists(CACHE):
        return None
    with open(CACHE) as f:
        return sorted(l.strip() for l in f
                      if re.match(r"(JW_[A-Z_]+|CMAKE_BUILD_TYPE|CMAKE_C_FLAGS):(BOOL|STRING)=", l))


# Not root: one line, exit 1, before anything is installed or built. Run from a copy in a
# directory anyone can read: a checkout under a private one (/root) would stop uid 65534 first.
copy = LogDir().shared()
os.mkdir(os.path.join(copy, "scripts"), 0o755)
shutil.copy(DEMO, os.path.join(copy, "scripts/demo.sh"))
r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bash",
                    os.path.join(copy, "scripts/demo.sh")],
                   capture_output=True, text=True, timeout=60, cwd=copy)
err = r.stderr.strip().splitlines()
check(r.returncode == 1 and len(err) == 1 and "root" in err[0] and r.stdout == "",
      f"not root: one line, exit 1 ({r.returncode}: {err})")

before = cache_options()
logdirs = set(glob.glob("/tmp/jankwatch-demo.*"))
r = subprocess.run(["bash", DEMO], capture_output=True, text=True, timeout=600, cwd="/")
out = r.stdout.splitlines()
if r.returncode != 0:
    print(r.stdout, r.stderr)
check(r.returncode == 0, f"demo.sh exits 0 ({r.returncode})")
new = set(glob.glob("/tmp/jankwatch-demo.*")) - logdirs
try:
    after = cache_options()
    check(before is None or after == before,
          f"the build/ it found keeps its options ({sorted(set(before or []) ^ set(after or []))}"
          " changed)")
    m = re.search(r"^== the demo loop: pid (\d+)", r.stdout, re.M)
    check(m is not None, "it says its loop's pid")
    loop_pid = int(m.group(1))
    check(not os.path.exists(f"/proc/{loop_pid}") or proc_state(loop_pid) == "Z",
          f"its loop, pid {loop_pid}, is gone when it ends")

    events = [json.loads(l) for l in out if l.startswith("{")]
    janks = [e for e in events if e["event"] == "MAIN_THREAD_JANK"]
    # 16 s watched from the loop's start, the first 10 s its start-up window: 300 ms tasks
    # every 1.5 s leave three or four.
    check(len(janks) >= 2, f"its 300 ms tasks come out as janks ({len(janks)} events)")
    for e in janks:
        check(e["pid"] == loop_pid and 285 <= e["wall_ms"] < 1000 and e["cause"] == "cpu" and
              e["group"] == "busy_work<-dispatch",
              f"a jank of the loop's 300 ms busy task ({e['pid']}, {e['wall_ms']} ms, "
              f"{e['cause']}, {e['group']})")
    check(sum(1 for e in janks if e["external_log"]) == 1,
          "one of them has the day's stack log, the others their event lines")
    check(any("ready" in l for l in r.stderr.splitlines()) and
          any(re.search(r"\b\d+ tasks, \d+ janks", l) for l in r.stderr.splitlines()),
          "jankwatch says it is ready, and its summary at the end")

    check(len(new) == 1, f"one log directory in /tmp ({sorted(new)})")
    logdir = new.pop() if new else ""
    logs = glob.glob(os.path.join(logdir, "stack-*.txt"))
    check(len(logs) == 1, f"one stack log written ({logs})")
    with open(logs[0]) as f:
        text = f.read()
    check(f"== {logs[0]}" in r.stdout and text.strip() in r.stdout,
          "the stack log is printed whole")
    frames = parse_tree(stack_tree(text))
    check(chain_samples(frames, ["dispatch", "busy_work"]) > 0,
          "its samples reach busy_work under dispatch")
    check(re.search(rf"^#1 jw_target: busy_work<-dispatch$", r.stdout, re.M) is not None and
          re.search(rf"^    pid {loop_pid}$", r.stdout, re.M) is not None,
          "the report at the end names the group busy_work<-dispatch, the loop's pid")
finally:
    for d in new | set(glob.glob("/tmp/jankwatch-demo.*")) - logdirs:
        shutil.rmtree(d, ignore_errors=True)
print("PASS")
