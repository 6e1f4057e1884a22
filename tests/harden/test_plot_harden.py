#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 25, plot: nothing in a result file or its name is ever evaluated by
gnuplot (backquotes, $(), quotes, newlines in the command, host name, lock
names, param keys, the file name and the output directory); files gnuplot
cannot draw as they are (an rt file without --rt-alloc, null, empty, huge,
negative data) draw what can be drawn with one line per skipped metric, and
bad input exits 2; a signal leaves no temporary; 20,000 cells finish (2,000 in a sanitizer build).
TAP output; skipped when gnuplot is absent.
usage: test_plot_harden.py LOCKBENCH"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import diag, done, ok, signal_and_reap, skip_all  # noqa: E402 (after the sys.path line)

LB = os.path.abspath(sys.argv[1])
if not shutil.which("gnuplot"):
    skip_all("gnuplot is not installed (Debian: gnuplot-nox)")

# Every one of these, evaluated by a shell or gnuplot, creates a file
# named PWNED* in the current directory (the test's temporary directory).
EVIL = ["`touch PWNED_bq`", "$(touch PWNED_dollar)", "'; system('touch PWNED_sq'); '",
        "\"; system(\"touch PWNED_dq\"); \"", "\\\"`touch PWNED_bs`",
        "x\nsystem('touch PWNED_nl')\n", "@m", "EOD\nsystem('touch PWNED_eod')\n"]
EVIL_TEXT = " ".join(EVIL)


def bench_doc(nlocks=2, threads=(1, 2, 4), repeats=3, lock_names=None, command="bench -x",
              hostname="plothost", values=None, extra_params=None, drop_threads=False,
              ops_only=False):
    """ops_only: runs without per_thread and the latency fields (built
    without them: a per_thread list per run is quadratic in the thread
    counts, 10 million entries for the 20,000-cell file, ~70 s here)."""
    cells = []
    for li in range(nlocks):
        for t in threads:
            runs = []
            for r in range(repeats):
                ops = 1e7 * (1 + li) / max(abs(t), 1) * (1 + 0.01 * r)
                v = values(li, t, r) if values else ops
                run = {"repeat_index": r, "total_ops": 1000, "ops_per_sec": v,
                       "ns_per_op": 1e9 / ops, "cpu_ns_per_op": 1e9 / ops}
                if not ops_only:
                    run.update({"lat_p50_ns": 20.0 * t, "lat_p99_ns": 200.0 * t,
                                "lat_p999_ns": 900.0 * t, "lat_max_ns": 5e4 * t})
                run["write_side"] = {"latency_samples": 1000}
                if not ops_only:
                    run["per_thread"] = [{"index": i, "ops": 100 + i} for i in range(max(t, 1))]
                runs.append(run)
            params = {"lock": lock_names[li] if lock_names else f"lock{li:02d}",
                      "threads": t, "read_pct": None, "cs_ns": 0.0, "par_ns": 0.0,
                      "cs_lines": 1, "pin": "none"}
            if drop_threads:
                del params["threads"]
            params.update(extra_params(li, t) if extra_params else {})
            cells.append({"params": params, "summary": {}, "runs": runs})
    return {"schema": "lockbench-bench-1", "schema_name": "lockbench-bench", "schema_version": 1,
            "host": {"cpu_model": "CPU " + EVIL_TEXT, "cpus_online": 8,
                     "kernel": "6.1.0 " + EVIL_TEXT, "hostname": hostname},
            "metrics": {}, "config": {"command": command}, "results": cells}


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)


def plot(args, cwd, timeout=120, env=None):
    return subprocess.run([LB, "plot"] + args, capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env=env)


def pwned(tmp):
    found = []
    for root, dirs, files in os.walk(tmp):
        found += [os.path.join(root, f) for f in files + dirs if "PWNED" in f and "`" not in f
                  and "$" not in f and "'" not in f and "\"" not in f and "\n" not in f]
    for f in found:
        os.unlink(f)
    return found


def leftovers(d):
    return [f for f in os.listdir(d) if ".tmp" in f] if os.path.isdir(d) else []


with tempfile.TemporaryDirectory() as tmp:
    # 1. Security: evil strings in every field that reaches the script.
    cases = {
        "command": bench_doc(command="bench " + EVIL_TEXT),
        "hostname": bench_doc(hostname="h" + EVIL_TEXT),
        "lock names": bench_doc(lock_names=["a" + EVIL[0] + EVIL[2], "b" + EVIL[3] + EVIL[5]]),
        "a param key (generic plot)": bench_doc(
            drop_threads=True, extra_params=lambda li, t: {"n'`touch PWNED_key`\n'": t}),
        "param values in bars": bench_doc(threads=(4,), lock_names=[EVIL_TEXT, EVIL[7]]),
        # a string that starts with a quote (found by tests/harden/sweep.py:
        # gnuplot 5.4 read the doubled '' as an empty string, exit 1)
        "a lock name starting with a quote": bench_doc(lock_names=[EVIL[2], "'"]),
    }
    def plot_evil(what, doc, extra):
        """Plot doc (evil strings in `what`) with the extra options: exit 0, nothing run."""
        path = os.path.join(tmp, "evil.json")
        write(path, doc)
        out = os.path.join(tmp, "out")
        r = plot(extra + ["-o", out, path], tmp)
        ran = pwned(tmp)
        how = "plot " + " ".join(extra) + " " if extra else "plot "
        ok(r.returncode == 0 and not ran,
           f"{how}with shell/gnuplot syntax in the {what}: exit {r.returncode}, nothing run "
           f"(created: {ran})")
        if r.returncode:
            diag(r.stderr, last=10)
        shutil.rmtree(out, ignore_errors=True)

    for what, doc in cases.items():
        plot_evil(what, doc, [])
    # --overlay writes its own script (plot_overlay.c): the same rule there.
    for what in ("command", "hostname", "lock names"):
        plot_evil(what, cases[what], ["--overlay"])
    # The file name and the output directory.
    name = "f`touch PWNED_fn`$(touch PWNED_fn2)';x\"y.json"
    write(os.path.join(tmp, name), bench_doc())
    outdir = os.path.join(tmp, "o`touch PWNED_dir`'\"$(touch PWNED_dir2)")
    r = plot(["-o", outdir, name], tmp)
    pics = os.listdir(outdir) if os.path.isdir(outdir) else []
    ran = pwned(tmp)
    ok(r.returncode == 0 and not ran and any(p.endswith(".svg") for p in pics),
       f"plot of a file named {name!r} into {os.path.basename(outdir)!r}: exit {r.returncode}, "
       f"pictures {len(pics)}, nothing run (created: {ran})")
    if r.returncode:
        diag(r.stderr, last=10)

    # 8. What gnuplot cannot draw as it is.
    rt = os.path.join(tmp, "rt.json")
    run = subprocess.run([LB, "rt", "-g", "0", "-t", "1", "-D", "100ms", "-q", "--json", rt],
                         capture_output=True, text=True, timeout=60)
    if run.returncode == 0:
        r = plot(["-o", os.path.join(tmp, "rtout"), rt], tmp)
        skipped = [ln for ln in r.stderr.splitlines() if "rt_alloc" in ln]
        ok(r.returncode == 0 and len(skipped) >= 1 and "line " not in r.stderr,
           f"an rt file without --rt-alloc draws (exit {r.returncode}) and says what it "
           f"skipped in one line per metric: {skipped}")
        if r.returncode:
            diag(r.stderr, last=8)
    else:
        ok(False, f"rt -g 0 made a file: {run.stderr[-300:]}")

    def plot_files(docs, extra, label, want_rc, want_text, max_ok_lines):
        """plot EXTRA -o OUT FILES of docs: want_rc, at most max_ok_lines on
        stderr when it draws and ONE line when it refuses (the skipped-metric
        lines came before the "nothing to draw" error: found by
        tests/harden/sweep.py), no gnuplot errors, no temporaries."""
        paths = []
        for i, doc in enumerate(docs):
            paths.append(os.path.join(tmp, f"in{i}.json"))
            write(paths[-1], doc)
        out = os.path.join(tmp, "dout")
        shutil.rmtree(out, ignore_errors=True)
        r = plot(extra + ["-o", out] + paths, tmp)
        lines = r.stderr.strip().splitlines()
        good = r.returncode == want_rc and "gnuplot failed" not in r.stderr and \
            len(lines) <= (max_ok_lines if want_rc == 0 else 1) and \
            (want_text is None or want_text in r.stderr)
        ok(good and not leftovers(out), f"plot {' '.join(extra) + ' ' if extra else ''}of "
           f"{label}: exit {r.returncode} (want {want_rc}), {len(lines)} line(s) on stderr, "
           f"no temporaries")
        if not good:
            diag(r.stderr, last=8)

    def plot_doc(doc, label, want_rc, want_text=None):
        plot_files([doc], [], label, want_rc, want_text, 4)

    plot_doc(bench_doc(values=lambda li, t, r: None), "null ops_per_sec everywhere", 0,
             "ops_per_sec has no finite value")
    nothing = bench_doc(values=lambda li, t, r: None)
    for c in nothing["results"]:
        for r in c["runs"]:
            for k in ("per_thread", "lat_p50_ns", "lat_p99_ns", "lat_p999_ns", "lat_max_ns"):
                r[k] = None
    plot_doc(nothing, "null in every metric it draws", 2, "nothing to draw")
    plot_doc(bench_doc(values=lambda li, t, r: None if li else 5.0e6),
             "null ops_per_sec in one lock", 0)
    empty = bench_doc()
    empty["results"] = []
    plot_doc(empty, "no results", 2, "nothing to draw")
    plot_doc(bench_doc(values=lambda li, t, r: 1.7e308 * (-1) ** r), "huge values", 0)
    plot_doc(bench_doc(values=lambda li, t, r: -1e6 * t), "negative values", 0)
    plot_doc(bench_doc(threads=(0, 2, 4)), "threads = 0 on a log x axis", 0)
    plot_doc(bench_doc(threads=(-4, 2, 4)), "negative threads on a log x axis", 0)

    # 8, --overlay (found by tests/harden/sweep.py): one file with one
    # series, or files whose x values never match, have no delta to draw;
    # gnuplot refused the delta panel's "plot NaN" (exit 1, its errors).
    def overlay_doc(docs, label, want_rc, want_text=None):
        plot_files(docs, ["--overlay"], label, want_rc, want_text, 2)

    overlay_doc([bench_doc(nlocks=1)], "one file with one series", 0)
    overlay_doc([bench_doc(nlocks=1, threads=(1, 2)), bench_doc(nlocks=1, threads=(4, 8))],
                "two files with no common thread count", 0)
    overlay_doc([bench_doc(values=lambda li, t, r: None)], "null values everywhere", 2,
                "nothing to draw")

    # 7. A plot killed while gnuplot runs leaves no temporary.
    fake = os.path.join(tmp, "fakebin")
    os.mkdir(fake)
    with open(os.path.join(fake, "gnuplot"), "w") as f:
        # exec: the sleep is gnuplot, so plot's SIGKILL ends it.  A child
        # sleep outlived its killed shell and held the stderr pipe, so each
        # case below waited the whole 30 s out in signal_and_reap.
        f.write("#!/bin/sh\nexec sleep 30\n")
    os.chmod(os.path.join(fake, "gnuplot"), 0o755)
    env = dict(os.environ, PATH=fake + ":" + os.environ.get("PATH", ""))
    write(os.path.join(tmp, "sig.json"), bench_doc())
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        out = os.path.join(tmp, "sigout")
        shutil.rmtree(out, ignore_errors=True)
        p = subprocess.Popen([LB, "plot", "-o", out, "sig.json"], cwd=tmp, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not leftovers(out):
            time.sleep(0.02)
        time.sleep(0.1)
        signal_and_reap(p, sig, timeout=10)
        time.sleep(0.2)
        left = leftovers(out)
        ok(not left and p.returncode != 0,
           f"plot ended by {sig.name} while gnuplot runs: exit {p.returncode}, left {left}")

    # 5. 20 locks x 1000 thread counts: finishes (a few seconds on a quiet
    # machine; the limit is for a sanitizer build beside a parallel build --
    # what it catches is a hang or quadratic work, not a slow machine).
    # The sanitizer builds (LB_SANITIZE) plot 20 x 100: the same code paths
    # for the sanitizers, a tenth of the time; the size is build/'s check.
    nthreads = 1000 if os.environ.get("LB_SANITIZE", "none") in ("", "none") else 100
    big = bench_doc(nlocks=20, threads=range(1, nthreads + 1), repeats=1, ops_only=True)
    write(os.path.join(tmp, "big.json"), big)
    t0 = time.monotonic()
    try:
        r = plot(["-o", os.path.join(tmp, "bigout"), "-f", "svg", "big.json"], tmp, timeout=150)
        rc = r.returncode
    except subprocess.TimeoutExpired:
        rc = "timeout"
    ok(rc == 0, f"plot of {20 * nthreads:,} cells: exit {rc} in {time.monotonic() - t0:.1f} s "
       "(limit 150 s)")
done()
