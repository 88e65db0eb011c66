# SPDX-License-Identifier: GPL-2.0-only
"""`jankwatch report LOGDIR --html FILE` in a real browser (Debian's chromium, headless, over
cdp.py): a log directory with the janks of two processes and two causes (jw_target's busy task
and its sleeping one, each watched in turn) and their stats.csv. The page loads with no console
error, no exception and no request but its own file; the timeline has every event of
events.jsonl, each on its process's lane and at its time on the screen; the groups are the ones
`jankwatch report --json` gives, in its order, each flame graph's total the samples of the
group's stack logs (their roots' counts, read here from the files); a click on an event goes to
its group, a click on a box zooms its graph, a click on a column of the statistics sorts them. A
screenshot is kept in build/test-artifacts/. Also: a page that cannot be written leaves nothing,
said in one line."""
import math
import re
import subprocess

import cdp
import logfixture
from jwtest import *

require_bpf()
if not cdp.CHROMIUM:
    fail("chromium is not installed (scripts/setup.sh installs it)")
ARTIFACTS = os.path.join(os.path.dirname(os.path.abspath(JW_BIN)), "test-artifacts")
os.makedirs(ARTIFACTS, exist_ok=True)

EVENTS = """Array.from(document.querySelectorAll('#tl rect.ev')).map(function (r) {
  var b = r.getBoundingClientRect(), s = document.getElementById('tl').getBoundingClientRect();
  return { t: +r.getAttribute('data-t'), lane: +r.getAttribute('data-lane'),
           g: +r.getAttribute('data-g'), cause: r.getAttribute('data-cause'),
           hang: r.classList.contains('hang'), left: b.left - s.left, top: b.top,
           width: b.width, height: b.height };
})"""
LANES = """Array.from(document.querySelectorAll('#tl text.lane-name')).map(function (t) {
  return +t.getAttribute('data-pid'); })"""
GROUPS = """Array.from(document.querySelectorAll('section.group')).map(function (s) {
  var svg = s.querySelector('svg.flame');
  return { process: s.getAttribute('data-process'), group: s.getAttribute('data-group'),
           handler_key: s.getAttribute('data-handler-key'), janks: +s.getAttribute('data-janks'),
           samples: +s.getAttribute('data-samples'), logs: +s.getAttribute('data-logs'),
           total: svg ? +svg.getAttribute('data-total') : null,
           roots: svg ? Array.from(svg.querySelectorAll('g.f[data-depth="0"]')).reduce(
             function (a, g) { return a + +g.getAttribute('data-n'); }, 0) : null };
})"""


def watch(logs):
    """jw_target's busy task and its sleeping one (300 ms every 700 and 900), in two processes
    watched by one jankwatch until 6 janks, into @logs; their pids."""
    busy = start_target("--busy", "--ms", "300", "--every", "700")
    sleep = start_target("--sleep", "--ms", "300", "--every", "900")
    try:
        for t in (busy, sleep):
            wait_for(lambda: process_age_s(t.pid) >= 3, 10, "the targets to be 3 s old")
        rc, events, err = watch_until(["-p", f"{busy.pid},{sleep.pid}", "--set",
                                       "ignore_startup_time=3", "--all", "--log-dir",
                                       logs.path], 6)
    finally:
        busy.kill()
        sleep.kill()
    check(rc == 0, f"jankwatch exits 0 ({rc})")
    return busy.pid, sleep.pid


def roots(path):
    """The samples of a stack log: its tree's roots' counts."""
    return sum(int(l.split()[0]) for l in stack_tree(open(path).read())
               if re.match(r"\s*\d+ #00 ", l))


def report(*args):
    r = subprocess.run([JW_BIN, "report", *args], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


logs = LogDir()
busy_pid, sleep_pid = watch(logs)
events = [json.loads(l) for l in logs.read("events.jsonl").splitlines()]
check({e["pid"] for e in events} == {busy_pid, sleep_pid} and
      {e["cause"] for e in events} >= {"cpu", "blocked"},
      f"the directory holds janks of two processes and two causes "
      f"({sorted({(e['pid'], e['cause']) for e in events})})")

rc, out, err = report(logs.path, "--json", "--top", "0")
check(rc == 0, f"report --json exits 0 ({err.strip()})")
want = json.loads(out)["groups"]
page_path = os.path.join(logs.path, "page.html")
rc, out, err = report(logs.path, "--html", page_path, "--top", "0")
check(rc == 0 and os.path.exists(page_path) and page_path in out,
      f"report --html exits 0 and says what it wrote ({out.strip()} {err.strip()})")
html = open(page_path).read()
check(not re.search(r"""(src|href)=["'](https?:)?//""", html) and "<link" not in html,
      "the page refers to nothing elsewhere")

# The group of each event, as the JSON names it: its process and group key (or handler).
key_of = lambda e: (e["bundle_name"], e["group"] or e["handler"])
rank_of = {(g["process"], g.get("group", g.get("handler_key"))): i for i, g in enumerate(want)}
samples = [0] * len(want)
for e in events:
    for f in e["external_log"]:
        if re.search(r"/stack-[^/]*\.txt$", f):
            samples[rank_of[key_of(e)]] += roots(f)

browser = cdp.Browser()
try:
    page = browser.new_page()
    url = "file://" + page_path
    page.open(url, 1280, 2400)
    shot = page.screenshot(os.path.join(ARTIFACTS, "report-page.png"))
    print(f"screenshot: {shot}")

    # The timeline: every event, on its process's lane, at its time.
    lanes = page.eval(LANES)
    check(sorted(lanes) == sorted({busy_pid, sleep_pid}),
          f"a lane per process ({lanes})")
    drawn = page.eval(EVENTS)
    geo = page.eval("(function (s) { return { t0: +s.getAttribute('data-t0'), "
                    "span: +s.getAttribute('data-span'), x0: +s.getAttribute('data-x0'), "
                    "pw: +s.getAttribute('data-pw') }; })(document.getElementById('tl'))")
    check(sorted(d["t"] for d in drawn) == sorted(e["begin_time"] for e in events),
          f"the timeline draws the {len(events)} events, each at its begin_time "
          f"({len(drawn)} drawn)")
    check(geo["t0"] == min(e["begin_time"] for e in events) and
          geo["t0"] + geo["span"] >= max(e["begin_time"] + e["wall_ms"] for e in events),
          f"the timeline spans the first event's start to the last one's end ({geo})")
    # An event by its start and process (two processes' tasks may begin in the same ms).
    event_of = {(e["begin_time"], e["pid"]): e for e in events}
    of = lambda d: event_of.get((d["t"], lanes[d["lane"]]))
    off = []
    for d in drawn:
        e = of(d)
        if e is None:
            off.append((d, "no event of its lane's process at its time"))
            continue
        x = geo["x0"] + (d["t"] - geo["t0"]) * geo["pw"] / geo["span"]
        w = e["wall_ms"] * geo["pw"] / geo["span"]
        if abs(d["left"] - x) > 0.6 or abs(d["width"] - max(w, 2)) > 0.6 or \
                lanes[d["lane"]] != e["pid"] or d["cause"] != e["cause"] or \
                d["g"] != rank_of[key_of(e)]:
            off.append((d, e["begin_time"], e["pid"], x, w))
    check(not off, f"each event is on its process's lane, at its time on the screen, as wide as "
          f"it lasted, in its cause's colour and group ({off[:2]})")

    # The groups: report --json's, in its order, each flame graph the group's stack logs.
    got = page.eval(GROUPS)
    check([(g["process"], g["group"] or g["handler_key"]) for g in got] ==
          [(g["process"], g.get("group", g.get("handler_key"))) for g in want],
          f"the page's groups are report --json's, in its order "
          f"({[(g['process'], g['group']) for g in got]})")
    for i, (g, w) in enumerate(zip(got, want)):
        check(g["janks"] == w["janks"] and g["logs"] == w["files_written"] and
              g["total"] == g["samples"] == g["roots"] == samples[i] and samples[i] > 0,
              f"group #{i + 1} {g['group']}: {g['janks']} janks, its flame graph's total "
              f"{g['total']} (its roots {g['roots']}) is the samples of its {g['logs']} stack "
              f"logs ({samples[i]})")

    # A click on an event goes to its group.
    d = drawn[len(drawn) // 2]
    page.click(d["left"] + page.eval("document.getElementById('tl').getBoundingClientRect()"
                                     ".left") + max(d["width"], 2) / 2,
               d["top"] + d["height"] / 2)
    check(page.eval("location.hash") == f"#g{d['g'] + 1}",
          f"a click on an event goes to its group (#g{d['g'] + 1}: "
          f"{page.eval('location.hash')})")
    said = page.eval("document.getElementById('tl-info').textContent")
    check(str(of(d)["pid"]) in said and "ms" in said,
          f"hovering an event says it ({said.strip()})")

    # A drag across the first half of the events zooms the timeline to that range: the events
    # in it spread over the width, the others hidden; Reset zoom brings them back.
    page.eval("window.scrollTo(0, 0)")
    tl = page.eval("(function () { var r = document.getElementById('tl').getBoundingClientRect();"
                   " return { left: r.left, top: r.top }; })()")
    first = sorted(drawn, key=lambda d: d["t"])[:len(drawn) // 2]
    # Whole pixels of the page, as a mouse's events carry them.
    a = math.ceil(tl["left"] + max(geo["x0"], first[0]["left"] - 3)) - tl["left"]
    b = round(tl["left"] + first[-1]["left"] + first[-1]["width"] + 3) - tl["left"]
    y = tl["top"] + 16
    for kind, x, buttons in (("mouseMoved", a, 0), ("mousePressed", a, 1), ("mouseMoved", b, 1),
                             ("mouseReleased", b, 0)):
        page.send("Input.dispatchMouseEvent", {"type": kind, "x": tl["left"] + x, "y": y,
                                               "button": "left", "buttons": buttons,
                                               "clickCount": 1})
    vt0 = geo["t0"] + (a - geo["x0"]) * geo["span"] / geo["pw"]
    vspan = (b - a) * geo["span"] / geo["pw"]
    zoomed = page.eval(EVENTS.replace("return {", "return { shown: getComputedStyle(r).display"
                                      " !== 'none',"))
    off = []
    for d in zoomed:
        x = geo["x0"] + (d["t"] - vt0) * geo["pw"] / vspan
        w = max(of(d)["wall_ms"] * geo["pw"] / vspan, 2)
        inside = x + w > geo["x0"] and x < geo["x0"] + geo["pw"]
        if d["shown"] != inside or (inside and abs(d["left"] - max(x, geo["x0"])) > 0.6):
            off.append((d["t"], d["shown"], d["left"], x))
    check(not off and any(d["shown"] for d in zoomed) and not all(d["shown"] for d in zoomed),
          f"a drag over the first {len(first)} events zooms the timeline to them: "
          f"{sum(d['shown'] for d in zoomed)} of {len(zoomed)} events shown, each at its time "
          f"({off[:2]})")
    page.eval("document.getElementById('tl-reset').click()")
    back = page.eval(EVENTS)
    check(len(back) == len(drawn) and
          all(p["t"] == q["t"] and abs(p["left"] - q["left"]) < 0.05 for p, q in zip(back, drawn)),
          "Reset zoom puts every event back where it was")

    # A click on a box of the first graph zooms it, the other graphs left alone.
    box = page.eval("(function () { var g = document.querySelector('#flame1 g.f[data-depth=\"3\"]');"
                    " g.scrollIntoView(); var r = g.querySelector('rect').getBoundingClientRect();"
                    " return { x: r.left + r.width / 2, y: r.top + r.height / 2,"
                    " n: +g.getAttribute('data-n') }; })()")
    page.click(box["x"], box["y"])
    zoomed = page.eval("(function () { var g = document.querySelector('#flame1 g.f[data-depth=\"3\"]');"
                       " return g.querySelector('rect').getBoundingClientRect().width; })()")
    reset = page.eval("getComputedStyle(document.querySelector('#flame1 .reset')).display")
    check(abs(zoomed - 1180) < 0.5 and reset != "none",
          f"a click on a box zooms its graph to it ({zoomed:.1f} px wide, Reset shown)")
    if len(got) > 1:
        other = page.eval("getComputedStyle(document.querySelector('#flame2 .reset')).display")
        check(other == "none", "the other graphs are not zoomed")

    # The statistics: sorted by total time at first; a click on a column sorts by it.
    heads = page.eval("Array.from(document.querySelectorAll('#stats th')).map("
                      "function (h) { return h.textContent; })")
    check("message_name" in heads and "total_latency_micros" in heads,
          f"the statistics table has stats.csv's columns ({heads})")
    column = lambda c: page.eval(f"Array.from(document.querySelectorAll('#stats tbody tr')).map("
                                 f"function (r) {{ return +r.cells[{c}].textContent; }})")
    total = column(heads.index("total_latency_micros"))
    check(len(total) >= 2 and total == sorted(total, reverse=True),
          f"the statistics are sorted by total_latency_micros at first ({total})")
    col = heads.index("max_latency_micros")
    page.eval(f"document.querySelectorAll('#stats th')[{col}].click()")
    down = column(col)
    page.eval(f"document.querySelectorAll('#stats th')[{col}].click()")
    up = column(col)
    check(down == sorted(down, reverse=True) and up == sorted(up) and len(set(up)) >= 2,
          f"a click on max_latency_micros sorts the rows by it, another the other way "
          f"({down}, {up})")

    check(not page.exceptions, f"no exception in the page ({page.exceptions})")
    errors = [c for c in page.console if c[0] in ("error", "assert", "warning")]
    check(not errors, f"no console error ({errors})")
    check(all(r == url for r in page.requests), f"no request but the page ({page.requests})")
finally:
    browser.close()

# A page that cannot be written: one line, exit 1, nothing left behind.
bad = "/nonexistent/dir/page.html"
rc, out, err = report(logs.path, "--html", bad)
check(rc == 1 and len(err.strip().splitlines()) == 1 and "/nonexistent/dir" in err,
      f"--html into a missing directory: one line, exit 1 ({err.strip()})")
rc, out, err = report(logs.path, "--html", "")
check(rc == 2 and len(err.strip().splitlines()) == 1, f"--html '': one line ({err.strip()})")
left = [f for f in os.listdir(logs.path) if f.startswith("page.html.")]
check(not left, f"no temporary file left ({left})")
logs.cleanup()

# Past the bound: of 12,000 events (logfixture.py's directory, rotated events files), the page
# draws the longest 10,000 and says so; it stays under 3 MB (bench/page.py: its load time).
many = LogDir()
logfixture.make(12000, many.path)
rc, out, err = report(many.path, "--html", os.path.join(many.path, "page.html"))
check(rc == 0, f"report --html of 12,000 events exits 0 ({err.strip()})")
html = open(os.path.join(many.path, "page.html")).read()
walls = sorted((json.loads(l)["wall_ms"] for f in os.listdir(many.path)
                if f.startswith("events.jsonl") for l in open(os.path.join(many.path, f))),
               reverse=True)
drawn = sorted((float(w) for w in re.findall(r'<rect class="ev [^>]*data-w="([\d.]+)"', html)),
               reverse=True)
check(len(walls) == 12000 and len(drawn) == 10000 and
      all(abs(a - b) < 0.001 for a, b in zip(drawn, walls)) and
      "The longest 10000 of 12000 events" in html and "the 2000 shorter ones are left out" in html,
      f"12,000 events: the longest 10,000 drawn, the cut said ({len(drawn)} drawn)")
check(len(html) < 3 << 20, f"the page of 12,000 events is under 3 MB ({len(html)} bytes)")
# Every group (--top 0): each has its section, the first 50 a flame graph, the rest say so.
rc, out, err = report(many.path, "--html", os.path.join(many.path, "all.html"), "--top", "0")
rc2, js, err2 = report(many.path, "--json", "--top", "0")
html = open(os.path.join(many.path, "all.html")).read()
groups = json.loads(js)["groups"]
with_logs = [i for i, g in enumerate(groups) if g["files_written"]]
check(rc == 0 and html.count('<section class="group"') == len(groups) and
      html.count('class="flame"') == 50 and
      html.count("the page draws the first 50 groups' only") == len([i for i in with_logs
                                                                    if i >= 50]),
      f"--top 0: the {len(groups)} groups each a section, 50 flame graphs, the others said")
check(len(html) < 4 << 20, f"that page is under 4 MB ({len(html)} bytes)")
many.cleanup()
print("PASS")
