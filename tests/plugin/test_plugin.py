#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_plugin.py - lock plugins (locks/include/lockbench/lb_plugin.h) end to end.

Arguments: lockbench locktorture SOURCE_ROOT NAME=PATH...  (the plugins
tests/plugin/meson.build built).  Checks: a good plugin runs in bench and
locktorture; two builds of one ticket source with different names run in
one bench; scripts/build-plugin builds such a pair from a tree; each bad
plugin is refused with one line naming the problem and exit 2."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lbtap  # noqa: E402

LOCKBENCH, TORTURE, SRC = sys.argv[1:4]
PLUGINS = dict(a.split("=", 1) for a in sys.argv[4:])


def run(cmd, timeout=120, env=None):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return -1, "", "timed out"


def bench(locks, extra=()):
    return run([LOCKBENCH, "bench", "-q", "-l", ",".join(locks), "-t", "1,2", "-d", "50ms",
                *extra])


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "b.json")
    rc, so, se = bench([PLUGINS["ticket-a"], "ticket"], ["--json", out])
    names = []
    if rc == 0:
        names = sorted({r["params"]["lock"] for r in json.load(open(out))["results"]})
    lbtap.ok(rc == 0 and names == ["ticket", "ticket-a"],
             f"bench runs a plugin beside the built-in ticket (rc {rc}, locks {names}) {se[-300:]}")

    rc, so, se = bench([PLUGINS["ticket-a"], PLUGINS["ticket-b"]], ["--json", out])
    names = sorted({r["params"]["lock"] for r in json.load(open(out))["results"]}) if rc == 0 else []
    lost = [r for r in (json.load(open(out))["results"] if rc == 0 else [])
            if any(x.get("lost_updates") for x in r.get("runs", []))]
    lbtap.ok(rc == 0 and names == ["ticket-a", "ticket-b"] and not lost,
             f"two builds of one ticket source, two names, one run (rc {rc}, {names})")

    rc, so, se = bench([PLUGINS["template"]])
    lbtap.ok(rc == 0 and "my-tas" in so, f"the template plugin runs (rc {rc}) {se[-200:]}")

    rc, so, se = bench([PLUGINS["ticket-a"], PLUGINS["ticket-a"]])
    lbtap.ok(rc == 2 and "twice" in se, f"the same plugin twice is refused (rc {rc}: {se.strip()})")

    rc, so, se = run([TORTURE, "--type", PLUGINS["ticket-a"], "--duration", "2",
                      "--stat_interval", "0", "--nwriters_stress", "2"], timeout=60)
    lbtap.ok(rc == 0 and "ticket-a" in so + se, f"locktorture --type PLUGIN passes (rc {rc}) {se[-300:]}")

    # scripts/build-plugin: HEAD and a "patched" copy of the tree (here the
    # same files) as two plugins, no renaming, one bench run.
    script = os.path.join(SRC, "scripts", "build-plugin")
    built = []
    for name in ("ticket-head", "ticket-patched"):
        so_path = os.path.join(tmp, name + ".so")
        rc, so, se = run(["bash", script, "--tree", SRC, "--name", name, "-o", so_path])
        lbtap.ok(rc == 0 and os.path.exists(so_path), f"build-plugin --name {name} (rc {rc}) {se[-300:]}")
        built.append(so_path)
    rc, so, se = bench(built, ["--json", out])
    names = sorted({r["params"]["lock"] for r in json.load(open(out))["results"]}) if rc == 0 else []
    lbtap.ok(rc == 0 and names == ["ticket-head", "ticket-patched"],
             f"both built plugins in one bench run ({names}) {se[-200:]}")
    rc, so, se = run(["bash", script, "--tree", SRC, "--name", "bad\"name"])
    lbtap.ok(rc == 2 and se.count("\n") == 1 and "--name" in se,
             f"build-plugin refuses a bad name in one line (rc {rc}: {se.strip()})")

    refusals = {
        "bad-version": "ABI version 999",
        "bad-missing": "symbol 'lb_plugin_ops' missing",
        "bad-ops": "init, lock and unlock are required",
        "bad-name": "taken by a built-in lock",
    }
    for name, want in refusals.items():
        for tool, cmd in (("bench", [LOCKBENCH, "bench", "-l", PLUGINS[name], "-d", "20ms"]),
                          ("locktorture", [TORTURE, "--type", PLUGINS[name], "--duration", "1"])):
            rc, so, se = run(cmd, timeout=30)
            lbtap.ok(rc == 2 and want in se and se.count("\n") == 1 and "plugin '" in se,
                     f"{tool} refuses {name}: one line, exit 2 (rc {rc}: {se.strip()})")
    # A version-1 plugin (before init_shared) still loads, reading as "cannot
    # be shared by processes"; a version-2 one without init_shared likewise.
    for name in ("old-v1", "ticket-a"):
        rc, so, se = run([LOCKBENCH, "rt", "-P", "-L", PLUGINS[name], "-g", "1"], timeout=30)
        lbtap.ok(rc == 2 and se.count("\n") == 1 and "cannot be shared by processes" in se and
                 "ABI" not in se, f"rt -P refuses {name}: loaded, no init_shared (rc {rc}: {se.strip()})")
    # A version-2 plugin (before lock_fallible) loads and never fails to lock:
    # locktorture's --deadlock skips it (exit 77) rather than refusing it.
    for name in ("old-v2", "old-v3"):
        rc, so, se = run([TORTURE, "--type", PLUGINS[name], "--deadlock", "abba",
                          "--duration", "1"], timeout=30)
        lbtap.ok(rc == 77 and "skipped" in so and "ABI" not in se and "checks" not in se,
                 f"a version-{name[-1]} plugin loads, without lock_fallible "
                 f"(rc {rc}: {se.strip()}{so.strip()})")
    # The shipped adapters of locks with a per-thread context: each thread's
    # context set up by thread_init, mutual exclusion at 2 threads.
    rc, so, se = bench([PLUGINS["qspinlock-a"], PLUGINS["mutex-a"]], ["--json", out])
    cells = []
    if rc == 0:
        with open(out) as f:
            cells = [(c["params"]["lock"], c["params"]["threads"], c["runs"][0]["lost_updates"])
                     for c in json.load(f)["results"]]
    lbtap.ok(rc == 0 and len(cells) == 4 and all(lost == 0 for _, _, lost in cells) and
             {lock for lock, _, _ in cells} == {"qspinlock-a", "mutex-a"},
             f"qspinlock and mutex adapters (per-thread context): 1 and 2 threads, no lost "
             f"updates ({cells or se.strip()})")
    missing = os.path.join(tmp, "nothere.so")
    rc, so, se = run([LOCKBENCH, "bench", "-l", missing, "-d", "20ms"])
    lbtap.ok(rc == 2 and "cannot be loaded" in se and se.count("\n") == 1,
             f"a missing file: one line, exit 2 (rc {rc}: {se.strip()})")
    # A plugin in the current directory named without "./": dlopen looks in
    # the library path only (meson test adds the build's directories to it,
    # so a copy under a new name, and no LD_LIBRARY_PATH), and the line must
    # name the fix.
    here = os.path.join(tmp, "mine.so")
    shutil.copy(PLUGINS["ticket-a"], here)
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    p = subprocess.run([os.path.abspath(LOCKBENCH), "bench", "-q", "-l", "mine.so", "-d", "20ms"],
                       capture_output=True, text=True, timeout=60, cwd=tmp, env=env)
    lbtap.ok(p.returncode == 2 and p.stderr.count("\n") == 1 and "./mine.so" in p.stderr and
             "library path" in p.stderr,
             f"a plugin here named without ./: one line naming ./mine.so (rc {p.returncode}: "
             f"{p.stderr.strip()})")
    # Not an ELF object at all: dlopen refuses it; nothing of it runs.
    text = os.path.join(tmp, "script.so")
    with open(text, "w") as f:
        f.write("#!/bin/sh\ntouch " + os.path.join(tmp, "ran") + "\n")
    os.chmod(text, 0o755)
    rc, so, se = run([LOCKBENCH, "bench", "-l", text, "-d", "20ms"])
    lbtap.ok(rc == 2 and not os.path.exists(os.path.join(tmp, "ran")),
             f"a script named .so is refused and never run (rc {rc}: {se.strip()})")

lbtap.done()
