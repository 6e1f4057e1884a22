#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_torture_loaded.py - the stall check on a machine loaded by other
work (issue 26: 0 false FAILUREs in the 64 + 64 soaks).  TAP output.

    test_torture_loaded.py TORTURE_BROKEN

locktorture's workers run at nice 19.  With 16 busy nice-0 processes on the
CPUs, a spinning ck-fas waiter among 64 writers gets under the stall check's
5 ms of CPU in 4 s, as a sleeper would: the old check called that a lost
wake-up (FAILURE).  Now the check also needs the workers' fair share of
the process's CPU time over the wait to be 50 ms at least before it can
tell spinning from sleeping: the run must pass.  Under the same load a
real lost wake-up (mutex-strand-one, 4 writers) must still FAIL with the
stall line.
"""
import os
import re
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import diag, done, ok  # noqa: E402

EXE = sys.argv[1]
END_RE = re.compile(r"^\S+-torture:--- End of test: (SUCCESS|FAILURE)(?: \[debug\])?: ", re.M)
HOGS = 16


def run(args, timeout):
    t0 = time.monotonic()
    try:
        p = subprocess.run([EXE] + args, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out, time.monotonic() - t0


def verdict(out):
    ends = END_RE.findall(out)
    return ends[-1] if ends else None


hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(HOGS)]
try:
    rc, out, secs = run(["--type", "ck-fas", "--nwriters_stress", "64", "--duration", "10",
                         "--stall_secs", "4", "--stat_interval", "0"], 120)
    if not ok(rc == 0 and verdict(out) == "SUCCESS" and "!!! stall" not in out,
              f"64 spinning ck-fas writers under {HOGS} nice-0 hogs: no stall called "
              f"(rc {rc}, {secs:.1f} s)"):
        diag(out, last=30)
    rc, out, secs = run(["--type", "mutex-strand-one", "--duration", "30", "--stall_secs", "3",
                         "--stat_interval", "0", "--nwriters_stress", "4"], 120)
    if not ok(rc == 1 and verdict(out) == "FAILURE" and
              re.search(r"!!! stall: writer 1 waiting for the lock for \d+\.\d s", out),
              f"a lost wake-up under the same load: still a stall FAILURE "
              f"(rc {rc}, {secs:.1f} s of a 30 s test)"):
        diag(out, last=30)
finally:
    for h in hogs:
        h.kill()
        h.wait()
done()
