# SPDX-License-Identifier: GPL-2.0-only
"""--format tree,svg writes a flame graph beside each stack log: a well-formed, self-contained
SVG (nothing fetched from elsewhere) whose boxes are the stack log's tree, line for line and
count for count, each box as wide as its samples; the samples where the thread slept marked
(jw_target --mixed sleeps a third of each task, then spins); the jank's process, handler and
cause in its head; the event lists it after the stack log."""
import re
import xml.etree.ElementTree as ET

from jwtest import *

SVG = "{http://www.w3.org/2000/svg}"

require_bpf()
logs = LogDir()
target = start_target("--mixed", "--ms", "300", "--every", "500")
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    rc, events, err = watch_until(
        ["-p", str(target.pid), "--probe", f"{TARGET}:dispatch", "--set", "ignore_startup_time=3",
         "--all", "--format", "tree,svg", "--log-dir", logs.path], 2)
finally:
    target.kill()
check(rc == 0, f"jankwatch exits 0 (got {rc})")
janks = [e for e in events if e.get("event") == "MAIN_THREAD_JANK"]
check(len(janks) >= 2, f"at least 2 janks ({len(janks)})")
for ev in janks:
    files = ev["external_log"]
    check(len(files) == 2 and files[0].endswith(".txt") and files[1].endswith(".svg") and
          os.path.basename(files[1]).startswith("flame-"),
          f"the event lists the stack log, then its flame graph ({files})")
    tree = [l.strip() for l in stack_tree(open(files[0]).read())]
    raw = open(files[1], encoding="utf-8").read()
    root = ET.fromstring(raw)       # well-formed, or this raises
    check(root.tag == SVG + "svg", "an SVG document")
    # Self-contained: the only address is the namespace's name; the hatch is its own pattern.
    check(raw.count("http") == 1 and "href" not in raw and
          all(u == "url(#asleep)" for u in re.findall(r"url\([^)]*\)", raw)),
          "nothing is fetched from elsewhere")
    boxes = [g for g in root.iter(SVG + "g") if g.get("class") == "f"]
    lines = [g.find(SVG + "title").text.split("\n")[0] for g in boxes]
    check(lines == tree, f"the boxes are the stack log's tree, line for line ({len(boxes)} boxes, "
          f"{len(tree)} lines)")
    counts = [int(l.split(" ", 1)[0]) for l in tree]
    check([int(g.get("data-n")) for g in boxes] == counts, "each box holds its line's samples")
    total = int(root.get("data-total"))
    check(total == ev["samples"], f"the graph's samples are the event's ({total}, {ev['samples']})")
    # Widths: a box is its share of the samples of the graph's 1180 px.
    off = [(g.get("data-n"), g.find(SVG + "rect").get("width")) for g in boxes
           if abs(float(g.find(SVG + "rect").get("width")) - 1180 * int(g.get("data-n")) / total)
           >= 0.02]
    check(not off, f"each box is its share of the samples of 1180 px (not so: {off})")
    # The sleep: its frames hatched for the samples asleep; busy_work's not at all.
    by_name = {}
    for g in boxes:
        by_name.setdefault(g.get("data-name"), []).append(g)
    slept = sum(int(g.get("data-asleep")) for g in by_name.get("sleep_work", []))
    ran = sum(int(g.get("data-asleep")) for g in by_name.get("busy_work", []))
    check(slept > 0 and slept == sum(int(g.get("data-n")) for g in by_name["sleep_work"]),
          f"sleep_work's samples are all asleep ({slept})")
    check("busy_work" in by_name and ran == 0, "busy_work's are all on the CPU")
    hatched = [g for g in boxes if g.find(SVG + "rect[@class='zz']") is not None]
    check(all(int(g.get("data-asleep")) > 0 for g in hatched) and
          len(hatched) == sum(1 for g in boxes if int(g.get("data-asleep")) > 0),
          "a hatch on each box with asleep samples, and only there")
    owners = {g.get("data-name"): g.get("data-owner") for g in boxes}
    check(owners.get("busy_work") == "program" and owners.get("main") == "program",
          "the program's frames are the program's")
    check(any(o == "kernel" for o in owners.values()), "the sleep's kernel frames are the kernel's")
    title = root.find(SVG + "text[@id='title']").text
    detail = root.find(SVG + "text[@id='detail']").text
    check(f"pid {target.pid}" in title and "dispatch" in title and "jw_target" in title,
          f"the head names the process and the handler ({title})")
    check(detail.startswith(f"cause {ev['cause']}:"), f"the head gives the cause ({detail})")
print("PASS")
