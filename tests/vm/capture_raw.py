# SPDX-License-Identifier: GPL-2.0-only
"""Inside scripts/vmtest.sh's VM: a raw capture (--raw) of jw_target's 300 ms busy tasks at the
path given, which vmtest.sh then names on the host with the host's `jankwatch symbolize`."""
import os
import sys

sys.path.insert(0, os.path.join(os.environ.get("JW_SRC", "."), "tests/integration"))
from jwtest import TARGET, LogDir, capture_raw, check, require_bpf  # noqa: E402

require_bpf()
logs = LogDir()
rc, events = capture_raw(TARGET, ["--busy", "--ms", "300", "--every", "700", "--fast", "5"],
                         logs.path, sys.argv[1])
check(rc == 0, f"jankwatch --raw exits 0 (got {rc})")
check(len(events) >= 2, f"at least 2 events in the capture (got {len(events)})")
check(os.path.getsize(sys.argv[1]) > 0, "the capture is not empty")
logs.cleanup()
print("PASS")
