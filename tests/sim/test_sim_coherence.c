/* SPDX-License-Identifier: MIT */
/*
 * test_sim_coherence.c - the line directory on hand-computed cases
 * (sim_test.h's machine: l1_hit 1, same_socket 50, cross_socket 200,
 * memory 100, rmw 10; 2 sockets).
 *   ping-pong: RMWs alternating between CPU 0 (socket 0) and CPU 2
 *   (socket 1), then two at once (the second waits for the first).
 *   readers-writer: 4 readers (3 in the writer's socket, 1 across) load
 *   one at a time, then the writer's RMW invalidates all 4 and wakes them
 *   from cond_wait; their re-reads queue behind it.
 */
#include "sim_test.h"

static struct lb_sim_world *world;
static _Alignas(64) uint32_t word;
static uint64_t done_at[8];
static int owner_after[8];

static void pp_a(void *arg)
{
	(void)arg;
	sim_test_until(10000);
	lb_sim_fetch_add_u32(&word, 1);
	done_at[0] = lb_sim_now();
	sim_test_until(30000);
	lb_sim_fetch_add_u32(&word, 1);
	done_at[2] = lb_sim_now();
	sim_test_until(40000);
	lb_sim_fetch_add_u32(&word, 1);
	done_at[4] = lb_sim_now();
}

static void pp_b(void *arg)
{
	(void)arg;
	sim_test_until(20000);
	lb_sim_fetch_add_u32(&word, 1);
	done_at[1] = lb_sim_now();
	unsigned sharers;
	lb_sim_line_state(world, &word, &owner_after[1], &sharers);
	/* Issued before A's at 40000: B called spend first. */
	sim_test_until(40000);
	lb_sim_fetch_add_u32(&word, 1);
	done_at[3] = lb_sim_now();
}

static void ping_pong(void)
{
	world = sim_test_world(SIM_TEST_MACHINE(2, 2), 1);
	word = 0;
	lb_sim_thread_pin(world, lb_sim_spawn(world, pp_a, NULL), 0);
	lb_sim_thread_pin(world, lb_sim_spawn(world, pp_b, NULL), 2);
	lb_sim_run(world, LB_SIM_NO_DEADLINE);
	tap_ok(done_at[0] == 10110, "cold RMW: memory + rmw = 110 ns (%llu)",
	       (unsigned long long)(done_at[0] - 10000));
	tap_ok(done_at[1] == 20210, "RMW across sockets: cross + rmw = 210 ns (%llu)",
	       (unsigned long long)(done_at[1] - 20000));
	tap_ok(owner_after[1] == 2, "the line is CPU 2's after its RMW (%d)", owner_after[1]);
	tap_ok(done_at[2] == 30210, "and back: 210 ns (%llu)",
	       (unsigned long long)(done_at[2] - 30000));
	tap_ok(done_at[3] == 40210 && done_at[4] == 40420,
	       "two RMWs at once: the second waits for the first (%llu, %llu; want 40210, 40420)",
	       (unsigned long long)done_at[3], (unsigned long long)done_at[4]);
	tap_ok(word == 5, "five increments (%u)", word);
	lb_sim_destroy(world);
}

static uint64_t first_read[5], reread[5];
static uint32_t seen[5];
static enum lb_sim_wait_result woke[5];
static int owner_before;
static unsigned sharers_before, sharers_after;
static uint64_t inval_before, inval_after;

static void writer(void *arg)
{
	(void)arg;
	sim_test_until(10000);
	lb_sim_fetch_add_u32(&word, 1);
	done_at[0] = lb_sim_now();
	sim_test_until(30000);
	lb_sim_line_state(world, &word, &owner_before, &sharers_before);
	inval_before = lb_sim_stats(world).invalidations;
	lb_sim_fetch_add_u32(&word, 1);
	done_at[1] = lb_sim_now();
	inval_after = lb_sim_stats(world).invalidations;
	/* The woken readers' re-reads were issued at 30000, behind this
	 * write: by now they share the line with the writer again. */
	sim_test_until(40000);
	lb_sim_line_state(world, &word, &owner_after[0], &sharers_after);
}

static void reader(void *arg)
{
	int i = (int)(intptr_t)arg;
	sim_test_until(20000 + (uint64_t)i);  /* issued 1 ns apart: a fixed order */
	lb_sim_load_u32(&word);
	first_read[i] = lb_sim_now();
	woke[i] = lb_sim_cond_wait(&word, LB_SIM_NO_DEADLINE);
	seen[i] = lb_sim_load_u32(&word);
	reread[i] = lb_sim_now();
}

static void readers_writer(void)
{
	world = sim_test_world(SIM_TEST_MACHINE(2, 4), 1);
	word = 0;
	lb_sim_thread_pin(world, lb_sim_spawn(world, writer, NULL), 0);
	for (int i = 1; i <= 4; i++)
		lb_sim_thread_pin(world, lb_sim_spawn(world, reader, (void *)(intptr_t)i),
				  (unsigned)i);
	lb_sim_run(world, LB_SIM_NO_DEADLINE);
	/* CPUs 1-3 share the writer's socket, CPU 4 does not.  Each read
	 * starts when the one before it ends: 50, 50, 50 from a neighbour,
	 * then 200 across. */
	tap_ok(first_read[1] == 20051 && first_read[2] == 20101 && first_read[3] == 20151 &&
	       first_read[4] == 20351,
	       "4 reads serialised on the line: %llu %llu %llu %llu (want 20051 20101 20151 20351)",
	       (unsigned long long)first_read[1], (unsigned long long)first_read[2],
	       (unsigned long long)first_read[3], (unsigned long long)first_read[4]);
	tap_ok(owner_before == -1 && sharers_before == 5,
	       "before the write: no owner, 5 sharers (%d, %u)", owner_before, sharers_before);
	tap_ok(done_at[1] == 30210,
	       "the writer's RMW: upgrade + farthest invalidation (200) + rmw = 210 ns (%llu)",
	       (unsigned long long)(done_at[1] - 30000));
	tap_ok(inval_after - inval_before == 4, "4 copies invalidated (%llu)",
	       (unsigned long long)(inval_after - inval_before));
	bool all_woke = true, all_new = true;
	for (int i = 1; i <= 4; i++) {
		all_woke &= woke[i] == LB_SIM_WRITTEN;
		all_new &= seen[i] == 2;
	}
	tap_ok(all_woke && all_new, "every waiter woke from cond_wait and read the new value");
	tap_ok(reread[1] == 30260 && reread[2] == 30310 && reread[3] == 30360 &&
	       reread[4] == 30560,
	       "the re-reads queue behind the write: %llu %llu %llu %llu "
	       "(want 30260 30310 30360 30560)",
	       (unsigned long long)reread[1], (unsigned long long)reread[2],
	       (unsigned long long)reread[3], (unsigned long long)reread[4]);
	tap_ok(owner_after[0] == -1 && sharers_after == 5,
	       "after the re-reads: no owner, 5 sharers again (%d, %u)", owner_after[0],
	       sharers_after);
	lb_sim_destroy(world);
}

int main(void)
{
	ping_pong();
	readers_writer();
	return tap_done();
}
