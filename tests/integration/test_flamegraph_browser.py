# SPDX-License-Identifier: GPL-2.0-only
"""The flame graph in a real browser: Debian's chromium, headless, driven over its DevTools pipe
(cdp.py). The SVG of a real jank of jw_target's busy task, and of a Python jank with its frames
(asyncio_busy.py under the python preset): each loads with no console error, no exception and no
request but its own file; the boxes drawn, with their counts, are the stack log's tree's lines
and counts, and each is as wide on the screen as its share; a click on a box (a mouse's, at its
place) zooms to it: it spans the graph, its callees are scaled alike, its callers stay, the rest
are hidden; "Reset zoom" brings every box back; a search marks the boxes that match and says
their share of the samples. A screenshot of each graph, and of it zoomed, is kept in
build/test-artifacts/ (printed)."""
import re

import cdp
from jwtest import *

require_bpf()
if not cdp.CHROMIUM:
    fail("chromium is not installed (scripts/setup.sh installs it)")
ARTIFACTS = os.path.join(os.path.dirname(os.path.abspath(JW_BIN)), "test-artifacts")
os.makedirs(ARTIFACTS, exist_ok=True)
SCRIPT = os.path.join(os.environ.get("JW_SRC", "."), "tests/targets/asyncio_busy.py")

# The boxes as the page has them now: each one's title's first line, samples, depth, shown,
# and its rect's place and width on the screen.
BOXES = """Array.from(document.querySelectorAll('g.f')).map(function (g) {
  var r = g.querySelector('rect').getBoundingClientRect();
  return { line: g.querySelector('title').textContent.split('\\n')[0],
           n: +g.getAttribute('data-n'), depth: +g.getAttribute('data-depth'),
           x: +g.getAttribute('data-x'), name: g.getAttribute('data-name'),
           owner: g.getAttribute('data-owner'),
           shown: getComputedStyle(g).display !== 'none',
           left: r.left, top: r.top, width: r.width, height: r.height };
})"""


def jank_files(args, count, timeout=30):
    """Runs jankwatch with @args and --format tree,svg until @count janks; returns their
    (stack log, flame graph) pairs."""
    logs = LogDir()
    rc, events, err = watch_until(args + ["--all", "--format", "tree,svg", "--log-dir", logs.path],
                                  count, timeout)
    check(rc == 0, f"jankwatch exits 0 ({rc})")
    pairs = [(e["external_log"][0], e["external_log"][1]) for e in events
             if e.get("event") == "MAIN_THREAD_JANK" and len(e["external_log"]) >= 2]
    check(len(pairs) >= count, f"{count} janks with a stack log and a flame graph ({len(pairs)})")
    return pairs, logs


def look(browser, what, stack_log, svg, focus):
    """Opens @svg, checks it against @stack_log, zooms to a box that holds part of the samples
    (the first above the roots that does, else the last), searches for @focus."""
    tree = [l.strip() for l in stack_tree(open(stack_log).read())]
    total = sum(int(l.split(" ", 1)[0]) for l in tree if re.match(r"\d+ #00 ", l))
    height = int(re.search(r'height="(\d+)"', open(svg).read()).group(1))
    page = browser.new_page()
    url = "file://" + os.path.abspath(svg)
    page.open(url, 1200, height)
    boxes = page.eval(BOXES)
    check([b["line"] for b in boxes] == tree,
          f"{what}: the {len(boxes)} boxes drawn are the stack log's {len(tree)} lines")
    check([b["n"] for b in boxes] == [int(l.split(" ", 1)[0]) for l in tree],
          f"{what}: each box's count is its line's")
    off = [b["line"] for b in boxes
           if not b["shown"] or abs(b["width"] - 1180 * b["n"] / total) > 0.5]
    check(not off, f"{what}: every box is on the screen as wide as its share of {total} samples "
          f"({off[:3]})")
    shot = page.screenshot(os.path.join(ARTIFACTS, f"flamegraph-{what}.png"))
    print(f"screenshot: {shot}")

    # A click at the middle of the box, as a person makes it.
    mine = next((b for b in boxes if b["depth"] and b["n"] < total), boxes[-1])
    k = boxes.index(mine)
    page.click(mine["left"] + mine["width"] / 2, mine["top"] + mine["height"] / 2)
    after = page.eval(BOXES)
    z = after[k]
    check(abs(z["left"] - 10) < 0.5 and abs(z["width"] - 1180) < 0.5,
          f"{what}: the clicked box, {z['name']} ({z['n']} of {total} samples), spans the graph "
          f"({z['left']:.1f} px from the left, {z['width']:.1f} wide)")
    inside = lambda b: b["depth"] >= z["depth"] and z["x"] <= b["x"] and \
        b["x"] + b["n"] <= z["x"] + z["n"]
    callers = lambda b: b["depth"] < z["depth"] and b["x"] <= z["x"] and \
        b["x"] + b["n"] >= z["x"] + z["n"]
    wrong = [b["line"] for b in after if b["shown"] != (inside(b) or callers(b))]
    check(not wrong, f"{what}: its callees and callers are shown, nothing else ({wrong[:3]})")
    scaled = [b["line"] for b in after if inside(b) and
              abs(b["width"] - 1180 * b["n"] / z["n"]) > 0.5]
    check(not scaled, f"{what}: its callees are scaled as it is ({scaled[:3]})")
    page.screenshot(os.path.join(ARTIFACTS, f"flamegraph-{what}-zoomed.png"))
    page.eval("document.getElementById('reset').dispatchEvent(new MouseEvent('click'))")
    back = page.eval(BOXES)
    check(all(b["shown"] for b in back) and
          all(abs(a["width"] - b["width"]) < 0.01 for a, b in zip(boxes, back)),
          f"{what}: Reset zoom brings every box back as it was")

    # A search, the prompt answered as a person would type it.
    page.eval(f"window.prompt = function () {{ return '^{focus}$'; }}; "
              "document.getElementById('search').dispatchEvent(new MouseEvent('click'))")
    said = page.eval("document.getElementById('matched').textContent")
    hits = page.eval("Array.from(document.querySelectorAll('g.f.hit')).map(function (g) "
                     "{ return g.getAttribute('data-name'); })")
    share = 100 * sum(b["n"] for b in boxes if b["name"] == focus) / total
    check(hits and all(h == focus for h in hits) and f"matched {share:.1f}%" in said,
          f"{what}: the search marks {focus}'s boxes only and says their share ({said})")

    check(not page.exceptions, f"{what}: no exception in the page ({page.exceptions})")
    errors = [c for c in page.console if c[0] in ("error", "assert", "warning")]
    check(not errors, f"{what}: no console error ({errors})")
    check(all(r == url for r in page.requests),
          f"{what}: no request but its own file ({page.requests})")


browser = cdp.Browser()
try:
    # jw_target's busy task: its own frames under main.
    target = start_target("--busy", "--ms", "300", "--every", "600")
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        pairs, logs = jank_files(["-p", str(target.pid), "--probe", f"{TARGET}:dispatch",
                                  "--set", "ignore_startup_time=3"], 1)
    finally:
        target.kill()
    look(browser, "busy", *pairs[0], "busy_work")
    logs.cleanup()

    # A Python jank: asyncio's callback, its Python frames in the graph as Python's.
    target = Proc(["/usr/bin/python3.11", SCRIPT, "--ms", "300", "--every", "600"])
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        pairs, logs = jank_files(["-p", str(target.pid), "--set", "ignore_startup_time=3"], 2)
    finally:
        target.kill()
    svg = open(pairs[-1][1]).read()
    check('data-owner="python" data-name="busy_work"' in svg,
          "python: busy_work is drawn as a Python function")
    look(browser, "python", *pairs[-1], "busy_work")
    logs.cleanup()
finally:
    browser.close()
print("PASS")
