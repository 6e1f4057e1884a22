/* SPDX-License-Identifier: MIT */
/*
 * perturb.h - locktorture --perturb: random short delays, yields and sleeps
 * around every atomic operation and futex call of the lock under test, the
 * userspace counterpart of the kernel torture's random delays and
 * preemption.  They widen the race windows a broken lock has (two owners
 * between a test and a set, a wake-up sent before the waiter sleeps) from
 * nanoseconds to microseconds, so a torture run of seconds hits them.
 *
 * The hooks are compiled only into locktorture's own copy of the locks
 * (torture/perturb_hooks.h, -DLB_PERTURB=1); lockbench never has them.
 *
 * One global configuration, written by main before any worker starts and
 * read-only afterwards (the hooks in the lock code have no run context to
 * look it up in).  Each thread draws from its own generator, seeded from
 * the run's seed and the worker's index, so --seed N replays the same
 * decision streams (the interleaving itself still varies from run to run).
 */
#ifndef LB_TORTURE_PERTURB_H
#define LB_TORTURE_PERTURB_H

#include <stdbool.h>
#include <stdint.h>

/* Read by every hook: true while --perturb is on. */
extern bool lb_perturb_enabled;

/* Turn the hooks on: perturb rate_ppm of every million points, seed the threads
 * from seed.  Before any worker starts. */
void lb_perturb_configure(uint32_t rate_ppm, uint64_t seed);

/* Seed the calling thread's generator for worker `index` (dense). */
void lb_perturb_thread_start(unsigned int index);

/* Points perturbed so far, by kind (a racy sum: for the summary line). */
struct lb_perturb_counts {
	uint64_t points, spins, yields, sleeps;
};
void lb_perturb_read_counts(struct lb_perturb_counts *out);

/* One decision: maybe spin, yield or sleep. */
void lb_perturb_slow(void);

static inline void lb_perturb_point(void)
{
	if (__builtin_expect(lb_perturb_enabled, 0))
		lb_perturb_slow();
}

#endif /* LB_TORTURE_PERTURB_H */
