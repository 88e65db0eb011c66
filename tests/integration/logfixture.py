# SPDX-License-Identifier: GPL-2.0-only
"""A log directory as jankwatch leaves one after a long while, made without watching anything:
N events over a few hours in events.jsonl and its rotated files (1 MiB each, as jankwatch
rotates them), of several processes and four causes, in many groups; a stack log (tree format,
frames of every kind: the program's, C++ templates, the C library, the kernel, Python) for one
event in four, the others withheld as the budgets and the back-off withhold them; stats.csv.
For `report --html`'s bounds (tests/integration/test_report_html.py) and its bench
(bench/page.py). Deterministic: the same N gives the same directory.

Usage: logfixture.py N DIR"""
import json
import os
import random
import sys
import time

ROTATE = 1 << 20
CAUSES = ["cpu", "runqueue", "blocked", "io"]
PROCS = [("surfaceflinger", 612), ("com.example.app", 2231), ("redis-server", 845),
         ("python3", 3010), ("nginx", 977), ("qt_app", 4120), ("gnome-shell", 1503),
         ("node", 5188)]
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
BUILD_ID = "93ac61ec5a8eb1396f9fbd350e3169a558528a40"


def frames_of(rng, proc, group):
    """A stack, root first: (line without count and depth, depth's name) pairs."""
    exe = f"/usr/bin/{proc}"
    own = [f"handler_{group % 17}", f"dispatch_{group % 5}",
           f"app::Loop<app::Job<{group % 3}>>::run(std::function<void ()> const&)"]
    st = [f"pc 00001c91 {exe}(_start+33)(fade7b6af4a42928d17beee51066032da1717ed0)",
          f"pc 00027305 {LIBC}(__libc_start_main+133)({BUILD_ID})",
          f"pc 000012f0 {exe}(main+528)(fade7b6af4a42928d17beee51066032da1717ed0)"]
    for name in reversed(own):
        st.append(f"pc 0000{rng.randrange(0x1000, 0xffff):04x} {exe}({name}+{rng.randrange(200)})"
                  f"(fade7b6af4a42928d17beee51066032da1717ed0) /src/app.cc:{rng.randrange(900)}")
    if proc == "python3":
        st += [f"at Catalog.reindex.<locals>.<lambda> (/srv/app.py:{40 + group % 9})",
               f"at work_{group % 4} (/srv/work.py:{10 + group})"]
    kind = rng.randrange(3)
    if kind == 0:
        st.append(f"pc 000cf439 {LIBC}(clock_gettime+25)({BUILD_ID})")
    elif kind == 1:
        st += [f"pc 000f82ec {LIBC}(read+76)({BUILD_ID})",
               "pc ffffffff81000130 [kernel](entry_SYSCALL_64_after_hwframe+0x76)",
               "pc ffffffff816c6736 [kernel](anon_pipe_read+0x366)",
               "pc ffffffff821f94c3 [kernel](schedule+0x23)"]
    else:
        st.append(f"pc 0000{rng.randrange(0x1000, 0xffff):04x} {exe}(compute_{rng.randrange(40)}+"
                  f"{rng.randrange(300)})(fade7b6af4a42928d17beee51066032da1717ed0)")
    return st


def stack_log(rng, proc, pid, group, samples):
    """A stack log's text: its header, then a tree of a few stacks sharing their callers."""
    stacks = [frames_of(rng, proc, group) for _ in range(rng.randrange(2, 6))]
    counts = [1] * len(stacks)
    for _ in range(samples - len(stacks)):
        counts[rng.randrange(len(stacks))] += 1
    head = [f"pid: {pid}", f"tid: {pid}", f"exe: /usr/bin/{proc}", f"samples: {samples}", ""]
    # The tree: merge the stacks' common prefixes, siblings by count.
    root = {}
    for st, n in zip(stacks, counts):
        node = root
        for fr in st:
            child = node.setdefault(fr, [0, {}])
            child[0] += n
            node = child[1]
    lines = []

    def walk(node, depth):
        for fr, (n, kids) in sorted(node.items(), key=lambda kv: -kv[1][0]):
            lines.append(f"{'    ' * depth}{n} #{depth:02d} {fr}")
            walk(kids, depth + 1)
    walk(root, 0)
    return "\n".join(head + lines) + "\n"


def make(n, path):
    rng = random.Random(n)
    os.makedirs(path, exist_ok=True)
    t = 1795990000000
    lines, written = [], 0
    for i in range(n):
        proc, pid = PROCS[rng.randrange(len(PROCS))]
        group = rng.randrange(60)
        cause = CAUSES[group % 4] if rng.random() < 0.8 else rng.choice(CAUSES)
        wall = round(150 + rng.expovariate(1 / 250), 3)
        hang = wall > 6000 and rng.random() < 0.5
        t += rng.randrange(200, 2000)
        samples = min(int(wall / 10), 200)
        files, withheld = [], rng.choice(["back_off", "budget"])
        if i % 4 == 0:
            stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(t / 1000))
            name = f"stack-{pid}-{stamp}-{t % 1000:03d}.txt"
            with open(os.path.join(path, name), "w") as f:
                f.write(stack_log(rng, proc, pid, group, samples))
            files, withheld = [os.path.join(path, name)], None
            written += 1
        ev = {"event": "MAIN_THREAD_HANG" if hang else "MAIN_THREAD_JANK", "time": t + int(wall),
              "bundle_name": proc, "pid": pid, "uid": 0, "tid": pid, "begin_time": t,
              "end_time": t + int(wall), "external_log": files, "log_over_limit": False,
              "withheld": withheld, "handler": f"handler_{group % 17}", "wall_ms": wall,
              "cpu_ms": wall if cause == "cpu" else 1.0, "runq_ms": 0.0,
              "blocked_ms": wall if cause == "blocked" else 0.0, "io_ms": 0.0,
              "cause": cause, "group": f"handler_{group % 17}<-dispatch_{group % 5}",
              "samples": samples, "dropped": 0, "jank_id": f"{i:016x}"}
        lines.append(json.dumps(ev, separators=(",", ":")) + "\n")
    # events.jsonl and its rotated files, the oldest the highest number.
    chunks, cur, size = [], [], 0
    for line in lines:
        if size + len(line) > ROTATE:
            chunks.append(cur)
            cur, size = [], 0
        cur.append(line)
        size += len(line)
    chunks.append(cur)
    for k, chunk in enumerate(chunks):
        name = "events.jsonl" + ("" if k == len(chunks) - 1 else f".{len(chunks) - 1 - k}")
        with open(os.path.join(path, name), "w") as f:
            f.writelines(chunk)
    with open(os.path.join(path, "stats.csv"), "w") as f:
        f.write("pid,work_source_uid,thread_name,handler_class,message_name,is_interactive,"
                "message_count,recorded_message_count,total_latency_micros,max_latency_micros,"
                "total_cpu_micros,max_cpu_micros,recorded_delay_message_count,"
                "total_delay_millis,max_delay_millis,exception_count\n")
        for proc, pid in PROCS:
            for h in range(25):
                c = rng.randrange(1, 100000)
                f.write(f"{pid},0,{proc},call,handler_{h},false,{c},{c},{c * rng.randrange(50, 900)},"
                        f"{rng.randrange(100, 900000)},{c * 40},{rng.randrange(100, 90000)},0,0,0,0\n")
    return written, len(chunks)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.splitlines()[-1])
    logs, files = make(int(sys.argv[1]), sys.argv[2])
    print(f"{sys.argv[2]}: {sys.argv[1]} events in {files} events files, {logs} stack logs")
