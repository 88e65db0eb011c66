# SPDX-License-Identifier: GPL-2.0-only
"""jankwatch top on a terminal (tmux): Debian's redis-server runs DEBUG SLEEP 0.3 once a second
between quick GETs. The screen (capture-pane) shows the table with debugCommand's row first,
its max about 300 ms, and once the load stops, its tasks and max and getCommand's tasks are
what `jankwatch stats` says of the same rows at that moment; the last janks are listed under
it; the janks' event lines go to the log directory and not to the screen. q exits 0, the
terminal's mode is as it was (stty -g before and after) and the alternate screen is left, with
the run's table printed once on the normal screen. With standard output not a terminal, the
table is printed once at the end and no event line.

`top -- CMD` on a terminal, stderr on it too: the program's lines go to LOGDIR/NAME.out, not to
the screen; jankwatch's own messages while the table is shown (the program's exit) are held and
printed once the screen is given back, none lost."""
import csv
import io
import threading

from jwtest import *

require_bpf()

if not shutil.which("tmux"):
    fail("tmux is not installed (scripts/setup.sh installs it)")

ROW = re.compile(r"^\s*([\d.]+)%\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+"
                 r"([\d.]+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(.+?)\s*$")


def table_rows(screen):
    """The table's rows on @screen: {handler: (tasks, max_ms, janks)}, in order."""
    rows = []
    for line in screen.splitlines():
        m = ROW.match(line)
        if m:
            rows.append((m[11], int(m[2]), float(m[6]), int(m[9])))
    return rows


class Tmux:
    made = 0

    def __init__(self, command):
        # A socket of its own: a new server on the last one's, killed a moment before, may find
        # it still there and exit.
        Tmux.made += 1
        self.sock = f"jw-top-{os.getpid()}-{Tmux.made}"
        subprocess.run(["tmux", "-L", self.sock, "new-session", "-d", "-x", "150", "-y", "40",
                        "sh", "-c", command], check=True, timeout=30)

    def tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True,
                              timeout=30).stdout

    def screen(self):
        return self.tmux("capture-pane", "-p")

    def kill(self):
        self.tmux("kill-server")


def screens(redis, logs, work):
    stop = threading.Event()

    def load():
        while not stop.is_set():
            redis.cli("DEBUG", "SLEEP", "0.3")
            redis.cli("SET", "k", "v")
            redis.cli("GET", "k")
            stop.wait(0.7)

    wait_for(lambda: process_age_s(redis.pid) >= 3, 10, "redis to be 3 s old")
    # Each file the test waits for is written whole, then renamed: the shell creates a file it
    # redirects to before the command writes it, and the test once read `after` empty.
    command = (f"stty -g > {work}/before; {JW_BIN} top -p {redis.pid} --log-dir {logs.path} "
               f"--set ignore_startup_time=3 --all 2> {work}/err; echo $? > {work}/rc; "
               f"stty -g > {work}/after.part; mv {work}/after.part {work}/after; sleep 120")
    term = Tmux(command)
    loader = threading.Thread(target=load)
    try:
        wait_for(lambda: "jankwatch top:" in term.screen(), READY_TIMEOUT_S, "top's first frame")
        loader.start()
        wait_for(lambda: any(r[0] == "debugCommand (call)" and r[3] >= 4
                             for r in table_rows(term.screen())), 30,
                 "debugCommand's row with 4 janks")
        stop.set()
        loader.join()
        time.sleep(2.5)  # the last command's frame drawn, nothing new since
        screen = term.screen()
        got = subprocess.run([JW_BIN, "stats", "-p", str(redis.pid)], capture_output=True,
                             text=True, timeout=30)
        rows = table_rows(screen)
        print(screen)
        check(rows and rows[0][0] == "debugCommand (call)",
              f"the slow command's row is first ({[r[0] for r in rows]})")
        check(300 <= rows[0][2] < 330, f"its max is the 300 ms sleep's ({rows[0][2]} ms)")
        check("last janks:" in screen and "debugCommand (call)" in screen.split("last janks:")[1],
              "the last janks are listed, debugCommand's")
        check("MAIN_THREAD_JANK" not in screen, "no event line on the screen")
        stats = {r["message_name"]: r for r in csv.DictReader(io.StringIO(got.stdout))}
        for name in ("debugCommand", "getCommand"):
            shown = [r for r in rows if r[0] == f"{name} (call)"]
            check(shown and name in stats, f"{name}: on the screen and in jankwatch stats")
            tasks, max_ms = shown[0][1], shown[0][2]
            want_tasks = int(stats[name]["message_count"])
            want_max = int(stats[name]["max_latency_micros"]) / 1000
            check(tasks == want_tasks and abs(max_ms - want_max) < 0.002,
                  f"{name}: {tasks} tasks, max {max_ms} ms on the screen; jankwatch stats "
                  f"{want_tasks}, {want_max} ms")
        term.tmux("send-keys", "q")
        wait_for(lambda: os.path.exists(f"{work}/after"), 30, "top to exit on q")
        rc = open(f"{work}/rc").read().strip()
        check(rc == "0", f"q: exit 0 ({rc}; {open(f'{work}/err').read()[-500:]})")
        before, after = open(f"{work}/before").read(), open(f"{work}/after").read()
        check(before == after, f"the terminal's mode restored ({before.strip()} -> "
              f"{after.strip()})")
        check(term.tmux("display", "-p", "#{alternate_on}").strip() == "0",
              "the alternate screen left")
        check("jankwatch top:" in term.screen() and "debugCommand (call)" in term.screen(),
              "the run's table printed on the normal screen")
        events = [json.loads(l) for l in open(os.path.join(logs.path, "events.jsonl"))]
        check(sum(e["handler"] == "debugCommand" for e in events) >= 4,
              f"the janks' events in events.jsonl ({len(events)})")
    finally:
        stop.set()
        term.kill()
        if loader.is_alive():
            loader.join()

    # top -- CMD: the program writes to a file; jankwatch's messages come after the screen.
    term = Tmux(f"{JW_BIN} top --log-dir {logs.path} -- sh -c 'for i in 1 2 3 4 5 6 7 8; do "
                f"echo program line $i; echo program error $i >&2; sleep 0.5; done'; "
                f"echo rc=$? > {work}/rc2.part; mv {work}/rc2.part {work}/rc2; sleep 120")
    try:
        wait_for(lambda: "jankwatch top:" in term.screen(), READY_TIMEOUT_S, "top's first frame")
        seen = []
        while not os.path.exists(f"{work}/rc2"):
            seen.append(term.screen())
            time.sleep(0.3)
        during = [sc for sc in seen if "jankwatch top:" in sc and "SHARE" in sc]
        check(during and not any("program line" in sc or "program error" in sc for sc in seen),
              f"-- CMD: the program's lines never on the screen ({len(during)} frames seen)")
        rc = open(f"{work}/rc2").read().strip()
        out = open(os.path.join(logs.path, "sh.out")).read().splitlines()
        check(rc == "rc=0" and out == [f"program {w} {i}" for i in range(1, 9)
                                       for w in ("line", "error")],
              f"-- CMD: its stdout and stderr in sh.out, in order ({rc}: {out})")
        after = term.screen()
        lines = [l for l in after.splitlines() if l.startswith("jankwatch: ")]
        started = [i for i, l in enumerate(lines) if "its output to " in l and "sh.out" in l]
        exited = [i for i, l in enumerate(lines) if re.search(r"pid \d+ \(sh\) exited$", l)]
        check(started and exited and started[0] < exited[0],
              f"-- CMD: the message said while the table was shown (the exit) printed after it, "
              f"in order: {lines}")
    finally:
        term.kill()

    # Standard output not a terminal: the table once at the end, no event line.
    out = subprocess.run([JW_BIN, "top", "-p", str(redis.pid), "--duration", "2",
                          "--log-dir", logs.path], capture_output=True, text=True,
                         timeout=60 + LOAD_ALLOWANCE_S)
    check(out.returncode == 0 and out.stdout.count("jankwatch top:") == 1 and
          "HANDLER" in out.stdout and "{" not in out.stdout,
          f"not a terminal: the table once ({out.returncode}: {out.stdout[:300]!r})")


def main():
    redis = Redis()
    logs = LogDir()
    work = tempfile.mkdtemp(prefix="jw-top-")
    # Whatever fails (a tmux server that does not start), the server goes: one left running
    # after a failure outlived the test.
    try:
        screens(redis, logs, work)
    finally:
        redis.kill()
        logs.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    print("ok")


main()
