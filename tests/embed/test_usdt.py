#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_usdt.py notes|bpftrace LOCKBENCH USDT_ENABLED - the USDT probes of
locks/include/lockbench/lb_probe.h (doc/tracing.md).

notes:    `readelf -n` lists lockbench:contention_begin/_end, handoff and
          pi_boost; every lock adapter's lock function (table below) holds a
          contention_begin and a contention_end; no probe sits in an unlock
          or trylock adapter (the fast paths).
bpftrace: attach to contention_begin/_end during a 2-thread run of ticket
          and mutex and count events: both locks seen (flags SPIN and
          MUTEX), as many ends as begins.  Exit 77 when bpftrace is missing
          or may not attach here.
Exit 77 as well when the build has no probes (-Dusdt=disabled, no sys/sdt.h).
TAP lines on stdout; registered with the exitcode protocol."""
import bisect
import re
import shutil
import subprocess
import sys

mode, exe, enabled = sys.argv[1:4]
if enabled != "true":
    print("1..0 # SKIP built without USDT probes (sys/sdt.h missing or -Dusdt=disabled)")
    sys.exit(77)

# The lock function of every lock adapter that has a slow path (the names
# lb_adapter.h gives the wrappers: LB_CTXFREE_LOCK_OPS(tas, ...) -> tas_adapt_lock).
ADAPTER_LOCK_FUNCTIONS = ["tas_adapt_lock", "ticket_adapt_lock", "qspin_lock", "qspin_pv_lock",
                          "qrw_read_lock", "qrw_lock", "mutex_lock", "rt_lock", "fpi_lock"]
PROBES = ["contention_begin", "contention_end", "handoff", "pi_boost"]
results = []


def check(good, what):
    results.append((bool(good), what))


def finish():
    for i, (good, what) in enumerate(results, 1):
        print(f"{'ok' if good else 'not ok'} {i} - {what}")
    print(f"1..{len(results)}")
    sys.exit(0 if all(g for g, _ in results) else 1)


def probe_sites():
    """(name, containing function) for every lockbench probe in exe."""
    notes = subprocess.run(["readelf", "-n", exe], capture_output=True, text=True,
                           check=True).stdout
    found = re.findall(r"Provider: (\S+)\s+Name: (\S+)\s+Location: (0x[0-9a-f]+)", notes)
    syms = []
    for line in subprocess.run(["nm", "-n", "--defined-only", exe], capture_output=True,
                               text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in "tTwW":
            syms.append((int(parts[0], 16), parts[2]))
    addrs = [a for a, _ in syms]
    sites = []
    for provider, name, loc in found:
        if provider != "lockbench":
            continue
        i = bisect.bisect_right(addrs, int(loc, 16)) - 1
        sites.append((name, syms[i][1].split(".")[0] if i >= 0 else "?"))
    return sites


if mode == "notes":
    for tool in ("readelf", "nm"):
        if not shutil.which(tool):
            print(f"1..0 # SKIP {tool} not installed (binutils)")
            sys.exit(77)
    sites = probe_sites()
    names = {n for n, _ in sites}
    for probe in PROBES:
        check(probe in names, f"lockbench:{probe} has a note ({sum(n == probe for n, _ in sites)} sites)")
    for fn in ADAPTER_LOCK_FUNCTIONS:
        for probe in ("contention_begin", "contention_end"):
            check((probe, fn) in sites, f"{fn}() holds a {probe} probe")
    fast = [(n, f) for n, f in sites if re.search(r"(_unlock|_trylock)$", f)]
    check(not fast, "no probe in an unlock or trylock adapter (fast paths)"
          + (f": {fast}" if fast else ""))
    finish()

# bpftrace
bpftrace = shutil.which("bpftrace")
if not bpftrace:
    print("1..0 # SKIP bpftrace not installed (apt-get install bpftrace)")
    sys.exit(77)
try:
    probe = subprocess.run([bpftrace, "-e", 'BEGIN { printf("ready\\n"); exit(); }'],
                           capture_output=True, text=True, timeout=60)
except subprocess.TimeoutExpired:
    probe = None
if probe is None or probe.returncode != 0 or "ready" not in probe.stdout:
    why = probe.stderr.strip().splitlines()[-1:] if probe else ["timed out"]
    print(f"1..0 # SKIP bpftrace may not run here (needs root/CAP_BPF): {why}")
    sys.exit(77)
script = (f"usdt:{exe}:lockbench:contention_begin {{ @begin[arg1] = count(); }} "
          f"usdt:{exe}:lockbench:contention_end {{ @end = count(); }}")
try:
    run = subprocess.run([bpftrace, "-e", script, "-c",
                          f"{exe} bench --lock ticket,mutex --threads 2 --duration 300ms -q"],
                         capture_output=True, text=True, timeout=120)
except subprocess.TimeoutExpired:
    check(False, "bpftrace run finished within 120 s")
    finish()
if "uprobe" in run.stderr and "@" not in run.stdout:
    print(f"1..0 # SKIP uprobes unavailable here: {run.stderr.strip().splitlines()[-1]}")
    sys.exit(77)
counts = {int(k): int(v) for k, v in re.findall(r"@begin\[(\d+)\]: (\d+)", run.stdout)}
ends = sum(int(v) for v in re.findall(r"@end: (\d+)", run.stdout))
begins = sum(counts.values())
print(f"# begin by flags {counts}, end {ends}")
check(counts.get(1, 0) > 0, f"ticket contention seen with flags SPIN (1): {counts.get(1, 0)}")
check(counts.get(32, 0) > 0, f"mutex contention seen with flags MUTEX (32): {counts.get(32, 0)}")
# A run can stop between a begin and its end only at the very end.
check(begins > 0 and abs(begins - ends) <= 4, f"contention_end count {ends} matches begin {begins}")
finish()
