#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`lockbench bench --json FILE --format gbench` writes Google Benchmark's JSON.

  test_gbench.py LOCKBENCH format      TAP: the layout (context, one
                                       "iteration" entry per repeat, the
                                       mean/median/stddev/cv aggregates)
  test_gbench.py LOCKBENCH comparepy   exit status: Google Benchmark's own
                                       compare.py reads two such files and
                                       prints its U test; 77 (skip) when
                                       libbenchmark-tools or scipy is absent
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

LB, MODE = sys.argv[1], sys.argv[2]
REPEATS = 3


def bench(path):
    r = subprocess.run([LB, "bench", "-l", "tas,ticket", "-t", "1,2", "-d", "10ms", "-r",
                        str(REPEATS), "-q", "--json", path, "--format", "gbench"],
                       capture_output=True, text=True, timeout=60)
    return r


def find_compare_py():
    for p in ["/usr/share/benchmark/compare.py", "/usr/lib/benchmark/tools/compare.py"]:
        if os.path.exists(p):
            return p
    return None


def python_with_scipy():
    for py in ["/usr/bin/python3", sys.executable, shutil.which("python3")]:
        if py and subprocess.run([py, "-c", "import scipy, numpy"],
                                 capture_output=True).returncode == 0:
            return py
    return None


with tempfile.TemporaryDirectory() as tmp:
    a, b = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
    if MODE == "comparepy":
        cmp_py, py = find_compare_py(), python_with_scipy()
        if not cmp_py or not py:
            print("skip: Google Benchmark's compare.py (Debian: libbenchmark-tools) or "
                  "python3-scipy is not installed")
            sys.exit(77)
        for p in (a, b):
            r = bench(p)
            if r.returncode != 0:
                print(f"bench failed: {r.stderr}")
                sys.exit(1)
        r = subprocess.run([py, cmp_py, "--no-color", "benchmarks", a, b], capture_output=True,
                           text=True, timeout=120)
        print(r.stdout)
        print(r.stderr, file=sys.stderr)
        want = ["tas/threads:1_mean", "ticket/threads:2_median",
                f"U Test, Repetitions: {REPEATS} vs {REPEATS}"]
        missing = [w for w in want if w not in r.stdout]
        if r.returncode != 0 or missing:
            print(f"compare.py exit {r.returncode}; missing from its output: {missing}")
            sys.exit(1)
        sys.exit(0)

    count = failed = 0

    def ok(cond, desc):
        global count, failed
        count += 1
        failed += 0 if cond else 1
        print(("ok" if cond else "not ok") + f" {count} - {desc}", flush=True)

    r = bench(a)
    ok(r.returncode == 0, "bench --format gbench exits 0")
    doc = json.load(open(a))
    ctx = doc["context"]
    ok(all(k in ctx for k in ["date", "host_name", "executable", "num_cpus", "mhz_per_cpu",
                              "caches", "load_avg", "library_build_type"]),
       "context carries Google Benchmark's host facts")
    ok(ctx["lockbench_command"].startswith("lockbench bench ") and ctx["lockbench_schema"] ==
       "lockbench-bench-1", "context names the lockbench command and schema")
    bms = doc["benchmarks"]
    its = [x for x in bms if x["run_type"] == "iteration"]
    aggs = [x for x in bms if x["run_type"] == "aggregate"]
    ok(len(its) == 4 * REPEATS, f"one iteration entry per repeat ({len(its)})")
    ok(sorted(x["repetition_index"] for x in its if x["name"] == "tas/threads:2") ==
       list(range(REPEATS)), "repetition_index 0..R-1 per benchmark")
    ok(len(aggs) == 4 * 4 and {x["aggregate_name"] for x in aggs} ==
       {"mean", "median", "stddev", "cv"}, "mean/median/stddev/cv aggregates per benchmark")
    ok(all(x["time_unit"] == "ns" and x["real_time"] > 0 and x["cpu_time"] > 0 and
           x["items_per_second"] > 0 and x["iterations"] > 0 and x["repetitions"] == REPEATS
           for x in its), "iterations carry real_time/cpu_time in ns, items_per_second, iterations")
    ok(all(x["threads"] == int(x["run_name"].split("threads:")[1]) for x in bms),
       "threads field matches the name")
    tas1 = [x for x in its if x["name"] == "tas/threads:1"]
    mean = [x for x in aggs if x["name"] == "tas/threads:1_mean"][0]
    want = sum(x["real_time"] for x in tas1) / REPEATS
    ok(abs(mean["real_time"] - want) <= 1e-9 * want, "the mean aggregate is the mean of the repeats")
    cv = [x for x in aggs if x["name"] == "tas/threads:1_cv"][0]
    sd = [x for x in aggs if x["name"] == "tas/threads:1_stddev"][0]
    ok(cv["aggregate_unit"] == "percentage" and
       abs(cv["real_time"] - sd["real_time"] / mean["real_time"]) < 1e-9,
       "cv = stddev / mean, as a fraction with aggregate_unit percentage")
    r = subprocess.run([LB, "bench", "-l", "tas", "--format", "gbench"], capture_output=True,
                       text=True, timeout=30)
    ok(r.returncode == 2 and "--json" in r.stderr, "--format gbench without --json is refused")
    r = subprocess.run([LB, "bench", "-l", "tas", "--format", "xml", "--json", a],
                       capture_output=True, text=True, timeout=30)
    ok(r.returncode == 2 and "--format" in r.stderr and "gbench" in r.stderr,
       "--format xml is refused with the accepted values")
    print(f"1..{count}")
    sys.exit(1 if failed else 0)
