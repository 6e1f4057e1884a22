#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_aim7_watchdog.py - aim7's watchdog ends a load point that is really
stuck (issue 37: it judges from evidence now, not from a deadline).

    test_aim7_watchdog.py LOCKBENCH LOST_WAKEUP_PLUGIN

The plugin is the adaptive mutex whose 20000th lock() never returns (a
lost wake-up): the point must end with exit 1 and the watchdog's "stuck"
line naming sleeping waiters, well within a minute."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import diag, done, ok  # noqa: E402


def main():
    lb, plugin = sys.argv[1], os.path.abspath(sys.argv[2])
    t0 = time.monotonic()
    try:
        p = subprocess.run([lb, "aim7", "-u", "8", "-t", "2s", "-q", "--mutex", plugin],
                           capture_output=True, text=True, timeout=90)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        rc, err = None, "still running after 90 s"
    took = time.monotonic() - t0
    stuck = [line for line in err.splitlines() if "watchdog" in line and "stuck:" in line]
    for line in err.splitlines()[-4:]:
        diag(line[:300])
    ok(rc == 1, f"aim7 with a lost wake-up exits 1 (exit {rc}, {took:.1f} s)")
    ok(any("asleep" in line and "lost wake-up" in line for line in stuck),
       f"the watchdog says stuck: waiters asleep (a deadlock or a lost wake-up) ({stuck[:1]})")
    done()


if __name__ == "__main__":
    main()
