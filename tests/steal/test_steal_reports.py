#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_steal_reports.py LOCKBENCH LOCKTORTURE SHIM - steal time in the
reports (issue 37): under SHIM (an LD_PRELOAD whose /proc/stat has a steal
field that grows at every read) bench, ab, aim7, rt and locktorture print a
"steal time" line and their JSON records config.steal_s > 0; without it, on
a machine with no steal of its own, they print no such line and record 0."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import diag, done, ok  # noqa: E402

lockbench, locktorture, shim = sys.argv[1:4]
tmp = tempfile.mkdtemp(prefix="steal-reports.")


def steal_now():
    return int(open("/proc/stat").readline().split()[8])


def run(argv, preload):
    env = dict(os.environ)
    if preload:
        env["LD_PRELOAD"] = shim
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    return p.returncode, p.stdout + p.stderr


CASES = [
    ("bench", [lockbench, "bench", "-l", "none", "-t", "1", "-d", "20ms", "-q"], True),
    ("ab", [lockbench, "ab", "none", "tas", "-t", "1", "-d", "100ms", "-q"], True),
    ("aim7", [lockbench, "aim7", "-u", "1", "-j", "1", "-q"], True),
    ("rt", [lockbench, "rt", "-g", "1", "-f", "2", "-l", "10", "-r", "1", "-t", "1", "-q"], True),
    ("locktorture", [locktorture, "--type", "tas", "--duration", "1", "--nwriters_stress", "2",
                     "--stat_interval", "0"], False),
]

for name, argv, has_json in CASES:
    for preload in (True, False):
        js = os.path.join(tmp, f"{name}-{int(preload)}.json")
        before = steal_now()
        rc, out = run(argv + (["--json", js] if has_json else []), preload)
        own = steal_now() != before  # this machine's own steal moved: nothing to say
        lines = [ln for ln in out.splitlines() if "steal time:" in ln]
        rec = {}
        if has_json and rc == 0:
            try:
                rec = json.load(open(js))
            except (OSError, ValueError) as e:
                diag(f"{js}: {e}")
        steal = rec.get("config", {}).get("steal_s")
        what = f"{name} {'under the shim' if preload else 'as is'}"
        if rc != 0:
            diag(out, last=8)
        if preload:
            ok(rc == 0 and len(lines) == 1 and (not has_json or (steal or 0) > 0),
               f"{what}: exit {rc}, one steal line ({lines}), config.steal_s {steal}")
        elif own:
            ok(True, f"{what}: # SKIP this machine's steal moved during the run")
        else:
            ok(rc == 0 and not lines and (not has_json or steal == 0),
               f"{what}: exit {rc}, no steal line, config.steal_s {steal}")
shutil.rmtree(tmp, ignore_errors=True)
done()
