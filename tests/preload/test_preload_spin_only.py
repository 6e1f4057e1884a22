#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_preload_spin_only.py PRELOAD PROGRAM LOCKBENCH - a spin-only lock
(lockbench list: "spin-only") chosen for a program whose threads outnumber
its CPUs gets one warning line from the preload; a sleeping lock, a program
within its CPUs, or LOCKBENCH_SPIN_ONLY=ok gets none.  TAP output."""
import json
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import done, ok  # noqa: E402

PRELOAD, PROG, LB = sys.argv[1:4]
NCPU = len(os.sched_getaffinity(0))


def run(lock, nthreads, extra=None):
    env = dict(os.environ, LD_PRELOAD=PRELOAD, LOCKBENCH_LOCK=lock)
    env.pop("LOCKBENCH_SPIN_ONLY", None)
    env.update(extra or {})
    return subprocess.run([PROG, str(nthreads)], env=env, capture_output=True, text=True,
                          timeout=60)


r = subprocess.run([LB, "list", "--json"], capture_output=True, text=True, timeout=30)
flags = {x["name"]: x["flags"] for x in json.loads(r.stdout)} if r.returncode == 0 else {}
spin = sorted(n for n, f in flags.items() if "spin-only" in f)
ok({"tas", "ticket", "qspinlock", "pthread-spin"} <= set(spin) and
   not {"mutex", "qspinlock-pv", "pthread-mutex", "none", "busted"} & set(spin),
   "list --json: spin-only on the locks that never sleep, not on sleeping ones (%s)" % spin)
over = NCPU + 2
r = run("tas", over)
lines = [l for l in r.stderr.splitlines() if "spin-only" in l]
ok(r.returncode == 0 and len(lines) == 1 and "LOCKBENCH_LOCK=tas is spin-only" in lines[0] and
   "on %d CPUs" % NCPU in lines[0] and "LOCKBENCH_SPIN_ONLY=ok" in lines[0],
   "tas with %d threads on %d CPUs: one warning line, the program runs on (%r)"
   % (over, NCPU, lines))
for lock, n, extra, what in (("mutex", over, None, "a sleeping lock"),
                             ("tas", 1, None, "one thread"),
                             ("tas", over, {"LOCKBENCH_SPIN_ONLY": "ok"}, "LOCKBENCH_SPIN_ONLY=ok")):
    r = run(lock, n, extra)
    ok(r.returncode == 0 and "spin-only" not in r.stderr,
       "%s (%s, %d threads): no warning" % (what, lock, n))
done()
