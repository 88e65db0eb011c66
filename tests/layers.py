#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The stages of user/ stand in layers: a file includes headers of its own folder or of a folder
below it, never above. So no two folders import each other, and the tree shows the data flow.
Also: no header of the BPF side outside bpf/ and include/, and bpf/ includes nothing of user/.
Usage: layers.py SOURCE_DIR"""
import os
import re
import sys

# Bottom first. A folder may include only those before it (and itself).
LAYERS = ["base", "arch", "process", "loops", "config", "output", "stacks", "policy", "attach",
          "report", "session"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "."
    rank = {name: i for i, name in enumerate(LAYERS)}
    bad = []
    user = os.path.join(src, "user")
    folders = sorted(d for d in os.listdir(user) if os.path.isdir(os.path.join(user, d)))
    for d in folders:
        if d not in rank:
            bad.append(f"user/{d}/: a folder no layer names (tests/layers.py)")
    for root, _, files in os.walk(user):
        for name in files:
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)
            own = os.path.relpath(root, user).split(os.sep)[0]
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                top = inc.split("/")[0] if "/" in inc else None
                if top in (None, "jankwatch") or inc.endswith(".skel.h"):
                    continue
                if top not in rank:
                    bad.append(f"{rel}: includes \"{inc}\", of no layer")
                elif own in rank and rank[top] > rank[own]:
                    bad.append(f"{rel}: includes \"{inc}\": {top}/ stands above {own}/")
    bpf = os.path.join(src, "bpf")
    for root, _, files in os.walk(bpf):
        for name in files:
            path = os.path.join(root, name)
            with open(path, encoding="utf-8") as f:
                for inc in INCLUDE.findall(f.read()):
                    here = [os.path.join(d, inc) for d in (root, bpf, os.path.join(src, "include"))]
                    if not any(os.path.exists(h) for h in here) and \
                            os.path.exists(os.path.join(user, inc)):
                        bad.append(f"{os.path.relpath(path, src)}: includes user/'s \"{inc}\"")
    for line in bad:
        print("FAIL:", line)
    print(f"{'ok' if not bad else 'FAIL'}: user/'s folders in layers, bottom first: "
          + " < ".join(LAYERS))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
