#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""lockbench command line: every bad input gets exactly one stderr line that
names the option, exit status 2, and leaves no output file; the JSON and CSV
outputs parse and carry the documented fields; an interrupted run leaves no
file behind.  TAP output.  usage: test_lockbench_cli.py LOCKBENCH"""
import csv
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from lbtap import diag, done, ok, unwrap  # tests/lbtap.py

LB = sys.argv[1]


def run(args, timeout=60):
    return subprocess.run([LB] + args, capture_output=True, text=True, timeout=timeout)


BAD = [
    # (args, word the error line must contain)
    (["bench", "--lock", "nosuchlock"], "--lock"),
    (["bench", "--lock", ""], "--lock"),
    (["bench", "--lock", "tas,,ticket"], "--lock"),
    (["bench", "--lock", "tas,tas"], "--lock"),
    (["bench", "--threads", "0"], "--threads"),
    (["bench", "--threads", "-1"], "--threads"),
    (["bench", "--threads", "99999"], "--threads"),
    (["bench", "--threads", "abc"], "--threads"),
    (["bench", "--threads", "1,,2"], "--threads"),
    (["bench", "--threads", "4-1"], "--threads"),
    (["bench", "--threads", "1-1000"], "--threads"),
    (["bench", "--threads", "18446744073709551617"], "--threads"),
    (["bench", "--duration", "0"], "--duration"),
    (["bench", "--duration", "-1"], "--duration"),
    (["bench", "--duration", "5x"], "--duration"),
    (["bench", "--duration", "10h"], "--duration"),
    (["bench", "--duration", "1ms"], "--duration"),
    (["bench", "--duration", "abc"], "--duration"),
    (["bench", "--cs", "-5"], "--cs"),
    (["bench", "--cs", "5parsecs"], "--cs"),
    (["bench", "--cs", "200s"], "--cs"),
    (["bench", "--cs", "99999999999999999999"], "--cs"),
    (["bench", "--par", "abc"], "--par"),
    (["bench", "--cs-lines", "65"], "--cs-lines"),
    (["bench", "--cs-lines", "-1"], "--cs-lines"),
    (["bench", "--cs-lines", "x"], "--cs-lines"),
    (["bench", "--pin", "sideways"], "--pin"),
    (["bench", "--pin", "0-9999"], "--pin"),
    (["bench", "--pin", "4095"], "--pin"),
    (["bench", "--pin", "0,,1"], "--pin"),
    (["bench", "--repeat", "0"], "--repeat"),
    (["bench", "--repeat", "1001"], "--repeat"),
    (["bench", "--repeat", "many"], "--repeat"),
    (["bench", "--read-pct", "101"], "--read-pct"),
    (["bench", "--read-pct", "-1"], "--read-pct"),
    (["bench", "--read-pct", "50", "--lock", "tas"], "--read-pct"),
    (["bench", "--sample-every", "3"], "--sample-every"),
    (["bench", "--sample-every", "0"], "--sample-every"),
    (["bench", "--sample-every", "131072"], "--sample-every"),
    (["bench", "--frobnicate"], "--frobnicate"),
    (["bench", "--lock"], "--lock"),
    (["bench", "stray"], "stray"),
    (["nosuchcommand"], "nosuchcommand"),
    (["list", "--yaml"], "--yaml"),
    # Issue 15: wrap-around in a range step, messages, stray arguments.
    (["bench", "--threads", "1-2:18446744073709551616"], "--threads"),
    (["bench", "--threads", "0-2:18446744073709551615"], "--threads"),
    (["bench", "--explain=1"], "'--explain' takes no value"),
    (["bench", "-zq"], "'-z' in '-zq'"),
    (["bench", "--c", "1"], "candidates: --cs, --cs-lines, --csv"),
    (["bench", "--pin", "0-1023"], "within the allowed "),
    (["bench", "--help", "extra"], "extra"),
    (["--version", "extra"], "extra"),
    (["--help", "extra"], "extra"),
    (["help", "extra"], "extra"),
    (["list", "--help", "--json"], "--help"),
]


def check_bad(args, word, outdir):
    out = os.path.join(outdir, "out.json")
    r = run(args + ["--json", out] if args[0] == "bench" and args[-1] != "--lock" else args)
    lines = r.stderr.strip().split("\n") if r.stderr.strip() else []
    leftovers = os.listdir(outdir)
    ok(r.returncode == 2 and len(lines) == 1 and word in lines[0] and not leftovers
       and r.stdout == "",
       f"{' '.join(args)!r}: exit {r.returncode}, {len(lines)} stderr line(s) "
       f"naming {word!r}, files left: {leftovers}  [{lines[0] if lines else ''}]")


def check_unwritable(outdir):
    for opt, path in [("--json", "/nonexistent-dir/x.json"), ("--csv", "/proc/x.csv"),
                      ("--json", outdir), ("--csv", "/etc/hostname/x.csv")]:
        r = run(["bench", "--lock", "none", "--threads", "1", "--duration", "10ms",
                 "-q", opt, path])
        lines = r.stderr.strip().split("\n")
        ok(r.returncode == 2 and len(lines) == 1 and opt in lines[0] and r.stdout == "",
           f"{opt} {path}: exit {r.returncode}, one line naming {opt}: {lines[0]}")
    ok(not os.listdir(outdir), "no file left behind by the unwritable-path runs")
    # One good and one bad output: the good one must not be created either.
    good = os.path.join(outdir, "good.json")
    r = run(["bench", "--lock", "none", "--threads", "1", "--duration", "10ms", "-q",
             "--json", good, "--csv", "/nonexistent-dir/x.csv"])
    ok(r.returncode == 2 and not os.listdir(outdir),
       "a bad --csv path leaves no --json file (nor its temporary)")


def check_outputs(outdir):
    js, cs = os.path.join(outdir, "r.json"), os.path.join(outdir, "r.csv")
    r = run(["bench", "--lock", "none,tas,pthread-mutex", "--threads", "1,2", "--duration",
             "50ms", "--repeat", "2", "--json", js, "--csv", cs, "-q"])
    ok(r.returncode == 0, f"bench with --json and --csv exits 0 ({r.stderr.strip()[:200]})")
    try:
        doc = json.load(open(js))
    except Exception as e:  # noqa: BLE001
        ok(False, f"JSON parses: {e}")
        return
    ok(True, "JSON parses with Python's json module")
    host_keys = {"cpu_model", "cpus_online", "numa_nodes", "kernel", "compiler", "build_type",
                 "git_revision", "cycles_per_ns"}
    ok(host_keys <= set(doc.get("host", {})), f"host metadata has {sorted(host_keys)}")
    cfg_keys = {"locks", "threads", "duration_s", "cs_iters", "par_iters", "cs_lines", "pin",
                "repeat", "read_pct"}
    ok(cfg_keys <= set(doc.get("config", {})), f"config has {sorted(cfg_keys)}")
    res = doc.get("results", [])
    ok(len(res) == 6, f"6 results (3 locks x 2 thread counts): {len(res)}")
    figures = ["ops_per_sec", "ns_per_op", "cycles_per_op", "cpu_ns_per_op", "overhead_ns",
               "fairness_cov", "min_max_ratio", "overlap", "lat_p50_ns", "lat_p99_ns",
               "lat_p999_ns", "lat_max_ns"]
    stats = {"mean", "sd", "sd_pct", "median", "min", "max", "n"}
    good = True
    for c in res:
        for f in figures:
            s = c["summary"].get(f, {})
            good &= stats <= set(s) and s["n"] == 2 and s["min"] <= s["median"] <= s["max"]
        good &= len(c["runs"]) == 2
        for run_ in c["runs"]:
            good &= len(run_["per_thread"]) == c["threads"]
            good &= sum(t["ops"] for t in run_["per_thread"]) == run_["total_ops"]
            good &= all(f in run_ for f in figures)
            good &= run_["total_ops"] > 0
    ok(good, "every result has summary stats for every figure and per-thread ops that add up")
    two_cpus = len(os.sched_getaffinity(0)) >= 2
    probes = [run_[k] for c in res for run_ in c["runs"] for k in ("c2c_before_ns", "c2c_after_ns")]
    cpus = doc.get("config", {}).get("c2c_cpus", "absent")
    counted, more = len(probes), 0
    # A probe is null when its 20-ms budget ran out before both threads ran
    # (all 24 did, under ThreadSanitizer beside other work): more short runs,
    # up to three, for one probe that ends, before calling the probe broken.
    while two_cpus and probes and all(p is None for p in probes) and more < 3:
        more += 1
        diag(f"every c2c probe null: one more run ({more})")
        extra = os.path.join(outdir, "c2c.json")
        run(["bench", "--lock", "none", "--threads", "1", "--duration", "10ms", "--repeat", "3",
             "--json", extra, "-q"])
        try:
            probes += [run_[k] for c in json.load(open(extra))["results"] for run_ in c["runs"]
                       for k in ("c2c_before_ns", "c2c_after_ns")]
        except (OSError, ValueError, KeyError):
            pass
        if os.path.exists(extra):
            os.remove(extra)  # not an output of the run checked below
    ok(counted == 24 and (cpus is None and all(p is None for p in probes) if not two_cpus else
                          isinstance(cpus, list) and len(cpus) == 2 and cpus[0] != cpus[1] and
                          all(p is None or p > 0 for p in probes) and
                          any(p is not None for p in probes)),
       f"JSON: config.c2c_cpus {cpus} and a round trip before and after each run (ns or null; "
       f"{more} more runs)")
    tas1 = [c for c in res if c["lock"] == "tas" and c["threads"] == 1][0]
    ok(tas1["runs"][0]["lost_updates"] == 0 and tas1["summary"]["ops_per_sec"]["mean"] > 0,
       "tas at 1 thread: positive throughput, no lost updates")
    rows = list(csv.DictReader(open(cs)))
    ok(len(rows) == 12 and all(float(r_["ops_per_sec"]) > 0 for r_ in rows),
       f"CSV has one row per run (12) with ops_per_sec: {len(rows)}")
    ok(all("c2c_before_ns" in r_ and "c2c_after_ns" in r_ for r_ in rows) and
       all(r_[k] == "" or float(r_[k]) > 0 for r_ in rows for k in ("c2c_before_ns", "c2c_after_ns")),
       "CSV: c2c_before_ns and c2c_after_ns in every row (ns, or empty)")
    ok(sorted(os.listdir(outdir)) == ["r.csv", "r.json"], "no temporaries left next to the outputs")
    r = run(["list", "--json"])
    try:
        locks = json.loads(r.stdout)
        ok(r.returncode == 0 and {"none", "busted", "tas"} <= {lk["name"] for lk in locks}
           and all({"name", "family", "flags", "summary", "available"} <= set(lk) for lk in locks),
           "list --json parses and describes every lock")
    except ValueError as e:
        ok(False, f"list --json parses: {e}")


def check_wrapped_step(outdir):
    """A step of 2^64-1 used to wrap to a 0-thread cell (and an ASan overflow)."""
    js = os.path.join(outdir, "w.json")
    r = run(["bench", "--lock", "none", "--threads", "1-2:18446744073709551615", "--duration",
             "10ms", "-q", "--json", js])
    try:
        threads = [c["threads"] for c in json.load(open(js))["results"]]
    except (OSError, ValueError, KeyError):
        threads = None
    ok(r.returncode == 0 and threads == [1],
       f"--threads 1-2:UINT64_MAX runs one 1-thread cell: rc {r.returncode}, cells {threads}")


def check_output_targets(outdir):
    """Issue 15 item 2: what --json/--csv do with devices, links, read-only files."""
    base = ["bench", "--lock", "none", "--threads", "1", "--duration", "10ms", "-q"]
    same = os.path.join(outdir, "same")
    r = run(base + ["--json", same, "--csv", same])
    ok(r.returncode == 2 and "same file" in r.stderr and not os.listdir(outdir),
       f"--json F --csv F refused up front: rc {r.returncode} {r.stderr.strip()}")
    r = run(base + ["--json", same, "--csv", os.path.join(outdir, ".", "same")])
    ok(r.returncode == 2 and "same file" in r.stderr, "--json F --csv ./F refused too")
    # A link to /proc/self/fd/1 inside the test directory, not /dev/stdout
    # itself: a broken lockbench would replace the system's /dev/stdout.
    stdout_link = os.path.join(outdir, "stdout")
    os.symlink("/proc/self/fd/1", stdout_link)
    for spelled in ["-", stdout_link]:
        r = run(base + ["--json", spelled])
        try:
            doc = json.loads(r.stdout)
            good = r.returncode == 0 and len(doc["results"]) == 1 and "ops/s" in r.stderr
        except (ValueError, KeyError):
            good = False
        ok(good and os.path.islink(stdout_link),
           f"--json {spelled}: stdout is the JSON alone, the table on stderr "
           f"(rc {r.returncode}, stdout {r.stdout[:60]!r})")
    os.unlink(stdout_link)
    dev = os.path.join(outdir, "null")
    try:
        os.mknod(dev, 0o666 | 0o020000, os.makedev(1, 3))
        r = run(base + ["--json", dev])
        st = os.stat(dev)
        ok(r.returncode == 0 and (st.st_mode & 0o170000) == 0o020000
           and sorted(os.listdir(outdir)) == ["null"],
           "--json on a /dev/null copy: still a device afterwards, no temporary")
        os.unlink(dev)
    except PermissionError:
        ok(True, "# SKIP mknod not permitted")
    target = os.path.join(outdir, "target.json")
    link = os.path.join(outdir, "link.json")
    open(target, "w").write("old")
    os.symlink("target.json", link)
    r = run(base + ["--json", link])
    ok(r.returncode == 0 and os.path.islink(link) and json.load(open(target))["results"],
       "--json through a symlink: the link stays, its target gets the JSON")
    os.unlink(link)
    os.chmod(target, 0o444)
    r = run(base + ["--csv", target])
    ok(r.returncode == 2 and "--csv" in r.stderr and open(target).read().startswith("{")
       and sorted(os.listdir(outdir)) == ["target.json"],
       f"--csv on a 0444 file: refused before the run, file kept ({r.stderr.strip()})")
    os.chmod(target, 0o644)
    fifo = os.path.join(outdir, "fifo")
    os.mkfifo(fifo)
    r = run(base + ["--json", fifo], timeout=20)
    ok(r.returncode == 2 and "FIFO" in r.stderr, "--json on a FIFO nobody reads: refused, no hang")


def check_interrupt(outdir):
    """Issue 11 item 6: a signal keeps the finished runs (JSON "interrupted": true),
    still written atomically, exit 128 + signal; nothing temporary is left."""
    for sig, name in [(signal.SIGINT, "SIGINT"), (signal.SIGTERM, "SIGTERM"),
                      (signal.SIGHUP, "SIGHUP"), (signal.SIGQUIT, "SIGQUIT")]:
        js, cs = os.path.join(outdir, f"{name}.json"), os.path.join(outdir, f"{name}.csv")
        p = subprocess.Popen([LB, "bench", "--lock", "tas,ticket", "--threads", "1",
                              "--duration", "150ms", "--repeat", "40", "--json", js,
                              "--csv", cs], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # The progress line says when round 2 began: at least two runs finished
        # (a loaded machine may take a while to calibrate before the first).
        seen, deadline = b"", time.monotonic() + 20
        while b"run 2/40" not in seen and time.monotonic() < deadline:
            if select.select([p.stderr], [], [], 0.5)[0]:
                chunk = os.read(p.stderr.fileno(), 4096)
                if not chunk:
                    break
                seen += chunk
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
        out = out.decode(errors="replace")
        try:
            doc = json.load(open(js))
            runs = [r for c in doc["results"] for r in c["runs"]]
            rows = list(csv.DictReader(open(cs)))
            good = doc["interrupted"] is True and doc["interrupted_by"] == name \
                and 1 <= len(runs) < 80 and len(rows) == len(runs) \
                and all(r["total_ops"] > 0 for r in runs)
        except (OSError, ValueError, KeyError) as e:
            good, runs = False, str(e)
        left = sorted(f for f in os.listdir(outdir) if ".tmp." in f)
        ok(good and p.returncode == 128 + sig and "INTERRUPTED" in out and not left,
           f"{name} mid-run: exit {p.returncode} (want {128 + sig}), finished runs kept "
           f"({len(runs) if isinstance(runs, list) else runs}), temporaries left: {left}")
    js = os.path.join(outdir, "early.json")
    # A 30 s run stopped within 5 s of the signal: "at once", with room for a
    # sanitizer build's slow thread teardown (2.6 s under TSan here).
    p = subprocess.Popen([LB, "bench", "--lock", "tas", "--threads", "1", "--duration", "30s",
                          "--json", js], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Signal once the run's threads exist (the c2c probe's or the run's:
    # the handlers are in place by then).  A fixed sleep can land before
    # the handlers exist in a slow (sanitizer) build, which is not what this
    # checks; and off a terminal the progress says a step only when it is
    # done, 30 s later.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and p.poll() is None:
        try:
            if len(os.listdir(f"/proc/{p.pid}/task")) > 1:
                break
        except OSError:
            break
        time.sleep(0.05)
    time.sleep(0.2)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    p.wait(timeout=40)
    try:
        doc = json.load(open(js))
        good = doc["interrupted"] is True and doc["results"] == []
    except (OSError, ValueError, KeyError):
        good = False
    took = time.monotonic() - t0
    ok(good and p.returncode == 130 and took < 5,
       f"SIGINT before any run finished: exit {p.returncode}, stopped {took:.1f} s after the "
       f"signal (30 s run), JSON with no results")


def check_default():
    """`lockbench` alone: the brief default comparison, its header saying what
    it leaves out and the command for the full comparison (its speed, <= 5 s,
    is checked by running it, not here)."""
    r = run([], timeout=120)
    out = unwrap(r.stdout)  # the notes are wrapped at 100 columns
    ok(r.returncode == 0, f"default comparison exits 0 (got {r.returncode}: {r.stderr.strip()[:200]})")
    ok("# default comparison: 3 locks at 1 and" in out, "default: header names its cells")
    ok("# left out:" in out and "per-thread ops CoV" in out and "ticket" in out,
       "default: header lists what was left out (other locks, CoV)")
    ok("# the full comparison" in out and "lockbench bench --repeat 5" in out,
       "default: header gives the full comparison's command")
    head = [l for l in out.splitlines() if l.startswith("lock ")]
    ok(len(head) == 1 and head[0].split() ==
       ["lock", "thr", "ops/s", "±sd%", "ns/op", "cpu_ns", "min/max", "lat_p50", "lat_p99",
        "c2c_ns"],
       f"default: brief columns ({head[0] if head else 'no header'})")
    rows = [l.split() for l in out.splitlines()
            if l and not l.startswith(("#", "lock ")) and len(l.split()) == 10]
    locks = sorted({x[0] for x in rows})
    ok(locks == ["mutex", "pthread-mutex", "qspinlock-pv"] and len(rows) == 6,
       f"default: pthread-mutex, mutex, qspinlock-pv at two thread counts ({len(rows)} rows: {locks})")
    ok(all(0 < float(x[6]) <= 1 for x in rows), "default: min/max in (0, 1] in every row")
    # The cache-line round trip between two CPUs, measured around every run
    # (lib/lb_c2c.h): a range in the header, each cell's median in c2c_ns.
    if len(os.sched_getaffinity(0)) >= 2:
        m = re.search(r"^# cache-line round trip CPU(\d+)<->CPU(\d+): (\d+)-(\d+) ns", out, re.M)
        ok(m and m.group(1) != m.group(2) and 0 < int(m.group(3)) <= int(m.group(4)) and
           all(x[9] == "-" or int(m.group(3)) <= float(x[9].rstrip("~")) <= int(m.group(4))
               for x in rows) and
           (("# c2c_ns ~:" in out) == any(x[9].endswith("~") for x in rows)),
           f"default: round trip range in the header, each cell's c2c_ns inside it, '~' "
           f"footnoted "
           f"({m.group(0) if m else 'no line'}; {[x[9] for x in rows]})")
    else:
        ok(True, "# SKIP one CPU: no round trip to measure")


def check_units_single_run():
    """Every table says its units and which way is better, and a cell of one
    run shows no spread ("-", not a 0.0 that reads as a steady figure)."""
    for args, units in ((["-t", "1"], "ns/op, cpu_ns, lat_* in ns"),
                        (["-t", "1", "--wide"], "ns/op, cpu_ns, ovh_ns, lat_*, p99.9 in ns"),
                        (["-t", "2", "--read-pct", "50"], "rd_p99, wr_p99 in ns"),
                        (["-t", "2", "--read-pct", "50", "--wide"], "*_p50/_p99/_max ns")):
        lock = "tas" if "--read-pct" not in args else "qrwlock"
        r = run(["bench", "-l", lock, "-d", "100ms", "-q"] + args)
        lines = unwrap(r.stdout).splitlines()  # the units line is wrapped at 100 columns
        head = [i for i, l in enumerate(lines) if l.startswith("lock ")]
        row = lines[head[0] + 1].split() if head and head[0] + 1 < len(lines) else []
        sd_col = lines[head[0]].split().index("±sd%") if head else -1
        ok(r.returncode == 0 and head and lines[head[0] - 1].startswith("# units: ") and
           units in lines[head[0] - 1] and "better" in lines[head[0] - 1] and
           len(row) > sd_col >= 0 and row[sd_col] == "-",
           "bench %s: a '# units:' line above the header; ±sd%% of one run is '-' (%s)"
           % (" ".join(args), row[:5]))
    r = run(["bench", "-l", "tas", "-t", "1", "-d", "100ms", "-r", "2", "-q"])
    rows = [l.split() for l in r.stdout.splitlines() if l.startswith("tas ")]
    ok(rows and re.match(r"^\d+\.\d$", rows[0][3]), "two runs: ±sd%% is a number (%s)"
       % (rows[0][:5] if rows else None))


def main():
    check_default()
    check_units_single_run()
    for args, word in BAD:
        with tempfile.TemporaryDirectory() as d:
            check_bad(args, word, d)
    with tempfile.TemporaryDirectory() as d:
        check_unwritable(d)
    with tempfile.TemporaryDirectory() as d:
        check_outputs(d)
    with tempfile.TemporaryDirectory() as d:
        check_wrapped_step(d)
    with tempfile.TemporaryDirectory() as d:
        check_output_targets(d)
    with tempfile.TemporaryDirectory() as d:
        check_interrupt(d)
    done()


main()
