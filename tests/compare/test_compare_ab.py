#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""compare and plot of a `lockbench ab` file keep its pairing (issue 40), on a
fixed file (data/ab.json): compare shows the paired ratios byte for byte
(golden/ab-paired.txt) and never an unpaired test; two ab files get the
sequential-method warning; --side-a/--side-b on an ab file is refused; plot
draws the paired ratio per cell with its interval on a log axis (the data
block of NAME.gp), titled with the command once.  TAP output.
usage: test_compare_ab.py LOCKBENCH DATA_DIR GOLDEN_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import done, ok  # noqa: E402 (tests/lbtap.py, after the sys.path line)

LB, DATA, GOLDEN = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]


def run(args, cwd):
    return subprocess.run([LB] + args, capture_output=True, text=True, timeout=60, cwd=cwd)


with tempfile.TemporaryDirectory() as tmp:
    shutil.copy(os.path.join(DATA, "ab.json"), os.path.join(tmp, "ab.json"))
    shutil.copy(os.path.join(DATA, "ab.json"), os.path.join(tmp, "ab2.json"))
    r = run(["compare", "ab.json"], tmp)
    want = open(os.path.join(GOLDEN, "ab-paired.txt")).read()
    ok(r.returncode == 0 and r.stdout == want,
       "compare ab.json: the paired ratios, byte for byte (golden/ab-paired.txt)")
    if r.stdout != want:
        for line in r.stdout.splitlines():
            print(f"# got: {line}")
    ok("Welch" not in r.stdout and "U p" not in r.stdout and "MEAN" not in r.stdout,
       "no unpaired test and no sides' means in it")

    r = run(["compare", "ab.json", "--json", "out.json", "--csv", "out.csv"], tmp)
    doc = json.load(open(os.path.join(tmp, "out.json"))) if r.returncode == 0 else {}
    cells = doc.get("cells", [])
    csv = open(os.path.join(tmp, "out.csv")).read().splitlines() if r.returncode == 0 else []
    ok(doc.get("schema_name") == "lockbench-compare-ab" and doc.get("schema_version") == 1 and
       doc.get("config", {}).get("command") == "lockbench ab -t 1,2 ticket ticket-5pct.so" and
       [(c["threads"], c["figure"], c["ratio"], c["ratio_lo"], c["verdict"]) for c in cells] ==
       [(1, "own cost", 1.051, 1.04, "worse"), (1, "cpu_ns_per_op", 1.08, 1.05, ""),
        (2, "ns_per_op", 0.97, 0.88, "none")] and len(csv) == 4 and
       csv[1] == "1,own cost,30,1.051,1.04,1.062,0.975,1.5,worse",
       f"--json and --csv: the same rows, schema lockbench-compare-ab 1 ({cells}, {csv[:2]})")

    r = run(["compare", "ab.json", "ab2.json"], tmp)
    ok(r.returncode == 0 and "the sequential method again" in r.stderr and
       "WARNING: ab files compared with each other" in r.stdout,
       "two ab files: the sequential-method warning on stderr and atop the table")

    r = run(["compare", "--side-a", "side=A", "--side-b", "side=B", "ab.json"], tmp)
    ok(r.returncode == 2 and r.stderr.count("\n") == 1 and "paired" in r.stderr and
       "--side-a" in r.stderr, f"--side-a/--side-b on an ab file: one line, exit 2 ({r.stderr})")

    if shutil.which("gnuplot"):
        r = run(["plot", "-o", "pics", "ab.json"], tmp)
        gp = open(os.path.join(tmp, "pics", "ab.gp")).read() if r.returncode == 0 else ""
        block = gp.split("$ab_ratio << EOD\n", 1)[-1].split("EOD\n", 1)[0] if gp else ""
        ok(r.returncode == 0 and block == "1.00 1 1.051 1.04 1.062 own_cost\n"
           "1.15 1 1.08 1.05 1.11 whole_loop\n2.00 2 0.97 0.88 1.07 whole_loop\n",
           f"plot: the paired ratio and interval per cell in the data block ({block!r})")
        ok("set logscale y" in gp and "1 with lines" in gp and "yerrorbars" in gp and
           sorted(os.listdir(os.path.join(tmp, "pics"))) ==
           ["ab-paired-ratio.png", "ab-paired-ratio.svg", "ab.gp"],
           "plot: log axis, a line at 1, error bars: the interval; one picture (no means +- sd)")
        ok("'lockbench ab -t 1,2 ticket ticket-5pct.so'" in gp and "lockbench lockbench" not in gp,
           "plot: titled with the command, the program named once")
        r = run(["plot", "--overlay", "-o", "ov", "ab.json"], tmp)
        ok(r.returncode == 0 and os.path.exists(os.path.join(tmp, "ov", "ab-paired-ratio.svg")),
           f"plot --overlay of one ab file: the paired picture ({r.stderr[-200:]})")
    else:
        for _ in range(4):
            ok(True, "# SKIP gnuplot is not installed")
done()
