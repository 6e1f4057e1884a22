#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The tests' start order (tests/meson.build, "Order"): every test that runs
alone (is_parallel: false) has the lowest priority, below every parallel
test, so that meson starts all parallel tests before the first one that
runs alone; a long parallel test starts before the short ones.  And every
name in tests/meson.build's lb_deferred (the tests whose runs move to
scripts/test --slow) is a test that carries the suites it names.  TAP.

usage: test_test_order.py BUILD_ROOT [NAME=SUITE,SUITE...]...
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
# lb_deferred: a name that matches no test (a typo, a renamed test) would
# leave that test's run where it was, silently; so would a test definition
# that forgets to add lb_deferred.get(its name).
suites_of = {t["name"]: {s.split(":")[-1] for s in t["suite"]} for t in tests}
deferred = dict(a.split("=", 1) for a in sys.argv[2:])
unknown = sorted(n for n in deferred if n not in suites_of)
untagged = sorted(n for n, want in deferred.items()
                  if n in suites_of and not set(want.split(",")) <= suites_of[n])
if deferred:
    ok(not unknown and not untagged,
       "every lb_deferred name (%d) is a test with the suites it names: unknown %s, untagged %s"
       % (len(deferred), unknown, untagged))
# else: a sanitizer build, which lacks some of those tests; build/ checks.
done()
