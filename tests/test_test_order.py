#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The tests' start order (tests/meson.build, "Order"): every test that runs
alone (is_parallel: false) has the lowest priority, below every parallel
test, so that meson starts all parallel tests before the first one that
runs alone; a long parallel test starts before the short ones.  TAP.

usage: test_test_order.py BUILD_ROOT
"""
import json
import subprocess
import sys

from lbtap import diag, done, ok

tests = json.loads(subprocess.check_output(["meson", "introspect", "--tests", sys.argv[1]]))
alone = [t for t in tests if not t["is_parallel"]]
shared = [t for t in tests if t["is_parallel"]]
ok(alone and shared, "the build has tests of both kinds (%d alone, %d parallel)"
   % (len(alone), len(shared)))
lowest = min(t["priority"] for t in tests)
late = [t["name"] for t in alone if t["priority"] != lowest]
ok(lowest < 0 and not late,
   "every test that runs alone has the lowest priority (%d): not %s" % (lowest, late[:5]))
early = [t["name"] for t in shared if t["priority"] <= lowest]
ok(not early, "no parallel test shares it: %s" % early[:5])
# meson writes the tests in the order it starts them (priority first).
order = [t["priority"] for t in tests]
ok(order == sorted(order, reverse=True), "meson's list is in start order")
if late or early:
    diag("give a test that runs alone 'priority: lb_alone_last' (tests/meson.build)")
done()
