# SPDX-License-Identifier: MIT
"""`lockbench slab` end to end, as TAP.

    test_slab.py LOCKBENCH SCENARIO

cli        option errors: one line on stderr naming the option, exit 2, no file
format     both tables in the layout of the kernel-list threads (regexes that
           the threads' own lines also match), JSON through the shared schema,
           compare on two slab files
interrupt  SIGINT mid-run: exit 130, the finished repeats printed and written
"""
import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import diag, done, ok, unwrap  # noqa: E402 (tests/lbtap.py, after the sys.path line)

EXE = sys.argv[1]
SCENARIO = sys.argv[2]
SMALL = ["-r", "2", "-n", "2000", "--ops", "2000", "--bulk-objects", "2000", "-q"]

# The layouts, as regexes; the threads' own lines (below) must match them too.
NUM = r"\d{1,3}(?:,\d{3})*"
SECTION_ROW = re.compile(r"^(RSEQ|SIGMASK|LOCK|CAS|NONE) +(" + NUM + r"|skipped: .+)$")
LIST_SECTION_ROW = re.compile(r"^(PREEMPT|IRQ) +" + NUM + r"( +" + NUM + r")*$")
AF_HEADER = re.compile(r"^ +\S+ OPT +\S+ NO-OPT$")
AF_ROW = re.compile(r"^(ALLOC/FREE|SD|ALLOC/FREE BH) +" + NUM + r" +" + NUM + r"( +" + NUM +
                    r" +" + NUM + r")?$")
BULK_HEADER = "bulk-  Fallback                 - Bulk-API"
BULK_ROW = re.compile(r"^[ \d]{3} - +\d+ cycles\(tsc\) +\d+\.\d{3} ns - +\d+ cycles\(tsc\) +"
                      r"\d+\.\d{3} ns - improved -?\d+\.\d%$")
FASTPATH = re.compile(r"^normal fastpath is: \d+ cycles\(tsc\) \d+\.\d{3} ns$")
PROBE = re.compile(r"^probe: \d+ batches kept, ")
# The host-speed gauge's line (bench/slab/slab_batch.h), one after each probe line.
GAUGE_NUMS = (r"reference add chain p10 (\d+\.\d\d) / median (\d+\.\d\d) / p90 (\d+\.\d\d) ns "
              r"per add over (\d+) batches")
GAUGE_STEADY = re.compile(r"^host speed steady \(p90/p10 (\d+\.\d\d)\): " + GAUGE_NUMS + "$")
GAUGE_MOVED = re.compile(r"^host speed: " + GAUGE_NUMS + r", \d+ % of them within \d+\.\d\dx of "
                         r"p10: the CPU ran at speeds (\d+\.\d\d)x apart \(p90/p10\) during the "
                         r"table; its figures carry that spread$")
GAUGE_FIELDS = ("batches", "p10_ns", "median_ns", "p90_ns", "p90_p10", "fast_share", "steady",
                "cost_ns")
THREAD_LINES = [
    (LIST_SECTION_ROW, "PREEMPT 5,123,896,822  5,215,055,226   5,077,611,590"),
    (AF_ROW, "ALLOC/FREE    8,519,295,176   9,051,200,652    10,627,431,395  11,198,189,843"),
    (AF_ROW, "SD                5,309,768      29,253,976       129,102,317      40,681,909"),
    (AF_ROW, "ALLOC/FREE BH 9,996,704,330   8,927,026,031    11,680,149,900  11,139,356,465"),
    (BULK_ROW, "  1 -  63 cycles(tsc) 15.866 ns - 46 cycles(tsc) 11.653 ns - improved 27.0%"),
    (BULK_ROW, " 30 -  80 cycles(tsc) 20.153 ns - 28 cycles(tsc)  7.054 ns - improved 65.0%"),
]


def run(args, timeout=60):
    r = subprocess.run([EXE, "slab"] + args, capture_output=True, text=True, timeout=timeout)
    r.stdout = unwrap(r.stdout)  # the notes are wrapped at 100 columns: joined again
    return r


def scratch():
    """A directory for this run's files, removed when the test ends."""
    d = tempfile.mkdtemp(prefix="test-slab.")
    atexit.register(shutil.rmtree, d, ignore_errors=True)
    return d


def scenario_cli():
    tmp = scratch()
    out = os.path.join(tmp, "never.json")
    cases = [
        (["--table", "both"], "--table"),
        (["--repeat", "0"], "--repeat"),
        (["--repeat", "51"], "--repeat"),
        (["-n", "10"], "--iterations"),
        (["--ops", "x"], "--ops"),
        (["--bh-batch", "0"], "--bh-batch"),
        (["--opt", "irq"], "--opt"),
        (["--lock", "busted"], "--lock"),
        (["--lock", "nosuch"], "--lock"),
        (["--bulk", "0"], "--bulk"),
        (["--bulk", "1,2000"], "--bulk"),
        (["--bulk-protect", "rseq"], "--bulk-protect"),
        (["--cpu-partial", "-1"], "--cpu-partial"),
        (["--min-partial", "1e3"], "--min-partial"),
        (["--size", "4"], "--size"),
        (["--cpu", "100000"], "--cpu"),
        (["--frobnicate"], "--frobnicate"),
        (["extra"], "extra"),
        (["--json", tmp], "--json"),
    ]
    for args, name in cases:
        r = run(args + ["--json", out] if args[0] != "--json" else args)
        lines = r.stderr.strip().splitlines()
        ok(r.returncode == 2 and len(lines) == 1 and name in lines[0] and not r.stdout,
           "%s: exit 2 (got %d), one line naming %s: %s" % (" ".join(args), r.returncode, name,
                                                            lines[:2]))
    ok(not os.path.exists(out), "no result file left by a refused command")
    r = run(["--help"])
    ok(r.returncode == 0 and "--cpu-partial" in r.stdout and "--table" in r.stdout,
       "--help: exit 0, the options")


def scenario_format():
    for rx, line in THREAD_LINES:
        ok(rx.match(line), "the thread's own line matches the layout: %r" % line)
    tmp = scratch()
    files = []
    for i in range(2):
        path = os.path.join(tmp, "slab%d.json" % i)
        t0 = time.time()
        r = run(SMALL + ["--json", path])
        ok(r.returncode == 0, "run %d: exit 0 (%.1f s; stderr %r)" % (i, time.time() - t0,
                                                                     r.stderr[-300:]))
        files.append(path)
    lines = r.stdout.splitlines()
    sec = [ln for ln in lines if SECTION_ROW.match(ln)]
    ok(len(sec) == 5, "Table A: five protection rows in the layout (%d)" % len(sec))
    i = lines.index(sec[0]) if sec else 0
    ok(i > 0 and re.match(r"^ {8}\S", lines[i - 1]), "Table A: the CPU model above the rows, "
       "indented like the thread's column header: %r" % (lines[i - 1] if i else None))
    hdr = [k for k, ln in enumerate(lines) if AF_HEADER.match(ln)]
    ok(len(hdr) == 1, "alloc+free: one OPT / NO-OPT header")
    if hdr:
        k = hdr[0]
        rows = lines[k + 1:k + 5]
        ok([ln.split()[0] + (" BH" if "BH" in ln else "") for ln in rows] ==
           ["ALLOC/FREE", "SD", "ALLOC/FREE BH", "SD"] and all(AF_ROW.match(ln) for ln in rows),
           "alloc+free: ALLOC/FREE, SD, ALLOC/FREE BH, SD rows in the layout: %r" % rows)
        ok(lines[k - 1].strip() and not AF_HEADER.match(lines[k - 1]),
           "alloc+free: the CPU model line above the header: %r" % lines[k - 1])
    if "rseq: registered" in lines[0]:
        ok(any(re.match(r"^rseq per-CPU update [\d.]+ ns = [\d.]+x the plain", ln) for ln in lines),
           "the rseq / plain per-thread update ratio is printed")
    else:
        ok(True, "# SKIP rseq not registered here")
    ok(any(ln.startswith("sigmask section") and "rt_sigprocmask" in ln for ln in lines),
       "the signal-mask cost is put beside its system calls")
    ok(BULK_HEADER in lines, "Table B: the header byte for byte")
    brows = [ln for ln in lines if BULK_ROW.match(ln)]
    ok([int(ln[:3]) for ln in brows] == [1, 2, 3, 4, 8, 16, 30, 32, 34, 48, 64, 128, 158, 250],
       "Table B: one row per default bulk size, in the layout (%d rows)" % len(brows))
    ok(any(FASTPATH.match(ln) for ln in lines), "Table B: the normal fastpath line")
    probes = [k for k, ln in enumerate(lines) if PROBE.match(ln)]
    gauges = [lines[k + 1] if k + 1 < len(lines) else "" for k in probes]
    ok(len(probes) == 2 and all(GAUGE_STEADY.match(g) or GAUGE_MOVED.match(g) for g in gauges),
       "host speed: one gauge line after each table's probe line: %r" % gauges)
    for g in gauges:
        m = GAUGE_STEADY.match(g) or GAUGE_MOVED.match(g)
        if not m:
            continue
        if m.re is GAUGE_STEADY:
            ratio, p10, med, p90, nb = m.groups()
        else:
            p10, med, p90, nb, ratio = m.groups()
        p10, med, p90, ratio = float(p10), float(med), float(p90), float(ratio)
        # Every figure is printed to 2 decimals (+-0.005): the ratio of the
        # unrounded p90 and p10 lies within what their printed values allow,
        # and so does its own printed value.  A ratio just over 1.10 prints
        # as 1.10 on a "moved" line: steady prints <= 1.10, moved >= 1.10.
        half = 0.005
        lo = (p90 - half) / (p10 + half) - half
        hi = (p90 + half) / (p10 - half) + half if p10 > half else float("inf")
        steady = m.re is GAUGE_STEADY
        ok(0 < p10 <= med <= p90 and int(nb) > 0 and lo <= ratio <= hi and
           (ratio <= 1.10 if steady else ratio >= 1.10),
           "host speed line: 0 < p10 <= median <= p90, p90/p10 %.2f within [%.3f, %.3f] of the "
           "printed p10/p90, %s" % (ratio, lo, hi, "steady <= 1.10" if steady else "moved >= 1.10"))
    with open(files[0]) as f:
        doc = json.load(f)
    ok(doc.get("schema") == "lockbench-slab-1" and doc.get("interrupted") is False,
       "JSON: schema lockbench-slab-1, not interrupted")
    kinds = {(c["params"]["table"], c["params"]["api"]) for c in doc["results"]}
    ok({("section", ""), ("allocfree", ""), ("bulk", "fallback"), ("bulk", "bulk"),
        ("bulk", "fastpath")} <= kinds, "JSON: section, allocfree and bulk cells")
    ok(all(len(c["runs"]) == 2 for c in doc["results"]), "JSON: two runs per cell (--repeat 2)")
    hs = doc["config"].get("host_speed", {})
    tables = [hs.get(t) or {} for t in ("protect", "bulk")]
    ok(hs.get("reference_adds", 0) > 0 and hs.get("steady_limit") == 1.10 and
       all(set(GAUGE_FIELDS) <= set(t) for t in tables),
       "JSON: config.host_speed with both tables' gauge fields: %r" % hs)
    for name, t in zip(("protect", "bulk"), tables):
        try:
            sane = (t["batches"] > 0 and 0 < t["p10_ns"] <= t["median_ns"] <= t["p90_ns"] and
                    abs(t["p90_p10"] - t["p90_ns"] / t["p10_ns"]) < 1e-6 * t["p90_p10"] and
                    0 < t["fast_share"] <= 1 and t["steady"] == (t["p90_p10"] <= 1.10) and
                    t["cost_ns"] > 0)
        except (KeyError, TypeError):
            sane = False
        ok(sane, "JSON: the %s gauge is sane (0 < p10 <= median <= p90, ratio, share, cost): %r"
           % (name, t))
    r = subprocess.run([EXE, "compare", "-m", "total_ns", files[0], files[1]],
                       capture_output=True, text=True, timeout=60)
    ok(r.returncode == 0 and "allocfree" in r.stdout,
       "compare reads two slab files (exit %d)" % r.returncode)
    r = subprocess.run([EXE, "compare", files[0], files[1]], capture_output=True, text=True,
                       timeout=60)
    ok(r.returncode == 0 and "fallback" in r.stdout,
       "compare, headline metric: the bulk cells' cycles per object")
    if r.returncode:
        diag(r.stderr[-500:])
    env = dict(os.environ, GLIBC_TUNABLES="glibc.pthread.rseq=0")
    r = subprocess.run([EXE, "slab", "--table", "protect"] + SMALL, capture_output=True,
                       text=True, timeout=60, env=env)
    rows = [ln for ln in r.stdout.splitlines() if SECTION_ROW.match(ln)]
    ok(r.returncode == 0 and rows and rows[0].startswith("RSEQ    skipped: glibc did not "
                                                         "register rseq") and
       any(AF_HEADER.match(ln) and "RSEQ" not in ln for ln in r.stdout.splitlines()),
       "without glibc's rseq registration: the RSEQ row says why it is skipped, OPT runs on "
       "another protection: %r" % rows[:1])
    r = run(["--table", "bulk", "--bulk", "1,30", "-r", "1", "--bulk-objects", "2000", "-q"])
    ok(r.returncode == 0 and "A. " not in r.stdout and
       len([ln for ln in r.stdout.splitlines() if BULK_ROW.match(ln)]) == 2,
       "--table bulk --bulk 1,30: Table B alone, two rows")


def scenario_interrupt():
    tmp = scratch()
    path = os.path.join(tmp, "cut.json")
    work = ["-n", "20000", "--ops", "5000", "-q"]
    # The signal must land after a few repeats and well before all 50: time
    # one repeat of this build first (a sanitizer build may skip modes and
    # run many times faster or slower than a release build).
    full = os.path.join(tmp, "full.json")
    t0 = time.monotonic()
    subprocess.run([EXE, "slab", "-r", "1"] + work + ["--json", full], capture_output=True,
                   timeout=120)
    one = time.monotonic() - t0
    try:
        with open(full) as f:
            ncells = len(json.load(f).get("results", []))
    except (OSError, ValueError):
        ncells = 0
    p = subprocess.Popen([EXE, "slab", "-r", "50"] + work + ["--json", path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(max(0.3, 4 * one))
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    ok(p.returncode == 130, "SIGINT: exit 130 (got %d)" % p.returncode)
    ok("interrupted by SIGINT" in err, "SIGINT: said on stderr")
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        doc = {}
        diag("no JSON: %s" % e)
    runs = [len(c["runs"]) for c in doc.get("results", [])]
    # Table A runs all its repeats before Table B starts, so a cut lands
    # with some cells complete and others short or not begun (absent): what
    # was finished is kept, what was not is not written.
    ok(doc.get("interrupted") is True and runs and max(runs) <= 50
       and (len(runs) < ncells or min(runs) < 50),
       "SIGINT: the JSON holds the finished repeats, interrupted true (%d of %d cells, runs %s)"
       % (len(runs), ncells, sorted(set(runs))))
    ok("A. " in out, "SIGINT: the finished repeats are printed")


{"cli": scenario_cli, "format": scenario_format, "interrupt": scenario_interrupt}[SCENARIO]()
done()
