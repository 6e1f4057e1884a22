# SPDX-License-Identifier: MIT
"""`lockbench sim --workload aim7` end to end, as TAP (aim7's simulated
kernel and system tests on the simulator; doc/sim.md, "aim7 on the
simulator").  Only dev-guest.machine and opteron-48.machine are used.

    test_sim_aim7.py LOCKBENCH MACHINE-DIR COSTS SCENARIO

label        every line of the table that is not a point's row is a comment,
             the first says "MODEL PREDICTION"; the JSON has schema
             lockbench-sim-aim7 1, "model": "sim", "label": "model
             prediction", host facts and the config; compare marks both
             sides [MODEL PREDICTION: sim]; Jobs/min is re-aim's formula of
             the point's own jobs and parent time
determinism  the same seed on opteron-48 twice: the same stdout bytes and
             event digests; another seed: another digest
busted       the mutex role's negative control breaks aim7's invariants on
             the simulator: exit 1, "aim7: invariant", the row FAILED; the
             same point with mutex-v3.14 passes them
journal      a copy of the cost table with journal waits in the
             s_orphan_lock sections: the owners sleep in virtual time
             (owner_sleeps > 0) and mutex-v3.15 waiters sleep behind them
cli          bad input: one line naming the option, exit 2
"""
import json
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import diag, done, ok  # noqa: E402 (tests/lbtap.py, after the sys.path line)

EXE, MDIR, COSTS, SCENARIO = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
GUEST = os.path.join(MDIR, "dev-guest.machine")
OPTERON = os.path.join(MDIR, "opteron-48.machine")


def sim(args, timeout=120):
    return subprocess.run([EXE, "sim", "--workload", "aim7"] + args, capture_output=True,
                          text=True, timeout=timeout)


def rows(stdout):
    return [line.split() for line in stdout.splitlines()
            if line and not line.startswith(("#", "users "))]


def label():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "a.json")
        r = sim(["-m", GUEST, "-u", "2,4", "-w", "200ms", "--json", path, "-q"])
        ok(r.returncode == 0, f"dev-guest, 2 and 4 users, 200 ms: exit 0 ({r.returncode})")
        lines = r.stdout.splitlines()
        ok(lines and lines[0].startswith("# MODEL PREDICTION (lockbench sim --workload aim7"),
           f"the table opens with the label: {lines[:1]}")
        table = [ln for ln in lines if not ln.startswith("#")]
        ok(len(table) == 3 and table[0].split()[:2] == ["users", "Jobs/min"],
           f"the rest is the header and one row per point ({len(table)} lines)")
        pts = rows(r.stdout)
        ok(all(p[-1] == "ok" for p in pts), "aim7's invariant check passed at both points")
        try:
            j = json.load(open(path))
        except (OSError, ValueError) as e:
            ok(False, f"the JSON parses ({e})")
            return
        cfg = j.get("config", {})
        ok(j.get("schema_name") == "lockbench-sim-aim7" and j.get("schema_version") == 1,
           f"schema {j.get('schema_name')} {j.get('schema_version')}")
        ok(j.get("model") == "sim" and cfg.get("label") == "model prediction"
           and cfg.get("model") == "sim", "\"model\": \"sim\" and the model-prediction label")
        ok("host" in j and cfg.get("machine", {}).get("file") == GUEST
           and cfg.get("workfile") == "high_systime" and cfg.get("mutex") == "mutex-v3.14"
           and cfg.get("window_ns") == 200000000,
           "host facts, and the config: machine file, workfile, mutex, window")
        res = j.get("results", [])
        good = len(res) == 2
        for p, rj in zip(pts, res):
            run = rj["runs"][0]
            users = rj["params"]["users"]
            # re-aim's Jobs/min: jobs per child / parent s x 60 x children
            jpm = run["jobs_completed"] / users / run["parent_s"] * 60 * users
            good &= abs(jpm - run["jobs_per_min"]) < 1e-6 * jpm
            good &= abs(float(p[1]) - jpm) < 0.01 and int(p[2]) == run["jobs_completed"]
        ok(good, "Jobs/min is re-aim's formula of each point's jobs and parent time, in the "
           "table and the JSON")
        c = subprocess.run([EXE, "compare", path, path], capture_output=True, text=True,
                           timeout=60)
        ok(c.returncode == 0 and c.stdout.count("[MODEL PREDICTION: sim]") >= 2,
           f"compare reads it and marks each side a model prediction (exit {c.returncode})")
        if c.returncode:
            diag(c.stderr, 5)


def determinism():
    args = ["-m", OPTERON, "-u", "8,32", "-w", "60ms", "-s", "5", "-q"]
    with tempfile.TemporaryDirectory() as d:
        runs = [sim(args + ["--json", os.path.join(d, f"{i}.json")]) for i in range(2)]
        other = sim(["-m", OPTERON, "-u", "8,32", "-w", "60ms", "-s", "6", "-q", "--json",
                     os.path.join(d, "o.json")])
        digests = [[x["runs"][0]["digest"] for x in json.load(open(os.path.join(d, f)))["results"]]
                   for f in ("0.json", "1.json", "o.json")]
    ok(all(r.returncode == 0 for r in runs + [other]), "three runs, exit 0")
    ok(runs[0].stdout == runs[1].stdout and rows(runs[0].stdout),
       "the same seed twice: the same table bytes")
    ok(digests[0] == digests[1], f"and the same event digests {digests[0]}")
    ok(digests[2] != digests[0], f"another seed, other digests {digests[2]}")


def busted():
    r = sim(["-m", GUEST, "-u", "4", "-w", "200ms", "--mutex", "busted", "-q"])
    pts = rows(r.stdout)
    ok(r.returncode == 1, f"--mutex busted: exit 1 ({r.returncode})")
    ok("aim7: invariant" in r.stderr and "invariant check FAILED" in r.stderr,
       "aim7's invariant check names the violation")
    ok(pts and pts[0][-1] == "FAILED", f"its row says FAILED ({pts[:1]})")
    diag(r.stderr, 3)
    g = sim(["-m", GUEST, "-u", "4", "-w", "200ms", "--mutex", "mutex-v3.14", "-q"])
    ok(g.returncode == 0 and rows(g.stdout)[0][-1] == "ok",
       f"the same point on mutex-v3.14 passes (exit {g.returncode})")


def journal():
    text = open(COSTS).read()
    text = text.replace("creat_existing.sleep_frac 0.000000", "creat_existing.sleep_frac 0.5")
    text = text.replace("creat_existing.offcpu_ns 0.0", "creat_existing.offcpu_ns 200000")
    with tempfile.TemporaryDirectory() as d:
        table = os.path.join(d, "journal.txt")
        with open(table, "w") as f:
            f.write(text)
        path = os.path.join(d, "j.json")
        r = sim(["-m", OPTERON, "-u", "16", "-w", "50ms", "--mutex", "mutex-v3.15",
                 "--costs", table, "--json", path, "-q"])
        ok(r.returncode == 0, f"16 users, journal waits of 200 us in half the truncates: "
           f"exit {r.returncode}")
        if r.returncode:
            diag(r.stderr, 5)
            return
        o = json.load(open(path))["results"][0]["runs"][0]["s_orphan_lock"]
    ok(o["owner_sleeps"] > 0 and o["counters"].get("sleeps", 0) > 0,
       f"owners slept in the section ({o['owner_sleeps']}) and waiters slept behind them "
       f"({o['counters'].get('sleeps')})")
    ok(o["hold_p50_ns"] >= 1024, f"the median hold is the section's CPU at least "
       f"({o['hold_p50_ns']} ns)")


def cli():
    cases = [
        (["--workload", "foo", "-m", GUEST], "--workload"),
        (["-m", GUEST, "--lock", "ticket"], "--lock"),
        (["-m", GUEST, "--workfile", "compute"], "--workfile"),
        (["-m", GUEST, "--mutex", "pthread-mutex"], "--mutex"),
        (["-m", GUEST, "--spinlock", "ck-mcs"], "--spinlock"),
        (["-m", GUEST, "--rwlock", "pthread-rwlock"], "--rwlock"),
        (["-m", GUEST, "--window", "0"], "--window"),
        (["-m", GUEST, "--users", "1001"], "--users"),
        (["-m", GUEST, "--costs", "none"], "--costs"),
        (["-m", GUEST, "--costs", "/nonexistent/table"], "--costs"),
    ]
    for args, opt in cases:
        r = sim(args)
        lines = r.stderr.strip().splitlines()
        ok(r.returncode == 2 and len(lines) == 1 and opt in lines[0],
           f"{' '.join(args[-2:])}: exit 2, one line naming {opt} ({r.returncode}: {lines[:1]})")
    r = subprocess.run([EXE, "sim", "-m", GUEST, "--users", "3"], capture_output=True,
                       text=True, timeout=60)
    ok(r.returncode == 2 and "--users" in r.stderr,
       f"--users without --workload aim7: exit 2 ({r.returncode})")
    r = sim(["-m", GUEST, "-u", "3", "-w", "20ms", "--spinlock", "ticket"])
    ok(r.returncode == 0 and "spinlock=ticket" in r.stdout,
       f"--spinlock ticket: the spin role's lock, said in the header ({r.returncode})")


{"label": label, "determinism": determinism, "busted": busted, "journal": journal,
 "cli": cli}[SCENARIO]()
done()
