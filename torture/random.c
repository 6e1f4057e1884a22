/* SPDX-License-Identifier: MIT */
/* random.c - the torture pseudo-random generator. */
#include "random.h"
#include "lb_time.h"

#include <sched.h>
#include <time.h>

void lb_torture_random_init(struct lb_torture_random *r)
{
	r->state = 0;
	r->left = 0;
}

uint32_t lb_torture_random_step(uint64_t *state)
{
	*state = *state * LB_TORTURE_RANDOM_MULT + LB_TORTURE_RANDOM_ADD;
	uint32_t low = (uint32_t)*state;
	return (low << 16) | (low >> 16);
}

uint32_t lb_torture_random(struct lb_torture_random *r)
{
	if (r->left == 0) {
		struct timespec ts;
		int cpu = sched_getcpu();
		clock_gettime(CLOCK_MONOTONIC, &ts);
		r->state += (uint64_t)ts.tv_sec * LB_NS_PER_S + (uint64_t)ts.tv_nsec +
			    (uint64_t)(cpu < 0 ? 0 : cpu);
		r->left = LB_TORTURE_RANDOM_REFRESH;
	}
	r->left--;
	return lb_torture_random_step(&r->state);
}
