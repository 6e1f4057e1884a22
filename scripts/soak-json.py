#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""soak-json.py FILE EACH ONLY PERTURB EXTRA LOGDIR < records

scripts/soak's --json writer: one tab-separated record a run on stdin
(lock, expect, verdict, rc, writes, reads, failures, seconds, result, note)
into FILE as JSON, schema lockbench-soak-1, with host facts and the config.
Written to a temporary beside FILE and renamed, so FILE is whole or absent.
"""
import json
import os
import platform
import sys
import tempfile


def number(text):
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return None


def main():
    path, each, only, perturb, extra, logdir = sys.argv[1:7]
    runs = []
    for line in sys.stdin:
        f = line.rstrip("\n").split("\t")
        if len(f) != 10:
            continue
        lock, expect, verdict, rc, writes, reads, fails, secs, result, note = f
        runs.append({"lock": lock, "expect": "FAILURE" if expect == "fail" else "SUCCESS",
                     "verdict": verdict, "exit_status": number(rc), "writes": number(writes),
                     "reads": number(reads), "failures": number(fails),
                     "seconds": number(secs), "ok": result.startswith("ok"),
                     "note": note or None})
    try:
        load = [float(x) for x in open("/proc/loadavg").read().split()[:3]]
    except OSError:
        load = None
    doc = {
        "schema": "lockbench-soak-1",
        "host": {"hostname": platform.node(), "kernel": platform.release(),
                 "machine": platform.machine(), "cpus_online": os.cpu_count(),
                 "load_average": load},
        "config": {"each": each, "only": only.split(",") if only else [],
                   "perturb": perturb or None, "extra": extra.split() if extra else [],
                   "logdir": logdir},
        "results": runs,
        "summary": {"runs": len(runs), "ok": sum(r["ok"] for r in runs),
                    "bad": sum(not r["ok"] for r in runs),
                    "notes": sum(r["note"] is not None for r in runs)},
    }
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp.", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.rename(tmp, path)
    except OSError as e:
        os.unlink(tmp)
        print("soak: --json: cannot write %s: %s" % (path, e.strerror), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
