# SPDX-License-Identifier: GPL-2.0-only
"""`--raw FILE` saves what naming the reported stacks needs; `jankwatch symbolize FILE` writes the
same stack logs and events again, byte for byte (but the paths in external_log), here from a
binary that is gone from its recorded path and is found by build-id under --debug-dir; with
--format folded,svg,pprof, folded stack logs with a flame graph and a profile beside each. A
truncated capture gives the reports before the damage and a clear error; a capture from a newer
version, or not a capture at all, one clear line."""
import shutil
import subprocess

from jwtest import *

require_bpf()
live, offline = LogDir(), LogDir()
work = tempfile.mkdtemp(prefix="jw-raw-")
raw = os.path.join(work, "capture.raw")
# The target runs from a copy that is deleted after the capture: "another machine".
binary = os.path.join(work, "jw_target_copy")
shutil.copy(TARGET, binary)
build_id = subprocess.run(["readelf", "-n", binary], capture_output=True, text=True).stdout
build_id = build_id.split("Build ID: ")[1].split()[0]

rc, events = capture_raw(binary, ["--pipe", "--ms", "250", "--every", "500", "--fast", "5"],
                         live.path, raw)
check(rc == 0 and len(events) >= 3, f"live: {len(events)} events, exit {rc}")

debug_dir = os.path.join(work, "debug")
os.makedirs(os.path.join(debug_dir, ".build-id", build_id[:2]))
os.rename(binary, os.path.join(debug_dir, ".build-id", build_id[:2], build_id[2:]))

p = subprocess.run([JW_BIN, "symbolize", raw, "--debug-dir", debug_dir, "--log-dir",
                    offline.path], capture_output=True, text=True, timeout=120)
check(p.returncode == 0, f"symbolize exits 0 ({p.returncode}: {p.stderr.strip()})")
replayed = [json.loads(l) for l in p.stdout.splitlines()]
check(len(replayed) == len(events), f"as many events ({len(replayed)})")
for a, b in zip(events, replayed):
    a_logs, b_logs = a.pop("external_log"), b.pop("external_log")
    check(a == b, f"event at {a['time']} is the same")
    check([os.path.basename(x) for x in a_logs] == [os.path.basename(x) for x in b_logs],
          "the same files")
    for name in map(os.path.basename, a_logs):
        same = live.read(name) == offline.read(name)
        check(same, f"{name} is the same byte for byte")
    check("(pipe_work+" in offline.read(os.path.basename(b_logs[0])),
          "the gone binary was named from --debug-dir")

# --format: the flame graphs and profiles a live --format folded,svg,pprof writes, written from
# the capture (the live run wrote neither).
pictures = os.path.join(work, "pictures")
p = subprocess.run([JW_BIN, "symbolize", raw, "--debug-dir", debug_dir, "--log-dir", pictures,
                    "--format", "folded,svg,pprof"], capture_output=True, text=True, timeout=120)
check(p.returncode == 0, f"--format folded,svg,pprof: exits 0 ({p.returncode}: "
      f"{p.stderr.strip()})")
for ev in (json.loads(l) for l in p.stdout.splitlines()):
    stack = [os.path.basename(x) for x in ev["external_log"] if "/stack-" in x]
    check(len(stack) == 1, f"{ev['time']}: its stack log ({ev['external_log']})")
    stem = stack[0][len("stack-"):-len(".txt")]
    folded = open(os.path.join(pictures, stack[0])).read()
    svg = open(os.path.join(pictures, f"flame-{stem}.svg")).read()
    with open(os.path.join(pictures, f"profile-{stem}.pb.gz"), "rb") as f:
        profile = f.read()
    check(re.search(r"^\S*pipe_work\S* \d+$", folded, re.M) is not None and
          svg.startswith("<?xml") and "pipe_work" in svg and profile[:2] == b"\x1f\x8b",
          f"{ev['time']}: folded lines, flame-{stem}.svg and profile-{stem}.pb.gz, naming "
          f"pipe_work from --debug-dir")
p = subprocess.run([JW_BIN, "symbolize", raw, "--log-dir", pictures, "--format", "flame"],
                   capture_output=True, text=True, timeout=60)
check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "flame" in p.stderr,
      f"--format flame: one line, exit 2 ({p.returncode}: {p.stderr.strip()})")

# Damage: a cut in the middle of the second report keeps the first, then says where it broke.
# The chunks are walked by type: a step of the wall clock during the capture puts a clocks chunk
# (type 4) among the reports.
data = open(raw, "rb").read()
cut = os.path.join(work, "cut.raw")
fields = int.from_bytes(data[12:16], "little")
reports, steps, at = [], 0, 16 + fields
while at + 8 <= len(data):
    kind, size = (int.from_bytes(data[at + i:at + i + 4], "little") for i in (0, 4))
    if kind in (1, 2, 3):
        reports.append((at, size))
    steps += kind == 4
    at += 8 + size
check(at == len(data) and len(reports) == len(events),
      f"the capture's chunks end with the file: {len(reports)} reports, {steps} clock steps")
second, second_size = reports[1]
check(second_size > 200, f"the second report is {second_size} bytes")
open(cut, "wb").write(data[:second + 8 + 100])
p = subprocess.run([JW_BIN, "symbolize", cut, "--debug-dir", debug_dir, "--log-dir",
                    os.path.join(work, "cut")], capture_output=True, text=True, timeout=120)
check(p.returncode == 1 and len(p.stdout.splitlines()) == 1,
      f"a truncated capture: the whole first report, then exit 1 ({p.returncode})")
check("truncated" in p.stderr or "corrupt" in p.stderr, f"and says so: {p.stderr.strip()}")

newer = os.path.join(work, "newer.raw")
open(newer, "wb").write(data[:8] + (99).to_bytes(4, "little") + data[12:])
for path, what in ((newer, "version 99"), ("/etc/passwd", "not a jankwatch raw capture"),
                   (os.path.join(work, "missing.raw"), "No such file")):
    p = subprocess.run([JW_BIN, "symbolize", path, "--log-dir", os.path.join(work, "x")],
                       capture_output=True, text=True, timeout=60)
    err = p.stderr.strip().splitlines()
    check(p.returncode == 1 and len(err) == 1 and what in err[0], f"{path}: {err}")
shutil.rmtree(work)
live.cleanup()
offline.cleanup()
print("PASS")
