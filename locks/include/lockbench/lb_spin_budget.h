/* SPDX-License-Identifier: MIT */
/*
 * lb_spin_budget.h - spin budgets in time, not loop counts: one calibration
 * of lb_cpu_relax() shared by every lock header that spins.
 *
 * A budget written as "N iterations" means 10x different waits on CPUs whose
 * `pause` costs 5 ns or 50 ns (Skylake-SP raised it ~14x).  Lock headers
 * therefore state their budgets in nanoseconds and turn them into
 * iterations with lb_spin_loops(ns).
 *
 * Calibration: the first call times 128 lb_cpu_relax() three times against
 * the clock (CLOCK_MONOTONIC where POSIX declares it, else C11
 * timespec_get) and keeps the fastest run (a run that was preempted only
 * reads slower), clamped to 1 ps .. 1 us per iteration.  The result is
 * cached in a function-local static atomic: header-only, no initialiser to
 * call, safe from any thread (two racing first calls both calibrate and
 * store about the same value; relaxed order suffices, it is a hint).  Each
 * translation unit that uses it calibrates once (about 10 us).  A copy
 * built for the simulator defines LB_SPIN_RELAX_PS_SLOT() to give the
 * cache word of the simulated world instead.
 *
 * Public: lb_spin_relax_ps(), lb_spin_loops(ns).
 */
#ifndef LB_SPIN_BUDGET_H
#define LB_SPIN_BUDGET_H

#include <stdint.h>
#include <time.h>

#include "lb_atomic.h"

static inline uint64_t lb_spin__clock_ns(void)
{
	struct timespec ts;
#if defined(CLOCK_MONOTONIC)
	clock_gettime(CLOCK_MONOTONIC, &ts);
#else
	timespec_get(&ts, TIME_UTC);
#endif
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Cost of one lb_cpu_relax() in picoseconds (calibrated once, >= 1). */
static inline uint32_t lb_spin_relax_ps(void)
{
#if defined(LB_SPIN_RELAX_PS_SLOT)
	/* A simulator's copy of the locks only (bench/sim/sim_interpose.h):
	 * the cache is the simulated world's, so that every cell calibrates
	 * in its own virtual time as the first one does, instead of the
	 * first cell alone paying for it and shifting its timeline. */
	_Atomic(uint32_t) *const slot = LB_SPIN_RELAX_PS_SLOT();
#else
	static _Atomic(uint32_t) cached; /* 0 = not yet calibrated */
	_Atomic(uint32_t) *const slot = &cached;
#endif
	uint32_t ps = atomic_load_explicit(slot, memory_order_relaxed);
	if (LB_LIKELY(ps != 0))
		return ps;
	uint64_t best = UINT64_MAX;
	for (int run = 0; run < 3; run++) {
		uint64_t t0 = lb_spin__clock_ns();
		for (int i = 0; i < 128; i++)
			lb_cpu_relax(); /* the loop being timed */
		uint64_t dt = lb_spin__clock_ns() - t0;
		if (dt < best)
			best = dt;
	}
	uint64_t v = best * 1000u / 128u;
	ps = v < 1 ? 1u : v > 1000000u ? 1000000u : (uint32_t)v;
	atomic_store_explicit(slot, ps, memory_order_relaxed);
	return ps;
}

/* Iterations of lb_cpu_relax() that take about ns nanoseconds (>= 1). */
static inline uint32_t lb_spin_loops(uint64_t ns)
{
	uint64_t n = ns * 1000u / lb_spin_relax_ps();
	return n == 0 ? 1u : n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

#endif /* LB_SPIN_BUDGET_H */
