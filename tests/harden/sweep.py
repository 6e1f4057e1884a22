#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A systematic bad-input sweep over lockbench's commands (issue 25).

Every option of bench, aim7, rt, ab, slab, compare, plot and locktorture
(read from each command's `--list-options`) gets bad, huge, negative,
NaN, overflowing and shell-looking values; then duplicate and conflicting
options, output paths that are directories, unwritable, an input or '-',
fuzzed result files (truncated, wrong types, missing keys, huge arrays,
deep nesting, NaN/Infinity, shell text in every string and in the file
name) for compare and plot, aim7 workfiles, the preload's environment
variables, and INT/TERM/HUP/QUIT at random moments of a run.

Each case is classified:
  OK       exit 2 with one line on stderr, or a run that ended normally (or,
           for a long valid run, ended by our SIGINT)
  CRASH    a signal we did not send, an exit status >= 128, a sanitizer report
  CLOBBER  an input file changed, a half-written output, a temporary left
  HANG     still running 15 s after our SIGINT (sent at the time limit)
  EXEC     a PWNED_* marker file appeared (a payload ran)
  BADERR   an exit status other than 0 and 2, or an exit 2 whose message is
           not exactly one line

usage: sweep.py LOCKBENCH [--locktorture PATH] [--preload SO] [--quick]
                [--only WHAT] [--seed N] [--verbose]
Prints one line per case that is not OK, then the counts; exit status 1 when
any case is not OK.  --quick runs a trimmed set (the `slow` suite's test,
TAP output).  Build with -Db_sanitize=address,undefined for the full sweep.
"""
import argparse
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

SANITIZER = re.compile(r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|"
                       r"runtime error:|ThreadSanitizer")
PAYLOADS = ["`touch PWNED_bq`", "$(touch PWNED_dl)", "';touch PWNED_sq;'",
            "\";touch PWNED_dq;\"", "x\ntouch PWNED_nl\n", "%n%s%s%s%p"]

# Values for any option that takes one; more by the argument's name below.
GENERIC = ["", "-1", "0", "abc", "nan", "inf", "1e309", "99999999999999999999999",
           "18446744073709551616", "4294967296", " 5", "5 ", "0x10", "1.5", "3-1", "-",
           "1\n2", "A" * 5000] + PAYLOADS
BY_ARG = {
    "TIME": ["5ms", "0s", "-1s", "1e309s", "nans", "1.5s", "5xs", "18446744073709551615ns"],
    "DUR": ["5ms", "0s", "-1s", "1e309s", "18446744073709551615ns"],
    "US": ["1", "1000000000000"],
    "LIST": ["1-3:2", "1-99999", "0-4294967295:1", "1,,2", "1-3:0", ",".join(["1"] * 5000)],
    "CPULIST": ["0-999999", "0-1:0", "4096", "1-0"],
    "LOCK": ["nosuch", "busted", "./nosuch.so", "/etc/passwd", "/"],
    "FILE": ["/", "/nonexistent/x", "/dev/full"],
    "WORK": ["/", "/nonexistent/x", "/dev/null", "/dev/zero"],
    "P": ["100", "101", "50.5"],
    "PRIO": ["99", "100"],
    "RATE": ["0.5", "nan"],
    "BYTES": ["1G", "1T"],
}
QUICK_GENERIC = ["-1", "nan", "1e309", "18446744073709551616", " 5", "1\n2",
                 "`touch PWNED_bq`"]


class Case:
    def __init__(self, group, argv, expect="any", env=None, inputs=(), outputs=(),
                 sig=None, limit=20.0, cwd=None, prog=None, stdin=None, note=""):
        self.group, self.argv, self.expect, self.env = group, argv, expect, env
        self.inputs, self.outputs, self.sig, self.limit = list(inputs), list(outputs), sig, limit
        self.cwd, self.prog, self.stdin, self.note = cwd, prog, stdin, note

    def label(self):
        shown = " ".join(a if len(a) < 60 else a[:20] + f"...({len(a)} chars)"
                         for a in self.argv)
        env = " ".join(f"{k}={v!r}" for k, v in (self.env or {}).items()
                       if k.startswith("LOCKBENCH"))
        sig = f" [{signal.Signals(self.sig[0]).name} at {self.sig[1]:.2f}s]" if self.sig else ""
        return f"{self.group}: {env + ' ' if env else ''}{shown!r}{sig}{self.note}"


def digest(path):
    if os.path.isdir(path):
        return "dir"
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def output_whole(path):
    """None when the output is absent or complete, else what is wrong.
    PATH or (PATH, KIND): KIND json, csv, svg or gp (default: by the name)."""
    path, kind = path if isinstance(path, tuple) else (path, os.path.splitext(path)[1][1:])
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        data = f.read()
    if kind == "json":
        try:
            json.loads(data)
        except ValueError as e:
            return f"{os.path.basename(path)} is not JSON ({e})"
    elif kind == "csv":
        if data and not data.endswith(b"\n"):
            return f"{os.path.basename(path)} does not end in a newline"
    elif kind == "svg":
        if data and b"</svg>" not in data[-200:]:
            return f"{os.path.basename(path)} has no closing </svg>"
    elif kind == "gp":
        if data and not data.endswith(b"\n"):
            return f"{os.path.basename(path)} does not end in a newline"
    return None


def temporaries(d):
    out = []
    for root, _, files in os.walk(d):
        out += [os.path.join(root, f) for f in files if ".tmp" in f]
    return out


def pwned(d):
    found = []
    for root, dirs, files in os.walk(d):
        found += [f for f in files + dirs if re.fullmatch(r"PWNED_\w+", f)]
    found += [f for f in os.listdir("/tmp") if f.startswith("PWNED_")]
    return found


class Sweep:
    def __init__(self, args, tmp):
        self.lb = os.path.abspath(args.lockbench)
        self.lt = os.path.abspath(args.locktorture) if args.locktorture else None
        self.preload = os.path.abspath(args.preload) if args.preload else None
        self.quick, self.verbose, self.tmp = args.quick, args.verbose, tmp
        self.jobs = args.jobs
        self.commands = args.command
        self.lock = threading.Lock()
        self.rng = random.Random(args.seed)
        self.counts = {k: 0 for k in ("OK", "CRASH", "CLOBBER", "HANG", "EXEC", "BADERR")}
        self.bad = []
        self.accepted = []  # suspicious values a command ran with (for a reader)
        self.work = os.path.join(tmp, "work")
        os.mkdir(self.work)
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
        self.env = env

    # -- running one case ------------------------------------------------
    def run(self, c):
        cwd = c.cwd or self.work
        for f in temporaries(cwd):
            os.unlink(f)
        before = {p: digest(p) for p in c.inputs}
        for p in c.outputs:
            p = p[0] if isinstance(p, tuple) else p
            if os.path.isfile(p) and p not in c.inputs:
                os.unlink(p)
        env = dict(self.env)
        env.update(c.env or {})
        prog = c.prog or self.lb
        t0 = time.monotonic()
        for attempt in range(5):  # a binary being relinked: EACCES/ETXTBSY for a moment
            try:
                p = subprocess.Popen([prog] + c.argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.PIPE
                                     if c.stdin is not None else subprocess.DEVNULL)
                break
            except OSError:
                if attempt == 4:
                    raise
                time.sleep(2)
        ours = None
        hang = False
        long_run = False
        try:
            if c.sig:
                try:
                    out, err = p.communicate(input=c.stdin, timeout=c.sig[1])
                except subprocess.TimeoutExpired:
                    ours = c.sig[0]
                    p.send_signal(ours)
                    out, err = p.communicate(timeout=c.limit)
            else:
                try:
                    out, err = p.communicate(input=c.stdin, timeout=c.limit)
                except subprocess.TimeoutExpired:
                    ours, long_run = signal.SIGINT, True
                    p.send_signal(signal.SIGINT)
                    out, err = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            hang = True
            p.kill()
            out, err = p.communicate()
        took = time.monotonic() - t0
        rc = p.returncode
        err = err.decode(errors="replace")
        verdict, why = "OK", ""
        marks = pwned(cwd if c.cwd else self.tmp)
        if marks:
            verdict, why = "EXEC", f"payload ran: {marks}"
            for root, dirs, files in list(os.walk(cwd if c.cwd else self.tmp)) + [("/tmp", [], [
                    f for f in os.listdir("/tmp") if f.startswith("PWNED_")])]:
                for f in files:
                    if f.startswith("PWNED_"):
                        os.unlink(os.path.join(root, f))
        elif hang:
            verdict, why = "HANG", f"still running 15 s after SIGINT at {took - 15:.0f} s"
        elif SANITIZER.search(err):
            line = next(ln for ln in err.splitlines() if SANITIZER.search(ln))
            verdict, why = "CRASH", line.strip()[:200]
        elif rc < 0 and -rc != ours:
            verdict, why = "CRASH", f"killed by signal {-rc}"
        elif rc >= 128 and not (ours and rc == 128 + ours):
            verdict, why = "CRASH", f"exit {rc}"
        if verdict == "OK":
            changed = [p for p in c.inputs if digest(p) != before[p]]
            outs = [o[0] if isinstance(o, tuple) else o for o in c.outputs]
            left = temporaries(cwd) + [f for d in {os.path.dirname(o) for o in outs}
                                       if d and d != cwd and os.path.isdir(d)
                                       for f in temporaries(d)]
            partial = [w for w in (output_whole(o) for o in c.outputs
                                   if (o[0] if isinstance(o, tuple) else o) not in c.inputs)
                       if w]
            if changed or left or partial:
                verdict = "CLOBBER"
                why = "; ".join(filter(None, [changed and f"input changed: {changed}",
                                              left and f"temporaries left: {left}",
                                              "; ".join(partial)]))
                for f in left:
                    os.unlink(f)
        if verdict == "OK" and ours is None:
            lines = [ln for ln in err.splitlines() if ln.strip()]
            if rc == 1 and any(a.startswith(("--run-timeout", "--watchdog")) for a in c.argv):
                pass  # rt's own time limits: a run over them fails (exit 1) by design
            elif rc == 1 and any(a.endswith("busted") for a in c.argv):
                pass  # locktorture or aim7's invariant catching the broken lock: exit 1
            elif rc == 1 and (c.expect == "io" or any("/dev/full" in a for a in c.argv)) and \
                    lines and \
                    ("/dev/full" in lines[-1] or "No space left" in lines[-1]):
                pass  # a write error on a full device: the run failed, exit 1
            elif rc not in (0, 2):
                verdict, why = "BADERR", f"exit {rc}: {' | '.join(lines[-3:])[:300]}"
            elif rc == 2 and len(lines) != 1:
                verdict, why = "BADERR", (f"exit 2 with {len(lines)} lines: "
                                          f"{' | '.join(lines[:3])[:300]}")
            elif c.expect == "bad" and rc == 0:
                with self.lock:
                    self.accepted.append(c.label())
        with self.lock:
            self.counts[verdict] += 1
            if verdict != "OK":
                self.bad.append((verdict, c.label(), why))
                print(f"{verdict}: {c.label()}: {why}", flush=True)
            elif self.verbose:
                print(f"ok ({rc}, {took:.2f}s): {c.label()}", flush=True)
        if long_run and verdict == "OK" and self.verbose:
            print(f"   (a long valid run, ended by SIGINT after {c.limit:.0f} s)")
        return rc, out, err

    def run_many(self, cases):
        """Cases that each have their own cwd, self.jobs at a time (the time
        of a case on a loaded machine is mostly waiting for a CPU)."""
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for f in [pool.submit(self.run, c) for c in cases]:
                f.result()
        for c in cases:
            if c.cwd and c.cwd.startswith(self.tmp):
                shutil.rmtree(c.cwd, ignore_errors=True)

    def own_dir(self, prefix):
        return tempfile.mkdtemp(dir=self.work, prefix=prefix)

    # -- fixtures ---------------------------------------------------------
    def fixtures(self):
        w = self.work
        self.a = os.path.join(w, "a.json")
        self.b = os.path.join(w, "b.json")
        for path, lock in ((self.a, "ticket"), (self.b, "mutex")):
            r = subprocess.run([self.lb, "bench", "-l", lock, "-t", "1,2", "-d", "20ms",
                                "--json", path], capture_output=True, env=self.env,
                               timeout=120)
            if r.returncode != 0:
                sys.exit(f"sweep: cannot make a fixture: {r.stderr.decode()[-500:]}")
        self.wf = os.path.join(w, "wf")
        with open(self.wf, "w") as f:
            f.write("FILESIZE: 10K\nPOOLSIZE: 1M\n10 add_int\n10 page_test\n")
        self.ro = os.path.join(w, "ro")
        os.mkdir(self.ro)
        os.chmod(self.ro, 0o555)
        self.dir = os.path.join(w, "adir")
        os.mkdir(self.dir)

    def base(self, cmd):
        """A short valid run of each command, its own options first."""
        return {
            "bench": ["bench", "-l", "ticket", "-t", "1", "-d", "10ms"],
            "aim7": ["aim7", "-u", "1", "-j", "20", "--costs", "none"],
            "rt": ["rt", "-g", "1", "-l", "5", "-t", "1", "-D", "100ms"],
            "ab": ["ab", "-t", "1", "-d", "60ms", "--blocks", "6", "ticket", "mutex"],
            "slab": ["slab", "--table", "protect"],
            "compare": ["compare", self.a, self.b],
            "plot": ["plot", self.a, "-o", "p.svg"],  # a directory in the case's cwd
            "locktorture": ["--type", "ticket", "--nwriters_stress", "1",
                            "--shutdown_secs", "1"],
        }[cmd]

    def options(self, cmd):
        prog = self.lt if cmd == "locktorture" else self.lb
        argv = [prog, "--list-options"] if cmd == "locktorture" else [prog, cmd, "--list-options"]
        r = subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=60)
        rows = []
        for line in r.stdout.splitlines():
            name, short, arg = line.split()
            rows.append((name, None if short == "-" else short, None if arg == "-" else arg))
        return rows

    # -- the case groups --------------------------------------------------
    def option_values(self, arg):
        if self.quick:
            vals = QUICK_GENERIC + BY_ARG.get(arg, [])[:1]
        else:
            vals = GENERIC + BY_ARG.get(arg, [])
        return list(dict.fromkeys(vals))

    def sweep_options(self, cmd):
        if cmd == "locktorture" and not self.lt:
            return
        rows = self.options(cmd)
        base = self.base(cmd)
        prog = self.lt if cmd == "locktorture" else None
        cases = []

        def add(argv, **kw):
            d = self.own_dir(cmd + "-")
            outs = [os.path.join(d, n) for n in ("o.json", "o.csv", "o.svg", "o.gp")]
            cases.append(Case(cmd, argv, prog=prog, outputs=outs, cwd=d,
                              inputs=[self.a, self.b, self.wf], **kw))

        for name, short, arg in rows:
            if name in ("--help", "--list", "--inject_hang", "--inject-hang"):
                continue  # --inject*: test-only deliberate hangs
            if arg is None:
                add(base + [name])
                add(base + [name + "=1"], expect="bad")
                continue
            for v in self.option_values(arg):
                spelled = name + "=" + v if not short or self.rng.random() < 0.5 else None
                argv = base + ([spelled] if spelled else [short, v])
                if cmd in ("compare", "plot", "ab"):  # positional arguments last
                    argv = [base[0]] + argv[len(base):] + base[1:]
                add(argv, expect="bad", limit=8.0)
            # the option with no value at the end of the line
            add(base + [name], expect="bad")
        self.run_many(cases)

    def sweep_outputs(self):
        """Output paths that are directories, unwritable, an input, '-', twice."""
        w = self.work
        cmds = {
            "bench": (self.base("bench"), ["--json", "--csv"]),
            "aim7": (self.base("aim7"), ["--json", "--csv"]),
            "rt": (self.base("rt"), ["--json", "--csv"]),
            "ab": (self.base("ab")[:-2], ["--json"]),
            "compare": (["compare"], ["--json", "--csv"]),
            "slab": (self.base("slab"), ["--json", "--csv"]),
        }
        for cmd, (base, flags) in cmds.items():
            tail = self.base(cmd)[len(base):] if cmd == "ab" else []
            tail = [self.a, self.b] if cmd == "compare" else tail
            for flag in flags:
                # compare must never write over its input; the others may
                # write over any file, so they get a copy of one
                victim = self.a if cmd == "compare" else os.path.join(w, "victim.json")
                if victim != self.a:
                    shutil.copy(self.a, victim)
                for target in (self.dir, self.ro + "/x.json", "/nonexistent/d/x.json", "/dev/full",
                               victim, "-", "", w + "/`touch PWNED_on`.json",
                               w + "/$(touch PWNED_od).json", w + "/new'\"\n.json", "/"):
                    kind = flag[2:]
                    self.run(Case(cmd + "-out", base + [flag, target] + tail,
                                  inputs=[self.a, self.b],
                                  expect="io" if target == "/dev/full" else "any",
                                  outputs=[(target, kind)] if target.startswith(w) else []))
            if len(flags) == 2:
                same = os.path.join(w, "same.out")
                self.run(Case(cmd + "-out", base + ["--json", same, "--csv", same] + tail,
                              expect="bad", inputs=[self.a, self.b]))
                self.run(Case(cmd + "-out", base + ["--json", "-", "--csv", "-"] + tail,
                              expect="bad", inputs=[self.a, self.b]))
            dup = os.path.join(w, "dup.json")
            self.run(Case(cmd + "-out", base + ["--json", dup, "--json", dup] + tail,
                          inputs=[self.a, self.b], outputs=[dup]))
        for target in (self.dir, self.ro + "/x.svg", "/dev/full", self.a, "-", "",
                       w + "/`touch PWNED_po`.svg", w + "/x.png", w + "/x.gp",
                       "/proc/lb-sweep"):  # not "/": as root, plot draws into it
            self.run(Case("plot-out", ["plot", "-o", target, self.a], inputs=[self.a],
                          expect="io" if target == "/dev/full" else "any",
                          outputs=[target] if target.startswith(w) and target != self.a else []))
        self.run(Case("plot-out", ["plot", "-o", self.a, self.a], inputs=[self.a], expect="bad"))
        for fmt in ("svg", "png", "gp", "pdf", "", "`touch PWNED_pf`"):
            self.run(Case("plot-out", ["plot", "--format", fmt, "-o", w + "/f.out", self.a],
                          inputs=[self.a]))

    def conflicts(self):
        """Duplicate and conflicting options."""
        w = self.work
        cases = [
            ["bench", "-l", "ticket", "-l", "mutex", "-t", "1", "-d", "10ms"],
            ["bench", "-t", "1", "-t", "2", "-d", "10ms", "-d", "20ms"],
            ["bench", "-d", "10ms", "--format", "json", "--format", "csv"],
            ["aim7", "-u", "1", "--startusers", "5", "--endusers", "2", "--costs", "none"],
            ["aim7", "-u", "1", "--ab-role", "pre", "--costs", "none", "-j", "20"],
            ["aim7", "-u", "1", "--ab", "ticket,mutex", "--mutex", "ticket", "--costs", "none",
             "-j", "20"],
            ["aim7", "-u", "1", "-j", "20", "-t", "1s", "--costs", "none"],
            ["aim7", "--startusers", "1", "--endusers", "3", "--increment", "0", "-j", "20",
             "--costs", "none"],
            ["aim7", "-u", "1", "-j", "20", "--workfile", self.wf, "--workfile", "/nonexistent",
             "--costs", "none"],
            ["rt", "-g", "0", "-D", "100ms", "--compare", "ticket,mutex", "-L", "ticket"],
            ["rt", "-g", "0", "-D", "100ms", "--preset", "rt-list-lock", "-g", "1"],
            ["rt", "-g", "0", "-D", "100ms", "--loops", "5"],
            ["rt", "-g", "1", "-D", "100ms", "--pipe", "--process", "-l", "5"],
            ["rt", "-g", "0", "-t", "0", "-D", "100ms"],
            ["rt", "-g", "0", "-D", "100ms", "--watchdog", "50ms", "--run-timeout", "10ms"],
            ["rt", "-g", "0", "-D", "100ms", "--sched-other", "-p", "50"],
            ["ab", "ticket", "ticket", "-d", "60ms", "--blocks", "6"],
            ["ab", "ticket", "-d", "40ms"],
            ["ab", "ticket", "mutex", "busted", "-d", "40ms"],
            ["ab", "ticket", "mutex", "-d", "10ms", "--slice", "1s"],
            ["compare", self.a],
            ["compare", self.a, self.a],
            ["compare", self.a, "-"],
            ["compare", self.a, self.b, "--side-a", "lock=ticket"],
            ["compare", self.a, "--side-a", "lock=ticket", "--side-b", "lock=ticket"],
            ["compare", self.a, self.b, "-m", "nosuch"],
            ["compare", self.a, self.b, "--match", "nosuch"],
            ["compare", self.a, self.b, "-C", "/nonexistent"],
            ["compare", self.a, self.b, "-C", self.dir],
            ["plot", self.a, self.b, "--overlay", "-o", w + "/ov.svg"],
            ["plot", "--overlay", self.a, "-o", w + "/ov.svg"],
            ["plot"],
            ["plot", self.dir],
            ["plot", "/nonexistent.json"],
            ["compare", "/dev/zero", self.a],
            ["plot", "/dev/zero"],
            ["slab", "--table", "bulk", "--bulk", "0"],
            ["slab", "--cpu", "9999"],
            ["bench", "-l", "ticket", "-t", "1", "-d", "10ms", "extra-arg"],
            ["nosuchcommand"],
            [],
            ["bench", "--nosuch"],
            ["bench", "-"],
        ]
        for argv in cases:
            self.run(Case("conflict", argv, inputs=[self.a, self.b, self.wf],
                          stdin=b"" if "-" in argv else None))
        if self.lt:
            for argv in (["--type", "nosuch"], ["--type", "ticket", "--nwriters_stress", "0",
                                                 "--nreaders_stress", "0",
                                                 "--shutdown_secs", "1"],
                         ["--type", "ticket", "--nreaders_stress", "2", "--shutdown_secs", "1"],
                         ["--type", "ticket", "--type", "mutex", "--shutdown_secs", "1"],
                         ["--type", "ticket", "--shutdown_secs", "1", "extra"],
                         ["--type=ticket", "--shutdown-secs=1", "--stat-interval=0"]):
                self.run(Case("locktorture-conflict", argv, prog=self.lt))

    def workfiles(self):
        w = self.work
        big = "#" * (1 << 20)
        bodies = {
            "empty": "", "comment": "# nothing\n", "nul": "10 add_int\0\n",
            "noweight": "add_int\n", "zero": "0 add_int\n", "neg": "-5 add_int\n",
            "huge-weight": "99999999999999999999 add_int\n", "nan": "nan add_int\n",
            "unknown": "10 nosuch\n", "dup": "10 add_int\n10 add_int\n",
            "poolbad": "POOLSIZE: 1X\n10 add_int\n", "poolhuge": "POOLSIZE: 99999999T\n10 add_int\n",
            "poolneg": "POOLSIZE: -1M\n10 add_int\n", "filebad": "FILESIZE: abc\n10 add_int\n",
            "filehuge": "FILESIZE: 1e309K\n10 add_int\n", "nocolon": "POOLSIZE 1M\n10 add_int\n",
            "longline": "10 " + "a" * 100000 + "\n", "1MiB": big[:-1] + "\n",
            "1MiB+1": big + "\n", "crlf": "10 add_int\r\n", "tabs": "\t10\tadd_int\t\n",
            "noeol": "10 add_int", "payload": "10 `touch PWNED_wf`\n10 $(touch PWNED_wd)\n",
            "manylines": "1 add_int\n" * 100000, "binary": "\x01\x02\xff\xfe\n",
            "sumover": "4294967295 add_int\n4294967295 page_test\n",
        }
        for name, body in bodies.items():
            if self.quick and name in ("manylines", "1MiB", "longline", "binary", "crlf"):
                continue
            path = os.path.join(w, "wf-" + name)
            with open(path, "w", encoding="latin-1") as f:
                f.write(body)
            self.run(Case("workfile", ["aim7", "-u", "1", "-j", "20", "--costs", "none",
                                       "--workfile", path], inputs=[path]))
        for path in (self.dir, "/dev/zero", "/dev/null", "/proc/self/status", "-"):
            self.run(Case("workfile", ["aim7", "-u", "1", "-j", "20", "--costs", "none",
                                       "--workfile", path], stdin=b"10 add_int\n", limit=10))

    def json_docs(self):
        """Fuzzed result files: (name, text) pairs."""
        with open(self.a) as f:
            good = f.read()
        doc = json.loads(good)
        out = [("truncated-%d" % n, good[:n]) for n in
               (0, 1, len(good) // 3, len(good) // 2, len(good) - 2)]
        out += [("notjson", "hello"), ("array", "[]"), ("number", "5"), ("null", "null"),
                ("string", '"x"'), ("emptyobj", "{}"), ("bom", "\ufeff" + good),
                ("nul", good[:50] + "\0" + good[50:]), ("utf8bad", "\xff\xfe")]
        out.append(("deep", "[" * 100000 + "]" * 100000))
        out.append(("deep-obj", '{"a":' * 50000 + "1" + "}" * 50000))

        def mutate(path, value):
            d = json.loads(good)
            cur = d
            for k in path[:-1]:
                cur = cur[k]
            if value is KeyError:
                del cur[path[-1]]
            else:
                cur[path[-1]] = value
            return d

        strings, numbers, containers = [], [], []

        def walk(node, path):
            if isinstance(node, dict):
                containers.append(path)
                for k, v in node.items():
                    walk(v, path + [k])
            elif isinstance(node, list):
                containers.append(path)
                for i, v in enumerate(node[:2]):
                    walk(v, path + [i])
            elif isinstance(node, str):
                strings.append(path)
            elif isinstance(node, (int, float)) and not isinstance(node, bool):
                numbers.append(path)

        walk(doc, [])
        if self.quick:
            strings = strings[:6]
            numbers = self.rng.sample(numbers, min(6, len(numbers)))
            containers = containers[:8]
        else:
            strings = self.rng.sample(strings, min(40, len(strings)))
            numbers = self.rng.sample(numbers, min(25, len(numbers)))
            containers = containers[:30]
        for p in strings:
            for pl in (PAYLOADS if not self.quick else PAYLOADS[:2]):
                out.append(("str:" + "/".join(map(str, p)), json.dumps(mutate(p, pl))))
            out.append(("longstr:" + "/".join(map(str, p)), json.dumps(mutate(p, "x" * 100000))))
            out.append(("str-as-num:" + "/".join(map(str, p)), json.dumps(mutate(p, 5))))
        for p in numbers:
            sp = "/".join(map(str, p))
            for name, v in (("nan", "NaN"), ("inf", "Infinity"), ("ninf", "-Infinity"),
                            ("big", "1e308"), ("over", "1e999"), ("neg", "-1e300"),
                            ("str", '"5"'), ("null", "null"), ("obj", "{}"),
                            ("i64", "18446744073709551616")):
                if self.quick and name not in ("nan", "over", "str", "null"):
                    continue
                d = mutate(p, "@@V@@")
                out.append((f"num-{name}:{sp}", json.dumps(d).replace('"@@V@@"', v)))
        for p in containers:
            if not p:
                continue
            sp = "/".join(map(str, p))
            out.append(("missing:" + sp, json.dumps(mutate(p, KeyError))))
            out.append(("null:" + sp, json.dumps(mutate(p, None))))
            out.append(("wrongtype:" + sp, json.dumps(mutate(p, "x"))))
            out.append(("emptyarr:" + sp, json.dumps(mutate(p, []))))
            out.append(("num:" + sp, json.dumps(mutate(p, 7))))
        # huge arrays
        d = json.loads(good)
        cells_key = "results" if "results" in d else "cells"
        c0 = d[cells_key][0]
        if isinstance(c0.get("runs"), list) and c0["runs"]:
            d2 = json.loads(good)
            d2[cells_key][0]["runs"] = d2[cells_key][0]["runs"] * 100000
            out.append(("hugearr:runs", json.dumps(d2)))
            for rk, rv in c0["runs"][0].items():
                if isinstance(rv, list):
                    d2 = json.loads(good)
                    d2[cells_key][0]["runs"][0][rk] = rv * 100000 if rv else [1] * 100000
                    out.append((f"hugearr:runs/{rk}", json.dumps(d2)))
        for key in [k for k, v in c0.items() if isinstance(v, dict)]:
            for mk, mv in c0[key].items():
                if isinstance(mv, list):
                    d2 = json.loads(good)
                    d2[cells_key][0][key][mk] = [1.0] * 200000
                    out.append((f"hugearr:{key}/{mk}", json.dumps(d2)))
                    break
        d2 = json.loads(good)
        d2[cells_key] = d2[cells_key] * (2000 if self.quick else 20000)
        out.append(("manycells-dup", json.dumps(d2)))
        d2 = json.loads(good)
        d2["extra"] = [[]] * 100000
        out.append(("extra-key", json.dumps(d2)))
        for sname in ("lockbench-nosuch-1", "", "x" * 10000, "`touch PWNED_sn`"):
            d2 = json.loads(good)
            d2["schema"] = sname
            out.append(("schema:" + sname[:20], json.dumps(d2)))
        for sv in ("1", 1.0, None, -1, 2 ** 64, 99):
            d2 = json.loads(good)
            d2.pop("schema", None)
            d2["schema_name"] = "lockbench-bench"
            d2["schema_version"] = sv
            out.append((f"schema_version:{sv!r}", json.dumps(d2)))
        return out

    def sweep_json(self):
        w = os.path.join(self.work, "json")
        os.mkdir(w)
        docs = self.json_docs()
        cases = []
        for i, (name, text) in enumerate(docs):
            # every case its own directory and copy of the file: the
            # cases run side by side, and each checks its directory for
            # temporaries
            runs = [("compare-json", lambda path, svg: ["compare", path, self.b], ""),
                    ("compare-json", lambda path, svg: ["compare", path], ", alone")]
            if i % (3 if self.quick else 2) == 0:
                runs.append(("plot-json", lambda path, svg: ["plot", path, "-o", svg], ""))
            if not self.quick and i % 6 == 0:
                runs.append(("plot-json", lambda path, svg: ["plot", "--overlay", path, self.b,
                                                             "-o", svg], ", overlay"))
            for group, argv, what in runs:
                d = self.own_dir("json-")
                path = os.path.join(d, f"f{i}.json")
                with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(text)
                svg = os.path.join(d, f"f{i}.svg")
                cases.append(Case(group, argv(path, svg), inputs=[path, self.b],
                                  outputs=[svg] if group == "plot-json" else [],
                                  note=f" ({name}{what})", limit=60, cwd=d))
        self.run_many(cases)
        # shell text in the file NAME and in the output name
        for name in ("`touch PWNED_fa`.json", "$(touch PWNED_fb).json", "a'b\"c.json",
                     "n\nl.json", "-x.json", " sp .json", "%s%n.json", "\\`touch PWNED_fc`.json"):
            path = os.path.join(w, name)
            shutil.copy(self.a, path)
            self.run(Case("name", ["compare", path, self.b], inputs=[path]))
            self.run(Case("name", ["plot", path, "-o", os.path.join(w, "n.svg")], inputs=[path],
                          outputs=[os.path.join(w, "n.svg")]))
            self.run(Case("name", ["plot", path], inputs=[path], cwd=w))
            self.run(Case("name", ["plot", "--overlay", path, self.b, "-o",
                                   os.path.join(w, "ov.svg")], inputs=[path]))
            os.unlink(path)

    def sweep_preload(self):
        if not self.preload:
            return
        env0 = {"LD_PRELOAD": self.preload}
        if b"__asan_init" in open(self.preload, "rb").read():
            # with libasan preloaded too, an uninstrumented program dies in
            # ASan's pthread_atfork interceptor (REAL() not set yet) before
            # our constructor returns: an artifact, not the preload's bug
            print("# preload: skipped: a sanitizer build's preload runs only in sanitized "
                  "programs; pass a plain build's with --preload", flush=True)
            return
        target = [sys.executable, "-c",
                  "import threading\n"
                  "l=threading.Lock()\n"
                  "def f():\n"
                  "  for _ in range(2000):\n"
                  "    with l: pass\n"
                  "t=[threading.Thread(target=f) for _ in range(3)]\n"
                  "[x.start() for x in t]; [x.join() for x in t]\n"]
        w = self.work
        vals = {
            "LOCKBENCH_LOCK": ["", "nosuch", "ticket", "mutex", "qrwlock", "busted", "A" * 5000,
                               "`touch PWNED_pl`", "/etc/passwd", "./nosuch.so"],
            "LOCKBENCH_STATS": ["0", "1", "", w + "/st.json", self.dir, "/dev/full",
                                "/nonexistent/x", self.ro + "/s.json",
                                w + "/`touch PWNED_ps`.json", "-", "2"],
            "LOCKBENCH_STATS_TOP": ["", "0", "1", "5", " 5", "+5", "-5", "100000", "100001",
                                    "abc", "18446744073709551616", "5x", "nan"],
        }
        for var, vs in vals.items():
            for v in vs:
                env = dict(env0)
                env["LOCKBENCH_LOCK"] = "ticket"
                if var != "LOCKBENCH_LOCK":
                    env["LOCKBENCH_STATS"] = "1"
                env[var] = v
                outs = [w + "/st.json"] if v == w + "/st.json" else []
                self.run(Case("preload", target[1:], env=env, prog=target[0], outputs=outs,
                              limit=30))

    def sweep_signals(self):
        w = self.work
        runs = {
            "bench": ["bench", "-l", "ticket", "-t", "1,2", "-d", "300ms"],
            "aim7": ["aim7", "-u", "1,2", "-t", "1s", "--costs", "none"],
            "rt": ["rt", "-g", "1", "-t", "1", "-D", "1s"],
            "ab": ["ab", "-t", "1", "-d", "400ms", "--blocks", "6", "ticket", "mutex"],
            "slab": ["slab"],
            "compare": ["compare", self.a, self.b],
            "plot": ["plot", self.a],
        }
        sigs = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT]
        tries = 1 if self.quick else 3
        for cmd, argv in runs.items():
            if self.commands and cmd not in self.commands:
                continue
            for sig in sigs:
                for _ in range(tries):
                    at = self.rng.uniform(0.02, 1.5)
                    d = tempfile.mkdtemp(dir=w, prefix=f"sig-{cmd}-")
                    if cmd == "plot":
                        outs = [os.path.join(d, "s.svg")]
                        extra = ["-o", outs[0]]
                    elif cmd in ("slab",):
                        outs = [os.path.join(d, "s.json"), os.path.join(d, "s.csv")]
                        extra = ["--json", outs[0], "--csv", outs[1]]
                    elif cmd == "ab":
                        outs = [os.path.join(d, "s.json")]
                        extra = ["--json", outs[0]]
                    else:
                        outs = [os.path.join(d, "s.json"), os.path.join(d, "s.csv")]
                        extra = ["--json", outs[0], "--csv", outs[1]]
                    full = [argv[0]] + extra + argv[1:]
                    self.run(Case("signal", full, sig=(sig, at), outputs=outs, cwd=d,
                                  inputs=[self.a, self.b], limit=30))
                    shutil.rmtree(d, ignore_errors=True)
        if self.lt:
            for sig in sigs:
                at = self.rng.uniform(0.05, 1.5)
                self.run(Case("signal", ["--type", "ticket", "--shutdown_secs", "3"],
                              prog=self.lt, sig=(sig, at), limit=30))

    def all(self, only):
        self.fixtures()
        cmds = self.commands or ("bench", "aim7", "rt", "ab", "slab", "compare", "plot",
                                 "locktorture")
        groups = [("options", lambda: [self.sweep_options(c) for c in cmds]),
                  ("outputs", self.sweep_outputs), ("conflicts", self.conflicts),
                  ("workfiles", self.workfiles), ("json", self.sweep_json),
                  ("preload", self.sweep_preload), ("signals", self.sweep_signals)]
        for name, fn in groups:
            if only and name not in only:
                continue
            t0 = time.monotonic()
            n0 = sum(self.counts.values())
            fn()
            print(f"# {name}: {sum(self.counts.values()) - n0} cases, "
                  f"{time.monotonic() - t0:.0f} s", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lockbench")
    ap.add_argument("--locktorture")
    ap.add_argument("--preload")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--tap", action="store_true")
    ap.add_argument("--only", action="append")
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("-j", "--jobs", type=int, default=6)
    ap.add_argument("--command", action="append",
                    help="options and signals of this command only (repeatable)")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lb-sweep-") as tmp:
        s = Sweep(args, tmp)
        try:
            s.all(args.only)
        finally:
            os.chmod(os.path.join(tmp, "work", "ro"), 0o755) if os.path.isdir(
                os.path.join(tmp, "work", "ro")) else None
    total = sum(s.counts.values())
    print(f"# {total} cases: " + ", ".join(f"{k} {v}" for k, v in s.counts.items()))
    if s.accepted and args.verbose:
        print(f"# {len(s.accepted)} suspicious values were accepted (ran):")
        for a in s.accepted:
            print("#   " + a)
    if args.tap:
        print("1..1")
        print(("ok" if not s.bad else "not ok") + f" 1 - {total} bad-input cases, "
              + ", ".join(f"{k} {v}" for k, v in s.counts.items()))
        return 0
    return 1 if s.bad else 0


if __name__ == "__main__":
    sys.exit(main())
