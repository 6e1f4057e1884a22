#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_option_vocabulary.py LOCKBENCH - the long options several commands
share mean the same in each and take the same units (issue 41), checked
from one table: each command's --help shows the option with the same
argument, the same values parse (a run then stops at an unwritable --json,
so nothing runs), the same bad value is refused in one line naming the
option, and a short letter is the same everywhere except where a command
follows the tool it imitates (rt: cyclictest's -t/-d, hackbench's -l).
TAP output.
"""
import re
import subprocess
import sys

from lbtap import diag, done, ok

LB = sys.argv[1]
OPERANDS = {"ab": ["tas", "ticket"]}
NOWHERE = ["--json", "/nonexistent-dir/x.json"]
# option: (argument, short letter or None, {command: short in that command},
#          values every command accepts, a value every command refuses)
SHARED = {
    "--threads": ("LIST", "-t", {"bench": "-t", "ab": "-t"}, ["1,2", "1-4"], "0"),
    "--duration": ("TIME", "-d", {"bench": "-d", "ab": "-d", "rt": "-D"}, ["500ms", "1.5"],
                   "5parsecs"),
    "--cs": ("WORK", None, {"bench": None, "ab": None}, ["100", "200ns", "5us"], "5x"),
    "--par": ("WORK", None, {"bench": None, "ab": None}, ["0", "1us"], "-1"),
    "--repeat": ("N", "-r", {"bench": "-r", "aim7": "-r", "rt": "-r", "slab": "-r"}, ["3"], "0"),
    "--pin": ("POLICY", None, {"bench": None, "ab": None}, ["none", "compact"], "sideways"),
    "--json": ("FILE", None, {c: None for c in ("bench", "ab", "aim7", "rt", "slab", "compare")},
               [], None),
    "--quiet": ("", "-q", {c: "-q" for c in ("bench", "ab", "aim7", "rt", "slab")}, [], None),
    # The wide table: every command whose default table leaves columns out.
    "--wide": ("", None, {c: None for c in ("bench", "ab", "compare", "rt")}, [], None),
}
# Where a command imitates a tool, its short letters follow that tool's.
IMITATED = {("rt", "--duration"): "cyclictest's -D"}


def lb(args):
    return subprocess.run([LB] + args, capture_output=True, text=True, timeout=60)


helps = {}
for opt, (arg, short, cmds, good, bad) in SHARED.items():
    for cmd, cmd_short in cmds.items():
        if cmd not in helps:
            helps[cmd] = lb([cmd, "--help"]).stdout
        line = next((l for l in helps[cmd].splitlines() if re.search(r"(^|, )" + opt +
                                                                   r"( |$)", l.strip())), "")
        want = (cmd_short + ", " if cmd_short else "") + opt + (" " + arg if arg else "")
        imitated = IMITATED.get((cmd, opt))
        ok(line.strip().startswith(want) and (cmd_short == short or imitated),
           "%s %s: --help shows '%s'%s" % (cmd, opt, want,
                                           " (%s)" % imitated if imitated else ""))
        for value in good:
            r = lb([cmd] + OPERANDS.get(cmd, []) + [opt, value] + NOWHERE)
            if not ok(r.returncode == 2 and "--json" in r.stderr and opt not in r.stderr,
                      "%s %s %s: accepted" % (cmd, opt, value)):
                diag(r.stderr)
        if bad is not None:
            r = lb([cmd] + OPERANDS.get(cmd, []) + [opt, bad] + NOWHERE)
            lines = r.stderr.strip().splitlines()
            ok(r.returncode == 2 and len(lines) == 1 and opt in lines[0] and "accepted" in lines[0],
               "%s %s %s: refused in one line naming %s" % (cmd, opt, bad, opt))
# --lock is the lock(s) to run in every command that takes one: rt's
# --list-lock (the allocator's list_lock, the lock under test) answers to it.
for cmd in ("bench", "slab", "rt", "sim"):
    ok(re.search(r"--lock\b", lb([cmd, "--help"]).stdout), "%s --help names --lock" % cmd)
r = lb(["rt", "--lock", "ticket"] + NOWHERE)
ok(r.returncode == 2 and "--json" in r.stderr and "--lock" not in r.stderr,
   "rt --lock ticket: accepted as --list-lock")
r = lb(["rt", "--lock", "nosuchlock"] + NOWHERE)
lines = r.stderr.strip().splitlines()
ok(r.returncode == 2 and len(lines) == 1 and "--lock" in lines[0] and "accepted" in lines[0],
   "rt --lock nosuchlock: refused in one line naming --lock (%r)" % r.stderr.strip()[:120])
# A long name that means one thing: rt's load-as-threads flag is not --threads.
r = lb(["rt", "--threads"])
ok(r.returncode == 2 and "--threads" in r.stderr,
   "rt --threads: refused (the load as threads is -T/--load-threads)")

# A short letter means one thing in every command (doc/lockbench.md, "One
# option vocabulary"), except where a command takes it from the tool it
# imitates (listed here with the tool).  Each command's rows come from the
# hidden `CMD --list-options` ("--name -x ARG").
COMMANDS = ["bench", "ab", "aim7", "rt", "slab", "compare", "plot", "list"]
TOOL_LETTERS = {
    "rt": {"-g": "hackbench", "-f": "hackbench", "-l": "hackbench", "-s": "hackbench",
           "-p": "hackbench", "-T": "hackbench", "-P": "hackbench", "-t": "cyclictest",
           "-i": "cyclictest", "-d": "cyclictest", "-m": "cyclictest", "-D": "cyclictest"},
    "aim7": {"-f": "re-aim", "-s": "re-aim", "-e": "re-aim", "-i": "re-aim", "-t": "re-aim",
             "-j": "re-aim"},
    "compare": {"-c": "ministat", "-C": "ministat"},
}
# Two long names for one meaning: rt's list_lock is the lock under test.
SAME = {"--list-lock": "--lock"}
meanings = {}  # letter -> {long name: [commands]}
for cmd in COMMANDS:
    for row in lb([cmd, "--list-options"]).stdout.splitlines():
        name, letter = row.split()[:2]
        if letter != "-" and letter not in TOOL_LETTERS.get(cmd, {}):
            meanings.setdefault(letter, {}).setdefault(SAME.get(name, name), []).append(cmd)
for letter in sorted(meanings):
    m = meanings[letter]
    ok(len(m) == 1, "%s means one thing outside the imitated tools' letters: %s" % (
        letter, "; ".join("%s in %s" % (n, ", ".join(c)) for n, c in sorted(m.items()))))
# compare's label gave up -L (the lock under test in rt and slab): the old
# spelling is refused in one line that names the new one.
r = lb(["compare", "-L", "a,b", "pre.json", "post.json"])
lines = r.stderr.strip().splitlines()
ok(r.returncode == 2 and len(lines) == 1 and "-L" in lines[0] and "--label LIST" in lines[0],
   "compare -L: refused in one line naming --label (%r)" % r.stderr.strip())
done()
