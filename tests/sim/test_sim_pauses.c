/* SPDX-License-Identifier: MIT */
/*
 * test_sim_pauses.c - the simulated wait of lb_cond_load_pause/_pauses
 * (bench/sim/sim_hooks.c, lb_simi_cond_wait_pauses) on sim_test.h's machine
 * (1 socket x 2 CPUs, l1_hit 1 ns = one pause, memory 100):
 *   a quiet line: the wait lasts its n pauses exactly;
 *   a line written during the wait: the waiter is back at the store, long
 *   before its n pauses;
 *   a line written before the wait: one pause, not zero, not n;
 *   a wait of one pause: one pause's time (sim_hooks.c charges it as the
 *   bare pause; sim-same-output shows those cells unchanged).
 */
#include "sim_test.h"
#include "sim_hooks.h"

static uint32_t word;
static uint64_t start, back, stored_at;

/* Thread 0: read the word at 10000 (a miss to memory, 100), spend until
 * `wait_at`, then wait n pauses on it. */
static uint64_t wait_at;
static uint32_t wait_n;

static void waiter(void *arg)
{
	(void)arg;
	sim_test_until(10000);
	lb_sim_load_u32(&word);
	sim_test_until(wait_at);
	start = lb_sim_now();
	lb_simi_cond_wait_pauses(&word, wait_n);
	back = lb_sim_now();
}

/* Thread 1 (when spawned): store to the word at `store_at`. */
static uint64_t store_at;

static void writer(void *arg)
{
	(void)arg;
	sim_test_until(store_at);
	lb_sim_store_u32(&word, 1);
	stored_at = lb_sim_now();
}

static void run(uint64_t w_at, uint32_t n, uint64_t s_at)
{
	struct lb_sim_world *world = sim_test_world(SIM_TEST_MACHINE(1, 2), 1);
	word = 0;
	start = back = stored_at = 0;
	wait_at = w_at;
	wait_n = n;
	store_at = s_at;
	lb_sim_thread_pin(world, lb_sim_spawn(world, waiter, NULL), 0);
	if (s_at)
		lb_sim_thread_pin(world, lb_sim_spawn(world, writer, NULL), 1);
	lb_sim_run(world, 1000000);
	lb_sim_destroy(world);
}

int main(void)
{
	run(10100, 500, 0);
	tap_ok(start == 10100 && back == 10600,
	       "a quiet line: 500 pauses of 1 ns (waited %llu..%llu)", (unsigned long long)start,
	       (unsigned long long)back);

	run(10100, 100000, 20000);
	/* The directory takes the line at the store's start (20000); the
	 * writer is charged its cost (memory, 100) after. */
	tap_ok(stored_at == 20100 && back >= 20000 && back <= stored_at,
	       "written during the wait: back at the store, not after 100000 pauses (store "
	       "20000..%llu, back %llu)", (unsigned long long)stored_at, (unsigned long long)back);

	run(20000, 500, 15000);
	tap_ok(stored_at < 20000 && start == 20000 && back == 20001,
	       "written before the wait: one pause (store %llu, waited %llu..%llu)",
	       (unsigned long long)stored_at, (unsigned long long)start, (unsigned long long)back);

	run(10100, 1, 0);
	tap_ok(start == 10100 && back == 10101, "one pause: 1 ns (waited %llu..%llu)",
	       (unsigned long long)start, (unsigned long long)back);
	return tap_done();
}
