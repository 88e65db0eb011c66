# SPDX-License-Identifier: GPL-2.0-only
"""Symbols from debug files, for probes too: a stripped copy of jw_target, its debug file served
by Debian's debuginfod on 127.0.0.1. --probe STRIPPED:dispatch, which the stripped file lacks,
attaches once its debug file is fetched (DEBUGINFOD_URLS), and the stack logs carry the
functions and file:line the debug file has. Without DEBUGINFOD_URLS, or with the server
stopped, the probe is refused in one line that says the symbols are missing; and a run without
--probe still reports the janks, saying once on stderr that the symbols are missing. A server
that comes up later is asked again: the janks after it have file:line. A debug file under
--debug-dir DIR/.build-id is found with no server at all."""
import re
import subprocess
import time
import urllib.request

from jwtest import *

require_bpf()
DEBUGINFOD = shutil.which("debuginfod")
if not DEBUGINFOD:
    fail("debuginfod is missing: scripts/setup.sh installs it")
WORK = tempfile.mkdtemp(prefix="jw-dbg-")
STRIPPED = os.path.join(WORK, "bin", "jw_stripped")
SERVED = os.path.join(WORK, "served")
os.makedirs(os.path.dirname(STRIPPED))
os.makedirs(SERVED)
subprocess.run(["objcopy", "--strip-all", TARGET, STRIPPED], check=True)
subprocess.run(["objcopy", "--only-keep-debug", TARGET, os.path.join(SERVED, "jw_stripped.debug")],
               check=True)
r = subprocess.run(["readelf", "-n", STRIPPED], capture_output=True, text=True, check=True)
BUILD_ID = re.search(r"Build ID: ([0-9a-f]+)", r.stdout).group(1)
r = subprocess.run(["readelf", "-s", STRIPPED], capture_output=True, text=True)
check(" dispatch" not in r.stdout, "the stripped copy has no symbol 'dispatch'")


def start_server(port=None):
    port = port or free_port()
    server = subprocess.Popen([DEBUGINFOD, "-p", str(port), "-F", SERVED, "-d",
                               os.path.join(WORK, "db.sqlite"), "-t", "1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"

    def served():
        try:
            with urllib.request.urlopen(f"{url}/buildid/{BUILD_ID}/debuginfo", timeout=5) as r:
                return r.status == 200
        except Exception:
            return False
    wait_for(served, 60, "debuginfod to index the debug file")
    return server, url


def watch(env_extra, args, what, duration="3.5"):
    """jankwatch on a fresh stripped target with @args; (rc, events, stderr, logs)."""
    logs = LogDir()
    target = Proc([STRIPPED, "--busy", "--ms", "300", "--every", "700"])
    env = dict(os.environ, DEBUGINFOD_CACHE_PATH=os.path.join(WORK, "cache-" + what))
    env.pop("DEBUGINFOD_URLS", None)
    env.update(env_extra)
    try:
        wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
        p = subprocess.run([JW_BIN, "-p", str(target.pid), "--set", "ignore_startup_time=3",
                            "--all", "--duration", duration, "--log-dir", logs.path, *args],
                           capture_output=True, text=True, env=env, timeout=120)
    finally:
        target.kill()
    events = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    return p.returncode, events, p.stderr.strip().splitlines(), logs


PROBE = ["--probe", f"{STRIPPED}:dispatch"]
SOURCE = re.compile(r"\(dispatch\+\d+\)\([0-9a-f]+\) \S*jw_target\.c:\d+")

# No debuginfod: the probe's function is nowhere; one line says so, and why.
rc, events, err, logs = watch({}, PROBE, "none")
check(rc != 0 and not events and len(err) == 1 and "no function 'dispatch'" in err[0] and
      "DEBUGINFOD_URLS is not set" in err[0],
      f"without a debug file the probe is refused in one line ({rc}: {err})")
logs.cleanup()

server, url = start_server()
try:
    rc, events, err, logs = watch({"DEBUGINFOD_URLS": url}, PROBE, "served")
    check(rc == 0 and len(events) >= 3,
          f"--probe attaches with the debug file from debuginfod ({rc}, {len(events)} events: "
          f"{err[-3:]})")
    check(any("its symbols from the debug file" in l for l in err),
          f"it says where the symbols came from ({err})")
    check(all(ev["handler"] == "dispatch" for ev in events),
          f"the events name the probe's function ({[ev['handler'] for ev in events]})")
    texts = [open(ev["external_log"][0]).read() for ev in events]
    check(all(SOURCE.search(t) for t in texts),
          f"the stack logs carry dispatch with file:line from the debug file "
          f"({texts[0][-600:]})")
    logs.cleanup()
    # No --probe: the first report needs the debug file and waits for it (5 s at most), so
    # every report names the stripped program's functions, with file:line.
    rc, events, err, logs = watch({"DEBUGINFOD_URLS": url}, [], "served-syscall")
    texts = [open(ev["external_log"][0]).read() for ev in events]
    check(rc == 0 and len(events) >= 3 and all(SOURCE.search(t) for t in texts) and
          not any("symbols: " in t for t in texts),
          f"without --probe the reports wait for the debug file: every one has dispatch with "
          f"file:line ({rc}, {len(events)} events; {texts[0][-500:] if texts else err})")
    cached = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(WORK, "cache-served"))
              for f in fs]
    check(any(BUILD_ID in p for p in cached), f"the debug file is in the cache ({cached})")
    logs.cleanup()
finally:
    server.kill()
    server.wait()

# The server stopped, a fresh cache: the probe is refused in one line; a run without --probe
# reports its janks and says once that symbols are missing.
rc, events, err, logs = watch({"DEBUGINFOD_URLS": url}, PROBE, "stopped")
check(rc != 0 and len(err) == 1 and "no function 'dispatch'" in err[0] and "debuginfod" in err[0],
      f"server stopped: the probe is refused in one line ({rc}: {err})")
logs.cleanup()
rc, events, err, logs = watch({"DEBUGINFOD_URLS": url}, [], "stopped-syscall")
missing = [l for l in err if "symbols missing" in l]
check(rc == 0 and len(events) >= 3, f"server stopped: the janks are still reported ({rc}, "
      f"{len(events)} events)")
check(len(missing) == 1 and "debuginfod" in missing[0],
      f"server stopped: one line says the symbols are missing ({err})")
logs.cleanup()

# The server down at start and up later: the failed fetch is tried again 30 s after, and the
# janks reported once it came name the functions with file:line; one line says the symbols are
# missing, one more that they came.
port = free_port()
url = f"http://127.0.0.1:{port}"
logs = LogDir()
target = Proc([STRIPPED, "--busy", "--ms", "300", "--every", "700"])
env = dict(os.environ, DEBUGINFOD_CACHE_PATH=os.path.join(WORK, "cache-late"), DEBUGINFOD_URLS=url)
server = None
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    jw = subprocess.Popen([JW_BIN, "-p", str(target.pid), "--set", "ignore_startup_time=3",
                           "--all", "--duration", "45", "--log-dir", logs.path],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(5)
    server, _ = start_server(port)
    out, errtext = jw.communicate(timeout=120)
finally:
    target.kill()
    if server:
        server.kill()
        server.wait()
events = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
named = [bool(SOURCE.search(open(ev["external_log"][0]).read())) for ev in events
         if ev.get("external_log")]
err = errtext.strip().splitlines()
check(jw.returncode == 0 and len(named) >= 20 and not named[0] and named[-1] and
      named == sorted(named),
      f"server up late: the first janks are named without, the ones after the retry with "
      f"file:line ({jw.returncode}, {named})")
check(len([l for l in err if "symbols missing" in l]) == 1 and
      len([l for l in err if "debuginfod answered" in l]) == 1,
      f"server up late: one line says the symbols are missing, one that they came ({err})")
logs.cleanup()

# A local debug directory, by build-id: no server needed.
local = os.path.join(WORK, "debug", ".build-id", BUILD_ID[:2])
os.makedirs(local)
shutil.copy(os.path.join(SERVED, "jw_stripped.debug"), os.path.join(local, BUILD_ID[2:] + ".debug"))
rc, events, err, logs = watch({}, PROBE + ["--debug-dir", os.path.join(WORK, "debug")], "local")
check(rc == 0 and len(events) >= 3 and all(SOURCE.search(open(ev["external_log"][0]).read())
                                           for ev in events),
      f"--debug-dir: the probe attaches and the stack logs have file:line ({rc}: {err[-2:]})")
logs.cleanup()
shutil.rmtree(WORK, ignore_errors=True)
print("PASS")
