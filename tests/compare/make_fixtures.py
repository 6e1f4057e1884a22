#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the small result files the compare tests read (tests/compare/data/).
Run once by hand; the outputs are committed so the golden table never depends
on a random generator's version.  usage: make_fixtures.py OUTDIR"""
import json
import random
import sys

out = sys.argv[1]
rng = random.Random(11)

METRICS = {
    "ops_per_sec": ("ops/s", "higher", "throughput"),
    "lat_p99_ns": ("ns", "lower", "acquire latency p99"),
}


def head(version=1, name="lockbench-bench"):
    return {
        "schema": f"{name}-{version}", "schema_name": name, "schema_version": version,
        "host": {"cpu_model": "Test CPU @ 2.0GHz", "cpus_online": 2, "kernel": "6.1.0-test #1 SMP",
                 "hostname": "testhost"},
        "metrics": {k: {"unit": u, "better": b, "title": t} for k, (u, b, t) in METRICS.items()},
    }


def params(lock, threads):
    return {"lock": lock, "threads": threads, "read_pct": None, "cs_ns": 0.0, "par_ns": 0.0,
            "cs_lines": 1, "pin": "none"}


def cell(lock, threads, mean_ops, sd_pct, runs, lat):
    rs = []
    for i in range(runs):
        rs.append({"repeat_index": i,
                   "ops_per_sec": round(rng.gauss(mean_ops, mean_ops * sd_pct / 100), 1),
                   "lat_p99_ns": round(rng.gauss(lat, lat * 0.05), 2)})
    return {"params": params(lock, threads), "lock": lock, "threads": threads, "summary": {},
            "runs": rs}


def write(name, doc):
    with open(f"{out}/{name}", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


pre = head()
pre["config"] = {"command": "bench -l tas,ticket,mutex -t 1,2 -r 10 --json pre.json"}
pre["results"] = [cell("tas", 1, 50e6, 2, 10, 40), cell("tas", 2, 20e6, 3, 10, 300),
                  cell("ticket", 2, 15e6, 3, 3, 200), cell("mutex", 2, 10e6, 3, 10, 500)]
post = head()
post["config"] = {"command": "bench -l tas,ticket,qspinlock -t 1,2 -r 10 --json post.json"}
# tas/1: no change; tas/2: +10 %; ticket/2: 3 runs only; qspinlock only here.
post["results"] = [cell("tas", 1, 50e6, 2, 10, 40), cell("tas", 2, 22e6, 3, 10, 270),
                   cell("ticket", 2, 15.5e6, 3, 3, 200), cell("qspinlock", 2, 25e6, 3, 10, 150)]
write("pre.json", pre)
write("post.json", post)
with open(f"{out}/times-a.txt", "w") as f:
    f.write("# hackbench -g 10 -l 1000, 7 runs\n")
    for v in [2.146, 2.677, 2.410, 2.418, 2.300, 2.520, 2.399]:
        f.write(f"Time: {v}\n")
with open(f"{out}/times-b.txt", "w") as f:
    f.write("# hackbench -g 10 -l 1000, 7 runs, patched\n")
    for v in [2.016, 2.514, 2.268, 2.241, 2.150, 2.380, 2.307]:
        f.write(f"Time: {v}\n")
