# SPDX-License-Identifier: GPL-2.0-only
"""A one-minute session of jankwatch under valgrind's memcheck: two targets (janks on the CPU
and asleep, with fast tasks in between), a `jankwatch stats --hist` served meanwhile, stack logs,
the statistics written at exit. Memcheck must find no error and no definitely or indirectly
lost block; the only suppressions (tests/valgrind/libbpf.supp) are valgrind's own misreadings of
the bpf() system call. The janks must still be reported: the run is not a do-nothing run."""
import shutil
import tempfile

from jwtest import *

require_bpf()
if not shutil.which("valgrind"):
    print("SKIP: valgrind is not installed (scripts/setup.sh installs it)")
    sys.exit(77)

SUPP = os.path.join(os.environ.get("JW_SRC", "."), "tests", "valgrind", "libbpf.supp")
SECONDS = 60

logs = LogDir()
run_dir = tempfile.mkdtemp(prefix="jw-vg-run-")
vg_log = os.path.join(run_dir, "valgrind.log")
busy = start_target("--busy", "--ms", "200", "--every", "1500", "--fast", "5")
sleepy = start_target("--sleep", "--ms", "250", "--every", "2000")
try:
    wait_for(lambda: process_age_s(busy.pid) >= 3 and process_age_s(sleepy.pid) >= 3, 10,
             "the targets to be 3 s old")
    env = dict(os.environ, JANKWATCH_RUN_DIR=run_dir)
    jw = Proc(["valgrind", f"--suppressions={SUPP}", "--leak-check=full",
               "--show-leak-kinds=definite,indirect", "--errors-for-leak-kinds=definite,indirect",
               "--error-exitcode=99", f"--log-file={vg_log}", JW_BIN,
               "-p", str(busy.pid), "-p", str(sleepy.pid), "--probe", f"{TARGET}:dispatch",
               "--set", "ignore_startup_time=3", "--all", "--duration", str(SECONDS),
               "--log-dir", logs.path], env=env)
    wait_for(lambda: any("ready" in l for l in jw.err) or jw.p.poll() is not None, 120,
             "jankwatch under valgrind to be ready")
    time.sleep(SECONDS / 2)
    st = subprocess.run([JW_BIN, "stats", "--hist", "-p", str(busy.pid)], capture_output=True,
                        text=True, timeout=60, env=env)
    check(st.returncode == 0 and "dispatch" in st.stdout,
          f"stats served from under valgrind (rc {st.returncode}: {st.stderr.strip()[:200]})")
    rc = jw.wait(SECONDS * 3)
    report = open(vg_log).read()
    print("\n".join(l for l in report.splitlines() if "SUMMARY" in l or "lost:" in l))
    if not re.search(r"ERROR SUMMARY: 0 errors", report):
        # The errors themselves, each with its stack: what comes before the heap summary, less
        # valgrind's banner.
        banner = ("Memcheck", "Copyright", "Using", "Command", "Parent")
        errors = [l for l in report.split("HEAP SUMMARY")[0].splitlines()
                  if re.match(r"==\d+== .*\S", l)
                  and not l.split("== ", 1)[1].startswith(banner)]
        print("\n".join(errors[:120]))
    check(rc == 0, f"jankwatch exits 0 under valgrind (got {rc}; 99: memcheck found errors)")
    check(re.search(r"ERROR SUMMARY: 0 errors", report),
          "memcheck: no error (see the valgrind log above)")
    check(re.search(r"definitely lost: 0 bytes", report) or "All heap blocks were freed" in report,
          "memcheck: nothing definitely lost")
    check(re.search(r"indirectly lost: 0 bytes", report) or "All heap blocks were freed" in report,
          "memcheck: nothing indirectly lost")
    events = [json.loads(l) for l in jw.out if l.startswith("{")]
    for pid, least in ((busy.pid, 20), (sleepy.pid, 15)):
        n = len([e for e in events if e["pid"] == pid])
        check(n >= least, f"pid {pid}: at least {least} janks reported in {SECONDS} s ({n})")
    written = [f for e in events for f in e.get("external_log", []) if os.path.exists(f)]
    check(written, f"stack logs written ({len(written)})")
    check(os.path.exists(os.path.join(logs.path, "stats.csv")), "stats.csv written at exit")
finally:
    busy.kill()
    sleepy.kill()
    shutil.rmtree(run_dir, ignore_errors=True)
    logs.cleanup()
print("PASS")
