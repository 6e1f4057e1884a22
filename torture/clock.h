/* SPDX-License-Identifier: MIT */
/*
 * clock.h - the clocks and waits locktorture needs: a precise and a cheap
 * CLOCK_MONOTONIC reading, busy-waits (the kernel's mdelay/udelay, which
 * keep the CPU and the lock), and sleeps that survive signals.
 *
 * Kept local to torture/ so the program does not depend on the benchmark
 * timing code's calibration.
 */
#ifndef LB_TORTURE_CLOCK_H
#define LB_TORTURE_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in ns. */
uint64_t lb_torture_now_ns(void);

/*
 * CLOCK_MONOTONIC_COARSE in ns: a few ns to read, resolution of a scheduler
 * tick.  Used for progress stamps on every iteration; same time base as
 * lb_torture_now_ns() but may lag it by up to one tick.
 */
uint64_t lb_torture_coarse_ns(void);

/* Busy-wait at least ns nanoseconds without sleeping. */
void lb_torture_spin_ns(uint64_t ns);

/* Sleep ns nanoseconds (resumed after a signal). */
void lb_torture_sleep_ns(uint64_t ns);

#endif /* LB_TORTURE_CLOCK_H */
