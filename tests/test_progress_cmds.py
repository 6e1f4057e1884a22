#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_progress_cmds.py LOCKBENCH - every long-running command shows its
progress the same way (lib/lb_progress): on a terminal (a pty) one line
redrawn in place with [i/N] and an ETA, and redrawn while a step runs; into
a file one newline-ended line per finished step and no carriage return;
nothing with --quiet.  TAP output.
"""
import os
import pty
import re
import select
import subprocess
import sys
import time

from lbtap import diag, done, ok

LB = sys.argv[1]
# Short runs of each command; rt's one step lasts 2.5 s, so the ticker must
# redraw it on a terminal.
COMMANDS = {
    "bench": ["bench", "-l", "tas", "-t", "1", "-d", "200ms", "-r", "2"],
    "ab": ["ab", "tas", "ticket", "-t", "1", "-d", "300ms"],
    "aim7": ["aim7", "-u", "2", "-t", "300ms"],
    "slab": ["slab", "-T", "bulk", "-r", "1"],
    "rt": ["rt", "-g", "0", "-t", "1", "-D", "2500ms"],
}
DONE_LINE = re.compile(r"^lockbench: \[(\d+)(?:/(\d+))?\] .*: done in \d+\.\d s(, .*)?; "
                       r"\d+:\d\d elapsed, ETA \d+:\d\d$")


def on_pty(args):
    """stderr on a pty: (exit status, what the terminal got)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([LB] + args, stdout=subprocess.DEVNULL, stderr=slave)
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
done()
