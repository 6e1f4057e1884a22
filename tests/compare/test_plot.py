#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""lockbench plot: every picture produced, non-empty, SVG and PNG, titled with
the host and command, with units and a legend; a missing gnuplot is one clear
error naming the Debian package (exit 2); bad input leaves no picture.
TAP output; skipped when gnuplot is absent.
usage: test_plot.py LOCKBENCH [--make FILE LOCKS THREADS REPEATS]"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import done, ok, skip_all  # noqa: E402 (tests/lbtap.py, after the sys.path line)


def synthetic(path, nlocks, threads, repeats):
    """A lockbench-bench-1 file with per-thread counts and latency figures."""
    cells = []
    for li in range(nlocks):
        for t in threads:
            runs = []
            for r in range(repeats):
                ops = 1e7 * (1 + li) / t * (1 + 0.01 * r)
                runs.append({"repeat_index": r, "total_ops": int(ops), "ops_per_sec": ops,
                             "ns_per_op": 1e9 / ops, "cpu_ns_per_op": t * 1e9 / ops,
                             "lat_p50_ns": 20.0 * t, "lat_p99_ns": 200.0 * t,
                             "lat_p999_ns": 900.0 * t, "lat_max_ns": 5e4 * t,
                             "write_side": {"latency_samples": int(ops / 64)},
                             "per_thread": [{"index": i, "ops": int(ops / t * (1 + 0.1 * i))}
                                            for i in range(t)]})
            cells.append({"params": {"lock": f"lock{li:02d}", "threads": t, "read_pct": None,
                                     "cs_ns": 0.0, "par_ns": 0.0, "cs_lines": 1, "pin": "none"},
                          "summary": {}, "runs": runs})
    doc = {"schema": "lockbench-bench-1", "schema_name": "lockbench-bench", "schema_version": 1,
           "host": {"cpu_model": "Plot Test CPU", "cpus_online": 8, "kernel": "6.1.0-plot #1",
                    "hostname": "plothost"},
           "metrics": {}, "config": {"command": "bench --synthetic-plot-test"},
           "results": cells}
    with open(path, "w") as f:
        json.dump(doc, f)


if len(sys.argv) > 2 and sys.argv[2] == "--make":
    synthetic(sys.argv[3], int(sys.argv[4]), [int(t) for t in sys.argv[5].split(",")],
              int(sys.argv[6]))
    sys.exit(0)

LB = sys.argv[1]
if not shutil.which("gnuplot"):
    skip_all("gnuplot is not installed (Debian: gnuplot-nox)")


def plot(args, env=None):
    return subprocess.run([LB, "plot"] + args, capture_output=True, text=True, timeout=60,
                          env=env)


with tempfile.TemporaryDirectory() as tmp:
    data = os.path.join(tmp, "run.json")
    synthetic(data, 3, [1, 2, 4], 3)
    out = os.path.join(tmp, "pics")
    r = plot(["-o", out, data])
    ok(r.returncode == 0, f"plot exits 0 ({r.stderr.strip()[:200]})")
    names = ["ops-per-sec-vs-threads", "latency-threads1", "latency-threads2",
             "latency-threads4", "fairness"]
    for n in names:
        for ext in ("svg", "png"):
            p = os.path.join(out, f"run-{n}.{ext}")
            ok(os.path.exists(p) and os.path.getsize(p) > 1000, f"run-{n}.{ext} written, non-empty")
    png = open(os.path.join(out, "run-fairness.png"), "rb").read(8)
    ok(png == b"\x89PNG\r\n\x1a\n", "PNG files are PNG")
    svg = open(os.path.join(out, "run-ops-per-sec-vs-threads.svg")).read()
    ok(svg.lstrip().startswith("<?xml") and "<svg" in svg, "SVG files are SVG")
    ok(all(w in svg for w in ["Plot Test CPU", "plothost", "bench --synthetic-plot-test",
                              "throughput (ops/s)", "threads", "lock00", "lock02"]),
       "scaling picture: host line, command, axis with unit, legend")
    lat = open(os.path.join(out, "run-latency-threads4.svg")).read()
    ok("acquisition latency (ns)" in lat and "lock01" in lat, "latency picture: unit and legend")
    ok(os.path.exists(os.path.join(out, "run.gp")), "the gnuplot script is kept")
    ok(not [f for f in os.listdir(out) if f.startswith(".")], "no temporary left behind")
    ok(sorted(r.stdout.split()) == sorted(os.path.join(out, f"run-{n}.{e}")
                                          for n in names for e in ("svg", "png")),
       "stdout lists the pictures")
    r = plot(["-o", os.path.join(tmp, "svgonly"), "--format", "svg", data])
    ok(r.returncode == 0 and not [f for f in os.listdir(os.path.join(tmp, "svgonly"))
                                  if f.endswith(".png")], "--format svg draws SVG only")

    # One thread count: the x param does not vary, so one bar per lock.
    flat = os.path.join(tmp, "flat.json")
    synthetic(flat, 4, [8], 2)
    r = plot(["-o", os.path.join(tmp, "flat"), flat])
    bars = os.path.join(tmp, "flat", "flat-ops-per-sec.svg")
    ok(r.returncode == 0 and os.path.exists(bars) and "lock03" in open(bars).read(),
       "a single thread count draws one bar per lock")

    # Errors: one line, exit 2, nothing drawn.
    def bad(args, word, desc, env=None):
        r = plot(args, env)
        lines = r.stderr.strip().splitlines()
        if not ok(r.returncode == 2 and len(lines) == 1 and word in lines[0],
                  f"{desc}: exit 2, one line naming '{word}'"):
            print(f"# rc {r.returncode} {r.stderr!r}")

    env = dict(os.environ, PATH=os.path.join(tmp, "empty"))
    bad(["-o", os.path.join(tmp, "none"), data], "gnuplot-nox", "gnuplot missing", env)
    ok(not os.path.exists(os.path.join(tmp, "none")), "gnuplot missing: no directory made")
    junk = os.path.join(tmp, "junk.json")
    with open(junk, "w") as f:
        json.dump({"schema": "lockbench-nosuch-3", "results": []}, f)
    bad(["-o", os.path.join(tmp, "j"), data, junk], "unknown schema", "unknown schema")
    ok(not os.path.exists(os.path.join(tmp, "j")), "bad input: nothing drawn")
    bad([data], "--output", "no -o")
    bad(["-o", out, "--format", "bmp", data], "--format", "unknown format")
    bad(["-o", os.path.join(tmp, "no", "such", "dir"), data], "--output", "uncreatable dir")
    bad(["-o", out], "result file", "no input")

done()
