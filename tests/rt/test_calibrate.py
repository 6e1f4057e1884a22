#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scripts/rt-calibrate's parser on fixed CONFIG_SLUB_STATS counter text (TAP)."""
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile

SCRIPT = sys.argv[1]
loader = importlib.machinery.SourceFileLoader("rt_calibrate", SCRIPT)
spec = importlib.util.spec_from_loader("rt_calibrate", loader)
cal = importlib.util.module_from_spec(spec)
loader.exec_module(cal)

BEFORE = """/sys/kernel/slab/skbuff_head_cache/alloc_from_partial:100 C0=60 C1=40
/sys/kernel/slab/skbuff_head_cache/free_add_partial:50 C0=25 C1=25
/sys/kernel/slab/skbuff_head_cache/free_remove_partial:10 C0=10
/sys/kernel/slab/skbuff_head_cache/deactivate_to_head:0
/sys/kernel/slab/skbuff_head_cache/deactivate_to_tail:0
/sys/kernel/slab/skbuff_head_cache/cpu_partial_drain:0
/sys/kernel/slab/skbuff_small_head/alloc_from_partial:7 C1=7
/sys/kernel/slab/skbuff_small_head/free_add_partial:3
/sys/kernel/slab/skbuff_small_head/objects:999 N0=999
"""
AFTER = """/sys/kernel/slab/skbuff_head_cache/alloc_from_partial:1100 C0=600 C1=500
/sys/kernel/slab/skbuff_head_cache/free_add_partial:1050 C0=525 C1=525
/sys/kernel/slab/skbuff_head_cache/free_remove_partial:1010 C0=1010
/sys/kernel/slab/skbuff_head_cache/deactivate_to_head:0
/sys/kernel/slab/skbuff_head_cache/deactivate_to_tail:0
/sys/kernel/slab/skbuff_head_cache/cpu_partial_drain:0
/sys/kernel/slab/skbuff_small_head/alloc_from_partial:2007 C1=2007
/sys/kernel/slab/skbuff_small_head/free_add_partial:2003
/sys/kernel/slab/skbuff_small_head/objects:5 N0=5
"""
n = 0
fails = 0


def ok(cond, what):
    global n, fails
    n += 1
    fails += not cond
    print(f"{'ok' if cond else 'not ok'} {n} - {what}")


snap = cal.parse_snapshot(AFTER)
ok(snap[("skbuff_head_cache", "alloc_from_partial")] == 1100 and
   ("skbuff_small_head", "objects") not in snap,
   "a snapshot: the totals of the list_lock counters, other files ignored")
res, total = cal.per_message(BEFORE, AFTER, 10000)
ok(abs(res["skbuff_head_cache"] - 0.3) < 1e-9, "head cache: 3000 acquisitions / 10000 messages = 0.3")
ok(abs(res["skbuff_small_head"] - 0.4) < 1e-9, "small head: 4000 / 10000 = 0.4")
ok(abs(total - 0.7) < 1e-9, "total 0.7 per message")
try:
    cal.per_message(AFTER, BEFORE, 10000)
    ok(False, "a counter going backwards is refused")
except ValueError:
    ok(True, "a counter going backwards is refused")
with tempfile.TemporaryDirectory() as d:
    b, a = os.path.join(d, "b"), os.path.join(d, "a")
    open(b, "w").write(BEFORE)
    open(a, "w").write(AFTER)
    r = subprocess.run([sys.executable, SCRIPT, "parse", b, a, "10000"], capture_output=True,
                       text=True)
    ok(r.returncode == 0 and "total: 0.700" in r.stdout, "parse prints the total")
    r = subprocess.run([sys.executable, SCRIPT, "parse", b, a, "zero"], capture_output=True,
                       text=True)
    ok(r.returncode == 2 and r.stderr.count("\n") == 1, "bad MESSAGES: one line, exit 2")
print(f"1..{n}")
sys.exit(1 if fails else 0)
