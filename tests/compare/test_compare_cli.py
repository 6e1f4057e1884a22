#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""lockbench compare end to end: the table against a golden file (the kernel
list's LABEL | COUNT | ... | DIRECTION layout plus the verdict column), the
ministat-like plain-number mode, the JSON and CSV outputs, and the errors of
the schema reader and the options (one stderr line, exit 2, no output file).
TAP output.  usage: test_compare_cli.py LOCKBENCH DATADIR GOLDENDIR"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import done, ok  # noqa: E402 (tests/lbtap.py, after the sys.path line)

LB, DATA, GOLDEN = (os.path.abspath(a) for a in sys.argv[1:4])


def run(args, cwd):
    return subprocess.run([LB, "compare"] + args, capture_output=True, text=True, timeout=30,
                          cwd=cwd)


def golden(name, args, cwd):
    r = run(args, cwd)
    with open(os.path.join(GOLDEN, name)) as f:
        want = f.read()
    if not ok(r.returncode == 0 and r.stdout == want, f"table matches golden/{name}"):
        for a, b in zip(want.splitlines(), r.stdout.splitlines()):
            if a != b:
                print(f"# want: {a}\n# got:  {b}")
                break
        print(f"# rc {r.returncode} stderr {r.stderr.strip()}")


def bad(args, word, cwd, desc):
    r = run(args, cwd)
    lines = r.stderr.strip().splitlines()
    good = r.returncode == 2 and len(lines) == 1 and word in lines[0] and r.stdout == ""
    if not ok(good, f"{desc}: exit 2, one line naming '{word}'"):
        print(f"# rc {r.returncode} stderr {r.stderr!r} stdout {r.stdout[:200]!r}")


# The seed table of issue 11 (hackbench on v6.1.30 vs a patch), verbatim.
SEED = [
    "LABEL                           | COUNT | MIN        | MAX        | MEAN       | MEDIAN     | STDDEV    | DIRECTION",
    "--------------------------------+-------+------------+------------+------------+------------+-----------+----------------",
    "hackbench_thread_pipes_234      |       |            |            |            |            |           |",
    "  (A) v6.1.30                   | 7     | 2.146      | 2.677      | 2.410      | 2.418      | 0.18143   |",
    "  (B)                           | 7     | 2.016      | 2.514      | 2.268      | 2.241      | 0.17474   |",
    "                                |       | -6.06%     | -6.09%     | -5.88%     | -7.32%     | -3.69%    | - is good",
]


def bars(line):
    return [i for i, ch in enumerate(line) if ch == "|"]


def seed_layout(cwd):
    """--wide: our table has the seed's columns exactly, plus VERDICT after DIRECTION."""
    out = run(["--wide", "--column", "2", "--better", "lower", "--label", "v6.1.30,x", "times-a.txt",
               "times-b.txt"], cwd).stdout.splitlines()
    ok(out[0].startswith(SEED[0] + " ") and out[1].startswith(SEED[1] + "+"),
       "header and rule are the seed's, then the verdict column")
    ok(bars(out[2]) == bars(SEED[2]) and bars(out[3]) == bars(SEED[3]) and
       bars(out[4]) == bars(SEED[4]), "label and (A)/(B) rows end where the seed's do")
    ok(out[3].startswith("  (A) v6.1.30                   | 7     | 2.146      | 2.677      |"),
       "(A) row: label, count, min and max formatted as in the seed")
    ok(bars(out[5])[:7] == bars(SEED[5]) and
       out[5][bars(SEED[5])[-1]:].startswith("| - is good") and
       out[5].startswith("                                |       | -6.06%     | -6.09%     |"),
       "delta row: percentages and '- is good' where the seed has them")


with tempfile.TemporaryDirectory() as tmp:
    for f in os.listdir(DATA):
        shutil.copy(os.path.join(DATA, f), tmp)
    seed_layout(tmp)
    # --wide: the kernel list's table as it always printed (the goldens of
    # before the default table fitted 100 columns, unchanged).
    golden("pre-post.txt", ["--wide", "pre.json", "post.json"], tmp)
    golden("plain.txt", ["--wide", "--column", "2", "--better", "lower", "--label",
                         "v6.1.30,patched", "times-a.txt", "times-b.txt"], tmp)
    golden("three-metrics.txt", ["--wide", "-m", "ops_per_sec,lat_p99_ns", "-c", "99",
                                 "pre.json", "post.json", "pre.json"], tmp)
    # The default table: MEAN, MEDIAN, STDDEV, the verdict on its own line,
    # every line within 100 columns.
    golden("pre-post-narrow.txt", ["pre.json", "post.json"], tmp)
    golden("plain-narrow.txt", ["--column", "2", "--better", "lower", "--label", "v6.1.30,patched",
                                "times-a.txt", "times-b.txt"], tmp)
    golden("three-metrics-narrow.txt", ["-m", "ops_per_sec,lat_p99_ns", "-c", "99", "pre.json",
                                        "post.json", "pre.json"], tmp)

    # JSON and CSV outputs.
    r = run(["pre.json", "post.json", "--json", "cmp.json", "--csv", "cmp.csv"], tmp)
    ok(r.returncode == 0, "compare with --json and --csv exits 0")
    doc = json.load(open(os.path.join(tmp, "cmp.json")))
    comps = doc["comparisons"]
    ok(doc["schema"] == "lockbench-compare-1" and doc["input_schema"] == "lockbench-bench-1",
       "JSON names its own and its input's schema")
    ok(len(comps) == 3 and len(doc["unmatched"]) == 2, "JSON: 3 comparisons, 2 unmatched cells")
    tas2 = [c for c in comps if c["cell"] == "tas threads=2"][0]["sides"][1]
    ok(tas2["welch"]["difference"] and tas2["welch"]["p"] < 0.001 and
       9 < tas2["welch"]["diff_pct"] < 13, "JSON: the 10 % shift is a difference")
    tas1 = [c for c in comps if c["cell"] == "tas threads=1"][0]["sides"][1]
    ok(not tas1["welch"]["difference"], "JSON: the unchanged cell is no difference")
    tick = [c for c in comps if c["cell"] == "ticket threads=2"][0]["sides"][1]
    ok(tick["few_runs"] and "WARNING" in tick["verdict"], "JSON: 3 runs a side carries a warning")
    rows = list(csv.DictReader(open(os.path.join(tmp, "cmp.csv"))))
    ok(len(rows) == 6 and rows[3]["difference"] == "1" and rows[3]["side"] == "B",
       "CSV: one row per side and comparison")

    # Schema reader errors.
    base = json.load(open(os.path.join(tmp, "pre.json")))

    def variant(name, mutate):
        d = json.loads(json.dumps(base))
        mutate(d)
        with open(os.path.join(tmp, name), "w") as f:
            json.dump(d, f)
        return name

    unknown = variant("unknown.json", lambda d: d.update(schema="lockbench-nosuch-1",
                                                         schema_name="lockbench-nosuch"))
    newer = variant("newer.json", lambda d: d.update(schema="lockbench-bench-99",
                                                     schema_version=99))
    noschema = variant("noschema.json", lambda d: [d.pop("schema"), d.pop("schema_name")])
    noresults = variant("noresults.json", lambda d: d.pop("results"))
    noparams = variant("noparams.json", lambda d: d["results"][0].pop("params"))
    badrun = variant("badrun.json",
                     lambda d: d["results"][0]["runs"][0].update(ops_per_sec="fast"))
    cut = variant("cut.json", lambda d: d.update(interrupted=True))
    r = run(["pre.json", cut], tmp)
    ok(r.returncode == 0 and "(B) cut: cut.json (interrupted run" in r.stdout,
       "an interrupted file is marked in the table")

    # Files that carry each run's cache-line round trip (lib/lb_c2c.h): the
    # trailer gives each side's, and a 2x gap between the sides' medians is
    # a warning that the host, not the lock, may have moved the figures.
    def with_c2c(ns):
        def mutate(d):
            for cell in d["results"]:
                for k, run_ in enumerate(cell["runs"]):
                    run_["c2c_before_ns"] = ns + k
                    run_["c2c_after_ns"] = None if k == 0 else ns + k + 2
        return mutate
    near = variant("near.json", with_c2c(100))
    near2 = variant("near2.json", with_c2c(130))
    far = variant("far.json", with_c2c(480))
    r = run([near, far, "--json", "c2c.json"], tmp)
    want = "WARNING: (A) and (B) ran at median cache-line round trips of"
    ok(r.returncode == 0 and "(A) near: near.json; cache-line round trip 10" in r.stdout and
       "(B) far: far.json; cache-line round trip 48" in r.stdout and want in r.stdout,
       f"round trips 2x apart: each side's in the trailer and a warning ({r.stdout[-400:]!r})")
    sides = json.load(open(os.path.join(tmp, "c2c.json")))["sides"]
    ok(sides[0]["c2c_ns"]["min"] == 100 and 100 < sides[0]["c2c_ns"]["median"] < 110 and
       sides[1]["c2c_ns"]["max"] > 480, f"JSON: each side's c2c_ns min/median/max {sides}")
    r = run([near, near2], tmp)
    ok(r.returncode == 0 and "cache-line round trip" in r.stdout and "WARNING: (A)" not in r.stdout,
       "round trips within 2x: no warning")
    r = run(["pre.json", "post.json", "--json", "plain-c2c.json"], tmp)
    sides = json.load(open(os.path.join(tmp, "plain-c2c.json")))["sides"]
    ok("cache-line round trip" not in r.stdout and sides[0]["c2c_ns"] is None,
       "files without round trips (older lockbench): no figure, c2c_ns null")
    with open(os.path.join(tmp, "broken.json"), "w") as f:
        f.write('{"schema": "lockbench-bench-1", "results": [\n')
    with open(os.path.join(tmp, "dup.json"), "w") as f:
        f.write('{"schema": "lockbench-bench-1", "schema": "lockbench-bench-1"}\n')
    bad([unknown, "post.json"], "unknown schema 'lockbench-nosuch'", tmp, "unknown schema")
    bad(["pre.json", newer], "version 99", tmp, "newer schema version")
    bad([noschema, "post.json"], "no \"schema\" key", tmp, "no schema key")
    bad([noresults, "post.json"], "no \"results\" array", tmp, "no results")
    bad([noparams, "post.json"], "\"params\"", tmp, "cell without params")
    bad([badrun, "post.json"], "is not a number", tmp, "metric value not a number")
    bad(["broken.json", "post.json"], "not valid JSON (line 2", tmp, "truncated JSON")
    bad(["dup.json", "post.json"], "duplicate", tmp, "duplicate keys")
    bad(["missing.json", "post.json"], "cannot read", tmp, "missing file")
    bad(["pre.json"], "two files", tmp, "one file")
    bad(["-m", "nosuch", "pre.json", "post.json"], "--metric", tmp, "unknown metric")
    bad(["--match", "colour", "pre.json", "post.json"], "--match", tmp, "unknown match key")
    bad(["-c", "101", "pre.json", "post.json"], "--confidence", tmp, "confidence out of range")
    bad(["-c", "abc", "pre.json", "post.json"], "--confidence", tmp, "confidence not a number")
    bad(["--column", "0", "times-a.txt", "times-b.txt"], "--column", tmp, "column 0")
    bad(["--column", "3", "times-a.txt", "times-b.txt"], "fewer than 3 fields", tmp,
        "column past the end")
    bad(["--column", "1", "times-a.txt", "times-b.txt"], "not a number", tmp,
        "non-numeric column")
    bad(["--better", "lower", "pre.json", "post.json"], "--better", tmp, "--better without --column")
    bad(["--column", "2", "--better", "up", "times-a.txt", "times-b.txt"], "--better", tmp,
        "bad --better")
    bad(["--label", "one", "pre.json", "post.json"], "--label", tmp, "label count")
    bad(["--frobnicate", "pre.json", "post.json"], "--frobnicate", tmp, "unknown option")
    bad(["pre.json", "post.json", "--json", "nodir/x.json"], "--json", tmp, "unwritable --json")
    bad([unknown, "post.json", "--json", "err.json"], "unknown schema", tmp,
        "error with --json")
    ok(not os.path.exists(os.path.join(tmp, "err.json")) and
       not [f for f in os.listdir(tmp) if ".tmp." in f], "no output file after an error")

done()
