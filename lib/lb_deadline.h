/* SPDX-License-Identifier: MIT */
/*
 * lb_deadline.h - an absolute deadline on CLOCK_REALTIME or CLOCK_MONOTONIC
 * as a CLOCK_MONOTONIC one, for locks whose timed waits run on the
 * monotonic clock (the vtable's timedlock).  A CLOCK_REALTIME deadline is
 * converted once, at the call: a later step of the wall clock does not move
 * it (glibc's own timed mutex locks follow such steps; POSIX leaves the
 * effect of clock changes on a pending timed lock to the clock).
 */
#ifndef LB_DEADLINE_H
#define LB_DEADLINE_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

/* 0, or EINVAL for another clock or a tv_nsec outside 0..999999999. */
static inline int lb_deadline_monotonic(const struct timespec *abs, clockid_t clock,
					struct timespec *out)
{
	if (!abs || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000L)
		return EINVAL;
	if (clock == CLOCK_MONOTONIC) {
		*out = *abs;
		return 0;
	}
	if (clock != CLOCK_REALTIME)
		return EINVAL;
	struct timespec rt, mono;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	int64_t left = (int64_t)(abs->tv_sec - rt.tv_sec) * 1000000000 + (abs->tv_nsec - rt.tv_nsec);
	if (left < 0)
		left = 0; /* already past: "now" on the monotonic clock */
	int64_t ns = (int64_t)mono.tv_nsec + left % 1000000000;
	out->tv_sec = mono.tv_sec + (time_t)(left / 1000000000) + (time_t)(ns / 1000000000);
	out->tv_nsec = (long)(ns % 1000000000);
	return 0;
}

#endif /* LB_DEADLINE_H */
