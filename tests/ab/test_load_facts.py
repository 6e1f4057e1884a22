#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_load_facts.py - aim7 and rt JSON carry config.load_average_before
(the load average when the process started, before its runs), so that
compare's load warning fires for them as for bench and ab files.

Argument: lockbench.  A short aim7 and rt run each; then a copy of each file
with a much higher load average: compare must print one WARNING naming both
figures; the same file against itself: none."""
import copy
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lbtap  # noqa: E402

LB = sys.argv[1]


def run(args, timeout=120):
    return lbtap.run_cmd([LB] + args, timeout)


def warnings(text):
    return [ln for ln in text.splitlines() if "WARNING" in ln and "load average" in ln]


with tempfile.TemporaryDirectory() as tmp:
    for name, args in (("aim7", ["aim7", "-q", "-u", "1", "-t", "100ms", "--costs", "none"]),
                       ("rt", ["rt", "-q", "-g", "0", "-t", "1", "-D", "100ms"])):
        path = os.path.join(tmp, name + ".json")
        rc, so, se = run(args + ["--json", path])
        doc = json.load(open(path)) if rc == 0 and os.path.exists(path) else {}
        load = doc.get("config", {}).get("load_average_before")
        lbtap.ok(isinstance(load, (int, float)) and load >= 0,
                 f"{name}: config.load_average_before is a number ({load!r}; rc {rc}) {se[-200:]}")
        if not isinstance(load, (int, float)):
            continue
        busy = copy.deepcopy(doc)
        busy["config"]["load_average_before"] = round(2 * load + 5, 2)
        busy_path = os.path.join(tmp, name + "-busy.json")
        json.dump(busy, open(busy_path, "w"))
        rc, so, se = run(["compare", path, busy_path])
        w = warnings(so + se)
        lbtap.ok(rc == 0 and len(w) == 1 and f"{load:.2f}" in w[0] and
                 f"{2 * load + 5:.2f}" in w[0],
                 f"{name}: compare warns of load averages {load:.2f} and {2 * load + 5:.2f} "
                 f"(rc {rc}: {w})")
        rc, so, se = run(["compare", path, path])
        lbtap.ok(rc == 0 and not warnings(so + se), f"{name}: the same file twice: no load warning")
lbtap.done()
