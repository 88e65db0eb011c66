# SPDX-License-Identifier: GPL-2.0-only
"""A WSGI app for the pre-fork integration test (gunicorn's sync workers): /jank?ms=N busy-loops
N ms in the worker and answers what it measured itself, like jw_target: "task <n> busy
<begin_ns> <duration_ns> <waited_ns>" (CLOCK_MONOTONIC; waited_ns: the time the worker waited
for a CPU meanwhile, from /proc/thread-self/schedstat), then "pid <worker pid>". Its figure
begins where the task does, as the worker's loop wait returned (gunicorn's own accept and
request parsing are in it), and ends as the app returns its answer. Any other path answers
"ok"."""
import os
import select
import time
from urllib.parse import parse_qs

import gunicorn.workers.sync

n = 0


class TimedSelect:
    """select, as the sync worker's loop calls it to wait (select.select): the time and the
    thread's run-queue wait when that wait last returned."""
    returned_ns = None
    returned_runq_ns = 0

    def __getattr__(self, name):
        return getattr(select, name)

    def select(self, *args):
        ready = select.select(*args)
        TimedSelect.returned_ns = time.monotonic_ns()
        TimedSelect.returned_runq_ns = runq_ns()
        return ready


# The app is loaded in each worker before its loop first waits.
gunicorn.workers.sync.select = TimedSelect()


def runq_ns():
    """The time this thread has waited on a run queue so far (schedstat's second field)."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def busy_work(ms):
    end = time.monotonic_ns() + ms * 1_000_000
    while time.monotonic_ns() < end:
        pass


def app(environ, start_response):
    global n
    if environ.get("PATH_INFO") == "/jank":
        ms = int(parse_qs(environ.get("QUERY_STRING", "")).get("ms", ["300"])[0])
        n += 1
        waited = runq_ns()
        begin = time.monotonic_ns()
        if TimedSelect.returned_ns is not None:
            # The first request since the worker's wait returned (it serves every connection
            # already waiting before it waits again: those tasks begin at their accept).
            begin, waited = TimedSelect.returned_ns, TimedSelect.returned_runq_ns
            TimedSelect.returned_ns = None
        busy_work(ms)
        end = time.monotonic_ns()
        waited = runq_ns() - waited
        body = f"task {n} busy {begin} {end - begin} {waited}\npid {os.getpid()}\n"
    else:
        body = "ok\n"
    data = body.encode()
    start_response("200 OK", [("Content-Type", "text/plain"),
                              ("Content-Length", str(len(data)))])
    return [data]
