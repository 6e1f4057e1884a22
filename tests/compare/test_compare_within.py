#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""lockbench compare inside one file (issue 24): two locks of one bench file
(--side-a/--side-b selectors), the PRE and POST of an aim7 --ab file (its
sides found in the file), the option errors (one line, exit 2), and the
warning when two files ran at markedly different load averages.  TAP.
usage: test_compare_within.py LOCKBENCH DATADIR"""
import copy
import json
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import done, ok  # noqa: E402 (tests/lbtap.py, after the sys.path line)

LB, DATA = (os.path.abspath(a) for a in sys.argv[1:3])


def run(args, cwd, cmd="compare"):
    # compare --wide: the kernel list's table, each verdict in the delta row's
    # VERDICT column, which the checks below read (test_compare_cli.py checks
    # the default table).
    wide = ["--wide"] if cmd == "compare" else []
    return subprocess.run([LB, cmd] + wide + args, capture_output=True, text=True, timeout=60,
                          cwd=cwd)


def load(name):
    with open(os.path.join(DATA, name)) as f:
        return json.load(f)


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def table_body(text):
    """The table's rows (up to the blank line) and the 'Only in' lines."""
    lines = text.splitlines()
    end = lines.index("") if "" in lines else len(lines)
    only = [ln for ln in lines if ln.startswith("Only in")]
    return lines[:end], only


def bad(args, words, cwd, desc):
    r = run(args, cwd)
    lines = r.stderr.strip().splitlines()
    good = (r.returncode == 2 and len(lines) == 1 and r.stdout == "" and
            all(w in lines[0] for w in words))
    if not ok(good, f"{desc}: exit 2, one line naming {words}"):
        print(f"# rc {r.returncode} stderr {r.stderr!r} stdout {r.stdout[:200]!r}")


def aim7_ab_doc():
    """An aim7 --ab file with fixed runs: POST is 20 % faster at 2 users, the
    same at 4 (the layout bench/aim7/aim7_report.c writes)."""
    doc = {"schema": "lockbench-aim7-1", "schema_name": "lockbench-aim7", "schema_version": 1,
           "host": {"cpu_model": "Test CPU", "cpus_online": 2, "kernel": "6.1.0-test",
                    "hostname": "testhost"},
           "config": {"command": "lockbench aim7 --users 2,4 --ab mutex-nospin,mutex -r 6",
                      "workfile": "high_systime", "mutex": "mutex", "spinlock": "qspinlock-pv",
                      "rwlock": "qrwlock", "ab_role": "mutex", "pre": "mutex-nospin",
                      "post": "mutex", "repeat": 6},
           "results": []}
    base = {2: [100.0, 102.0, 98.0, 101.0, 99.0, 100.5], 4: [200.0, 204.0, 196.0, 202.0, 198.0,
                                                               201.0]}
    for users in (2, 4):
        for side, lock in (("PRE", "mutex-nospin"), ("POST", "mutex")):
            scale = 1.2 if side == "POST" and users == 2 else 1.0
            runs = [{"repeat_index": i, "jobs_per_min": v * scale}
                    for i, v in enumerate(base[users][::-1] if side == "POST" else base[users])]
            doc["results"].append({"params": {"workfile": "high_systime", "users": users,
                                              "mutex": lock, "spinlock": "qspinlock-pv",
                                              "rwlock": "qrwlock", "side": side},
                                   "summary": {}, "runs": runs})
    return doc


with tempfile.TemporaryDirectory() as tmp:
    pre, post = load("pre.json"), load("post.json")
    write(os.path.join(tmp, "pre.json"), pre)
    write(os.path.join(tmp, "post.json"), post)

    # 1. One file holding both builds (a "build" param) gives the same table
    # as the two files it was made of.
    both = copy.deepcopy(pre)
    both["results"] = []
    for doc, build in ((pre, "pre"), (post, "post")):
        for c in copy.deepcopy(doc["results"]):
            c["params"]["build"] = build
            both["results"].append(c)
    write(os.path.join(tmp, "both.json"), both)
    two = run(["pre.json", "post.json"], tmp)
    one = run(["-A", "build=pre", "--side-b", "build=post", "--label", "pre,post", "both.json"], tmp)
    ok(one.returncode == 0 and two.returncode == 0 and table_body(one.stdout) == table_body(two.stdout),
       "-A build=pre -B build=post of one file: the table of the two files")
    if one.returncode != 0:
        print(f"# rc {one.returncode} stderr {one.stderr.strip()}")
    ok("(A) pre: both.json, the cells with build=pre" in one.stdout and
       "(B) post: both.json, the cells with build=post" in one.stdout,
       "the footer names the file and each side's selector")

    # 2. Two locks of one file, matched on the other params (threads).
    r = run(["-A", "lock=tas", "-B", "lock=mutex", "pre.json"], tmp)
    rows, only = table_body(r.stdout)
    ok(r.returncode == 0 and rows[2].startswith("threads=2: ops_per_sec") and
       rows[3].startswith("  (A) tas ") and rows[4].startswith("  (B) mutex "),
       "-A lock=tas -B lock=mutex: one threads=2 group, sides named by the lock")
    ok(len(rows) > 5 and "difference -48.55%" in rows[5] and ", worse at 95%" in rows[5],
       "mutex at half tas's throughput: a difference, worse")
    ok(only == ["Only in (A) tas: threads=1"], "tas threads=1 has no mutex partner: listed")
    js = os.path.join(tmp, "within.json")
    r = run(["-A", "lock=tas", "-B", "lock=mutex", "pre.json", "--json", js], tmp)
    doc = json.load(open(js)) if r.returncode == 0 else {}
    ok([s.get("label") for s in doc.get("sides", [])] == ["tas", "mutex"] and
       [s.get("selector") for s in doc.get("sides", [])] == ["lock=tas", "lock=mutex"] and
       len(doc.get("comparisons", [])) == 1,
       "JSON: the sides with their selectors, one comparison")

    # 3. An aim7 --ab file alone: PRE against POST per load point.
    write(os.path.join(tmp, "ab.json"), aim7_ab_doc())
    r = run(["ab.json"], tmp)
    rows, only = table_body(r.stdout)
    ok(r.returncode == 0 and len(rows) == 10 and rows[2].startswith("users=2: jobs_per_min") and
       rows[6].startswith("users=4: jobs_per_min"),
       "aim7 --ab file alone: one group per user count")
    ok(len(rows) == 10 and rows[3].startswith("  (A) PRE mutex-nospin ") and
       rows[4].startswith("  (B) POST mutex "), "sides are PRE and POST with their locks")
    ok(len(rows) == 10 and "difference +20.00%" in rows[5] and ", better at 95%" in rows[5] and
       "no difference proven" in rows[9], "users=2: +20 % better; users=4: no difference")
    ok(only == [], "every PRE cell has its POST")
    # The same with explicit selectors (the lock key is part of the side).
    r2 = run(["-A", "side=PRE,mutex=mutex-nospin", "-B", "side=POST,mutex=mutex",
              "--label", "PRE mutex-nospin,POST mutex", "ab.json"], tmp)
    ok(r2.returncode == 0 and table_body(r2.stdout) == table_body(r.stdout),
       "explicit -A side=PRE,mutex=... -B side=POST,mutex=...: the same table")

    # A real aim7 --ab run, compared.
    # (--costs none: the unsized kernel -- the sized one burns the real
    # system calls' CPU time, a minute under ThreadSanitizer)
    real = run(["--users", "1,2", "--time", "100ms", "--ab", "mutex-nospin,mutex", "--repeat", "2",
                "--costs", "none", "--json", "real.json", "-q"], tmp, cmd="aim7")
    r = run(["real.json"], tmp) if real.returncode == 0 else real
    rows, _ = table_body(r.stdout)
    ok(r.returncode == 0 and len(rows) == 10 and rows[2].startswith("users=1: jobs_per_min") and
       rows[3].startswith("  (A) PRE mutex-nospin ") and "| 2 " in rows[3] and
       "at 95%" in rows[5],
       "a real aim7 --ab file: PRE/POST per user count with a verdict")
    if r.returncode != 0:
        print(f"# rc {r.returncode} stderr {r.stderr.strip()}")

    # A `lockbench ab` file alone: side A against side B, the locks named.
    abdoc = {"schema": "lockbench-ab-1", "schema_name": "lockbench-ab", "schema_version": 1,
             "host": {"cpu_model": "Test CPU", "cpus_online": 2, "kernel": "6.1.0-test",
                      "hostname": "testhost"},
             "config": {"command": "lockbench ab ticket tas -t 1", "lock_a": "ticket",
                        "lock_b": "tas", "load_before": 0.3},
             "results": [{"params": {"side": side, "lock": lock, "threads": 1}, "summary": {},
                          "runs": [{"repeat_index": i, "ns_per_op": v * scale}
                                   for i, v in enumerate([10.0, 10.2, 9.9, 10.1, 9.8, 10.0])]}
                         for side, lock, scale in (("A", "ticket", 1.0), ("B", "tas", 1.1))]}
    write(os.path.join(tmp, "abfile.json"), abdoc)
    r = run(["abfile.json"], tmp)
    ok(r.returncode == 0 and "paired ratios B/A, (A) ticket vs (B) tas" in r.stdout and
       "Welch" not in r.stdout and "no cell carries paired figures" in r.stdout,
       "an ab file alone: never re-tested unpaired (this one carries no paired figures: said so)")

    # 4. Errors: one line naming the option and what is accepted, exit 2.
    bad(["-A", "lock=tas", "pre.json"], ["--side-a", "--side-b"], tmp, "-A without -B")
    bad(["-A", "lock", "-B", "lock=mutex", "pre.json"], ["--side-a", "KEY=VALUE"], tmp,
        "selector without '='")
    bad(["-A", "colour=red", "-B", "colour=blue", "pre.json"], ["--side-a", "colour", "lock"],
        tmp, "unknown key: the file's params listed")
    bad(["-A", "lock=nosuch", "-B", "lock=mutex", "pre.json"], ["--side-a", "nosuch", "tas"],
        tmp, "no cell selected: the key's values listed")
    bad(["-A", "lock=tas", "-B", "threads=2", "pre.json"], ["--side-b", "lock"], tmp,
        "different keys on the two sides")
    bad(["-A", "lock=tas", "-B", "lock=tas", "pre.json"], ["--side-b", "lock=tas"], tmp,
        "the same cells on both sides")
    bad(["-A", "lock=tas", "-B", "lock=mutex", "pre.json", "post.json"], ["--side-a", "one file"],
        tmp, "selectors with two files")
    bad(["pre.json"], ["--side-a", "aim7"], tmp, "one plain file without selectors")
    bad(["-A", "lock=tas", "-B", "lock=mutex", "--match", "lock", "pre.json"], ["--match", "lock"],
        tmp, "--match on a selector key")
    bad(["-A", "lock=tas", "-B", "lock=mutex", "--label", "a,b,c", "pre.json"], ["--label", "2"], tmp,
        "--label with three names for two sides")

    # 5. Load averages: bench's config.load_average_before, ab's load_before.
    for name, doc, load_avg in (("quiet.json", pre, 0.2), ("busy.json", post, 1.6),
                                ("calm.json", post, 0.5)):
        d = copy.deepcopy(doc)
        d["config"]["load_average_before"] = load_avg
        write(os.path.join(tmp, name), d)
    r = run(["quiet.json", "busy.json"], tmp)
    warn = [ln for ln in r.stdout.splitlines() + r.stderr.splitlines() if "load average" in ln
            and "WARNING" in ln]
    ok(r.returncode == 0 and len(warn) == 1 and "0.2" in warn[0] and "1.6" in warn[0],
       "load averages 0.2 and 1.6: one warning line naming both")
    ok("load average 0.20" in r.stdout, "each file's line gives its load average")
    js = os.path.join(tmp, "load.json")
    r = run(["quiet.json", "busy.json", "--json", js], tmp)
    doc = json.load(open(js)) if r.returncode == 0 else {}
    ok([s.get("load_average_before") for s in doc.get("sides", [])] == [0.2, 1.6] and
       len(doc.get("warnings", [])) == 1 and "load averages" in doc["warnings"][0],
       "JSON: each side's load_average_before and the warning in 'warnings'")
    r = run(["pre.json", "post.json", "--json", js], tmp)
    doc = json.load(open(js)) if r.returncode == 0 else {}
    ok([s.get("load_average_before", 0) for s in doc.get("sides", [])] == [None, None] and
       doc.get("warnings") == [] and "load average" not in r.stdout,
       "files without a load average: null, no warning, nothing printed")
    r = run(["quiet.json", "calm.json"], tmp)
    ok(r.returncode == 0 and not [ln for ln in (r.stdout + r.stderr).splitlines()
                                  if "WARNING" in ln and "load average" in ln],
       "load averages 0.2 and 0.5 (within 0.5 + 50 %): no warning")
    d = copy.deepcopy(post)
    d["config"]["load_before"] = 3.0
    write(os.path.join(tmp, "ab-busy.json"), d)
    r = run(["quiet.json", "ab-busy.json"], tmp)
    ok(r.returncode == 0 and sum("load average" in ln and "WARNING" in ln
                                 for ln in r.stdout.splitlines()) == 1,
       "an ab-style config.load_before is read too")

    # 6. Steal time (config.steal_s, issue 37): a warning when two runs saw
    # markedly different steal; nothing printed where both had none.
    for name, doc, steal in (("nosteal.json", pre, 0.0), ("stolen.json", post, 4.25),
                             ("little.json", post, 0.3)):
        d = copy.deepcopy(doc)
        d["config"]["steal_s"] = steal
        write(os.path.join(tmp, name), d)
    r = run(["nosteal.json", "stolen.json", "--json", js], tmp)
    warn = [ln for ln in r.stdout.splitlines() if "WARNING" in ln and "steal" in ln]
    doc = json.load(open(js)) if r.returncode == 0 else {}
    ok(r.returncode == 0 and len(warn) == 1 and "0.00 and 4.25 s" in warn[0] and
       "; steal 4.25 s" in r.stdout and
       [s.get("steal_s") for s in doc.get("sides", [])] == [None, 4.25] and
       any("steal" in w for w in doc.get("warnings", [])),
       f"steal 0 and 4.25 s: one warning, the side line and JSON say it ({warn})")
    r = run(["nosteal.json", "little.json"], tmp)
    ok(r.returncode == 0 and
       not [ln for ln in r.stdout.splitlines() if "WARNING" in ln and "steal" in ln],
       "steal 0 and 0.3 s (within 0.5 s + 50 %): no warning")
done()
