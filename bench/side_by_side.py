#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The figures of bench/side_by_side.sh, from jw_bench_getmix's rounds.

  side_by_side.py pairs ROUNDS NAME... REF
      Each server's us a GET over REF's in the same round (the servers named in the order of
      the rounds' columns; REF is one of them): the mean of the rounds' differences with its
      95% interval, their median and quartiles.
  side_by_side.py toggle ROUNDS TOGGLES [NAME...]
      What jw_bench_tp_floor --machine --toggle adds to a GET (every server alike, nobody
      watched): a round lies within an "on" span (attached, not yet detaching) or an "off"
      span, else it is left out; each on span's mean us a GET less the mean of the two off
      spans around it, over the spans: mean, 95% interval, spans counted. Then ("median:")
      the same with each span's median round in place of its mean: a stall of the host
      (milliseconds on one round) moves a span's mean by microseconds a GET, its median not.
      With the servers' NAMEs (the rounds' columns in order), each server's own as well
      ("toggled:NAME"): a hook on one server's thread alone (its part "thread").
  side_by_side.py report JW_ROUNDS BT_ROUNDS FLOOR_ROUNDS FLOOR_TOGGLES [CLIENTS [SERVER
                        [THREAD]]]
      bench/side_by_side.sh's table: jankwatch's server (a) over the other (c) in JW_ROUNDS,
      the machine's hooks toggled (FLOOR_*), their sum, bpftrace's server (b) over the other
      in BT_ROUNDS, and the ratios. FLOOR_ROUNDS' columns are a, b and c, nobody watching
      them: what a and b differ from c there is taken off the two tools' figures. Then the
      GETs a second each keeps, of c's. With THREAD "thread", the floor also toggled an
      empty program on a's own switch event, as jankwatch hooks a watched thread: the
      machine's hooks are then b's and c's alone, a's own hook a's toggled figure over
      theirs (a row of its own, part of jankwatch's server over the other), and the servers'
      own difference is taken from the off spans alone.
Each figure twice: by the wall clock, then ("cpu:") by the CPU time a GET took (the server's
thread's and the client's, both in the same round).
Prints one line per figure: "<name> <mean_us> <ci95_us> <median_us> <q1_us> <q3_us> <n>" (for
toggle, median and quartiles of the spans' differences).
"""
import bisect
import functools
import statistics
import sys


@functools.lru_cache(maxsize=None)
def rounds(path):
    """[(begin_ns, end_ns, [ns a GET per server], [CPU ns a GET per server: its thread's and
    the client's])] of a getmix output."""
    out = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) < 7 or w[0] != "round" or (len(w) - 4) % 3:
                continue
            v = [float(x) for x in w[4:]]
            n = len(v) // 3
            out.append((int(w[2]), int(w[3]), v[:n],
                        [v[n + i] + v[2 * n + i] for i in range(n)]))
    if not out:
        sys.exit(f"side_by_side.py: {path}: no rounds")
    return out


def figures(v):
    """(mean, 95% interval, median, lower quartile, upper quartile, n) of sample @v, in us."""
    v = sorted(x / 1e3 for x in v)
    n = len(v)
    ci = 1.96 * statistics.stdev(v) / n ** 0.5 if n > 1 else float("nan")
    return statistics.fmean(v), ci, statistics.median(v), v[n // 4], v[(3 * n) // 4], n


def summary(name, v):
    """The line of figures of sample @v (ns), in us."""
    mean, ci, med, q1, q3, n = figures(v)
    return f"{name} {mean:.3f} {ci:.3f} {med:.3f} {q1:.3f} {q3:.3f} {n}"


def pairs(path, names):
    ref = names[-1]
    names = names[:-1]
    if ref not in names:
        sys.exit(f"side_by_side.py: {ref} is not one of {' '.join(names)}")
    rs = rounds(path)
    if len(rs[0][2]) != len(names):
        sys.exit(f"side_by_side.py: {path}: {len(rs[0][2])} columns for {len(names)} names")
    r = names.index(ref)
    for k, what in ((2, ""), (3, "cpu:")):
        for i, name in enumerate(names):
            if i != r:
                print(summary(f"{what}{name}-{ref}", [x[k][i] - x[k][r] for x in rs]))
        for i, name in enumerate(names):
            print(summary(f"{what}{name}", [x[k][i] for x in rs]))


def spans(path):
    """[(state, begin_ns, end_ns)]: on from attached to detaching, off from detached to
    attaching."""
    out, on_from, off_from = [], None, None
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) != 3 or w[0] not in ("on", "off"):
                continue
            begin, end = int(w[1]), int(w[2])
            if w[0] == "on":
                if off_from is not None:
                    out.append(("off", off_from, begin))
                on_from, off_from = end, None
            else:
                if on_from is not None:
                    out.append(("on", on_from, begin))
                on_from, off_from = None, end
    return out


def toggled(rounds_path, toggles_path, k, center=statistics.fmean, col=None):
    """Each on span's ns a GET (k 2: wall, 3: CPU; its rounds' @center, their mean unless
    said) less that of the off spans around it: the servers' mean, or column @col's alone."""
    rs = rounds(rounds_path)
    begins = [x[0] for x in rs]
    means = []
    for state, begin, end in spans(toggles_path):
        inside = []
        for x in rs[bisect.bisect_left(begins, begin):]:
            if x[0] > end:
                break
            if x[1] <= end:
                inside.append(statistics.fmean(x[k]) if col is None else x[k][col])
        means.append((state, center(inside) if inside else None))
    diffs = []
    for i in range(1, len(means) - 1):
        state, m = means[i]
        before, after = means[i - 1][1], means[i + 1][1]
        if state == "on" and None not in (m, before, after):
            diffs.append(m - (before + after) / 2)
    if len(diffs) < 2:
        sys.exit(f"side_by_side.py: {toggles_path}: {len(diffs)} on spans with rounds on "
                 "both sides")
    return diffs


def toggle(rounds_path, toggles_path, names):
    if names and len(rounds(rounds_path)[0][2]) != len(names):
        sys.exit(f"side_by_side.py: {rounds_path}: not {len(names)} columns")
    for center, how in ((statistics.fmean, ""), (statistics.median, "median:")):
        for k, what in ((2, ""), (3, "cpu:")):
            print(summary(f"{how}{what}toggled", toggled(rounds_path, toggles_path, k, center)))
            for i, name in enumerate(names):
                print(summary(f"{how}{what}toggled:{name}",
                              toggled(rounds_path, toggles_path, k, center, i)))


def paired(rs, k, i=0, ref=1):
    """Rounds @rs' differences (k 2: wall, 3: CPU), column @i less column @ref."""
    return [x[k][i] - x[k][ref] for x in rs]


def off_rounds(rounds_path, toggles_path):
    """The rounds that lie within an off span: nothing attached."""
    offs = [(b, e) for state, b, e in spans(toggles_path) if state == "off"]
    return [x for x in rounds(rounds_path)
            if any(b <= x[0] and x[1] <= e for b, e in offs)]


def calibrated(path, k, calib, i):
    """(mean, 95% interval, median) of @path's first column over its second in the same
    rounds, less what column @i of rounds @calib (the floor's, nobody watching: a b c)
    differed from its last then: the servers' own difference."""
    m = figures(paired(rounds(path), k))
    c = figures(paired(calib, k, i, 2))
    return m[0] - c[0], (m[1] ** 2 + c[1] ** 2) ** 0.5, m[2] - c[2]


def hooks(floor_path, toggles_path, k, center, thread):
    """The machine's hooks toggled (figures()), and with @thread a's own hook over them: each on
    span's a less the mean of b and c, less the same of the off spans around it (figures(), or
    None)."""
    if not thread:
        return figures(toggled(floor_path, toggles_path, k, center)), None
    b, c, a = (toggled(floor_path, toggles_path, k, center, i) for i in (1, 2, 0))
    machine = [(x + y) / 2 for x, y in zip(b, c)]
    return figures(machine), figures([x - y for x, y in zip(a, machine)])


def report(jw_path, bt_path, floor_path, toggles_path, clients, server, thread):
    what = "redis GET" if server == "redis" else f"{server} GET of a 6-byte file"
    print(f"{what}, {clients} client{'s' if clients != '1' else ''}: us a GET, the mean of "
          "the rounds' differences +- its 95%")
    print("interval (median)            by the wall clock           by the CPU (server thread")
    print("                                                         + client thread)")
    rows, shares = {}, []
    calib = off_rounds(floor_path, toggles_path) if thread else rounds(floor_path)
    for k in (2, 3):
        jw = calibrated(jw_path, k, calib, 0)
        fl, th = hooks(floor_path, toggles_path, k, statistics.fmean, thread)
        fm = hooks(floor_path, toggles_path, k, statistics.median, thread)[0]
        bt = calibrated(bt_path, k, calib, 1)
        if th:
            rows.setdefault("th", []).append(f"{th[0]:6.2f} +- {th[1]:4.2f} ({th[2]:5.2f})")
        both = (jw[0] + fl[0], (jw[1] ** 2 + fl[1] ** 2) ** 0.5)
        bothm = (jw[0] + fm[0], (jw[1] ** 2 + fm[1] ** 2) ** 0.5)
        rows.setdefault("jw", []).append(f"{jw[0]:6.2f} +- {jw[1]:4.2f} ({jw[2]:5.2f})")
        rows.setdefault("fl", []).append(f"{fl[0]:6.2f} +- {fl[1]:4.2f} ({fl[2]:5.2f})")
        rows.setdefault("both", []).append(f"{both[0]:6.2f} +- {both[1]:4.2f}        ")
        rows.setdefault("fm", []).append(f"{fm[0]:6.2f} +- {fm[1]:4.2f} ({fm[2]:5.2f})")
        rows.setdefault("bothm", []).append(f"{bothm[0]:6.2f} +- {bothm[1]:4.2f}        ")
        rows.setdefault("bt", []).append(f"{bt[0]:6.2f} +- {bt[1]:4.2f} ({bt[2]:5.2f})")
        # The ratio's range: each side at the far ends of its interval.
        ratio = f"{both[0] / bt[0]:.2f} (at most {(both[0] + both[1]) / (bt[0] - bt[1]):.2f}; " \
            f"{bothm[0] / bt[0]:.2f} by the medians), its server's part {jw[0] / bt[0]:.2f}" \
            if bt[0] > bt[1] else "n/a (bpftrace added nothing)"
        rows.setdefault("ratio", []).append(ratio)
        if k == 2:
            # Requests a second kept: the bare server's time a GET over the watched one's.
            base = statistics.fmean(x[2][2] for x in rounds(floor_path)) / 1e3
            shares = [base / (base + both[0]), base / (base + jw[0]), base / (base + bt[0]),
                      base, base / (base + bothm[0])]
    print(f"  jankwatch's server over the other   {rows['jw'][0]}    {rows['jw'][1]}")
    if thread:
        print(f"    its thread's switch event, empty  {rows['th'][0]}    {rows['th'][1]}")
    print(f"  + the machine's hooks (empty)       {rows['fl'][0]}    {rows['fl'][1]}")
    print(f"  = jankwatch's default, added        {rows['both'][0]}    {rows['both'][1]}")
    print(f"  the hooks by each span's median     {rows['fm'][0]}    {rows['fm'][1]}")
    print(f"  = added, by the spans' medians      {rows['bothm'][0]}    {rows['bothm'][1]}")
    print(f"  bpftrace's server over the other    {rows['bt'][0]}    {rows['bt'][1]}")
    print(f"  jankwatch / bpftrace, by the wall: {rows['ratio'][0]}")
    print(f"  jankwatch / bpftrace, by the CPU:  {rows['ratio'][1]}")
    print(f"  GETs a second kept, of a server nobody watches ({shares[3]:.2f} us a GET, the mean "
          "of c's in the third measure):")
    print(f"    jankwatch's default {shares[0]:.3f} ({shares[4]:.3f} by the spans' medians; its "
          f"server's part alone {shares[1]:.3f}), bpftrace's pair {shares[2]:.3f}")


def main(argv):
    if len(argv) >= 4 and argv[1] == "pairs":
        pairs(argv[2], argv[3:])
    elif len(argv) >= 4 and argv[1] == "toggle":
        toggle(argv[2], argv[3], argv[4:])
    elif len(argv) in (6, 7, 8, 9) and argv[1] == "report" and argv[8:] in ([], ["thread"]):
        report(*argv[2:6], argv[6] if len(argv) >= 7 else "1",
               argv[7] if len(argv) >= 8 else "redis", len(argv) == 9)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
