#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_perturb_hooks.py - where the locktorture --perturb hooks are compiled in.

    test_perturb_hooks.py LOCKTORTURE LOCKBENCH PRELOAD_SO LB_CORE_A

LOCKTORTURE must define and call lb_perturb_slow (its own copy of the locks);
the others must have no symbol, and no call, named *perturb*.
"""
import subprocess
import sys
from lbtap import diag, done, ok  # tests/lbtap.py


def symbols(path):
    p = subprocess.run(["nm", "-A", path], capture_output=True, text=True)
    return [l for l in p.stdout.splitlines() if "perturb" in l]


def calls(path):
    p = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], capture_output=True,
                       text=True)
    return sum("call" in l and "perturb" in l for l in p.stdout.splitlines())


def main():
    torture, others = sys.argv[1], sys.argv[2:]
    n = calls(torture)
    ok(any(" T lb_perturb_slow" in l for l in symbols(torture)) and n > 100,
       f"locktorture defines lb_perturb_slow and calls it from {n} sites")
    for path in others:
        syms, n = symbols(path), calls(path)
        if not ok(not syms and n == 0, f"{path.split('/')[-1]}: no perturb symbol, {n} calls"):
            diag("\n".join(syms[:10]))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(f"usage: {sys.argv[0]} LOCKTORTURE BINARY...", file=sys.stderr)
        sys.exit(2)
    main()
    done()
