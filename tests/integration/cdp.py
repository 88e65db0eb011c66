# SPDX-License-Identifier: GPL-2.0-only
"""Debian's chromium, headless, driven over the DevTools protocol on a pipe (--remote-debugging-
pipe: JSON messages ended by a NUL byte, commands on the browser's fd 3, answers and events on
its fd 4): what a test needs to open a page, read it, click it and take its picture, with
nothing but the standard library. Every page request, console message and uncaught exception of
the page is kept, for the test to say none went where it should not."""
import base64
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time

# Debian's /usr/bin/chromium is a shell script that runs this; the binary itself keeps the pipe.
CHROMIUM = next((p for p in ("/usr/lib/chromium/chromium", shutil.which("chromium"),
                             shutil.which("chromium-browser")) if p and os.access(p, os.X_OK)),
                None)


def high_fd(fd):
    """@fd moved to a number of 10 or more, so that the browser's 3 and 4 can be set from it."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


class BrowserError(Exception):
    pass


class Page:
    """A tab of the browser, its DevTools session attached."""

    def __init__(self, browser, session):
        self.browser, self.session = browser, session
        self.requests, self.console, self.exceptions = [], [], []

    def send(self, method, params=None, timeout=30):
        return self.browser.send(method, params, self.session, timeout)

    def _event(self, msg):
        method, p = msg["method"], msg.get("params", {})
        if method == "Network.requestWillBeSent":
            self.requests.append(p["request"]["url"])
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"])
            self.console.append((p["type"], text))
        elif method == "Log.entryAdded":
            self.console.append((p["entry"]["level"], p["entry"]["text"]))
        elif method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.exceptions.append(d.get("exception", {}).get("description", d.get("text")))

    def open(self, url, width, height, timeout=30):
        """Loads @url in a @width x @height viewport; returns once its load event fired."""
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self.browser.events_of(self.session, "Page.loadEventFired")    # none yet
        self.send("Page.navigate", {"url": url})
        self.browser.wait_event(self.session, "Page.loadEventFired", timeout)

    def eval(self, expression):
        """The value of JavaScript @expression in the page (JSON-like); raises on its exception."""
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise BrowserError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def click(self, x, y):
        """A left click at page coordinates (@x, @y), as a mouse makes it."""
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y,
                                                   "button": "left", "clickCount": 1})

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path


class Browser:
    """A headless chromium of its own (a fresh profile), closed by close()."""

    def __init__(self):
        if not CHROMIUM:
            raise BrowserError("no chromium (Debian's package chromium)")
        self.profile = tempfile.mkdtemp(prefix="jw-chromium-")
        to_browser, self._cmd = os.pipe()
        self._answers, from_browser = os.pipe()
        to_browser, from_browser = high_fd(to_browser), high_fd(from_browser)
        # The browser reads fd 3 and writes fd 4: bash puts the pipes' ends there (dash takes
        # one-digit fds alone).
        script = f'exec "$0" "$@" 3<&{to_browser} 4>&{from_browser} {to_browser}<&- {from_browser}>&-'
        self.p = subprocess.Popen(
            ["bash", "-c", script, CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", f"--user-data-dir={self.profile}", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-sync",
             "--disable-background-networking", "--disable-component-update",
             "--disable-default-apps", "--mute-audio", "about:blank"],
            pass_fds=(to_browser, from_browser), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(to_browser)
        os.close(from_browser)
        self.stderr = []
        self._next = 0
        self._lock = threading.Lock()
        self._replies = {}
        self._events = queue.Queue()
        self._pending = []
        self._pages = {}
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self):
        for line in self.p.stderr:
            self.stderr.append(line.decode(errors="replace").rstrip())

    def _read(self):
        buf = b""
        while True:
            chunk = os.read(self._answers, 65536)
            if not chunk:
                self._events.put(None)
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg:
                    with self._lock:
                        self._replies[msg["id"]] = msg
                    self._events.put(("reply", msg["id"]))
                else:
                    page = self._pages.get(msg.get("sessionId"))
                    if page:
                        page._event(msg)
                    self._events.put(("event", msg))

    def send(self, method, params=None, session=None, timeout=30):
        with self._lock:
            self._next += 1
            n = self._next
        msg = {"id": n, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if n in self._replies:
                    reply = self._replies.pop(n)
                    break
            self._pump(deadline, f"an answer to {method}")
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def _pump(self, deadline, what):
        """Takes one message off the reader's queue into the pending events."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise BrowserError(f"no {what} within the time allowed; chromium said: "
                               + " | ".join(self.stderr[-5:]))
        try:
            item = self._events.get(timeout=left)
        except queue.Empty:
            return
        if item is None:
            raise BrowserError("chromium exited: " + " | ".join(self.stderr[-5:]))
        if item[0] == "event":
            self._pending.append(item[1])

    def events_of(self, session, method):
        """The events @method of @session received so far, taken off the pending ones."""
        got = [m for m in self._pending if m["method"] == method and m.get("sessionId") == session]
        self._pending = [m for m in self._pending if m not in got]
        return got

    def wait_event(self, session, method, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            got = self.events_of(session, method)
            if got:
                return got[0]
            self._pump(deadline, f"event {method}")

    def new_page(self):
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target,
                                                      "flatten": True})["sessionId"]
        page = Page(self, session)
        self._pages[session] = page
        return page

    def close(self):
        try:
            self.send("Browser.close", timeout=10)
        except (BrowserError, OSError):
            pass
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        os.close(self._cmd)
        shutil.rmtree(self.profile, ignore_errors=True)
