# SPDX-License-Identifier: MIT
"""`lockbench sim --workload rt` end to end, as TAP (doc/sim.md, "The rt workload").

    test_sim_rt.py LOCKBENCH MACHINE-DIR

On 8 CPUs of opteron-48, 4 groups of 8 senders and 8 receivers, 50 loops (12800
messages, about 0.1 s of host time each), the RT threads every 100 us:

raw, pi   each runs: exit 0, the output opens with "# MODEL PREDICTION", every
          gauge is there, invariants ok, list_lock taken (acquisitions > 0),
          held a share of the time in (0, 1), found taken sometimes; raw's
          owner is never off its CPU (preemption off while held), PI's
          waiters spin and sleep (rtmutex's counters)
json      pi's --json: schema lockbench-sim-rt, "model": "sim", the label, the
          machine file named, its figures the table's
seed      pi at seed 3 twice: the same bytes; seed 4: other events
busted    the negative control as list_lock: exit 1, the allocator's
          invariants failed (lb_slub_check), "invariants FAILED"
cli       a bad --list-lock, --workload, --groups: exit 2, one line naming it
"""
import json
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import diag, done, ok  # noqa: E402 (tests/lbtap.py, after the sys.path line)

EXE, MDIR = sys.argv[1], sys.argv[2]
MACHINE = os.path.join(MDIR, "opteron-48.machine")
SMALL = ["--workload", "rt", "-m", MACHINE, "-c", "8", "--groups", "4", "--fds", "8",
         "--loops", "50", "-i", "100us", "-q"]
GAUGES = ["elapsed_s", "context_switches", "migrations", "cpus_utilized", "idle_cpu_share",
          "rt_wakeups", "rt_wakeup_p50_us", "rt_wakeup_p99_us", "rt_wakeup_max_us",
          "list_lock_per_msg", "list_lock_rho", "list_lock_taken_pct", "list_lock_running2",
          "list_lock_owner_off", "events", "invariants"]


def sim(args):
    return subprocess.run([EXE, "sim"] + args, capture_output=True, text=True, timeout=120)


def gauges(stdout):
    return dict(line.split()[:2] for line in stdout.splitlines()
                if line and not line.startswith("#") and len(line.split()) == 2)


for lock in ("raw", "pi"):
    r = sim(SMALL + ["--list-lock", lock])
    g = gauges(r.stdout)
    ok(r.returncode == 0, "%s: exit 0 (exit %d: %s)" % (lock, r.returncode, r.stderr.strip()[-200:]))
    ok(r.stdout.startswith("# MODEL PREDICTION") and "12800 messages" in r.stdout,
       "%s: labelled MODEL PREDICTION, 12800 messages" % lock)
    ok(all(k in g for k in GAUGES) and g.get("invariants") == "ok",
       "%s: every gauge, invariants ok (%s)" % (lock, g))
    ok(float(g.get("list_lock_per_msg", 0)) > 0 and float(g.get("elapsed_s", 0)) > 0
       and int(g.get("rt_wakeups", 0)) > 0,
       "%s: list_lock taken (%s per message), RT wake-ups measured (%s)"
       % (lock, g.get("list_lock_per_msg"), g.get("rt_wakeups")))
    rho, taken = float(g.get("list_lock_rho", -1)), float(g.get("list_lock_taken_pct", -1))
    run2, off = float(g.get("list_lock_running2", -1)), float(g.get("list_lock_owner_off", -1))
    ok(0 < rho < 1 and 0 < taken < 100 and 0 <= run2 <= 1 and 0 <= off <= 1,
       "%s: list_lock held %.4f of the time, found taken %.2f %%, running2 %.3f, owner off %.3f"
       % (lock, rho, taken, run2, off))
    if lock == "raw":
        ok(off == 0, "raw: the owner never off its CPU while it holds list_lock (%.4f)" % off)
    else:
        ok(int(g.get("list_lock_spins", 0)) > 0 and int(g.get("list_lock_sleeps", 0)) > 0,
           "pi: waiters spun (%s) and slept (%s)" % (g.get("list_lock_spins"),
                                                     g.get("list_lock_sleeps")))

with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "rt.json")
    r = sim(SMALL + ["--list-lock", "pi", "--json", out])
    j = json.load(open(out)) if r.returncode == 0 else {}
    cfg, res = j.get("config", {}), (j.get("results") or [{}])[0]
    run = (res.get("runs") or [{}])[0]
    ok(j.get("schema_name") == "lockbench-sim-rt" and j.get("model") == "sim"
       and cfg.get("label") == "model prediction" and cfg.get("workload") == "rt"
       and cfg.get("machine", {}).get("file") == MACHINE and "host" in j,
       "JSON: lockbench-sim-rt, model sim, the label, the machine file, host facts")
    g = gauges(r.stdout)
    ok(res.get("params") == {"list_lock": "pi", "cpus": 8}
       and abs(run.get("elapsed_s", -1) - float(g.get("elapsed_s", -2))) < 1e-6
       and run.get("context_switches") == int(g.get("context_switches", -1))
       and run.get("invariants_ok") is True and "fast" in run.get("counters", {}),
       "JSON: params, elapsed and switches as the table's, invariants, rtmutex's counters")

runs = [sim(SMALL + ["--list-lock", "pi", "-s", s]).stdout for s in ("3", "3", "4")]
ok(runs[0] and runs[0] == runs[1], "seed 3 twice: the same bytes")
ok(gauges(runs[0]).get("events") != gauges(runs[2]).get("events"),
   "seed 4: other events (%s, %s)" % (gauges(runs[0]).get("events"), gauges(runs[2]).get("events")))

r = sim(SMALL + ["--list-lock", "busted"])
ok(r.returncode == 1 and "invariants failed" in r.stderr and
   gauges(r.stdout).get("invariants") == "FAILED",
   "busted: exit 1, the allocator's invariants failed (exit %d: %s)"
   % (r.returncode, r.stderr.strip()[-200:]))

for args, opt in [(["--list-lock", "nosuch"], "--list-lock"), (["--groups", "0"], "--groups"),
                  (["--cpus", "49"], "--cpus")]:
    r = sim(SMALL + args)
    lines = r.stderr.strip().splitlines()
    ok(r.returncode == 2 and len(lines) == 1 and opt in lines[0] and "accepted" in lines[0],
       "%s: exit 2, one line naming %s (%s)" % (" ".join(args), opt, r.stderr.strip()))
r = sim(["--workload", "aim9", "-m", MACHINE])
lines = r.stderr.strip().splitlines()
ok(r.returncode == 2 and len(lines) == 1 and "--workload" in lines[0],
   "--workload aim9: exit 2, one line naming --workload (%s)" % r.stderr.strip())
diag("model predictions only: no figure here is asserted")
done()
