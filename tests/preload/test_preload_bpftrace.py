#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_preload_bpftrace.py PRELOAD_SO SCHEDULES_EXE - a bpftrace one-liner on
glibc's probe names (provider libpthread, fired by the preload) counts the
same acquisitions as the preload's own statistics, on a fixed program
(lockstat_schedules.c "points": 5 acquisitions, one contended, and "loop
1000").  Skipped (with the reason) where bpftrace is missing or may not
attach uprobes here (no root, no tracefs/BPF)."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import diag, done, ok, skip_all  # noqa: E402

so, exe = sys.argv[1:3]
if not shutil.which("bpftrace"):
    skip_all("bpftrace is not installed (Debian package bpftrace)")
if os.geteuid() != 0:
    skip_all("bpftrace needs root to attach uprobes")
script = ("usdt:%s:libpthread:mutex_entry { @entry[pid] = count(); } "
          "usdt:%s:libpthread:mutex_acquired { @acq[pid] = count(); } "
          "usdt:%s:libpthread:mutex_release { @rel[pid] = count(); }" % (so, so, so))
bt = subprocess.Popen(["bpftrace", "-e", script], stdout=subprocess.PIPE,
                      stderr=subprocess.STDOUT, text=True)
seen = ""
for _ in range(10):  # warnings (RLIMIT_MEMLOCK) may come first
    line = bt.stdout.readline()
    seen += line
    if not line or "Attaching" in line:
        break
if "Attaching" not in seen:
    bt.kill()
    skip_all("bpftrace cannot attach here: " + seen[-300:])
time.sleep(0.5)  # the probes are armed once "Attaching" is printed; margin
pids = {}
with tempfile.TemporaryDirectory() as d:
    for args in (["points"], ["loop", "1000"]):
        js = os.path.join(d, "s.json")
        env = {k: v for k, v in os.environ.items() if not k.startswith("LOCKBENCH_")}
        env.update({"LD_PRELOAD": so, "LOCKBENCH_LOCK": "mutex", "LOCKBENCH_STATS": js})
        p = subprocess.Popen([exe] + args, env=env, stdout=subprocess.DEVNULL)
        p.wait(timeout=60)
        doc = json.load(open(js))
        pids[p.pid] = (" ".join(args), doc["totals"]["acquisitions"])
time.sleep(0.5)
bt.send_signal(signal.SIGINT)
out = bt.communicate(timeout=30)[0]
maps = {}
for m in re.finditer(r"@(\w+)\[(\d+)\]: (\d+)", out):
    maps.setdefault(m.group(1), {})[int(m.group(2))] = int(m.group(3))
for pid, (what, acq) in pids.items():
    got = {k: maps.get(k, {}).get(pid) for k in ("entry", "acq", "rel")}
    ok(got == {"entry": acq, "acq": acq, "rel": acq},
       "%s: bpftrace on libpthread:mutex_entry/acquired/release counts %s, the preload %d"
       % (what, got, acq))
if not maps:
    diag(out, 10)
done()
