#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_progress_cmds.py LOCKBENCH [LOCKTORTURE SOAK PRELOAD_BENCH BUILD] -
every long-running command shows its progress the same way
(lib/lb_progress): on a terminal (a pty) one line redrawn in place with
[i/N] and an ETA, and redrawn while a step runs; into a file one
newline-ended line per finished step and no carriage return; nothing with
--quiet.  locktorture, whose kernel-format lines are its log, draws its
status line on a terminal only, and clears it before each of its own
lines; scripts/soak passes it through on a terminal; scripts/preload-bench
redraws while a program runs.  TAP output.
"""
import atexit
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

from lbtap import diag, done, ok

LB = sys.argv[1]
TORTURE, SOAK, PRELOAD_BENCH, BUILD = (sys.argv[2:6] + [None] * 4)[:4]
# Short runs of each command; rt's one step lasts 2.5 s, so the ticker must
# redraw it on a terminal.
COMMANDS = {
    "bench": ["bench", "-l", "tas", "-t", "1", "-d", "200ms", "-r", "2"],
    "ab": ["ab", "tas", "ticket", "-t", "1", "-d", "300ms"],
    "aim7": ["aim7", "-u", "2", "-t", "300ms"],
    "slab": ["slab", "-T", "bulk", "-r", "1"],
    "rt": ["rt", "-g", "0", "-t", "1", "-D", "2500ms"],
    "sim": ["sim", "-m", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engines",
                                      "sim", "machines", "xeon-e7-2s.machine"),
            "-l", "tas,ticket", "-t", "2,8", "-d", "2ms"],
}
DONE_LINE = re.compile(r"^lockbench: \[(\d+)(?:/(\d+))?\] .*: done in \d+\.\d s(, .*)?; "
                       r"\d+:\d\d elapsed, ETA \d+:\d\d$")


def on_pty(args, argv0=None, stdout_too=False):
    """stderr (and stdout_too) on a pty: (exit status, what the terminal got)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([argv0 or LB] + args, stdin=subprocess.DEVNULL,
                         stdout=slave if stdout_too else subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    got = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            got += chunk
        elif p.poll() is not None:
            break
    p.wait(timeout=30)
    os.close(master)
    return p.returncode, got.decode(errors="replace")


for name, args in COMMANDS.items():
    r = subprocess.run([LB] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    lines = [l for l in r.stderr.splitlines() if "done in" in l]
    good = [DONE_LINE.match(l) for l in lines]
    ok(r.returncode == 0 and lines and all(good) and "\r" not in r.stderr and
       r.stderr.endswith("\n") and
       (good[-1].group(2) is None or int(good[-1].group(1)) == int(good[-1].group(2))),
       "%s, stderr in a file: one line per finished step ([i/N] or, for ab's blocks, [i] at "
       "most once a second; done in, ETA), the last N/N, no carriage return (%d lines)"
       % (name, len(lines)))
    if r.returncode or not lines:
        diag(r.stderr[-600:])
    rc, term = on_pty(args)
    redraws = term.count("\r")
    ok(rc == 0 and redraws >= 2 and re.search(r"\[1(/\d+)?\] ", term) and "ETA" in term and
       "done in" not in term,
       "%s, stderr a terminal: the line redrawn in place (%d carriage returns), [i/N] and an "
       "ETA, no per-step lines" % (name, redraws))
    if name == "rt":
        ok(redraws >= 3, "rt: one 2.5-s step is redrawn while it runs (%d redraws)" % redraws)
    r = subprocess.run([LB] + args + ["-q"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    ok(r.returncode == 0 and "done in" not in r.stderr and "\r" not in r.stderr,
       "%s -q: no progress" % name)


def status_lines(term, prog):
    """The status lines drawn (each after a carriage return)."""
    return [x for x in re.split(r"[\r\n]", term) if x.startswith(prog + ": [")]


# plot: a status line on a terminal while gnuplot runs, nothing elsewhere
# (the picture names it prints are its log).
if shutil.which("gnuplot"):
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "a.json")
        subprocess.run([LB, "bench", "-q", "-l", "tas", "-t", "1,2", "-d", "20ms", "--json", js],
                       stdout=subprocess.DEVNULL, timeout=60)
        rc, term = on_pty(["plot", "-o", os.path.join(tmp, "p"), js])
        drawn = status_lines(term, "lockbench")
        ok(rc == 0 and drawn and re.search(r"^lockbench: \[1/1\] a: gnuplot drawing \d+ "
                                           r"picture\(s\): ", drawn[0]),
           "plot, a terminal: [1/1] while gnuplot runs (%s)" % drawn[:1])
        r = subprocess.run([LB, "plot", "-o", os.path.join(tmp, "q"), js], capture_output=True,
                           text=True, timeout=60)
        ok(r.returncode == 0 and not r.stderr and ".svg" in r.stdout,
           "plot, into a file: the pictures' names, no progress (%r)" % r.stderr[:100])
else:
    ok(True, "# SKIP plot: gnuplot is not installed")

if TORTURE:
    # locktorture: 3 s, its own lines on the same terminal.
    args = ["--type", "tas", "--duration", "3"]
    rc, term = on_pty(args, TORTURE, stdout_too=True)
    drawn = status_lines(term, "locktorture")
    ok(rc == 0 and len(drawn) >= 3 and all(re.search(r"^locktorture: \[1/1\] tas, \d+ writers, "
                                                     r"\d+ readers: \d+:\d\d elapsed, ETA "
                                                     r"\d+:\d\d$", x.rstrip()) for x in drawn),
       "locktorture, a terminal: [1/1], the test and an ETA, redrawn while it runs (%d draws)"
       % len(drawn))
    # A kernel-format line never shares a line with the status line.
    mixed = [x for x in re.split(r"[\r\n]", term) if "locktorture: [" in x and "torture:" in
             x.replace("locktorture: [", "", 1)]
    ok(rc == 0 and "End of test: SUCCESS" in term and not mixed,
       "locktorture, a terminal: its own lines on lines of their own (%s)" % mixed[:1])
    r = subprocess.run([TORTURE] + args, capture_output=True, text=True, timeout=60)
    ok(r.returncode == 0 and "\r" not in r.stdout + r.stderr and "ETA" not in r.stderr,
       "locktorture, into a file: no status line, no carriage return")
if SOAK:
    # soak keeps its logs for the user: here in a directory of the test's own.
    soak_logs = tempfile.mkdtemp(prefix="progress-soak.")
    atexit.register(shutil.rmtree, soak_logs, ignore_errors=True)
    args = ["--build", BUILD, "--each", "2s", "--only", "tas", "--logdir", soak_logs]
    rc, term = on_pty(args, SOAK)
    ok(rc == 0 and len(status_lines(term, "locktorture")) >= 2 and
       re.search(r"soak: \[1/1\] tas +SUCCESS ok", term),
       "soak, a terminal: locktorture's status line, then soak's [1/1] line")
    r = subprocess.run([SOAK] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    ok(r.returncode == 0 and "\r" not in r.stderr and "ETA" not in r.stderr and
       re.search(r"(?m)^soak: \[1/1\] tas +SUCCESS ok$", r.stderr),
       "soak, into a file: one line per run with [i/N], no carriage return")
if PRELOAD_BENCH:
    # One zstd run under glibc and mutex: 4 runs of a few hundred ms, and
    # the input made first (not a counted run).
    args = ["--build", BUILD, "--programs", "zstd", "--locks", "glibc,mutex", "--repeat", "1",
            "--size-mb", "8"]
    if not shutil.which("zstd"):
        ok(True, "# SKIP preload-bench: zstd is not installed")
    else:
        rc, term = on_pty(args, PRELOAD_BENCH)
        drawn = status_lines(term, "preload-bench")
        ok(rc == 0 and any("making the 8 MiB input" in x for x in drawn) and
           any(re.search(r"\[3/3\] zstd under mutex, round 1/1: ", x) for x in drawn),
           "preload-bench, a terminal: the input step, then [i/N] per run (%d draws)" % len(drawn))
        r = subprocess.run([PRELOAD_BENCH] + args, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=120)
        lines = [x for x in r.stderr.splitlines() if "done in" in x]
        ok(r.returncode == 0 and "\r" not in r.stderr and len(lines) == 3,
           "preload-bench, into a file: one line per run, no carriage return (%d)" % len(lines))
done()
