#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The lists the documentation repeats, held to the code's tables (jw_lists prints them): every
command's synopsis and options, every parameter's range and default, the loop presets and
those handler_sites applies to. Checked: `jankwatch --help` and each subcommand's, the man page,
the bash completion (run in bash), docs/usage.md, docs/outputs.md and the README. A difference
in any of them fails, naming the file and what differs.
Usage: lists.py SOURCE_DIR JANKWATCH JW_LISTS"""
import json
import os
import re
import subprocess
import sys

SRC, JW, LISTS = sys.argv[1:4]
failures = []


def fail(where, what):
    failures.append(f"{where}: {what}")


def same_set(where, what, got, want):
    got, want = set(got), set(want)
    if got != want:
        fail(where, f"{what}: missing {sorted(want - got)}, not in the code {sorted(got - want)}")


def squash(text):
    return " ".join(text.split())


def read(rel):
    with open(os.path.join(SRC, rel), encoding="utf-8") as f:
        return f.read()


def run(*args, env=None):
    p = subprocess.run(args, capture_output=True, text=True, timeout=30, env=env)
    if p.returncode != 0:
        fail(" ".join(args), f"exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


lists = json.loads(run(LISTS))
cmds = {c["name"]: c for c in lists["commands"]}
watch = cmds[""]
params = {p["name"]: p for p in lists["params"]}
presets = [n for n in lists["loops"] if n not in ("auto", "syscall")]
sites = lists["sites"]
known_flags = {f for c in cmds.values() for o in c["options"] for f in (o["long"], o["short"])
               if f}


def synopses():
    """Every usage line, "jankwatch report LOGDIR [...]", in the table's order."""
    return [f"jankwatch {c['name'] + ' ' if c['name'] else ''}{s}"
            for c in lists["commands"] for s in c["synopsis"]]


def flags(cmd):
    return {f for o in cmd["options"] for f in (o["long"], o["short"]) if f}


def words_listed(text):
    """"a, b, c and d" (or "... or d") -> [a, b, c, d], backticks dropped."""
    return [w for w in re.split(r",\s*|\s+and\s+|\s+or\s+", text.replace("`", "").strip()) if w]


# --- the table itself: a subcommand's synopsis names each of its options ---
for name, c in cmds.items():
    # The watch, and a command that takes the watch's options (top): "[OPTIONS]" says them.
    if not name or c["options"] == watch["options"]:
        continue
    syn = " ".join(c["synopsis"])
    for o in c["options"]:
        if o["long"] == "--help":
            continue
        if not any(f and re.search(re.escape(f) + r"(?![\w-])", syn) for f in (o["long"], o["short"])):
            fail("the table", f"{name}'s synopsis lacks {o['form']}")


# --- --help, the watch's and each subcommand's ---
def check_help(name, text):
    where = f"jankwatch {name + ' ' if name else ''}--help"
    c = cmds[name]
    forms = re.findall(r"^  (-\S+(?:, --\S+)?(?: \S+)?)(?:  |\n|$)", text, re.M)
    same_set(where, "options", forms, [o["form"] for o in c["options"]])
    flat = squash(text)
    for line in (synopses() if not name else synopses_of(name)):
        if line not in flat:
            fail(where, f"no synopsis '{line}'")


def synopses_of(name):
    return [s for s in synopses() if s.startswith(f"jankwatch {name} ")]


help_text = run(JW, "--help")
check_help("", help_text)
for name in cmds:
    if name:
        check_help(name, run(JW, name, "--help"))
got = {m[0]: (m[1], m[2]) for m in
       re.findall(r"^  ([a-z_]+) +(.+); default (\S.*)$", help_text, re.M)}
same_set("jankwatch --help", "parameters", got, params)
for n, (rng, dflt) in got.items():
    if n in params and (rng, dflt) != (params[n]["range"], params[n]["default"]):
        fail("jankwatch --help", f"{n}: '{rng}; default {dflt}', the code "
             f"'{params[n]['range']}; default {params[n]['default']}'")
m = re.search(r"^Loops \(--loop NAME\):\n((?:  .*\n)+)", help_text, re.M)
same_set("jankwatch --help", "Loops", words_listed(squash(m[1])) if m else [], lists["loops"])


# --- the man page ---
def roff(line):
    """A roff line as it reads: font escapes gone, .B/.BR/.I/.IR's arguments joined."""
    m = re.match(r"^\.(B|I|BR|RB|IR|RI|BI|IB) (.*)$", line)
    if m:
        line = m[2]
        if len(m[1]) == 2:
            line = "".join(a or b for a, b in re.findall(r'"([^"]*)"|(\S+)', line))
    line = re.sub(r"\\f[BIRP]", "", line)
    return line.replace("\\-", "-").replace("\\(em", "-").replace("\\&", "").replace("\\ ", " ")


man = read("docs/jankwatch.8")
sections = {}
for part in re.split(r"^\.SH ", man, flags=re.M)[1:]:
    head, _, body = part.partition("\n")
    sections[head.strip().strip('"')] = body


def tp_heads(body):
    lines = body.split("\n")
    return [roff(lines[i + 1]) for i, l in enumerate(lines[:-1]) if l.strip() == ".TP"]


syn = [squash(" ".join(roff(x) for x in s.split("\n"))) for s in
       re.split(r"^\.br$", sections.get("SYNOPSIS", ""), flags=re.M)]
syn = [s for s in syn if s]
if syn != synopses():
    fail("docs/jankwatch.8", f"SYNOPSIS {syn} is not the code's {synopses()}")
same_set("docs/jankwatch.8", "OPTIONS", tp_heads(sections.get("OPTIONS", "")),
         [o["form"] for o in watch["options"]])
heads = tp_heads(sections.get("SUBCOMMANDS", ""))
same_set("docs/jankwatch.8", "SUBCOMMANDS", [h.split()[0] for h in heads if h],
         [n for n in cmds if n])
want = [f"{p['name']} ({p['range']}; default {p['default']})" for p in lists["params"]]
same_set("docs/jankwatch.8", "PARAMETERS", tp_heads(sections.get("PARAMETERS", "")), want)
desc = squash(" ".join(roff(l) for l in sections.get("DESCRIPTION", "").split("\n")))
m = re.search(r"\(a preset: ([^)]*?), recognized", desc)
same_set("docs/jankwatch.8", "the presets in DESCRIPTION", words_listed(m[1]) if m else [],
         presets)
opts = squash(" ".join(roff(l) for l in sections.get("OPTIONS", "").split("\n")))
m = re.search(r"Or one preset by name: ([^.]*)\.", opts)
same_set("docs/jankwatch.8", "the presets of --loop", words_listed(m[1]) if m else [], presets)
man_text = "\n".join(roff(l) for l in man.split("\n"))
for f in set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", man_text)) - known_flags:
    fail("docs/jankwatch.8", f"{f}: no command has this option")


# --- the completion, run in bash with the commands' candidates asked for ---
COMPLETE = r'''
_init_completion() { words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; cur=${words[cword]};
	prev=${words[cword-1]}; }
_filedir() { :; }
compopt() { :; }
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _jankwatch
printf '%s\n' "${COMPREPLY[@]}"
'''
env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(JW)) + ":" + os.environ["PATH"])
completion = os.path.join(SRC, "scripts/jankwatch.bash-completion")


def complete(*words):
    return run("bash", "-c", COMPLETE, "complete", completion, "jankwatch", *words,
               env=env).split()


for name, c in cmds.items():
    got = complete(*([name] if name else []), "-")
    same_set("completion", f"'jankwatch {name + ' ' if name else ''}-'", got,
             [f for f in flags(c) if f.startswith("-")])
same_set("completion", "'jankwatch '", complete(""), [n for n in cmds if n])
same_set("completion", "--loop", complete("--loop", ""), lists["loops"])
same_set("completion", "--set", [w.rstrip("=") for w in complete("--set", "")], params)
arg_of = {o["long"]: o["arg"] for o in watch["options"] if o["long"]}
same_set("completion", "--unwind", complete("--unwind", ""), arg_of["--unwind"].split("|"))
fmt = complete("--format", "")
same_set("completion", "--format's single words", [w for w in fmt if "," not in w],
         ["tree", "folded", "svg", "pprof"])
for w in fmt:
    if not re.fullmatch(r"(tree|folded|svg|pprof)(,(svg|pprof))*", w):
        fail("completion", f"--format {w}: not of {arg_of['--format']}")
export_fmt = [o["arg"] for o in cmds["export"]["options"] if o["long"] == "--format"][0]
same_set("completion", "export --format", complete("export", "--format", ""), [export_fmt])


# --- docs/usage.md and docs/outputs.md, the README ---
def table(text, header):
    """The rows of the markdown table whose header row starts with @header, as cell lists."""
    lines = text.split("\n")
    for i, l in enumerate(lines):
        if l.startswith(header):
            rows = []
            for r in lines[i + 2:]:
                if not r.startswith("|"):
                    break
                rows.append([c.strip() for c in re.split(r"(?<!\\)\|", r.strip())[1:-1]])
            return rows
    return []


def code_block_after(text, marker):
    at = text.find(marker)
    m = re.search(r"```\n(.*?)```", text[at:], re.S) if at >= 0 else None
    return [l for l in m[1].split("\n") if l.strip()] if m else []


def unquote(cell):
    return cell.replace("`", "").replace("\\|", "|")


usage = read("docs/usage.md")
if code_block_after(usage, "# jankwatch: usage in full") != synopses():
    fail("docs/usage.md", f"the first block is not the code's synopses {synopses()}")
rows = table(usage, "| option | meaning |")
same_set("docs/usage.md", "the options table", [unquote(r[0]) for r in rows],
         [o["form"] for o in watch["options"]] + ["-- CMD [ARGS...]"])
for f in {f for r in rows for f in re.findall(r"(?<![\w-])--[a-z][a-z-]*", unquote(r[0]))} \
        - known_flags:
    fail("docs/usage.md", f"{f}: no command has this option")
loop_row = [r for r in rows if unquote(r[0]) == "--loop NAME"]
m = re.search(r"or a preset by name \(([^)]*)\)", loop_row[0][1]) if loop_row else None
same_set("docs/usage.md", "the presets of --loop's row", words_listed(m[1]) if m else [], presets)
rows = table(usage, "| parameter | range | default | meaning |")
same_set("docs/usage.md", "the parameters table", [unquote(r[0]) for r in rows], params)
for r in rows:
    p = params.get(unquote(r[0]))
    if p and (unquote(r[1]), unquote(r[2])) != (p["range"], p["default"]):
        fail("docs/usage.md", f"{p['name']}: '{unquote(r[1])}', '{unquote(r[2])}'; the code "
             f"'{p['range']}', '{p['default']}'")
    if p and p["name"] == "handler_sites":
        m = re.match(r"(.*?)(?: \(its `call`\))?: ", r[3])
        same_set("docs/usage.md", "handler_sites' presets", words_listed(m[1]) if m else [], sites)
same_set("docs/usage.md", "the presets table",
         [unquote(r[0]) for r in table(usage, "| preset | recognized by | handler |")],
         presets + ["syscall"])
outputs = read("docs/outputs.md")
m = re.search(r"\*\*Handler sites\*\* \(([^;]*);", outputs)
same_set("docs/outputs.md", "Handler sites", words_listed(m[1]) if m else [], sites)
readme = read("README.md")
if code_block_after(readme, "## Usage") != synopses():
    fail("README.md", f"Usage's block is not the code's synopses {synopses()}")

for f in failures:
    print(f"lists: {f}")
print(f"lists: {len(cmds)} commands, {sum(len(c['options']) for c in cmds.values())} options, "
      f"{len(params)} parameters, {len(presets)} presets ({len(sites)} with handler sites): "
      f"{'differences: ' + str(len(failures)) if failures else 'the same everywhere'}")
sys.exit(1 if failures else 0)
