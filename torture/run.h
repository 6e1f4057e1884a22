/* SPDX-License-Identifier: MIT */
/*
 * run.h - one locktorture test from start banner to verdict.
 *
 * Order, after the kernel's lock_torture_init(): lock init; Start line;
 * onoff, shuffler, stutter, call_rcu chains; workers created interleaved
 * (writer i, reader i) on their CPU sets; then this thread becomes the
 * stats/shutdown/watchdog thread.  The test ends at --duration, on
 * SIGINT/SIGTERM, at the first failure with --fail_fast, or when the
 * watchdog fires.
 */
#ifndef LB_TORTURE_RUN_H
#define LB_TORTURE_RUN_H

#include "context.h"

/* Run the test; returns the exit status (0 SUCCESS, 1 FAILURE). */
int lb_torture_run(const struct lb_torture_config *cfg);

#endif /* LB_TORTURE_RUN_H */
