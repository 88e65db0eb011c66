# SPDX-License-Identifier: GPL-2.0-only
"""Strings a target controls cannot forge output: an executable whose 250-byte name holds an
escape sequence, quotes, a backslash, a tab and a newline, running code named by a perf map line
with quotes, a backslash, a tab, an escape sequence and a carriage return, followed by a line
that looks like an event (tests/targets/jw_jit).

Every event line is one JSON object whose strings decode to what the target gave (control
bytes escaped, never raw); no forged event appears; the stack log's lines are each one header
line or one frame (no raw control byte anywhere); the flame graphs are well-formed XML that
names the perf map's code with its quotes and backslash (control bytes as '?'); the statistics
CSV has 16 fields a row; the trace log's every line follows Perfetto's grammar.
"""
import csv
import io
import xml.etree.ElementTree as ET

from jwtest import *

JIT = os.path.join(TARGETS, "jw_jit")
NAME = "jw\x1b[31m\"q\\b\tt\nnl-" + "x" * 236
PERF_NAME_PART = 'spin "quoted" back\\slash'
LINE = re.compile(r"-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*[a-zA-Z0-9.]{0,4}\s+(\d+\.\d+):\s+"
                  r"(\S+):")


def raw_controls(text):
    """Control bytes other than the line ends (and perf script's leading tabs) the formats use."""
    text = re.sub(r"(?m)^\t", "", text)
    return [c for c in text if ord(c) < 0x20 and c != "\n" or c == "\x7f"]


require_bpf()
logs = LogDir()
work = tempfile.mkdtemp(prefix="jw-hostile-")
exe = os.path.join(work, NAME)
check(len(NAME.encode()) <= 255, f"the name is {len(NAME.encode())} bytes")
shutil.copy(JIT, exe)
target = Proc([exe, "--ms", "200", "--every", "500"])
try:
    wait_for(lambda: any(l.startswith("jit ") for l in target.out), 10, "the target's JIT code")
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    # Stack logs first, then trace logs.
    jw = start_jankwatch(["-p", str(target.pid), "--set", "ignore_startup_time=3", "--all",
                          "--format", "tree,svg", "--log-dir", logs.path])
    wait_for(lambda: len(json_lines(jw)) >= 2, 20, "two janks")
    r = subprocess.run([JW_BIN, "stats", "-p", str(target.pid)], capture_output=True, text=True,
                       timeout=30)
    check(stop_jankwatch(jw) == 0, "jankwatch exits 0")
    first, first_out = json_lines(jw), list(jw.out)
    jw = start_jankwatch(["-p", str(target.pid), "--set", "ignore_startup_time=3", "--all",
                          "--set", "trace_threshold_ms=190", "--set", "threshold_ms=150",
                          "--log-dir", logs.path])
    wait_for(lambda: len(json_lines(jw)) >= 1, 20, "a jank with a trace")
    check(stop_jankwatch(jw) == 0, "jankwatch exits 0 again")
finally:
    target.kill()

# Events: JSON, decoded back to the target's own strings, no raw control byte on the line.
check(all(not raw_controls(l) for l in first_out + list(jw.out)),
      "no raw control byte on any stdout line of either run")
events = first + json_lines(jw)
check(all(e["event"] == "MAIN_THREAD_JANK" and "forged" not in e for e in events),
      f"{len(events)} events, none forged by the perf map's second line")
check(events[0]["bundle_name"] == NAME, f"bundle_name decodes to the executable's own name "
      f"({events[0]['bundle_name']!r})")
jit = [e for e in events if PERF_NAME_PART in (e["heaviest_stack"] or "")]
check(jit, f"the perf map's name, quotes and backslash included, is in heaviest_stack "
      f"({[e['heaviest_stack'][:80] for e in events]})")

# Trace and stack logs: no raw control byte, every line one record.
files = [os.path.join(logs.path, f) for f in logs.files()]
traces = [f for f in files if f.endswith(".ftrace")]
check(traces and [f for f in files if os.path.basename(f).startswith("stack-")],
      f"stack logs and a trace log were written ({[os.path.basename(f) for f in files]})")
for path in files:
    if not os.path.basename(path).startswith(("stack-", "trace-")):
        continue
    with open(path, errors="replace") as f:
        text = f.read()
    check(not raw_controls(text), f"{os.path.basename(path)}: no raw control byte")
    if path.endswith(".ftrace"):
        body = [l for l in text.splitlines() if not l.startswith("#")]
        check(body and all(LINE.search(l) for l in body),
              f"{os.path.basename(path)}: all {len(body)} lines follow Perfetto's grammar")
    if os.path.basename(path).startswith("stack-"):
        head, tree = text.split("\n\n", 1)
        check(all(re.fullmatch(r"[a-z_]+: .*", l) for l in head.splitlines()),
              f"{os.path.basename(path)}: every header line is one key: value")
        check(all(re.match(r"\s*\d+ #\d\d ", l) for l in tree.splitlines() if l.strip()),
              f"{os.path.basename(path)}: every tree line is one frame")

# Flame graphs: XML a browser takes, the names as the target gave them but for control bytes.
svgs = [f for f in files if f.endswith(".svg")]
check(svgs, f"flame graphs were written ({len(svgs)})")
names = []
for path in svgs:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    check(not raw_controls(text), f"{os.path.basename(path)}: no raw control byte")
    root = ET.fromstring(text)      # well-formed, or this raises
    names += [g.get("data-name") for g in root.iter("{http://www.w3.org/2000/svg}g")
              if g.get("class") == "f"]
check(any(PERF_NAME_PART in n for n in names),
      f"a flame graph names the perf map's code, quotes and backslash included "
      f"({[n for n in names if 'spin' in n][:2]})")

# Statistics: CSV with the seed's 16 columns a row.
check(r.returncode == 0, f"jankwatch stats exits 0 ({r.stderr.strip()})")
rows = list(csv.reader(io.StringIO(r.stdout)))
check(len(rows) >= 2 and all(len(row) == 16 for row in rows),
      f"the statistics: {len(rows) - 1} rows of 16 fields")
check(not raw_controls(r.stdout.replace("\r\n", "\n")), "no raw control byte in the CSV")
shutil.rmtree(work, ignore_errors=True)
logs.cleanup()
