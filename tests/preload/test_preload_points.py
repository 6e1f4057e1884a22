#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_preload_points.py PRELOAD_SO SCHEDULES_EXE LOCKSTAT_PARSE KERNEL_SAMPLE -
the preload's lockstat on scripted schedules (lockstat_schedules.c): owner
changes, contention/contending points, spin- vs sleep-resolved waits, the
/proc/lock_stat 0.4 text (parsed by scripts/lockstat-parse, which also reads
a kernel-layout sample), perf lock contention's table and CSV bytes, the
wait-chain dump, LOCKBENCH_DELAY's bounds and refusals, and glibc's
libpthread probes in the library's ELF notes (readelf -n)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import diag, done, ok  # noqa: E402

so, exe, parser, sample = sys.argv[1:5]


def run(lock, args, **envs):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOCKBENCH_")}
    env.update({"LD_PRELOAD": so, "LOCKBENCH_LOCK": lock, "LOCKBENCH_SPIN_ONLY": "ok"})
    env.update(envs)
    return subprocess.run([exe] + args, env=env, capture_output=True, text=True, timeout=60)


def cls_of(doc):
    for r in doc.get("results", []):
        if r["params"]["class"].startswith("&lockme"):
            return r
    return None


def site_names(points):
    return [re.sub(r"\+0x[0-9a-f]+", "", p["site"]).split(" ")[0] for p in points]


with tempfile.TemporaryDirectory() as d:
    js, ls, ct, cs = (os.path.join(d, n) for n in ("s.json", "ls.txt", "ct.txt", "ct.csv"))
    # 1. points and owner changes; lock_stat and perf table of the same run.
    r = run("mutex", ["points"], LOCKBENCH_STATS=js, LOCKBENCH_LOCKSTAT=ls,
            LOCKBENCH_CONTENTION=ct)
    ok(r.returncode == 0, "points schedule runs (rc %d) %s" % (r.returncode, r.stderr[-200:]))
    doc = json.load(open(js)) if os.path.exists(js) else {}
    c = cls_of(doc) or {"runs": [{}], "lockstat": {}, "params": {"class": "?"}}
    run0, lst = c["runs"][0], c["lockstat"]
    cname = c["params"]["class"]
    ok(run0.get("acquisitions") == 5 and run0.get("contended") == 1,
       "5 acquisitions, 1 contended: %s %s" % (run0.get("acquisitions"), run0.get("contended")))
    ok(lst.get("owner_changes") == 3,
       "owner changes main->H->W->main = 3: %s" % lst.get("owner_changes"))
    ok(site_names(lst.get("contention_points", [])) == ["wait_site"] and
       lst["contention_points"][0]["count"] == 1,
       "contention point: the waiter's site wait_site, once: %s" % lst.get("contention_points"))
    ok(site_names(lst.get("contending_points", [])) == ["hold_site"] and
       lst["contending_points"][0]["count"] == 1,
       "contending point: the holder's site hold_site, once: %s" % lst.get("contending_points"))
    ok(lst.get("waits_slept") == 1 and lst.get("waits_spin_resolved") == 0,
       "a 200 ms wait behind a sleeping holder slept (mutex): slept %s spun %s"
       % (lst.get("waits_slept"), lst.get("waits_spin_resolved")))
    ok(lst.get("realtime") is False, "no SCHED_FIFO/RR thread: realtime false")
    r = run("mutex", ["rt"], LOCKBENCH_STATS=js)
    if "rt-unavailable" in r.stdout:
        ok(True, "# SKIP SCHED_FIFO refused here (no CAP_SYS_NICE)")
    else:
        c5 = cls_of(json.load(open(js))) if os.path.exists(js) else None
        ok(r.returncode == 0 and c5 is not None and c5["lockstat"]["realtime"] is True,
           "a SCHED_FIFO thread's lock sets the class's realtime flag (mutrace's R)")
    # 2. lock_stat text: parsed by the same script as a kernel-layout sample.
    p = subprocess.run([sys.executable, parser, sample], capture_output=True, text=True)
    k = json.loads(p.stdout) if p.returncode == 0 else {"classes": []}
    kc = {(x["name"], x["side"]): x for x in k["classes"]}
    mm = kc.get(("&mm->mmap_lock", "W"), {})
    ok(len(k["classes"]) == 4 and mm.get("contentions") == 40 and
       len(mm.get("contention_points", [])) == 2 and len(mm.get("contending_points", [])) == 1
       and kc.get(("&rq->__lock", "-"), {}).get("acquisitions") == 88000,
       "lockstat-parse reads the kernel-layout sample (W/R sides, points)")
    p = subprocess.run([sys.executable, parser, ls], capture_output=True, text=True)
    mine = json.loads(p.stdout)["classes"] if p.returncode == 0 else []
    lc = [x for x in mine if x["name"] == cname]
    lc = lc[0] if lc else {}
    ok(lc.get("contentions") == 1 and lc.get("acquisitions") == 5 and
       abs(lc.get("waittime-total", -1) * 1000 - run0.get("wait_ns", 0)) <= 10 and
       [x["count"] for x in lc.get("contention_points", [])] == [1] and
       [x["count"] for x in lc.get("contending_points", [])] == [1],
       "lockstat-parse reads the preload's lock_stat: %s" % {k2: lc.get(k2) for k2 in
                                                            ("contentions", "acquisitions")})
    text = open(ls).read() if os.path.exists(ls) else ""
    ok(text.startswith("lock_stat version 0.4\n" + "-" * 221 + "\n" + "%40s %14s" %
                       ("class name", "con-bounces")),
       "lock_stat header bytes as the kernel's seq_header")
    # 3. perf lock contention table and CSV.
    tab = open(ct).read() if os.path.exists(ct) else ""
    head = "%10s %12s %12s %12s   %10s   %s\n\n" % ("contended", "total wait", "max wait",
                                                    "avg wait", "type", "caller")
    row = tab[len(head):].splitlines()[0] if tab.startswith(head) and len(tab) > len(head) else ""
    ok(tab.startswith(head) and re.fullmatch(
        r" {9}1 [ \d.]{9} (ms|us|s |ns) [ \d.]{9} (ms|us|s |ns) [ \d.]{9} (ms|us|s |ns)"
        r"   {6}mutex   &lockme.*", row) is not None,
       "perf table bytes: header and row widths: %r" % row)
    r = run("mutex", ["points"], LOCKBENCH_STATS=js, LOCKBENCH_CONTENTION=cs,
            LOCKBENCH_CONTENTION_SEP=",")
    csv = open(cs).read() if os.path.exists(cs) else ""
    c2 = cls_of(json.load(open(js))) if os.path.exists(js) else None
    v = c2["runs"][0] if c2 else {}
    want = "# output: contended, total wait, max wait, avg wait, type, caller\n" + \
        "1, %d, %d, %d, mutex, %s\n" % (v.get("wait_ns", -1), v.get("max_wait_ns", -1),
                                        v.get("avg_wait_ns", -1), cname)
    ok(csv == want, "perf -x CSV bytes equal the JSON's values: %r" % csv)
    r = run("mutex", ["points"], LOCKBENCH_STATS=js, LOCKBENCH_CONTENTION=cs,
            LOCKBENCH_CONTENTION_SEP=":")
    ok(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and
       "LOCKBENCH_CONTENTION_SEP" in r.stderr, "a ':' separator is refused like perf's -x")
    # 4. spin-resolved: a busy holder and a spinning lock.
    r = run("qspinlock", ["spin"], LOCKBENCH_STATS=js)
    c3 = cls_of(json.load(open(js))) if os.path.exists(js) else None
    l3 = c3["lockstat"] if c3 else {}
    ok(r.returncode == 0 and l3.get("waits_spin_resolved") == 1 and l3.get("waits_slept") == 0,
       "a wait behind a busy holder on qspinlock is spin-resolved: spun %s slept %s"
       % (l3.get("waits_spin_resolved"), l3.get("waits_slept")))
    # 5. the wait-chain dump.
    r = run("mutex", ["chain"], LOCKBENCH_STATS="1", LOCKBENCH_STATS_DUMP="USR1")
    tids = dict(line.split() for line in r.stdout.splitlines() if line[:2] in ("H ", "W "))
    m = re.search(r"wait-chain: thread (\d+) waits [\d.]+ ms for mutex 0x[0-9a-f]+ "
                  r"\(class 0x[0-9a-f]+\) held by thread (\d+) since [\d.]+ ms", r.stderr)
    ok(r.returncode == 0 and m is not None and m.group(1) == tids.get("W") and
       m.group(2) == tids.get("H") and "end (1 threads waiting)" in r.stderr,
       "SIGUSR1 dumps: W waits for lockme held by H")
    if not m:
        diag(r.stderr, 8)
    r = run("mutex", ["loop", "1"], LOCKBENCH_STATS_DUMP="USR3")
    ok(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "USR1, USR2" in r.stderr,
       "LOCKBENCH_STATS_DUMP=USR3 refused in one line")
    # 6. the delay knob: bounds, refusals, and its effect on hold time.
    for val, good in (("%s:0" % cname, False), ("%s:100000001" % cname, False),
                      ("%s:1" % cname, True), ("%s:100000000" % cname, True),
                      ("nosuchsym+0x0 (lockstat-schedules)".replace("lockstat-schedules",
                       os.path.basename(exe)) + ":1000", False),
                      ("no-such-object+0x10:1000", False), ("%s" % cname, False)):
        r = run("mutex", ["loop", "1"], LOCKBENCH_DELAY=val)
        lines = r.stderr.splitlines()
        ok((r.returncode == 0 and "1 acquisitions delayed" in r.stderr) if good else
           (r.returncode == 2 and len(lines) == 1 and "accepted: CLASS:NS" in r.stderr),
           "LOCKBENCH_DELAY=%s %s (rc %d)" % (val, "accepted" if good else "refused",
                                              r.returncode))
    r = run("mutex", ["loop", "100"], LOCKBENCH_STATS=js, LOCKBENCH_DELAY=cname + ":1000000")
    c4 = cls_of(json.load(open(js))) if os.path.exists(js) else None
    hold = c4["runs"][0]["hold_ns"] if c4 else 0
    ok(r.returncode == 0 and hold >= 100 * 1000000,
       "100 delayed acquisitions of 1 ms hold >= 100 ms in all: %d ns" % hold)
    # 7. glibc's probes in the ELF notes.
    if shutil.which("readelf"):
        notes = subprocess.run(["readelf", "-n", so], capture_output=True, text=True).stdout
        found = {}
        for m in re.finditer(r"Provider: (\S+)\s+Name: (\S+)\s+Location:.*\n\s+Arguments: ?(.*)",
                             notes):
            if m.group(1) == "libpthread":
                found.setdefault(m.group(2), set()).add(len(m.group(3).split()))
        want = {"mutex_init": 1, "mutex_destroy": 1, "mutex_entry": 1, "mutex_acquired": 1,
                "mutex_timedlock_entry": 2, "mutex_timedlock_acquired": 1, "mutex_release": 1,
                "cond_init": 2, "cond_destroy": 1, "cond_wait": 2, "cond_signal": 1,
                "cond_broadcast": 1}
        ok(all(found.get(n) == {a} for n, a in want.items()) and
           all(a.startswith("8@") for m in re.finditer(r"Provider: libpthread.*\n.*\n.*\n"
                                                       r"\s+Arguments: (.*)", notes)
               for a in m.group(1).split()),
           "readelf -n: provider libpthread, glibc's names and argument counts, 8-byte "
           "pointers: %s" % sorted(found.items()))
    else:
        ok(True, "# SKIP readelf not installed")
done()
