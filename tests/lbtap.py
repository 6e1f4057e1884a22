# SPDX-License-Identifier: MIT
"""lbtap.py - the TAP producer of the Python tests (tests/tap.h is the C one).

ok() prints one "ok N - ..." / "not ok N - ..." line and returns the
condition; diag() prints "# " comment lines; done() prints the plan
("1..N", at the end, which TAP allows) and exits 0 only when every check
passed; skip_all() is the plan line that tells Meson the whole test was
skipped.  A description is always folded onto one line: stderr excerpts
carry newlines and the progress lines' carriage returns, and Meson's TAP
parser counts a stray line as an error.

Tests in subdirectories import it with tests/ put on sys.path first."""
import subprocess
import sys

_count = 0
_failed = 0


def ok(cond, desc):
    global _count, _failed
    _count += 1
    if not cond:
        _failed += 1
    desc = " ".join(str(desc).split())
    print(("ok" if cond else "not ok") + f" {_count} - {desc}", flush=True)
    return bool(cond)


def diag(text, last=None):
    """text as "# " lines; only its last `last` lines when given."""
    lines = str(text).splitlines() or [""]
    for line in lines[-last:] if last else lines:
        print("# " + line, flush=True)


def failures():
    return _failed


def done():
    """The plan line, then exit: 1 when a check failed, else 0."""
    print(f"1..{_count}", flush=True)
    sys.exit(1 if _failed else 0)


def skip_all(reason):
    print("1..0 # SKIP " + " ".join(str(reason).split()), flush=True)
    sys.exit(0)


def unwrap(text):
    """text with the lines lib/lb_wrap.c broke to fit 100 columns joined
    again: a line starting "#   " continues the "# " line above it, and one
    starting with exactly four spaces and no "|" (not a table row) continues
    the line above it, except bench --explain's own "    counters" lines."""
    out = []
    for line in text.splitlines():
        if out and line.startswith("#   "):
            out[-1] += " " + line[4:].lstrip()
        elif (out and line.startswith("    ") and line[4:5].strip() and "|" not in line and
              not line.startswith("    counters")):
            out[-1] += " " + line.lstrip()
        else:
            out.append(line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def run_cmd(argv, timeout=120):
    """(exit status, stdout, stderr) of argv; (-1, "", "timed out") past timeout."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return -1, "", "timed out"


def signal_and_reap(p, sig, timeout=30):
    """Send sig to the Popen p, then reap it (communicate; killed when it
    has not ended after timeout s).  Returns (stdout, stderr)."""
    p.send_signal(sig)
    try:
        return p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        return p.communicate()


def commands(lockbench):
    """The command words `lockbench --help` lists, in its order."""
    import re
    out = subprocess.run([lockbench, "--help"], capture_output=True, text=True).stdout
    return re.findall(r"^  (\S+)\s", out.split("Commands:")[1], re.M)
