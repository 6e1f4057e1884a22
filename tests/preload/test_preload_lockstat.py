#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_preload_lockstat.py PRELOAD_SO TEST_EXE LOCKBENCH - lockstat-style
statistics of the preload: locks are grouped into classes by the call site
of their first lock (symbol+offset or object+offset, the same in every run),
with wait and hold histograms, a note that statistics perturb the run, and
`lockbench compare` matching the classes of two runs under different locks
(pthread-mutex, i.e. glibc's mutex, against mutex)."""
import json
import os
import re
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import done, ok  # noqa: E402 (tests/lbtap.py, after the sys.path line)

so, exe, lockbench = sys.argv[1:4]


def run(lock, stats):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOCKBENCH_")}
    env.update({"LD_PRELOAD": so, "LOCKBENCH_LOCK": lock, "LOCKBENCH_STATS": stats,
                "PRELOAD_TEST_ITERS": "300"})
    return subprocess.run([exe], env=env, capture_output=True, text=True, timeout=120)


with tempfile.TemporaryDirectory() as d:
    docs = {}
    for lock in ("pthread-mutex", "mutex"):
        path = os.path.join(d, lock + ".json")
        r = run(lock, path)
        ok(r.returncode == 0 and os.path.exists(path),
           "%s: test program with a statistics file (rc %d)" % (lock, r.returncode))
        try:
            with open(path) as f:
                docs[lock] = json.load(f)
        except (OSError, ValueError):
            docs[lock] = {}
    a, b = docs["pthread-mutex"], docs["mutex"]
    res = a.get("results", [])
    site = re.compile(r"^&?(\S+\+0x[0-9a-f]+ \(\S+\)|\S+\+0x[0-9a-f]+|\(no lock call of its own\))$")
    ok(len(res) > 0 and all(list(c.get("params", {})) == ["class"]
                            and site.match(c["params"]["class"]) for c in res),
       "cells are classes named by call site (%s)"
       % [c.get("params") for c in res[:3]])
    ok(all(sum(c.get("hold_histogram", {}).get("count", [])) == c["runs"][0]["acquisitions"]
           and sum(c.get("wait_histogram", {}).get("count", [])) == c["runs"][0]["contended"]
           for c in res) and len(res) > 0,
       "hold histogram counts every acquisition, wait histogram every contended one")
    ok("perturb" in a.get("config", {}).get("note", ""),
       "the file says that statistics perturb the run")
    ka = {c.get("params", {}).get("class") for c in a.get("results", [])} - {None}
    kb = {c.get("params", {}).get("class") for c in b.get("results", [])} - {None}
    ok(len(ka & kb) >= 3, "the two runs share their classes (%d of %d)" % (len(ka & kb), len(ka)))
    r = subprocess.run([lockbench, "compare", "-m", "acquisitions",
                        os.path.join(d, "pthread-mutex.json"), os.path.join(d, "mutex.json")],
                       capture_output=True, text=True, timeout=60)
    top = res[0].get("params", {}).get("class", "?") if res else "?"
    matched = [ln for ln in r.stdout.splitlines() if ln.startswith(top + ": acquisitions")]
    ok(r.returncode == 0 and len(matched) == 1,
       "lockbench compare matches the busiest class across the two runs (rc %d, %r)"
       % (r.returncode, (r.stdout + r.stderr)[-300:]))
    r = run("mutex", "1")
    err = r.stderr
    ok(r.returncode == 0 and "statistics perturb the run" in err
       and re.search(r"top \d+ classes by contention", err) and "      hold:" in err,
       "text summary: perturbation note, class table, histograms")
done()
