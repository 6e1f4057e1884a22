#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_function_length.py SOURCEDIR [--list N] - no C function outside
tests/ is longer than 150 lines, from the line that names it to its closing
brace, except the lock slow paths named in ALLOWED (each with the reason
that splitting it would hide the algorithm).  TAP output: one check per
source folder, a failing one naming every long function it found.

--list N prints every function of N lines or more (no TAP), for a reader
who wants to see what is near the limit.

It reads C as text: comments, strings, character constants and
preprocessor lines are blanked first (a macro's braces are not a body); a
function is a brace block at file level whose opening brace follows a
closing parenthesis (an initializer follows `=`, a struct body its tag)."""
import pathlib
import re
import sys

from lbtap import diag, done, ok  # tests/lbtap.py

LIMIT = 150
FOLDERS = ["lib", "locks", "engines", "bench", "results", "torture", "preload"]

# "path:function" -> why its length stays.  Only lock slow paths belong
# here, and only where the splitting would hide the algorithm.
ALLOWED = {
}

_TOKEN = re.compile(r"""
    (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<pp>^[ \t]*\#(?:\\\n|[^\n])*)
""", re.S | re.M | re.X)


def _blank(m):
    """The match with every character but newlines turned into a space."""
    return re.sub(r"[^\n]", " ", m.group(0))


def code_only(text):
    return _TOKEN.sub(_blank, text)


def functions(text):
    """(name, first line, last line) of each function defined in text."""
    code = code_only(text)
    found = []
    depth = 0
    i = 0
    n = len(code)
    while i < n:
        c = code[i]
        if c == "{":
            if depth == 0:
                head = _function_head(code, i)
                if head is not None:
                    end = _closing_brace(code, i)
                    name, at = head
                    found.append((name, code.count("\n", 0, at) + 1,
                                  code.count("\n", 0, end) + 1))
                    i = end + 1
                    continue
            depth += 1
        elif c == "}":
            depth -= 1
        i += 1
    return found


def _closing_brace(code, i):
    depth = 0
    for j in range(i, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def _function_head(code, brace):
    """(name, offset of the name) when the brace at file level opens a
    function body, else None."""
    j = brace - 1
    while j >= 0 and code[j].isspace():
        j -= 1
    if j < 0 or code[j] != ")":
        return None
    while True:
        # j is at a ')': find its '(' and the identifier before it.
        depth = 0
        while j >= 0:
            if code[j] == ")":
                depth += 1
            elif code[j] == "(":
                depth -= 1
                if depth == 0:
                    break
            j -= 1
        k = j - 1
        while k >= 0 and code[k].isspace():
            k -= 1
        end = k + 1
        while k >= 0 and (code[k].isalnum() or code[k] == "_"):
            k -= 1
        name = code[k + 1:end]
        if not name:
            return None
        if name in ("__attribute__", "__attribute", "__declspec", "__asm__", "asm"):
            # An attribute after the parameters: the declarator is before it.
            while k >= 0 and code[k].isspace():
                k -= 1
            if k < 0 or code[k] != ")":
                return None
            j = k
            continue
        return name, k + 1


def sources(root):
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in (".c", ".h") and path.is_file():
                yield folder, path


def main():
    root = pathlib.Path(sys.argv[1])
    if len(sys.argv) > 3 and sys.argv[2] == "--list":
        floor = int(sys.argv[3])
        rows = []
        for _, path in sources(root):
            for name, first, last in functions(path.read_text()):
                if last - first + 1 >= floor:
                    rows.append((last - first + 1, f"{path.relative_to(root)}:{first} {name}"))
        for length, where in sorted(rows, reverse=True):
            print(f"{length:5d} {where}")
        return
    long_ones = {folder: [] for folder in FOLDERS}
    seen_allowed = set()
    counted = 0
    for folder, path in sources(root):
        rel = path.relative_to(root).as_posix()
        for name, first, last in functions(path.read_text()):
            counted += 1
            length = last - first + 1
            key = f"{rel}:{name}"
            if key in ALLOWED:
                seen_allowed.add(key)
                continue
            if length > LIMIT:
                long_ones[folder].append(f"{rel}:{first} {name}() is {length} lines")
    ok(counted > 0, f"read {counted} function definitions")
    for folder in FOLDERS:
        ok(not long_ones[folder], f"no function in {folder}/ is over {LIMIT} lines"
           + (": " + "; ".join(long_ones[folder]) if long_ones[folder] else ""))
    for key, why in sorted(ALLOWED.items()):
        ok(key in seen_allowed, f"allowed {key} still exists ({why})")
    done()


if __name__ == "__main__":
    main()
