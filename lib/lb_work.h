/* SPDX-License-Identifier: MIT */
/*
 * lb_work.h - calibrated busy work for critical and parallel sections.
 *
 * The unit is one iteration of a dependent-add loop the compiler cannot
 * remove or vectorise.  lb_work_ns_per_iter() measures ns per iteration (median
 * of 5 timed runs) so a user may ask for work in ns ("--cs 200ns") or in
 * iterations ("--cs 500").
 */
#ifndef LB_WORK_H
#define LB_WORK_H

#include <stdbool.h>
#include <stdint.h>

/* A critical or parallel section length as given (--cs, --par): iterations,
 * or ns to turn into iterations with lb_work_iters_for_ns(). */
struct lb_work_len {
	uint64_t value;
	bool in_ns;
	uint64_t iters; /* resolved after calibration */
};

/* Run `iters` iterations of the busy loop; returns a value to sink. */
uint64_t lb_work(uint64_t iters);

/* ns per iteration; measured once (thread-safe), then cached. */
double lb_work_ns_per_iter(void);

/* The calibrated ns per iteration if some caller already measured it, else 0:
 * for reports that must not pay ~50 ms to calibrate what they never used. */
double lb_work_ns_per_iter_if_known(void);

/* Iterations that take about ns nanoseconds (0 for 0). */
uint64_t lb_work_iters_for_ns(uint64_t ns);

/*
 * Lock overhead per operation, lockhammer's definition: CPU time per op minus
 * the calibrated work inside and outside the lock.  The calibration has its
 * own error (a few %, and the CPU's clock may change between calibration and
 * run), so with long sections the difference can come out below zero: the
 * overhead is then below what the calibration can resolve.  Returns the
 * difference clamped at 0 and sets *below_resolution when it was negative.
 */
double lb_work_overhead_ns(double cpu_ns_per_op, double work_ns_per_op, bool *below_resolution);

#endif /* LB_WORK_H */
