#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 25, compare (and plot where the reader is shared): a schema_name
without an integer schema_version is refused (exit 2), not a crash; values
whose variance overflows are no abort; 20,000 cells finish (2,000 in a
sanitizer build); --json/--csv follow bench's output rules (not the same
file, never an input, '-' moves the table to stderr); a signal leaves no
temporary; -C lines over 4 KiB are handled; a non-finite round trip is
never printed.
TAP output.  usage: test_compare_harden.py LOCKBENCH"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import diag, done, ok  # noqa: E402 (tests/lbtap.py, after the sys.path line)

LB = os.path.abspath(sys.argv[1])


def doc(nlocks=2, threads=(1, 2), repeats=5, value=None, c2c=None):
    """A bench file; its params as bench writes them (five never vary)."""
    cells = []
    for li in range(nlocks):
        for t in threads:
            runs = []
            for r in range(repeats):
                v = value(li, t, r) if value else 1e6 * (1 + li) / t * (1 + 0.01 * r)
                run = {"repeat_index": r, "ops_per_sec": v}
                if c2c is not None:
                    run["c2c_before_ns"] = c2c
                    run["c2c_after_ns"] = c2c
                runs.append(run)
            cells.append({"params": {"lock": f"lock{li:02d}", "threads": t, "read_pct": None,
                                     "cs_ns": 0.0, "par_ns": 0.0, "cs_lines": 1, "pin": "none"},
                          "runs": runs})
    return {"schema": "lockbench-bench-1", "schema_name": "lockbench-bench",
            "schema_version": 1, "host": {"hostname": "h"}, "config": {"command": "bench"},
            "results": cells}


def write(path, d):
    with open(path, "w") as f:
        json.dump(d, f)


def run(args, timeout=60, cwd=None):
    try:
        return subprocess.run([LB] + args, capture_output=True, text=True, timeout=timeout,
                              cwd=cwd)
    except subprocess.TimeoutExpired:
        return None


def one_line_exit2(r):
    return r is not None and r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


with tempfile.TemporaryDirectory() as tmp:
    good = os.path.join(tmp, "good.json")
    write(good, doc())

    # 2. schema_name without an integer schema_version, and no "schema".
    for what, ver in (("missing", None), ("a string", "1"), ("a real", 1.0), ("null", "null")):
        d = doc()
        del d["schema"]
        if ver is None:
            del d["schema_version"]
        elif ver == "null":
            d["schema_version"] = None
        else:
            d["schema_version"] = ver
        bad = os.path.join(tmp, "nover.json")
        with open(bad, "w") as f:
            text = json.dumps(d)
            if isinstance(ver, float):
                text = text.replace('"schema_version": 1.0', '"schema_version": 1.0')
            f.write(text)
        for cmd in (["compare", good, bad], ["plot", "-o", os.path.join(tmp, "p"), bad]):
            r = run(cmd)
            ok(one_line_exit2(r) and "schema_version" in r.stderr,
               f"{cmd[0]}: schema_version {what} and no schema: exit "
               f"{r.returncode if r else 'timeout'}, one line naming schema_version")
            if r and r.returncode != 2:
                diag(r.stderr, last=3)

    # 3. Values whose variance overflows.
    for what, value in (("+-1e300", lambda li, t, r: 1e300 * (-1) ** r),
                        ("1.7e308", lambda li, t, r: 1.7e308 - r * 1e300),
                        ("-1.7e308 and 1.7e308", lambda li, t, r: 1.7e308 * (-1) ** r)):
        a, b = os.path.join(tmp, "ha.json"), os.path.join(tmp, "hb.json")
        write(a, doc(value=value))
        write(b, doc())
        r = run(["compare", a, b])
        good_rc = r is not None and (r.returncode == 0 and "not computable" in r.stdout or
                                     one_line_exit2(r))
        ok(good_rc, f"compare with {what}: exit {r.returncode if r else 'timeout'} "
           "('not computable' in the verdict, or refused)")
        if r and not good_rc:
            diag(r.stderr, last=3)
        pa, pb = os.path.join(tmp, "ha.txt"), os.path.join(tmp, "hb.txt")
        with open(pa, "w") as f:
            f.write("".join(f"{value(0, 1, i)!r}\n" for i in range(6)))
        with open(pb, "w") as f:
            f.write("".join(f"{i + 1}\n" for i in range(6)))
        r = run(["compare", "-C", "1", pa, pb])
        good_rc = r is not None and (r.returncode == 0 and "not computable" in r.stdout or
                                     one_line_exit2(r))
        ok(good_rc, f"compare -C 1 with {what}: exit {r.returncode if r else 'timeout'}")
        if r and not good_rc:
            diag(r.stderr, last=3)

    # 5. 20 locks x 1000 thread counts (20 x 100 in the sanitizer builds,
    # LB_SANITIZE: the same code paths for the sanitizers, a tenth of the
    # time; the size is build/'s check).
    nthreads = 1000 if os.environ.get("LB_SANITIZE", "none") in ("", "none") else 100
    big = os.path.join(tmp, "big.json")
    write(big, doc(nlocks=20, threads=range(1, nthreads + 1), repeats=2))
    t0 = time.monotonic()
    # (seconds on a quiet machine; the limit catches a hang or quadratic
    # work in a sanitizer build beside a parallel build, not a slow machine)
    r = run(["compare", big, big], timeout=150)
    ok(r is not None and r.returncode == 0,
       f"compare of {20 * nthreads:,} cells with itself: exit {r.returncode if r else 'timeout'} in "
       f"{time.monotonic() - t0:.1f} s (limit 150 s)")

    # 6. Output rules.
    other = os.path.join(tmp, "other.json")
    write(other, doc())
    out = os.path.join(tmp, "out.json")
    r = run(["compare", good, other, "--json", out, "--csv", out])
    ok(one_line_exit2(r) and not os.path.exists(out),
       f"--json F --csv F: exit {r.returncode}, one line, nothing written")
    before = open(other).read()
    r = run(["compare", good, other, "--json", other])
    ok(one_line_exit2(r) and open(other).read() == before,
       f"--json naming an input file: exit {r.returncode}, the input kept")
    write(other, doc())
    r = run(["compare", good, other, "--csv", "./" + os.path.relpath(good, tmp)], cwd=tmp)
    ok(one_line_exit2(r) and open(good).read() == json.dumps(doc()),
       f"--csv naming an input file by another path: exit {r.returncode}, the input kept")
    write(other, doc())
    write(good, doc())
    r = run(["compare", good, other, "--json", "-"])
    try:
        parsed = json.loads(r.stdout)
    except ValueError:
        parsed = None
    ok(r.returncode == 0 and parsed is not None and "LABEL" in r.stderr,
       f"--json -: exit {r.returncode}, stdout is the JSON alone, the table on stderr")

    # 7. Signals: no temporary.  The table (2,000 cells) fills the pipe
    # nobody reads, so compare blocks with its --json/--csv temporaries open.
    big2 = os.path.join(tmp, "big2.json")
    write(big2, doc(nlocks=4, threads=range(1, 501), repeats=2))
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        outd = os.path.join(tmp, f"sig{sig.value}")
        os.mkdir(outd)
        p = subprocess.Popen([LB, "compare", big2, big2, "--json", os.path.join(outd, "c.json"),
                              "--csv", os.path.join(outd, "c.csv")],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any(".tmp" in f for f in os.listdir(outd)):
            time.sleep(0.005)
        saw_tmp = any(".tmp" in f for f in os.listdir(outd))
        p.send_signal(sig)
        p.communicate(timeout=30)
        left = [f for f in os.listdir(outd) if ".tmp" in f]
        ok(not left and saw_tmp, f"compare ended by {sig.name} with its outputs open: exit "
           f"{p.returncode}, temporaries seen {saw_tmp}, left {left}")

    # 9. -C: a line over 4 KiB is one line (or refused naming the limit).
    longf = os.path.join(tmp, "long.txt")
    with open(longf, "w") as f:
        for i in range(6):
            f.write(f"{i + 1} " + "x" * 5000 + " 123456\n")
    short = os.path.join(tmp, "short.txt")
    with open(short, "w") as f:
        f.write("".join(f"{i + 1}\n" for i in range(6)))
    r = run(["compare", "-C", "1", longf, short])
    counts = [ln for ln in r.stdout.splitlines() if ln.strip().startswith("(A)")]
    ok((r.returncode == 0 and counts and counts[0].split("|")[1].strip() == "6") or
       (one_line_exit2(r) and ("4096" in r.stderr or "KiB" in r.stderr)),
       f"-C 1 with 5 KiB lines: exit {r.returncode}, (A) row {counts[:1]}")
    r = run(["compare", "-C", "3", longf, longf])
    ok(r.returncode == 0 and "123456" in r.stdout,
       f"-C 3 on 5 KiB lines reads the third field of each line (exit {r.returncode})")

    # 9. A non-finite round trip is never printed.
    a, b = os.path.join(tmp, "c2ca.json"), os.path.join(tmp, "c2cb.json")
    write(a, doc(c2c=1.7e308))
    write(b, doc(c2c=100.0))
    r = run(["compare", a, b])
    ok(r.returncode in (0, 2) and "inf" not in r.stdout.lower().replace("info", ""),
       f"round trips of 1.7e308 ns: exit {r.returncode}, no 'inf' printed")
done()
