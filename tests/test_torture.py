#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_torture.py - locktorture end to end, one scenario per Meson test.

    test_torture.py LOCKTORTURE {usage|busted|pass|format|watchdog|signal|perturb}

Every scenario runs the program with a hard timeout, checks its exit status
and output, and reports TAP.  Nothing here waits longer than its timeout.
"""
import os
import re
import signal
import subprocess
import sys
import time
from lbtap import diag, done, ok  # tests/lbtap.py

EXE = None

OPTS = (r"acq_writer_lim=\d+ bind_readers=[0-9,-]+ bind_writers=[0-9,-]+ "
        r"call_rcu_chains=\d+ long_hold=\d+ nested_locks=\d+ nreaders_stress=\d+ "
        r"nwriters_stress=\d+ onoff_holdoff=\d+ onoff_interval=\d+ rt_boost=\d+ "
        r"rt_boost_factor=\d+ shuffle_interval=\d+ shutdown_secs=\d+ stat_interval=\d+ "
        r"stutter=\d+ verbose=\d+ writer_fifo=\d+")
START_RE = re.compile(r"^(\S+)-torture:--- Start of test( \[debug\])?: " + OPTS + r"$")
END_RE = re.compile(r"^(\S+)-torture:--- End of test: (SUCCESS|FAILURE)( \[debug\])?: "
                    + OPTS + r"$")
STATS_RE = re.compile(r"^(Writes|Reads ):  Total: (\d+)  Max/Min: (\d+)/(\d+) (\?\?\?|)  "
                      r"Fail: ([01]) (!!!|)$")


def run(args, timeout):
    """Run locktorture; returns (rc, stdout, stderr, seconds)."""
    t0 = time.monotonic()
    try:
        p = subprocess.run([EXE] + args, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out, "", time.monotonic() - t0


def lines_matching(out, rx):
    return [m for m in (rx.match(l) for l in out.splitlines()) if m]


def scenario_usage():
    """Bad options: exit 2, nothing on stdout, one stderr line naming the option."""
    bad = [
        (["--type", "no-such-lock"], "--type"),
        ([], "--type"),
        (["--type", "busted", "--nwriters_stress", "-2"], "nwriters_stress"),
        (["--type", "busted", "--nwriters-stress", "x"], "--nwriters-stress:"),
        (["--type", "busted", "--long_hold", "abc"], "long_hold"),
        (["--type", "busted", "--long_hold", "-5"], "long_hold"),
        (["--type", "busted", "--long_hold", "99999999999999999999999"], "long_hold"),
        (["--type", "busted", "--duration", "1.5"], "duration"),
        (["--type", "busted", "--duration", "99999999"], "duration"),
        (["--type", "busted", "--stutter", ""], "stutter"),
        (["--type", "busted", "--rt_boost", "3"], "rt_boost"),
        (["--type", "busted", "--rt_boost_factor", "0"], "rt_boost_factor"),
        (["--type", "busted", "--nested_locks", "9"], "nested_locks"),
        (["--type", "pthread-rwlock", "--nested_locks", "2"], "nested_locks"),
        (["--type", "busted", "--bind_readers", "0-x"], "bind_readers"),
        (["--type", "busted", "--bind-writers", "4095"], "--bind-writers"),
        (["--type", "busted", "--readers_bind", "4095"], "--readers_bind:"),
        (["--type", "busted", "--writers-bind", "x"], "--writers-bind:"),
        (["--type", "busted", "--shutdown_secs", "x"], "--shutdown_secs:"),
        (["--type", "busted", "--torture_type", "busted", "--nwriters-stress", "x"],
         "--nwriters-stress:"),
        (["--help", "stray"], "stray"),
        (["--list", "extra"], "extra"),
        (["-zh"], "'-z' in '-zh'"),
        (["--type", "busted", "--holders_check=1"], "'--holders_check' takes no value"),
        (["--type", "busted", "--bind_writers", ""], "bind_writers"),
        (["--type", "busted", "--jiffy", "0"], "jiffy"),
        (["--type", "busted", "--writer_fifo", "2"], "writer_fifo"),
        (["--type", "busted", "--watchdog", "1"], "watchdog"),
        (["--type", "busted", "--inject_hang", "-1"], "inject_hang"),
        (["--type", "busted", "--nwriters_stress", "0"], "locking thread"),
        (["--type", "busted", "--no-such-option"], "no-such-option"),
        (["--type", "busted", "stray"], "stray"),
        (["--type"], "--type"),
    ]
    for args, needle in bad:
        rc, out, err, _ = run(args, 10)
        lines = err.splitlines()
        good = rc == 2 and out == "" and len(lines) == 1 and needle in lines[0] \
            and lines[0].startswith("locktorture: ") \
            and ("accept" in lines[0] or "takes no value" in lines[0])
        # An alias is named as typed, never as its canonical twin.
        for alias, canon in [("readers_bind", "bind_readers"), ("writers-bind", "bind_writers"),
                             ("shutdown_secs", "--duration")]:
            if any(alias in a for a in args) and canon in err:
                good = False
        if not ok(good, f"rejected: {' '.join(args) or '(no options)'}"):
            diag(f"rc={rc} stdout={out!r} stderr={err!r}")
    rc, out, err, _ = run(["--type", "nope"], 10)
    ok('invalid torture type: "nope"' in err and "busted" in err and "pthread-mutex" in err,
       "unknown type: kernel wording and the list of accepted types")
    rc, out, _, _ = run(["--list"], 10)
    names = [l.split()[0] for l in out.splitlines()]
    ok(rc == 0 and "busted" in names and "pthread-mutex" in names, "--list names the locks")
    rc, out, _, _ = run(["--help"], 10)
    ok(rc == 0 and "--nwriters_stress" in out and "--watchdog" in out, "--help from the table")
    rc, out, err, _ = run(["--type", "busted", "--bind_readers", "4095"], 10)
    allowed = re.search(r"allowed CPUs ([0-9,-]+)", err)
    ok(rc == 2 and allowed is not None, f"CPU-list error prints the allowed CPUs: {err.strip()}")


def scenario_busted():
    """The negative control fails, fast and every time."""
    for i in range(3):
        rc, out, err, secs = run(["--type", "busted", "--duration", "10", "--fail_fast"], 30)
        ends = lines_matching(out, END_RE)
        stats = lines_matching(out, STATS_RE)
        good = rc == 1 and ends and ends[-1].group(2) == "FAILURE" \
            and any(m.group(6) == "1" and m.group(7) == "!!!" for m in stats) \
            and re.search(r"-torture:!!! (writer|reader) \d+: ", out) and secs < 5
        if not ok(good, f"busted run {i + 1}: exit 1, Fail: 1 !!!, FAILURE in {secs:.2f} s"):
            diag(out[-2000:] + err)
    rc, out, _, secs = run(["--type", "busted", "--duration", "2", "--holders_check"], 30)
    ok(rc == 1 and "holders counter" in out and "End of test: FAILURE" in out,
       f"busted without fail_fast: full run, holders check fires too ({secs:.1f} s)")


def check_pass(lock, extra, want_reads):
    rc, out, err, secs = run(["--type", lock, "--duration", "3", "--stat_interval", "1"] + extra,
                             60)
    ends = lines_matching(out, END_RE)
    writes = [m for m in lines_matching(out, STATS_RE) if m.group(1) == "Writes"]
    reads = [m for m in lines_matching(out, STATS_RE) if m.group(1) == "Reads "]
    good = rc == 0 and len(ends) == 1 and ends[0].group(2) == "SUCCESS" and writes \
        and int(writes[-1].group(2)) > 0 and all(m.group(6) == "0" for m in writes + reads) \
        and (bool(reads) == want_reads) and (not want_reads or int(reads[-1].group(2)) > 0)
    if not ok(good, f"{lock} {' '.join(extra)}: SUCCESS in {secs:.1f} s, "
                    f"writes {writes[-1].group(2) if writes else '?'}"
                    f"{', reads ' + reads[-1].group(2) if reads else ''}"):
        diag(f"rc={rc}\n" + out[-3000:] + err)


def scenario_pass():
    """Real locks pass short runs, with and without the optional machinery."""
    check_pass("pthread-mutex", [], False)
    check_pass("pthread-rwlock", ["--holders_check"], True)
    check_pass("pthread-mutex", ["--nested_locks", "4", "--call_rcu_chains", "2",
                                 "--onoff_interval", "1", "--acq_writer_lim", "1000",
                                 "--bind_writers", "0"], False)
    check_pass("pthread-spin", [], False)   # defaults: FIFO skipped for a spinning lock
    check_pass("pthread-spin", ["--rt_boost", "0", "--stutter", "0", "--shuffle_interval", "0"],
               False)


def scenario_format():
    """The output lines match the kernel's formats exactly."""
    args = ["--type", "pthread-rwlock", "--duration", "2", "--stat_interval", "1",
            "--long_hold", "7", "--stutter", "4", "--shuffle-interval", "2",
            "--nwriters_stress", "2", "--nreaders_stress", "3", "--rt_boost_factor", "40"]
    rc, out, err, _ = run(args, 60)
    lines = out.splitlines()
    starts = lines_matching(out, START_RE)
    ends = lines_matching(out, END_RE)
    ok(rc == 0 and len(starts) == 1 and lines[0] == starts[0].group(0),
       "the first line is the Start banner")
    ok(len(ends) == 1 and lines[-1] == ends[0].group(0) and ends[0].group(2) == "SUCCESS",
       "the last line is the End banner with the verdict")
    s = starts[0].group(0) if starts else ""
    for kv in ["long_hold=7 ", "stutter=4 ", "shuffle_interval=2 ", "nwriters_stress=2 ",
               "nreaders_stress=3 ", "rt_boost_factor=40 ", "shutdown_secs=2 ",
               "stat_interval=1 ", "bind_readers=", "onoff_interval=0 "]:
        ok(kv in s, f"Start banner echoes {kv.strip()}")
    ok(s.startswith("pthread-rwlock-torture:--- Start of test"), "type is the CLI lock name")
    ok(ends and ends[0].group(0).split(": ", 2)[2] == s.split(": ", 1)[1],
       "End banner repeats the same parameters")
    stats = [l for l in lines if l.startswith(("Writes", "Reads"))]
    ok(stats and all(STATS_RE.match(l) for l in stats), "every stats line matches the format")
    pairs = 0
    for i, l in enumerate(lines):
        if l.startswith("Writes:"):
            pairs += i + 1 < len(lines) and lines[i + 1].startswith("Reads :  Total: ")
    ok(pairs >= 2, f"each Writes line is followed by its Reads line ({pairs} pairs)")
    good = True
    for m in lines_matching(out, STATS_RE):
        mx, mn = int(m.group(3)), int(m.group(4))
        good &= (m.group(5) == "???") == (mx // 2 > mn) and mx >= mn
        good &= (m.group(7) == "!!!") == (m.group(6) == "1")
    ok(good, "??? exactly when max/2 > min; !!! exactly when Fail: 1")
    # Resolved defaults, oversubscribed: exclusive lock 4 x CPUs writers, rw
    # lock 2 x CPUs + 1 of each side; --kernel_defaults: 2 x CPUs, CPUs + CPUs.
    ncpu = len(os.sched_getaffinity(0))
    rc, out, _, _ = run(["--type", "pthread-mutex", "--duration", "1"], 30)
    s = lines_matching(out, START_RE)
    ok(s and f"nreaders_stress=0 nwriters_stress={4 * ncpu} " in s[0].group(0),
       f"exclusive lock default: {4 * ncpu} writers, 0 readers")
    ok(f"threads: {4 * ncpu} writers, 0 readers on {ncpu} CPUs (oversubscribed" in out,
       "the threads line states the oversubscribed default")
    ok("Reads" not in out, "no Reads line for an exclusive lock")
    rc, out, _, _ = run(["--type", "pthread-rwlock", "--duration", "1"], 30)
    s = lines_matching(out, START_RE)
    side = 2 * ncpu + 1
    ok(s and f"nreaders_stress={side} nwriters_stress={side} " in s[0].group(0),
       f"rw lock default: {side} writers + {side} readers")
    rc, out, _, _ = run(["--type", "pthread-mutex", "--duration", "1", "--kernel_defaults"], 30)
    s = lines_matching(out, START_RE)
    ok(s and f"nreaders_stress=0 nwriters_stress={2 * ncpu} " in s[0].group(0)
       and "--kernel_defaults: -1 = 2 x CPUs" in out,
       f"--kernel_defaults, exclusive lock: {2 * ncpu} writers")
    rc, out, _, _ = run(["--type", "pthread-rwlock", "--duration", "1", "--kernel-defaults"], 30)
    s = lines_matching(out, START_RE)
    ok(s and f"nreaders_stress={ncpu} nwriters_stress={ncpu} " in s[0].group(0),
       f"--kernel-defaults, rw lock: {ncpu} writers + {ncpu} readers")


def check_watchdog(lock, wd, extra):
    args = ["--type", lock, "--duration", "60", "--watchdog", str(wd), "--inject_hang", "300"]
    rc, out, err, secs = run(args + extra, 60)
    n = 4 * len(os.sched_getaffinity(0))
    dump = [l for l in out.splitlines() if re.match(r"^\S+-torture:!!! writer \d+: ", l)]
    good = rc == 1 and "watchdog: no lock progress" in out \
        and "End of test: FAILURE" in out.splitlines()[-1] and len(dump) == n \
        and sum("inject_hang" in l for l in dump) == 1 \
        and all("last progress" in l and "acquisitions" in l for l in dump)
    if not ok(good, f"{lock}: watchdog {wd} s fired, {len(dump)} thread states, "
                    f"FAILURE after {secs:.2f} s"):
        diag(f"rc={rc}\n" + out[-3000:] + err)
    ok(secs <= wd + 3.0, f"{lock}: verdict within watchdog + 3 s ({secs:.2f} <= {wd + 3})")


def scenario_watchdog():
    """An injected never-released lock ends in FAILURE within the watchdog time."""
    check_watchdog("pthread-mutex", 2, [])
    check_watchdog("pthread-spin", 2, [])          # spinning waiters, rt_boost on
    rc, out, err, secs = run(["--type", "pthread-mutex", "--duration", "2", "--watchdog", "0",
                              "--inject_hang", "100"], 30)
    ok(rc == 1 and "watchdog: writer 0 holding pthread-mutex since" in out
       and "not releasing it" in out and "End of test: FAILURE" in out
       and secs < 12, f"watchdog off: the end-of-test check names the holder ({secs:.1f} s)")
    # A hang that begins less than the watchdog's 10 s before the end (the
    # run lasts 3 s): still reported as a hang, with the thread dump.
    rc, out, err, secs = run(["--type", "mutex", "--duration", "3", "--nwriters_stress", "2",
                              "--inject_hang", "1", "--stutter", "0", "--long_hold", "0",
                              "--watchdog", "10", "--stat_interval", "0"], 30)
    dump = [l for l in out.splitlines() if re.match(r"^\S+-torture:!!! writer \d+: ", l)]
    ok(rc == 1 and "watchdog: writer 0 holding mutex" in out and len(dump) == 2
       and "End of test: FAILURE" in out.splitlines()[-1],
       f"a hang under the watchdog limit before the end: reported with {len(dump)} thread states ({secs:.1f} s)")


def scenario_signal():
    """SIGINT/SIGTERM end the run early with final stats and a verdict."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        t0 = time.monotonic()
        p = subprocess.Popen([EXE, "--type", "pthread-mutex", "--duration", "60"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        p.send_signal(sig)
        try:
            out, err = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        secs = time.monotonic() - t0
        good = p.returncode == 0 and "ending the test early" in out \
            and lines_matching(out, STATS_RE) and "End of test: SUCCESS" in out and secs < 5
        if not ok(good, f"{signal.Signals(sig).name}: final stats and SUCCESS after {secs:.1f} s"):
            diag(f"rc={p.returncode}\n" + out[-2000:] + err)


def scenario_perturb():
    """--perturb: seed printed, hooks reached, replay line on FAILURE, bad values refused."""
    rc, out, err, secs = run(["--type", "qspinlock-pv", "--duration", "2", "--perturb=5",
                              "--seed", "12345", "--stat_interval", "0"], 60)
    m = re.search(r"perturb: (\d+) points perturbed: (\d+) spins, (\d+) yields, (\d+) sleeps",
                  out)
    good = rc == 0 and "perturb: 5% of the lock's atomics" in out and "seed 12345" in out \
        and m and int(m.group(1)) > 0 and int(m.group(1)) == sum(int(m.group(i)) for i in (2, 3, 4))
    if not ok(good, f"qspinlock-pv --perturb=5: SUCCESS, seed printed, "
                    f"{m.group(1) if m else 0} points perturbed"):
        diag(f"rc={rc}\n" + out[-2000:] + err)
    polls = re.search(r"; (\d+) writer acquisitions polled trylock first$", out, re.M)
    if not ok(polls and int(polls.group(1)) > 0,
              f"the writers' polling phases ran: {polls.group(1) if polls else 'no'} "
              f"acquisitions polled trylock first"):
        diag(out[-2000:])
    rc, out, err, _ = run(["--type", "mutex", "--duration", "1", "--stat_interval", "0"], 60)
    ok(rc == 0 and "perturb: off" in out and "points perturbed" not in out,
       "without --perturb: off, nothing perturbed")
    rc, out, err, _ = run(["--type", "busted", "--duration", "1", "--perturb", "--seed=777",
                           "--fail_fast"], 60)
    rep = [l for l in out.splitlines() if "!!! replay (same seed; perturbations on): " in l]
    good = rc == 1 and len(rep) == 1 and rep[0].endswith(" --type busted --duration 1 --perturb "
                                                        "--fail_fast --seed 777")
    if not ok(good, "a FAILURE prints the command that replays it, with its seed"):
        diag(out[-2000:])
    for bad, what in ((["--perturb=0"], "--perturb"), (["--perturb=x"], "--perturb"),
                      (["--perturb=101"], "--perturb"), (["--seed", "-1"], "--seed"),
                      (["--seed"], "--seed")):
        rc, out, err, _ = run(["--type", "mutex"] + bad, 30)
        ok(rc == 2 and out == "" and what in err and len(err.splitlines()) == 1,
           f"rejected: {' '.join(bad)}")


SCENARIOS = {
    "perturb": scenario_perturb,
    "usage": scenario_usage,
    "busted": scenario_busted,
    "pass": scenario_pass,
    "format": scenario_format,
    "watchdog": scenario_watchdog,
    "signal": scenario_signal,
}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in SCENARIOS:
        print(f"usage: {sys.argv[0]} LOCKTORTURE {{{'|'.join(SCENARIOS)}}}", file=sys.stderr)
        sys.exit(2)
    EXE = sys.argv[1]
    SCENARIOS[sys.argv[2]]()
    done()
