#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_widths.py LOCKBENCH - the default text output of each command fits
100 columns, and --wide brings back the wide columns.

Each command runs briefly (-q: no progress lines); every line of its
standard output must be at most 100 columns (characters, as a terminal
counts them: "±" is one), except the lines that imitate another tool's
line format, listed in doc/lockbench.md ("Output widths") and in EXEMPT
below, each with its tool.  Then the same command with --wide must show the
columns the default table leaves out.  TAP output."""
import os
import re
import sys
import tempfile

from lbtap import diag, done, ok, run_cmd  # tests/lbtap.py

LB = sys.argv[1]
WIDTH = 100

# Lines allowed past WIDTH because an external tool's own line is that
# wide (doc/lockbench.md, "Output widths"): rt's perf stat block, whose
# first line names the whole command and whose counter lines are perf 6.1's
# layout (the name padded to 32 columns, the rate, the noise column).
PERF_STAT = [r"^ Performance counter stats for '",
             r"^ +[\d.]+ msec task-clock +# ",
             r"^ +\d+ +(context-switches|cpu-migrations|page-faults) +# "]
EXEMPT = {"rt": PERF_STAT, "rt --compare": PERF_STAT}


def too_wide(name, text):
    """The lines of text over WIDTH that no EXEMPT pattern of name allows."""
    pats = [re.compile(p) for p in EXEMPT.get(name, [])]
    return [ln for ln in text.splitlines()
            if len(ln) > WIDTH and not any(p.search(ln) for p in pats)]


def check(name, argv, wide_words, timeout=120):
    """argv's default output fits WIDTH; with --wide it has wide_words."""
    rc, so, se = run_cmd([LB] + argv, timeout)
    lines = so.splitlines()
    wide = too_wide(name, so)
    longest = max((len(ln) for ln in lines), default=0)
    if not ok(rc == 0 and lines and not wide,
              f"{name}: {len(lines)} lines, the longest {longest} columns (<= {WIDTH})"):
        diag(f"rc {rc}; stderr {se[-300:]!r}")
        for ln in wide[:5]:
            diag(f"{len(ln)}: {ln}")
    if wide_words is None:
        return so
    missing_default = [w for w in wide_words if re.search(w, so)]
    rc2, so2, se2 = run_cmd([LB] + argv + ["--wide"], timeout)
    missing = [w for w in wide_words if not re.search(w, so2)]
    ok(rc2 == 0 and not missing and not missing_default,
       f"{name} --wide: the wide columns {wide_words} (missing {missing}), which the "
       f"default leaves out (shown there: {missing_default}) {se2[-200:]}")
    return so


with tempfile.TemporaryDirectory() as tmp:
    pre, post = os.path.join(tmp, "pre.json"), os.path.join(tmp, "post.json")
    so = check("bench", ["bench", "-q", "-l", "tas,none", "-t", "1,2", "-d", "20ms", "-r", "2",
                         "--json", pre],
               [r"(?m)^lock .* cyc/op .* ovh_ns .* cov .* ovlap .* p99\.9 +lat_max$"])
    ok(re.search(r"(?m)^# units: ops/s higher is better; ns/op", so),
       "bench: a '# units:' line names the units and the better direction")
    check("bench --read-pct", ["bench", "-q", "-l", "qrwlock", "-t", "2", "-d", "20ms",
                               "--read-pct", "50"],
          [r"(?m)^lock .* cov +min/max +rd_p50 +rd_p99 +rd_max +wr_p50 .* wr_max$"])
    check("bench --explain", ["bench", "-q", "-l", "qspinlock", "-t", "2", "-d", "20ms",
                              "--explain"], None)
    run_cmd([LB, "bench", "-q", "-l", "tas,none", "-t", "1,2", "-d", "20ms", "-r", "3",
             "--json", post])
    so = check("compare", ["compare", pre, post],
               [r"(?m)^LABEL +\| COUNT \| MIN +\| MAX +\| MEAN .*\| DIRECTION +\| VERDICT$"])
    ok(re.search(r"(?m)^  \(B\) vs \(A\): (no )?difference", so) and
       re.search(r"(?m)^Units: ops_per_sec in ops/s \(\+ is good\)", so),
       "compare: each verdict on its own line, a Units: line with the better direction")
    so = check("ab", ["ab", "-q", "-t", "1,2", "--blocks", "9", "--slice", "10ms", "tas",
                      "ticket"],
               [r"(?m)^LABEL +\| COUNT \| +MIN \| +MAX \| +MEAN \| +MEDIAN \| +STDDEV \| "
                r"DIRECTION$"])
    ok(re.search(r"(?m)^# value: .*lower is better", so),
       "ab: the value line names the unit and the better direction")
    check("lockbench (default comparison)", [], None, timeout=180)
    # slab: Tables A and B have no wide columns (no --wide); its notes wrap.
    check("slab", ["slab", "-q", "-r", "1"], None)
    # aim7: re-aim's table is narrower than 100; the notes above it wrap.
    check("aim7", ["aim7", "-q", "-u", "2", "-t", "300ms"], None)
    # rt: the notes wrap; --compare's table leaves cpu-migr to --wide and
    # says its units; hackbench's, cyclictest's and perf stat's lines keep
    # their formats.  A small load (2 groups of 5, 50 loops) keeps it short.
    load = ["-g", "2", "-f", "5", "-l", "50"]
    so = check("rt", ["rt", "-q", "-r", "1"] + load, [r"(?m)^# raw sections: .{120,}$"])
    ok(re.search(r"(?m)^T: 0 \( *\d+\) P:", so) and re.search(r"(?m)^Time: \d+\.\d{3}$", so),
       "rt: cyclictest's T: line and hackbench's Time: line as the tools print them")
    so = check("rt --compare", ["rt", "-q", "-r", "2", "--compare", "qspinlock,rtmutex"] + load,
               [r"(?m)^list_lock +hackbench elapsed +ctx-switches +cpu-migr +RT wake"])
    ok(re.search(r"(?m)^# units: hackbench elapsed s .*lower is better", so) and
       re.search(r"(?m)^#   RT wake-up and RT alloc latency .* us, lower is better$", so),
       "rt --compare: a '# units:' line names the units and the better direction")

done()
