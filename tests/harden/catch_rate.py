#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""catch_rate.py - how often, and how fast, locktorture catches each broken lock.

    catch_rate.py TORTURE_BROKEN [--runs N] [--cap SECS] LOCK... [-- TORTURE_ARGS...]

Runs `TORTURE_BROKEN --type LOCK --duration CAP TORTURE_ARGS` N times per
lock (one run at a time) and stops a run at its first failure line ("!!!"),
or when it ends.  Prints, per lock, the catch count (runs that failed:
also those failed only by the end-of-test check, which reports a hang that
began less than --stall_secs before the end a little after CAP), how many
of them within CAP s of wall time, and the mean (and worst) wall time to
the first failure line.  A measuring tool, not a test: its figures depend
on the machine's load.
"""
import statistics
import subprocess
import sys
import time


def one_run(exe, lock, cap, extra):
    t0 = time.monotonic()
    p = subprocess.Popen([exe, "--type", lock, "--duration", str(cap), "--stat_interval", "0"]
                         + extra, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = None
    what = ""
    ended = False
    for line in p.stdout:
        if "!!!" in line and first is None:
            first = time.monotonic() - t0
            what = line.strip()
            break
        ended = ended or "End of test: SUCCESS" in line
    if first is not None:
        p.kill()
    p.wait()
    if first is None and not ended:
        sys.exit(f"catch_rate.py: {lock}: the run neither failed nor ended (exit {p.returncode})")
    return first, what


def main(argv):
    exe, runs, cap, locks, extra = argv[0], 10, 20, [], []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--runs":
            runs, i = int(argv[i + 1]), i + 2
        elif a == "--cap":
            cap, i = int(argv[i + 1]), i + 2
        elif a == "--":
            extra, i = argv[i + 1:], len(argv)
        else:
            locks.append(a)
            i += 1
    for lock in locks:
        times = []
        for r in range(runs):
            first, what = one_run(exe, lock, cap, extra)
            if first is not None:
                times.append(first)
            print(f"  {lock} run {r + 1}: "
                  + (f"caught at {first:.1f} s: {what[:150]}" if first is not None
                     else "not caught"), flush=True)
        mean = f"{statistics.mean(times):.1f} s" if times else "-"
        worst = f"{max(times):.1f} s" if times else "-"
        within = sum(1 for t in times if t <= cap)
        print(f"{lock}: caught {len(times)}/{runs} ({within} within {cap} s), mean time to "
              f"first failure {mean}, worst {worst}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
