# SPDX-License-Identifier: GPL-2.0-only
"""The defaults that keep a jank from a newcomer, said where they bite: jankwatch run at a
terminal (its stderr a pty) on a program just started, with its defaults but a 6 s start-up
window (ignore_startup_time=6: longer than jankwatch's own start, 1-3 s here): the tasks over
the threshold in that window are said once, with the setting; the stack log budget (report_times_per_app=1), once its one file is written, is
said once when it withholds the next jank's, with --all to lift it; the summary counts both
(tasks in the window, withheld by the budget or the back-off), and agrees with the event lines.
The same run with stderr a pipe (a service's journal) says neither, and counts the same."""
import pty
import re
import subprocess
import threading

from jwtest import *

require_bpf()
EARLY = re.compile(r"a (\d+) ms task is not reported: it began ([\d.]+) s after the process "
                   r"started, inside the start-up window \(ignore_startup_time=6; ")
BUDGET = re.compile(r"a jank's files are withheld, its event line written: a process gets "
                    r"report_times_per_app=1 stack logs a day.*\(--all lifts the budgets and the "
                    r"back-off\)")
SUMMARY = re.compile(r"(\d+) janks .* (\d+) withheld \(budget (\d+), back-off (\d+), quota or "
                     r"other (\d+)\)")
WINDOW = re.compile(r"(\d+) tasks over the threshold were in their process's start-up window, "
                    r"not reported \(ignore_startup_time=6\)")


def watch(terminal):
    """jw_target's busy task (300 ms every 700) from its start, watched 11 s; stderr a pty when
    @terminal. Returns (rc, events, stderr text)."""
    logs = LogDir()
    target = start_target("--busy", "--ms", "300", "--every", "700")
    args = [JW_BIN, "-p", str(target.pid), "--set", "ignore_startup_time=6", "--duration", "11",
            "--log-dir", logs.path]
    err = []
    try:
        if terminal:
            master, slave = pty.openpty()
            p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=slave, text=True)
            os.close(slave)

            def drain():
                while True:
                    try:
                        chunk = os.read(master, 4096)
                    except OSError:
                        return
                    if not chunk:
                        return
                    err.append(chunk.decode(errors="replace"))
            reader = threading.Thread(target=drain, daemon=True)
            reader.start()
            out, _ = p.communicate(timeout=60 + LOAD_ALLOWANCE_S)
            reader.join(10)
            os.close(master)
        else:
            p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            out, e = p.communicate(timeout=60 + LOAD_ALLOWANCE_S)
            err.append(e)
    finally:
        target.kill()
        logs.cleanup()
    events = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    # The terminal's status line is rewritten in place: its \r and erase sequences dropped.
    text = re.sub(r"\x1b\[K|\r", "\n", "".join(err))
    return p.returncode, events, text


def counts(what, events, text):
    """The summary's figures, checked against the event lines."""
    s, w = SUMMARY.search(text), WINDOW.search(text)
    check(s is not None and w is not None,
          f"{what}: the summary counts the janks withheld and the tasks in the window "
          f"({text.strip().splitlines()[-6:]})")
    janks, withheld, budget, back_off, other = map(int, s.groups())
    reasons = [e["withheld"] for e in events if e["event"] == "MAIN_THREAD_JANK"]
    check(janks == len(reasons) and budget == reasons.count("budget") and
          back_off == reasons.count("back_off") and withheld == budget + back_off + other and
          budget >= 1 and reasons.count(None) == 1,
          f"{what}: {janks} janks, {budget} withheld by the budget, {back_off} by the back-off, "
          f"as the event lines say ({reasons})")
    return int(w.group(1))


# At a terminal: each said once, with its setting.
rc, events, text = watch(True)
check(rc == 0, f"terminal: jankwatch exits 0 ({rc})")
early = EARLY.findall(text)
check(len(early) == 1 and 300 <= int(early[0][0]) < 400 and float(early[0][1]) < 6,
      f"terminal: the start-up window's task said once, with the setting ({early})")
check(len(BUDGET.findall(text)) == 1,
      f"terminal: the budget said once, with --all ({BUDGET.findall(text)})")
in_window = counts("terminal", events, text)
check(in_window >= 2, f"terminal: the summary counts the window's tasks ({in_window})")

# Stderr a pipe, as a service's: neither said; the summary counts the same.
rc, events, text = watch(False)
check(rc == 0, f"pipe: jankwatch exits 0 ({rc})")
check(not EARLY.search(text) and not BUDGET.search(text),
      "pipe: neither is said where no person reads")
check(counts("pipe", events, text) >= 2, "pipe: the summary counts the window's tasks")
print("PASS")
