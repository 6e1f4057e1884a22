#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Parse a JSON file with Python's strict parser and print it in canonical
form (sorted keys, no spaces, ASCII escapes, floats as repr) for test_json.c
to compare.  Exits non-zero if the file is not valid JSON."""
import json
import sys


def reject_constant(name):
    raise ValueError("non-standard JSON constant " + name)


with open(sys.argv[1], encoding="utf-8") as f:
    doc = json.load(f, parse_constant=reject_constant)
sys.stdout.write(json.dumps(doc, sort_keys=True, ensure_ascii=True, separators=(",", ":")))
