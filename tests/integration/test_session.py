# SPDX-License-Identifier: GPL-2.0-only
"""Where the kernel has uprobe sessions (6.13: BPF_TRACE_UPROBE_SESSION in its BTF), a dispatch's
entry and return, and a wait function's, are one uprobe session; elsewhere, and with
JW_KERNEL_HIDE=uprobe_session, a uprobe and a return probe. Both ways measure the same: nested
dispatches (returns seen at each level) are one task, and in syscall mode on the C library's wait
functions a task is the time between two waits, each jank within 5% of the target's own figure."""
import subprocess

from jwtest import *

require_bpf()
btf = subprocess.run(["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux"],
                     capture_output=True, text=True).stdout
has_session = "'BPF_TRACE_UPROBE_SESSION' val=57" in btf
SESSION = "a function's entry and return are one uprobe session"
PAIR = "a function's entry and return a uprobe and a return probe"


def janks_match(what, events, target):
    tasks = target_tasks(target)
    check(len(events) >= 3, f"{what}: at least 3 janks (got {len(events)})")
    for ev in events:
        mine = task_of(ev, tasks, f"{what}: each jank is one task of the target")
        own_ms = mine.dur_ns / 1e6
        check(abs(ev["wall_ms"] - own_ms) <= 0.05 * own_ms,
              f"{what}: wall_ms {ev['wall_ms']} within 5% of the target's {own_ms:.3f}")


for hide in ([False, True] if has_session else [True]):
    os.environ.pop("JW_KERNEL_HIDE", None)
    if hide:
        os.environ["JW_KERNEL_HIDE"] = "uprobe_session"
    way = "pair" if hide or not has_session else "session"
    want = PAIR if way == "pair" else SESSION

    target = start_target("--busy", "--ms", "150", "--every", "400", "--nest", "2", "--fast", "5")
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        logs = LogDir()
        rc, events, err = run_jankwatch(
            ["-v", "-p", str(target.pid), "--probe", f"{TARGET}:dispatch", "--set",
             "ignore_startup_time=3", "--all", "--duration", "2.5", "--log-dir", logs.path], 60)
        check(rc == 0, f"{way}: jankwatch exits 0 (got {rc})")
        check(any(want in l for l in err), f"{way}: -v says '{want}'")
        attached = [l for l in err if ":dispatch at file offset" in l]
        check(len(attached) == (1 if way == "session" else 2),
              f"{way}: {'one session' if way == 'session' else 'a uprobe and a return probe'} "
              f"on dispatch: {attached}")
        janks_match(f"{way}, nested dispatches", events, target)
        logs.cleanup()
    finally:
        target.kill()

    target = start_target("--busy", "--ms", "150", "--every", "400", "--fast", "5")
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        logs = LogDir()
        rc, events, err = run_jankwatch(
            ["-v", "-p", str(target.pid), "--set", "ignore_startup_time=3", "--set",
             "wait_tracepoints=0", "--all", "--duration", "2.5", "--log-dir", logs.path], 60)
        check(rc == 0, f"{way}, syscall mode: jankwatch exits 0 (got {rc})")
        sessions = [l for l in err if "attached uprobe session" in l]
        check(bool(sessions) == (way == "session"),
              f"{way}, syscall mode: the waits {'are' if way == 'session' else 'are not'} "
              f"sessions ({len(sessions)})")
        janks_match(f"{way}, syscall mode", events, target)
        logs.cleanup()
    finally:
        target.kill()
os.environ.pop("JW_KERNEL_HIDE", None)
print("PASS")
