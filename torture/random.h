/* SPDX-License-Identifier: MIT */
/*
 * random.h - the torture pseudo-random generator (the kernel's kernel/torture.c).
 *
 * Each draw advances a 64-bit linear congruential state,
 * state = state * 39916801 + 479001701, and returns the low 32 bits with
 * their two 16-bit halves swapped: an LCG's low bits are its weakest, and
 * callers reduce with `%`, so the swap puts the better bits at the bottom.
 * Before the first draw and every 10000 draws after it, the state is stirred
 * with the clock and the current CPU so that threads started together drift
 * apart.  One generator per thread; it is not thread-safe.
 */
#ifndef LB_TORTURE_RANDOM_H
#define LB_TORTURE_RANDOM_H

#include <stdint.h>

#define LB_TORTURE_RANDOM_MULT    39916801u
#define LB_TORTURE_RANDOM_ADD     479001701u
#define LB_TORTURE_RANDOM_REFRESH 10000

struct lb_torture_random {
	uint64_t state;
	int left;  /* draws before the next stir; 0 = stir now */
};

/* A generator that stirs on its first draw. */
void lb_torture_random_init(struct lb_torture_random *r);

/* One LCG step on *state, no stirring; returns the half-swapped low word. */
uint32_t lb_torture_random_step(uint64_t *state);

/* The next 32-bit value. */
uint32_t lb_torture_random(struct lb_torture_random *r);

#endif /* LB_TORTURE_RANDOM_H */
