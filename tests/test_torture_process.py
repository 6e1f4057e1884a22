#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_torture_process.py - locktorture -P: workers as forked processes on
one MAP_SHARED lock (torture/procmode.h).  TAP output.

    test_torture_process.py quick LOCKTORTURE
    test_torture_process.py broken TORTURE_BROKEN

quick   short -P runs (2 s each): a sleeping mutex, a reader/writer lock and
        a spinlock pass with the usual statistics lines; busted fails with
        the usual "!!!" lines; a lock without init_shared and -P with
        --deadlock are refused with one line and exit 2.
broken  mutex-wait-private (tests/harden/mkbroken.py: a pshared mutex whose
        waiter sleeps on a private futex) FAILs under -P within 20 s through
        the stall check or the watchdog, and passes without -P (one process:
        both sides private), which is why torture never saw it before.
"""
import os
import re
import subprocess
import sys
import time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lbtap import diag, done, ok  # noqa: E402 (tests/lbtap.py, after the sys.path line)

MODE, EXE = sys.argv[1], sys.argv[2]
END_RE = re.compile(r"^\S+-torture:--- End of test: (SUCCESS|FAILURE)", re.M)
STATS_RE = re.compile(r"^Writes:  Total: \d+  Max/Min: \d+/\d+ ", re.M)


def run(args, timeout=60):
    t0 = time.monotonic()
    try:
        p = subprocess.run([EXE] + args, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out, "", time.monotonic() - t0


def verdict(out):
    ends = END_RE.findall(out)
    return ends[-1] if ends else None


BASE = ["-P", "--stat_interval", "0", "--duration", "1", "--nwriters_stress", "3"]


def quick():
    for lock, extra in (("mutex", []), ("pthread-rwlock", ["--nreaders_stress", "2"]),
                        ("tas", [])):
        rc, out, err, secs = run(["--type", lock] + BASE + extra)
        good = rc == 0 and verdict(out) == "SUCCESS" and STATS_RE.search(out) \
            and "-P: every worker is a process" in out
        if not ok(good, f"-P {lock}: SUCCESS with the statistics lines (rc {rc}, {secs:.1f} s)"):
            diag(out + err, last=30)
    rc, out, err, secs = run(["--type", "busted"] + BASE)
    if not ok(rc == 1 and verdict(out) == "FAILURE" and "lock_is_write_held already set" in out,
              f"-P busted: FAILURE, two owners seen across processes (rc {rc})"):
        diag(out + err, last=30)
    rc, out, err, _ = run(["--type", "qspinlock", "-P"])
    lines = err.strip().splitlines()
    ok(rc == 2 and len(lines) == 1 and "-P: qspinlock cannot be shared" in err
       and "accepted:" in err, f"-P with a lock without init_shared: one line, exit 2 ({err.strip()})")
    rc, out, err, _ = run(["--type", "mutex", "-P", "--call_rcu_chains", "1"])
    ok(rc == 2 and "-P: --call_rcu_chains" in err, f"-P --call_rcu_chains: refused ({err.strip()})")


def broken():
    rc, out, err, secs = run(["--type", "mutex-wait-private", "-P", "--duration", "20",
                              "--stat_interval", "0", "--nwriters_stress", "4", "--perturb"], 90)
    caught = re.search(r"!!! (stall|watchdog): ", out)
    if not ok(rc == 1 and verdict(out) == "FAILURE" and caught and secs < 30,
              f"-P mutex-wait-private: FAILURE by the {caught.group(1) if caught else '?'} "
              f"check in {secs:.1f} s (rc {rc})"):
        diag(out + err, last=40)
    rc, out, err, secs = run(["--type", "mutex-wait-private", "--duration", "3",
                              "--stat_interval", "0", "--nwriters_stress", "4"])
    ok(rc == 0 and verdict(out) == "SUCCESS",
       f"the same copy passes without -P (one process: a private wait and a private wake), "
       f"rc {rc}")


{"quick": quick, "broken": broken}[MODE]()
done()
