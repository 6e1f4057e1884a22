# SPDX-License-Identifier: MIT
"""`lockbench sim` end to end, as TAP (the registry's locks on the simulator).

    test_sim_cmd.py LOCKBENCH MACHINE-DIR SCENARIO

locks        ticket, tas, qspinlock and mutex (the real headers of locks/,
             built over bench/sim/sim_interpose.h) run 4 threads on 2
             sockets with mutual exclusion kept; every table says "MODEL
             PREDICTION"; the JSON says "model": "sim" and names the machine;
             the analytic cross-check (doc/sim.md) under the table and in the
             JSON, labelled a model prediction, its figure the closed queue
             solved again here from the machine file and --cs/--par
determinism  the same seed twice: the same table bytes and event digests;
             another seed: another digest, the same analytic figures (their
             inputs are the cell's, never the run's)
busted       the negative control lets two threads in: exit 1, "mutual
             exclusion broken", its cell marked FAILED
pi           rtmutex and futex-pi (PI futexes and sched_setscheduler boosts on the
             engine) on 8 CPUs of opteron-48, 4 and 16 threads: mutual exclusion
             kept, acquisitions in every cell, rtmutex's own counters; seed 3
             twice: the same table bytes and event digests
cli          bad input: one line naming the option, exit 2
results     two machine files (2 and 8 sockets, 16 CPUs each) through compare
             and plot --overlay: each side and each picture says "MODEL
             PREDICTION", one picture holds both files
interrupt    a SIGINT at five moments of five long runs: each stops within
             15 s, exit 130, its JSON says "interrupted": true (under the
             thread sanitizer a signal that lands on a virtual thread's
             fiber once waited for ever)
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import diag, done, ok  # noqa: E402 (tests/lbtap.py, after the sys.path line)

EXE, MDIR, SCENARIO = sys.argv[1], sys.argv[2], sys.argv[3]
TWO = os.path.join(MDIR, "xeon-e7-2s.machine")


def sim(args, timeout=120):
    return subprocess.run([EXE, "sim"] + args, capture_output=True, text=True, timeout=timeout)


def rows(stdout):
    return [line.split() for line in stdout.splitlines() if line and not line.startswith(("#", "lock "))]


def machine_fields(path):
    f = {}
    for line in open(path):
        w = line.split("#")[0].split()
        if len(w) == 2 and w[0] != "source":
            f[w[0]] = w[1] if w[0] == "name" else int(w[1])
    return f


def mean_transfer(m, cpus):
    """Mean line transfer over ordered pairs of distinct CPUs among the first `cpus`
    (socket-major, SMT siblings adjacent), written again from doc/sim.md."""
    if cpus < 2:
        return 0.0
    per_socket = m["smt"] * m["cores_per_socket"]
    total = 0
    for x in range(cpus):
        for y in range(cpus):
            if x == y:
                continue
            if x // m["smt"] == y // m["smt"]:
                total += m["same_core"]
            elif x // per_socket == y // per_socket:
                total += m["same_socket"]
            else:
                total += m["cross_socket"]
    return total / (cpus * (cpus - 1))


def closed_queue(n, a, service):
    """Acquisitions per ns of the birth-death chain k -> k+1 at (n-k)/a, k -> k-1 at
    1/service(k), by its product form (doc/sim.md), for a small n."""
    w = [1.0]
    for k in range(1, n + 1):
        w.append(w[-1] * (n - k + 1) / a * service(k))
    return sum(w[k] / service(k) for k in range(1, n + 1)) / sum(w)


def analytic_checks(stdout, cells):
    ok("# ANALYTIC MODEL PREDICTION" in stdout and "Boyd-Wickizer" in stdout,
       "the analytic cross-check's block, labelled a model prediction, under the table")
    m = machine_fields(TWO)
    t = mean_transfer(m, 20)
    want = {"ticket": ("markov-ticket", lambda k: 100 + t * k),
            "qspinlock": ("closed-queue-constant", lambda k: 100 + t),
            "mutex": ("closed-queue-constant", lambda k: 100 + t)}
    for lock, (model, service) in want.items():
        an = cells.get(lock, {}).get("analytic", {})
        x = closed_queue(4, 200.0, service) * 1e9
        got = an.get("acquires_per_s", 0)
        ok(an.get("label") == "model prediction" and an.get("applies") is True
           and an.get("model") == model and abs(an.get("t_ns", 0) - t) < 1e-9
           and abs(got - x) <= 1e-9 * x,
           "%s: JSON analytic %s, t %.3f ns, %.0f acq/s (solved here: %.0f)"
           % (lock, an.get("model"), an.get("t_ns", 0), got, x))
    an = cells.get("tas", {}).get("analytic", {})
    ok(an.get("applies") is False and an.get("why_not") and "acquires_per_s" not in an,
       "tas: the analytic model does not apply, and says why (%s)" % an.get("why_not"))


def locks():
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "s.json")
        r = sim(["-m", TWO, "-l", "ticket,tas,qspinlock,mutex", "-t", "4", "-d", "2ms",
                 "--json", out])
        ok(r.returncode == 0, "four locks on the simulator: exit 0 (exit %d: %s)"
           % (r.returncode, r.stderr.strip()[-300:]))
        ok(r.stdout.startswith("# MODEL PREDICTION"), "the table says MODEL PREDICTION first")
        got = {row[0]: row for row in rows(r.stdout)}
        for lock in ["ticket", "tas", "qspinlock", "mutex"]:
            row = got.get(lock)
            ok(row is not None and row[-1] == "ok" and float(row[3]) > 0,
               "%s: acquisitions, mutual exclusion kept (%s)" % (lock, row))
        ok("# host:" in r.stderr, "the host's cost goes to stderr")
        j = json.load(open(out))
        cfg = j.get("config", {})
        ok(j.get("schema_name") == "lockbench-sim" and j.get("model") == "sim"
           and cfg.get("model") == "sim" and cfg.get("label") == "model prediction"
           and cfg.get("machine", {}).get("file") == TWO,
           "JSON: lockbench-sim, model sim, label, the machine file named")
        ok(len(j.get("results", [])) == 4, "JSON: four cells")
        # The lock's own counters (bench --explain's) come from the simulated copy:
        # mutex counts every acquisition in exactly one of its acquisition classes.
        cnt = {c["params"]["lock"]: c["runs"][0].get("counters") for c in j.get("results", [])}
        mc = cnt.get("mutex") or {}
        ok(cnt.get("ticket") is None and mc.get("fast", 0) + mc.get("spin_won", 0) +
           mc.get("sleeps", 0) > 0, "JSON: mutex's own counters, none for ticket (%s)" % mc)
        analytic_checks(r.stdout, {c["params"]["lock"]: c for c in j.get("results", [])})


def determinism():
    args = ["-m", os.path.join(MDIR, "opteron-48.machine"), "-l", "ticket,mutex", "-t", "8",
            "-c", "8", "-d", "500us", "-q"]
    with tempfile.TemporaryDirectory() as d:
        runs = []
        for seed in ["7", "7", "8"]:
            out = os.path.join(d, "d%s.json" % len(runs))
            r = sim(args + ["-s", seed, "--json", out])
            results = json.load(open(out))["results"]
            digests = [c["runs"][0]["event_digest"] for c in results]
            runs.append((r.stdout, digests, [c["analytic"] for c in results]))
        ok(runs[0][0] == runs[1][0] and runs[0][0], "seed 7 twice: the same table bytes")
        ok(runs[0][1] == runs[1][1], "seed 7 twice: the same event digests %s" % runs[0][1])
        ok(runs[0][1] != runs[2][1], "seed 8: other digests %s" % runs[2][1])
        ok(runs[0][2] == runs[2][2] and all(a.get("applies") for a in runs[0][2]),
           "seed 8: the same analytic predictions (%s)"
           % [a.get("acquires_per_s") for a in runs[2][2]])


def busted():
    r = sim(["-m", TWO, "-l", "busted", "-t", "4", "-d", "1ms", "-q"])
    lines = [row for row in rows(r.stdout) if row[0] == "busted"]
    ok(r.returncode == 1 and "mutual exclusion broken" in r.stderr,
       "busted: exit 1, mutual exclusion broken (exit %d: %s)" % (r.returncode, r.stderr.strip()))
    ok(lines and lines[0][-1] == "FAILED", "busted: its cell marked FAILED")


def pi():
    args = ["-m", os.path.join(MDIR, "opteron-48.machine"), "-l", "rtmutex,futex-pi",
            "-t", "4,16", "-c", "8", "-d", "500us", "-s", "3", "-q"]
    with tempfile.TemporaryDirectory() as d:
        runs = []
        for i in range(2):
            out = os.path.join(d, "p%d.json" % i)
            r = sim(args + ["--json", out])
            ok(r.returncode == 0, "run %d: exit 0 (exit %d: %s)" % (i, r.returncode,
                                                                  r.stderr.strip()[-300:]))
            results = json.load(open(out))["results"]
            runs.append((r.stdout, [c["runs"][0]["event_digest"] for c in results], results))
        got = [row for row in rows(runs[0][0])]
        for lock in ("rtmutex", "futex-pi"):
            cells = [row for row in got if row[0] == lock]
            ok(len(cells) == 2 and all(row[-1] == "ok" and float(row[3]) > 0 for row in cells),
               "%s: acquisitions and mutual exclusion kept at 4 and 16 threads (%s)"
               % (lock, cells))
        cnt = [c["runs"][0].get("counters") or {} for c in runs[0][2]
               if c["params"]["lock"] == "rtmutex"]
        ok(cnt and all(c.get("fast", 0) + c.get("slow", 0) > 0 for c in cnt),
           "rtmutex: its own counters, fast + slow > 0 (%s)" % cnt)
        ok(runs[0][0] == runs[1][0] and runs[0][0], "seed 3 twice: the same table bytes")
        ok(runs[0][1] == runs[1][1], "seed 3 twice: the same event digests %s" % runs[0][1])


def cli():
    cases = [(["-l", "ticket"], "--machine"),
             (["-m", "/nonexistent.machine"], "--machine"),
             (["-m", TWO, "-l", "pthread-mutex"], "--lock"),
             (["-m", TWO, "-c", "999"], "--cpus"),
             (["-m", TWO, "-t", "0"], "--threads"),
             # bench's bare --cs is loop iterations: here it needs a unit
             (["-m", TWO, "--cs", "50"], "--cs"),
             (["-m", TWO, "--par", "2"], "--par"),
             # --measure-machine writes a file and runs no cell (no probe runs here:
             # each case is refused before measuring)
             (["--measure-machine"], "--measure-machine"),
             (["--measure-machine", "/nonexistent-dir/m.machine"], "--measure-machine"),
             (["--measure-machine", "m.machine", "-m", TWO], "--measure-machine"),
             (["--measure-machine", "m.machine", "-t", "4"], "--measure-machine")]
    for args, opt in cases:
        r = sim(args)
        lines = r.stderr.strip().splitlines()
        ok(r.returncode == 2 and len(lines) == 1 and opt in lines[0],
           "%s: exit 2, one line naming %s (exit %d: %s)" % (" ".join(args), opt, r.returncode,
                                                            r.stderr.strip()))
    # The default table fits 100 columns, as every command's does.
    r = sim(["-m", TWO, "-l", "ticket,qspinlock-pv", "-t", "2,160", "-d", "1ms"])
    wide = [line for line in r.stdout.splitlines() if len(line) > 100]
    ok(r.returncode == 0 and not wide, "the default table fits 100 columns (%s)" %
       (wide[0][:60] + "..." if wide else "widest %d" % max(map(len, r.stdout.splitlines()))))


def results():
    import shutil
    with tempfile.TemporaryDirectory() as d:
        files = []
        for name in ("xeon-e7-2s", "xeon-e7-8s"):
            out = os.path.join(d, name + ".json")
            r = sim(["-m", os.path.join(MDIR, name + ".machine"), "-c", "16", "-l",
                     "ticket,qspinlock", "-t", "2,8,16", "-d", "2ms", "-q", "--json", out])
            files.append(out)
            ok(r.returncode == 0, "sim on %s: exit 0 (%d)" % (name, r.returncode))
        r = subprocess.run([EXE, "compare"] + files, capture_output=True, text=True, timeout=60)
        sides = [line for line in r.stdout.splitlines() if line.startswith(("(A) ", "(B) "))]
        ok(r.returncode == 0 and len(sides) == 2 and
           all("[MODEL PREDICTION: sim]" in line for line in sides),
           "compare: both sides say [MODEL PREDICTION: sim] (%s)" % sides)
        if not shutil.which("gnuplot"):
            ok(True, "# SKIP plot: gnuplot not installed")
            return
        pics = os.path.join(d, "pics")
        r = subprocess.run([EXE, "plot", "--overlay", "-o", pics] + files, capture_output=True,
                           text=True, timeout=120)
        gp = os.path.join(pics, "overlay.gp")
        titles = [line for line in open(gp)] if os.path.exists(gp) else []
        titles = [line for line in titles if line.startswith("set title")]
        svgs = [f for f in os.listdir(pics) if f.endswith(".svg")] if os.path.isdir(pics) else []
        ok(r.returncode == 0 and svgs and titles and
           all(t.startswith("set title 'MODEL PREDICTION") for t in titles) and
           all("title '%s: " % os.path.basename(f)[:-len(".json")] in open(gp).read()
               for f in files),
           "plot --overlay: one picture of both files (%s), titled MODEL PREDICTION" % svgs)


def handler_installed(pid, limit=60.0):
    """Wait until process pid catches SIGINT (its SigCgt mask in /proc)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            with open("/proc/%d/status" % pid) as f:
                caught = [int(line.split()[1], 16) for line in f if line.startswith("SigCgt:")]
        except OSError:
            return
        if caught and caught[0] >> (signal.SIGINT - 1) & 1:
            return
        time.sleep(0.01)


def interrupt():
    # Side by side, each signalled at its own moment, so the signal lands on
    # whatever fiber runs then: one try in two hung before the fix.
    with tempfile.TemporaryDirectory() as d:
        runs = []
        for i in range(5):
            out = os.path.join(d, "s%d.json" % i)
            p = subprocess.Popen([EXE, "sim", "-m", os.path.join(MDIR, "opteron-48.machine"),
                                  "-l", "qspinlock", "-t", "8", "-d", "60s", "-q", "--json", out],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            runs.append((p, out, 0.2 + 0.37 * i))
        # Each signal lands in a run that has its handler: before that, a
        # SIGINT would end it by the default action (a loaded machine can
        # take longer than any fixed delay to get there).
        for p, out, at in runs:
            handler_installed(p.pid)
        t0 = time.monotonic()
        for p, out, at in runs:
            time.sleep(max(0.0, t0 + at - time.monotonic()))
            p.send_signal(signal.SIGINT)
        for i, (p, out, at) in enumerate(runs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            try:
                doc = json.load(open(out))
            except (OSError, ValueError):
                doc = {}
            ok(p.returncode == 130 and doc.get("interrupted") is True,
               "a SIGINT %.2f s after its handler: exit 130 within 15 s, \"interrupted\": true (exit %s)"
               % (at, p.returncode))


{"locks": locks, "determinism": determinism, "busted": busted, "cli": cli, "pi": pi,
 "interrupt": interrupt, "results": results}[SCENARIO]()
diag("model predictions only: no figure here is asserted")
done()
