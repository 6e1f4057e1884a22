/* SPDX-License-Identifier: MIT */
/* clock.c - monotonic clocks, busy-waits and sleeps for locktorture. */
#include "clock.h"
#include "lb_time.h"
#include "lb_atomic.h"

#include <errno.h>
#include <time.h>

static uint64_t read_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * LB_NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t lb_torture_now_ns(void)
{
	return read_clock(CLOCK_MONOTONIC);
}

uint64_t lb_torture_coarse_ns(void)
{
#ifdef CLOCK_MONOTONIC_COARSE
	return read_clock(CLOCK_MONOTONIC_COARSE);
#else
	return read_clock(CLOCK_MONOTONIC);
#endif
}

void lb_torture_spin_ns(uint64_t ns)
{
	uint64_t end = lb_torture_now_ns() + ns;
	/* Pure delay: nothing is awaited, so no ordering is needed. */
	while (lb_torture_now_ns() < end)
		lb_cpu_relax();
}

void lb_torture_sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / LB_NS_PER_S),
		.tv_nsec = (long)(ns % LB_NS_PER_S),
	};
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}
