/* SPDX-License-Identifier: MIT */
/*
 * cond_load_hooked.c - lb_cond_load.h with LB_COND_LOAD_WAIT and
 * LB_COND_LOAD_WAIT_UNTIL defined before its first inclusion, the way a
 * simulator's force-included header replaces the native pause: each wait
 * is logged with the address it was given.
 */
#include "cond_load_hooked.h"

static struct lb_cond_load_hook_log *hook_log;
static uint32_t hook_store_at; /* the plain wait that stores 1 (0: none) */
static uint32_t hook_free_at;  /* the pauses wait that stores 0 (0: none) */

static void hook_wait(const void *ptr, int until)
{
	hook_log->last_ptr = ptr;
	if (until) {
		hook_log->until++;
		return;
	}
	if (++hook_log->plain == hook_store_at)
		atomic_store_explicit((_Atomic(uint32_t) *)(uintptr_t)ptr, 1, memory_order_relaxed);
}

static void hook_pauses(const void *ptr, uint32_t n)
{
	hook_log->last_ptr = ptr;
	hook_log->pauses_n += n;
	if (++hook_log->pauses == hook_free_at)
		atomic_store_explicit((_Atomic(uint32_t) *)(uintptr_t)ptr, 0, memory_order_relaxed);
}

#define LB_COND_LOAD_WAIT(ptr) hook_wait((const void *)(ptr), 0)
#define LB_COND_LOAD_WAIT_PAUSES(ptr, n) hook_pauses((const void *)(ptr), (n))
#define LB_COND_LOAD_WAIT_UNTIL(ptr) hook_wait((const void *)(ptr), 1)
#include <lockbench/lb_cond_load.h>

static void log_start(struct lb_cond_load_hook_log *log, uint32_t store_at)
{
	log->plain = log->until = log->pauses = log->pauses_n = 0;
	log->last_ptr = NULL;
	hook_log = log;
	hook_store_at = store_at;
	hook_free_at = 0;
}

void cond_load_hooked_wait_plain(_Atomic(uint32_t) *word, uint32_t n,
				 struct lb_cond_load_hook_log *log)
{
	uint32_t v;

	log_start(log, n);
	atomic_store_explicit(word, 0, memory_order_relaxed);
	lb_cond_load_relaxed(v, word, v != 0);
}

void cond_load_hooked_wait_until(_Atomic(uint32_t) *word, uint32_t budget,
				 struct lb_cond_load_hook_log *log)
{
	uint32_t v;

	log_start(log, 0);
	atomic_store_explicit(word, 0, memory_order_relaxed);
	lb_cond_load_relaxed_until(v, word, v != 0, --budget == 0);
}

void cond_load_hooked_trylock(_Atomic(uint32_t) *word, uint32_t n,
			      struct lb_cond_load_hook_log *log)
{
	uint32_t expect = 0;

	log_start(log, 0);
	hook_free_at = n;
	atomic_store_explicit(word, 1, memory_order_relaxed);
	while (!atomic_compare_exchange_strong_explicit(word, &expect, 1, memory_order_acquire,
							memory_order_relaxed)) {
		expect = 0;
		lb_cond_load_pause(word);
	}
}

void cond_load_hooked_pauses(_Atomic(uint32_t) *word, uint32_t n,
			     struct lb_cond_load_hook_log *log)
{
	log_start(log, 0);
	lb_cond_load_pauses(word, n);
}
