# SPDX-License-Identifier: GPL-2.0-only
"""What `jankwatch report LOGDIR --html` costs at a log directory's worst: a fixture of N events
(tests/integration/logfixture.py: 10,000 by default, in 5 rotated events files, 2,500 stack
logs), and of 2N (past the page's bound of 10,000 events drawn). For each: the page's size, the
time jankwatch takes to write it, and the time Debian's chromium (headless, cdp.py) takes to load
it, from the navigation to the end of its load event (the page's script included: every flame
graph made live, the timeline's events, the table sorted), then the time one click on a box
takes to zoom a graph. Medians of R runs.

Usage: bench/page.py JANKWATCH [N] [R]"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import cdp  # noqa: E402
import logfixture  # noqa: E402

LOADED = """(function () { var n = performance.getEntriesByType('navigation')[0];
  return n.loadEventEnd - n.startTime; })()"""
ZOOM = """(function () { var g = document.querySelector('#flame1 g.f[data-depth="2"]');
  var t = performance.now(); g.dispatchEvent(new MouseEvent('click'));
  return performance.now() - t; })()"""


def measure(jw, n, runs, browser, scratch):
    logs = os.path.join(scratch, f"logs-{n}")
    logfixture.make(n, logs)
    page = os.path.join(scratch, f"page-{n}.html")
    writes, loads, zooms = [], [], []
    for _ in range(runs):
        t = time.monotonic()
        r = subprocess.run([jw, "report", logs, "--html", page], capture_output=True, text=True)
        writes.append(time.monotonic() - t)
        if r.returncode:
            sys.exit(f"report --html failed: {r.stderr.strip()}")
        tab = browser.new_page()
        tab.open("file://" + page, 1280, 1400, timeout=120)
        loads.append(tab.eval(LOADED) / 1000)
        zooms.append(tab.eval(ZOOM))
        if tab.exceptions:
            sys.exit(f"the page threw: {tab.exceptions}")
    with open(page) as f:
        text = f.read()
    drawn, boxes = text.count('<rect class="ev '), text.count('<g class="f"')
    print(f"{n:>6} events: page {os.path.getsize(page) / 1e6:.2f} MB ({drawn} events drawn, "
          f"{boxes} flame boxes); jankwatch writes it in "
          f"{statistics.median(writes):.2f} s; chromium loads it in "
          f"{statistics.median(loads):.2f} s; a click zooms a graph in "
          f"{statistics.median(zooms):.0f} ms (medians of {runs})")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.splitlines()[-1])
    jw = os.path.abspath(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    scratch = tempfile.mkdtemp(prefix="jw-page-")
    browser = cdp.Browser()
    try:
        for k in (n, 2 * n):
            measure(jw, k, runs, browser, scratch)
    finally:
        browser.close()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
