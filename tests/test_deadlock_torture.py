#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_deadlock_torture.py - a fallible lock (rqspinlock) through every caller
of the vtable, and locktorture's --deadlock modes (issue 39).

    test_deadlock_torture.py callers LOCKBENCH LOCKTORTURE PRELOAD_SO
    test_deadlock_torture.py torture LOCKTORTURE

callers: bench and ab run rqspinlock (they count failed acquisitions);
aim7, rt, slab and the preload refuse it with one line naming the option
and the accepted values (exit 2); locktorture skips a lock without
detection under --deadlock with one line and exit 77.
torture: each --deadlock mode on rqspinlock ends in SUCCESS with every
injected deadlock broken (none missed, none unbroken), no false EDEADLK in
the deadlock-free rounds, every "NMI" refused with EDEADLK, the locks usable
afterwards and per-thread wait histograms split by context; the usual
(deadlock-free) torture of rqspinlock reports no deadlock.
"""
import os
import re
import subprocess
import sys
from lbtap import diag, done, ok, run_cmd  # tests/lbtap.py


def one_line_refusal(rc, out, err, option):
    lines = err.strip().splitlines()
    return rc == 2 and len(lines) == 1 and option in lines[0] and "accepted" in lines[0] \
        and "rqspinlock" in lines[0]


def scenario_callers(lockbench, torture, preload):
    rc, out, err = run_cmd([lockbench, "bench", "-l", "qspinlock,rqspinlock", "-t", "1,2",
                            "-d", "100ms", "-q"], timeout=120)
    rows = [l for l in out.splitlines() if l.startswith("rqspinlock ")]
    ok(rc == 0 and len(rows) == 2, "bench runs rqspinlock at 1 and 2 threads (rc %s)" % rc)
    if rc:
        diag(err, last=5)
    rc, out, err = run_cmd([lockbench, "ab", "-t", "1", "-d", "200ms", "-q", "qspinlock",
                            "rqspinlock"], timeout=120)
    ok(rc == 0 and "rqspinlock" in out, "ab pairs qspinlock with rqspinlock (rc %s)" % rc)
    if rc:
        diag(err, last=5)
    for argv, option in ((["aim7", "--spinlock", "rqspinlock"], "--spinlock"),
                         (["rt", "--list-lock", "rqspinlock"], "--list-lock"),
                         (["slab", "--lock", "rqspinlock"], "--lock")):
        rc, out, err = run_cmd([lockbench] + argv, timeout=60)
        ok(one_line_refusal(rc, out, err, option),
           "%s refuses a fallible lock in one line naming %s (rc %s: %s)"
           % (argv[0], option, rc, err.strip()[:120]))
    if preload == "-":
        # A sanitizer build: its runtime must come first in a process and
        # intercepts pthread itself, so nothing can be preloaded before it
        # (tests/preload skips there too); build/ checks the refusal.
        ok(True, "# SKIP the preload's refusal: not in a sanitizer build")
    else:
        env = dict(os.environ, LOCKBENCH_LOCK="rqspinlock", LD_PRELOAD=preload)
        p = subprocess.run(["/bin/true"], env=env, capture_output=True, text=True, timeout=60)
        lines = p.stderr.strip().splitlines()
        ok(p.returncode == 2 and len(lines) == 1 and "LOCKBENCH_LOCK" in lines[0]
           and "accepted" in lines[0], "the preload refuses LOCKBENCH_LOCK=rqspinlock in one "
           "line (rc %s)" % p.returncode)
    for lock in ("qspinlock", "mutex"):
        rc, out, err = run_cmd([torture, "--type", lock, "--deadlock", "abba", "--duration",
                                "1"], timeout=60)
        lines = out.strip().splitlines()
        ok(rc == 77 and len(lines) == 1 and "skipped" in lines[0] and lock in lines[0],
           "locktorture --deadlock skips %s (no detection) in one line, exit 77 (rc %s)"
           % (lock, rc))
    rc, out, err = run_cmd([torture, "--type", "rqspinlock", "--deadlock", "abab"], timeout=30)
    ok(rc == 2 and "--deadlock" in err and "accepted: none, aa, abba, abbcca" in err,
       "a bad --deadlock mode is a one-line usage error (rc %s)" % rc)


def field(out, name):
    m = re.search(r"\b" + re.escape(name) + r"=(\d+)", out)
    return int(m.group(1)) if m else None


def check_mode(torture, mode, nmi):
    args = [torture, "--type", "rqspinlock", "--deadlock", mode, "--duration", "2",
            "--stat_interval", "0", "--deadlock_nmi", "1" if nmi else "0"]
    rc, out, err = run_cmd(args, timeout=90)
    what = "--deadlock %s%s" % (mode, "" if nmi else " --deadlock_nmi 0")
    summary = next((l for l in out.splitlines() if "-torture: deadlock %s:" % mode in l), "")
    free = next((l for l in out.splitlines() if "-torture: deadlock-free:" in l), "")
    nmil = next((l for l in out.splitlines() if "-torture: deadlock nmi:" in l), "")
    ok(rc == 0 and "End of test: SUCCESS" in out, "%s: SUCCESS (rc %s)" % (what, rc))
    injected = field(summary, "injected")
    ok(injected and field(summary, "missed") == 0 and field(summary, "unbroken") == 0,
       "%s: %s deadlocks injected, none missed, none unbroken: %s" % (what, injected, summary))
    ok(field(summary, "detected(EDEADLK)") == injected,
       "%s: every injected deadlock reported as EDEADLK" % what)
    ok(free and "false EDEADLK=0" in free, "%s: no false detection: %s" % (what, free))
    if nmi:
        ok(nmil and field(nmil, "missed") == 0 and field(nmil, "granted") == 0
           and field(nmil, "injected") == field(nmil, "detected(EDEADLK)"),
           "%s: every handler retaking its thread's lock got EDEADLK: %s" % (what, nmil))
    else:
        ok(not nmil, "%s: no NMI line without NMI contenders" % what)
    hist = [l for l in out.splitlines() if "deadlock wait histogram" in l]
    ok(any(" task " in l for l in hist) and any(" handler " in l for l in hist),
       "%s: per-thread wait histograms, task and handler apart (%d lines)" % (what, len(hist)))
    usable = re.search(r"locks usable after the run: (\d+) of (\d+)", out)
    ok(usable and usable.group(1) == usable.group(2), "%s: every lock usable afterwards" % what)
    if rc != 0:
        diag(out, last=20)


def scenario_torture(torture):
    for mode in ("aa", "abba", "abbcca"):
        check_mode(torture, mode, True)
    check_mode(torture, "abba", False)
    rc, out, err = run_cmd([torture, "--type", "rqspinlock", "--duration", "2",
                            "--stat_interval", "0"], timeout=90)
    ok(rc == 0 and "End of test: SUCCESS" in out and "fallible lock:" in out
       and "EDEADLK" not in out.replace("a reported deadlock", ""),
       "the usual torture of rqspinlock: SUCCESS, no deadlock reported (rc %s)" % rc)


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "callers" and len(sys.argv) == 5:
        scenario_callers(*sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "torture":
        scenario_torture(sys.argv[2])
    else:
        print("usage: test_deadlock_torture.py callers LOCKBENCH LOCKTORTURE PRELOAD_SO | "
              "torture LOCKTORTURE", file=sys.stderr)
        sys.exit(2)
    done()


if __name__ == "__main__":
    main()
