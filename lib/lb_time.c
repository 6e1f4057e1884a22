/* SPDX-License-Identifier: MIT */
/*
 * lb_time.c - clocks and the cycle-counter calibration.
 *
 * The calibration times five ~10 ms windows of busy-waiting against
 * CLOCK_MONOTONIC and keeps the median ratio, so one window stretched by
 * preemption or a frequency step cannot skew it.  It runs once per process
 * (pthread_once); later callers read the cached value.
 */
#include "lb_time.h"
#include "lb_cpu.h"
#include "lb_die.h"
#include "lb_stats.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#define CAL_WINDOWS 5
#define CAL_WINDOW_NS 10000000ull

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts) != 0)
		lb_die(errno, "clock_gettime");
	return (uint64_t)ts.tv_sec * LB_NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t lb_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t lb_thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t lb_cycles_fallback(void)
{
	return clock_ns(CLOCK_MONOTONIC_RAW);
}

const char *lb_cycles_source(void)
{
#if defined(__GNUC__) && defined(__x86_64__)
	return "tsc";
#elif defined(__GNUC__) && defined(__aarch64__)
	return "cntvct";
#else
	return "clock";
#endif
}

static double cycles_per_ns;
static uint64_t read_overhead;
static uint64_t ordered_floor;
static pthread_once_t cal_once = PTHREAD_ONCE_INIT;
static _Atomic bool cycles_calibrated; /* cycles_per_ns is set (release/acquire) */

/* One window: counter ticks per elapsed CLOCK_MONOTONIC ns. */
static double cal_window(void)
{
	uint64_t t0 = lb_now_ns(), c0 = lb_cycles(), t1, c1;
	do {
		lb_cpu_pause();
		t1 = lb_now_ns();
	} while (t1 - t0 < CAL_WINDOW_NS);
	c1 = lb_cycles();
	return (double)(c1 - c0) / (double)(t1 - t0);
}

static void calibrate(void)
{
	double r[CAL_WINDOWS];
	for (int i = 0; i < CAL_WINDOWS; i++)
		r[i] = cal_window();
	double m = lb_median(r, CAL_WINDOWS);
	/* A counter that does not tick (broken VM) must not yield 0 or NaN. */
	cycles_per_ns = isfinite(m) && m > 0 ? m : 1.0;
	/* The typical back-to-back pair of reads is what one timed interval
	 * costs on top of what it measures.  The median, not the minimum: under
	 * virtualisation a few pairs read implausibly close together (figures:
	 * doc/lockbench.md, "cache-line round trip"). */
	double pair[1001];
	for (int i = 0; i < 1001; i++) {
		uint64_t a = lb_cycles(), b = lb_cycles();
		pair[i] = (double)(b - a);
	}
	read_overhead = (uint64_t)lb_median(pair, 1001);
	uint64_t floor = UINT64_MAX;
	for (int i = 0; i < 1001; i++) {
		uint64_t a = lb_cycles_ordered(), b = lb_cycles_ordered();
		floor = b - a < floor ? b - a : floor;
	}
	ordered_floor = floor;
	atomic_store_explicit(&cycles_calibrated, true, memory_order_release);
}

double lb_cycles_per_ns_if_known(void)
{
	/* Acquire pairs with the release above: the value is complete. */
	return atomic_load_explicit(&cycles_calibrated, memory_order_acquire) ? cycles_per_ns : 0;
}

uint64_t lb_cycles_overhead(void)
{
	lb_cycles_per_ns();
	return read_overhead;
}

uint64_t lb_cycles_ordered_floor(void)
{
	lb_cycles_per_ns();
	return ordered_floor;
}

double lb_cycles_per_ns(void)
{
	int err = pthread_once(&cal_once, calibrate);
	if (err)
		lb_die(err, "pthread_once");
	return cycles_per_ns;
}

double lb_cycles_to_ns(uint64_t cycles)
{
	return (double)cycles / lb_cycles_per_ns();
}

void lb_spin_ns(uint64_t ns)
{
	if (ns == 0)
		return;
	uint64_t end = lb_now_ns() + ns;
	/* Plain clock polling: no shared data, so no ordering to pair with. */
	while (lb_now_ns() < end)
		lb_cpu_pause();
}
