#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_man_options.py LOCKBENCH LOCKTORTURE MANDIR - every option the
programs accept appears in their man pages.  For each command that
`lockbench --help` lists, every option of its option table (the hidden
`lockbench CMD --list-options`, printed from lib/lb_opt.h's rows, so an
option added to a table without a man-page entry fails here) must appear
in lockbench-CMD(1) if that page exists, or in lockbench(1); a command
without a table (a hand-written parser) is read from its --help.
The top-level options in lockbench(1); every option of locktorture's
table (`locktorture --list-options`) in locktorture(1).  TAP output; exit
77 when the man pages were not built (scdoc missing)."""
import os
import re
import subprocess
import sys

lockbench, locktorture, mandir = sys.argv[1:4]

OPTION = re.compile(r"(?<![\w-])(--[a-zA-Z][\w-]*|-[a-zA-Z])(?![\w-])")


def page_text(name):
    """The rendered words of a man page (roff escapes and fonts removed)."""
    path = os.path.join(mandir, name)
    if not os.path.exists(path):
        return None
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"\\f[BIRP]|\\f\(..|\\&|\\\*\(..", "", text)
    return text.replace("\\-", "-").replace("\\(em", "-")


def help_options(argv):
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    text = out.stdout + out.stderr
    return text, sorted(set(OPTION.findall(text)))


def table_options(argv):
    """The rows of an lb_opt table: "--name -x ARG" per line ('-' for none)."""
    out = subprocess.run(argv + ["--list-options"], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        return None
    opts = set()
    for line in out.stdout.splitlines():
        fields = line.split()
        opts.add(fields[0])
        if len(fields) > 1 and fields[1] != "-":
            opts.add(fields[1])
    return sorted(opts)


def mentions(text, option):
    return re.search(r"(?<![\w-])" + re.escape(option) + r"(?![\w-])", text) is not None


if page_text("lockbench.1") is None:
    print("1..0 # SKIP man pages not built (scdoc missing at build time)")
    sys.exit(77)

results = []
main_page = page_text("lockbench.1")
top_help, top_opts = help_options([lockbench, "--help"])
for opt in top_opts:
    results.append((mentions(main_page, opt), f"lockbench {opt} in lockbench(1)"))

# Commands: the indented "  name   summary" lines after "Commands:".
commands = []
in_commands = False
for line in top_help.splitlines():
    if line.startswith("Commands:"):
        in_commands = True
        continue
    if in_commands:
        m = re.match(r"^  ([a-z][\w-]*)\s", line)
        if m:
            commands.append(m.group(1))
        elif line.strip() == "":
            if commands:
                in_commands = False
if not commands:
    results.append((False, "lockbench --help lists at least one command"))
for cmd in commands:
    own = page_text(f"lockbench-{cmd}.1")
    opts = table_options([lockbench, cmd])
    source = "its option table"
    if opts is None:
        _, opts = help_options([lockbench, cmd, "--help"])
        source = "--help (no option table)"
    results.append((len(opts) > 0, f"lockbench {cmd}: options from {source}"))
    for opt in opts:
        where = (own or "") + main_page
        page = f"lockbench-{cmd}(1) or lockbench(1)" if own else "lockbench(1)"
        results.append((mentions(where, opt), f"lockbench {cmd} {opt} in {page}"))

torture_page = page_text("locktorture.1")
opts = table_options([locktorture])
results.append((opts is not None, "locktorture --list-options prints its option table"))
for opt in opts or []:
    results.append((torture_page is not None and mentions(torture_page, opt),
                    f"locktorture {opt} in locktorture(1)"))

for i, (good, what) in enumerate(results, 1):
    print(f"{'ok' if good else 'not ok'} {i} - {what}")
print(f"1..{len(results)}")
sys.exit(0 if all(g for g, _ in results) else 1)
