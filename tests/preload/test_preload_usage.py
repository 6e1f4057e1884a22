#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_preload_usage.py PRELOAD_SO TEST_EXE BENCH_SCRIPT BUILD_DIR - the
interposer's configuration errors (one line on stderr, exit 2, before the
program runs), its statistics file (a lockbench-preload JSON document) and
scripts/preload-bench's option errors."""
import json
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import done, ok  # noqa: E402 (tests/lbtap.py, after the sys.path line)

so, exe, bench, build = sys.argv[1:5]


def run(env_extra, argv=("/bin/true",)):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOCKBENCH_")}
    env["LD_PRELOAD"] = so
    env.update(env_extra)
    return subprocess.run(list(argv), env=env, capture_output=True, text=True, timeout=60)


for name, extra, needle in [
    ("unknown lock", {"LOCKBENCH_LOCK": "nosuchlock"}, "LOCKBENCH_LOCK='nosuchlock'"),
    ("lock unset", {}, "LOCKBENCH_LOCK is not set"),
    ("no-lock baseline", {"LOCKBENCH_LOCK": "none"}, "accepted: "),
    ("unwritable STATS path", {"LOCKBENCH_LOCK": "mutex",
                               "LOCKBENCH_STATS": "/nonexistent-dir/s.json"},
     "LOCKBENCH_STATS=/nonexistent-dir/s.json"),
    ("bad STATS_TOP", {"LOCKBENCH_LOCK": "mutex", "LOCKBENCH_STATS_TOP": "x"},
     "LOCKBENCH_STATS_TOP='x'"),
]:
    r = run(extra)
    lines = r.stderr.strip().splitlines()
    ok(r.returncode == 2 and len(lines) == 1 and needle in lines[0] and "accepted" in lines[0],
       "%s: exit 2 with one line naming the accepted values (rc %d: %r)"
       % (name, r.returncode, r.stderr.strip()[:200]))

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "stats-%p.json")
    r = run({"LOCKBENCH_LOCK": "mutex", "LOCKBENCH_STATS": path, "PRELOAD_TEST_ITERS": "500"},
            [exe])
    ok(r.returncode == 0, "test program under the preload with a stats file (rc %d)"
       % r.returncode)
    files = [f for f in os.listdir(d) if f.startswith("stats-") and f.endswith(".json")]
    ok(len(files) == 1 and "%p" not in files[0],
       "one stats file per process, %%p expanded (%s)" % files)
    doc = {}
    if files:
        with open(os.path.join(d, files[0])) as f:
            doc = json.load(f)
    res = doc.get("results", [])
    ok(doc.get("schema") == "lockbench-preload-2" and "host" in doc and "metrics" in doc
       and doc.get("config", {}).get("lock") == "mutex",
       "schema head, host, metrics and config present")
    ok(len(res) > 0 and all("params" in c and "summary" in c and "runs" in c for c in res)
       and res[0]["runs"][0]["acquisitions"] >= res[-1]["runs"][0]["acquisitions"] * 0
       and all(res[i]["runs"][0]["contended"] >= res[i + 1]["runs"][0]["contended"]
               for i in range(len(res) - 1)),
       "results ranked by contention, each with params/summary/runs (%d)" % len(res))
    t = doc.get("totals", {})
    p = doc.get("left_to_glibc", {})
    ok(t.get("acquisitions", 0) > 0 and t.get("cond_waits", 0) > 0
       and t.get("cond_waits_left_to_glibc", 0) >= 1
       and all(p.get(k, 0) >= 1 for k in ("recursive", "errorcheck", "robust", "prio_inherit",
                                           "process_shared")),
       "totals count acquisitions and cond waits; other kinds left to glibc (%s)" % p)

for args, needle in [(["--repeat", "0"], "--repeat"), (["--programs", "foo"], "--programs"),
                     (["--locks", "glibc,nosuch"], "--locks"), (["stray"], "stray"),
                     (["--size-mb", "x"], "--size-mb")]:
    r = subprocess.run([sys.executable, bench, "--build", build] + args, capture_output=True,
                       text=True, timeout=60)
    lines = r.stderr.strip().splitlines()
    ok(r.returncode == 2 and len(lines) == 1 and needle in lines[0] and not r.stdout,
       "preload-bench %s: exit 2, one line (rc %d: %r)" % (" ".join(args), r.returncode,
                                                          r.stderr.strip()[:120]))

done()
