/* SPDX-License-Identifier: MIT */
/*
 * test_overhead.c - lock overhead is never negative (issue 15 item 4):
 * lb_work_overhead_ns() clamps a difference below zero to 0 and flags it.
 */
#include "lb_work.h"
#include "tap.h"

#include <math.h>

int main(void)
{
	bool clamped = true;
	double v = lb_work_overhead_ns(120.0, 100.0, &clamped);
	tap_ok(fabs(v - 20.0) < 1e-9 && !clamped, "positive difference kept: 20 ns, not flagged");
	v = lb_work_overhead_ns(10050263.0, 10133117.0, &clamped);
	tap_ok(v == 0.0 && clamped, "--cs 10ms with CPU time below the calibrated work: 0, flagged");
	v = lb_work_overhead_ns(100.0, 100.0, &clamped);
	tap_ok(v == 0.0 && !clamped, "exactly the work: 0, not flagged");
	v = lb_work_overhead_ns(NAN, 5.0, &clamped);
	tap_ok(v == 0.0 && clamped, "no ops (NaN): 0, flagged");
	v = lb_work_overhead_ns(-3.0, 0.0, &clamped);
	tap_ok(v >= 0.0 && clamped, "negative CPU time per op never shows as negative");
	return tap_done();
}
