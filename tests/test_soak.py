#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_soak.py SOAK - scripts/soak's summary on scripted locktorture output.

A stand-in locktorture (a shell script in a temporary build directory)
prints fixed `--list` rows and fixed end-of-run statistics, so the table's
note column, --json (schema, host, config, one record a run, written whole)
and the exit status are checked without a real torture run.  TAP output.
"""
import json
import os
import stat
import subprocess
import sys
import tempfile

from lbtap import done, ok

SOAK = sys.argv[1]

FAKE = r"""#!/bin/sh
# A stand-in for locktorture: fixed output per --type.
if [ "$1" = --list ]; then
	printf 'fair real\nstarving real\nuneven real\nbusted busted\nnone nolock\n'
	exit 0
fi
case "$2" in
fair)
	echo "Writes:  Total: 4000  Max/Min: 1100/900   Fail: 0 "
	echo "Reads :  Total: 9000  Max/Min: 1000/800   Fail: 0 "
	echo "fair-torture:--- End of test: SUCCESS: x"; exit 0 ;;
starving)
	echo "Writes:  Total: 5  Max/Min: 5/0 ???  Fail: 0 "
	echo "Reads :  Total: 9000  Max/Min: 1000/800   Fail: 0 "
	echo "starving-torture:--- End of test: SUCCESS: x"; exit 0 ;;
uneven)
	echo "Writes:  Total: 4000  Max/Min: 3000/100 ???  Fail: 0 "
	echo "uneven-torture:--- End of test: SUCCESS: x"; exit 0 ;;
busted)
	echo "Writes:  Total: 10  Max/Min: 5/1   Fail: 1 !!!"
	echo "busted-torture: failures: writers=3 readers=0"
	echo "busted-torture:--- End of test: FAILURE: x"; exit 1 ;;
esac
exit 3
"""


def soak(build, *args):
    # --logdir inside the test's own directory: soak keeps its logs for the
    # user, so without it every run would leave a /tmp/soak.* behind.
    logs = os.path.join(os.path.dirname(build), "logs")
    return subprocess.run(["bash", SOAK, "--build", build, "--each", "1s", "--logdir", logs] +
                          list(args),
                          capture_output=True, text=True, timeout=60)


with tempfile.TemporaryDirectory() as d:
    build = os.path.join(d, "build")
    os.makedirs(os.path.join(build, "torture"))
    exe = os.path.join(build, "torture", "locktorture")
    with open(exe, "w") as f:
        f.write(FAKE)
    os.chmod(exe, os.stat(exe).st_mode | stat.S_IXUSR)
    js = os.path.join(d, "soak.json")
    r = soak(build, "--json", js)
    rows = {l.split()[0]: l for l in r.stdout.splitlines() if l and not l.startswith("logs:")}
    ok(r.returncode == 0 and set(rows) == {"lock", "fair", "starving", "uneven", "busted"},
       "every real lock and busted ran; nolock skipped; exit 0 (%d)" % r.returncode)
    ok(rows.get("lock", "").split()[-1] == "note", "the table has a note column")
    ok(rows.get("fair", "").rstrip().endswith("ok"), "a balanced run: no note")
    ok("a writer starved (got the lock 0 times)" in rows.get("starving", ""),
       "a writer with 0 acquisitions is called starved, and the run still passes")
    ok("writers imbalanced (???)" in rows.get("uneven", ""),
       "locktorture's ??? mark becomes an imbalance note")
    try:
        doc = json.load(open(js))
    except (OSError, ValueError) as e:
        doc = {}
        ok(False, "--json wrote a JSON file (%s)" % e)
    res = {x["lock"]: x for x in doc.get("results", [])}
    ok(doc.get("schema") == "lockbench-soak-1" and doc.get("host", {}).get("cpus_online") and
       doc.get("config", {}).get("each") == "1s", "JSON: schema, host facts, config")
    ok(res.get("starving", {}).get("writes") == 5 and res["starving"]["ok"] is True and
       "starved" in (res["starving"]["note"] or "") and res.get("fair", {}).get("note") is None,
       "JSON: writes, ok and the note per run")
    ok(res.get("busted", {}).get("expect") == "FAILURE" and res["busted"]["verdict"] == "FAILURE"
       and res["busted"]["failures"] == 3 and res["busted"]["ok"] is True,
       "JSON: busted expected to fail, failed, counted as ok")
    ok(doc.get("summary") == {"runs": 4, "ok": 4, "bad": 0, "notes": 2},
       "JSON: summary counts (%s)" % doc.get("summary"))
    ok(not [f for f in os.listdir(d) if ".tmp." in f], "no temporary left beside the JSON")
    r = soak(build, "--json", os.path.join(d, "no", "such", "x.json"))
    ok(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--json" in r.stderr,
       "--json into a missing directory: exit 2, one line naming --json")
    r = soak(build, "--only", "uneven", "--json", js)
    ok(r.returncode == 0 and [x["lock"] for x in json.load(open(js))["results"]] == ["uneven"],
       "--only: the JSON holds that lock alone")
done()
