/* SPDX-License-Identifier: MIT */
/*
 * test_work.c - lb_work's calibration (lib/lb_work.c) must not be fooled by
 * a busy machine: with a second busy thread on the calibrating thread's CPU
 * (so it runs about half the wall time), the calibrated ns per iteration
 * must agree with a long run timed on the thread's own CPU clock.  A median
 * of wall-clock runs came out about 2x too high here, and --cs 2us then ran
 * 1 us sections.
 */
#include "lb_time.h"
#include "lb_work.h"
#include "tap.h"
#include "test_sync.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

static atomic_bool stop_hog;
static volatile uint64_t sink; /* the main thread's only */

static void *hog_main(void *arg)
{
	(void)arg;
	volatile uint64_t hog_sink; /* its own: a shared sink would be a data race */
	/* Busy until told to stop: it only has to compete for the CPU. */
	while (!atomic_load_explicit(&stop_hog, memory_order_relaxed))
		hog_sink = lb_work(1000);
	(void)hog_sink;
	return NULL;
}

int main(void)
{
	tap_plan(2);
	int cpu = sched_getcpu();
	if (cpu < 0 || pin_self(cpu)) {
		tap_ok(true, "# SKIP cannot pin to one CPU");
		tap_ok(true, "# SKIP cannot pin to one CPU");
		return 0;
	}
	pthread_t hog;
	pthread_attr_t attr;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	int err = pthread_create(&hog, &attr, hog_main, NULL);
	pthread_attr_destroy(&attr);
	uint64_t hog_started = lb_now_ns();
	/* Let the scheduler settle the two threads on the CPU first. */
	while (lb_now_ns() - hog_started < 20 * LB_NS_PER_MS)
		sink = lb_work(1000);
	double calibrated = lb_work_ns_per_iter(); /* the first call calibrates */
	if (!err) {
		atomic_store_explicit(&stop_hog, true, memory_order_relaxed);
		pthread_join(hog, NULL);
	}
	tap_ok(!err && calibrated > 0, "calibrated beside a busy thread on CPU%d: %.3f ns/iter",
	       cpu, calibrated);

	/* The reference: 100 ms of work on the thread's own CPU clock, the
	 * fastest of 5 (preemption only lengthens a run). */
	double best = 0;
	uint64_t iters = (uint64_t)(20e6 / calibrated);
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = lb_thread_cpu_ns();
		sink = lb_work(iters);
		double r = (double)(lb_thread_cpu_ns() - t0) / (double)iters;
		if (r > 0 && (best == 0 || r < best))
			best = r;
	}
	double ratio = calibrated / best;
	tap_ok(ratio > 0.75 && ratio < 1.33,
	       "calibration %.3f ns/iter agrees with a long CPU-clock run %.3f ns/iter (ratio %.2f, "
	       "want 0.75-1.33)", calibrated, best, ratio);
	return tap_failed ? 1 : 0;
}
