# SPDX-License-Identifier: GPL-2.0-only
"""Installing: `jankwatch --version` names the version and the binary's own build-id (as readelf
reads it); `cmake --install` puts the binary in sbin/, the systemd unit naming it there, the man
page, bash completion and the documentation with an example configuration; `cpack -G DEB` makes
a package depending on the libraries' packages, which dpkg installs (the installed binary runs,
systemd-analyze verifies the unit, man finds the page) and removes without a trace. The unit is
the hardened one: `systemd-analyze security --offline=yes` rates its exposure at most 4.0, and
the drop-in for metrics_listen is installed with the examples."""
import glob
import shutil
import subprocess

from jwtest import *

require_bpf()
BUILD = os.path.dirname(os.path.abspath(JW_BIN))


def run(argv, what):
    p = subprocess.run(argv, capture_output=True, text=True)
    check(p.returncode == 0, f"{what} ({p.returncode}: {p.stderr.strip()[-300:]})")
    return p.stdout


def build_id(path):
    m = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", path], f"readelf -n {path}"))
    check(m is not None, f"{path} has a GNU build-id")
    return m.group(1)


def security(path, what):
    """systemd-analyze security --offline=yes on unit file @path: an exposure of at most 4.0."""
    out = run(["systemd-analyze", "security", "--offline=yes", "--no-pager", path],
              f"systemd-analyze security --offline=yes {what}")
    m = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", out)
    check(m is not None and float(m.group(1)) <= 4.0,
          f"{what}: exposure {m.group(1) if m else '?'} <= 4.0 "
          f"({[l for l in out.splitlines() if l.startswith('✗')][:3]}...)")


version = run([JW_BIN, "--version"], "jankwatch --version exits 0").strip()
m = re.fullmatch(r"jankwatch (\d+\.\d+\.\d+) \(build-id ([0-9a-f]+), (x86_64|arm64)\)", version)
check(m is not None, f"--version says version, build-id and architecture ({version})")
check(m.group(2) == build_id(JW_BIN), "the build-id is the binary's own")

tmp = tempfile.mkdtemp(prefix="jw-package-")
try:
    prefix = os.path.join(tmp, "prefix")
    run(["cmake", "--install", BUILD, "--prefix", prefix], "cmake --install exits 0")
    expected = ["sbin/jankwatch", "lib/systemd/system/jankwatch.service",
                "share/man/man8/jankwatch.8.gz", "share/bash-completion/completions/jankwatch",
                "share/doc/jankwatch/README.md", "share/doc/jankwatch/docs/usage.md",
                "share/doc/jankwatch/docs/report-page.png",
                "share/doc/jankwatch/examples/jankwatch.conf",
                "share/doc/jankwatch/examples/metrics-listen.conf"]
    missing = [f for f in expected if not os.path.exists(os.path.join(prefix, f))]
    check(not missing, f"installed: {', '.join(expected)} (missing {missing})")
    unit = open(os.path.join(prefix, "lib/systemd/system/jankwatch.service")).read()
    check(f"ExecStart={prefix}/sbin/jankwatch --config /etc/jankwatch.conf" in unit,
          "the unit runs the binary where it was installed")
    check(run([os.path.join(prefix, "sbin/jankwatch"), "--version"],
              "the installed binary runs").strip() == version, "and is the same build")
    run(["bash", "-n", os.path.join(prefix, "share/bash-completion/completions/jankwatch")],
        "the bash completion parses")
    security(os.path.join(prefix, "lib/systemd/system/jankwatch.service"), "the installed unit")

    out = os.path.join(tmp, "cpack")
    run(["cpack", "-G", "DEB", "-B", out, "--config", os.path.join(BUILD, "CPackConfig.cmake")],
        "cpack -G DEB exits 0")
    debs = glob.glob(os.path.join(out, "jankwatch_*.deb"))
    check(len(debs) == 1, f"one package ({debs})")
    info = run(["dpkg-deb", "-I", debs[0]], "dpkg-deb -I reads it")
    check(all(lib in info for lib in ("libbpf1", "libdw1", "libelf1")),
          "it depends on libbpf1, libdw1 and libelf1")

    if subprocess.run(["dpkg", "-s", "jankwatch"], capture_output=True).returncode == 0:
        print("note: a jankwatch package is installed here already: not replaced, the dpkg part "
              "is left out")
    else:
        try:
            run(["dpkg", "-i", debs[0]], "dpkg -i installs it")
            check(run(["/usr/sbin/jankwatch", "--version"], "/usr/sbin/jankwatch runs")
                  .split(" (")[0] == version.split(" (")[0], "the packaged version")
            run(["systemd-analyze", "verify", "/usr/lib/systemd/system/jankwatch.service"],
                "systemd-analyze verify passes on the installed unit")
            security("/usr/lib/systemd/system/jankwatch.service", "the package's unit")
            check(run(["man", "-w", "jankwatch"], "man finds the page").strip()
                  .endswith("jankwatch.8.gz"), "the page is jankwatch(8)")
        finally:
            run(["dpkg", "-r", "jankwatch"], "dpkg -r removes it")
        left = [f for f in ("/usr/sbin/jankwatch", "/usr/lib/systemd/system/jankwatch.service",
                            "/usr/share/man/man8/jankwatch.8.gz", "/usr/share/doc/jankwatch")
                if os.path.exists(f)]
        check(not left, f"nothing of it is left ({left})")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("PASS")
