#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The driver's lifecycle (bench/driver.c), once for every workload that
runs through it: a bad output path or two outputs naming one file exit 2
with one line and leave nothing; a first SIGINT either stops the run and
commits what finished (exit 130, JSON "interrupted": true: signal policy
FINISH) or removes the temporaries and dies of the signal (END).  A
workload in `lockbench --help` without a row here fails the test, so a new
one cannot skip it.  TAP.

usage: test_driver.py LOCKBENCH
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

from lbtap import commands, done, ok

lockbench = sys.argv[1]
# workload -> (policy, arguments of a run that lasts well past the signal,
#              whether it writes --csv)
WORKLOADS = {
    "bench": ("FINISH", ["-l", "mutex", "-t", "1", "-d", "30s", "-q"], True),
    # ab without -q: the test signals it only after a progress line says a
    # block finished (on a loaded machine none may have in the first seconds,
    # and a run with no finished block has nothing to commit).
    "ab": ("FINISH", ["-t", "1", "-d", "30s", "mutex", "mutex"], False),
    "slab": ("FINISH", ["-T", "bulk", "--ops", "2000000", "-r", "50", "-q"], False),
    "aim7": ("END", ["-u", "2", "-t", "30s", "-q"], True),
    "rt": ("END", ["-g", "0", "-t", "1", "-D", "30s", "-q"], True),
    # sim looks for the signal between 1-ms slices of simulated time.  Under
    # ThreadSanitizer a signal that lands on a virtual thread's fiber waits
    # for that fiber's next intercepted call (engines/sim/sim_fiber.c makes
    # one at every switch); before that, 5 of 10 SIGINTs never stopped it.
    "sim": ("FINISH", ["-m", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                          "engines", "sim", "machines", "opteron-48.machine"),
                       "-l", "qspinlock", "-t", "8", "-d", "60s", "-q"], False),
}
TOOLS = {"list", "compare", "plot"}  # no stages: .main runs them



def watch_blocks(stream, seen):
    """Read ab's progress lines (one per finished step off a terminal) to
    the end; set `seen` at the first finished block."""
    for line in stream:
        if ": block " in line and " done in " in line:
            seen.set()


def leftovers(d):
    return glob.glob(os.path.join(d, "*.tmp.*"))


missing = [c for c in commands(lockbench) if c not in WORKLOADS and c not in TOOLS]
ok(not missing, "every command is covered here: %s" % (",".join(missing) or "yes"))

def check_bad_outputs(d, name, args, has_csv):
    """A path that cannot be written, and two outputs naming one file: exit
    2, one line naming the option, nothing left."""
    r = subprocess.run([lockbench, name, "--json", os.path.join(d, "no", "x.json")] + args,
                       capture_output=True, text=True, timeout=60)
    lines = r.stderr.strip().splitlines()
    ok(r.returncode == 2 and len(lines) == 1 and "--json" in lines[0] and not os.listdir(d),
          "%s: a bad --json path: exit 2, one line, nothing left (exit %d, %d lines)"
          % (name, r.returncode, len(lines)))
    if has_csv:
        same = os.path.join(d, "same.out")
        r = subprocess.run([lockbench, name, "--json", same, "--csv", same] + args,
                           capture_output=True, text=True, timeout=60)
        ok(r.returncode == 2 and not os.path.exists(same),
              "%s: --json and --csv naming one file: exit 2 (exit %d)" % (name, r.returncode))


def check_first_signal(d, name, policy, p, out, took):
    if policy == "FINISH":
        doc = None
        try:
            doc = json.load(open(out))
        except (OSError, ValueError):
            pass
        ok(p.returncode == 130 and doc is not None and doc.get("interrupted") is True,
              "%s: SIGINT stops the run, the JSON is committed with \"interrupted\": true, "
              "exit 130 (exit %s, %.1f s after the signal)" % (name, p.returncode, took))
    else:
        ok(p.returncode == -signal.SIGINT and not os.path.exists(out),
              "%s: SIGINT removes the temporaries and ends it by the signal (exit %s, %.1f s)"
              % (name, p.returncode, took))


with tempfile.TemporaryDirectory() as d:
    for name, (policy, args, has_csv) in WORKLOADS.items():
        check_bad_outputs(d, name, args, has_csv)
    # The first SIGINT, once every run is under way: the workloads run side
    # by side (each its own process and output), so the test costs one wait.
    procs = {}
    ab_block = threading.Event()
    for name, (policy, args, has_csv) in WORKLOADS.items():
        out = os.path.join(d, name + ".json")
        watch = name == "ab"
        procs[name] = (subprocess.Popen([lockbench, name, "--json", out] + args,
                                        stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE if watch else subprocess.DEVNULL,
                                        text=True),
                       out)
        if watch:
            threading.Thread(target=watch_blocks, args=(procs[name][0].stderr, ab_block),
                             daemon=True).start()
    time.sleep(4.0)
    ab_block.wait(timeout=50)
    t0 = time.monotonic()
    for p, out in procs.values():
        p.send_signal(signal.SIGINT)
    for name, (p, out) in procs.items():
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        check_first_signal(d, name, WORKLOADS[name][0], p, out, time.monotonic() - t0)
    ok(not leftovers(d), "no temporary file is left: %s" % (leftovers(d) or "none"))
done()
