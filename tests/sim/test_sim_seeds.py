# SPDX-License-Identifier: MIT
"""scripts/sim-seeds end to end, as TAP (doc/sim.md, "The seed experiments"),
in its --quick form (short windows: its figures are not the experiment's).

    test_sim_seeds.py SCRIPT BUILD MACHINE-DIR

determinism  both seed runs twice at one simulator seed on the seed machine
             files, --jobs 1 and --jobs 2: the same stdout bytes; another
             seed: other bytes
sweep        --list-inputs: x0.5 and x1.5 rows for each latency, the three
             aim7 groups and each op of the cost table with a CPU time but
             the three high_systime never calls, which are named instead;
             two inputs run (--jobs 2): the no-op rows (offcpu_ns is 0)
             give the baseline's figures exactly, an op's x0.5 other ones;
             --replot reads the sweep's JSON
replot       --replot of that run's JSON, no --plot: its tables and verdicts
             again, line for line; the tables carry the gauges (running
             contenders, list_lock's held share, found taken, sleeps)
label        every block the script prints opens with "MODEL PREDICTION";
             each criterion of doc/sim.md has a verdict line (met, MISSED
             or reported); the JSON says schema lockbench-sim-seeds 1,
             "model": "sim" and "label": "model prediction"
cli          bad input (--seed, --rng, --machines, --rt-costs): one line naming
             the option, exit 2
"""
import json
import os
import shutil
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
    b = seeds(["--rng", "1", "--jobs", "2"])
    c = seeds(["--rng", "2"])
    ok(a.returncode == 0 and b.returncode == 0 and a.stdout == b.stdout,
       "determinism: simulator seed 1 twice (--jobs 1, 2), the same %d bytes (exit %d, %d)"
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
    host = doc.get("host", {})
    ok(doc.get("schema") == "lockbench-sim-seeds" and doc.get("version") == 1 and
       doc.get("model") == "sim" and doc.get("label") == "model prediction" and
       host.get("kernel") and host.get("cpus_online", 0) > 0 and
       str(host.get("lockbench", "")).startswith("lockbench "),
       "label: the JSON's schema, model, label and host facts (%s)"
       % {k: doc.get(k) for k in ("schema", "version", "label", "host")})
    gauges = ["run2A", "list_lock_rho", "list_lock_taken_pct", "list_lock_running2",
              "list_lock_owner_off", "list_lock_sleeps"]
    ok(all(g in a.stdout for g in gauges),
       "gauges: the tables print running contenders and list_lock's gauges (missing %s)"
       % [g for g in gauges if g not in a.stdout])
    r = seeds(["--replot", js], timeout=60)
    again = r.stdout.splitlines()[1:]
    ok(a.returncode == 0 and r.returncode == 0 and again == a.stdout.splitlines()[:len(again)]
       and len(again) > 20,
       "replot: --replot JSON (no --plot) prints the run's tables and verdicts again, the same "
       "%d lines (exit %d)" % (len(again), r.returncode))

LATENCIES = ["l1_hit", "same_core", "same_socket", "cross_socket", "memory", "rmw",
             "context_switch", "wakeup", "syscall"]
NOT_CALLED = ["cpu.file_read", "cpu.file_write", "cpu.fsync"]  # tests_sys.c's disk tests only
table = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(SCRIPT))), "bench", "aim7",
                     "costs", "default.txt")
ops = [line.split()[0] for line in open(table) if line.startswith("cpu.")]
r = seeds(["--seed", "002", "--list-inputs"])
rows = [line.rsplit(None, 1) for line in r.stdout.splitlines() if not line.startswith("#")]
want = [lat for lat in LATENCIES] + ["aim7 kernel CPU", "aim7 s_orphan_lock op CPU",
                                     "aim7 orphan off-CPU"] + \
    ["aim7 %s (" % op for op in ops if op not in NOT_CALLED]
missing = [w for w in want if sorted(f for lab, f in rows if lab.startswith(w)) !=
           ["x0.5", "x1.5"]]
ok(r.returncode == 0 and len(ops) == 25 and not missing and len(rows) == 2 * len(want),
   "sweep: --list-inputs has x0.5 and x1.5 of %d inputs (%d rows; %d ops in the table; "
   "missing or twice: %s)" % (len(want), len(rows), len(ops), missing[:4]))
ok("# not called by high_systime: %s (no rows)" % ", ".join(NOT_CALLED) in r.stdout,
   "sweep: the ops high_systime never calls are named (%s)"
   % [line for line in r.stdout.splitlines() if "not called" in line])

with tempfile.TemporaryDirectory() as d:
    js = os.path.join(d, "sweep.json")
    r = seeds(["--seed", "002", "--rng", "1", "--sweep", "--inputs", "offcpu,cpu.getpid",
               "--jobs", "2", "--json", js])
    doc = json.load(open(js)) if r.returncode == 0 else {}
    base = doc.get("sweep_base")
    got = {(x["input"].split(" (")[0], x["factor"]): x["headlines"] for x in doc.get("sweep", [])}
    noop = [got.get(("aim7 orphan off-CPU", f)) for f in (0.5, 1.5)]
    ok(r.returncode == 0 and base and len(got) == 4 and noop == [base, base],
       "sweep: offcpu_ns x0.5, x1.5 (a no-op: it is 0) give the baseline's figures exactly "
       "(exit %d, %s vs %s)" % (r.returncode, noop, base))
    half = got.get(("aim7 cpu.getpid", 0.5))
    ok(half is not None and half != base,
       "sweep: cpu.getpid x0.5 moves the figures (%s vs %s)" % (half, base))
    if not shutil.which("gnuplot"):
        ok(True, "# SKIP sweep: --replot: gnuplot not installed")
    else:
        p = seeds(["--replot", js, "--plot", os.path.join(d, "pic")], timeout=60)
        ok(p.returncode == 0 and os.path.exists(os.path.join(d, "pic", "sim-seeds.svg")),
           "sweep: --replot draws the sweep run's JSON (exit %d: %s)"
           % (p.returncode, p.stderr.strip()[-200:]))

for args, opt in [(["--seed", "003"], "--seed"), (["--rng", "x"], "--rng"),
                  (["--machines", "/nonexistent"], "--machines"),
                  (["--rt-costs", "/nonexistent"], "--rt-costs"), (["--jobs", "0"], "--jobs"),
                  (["--sweep", "--inputs", "nosuchinput"], "--inputs")]:
    r = seeds(args, timeout=60)
    lines = r.stderr.strip().splitlines()
    ok(r.returncode == 2 and len(lines) == 1 and opt in lines[0],
       "cli: %s: exit 2, one line naming %s (%d: %s)" % (" ".join(args), opt, r.returncode,
                                                          lines[:1]))
done()
