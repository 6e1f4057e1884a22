/* SPDX-License-Identifier: MIT */
/*
 * lb_work.c - calibrated busy work.
 *
 * One iteration is one step of a 64-bit linear congruential generator,
 * x = x * A + C.  Each step needs the previous result (a multiply-add chain,
 * about 4 cycles of latency on current cores), so the loop is latency-bound:
 * it does not vectorise, does not depend on memory, and scales with the core
 * clock only.  An empty asm that "modifies" x stops the compiler from
 * folding the chain into a closed form.
 */
#include "lb_work.h"
#include "lb_die.h"
#include "lb_time.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#define WORK_A 6364136223846793005ull /* Knuth's MMIX LCG constants */
#define WORK_C 1442695040888963407ull

#define CAL_RUNS 9
#define CAL_ITERS 2000000ull /* a few ms per run (doc/lockbench.md has the figure) */

uint64_t lb_work(uint64_t iters)
{
	uint64_t x = iters;
	for (uint64_t i = 0; i < iters; i++) {
		x = x * WORK_A + WORK_C;
#if defined(__GNUC__)
		__asm__ __volatile__("" : "+r"(x));
#else
		{
			volatile uint64_t sink = x; /* slower, but still opaque */
			x = sink;
		}
#endif
	}
	return x;
}

static double ns_per_iter;
static _Atomic bool work_calibrated; /* ns_per_iter is set (release/acquire) */
static pthread_once_t cal_once = PTHREAD_ONCE_INIT;
static volatile uint64_t work_sink;

static void calibrate(void)
{
	/*
	 * Each run is timed on this thread's CPU clock, and the fastest run
	 * counts: preemption, a migration or a stolen vCPU only ever make a
	 * run longer, never shorter.  A median of wall-clock runs (before)
	 * came out 4-20x too high beside a parallel build (69-362 iterations
	 * for 2 us where ~1,350 is right here), so --cs 2us ran sections of
	 * 0.1-0.5 us.
	 */
	double best = 0;
	work_sink = lb_work(CAL_ITERS / 4); /* warm up: page in, clock up */
	for (int i = 0; i < CAL_RUNS; i++) {
		uint64_t t0 = lb_thread_cpu_ns();
		work_sink = lb_work(CAL_ITERS);
		double r = (double)(lb_thread_cpu_ns() - t0) / (double)CAL_ITERS;
		if (r > 0 && (best == 0 || r < best))
			best = r;
	}
	ns_per_iter = best > 0 ? best : 1.0;
	atomic_store_explicit(&work_calibrated, true, memory_order_release);
}

double lb_work_ns_per_iter_if_known(void)
{
	/* Acquire pairs with the release above: the value is complete. */
	return atomic_load_explicit(&work_calibrated, memory_order_acquire) ? ns_per_iter : 0;
}

double lb_work_ns_per_iter(void)
{
	int err = pthread_once(&cal_once, calibrate);
	if (err)
		lb_die(err, "pthread_once");
	return ns_per_iter;
}

uint64_t lb_work_iters_for_ns(uint64_t ns)
{
	if (ns == 0)
		return 0;
	uint64_t iters = (uint64_t)((double)ns / lb_work_ns_per_iter() + 0.5);
	return iters ? iters : 1;
}

double lb_work_overhead_ns(double cpu_ns_per_op, double work_ns_per_op, bool *below_resolution)
{
	double overhead = cpu_ns_per_op - work_ns_per_op;
	/* !(x >= 0) also catches NaN (no ops at all): report 0, flagged. */
	*below_resolution = !(overhead >= 0.0);
	return *below_resolution ? 0.0 : overhead;
}
