# SPDX-License-Identifier: GPL-2.0-only
"""The qt preset on Debian's Qt 5 and Qt 6 (jw_qt5, jw_qt6: a Catalog object whose slot
reindex() spins 300 ms once a second, and whose tick() slot a 50 ms timer calls), under GLib's
dispatcher (Qt's default) and Qt's own (QT_NO_GLIB=1). Each task is named from Qt's data, not
from the stacks: the receiver's class from its RTTI and the event's type at notifyInternal2, and
where the event calls a slot through a slot object, the slot:

- a QTimer connected to &Catalog::reindex: class Catalog, handler Catalog::reindex();
- Catalog's own timerEvent() (startTimer): class Catalog, handler QEvent::Timer;
- a queued call (invokeMethod, Qt::QueuedConnection): class Catalog, handler Catalog::reindex(),
  named at QMetaCallEvent::placeMetaCall, which jumps to the slot object's function;
- a QTimer connected to a lambda: class QTimer (the receiver of a connection without a context
  object is the sender), handler the lambda's type, main::{lambda()#1};
- --nested: the slot first sends events of its own (ChildAdded, ChildRemoved, User) through
  notifyInternal2, nested: they do not rename the task;
- the same program stripped (jw_qt5_stripped): the class still Catalog (RTTI survives strip), the
  slot the address of Catalog::reindex() in its module, never a wrong name.

Each jank is within 5% of what the program measured itself, its `group` the slot's frames; the
statistics rows have the same names, the slot's row counts every task reported and the ticker's
row every tick the program made while watched."""
import concurrent.futures

from jwtest import *

require_bpf()

WATCH_S = 5


def watch(binary, mode, env=None, nested=False):
    """Watches @binary in @mode for WATCH_S s once it is 3 s old (jwtest.watch_loop)."""
    args = [os.path.join(TARGETS, binary), "--ms", "300", "--every", "1000", "--light", "50",
            "--mode", mode] + (["--nested"] if nested else [])
    what = f"{binary} {mode}{' --nested' if nested else ''}{' QT_NO_GLIB=1' if env else ''}"
    w = watch_loop(Proc(args, env=dict(os.environ, **(env or {}))), WATCH_S)
    check(w.rc == 0, f"{what}: jankwatch exits 0 ({w.rc})")
    check(any(f"loop qt (auto: " in l and "libQt" in l for l in w.err),
          f"{what}: the qt preset is picked ({[l for l in w.err if 'loop' in l]})")
    return what, w.events, w.rows, w.tasks, w.ticks


def check_case(binary, mode, cls, handler, group=None, env=None, nested=False):
    what, events, rows, tasks, ticks = watch(binary, mode, env, nested)
    check(len(events) >= WATCH_S - 2, f"{what}: the tasks' events ({len(events)})")
    for ev in events:
        check(ev["loop"] == "qt" and ev["handler"] == handler and ev["handler_class"] == cls,
              f"{what}: the event names {cls} / {handler} ({ev['handler_class']} / "
              f"{ev['handler']})")
        mine = task_of(ev, tasks, f"{what}: the event matches one task of the program")
        check(matches_own(ev, mine.dur_ns / 1e6),
              f"{what}: wall_ms {ev['wall_ms']} within 5% of the program's own "
              f"{mine.dur_ns / 1e6:.3f}")
        if group:
            check(ev["group"] == group, f"{what}: group {ev['group']!r} is the slot's frames")
    by_name = {(r["handler_class"], r["message_name"]): r for r in rows}
    check((cls, handler) in by_name, f"{what}: a row of {cls} / {handler} ({sorted(by_name)})")
    row = by_name.get((cls, handler))
    if row:
        check(int(row["message_count"]) == len(events),
              f"{what}: its row counts the {len(events)} tasks ({row['message_count']})")
    tick = by_name.get(("Catalog", "Catalog::tick()"))
    if "stripped" not in binary:
        check(tick is not None, f"{what}: a row of Catalog::tick() ({sorted(by_name)})")
        n = int(tick["message_count"]) if tick else -1
        check(ticks[0] <= n <= ticks[1],
              f"{what}: the ticker's row counts the ticks the program ran while watched ({n}: "
              f"{ticks[0]} surely, {ticks[1]} at most)")


def cases(qt):
    """Every case on Qt @qt (qt5, qt6): the two versions' cases run side by side, each a target
    and a jankwatch of its own (a failed check exits its thread's future, and the test)."""
    binary = f"jw_{qt}"
    slot_group = "busy_work(unsigned int)<-Catalog::reindex()"
    check_case(binary, "timer", "Catalog", "Catalog::reindex()", slot_group)
    check_case(binary, "timer", "Catalog", "Catalog::reindex()", slot_group, nested=True)
    check_case(binary, "timer", "Catalog", "Catalog::reindex()", slot_group,
               env={"QT_NO_GLIB": "1"})
    check_case(binary, "event", "Catalog", "QEvent::Timer",
               "busy_work(unsigned int)<-Catalog::timerEvent(QTimerEvent*)", nested=True)
    check_case(binary, "queued", "Catalog", "Catalog::reindex()", slot_group,
               env={"QT_NO_GLIB": "1"})
    check_case(binary, "lambda", "QTimer", "main::{lambda()#1}", slot_group)
    # Stripped: the class from RTTI, the slot by its address in the module.
    stripped = f"{binary}_stripped"
    at = symbol_offset(os.path.join(TARGETS, binary), "_ZN7Catalog7reindexEv")
    check_case(stripped, "timer", "Catalog", f"{stripped}+0x{at:x}")


with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    for done in [pool.submit(cases, qt) for qt in ("qt5", "qt6")]:
        done.result()
# A program gone before its rows were named (started by jankwatch, quitting after 2 tasks, in
# under 5 s): its rows still name the class and the slots, from its symbols.
logs = LogDir()
# (its output shares jankwatch's stdout)
rc = Proc([JW_BIN, "--set", "ignore_startup_time=3", "--log-dir", logs.path, "--",
           os.path.join(TARGETS, "jw_qt5"), "--ms", "300", "--every", "1000", "--light", "50",
           "--count", "2"]).wait(60)
with open(os.path.join(logs.path, "stats.csv")) as f:
    names = {(r["handler_class"], r["message_name"]) for r in csv.DictReader(f)}
check(rc == 0 and {("Catalog", "Catalog::reindex()"), ("Catalog", "Catalog::tick()")} <= names,
      f"a program that exited: its rows named from its symbols ({rc}, {sorted(names)})")
logs.cleanup()

# handler_sites=0: no probe that runs per event; the stacks name a jank's slot, past Qt's
# slot object plumbing, and only the loop's iterations have a row.
w = watch_loop(Proc([os.path.join(TARGETS, "jw_qt5"), "--ms", "300", "--every", "1000"]), 4,
               ["--set", "handler_sites=0"])
check(w.rc == 0 and any("handler_sites=0: handlers named from the stacks" in l for l in w.err),
      f"handler_sites=0: it says the stacks name the handlers ({[l for l in w.err if 'loop' in l]})")
check(len(w.events) >= 2 and all(ev["handler"] == "Catalog::reindex()" for ev in w.events),
      f"handler_sites=0: the stacks name the slot ({[ev['handler'] for ev in w.events]})")
check([r["message_name"] for r in w.rows] == ["syscall"],
      f"handler_sites=0: only the iterations' row ({[r['message_name'] for r in w.rows]})")
print("PASS")
