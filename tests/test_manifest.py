#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The command manifest (bench/meson.build) and what it generates agree:
`lockbench --help` lists the rows' commands in the rows' order, a row with
'man' has its page source and its built page, a row with 'tests' has that
test folder, every row's folder exists, and a row with 'schema' is a schema
`compare` accepts.  TAP.

usage: test_manifest.py LOCKBENCH SOURCE_ROOT BUILD_ROOT
"""
import ast
import os
import re
import subprocess
import sys

from lbtap import commands, done, ok

lockbench, src, build = sys.argv[1:4]


def manifest_rows():
    text = open(os.path.join(src, "bench", "meson.build")).read()
    body = re.search(r"lb_command_manifest = \[(.*?)\n\]", text, re.S).group(1)
    rows = []
    for line in body.splitlines():
        line = line.strip().rstrip(",")
        if line.startswith("{"):
            rows.append(ast.literal_eval(line.replace("true", "True").replace("false", "False")))
    return rows


rows = manifest_rows()
ok(len(rows) >= 8, "the manifest has its rows (%d)" % len(rows))
listed = commands(lockbench)
ok(listed == [r["name"] for r in rows],
      "--help lists the manifest's commands in its order: %s" % ",".join(listed))
for r in rows:
    name = r["name"]
    home = "results" if r.get("tool") else "bench"
    ok(os.path.isfile(os.path.join(src, home, r["dir"], "meson.build")),
          "%s: its folder %s/%s has a meson.build" % (name, home, r["dir"]))
    if r.get("man"):
        ok(os.path.isfile(os.path.join(src, "doc", "lockbench-%s.1.scd" % name)),
              "%s: doc/lockbench-%s.1.scd exists" % (name, name))
        # Built where scdoc is (the build made lockbench.1 too).
        if os.path.isfile(os.path.join(build, "doc", "lockbench.1")):
            ok(os.path.isfile(os.path.join(build, "doc", "lockbench-%s.1" % name)),
                  "%s: its man page was built" % name)
    if "tests" in r:
        ok(os.path.isfile(os.path.join(src, "tests", r["tests"], "meson.build")),
              "%s: tests/%s/meson.build exists" % (name, r["tests"]))
    rc = subprocess.run([lockbench, name, "--help"], capture_output=True, text=True)
    ok(rc.returncode == 0 and rc.stdout.strip() != "", "%s --help works" % name)
# A file of an unknown schema: compare's refusal names every accepted schema.
tmp = os.path.join(build, "manifest-unknown-schema.json")
with open(tmp, "w") as f:
    f.write('{"schema": "lockbench-nosuch-1", "schema_name": "lockbench-nosuch", '
            '"schema_version": 1, "results": []}\n')
rc = subprocess.run([lockbench, "compare", tmp, tmp], capture_output=True, text=True)
os.unlink(tmp)
for r in rows:
    if r.get("schema"):
        ok("lockbench-%s-" % r["name"] in rc.stderr,
              "%s: compare accepts schema lockbench-%s" % (r["name"], r["name"]))
done()
