/* SPDX-License-Identifier: MIT */
/*
 * cond_load_hooked.h - the spin primitive built with both wait hooks
 * replaced (cond_load_hooked.c), for test_cond_load.c.
 */
#ifndef LB_TEST_COND_LOAD_HOOKED_H
#define LB_TEST_COND_LOAD_HOOKED_H

#include <stdint.h>

#include <lockbench/lb_atomic.h>

struct lb_cond_load_hook_log {
	uint32_t plain;       /* LB_COND_LOAD_WAIT calls */
	uint32_t until;       /* LB_COND_LOAD_WAIT_UNTIL calls */
	uint32_t pauses;      /* LB_COND_LOAD_WAIT_PAUSES calls */
	uint32_t pauses_n;    /* the n they were given, summed */
	const void *last_ptr; /* the address the last wait was given */
};

/* lb_cond_load_relaxed(v, word, v != 0) with *word 0; the hooked wait
 * stores 1 into *word at its n-th call (the store a parked waiter wakes
 * for). */
void cond_load_hooked_wait_plain(_Atomic(uint32_t) *word, uint32_t n,
				 struct lb_cond_load_hook_log *log);
/* lb_cond_load_relaxed_until(v, word, v != 0, --budget == 0) with *word 0
 * and nobody storing. */
void cond_load_hooked_wait_until(_Atomic(uint32_t) *word, uint32_t budget,
				 struct lb_cond_load_hook_log *log);

/* A trylock loop, `while (!CAS(word, 0 -> 1)) lb_cond_load_pause(word)`,
 * with *word 1; the hooked wait stores 0 into *word at its n-th call. */
void cond_load_hooked_trylock(_Atomic(uint32_t) *word, uint32_t n,
			      struct lb_cond_load_hook_log *log);
/* lb_cond_load_pauses(word, n) once. */
void cond_load_hooked_pauses(_Atomic(uint32_t) *word, uint32_t n,
			     struct lb_cond_load_hook_log *log);

#endif /* LB_TEST_COND_LOAD_HOOKED_H */
