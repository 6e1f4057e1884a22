/* SPDX-License-Identifier: MIT */
/*
 * test_cond_load.c - the spin primitive (locks/include/lockbench/
 * lb_cond_load.h) natively: a condition met at once, met after a store
 * from another thread (with the acquire it promises), a deadline and a
 * look budget that end the wait, and where the loop evaluates its
 * arguments; the wait alone (lb_cond_load_pause/_pauses) under a loop the
 * forms cannot spell.  cond_load_hooked.c builds the same primitive with both wait
 * hooks replaced, as a simulator's force-included header would: it checks
 * each loop reaches its hook with the word's address.  TAP.
 */
#include <lockbench/lb_cond_load.h>

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "cond_load_hooked.h"
#include "tap.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- met at once ------------------------------------------------------- */

static void test_met_at_once(void)
{
	_Atomic(uint32_t) word = 7;
	uint32_t v = 0, looks = 0, stops = 0;

	lb_cond_load_relaxed(v, &word, (looks++, v == 7));
	tap_ok(v == 7 && looks == 1, "met at once: one look, the value read (%u looks, v %u)", looks,
	       v);

	looks = 0;
	lb_cond_load_acquire_until(v, &word, (looks++, v == 7), (stops++, 1));
	tap_ok(v == 7 && looks == 1 && stops == 0,
	       "met at once (_until): stop never looked at (%u looks, %u stops)", looks, stops);
}

/* ---- met after a store by another thread -------------------------------- */

struct handoff {
	_Atomic(uint32_t) flag;
	_Atomic(uint32_t) waiting; /* the waiter is about to spin */
	uint32_t payload;          /* plain: published by flag's release store */
};

static void *writer(void *arg)
{
	struct handoff *h = arg;
	uint32_t w;
	struct timespec pause = { 0, 5 * 1000 * 1000 };

	/* Spin until the waiter is in (acquire pairs with its release store),
	 * then let it spin a while before the store it waits for. */
	lb_cond_load_acquire(w, &h->waiting, w != 0);
	nanosleep(&pause, NULL);
	h->payload = 42;
	atomic_store_explicit(&h->flag, 1, memory_order_release);
	return NULL;
}

static void test_met_after_write(void)
{
	struct handoff h = { .payload = 0 };
	pthread_t t;
	uint32_t v = 0, misses = 0;

	atomic_init(&h.flag, 0);
	atomic_init(&h.waiting, 0);
	if (pthread_create(&t, NULL, writer, &h) != 0) {
		tap_ok(false, "pthread_create");
		return;
	}
	atomic_store_explicit(&h.waiting, 1, memory_order_release);
	/* stop counts the looks that missed and never ends the wait. */
	lb_cond_load_acquire_until(v, &h.flag, v == 1, (misses++, 0));
	/* The acquire look pairs with the writer's release: payload is 42
	 * (and TSan sees the order). */
	uint32_t payload = h.payload;
	pthread_join(t, NULL);
	tap_ok(v == 1, "met after a store from another thread: v %u", v);
	tap_ok(misses > 0, "the waiter spun before the store (%u looks missed)", misses);
	tap_ok(payload == 42, "the acquire look orders the writer's earlier store (payload %u)",
	       payload);
}

/* ---- a deadline and a budget -------------------------------------------- */

static void test_deadline(void)
{
	_Atomic(uint32_t) word = 0;
	uint32_t v = 9;
	const uint64_t wait_ns = 20 * 1000 * 1000;
	uint64_t t0 = now_ns(), deadline = t0 + wait_ns;

	lb_cond_load_relaxed_until(v, &word, v != 0, now_ns() >= deadline);
	uint64_t took = now_ns() - t0;
	tap_ok(v == 0, "deadline: the loop ends with the condition false (v %u)", v);
	tap_ok(took >= wait_ns, "deadline: not before it passed (%llu ns of %llu)",
	       (unsigned long long)took, (unsigned long long)wait_ns);
}

static void test_budget(void)
{
	_Atomic(uint32_t) word = 0;
	uint32_t v, looks = 0, n = 1000;

	lb_cond_load_relaxed_until(v, &word, (looks++, v != 0), --n == 0);
	tap_ok(looks == 1000 && n == 0, "a budget of 1000 looks: %u looks, stop seen %u times",
	       looks, 1000 - n);
}

/* ---- the wait alone, natively ------------------------------------------- */

static void test_pauses_native(void)
{
	_Atomic(uint32_t) word = 1;
	uint32_t ptr_evals = 0, n_evals = 0, expect = 0, tries = 0;

	/* Natively the pause alone: `ptr` is never evaluated, n once. */
	lb_cond_load_pause((ptr_evals++, &word));
	lb_cond_load_pauses((ptr_evals++, &word), (n_evals++, 5u));
	lb_cond_load_pauses((ptr_evals++, &word), (n_evals++, 0u));
	tap_ok(ptr_evals == 0 && n_evals == 2,
	       "native pause(s): ptr never evaluated, n once per wait (%u ptr, %u n)", ptr_evals,
	       n_evals);

	/* A trylock loop around it ends when the word is free (here: freed
	 * by the loop itself on its 3rd try, no other thread). */
	while (!atomic_compare_exchange_strong_explicit(&word, &expect, 1, memory_order_acquire,
							memory_order_relaxed)) {
		expect = 0;
		if (++tries == 3)
			atomic_store_explicit(&word, 0, memory_order_relaxed);
		lb_cond_load_pause(&word);
	}
	tap_ok(tries == 3 && atomic_load_explicit(&word, memory_order_relaxed) == 1,
	       "native trylock loop with lb_cond_load_pause: taken after %u failed tries", tries);
}

/* ---- the hooks a simulator replaces -------------------------------------- */

static void test_hooks(void)
{
	_Atomic(uint32_t) word = 0;
	struct lb_cond_load_hook_log log;

	cond_load_hooked_wait_plain(&word, 3, &log);
	tap_ok(log.plain == 3 && log.until == 0 && log.last_ptr == (const void *)&word,
	       "hooked: a plain loop waits in LB_COND_LOAD_WAIT(ptr), once per missed look "
	       "(%u plain, %u until)", log.plain, log.until);
	cond_load_hooked_wait_until(&word, 5, &log);
	tap_ok(log.plain == 0 && log.until == 4 && log.last_ptr == (const void *)&word,
	       "hooked: an _until loop waits in LB_COND_LOAD_WAIT_UNTIL(ptr), not after its "
	       "stop (%u plain, %u until)", log.plain, log.until);
	cond_load_hooked_trylock(&word, 4, &log);
	tap_ok(log.pauses == 4 && log.pauses_n == 4 && log.plain == 0 && log.until == 0 &&
		       log.last_ptr == (const void *)&word,
	       "hooked: a trylock loop waits in LB_COND_LOAD_WAIT_PAUSES(ptr, 1) after each "
	       "failed try (%u calls, n summed %u)", log.pauses, log.pauses_n);
	cond_load_hooked_pauses(&word, 16, &log);
	tap_ok(log.pauses == 1 && log.pauses_n == 16 && log.last_ptr == (const void *)&word,
	       "hooked: lb_cond_load_pauses(ptr, 16) is one wait of 16 pauses, not 16 waits "
	       "(%u calls, n %u)", log.pauses, log.pauses_n);
}

int main(void)
{
	test_met_at_once();
	test_met_after_write();
	test_deadline();
	test_budget();
	test_pauses_native();
	test_hooks();
	return tap_done();
}
