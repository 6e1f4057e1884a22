# SPDX-License-Identifier: MIT
"""scripts/sim-seeds end to end, as TAP (doc/sim.md, "The seed experiments"),
in its --quick form (short windows: its figures are not the experiment's).

    test_sim_seeds.py SCRIPT BUILD MACHINE-DIR

determinism  both seed runs twice at one simulator seed on the seed machine
             files: the same stdout bytes; another seed: other bytes
label        every block the script prints opens with "MODEL PREDICTION";
             each criterion of doc/sim.md has a verdict line (met, MISSED
             or reported); the JSON says schema lockbench-sim-seeds 1,
             "model": "sim" and "label": "model prediction"
cli          bad input (--seed, --rng, --machines, --rt-costs): one line naming
             the option, exit 2
"""
import json
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import done, ok  # noqa: E402 (tests/lbtap.py, after the sys.path line)

SCRIPT, BUILD, MDIR = sys.argv[1], sys.argv[2], sys.argv[3]
CRITERIA = ["S2-2s", "S2-8s", "S2-busy", "S0-elapsed", "S0-switches", "S0-migrations", "S0-rt",
            "S0-idle"]


def seeds(args, timeout=600):
    return subprocess.run([sys.executable, SCRIPT, "--build", BUILD, "--machines", MDIR,
                           "--quick"] + args, capture_output=True, text=True, timeout=timeout)


with tempfile.TemporaryDirectory() as d:
    js = os.path.join(d, "s.json")
    a = seeds(["--rng", "1", "--json", js])
    b = seeds(["--rng", "1"])
    c = seeds(["--rng", "2"])
    ok(a.returncode == 0 and b.returncode == 0 and a.stdout == b.stdout,
       "determinism: simulator seed 1 twice, the same %d bytes (exit %d, %d)"
       % (len(a.stdout), a.returncode, b.returncode))
    ok(c.returncode == 0 and c.stdout != a.stdout,
       "determinism: simulator seed 2 gives other bytes (exit %d)" % c.returncode)
    blocks = [line for line in a.stdout.splitlines()
              if line.startswith("# ") and not line.startswith("#  ")]
    heads = [line for line in blocks if "seed 00" in line or "criteria" in line]
    ok(len(heads) >= 3 and all("MODEL PREDICTION" in h for h in heads),
       "label: every block opens with MODEL PREDICTION (%s)" % [h[:40] for h in heads])
    verdicts = {line.split()[0]: line.split()[1] for line in a.stdout.splitlines()
                if line.split() and line.split()[0] in CRITERIA}
    ok(sorted(verdicts) == sorted(CRITERIA) and
       all(v in ("met", "MISSED", "reported") for v in verdicts.values()),
       "label: a verdict line for each criterion (%s)" % verdicts)
    doc = json.load(open(js)) if a.returncode == 0 else {}
    ok(doc.get("schema") == "lockbench-sim-seeds" and doc.get("version") == 1 and
       doc.get("model") == "sim" and doc.get("label") == "model prediction",
       "label: the JSON's schema, model and label (%s)" % {k: doc.get(k) for k in
                                                           ("schema", "version", "label")})

for args, opt in [(["--seed", "003"], "--seed"), (["--rng", "x"], "--rng"),
                  (["--machines", "/nonexistent"], "--machines"),
                  (["--rt-costs", "/nonexistent"], "--rt-costs")]:
    r = seeds(args, timeout=60)
    lines = r.stderr.strip().splitlines()
    ok(r.returncode == 2 and len(lines) == 1 and opt in lines[0],
       "cli: %s: exit 2, one line naming %s (%d: %s)" % (" ".join(args), opt, r.returncode,
                                                          lines[:1]))
done()
