#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_spin_primitive.py - every spin loop of the lock headers waits through
lb_cond_load.h (issue 35, doc/HACKING.md "Spin loops"): outside comments,
no lock header but the primitives' own calls lb_cpu_relax().  TAP.

    test_spin_primitive.py LOCKS_INCLUDE_DIR
"""
import os
import re
import sys

from lbtap import done, ok

# The primitives: the pause itself, the spin primitive, the calibration
# that times the pause.
OWN = {"lb_atomic.h", "lb_cond_load.h", "lb_spin_budget.h"}


def code_only(text):
    """The text with its comments blanked (line numbers kept)."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: test_spin_primitive.py LOCKS_INCLUDE_DIR", file=sys.stderr)
        return 2
    d = sys.argv[1]
    headers = sorted(f for f in os.listdir(d) if f.endswith(".h") and f not in OWN)
    bare = []
    for name in headers:
        with open(os.path.join(d, name), encoding="utf-8") as f:
            code = code_only(f.read())
        for no, line in enumerate(code.splitlines(), 1):
            if re.search(r"\blb_cpu_relax\s*\(", line):
                bare.append("%s:%d" % (name, no))
    ok(len(headers) >= 10, "%d lock headers scanned" % len(headers))
    ok(not bare, "no bare lb_cpu_relax() in a lock header (%s)" % (", ".join(bare) or "none"))
    done()


if __name__ == "__main__":
    sys.exit(main())
