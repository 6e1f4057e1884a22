#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_doc_macros.py SOURCEDIR - every per-translation-unit policy macro an
embeddable header reads (`#ifndef LB_...` in locks/include/lockbench/, the
include guards aside) has a row in doc/embedding.md's table of macros that
may differ between files.  TAP output."""
import pathlib
import re
import sys

from lbtap import done, ok  # tests/lbtap.py

src = pathlib.Path(sys.argv[1])
headers = sorted((src / "locks" / "include" / "lockbench").glob("*.h"))
macros = {}
for h in headers:
    for m in re.finditer(r"^#ifndef (LB_[A-Z0-9_]+)", h.read_text(), re.M):
        name = m.group(1)
        if not name.endswith("_H"):
            macros.setdefault(name, h.name)
doc = (src / "doc" / "embedding.md").read_text()
rows = {m.group(1) for m in re.finditer(r"^\| `(LB_[A-Z0-9_]+)` \|", doc, re.M)}
ok(len(macros) > 0, f"found {len(macros)} policy macros in {len(headers)} headers")
for name, header in sorted(macros.items()):
    ok(name in rows, f"{name} ({header}) has a row in doc/embedding.md's macro table")
done()
