/* SPDX-License-Identifier: MIT */
/*
 * watchdog.h - the "no progress for N seconds" detector and the per-thread
 * dump it prints before ending the test with FAILURE.
 *
 * Progress means a worker completed an acquisition or an iteration, or is
 * paused by stutter (paused threads are alive).  When every worker's last
 * progress is older than the limit, something is wedged: a lock that lost
 * a wake-up, a never-released lock (--inject_hang), a livelock.  Blocked
 * workers cannot be joined, so after the dump the program prints the
 * verdict and leaves with _exit().
 */
#ifndef LB_TORTURE_WATCHDOG_H
#define LB_TORTURE_WATCHDOG_H

#include "context.h"

/* ns since the most recent progress of any worker (coarse clock `now`). */
uint64_t lb_torture_idle_ns(const struct lb_torture_run *run, uint64_t now);

/* One "!!!" line per worker: role, state, lock, since when, progress, count. */
void lb_torture_dump_threads(const struct lb_torture_run *run);

/*
 * The per-thread starvation check (--stall_secs): the worker that has been
 * waiting for a lock the longest, when that is at least limit_ns and some
 * other worker made progress more than limit_ns / 2 after it began waiting
 * (one waiter stranded while the others go on: a lost wake-up).  NULL when
 * none; *waited_ns is set when one is returned.
 */
const struct lb_torture_thread *lb_torture_stalled(const struct lb_torture_run *run, uint64_t now,
					       uint64_t limit_ns, uint64_t *waited_ns);

#endif /* LB_TORTURE_WATCHDOG_H */
