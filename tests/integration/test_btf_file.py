# SPDX-License-Identifier: GPL-2.0-only
"""A kernel without BTF of its own (Android 12's GKI, vendor kernels): here the kernel's is
hidden from jankwatch (JW_KERNEL_HIDE=btf), or in the VM run `scripts/vmtest.sh --hide-btf` it is
mounted away. Without --btf jankwatch refuses in one line saying how to make one; with
--btf FILE (scripts/make-btf.sh's, reduced to what jankwatch uses; in the VM cut from the
kernel's own image on the host, JW_TEST_BTF) or --btf DIR laid out as BTFHub's, it runs its
compatible programs and catches a busy jank whose stacks reach main, by frame pointers and by
DWARF with --stack-bytes 65536, the most a sample copies (their verifier walks the copy page by
page: before the Python walk stopped following each page, a copy past 40000 bytes passed its
million instructions); a file that is not BTF is refused in one line."""
import subprocess
import tempfile

from jwtest import *

require_bpf()
release = os.uname().release
if os.path.exists("/sys/kernel/btf/vmlinux"):
    os.environ["JW_KERNEL_HIDE"] = "btf"
work = tempfile.mkdtemp(prefix="jw-btf-")
btf = os.environ.get("JW_TEST_BTF")
if btf:
    check(not os.path.exists("/sys/kernel/btf/vmlinux"), "the kernel's BTF is hidden")
if not btf:
    btf = os.path.join(work, "made.btf")
    made = subprocess.run(
        [os.path.join(os.environ.get("JW_SRC", "."), "scripts/make-btf.sh"), "--objects",
         os.path.join(os.path.dirname(JW_BIN), "bpf"), "/sys/kernel/btf/vmlinux", btf],
        capture_output=True, text=True)
    check(made.returncode == 0, f"make-btf.sh makes the file ({made.stderr.strip()})")
size = os.path.getsize(btf)
check(0 < size < 256 * 1024, f"the BTF file is reduced to what jankwatch uses ({size} bytes)")
# BTFHub's layout: <distribution>/<version>/<arch>/<release>.btf
machine = {"aarch64": "arm64"}.get(os.uname().machine, os.uname().machine)
hub = os.path.join(work, "hub", "debian", "11", machine)
os.makedirs(hub)
shutil.copy(btf, os.path.join(hub, release + ".btf"))
not_btf = os.path.join(work, "not.btf")
with open(not_btf, "w") as f:
    f.write("not BTF\n")

target = start_target("--busy", "--ms", "300", "--every", "700", "--fast", "5")
logs = LogDir()
try:
    wait_for(lambda: process_age_s(target.pid) >= 3, 10, "the target to be 3 s old")
    probe = ["-p", str(target.pid), "--probe", f"{TARGET}:dispatch", "--set",
             "ignore_startup_time=3", "--all", "--log-dir", logs.path]
    if not os.path.exists("/var/lib/jankwatch/btf"):
        rc, events, err = run_jankwatch([*probe, "--duration", "1"], 60)
        said = [l for l in err if "--btf" in l]
        check(rc == 1 and not events and len(said) == 1 and "no BTF of its own" in said[0] and
              "make-btf.sh" in said[0], f"without --btf: refused in one line ({said})")
    rc, events, err = run_jankwatch([*probe, "--btf", not_btf, "--duration", "1"], 60)
    check(rc == 1 and any("is not a BTF file" in l for l in err),
          f"a file that is not BTF is refused ({err[-1:]})")
    deep = ["--unwind", "dwarf", "--stack-bytes", "65536"]
    for given, extra in ((btf, []), (os.path.join(work, "hub"), deep)):
        rc, events, err = run_jankwatch([*probe, "--btf", given, *extra, "--duration", "4"], 90)
        check(rc == 0, f"--btf {given} {extra}: exits 0 (got {rc})")
        warned = [l for l in err if "stack_bytes" in l or "cannot load" in l]
        check(not warned, f"--btf {given} {extra}: loaded as asked, nothing cut ({warned})")
        check(any("compatible programs" in l for l in err) and
              any("BTF of this kernel from" in l and release + ".btf" in l or given in l
                  for l in err), f"--btf {given}: says which programs and which BTF it runs")
        check(any("it has none of its own" in l for l in err),
              f"--btf {given}: the kernel's own BTF is not used")
        check(len(events) >= 2, f"--btf {given}: the busy janks are caught ({len(events)})")
        for ev in events:
            check(ev["handler"] == "dispatch" and "busy_work" in ev["heaviest_stack"],
                  f"heaviest stack names busy_work: {ev['heaviest_stack']}")
            frames = parse_tree(stack_tree(open(ev["external_log"][0]).read()))
            check(samples_through(frames, "main") >= 9,
                  f"the samples' stacks reach main ({samples_through(frames, 'main')} of 10)")
finally:
    target.kill()
logs.cleanup()
shutil.rmtree(work, ignore_errors=True)
print("PASS")
