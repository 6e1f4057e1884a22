# SPDX-License-Identifier: MIT
"""`lockbench sim --workload rt --costs FILE` and `--calibrate FILE` end to end, as
TAP (doc/sim.md, "The rt workload").

    test_sim_rt_costs_cmd.py LOCKBENCH MACHINE-DIR COST-FILE

On 4 CPUs of opteron-48, 2 groups of 4 senders and 4 receivers, 20 loops (640
messages, well under a second of host time in all):

costs        a fixed cost file (written here): exit 0, the header names it and
             its tables' means, the draws charged a mean near the table's;
             the JSON (schema version 2) says socket_costs source "file"
seed         with the file, seed 3 twice: the same bytes; seed 4: others; the
             constants give others than the file
shipped      COST-FILE (bench/sim/costs/rt-socket.txt) loads and runs
calibrate    --calibrate F on 1 group x 2 x 2 threads, 20 loops: exit 0, F
             opens with the schema, 80 calls a side (2 senders x 2 x 20), and --costs F runs
cli          --costs: a missing file, a wrong schema, unsorted quantiles, a
             negative time, a truncated table; --costs with --send;
             --calibrate with --costs: exit 2, one line naming the option, the
             --json / --calibrate file not made
"""
import json
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import diag, done, ok  # noqa: E402 (tests/lbtap.py, after the sys.path line)

EXE, MDIR, SHIPPED = sys.argv[1], sys.argv[2], sys.argv[3]
MACHINE = os.path.join(MDIR, "opteron-48.machine")
SMALL = ["--workload", "rt", "-m", MACHINE, "-c", "4", "--groups", "2", "--fds", "4",
         "--loops", "20", "-i", "100us", "-q", "--list-lock", "raw"]
HEAD = "lockbench-sim-rt-costs 1\nhost.cpus 2\nmethod fixed text\n"
SEND = "send.count 10\nsend.mean 3000\nsend.q 0 1000\nsend.q 0.5 2000\nsend.q 1 6000\n"
RECV = "recv.count 10\nrecv.mean 1500\nrecv.q 0 500\nrecv.q 0.9 2000\nrecv.q 1 3000\n"


def sim(args):
    return subprocess.run([EXE, "sim"] + args, capture_output=True, text=True, timeout=120)


def gauges(stdout):
    return dict(line.split()[:2] for line in stdout.splitlines()
                if line and not line.startswith("#") and len(line.split()) == 2)


def one_line(r, opt):
    lines = r.stderr.strip().splitlines()
    return r.returncode == 2 and len(lines) == 1 and opt in lines[0]


with tempfile.TemporaryDirectory() as d:
    good = os.path.join(d, "good.txt")
    with open(good, "w") as f:
        f.write("# fixed\n" + HEAD + SEND + RECV)
    js = os.path.join(d, "rt.json")
    r = sim(SMALL + ["--costs", good, "--json", js])
    ok(r.returncode == 0 and "drawn per message from %s" % good in r.stdout and
       "send: table mean 3000" in r.stdout and "recv: table mean 1500" in r.stdout and
       gauges(r.stdout).get("invariants") == "ok",
       "costs: exit 0, the file and its tables' means in the header (exit %d: %s)"
       % (r.returncode, r.stderr.strip()[-200:]))
    j = json.load(open(js)) if r.returncode == 0 else {}
    sc = j.get("config", {}).get("socket_costs", {})
    run = ((j.get("results") or [{}])[0].get("runs") or [{}])[0]
    # The table's draws' mean: send 0.5 x 1500 + 0.5 x 4000 = 2750, recv
    # 0.9 x 1250 + 0.1 x 2500 = 1375; 640 draws a side, within 10 %.
    ok(j.get("schema_version") == 2 and sc.get("source") == "file" and sc.get("file") == good
       and sc.get("send", {}).get("mean_ns") == 3000 and
       2475 < run.get("send_charged_mean_ns", 0) < 3025 and
       1237 < run.get("recv_charged_mean_ns", 0) < 1513,
       "costs: JSON version 2, socket_costs from the file, charged means %s / %s near 2750 / "
       "1375" % (run.get("send_charged_mean_ns"), run.get("recv_charged_mean_ns")))
    runs = [sim(SMALL + ["--costs", good, "-s", s]).stdout for s in ("3", "3", "4")]
    ok(runs[0] and runs[0] == runs[1], "seed: seed 3 twice with --costs, the same bytes")
    ok(gauges(runs[0]).get("events") != gauges(runs[2]).get("events"),
       "seed: seed 4 gives other events (%s, %s)" % (gauges(runs[0]).get("events"),
                                                    gauges(runs[2]).get("events")))
    const = sim(SMALL + ["-s", "3"]).stdout
    ok(gauges(const).get("elapsed_s") != gauges(runs[0]).get("elapsed_s"),
       "seed: the constants give another elapsed than the file (%s, %s)"
       % (gauges(const).get("elapsed_s"), gauges(runs[0]).get("elapsed_s")))

    r = sim(SMALL + ["--costs", SHIPPED])
    ok(r.returncode == 0 and "drawn per message from" in r.stdout,
       "shipped: %s loads and runs (exit %d: %s)" % (os.path.basename(SHIPPED), r.returncode,
                                                     r.stderr.strip()[-200:]))

    cal = os.path.join(d, "cal.txt")
    r = sim(["--workload", "rt", "--calibrate", cal, "--groups", "1", "--fds", "2", "--loops",
             "20", "-q"])
    text = open(cal).read() if os.path.exists(cal) else ""
    ok(r.returncode == 0 and "\nlockbench-sim-rt-costs 1\n" in text and
       "\nsend.count 80\n" in text and "\nrecv.count 80\n" in text and
       "MEASURED" in r.stdout,
       "calibrate: exit 0, the schema, 80 calls a side (exit %d: %s)"
       % (r.returncode, r.stderr.strip()[-200:]))
    r = sim(SMALL + ["--costs", cal])
    ok(r.returncode == 0, "calibrate: --costs reads what --calibrate wrote (exit %d: %s)"
       % (r.returncode, r.stderr.strip()[-200:]))

    bads = {"wrong schema": "lockbench-aim7-costs 1\n" + SEND + RECV,
            "unsorted": HEAD + SEND.replace("send.q 0.5 2000", "send.q 0.5 7000") + RECV,
            "negative": HEAD + SEND.replace("send.q 0 1000", "send.q 0 -1") + RECV,
            "truncated": HEAD + SEND + RECV.replace("recv.q 1 3000\n", "")}
    cases = [("a missing file", ["--costs", os.path.join(d, "nosuch.txt")], "--costs")]
    for name, text in bads.items():
        path = os.path.join(d, name.replace(" ", "-") + ".txt")
        with open(path, "w") as f:
            f.write(text)
        cases.append((name, ["--costs", path], "--costs"))
    cases.append(("--costs with --send", ["--costs", good, "--send", "1us"], "--costs"))
    for i, (name, args, opt) in enumerate(cases):
        out = os.path.join(d, "bad-%d.json" % i)
        r = sim(SMALL + args + ["--json", out])
        ok(one_line(r, opt) and not os.path.exists(out),
           "cli: %s: exit 2, one line naming %s, no --json file (%d: %s)"
           % (name, opt, r.returncode, r.stderr.strip()))
    out = os.path.join(d, "bad-cal.txt")
    r = sim(["--workload", "rt", "--calibrate", out, "--costs", good])
    ok(one_line(r, "--calibrate") and not os.path.exists(out),
       "cli: --calibrate with --costs: exit 2, one line, no file (%d: %s)"
       % (r.returncode, r.stderr.strip()))
diag("model predictions only: no figure of the run is asserted, the draws' means are")
done()
