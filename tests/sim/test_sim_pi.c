/* SPDX-License-Identifier: MIT */
/*
 * test_sim_pi.c - the engine's PI futexes (lb_sim_futex_lock_pi/unlock_pi,
 * engines/sim/sim_pi.c) on one CPU, where the FIFO class fixes the order:
 *
 *   inversion: L (FIFO 10) takes the futex and works 5 ms; H (FIFO 50)
 *     blocks on it at 1 ms; M (FIFO 30) wakes at 2 ms and hogs 50 ms.
 *     With PI L runs at 50 above M, unlocks at ~5 ms and hands the word to
 *     H (its TID | WAITERS), then is back at 10; H has the lock within
 *     7 ms.  Without the boost M preempts L at 2 ms and H waits 50 ms more.
 *   chain: L (fair) holds A; X (FIFO 20) holds B and blocks on A; H (FIFO
 *     40) blocks on B: L is boosted through X to 40 and a FIFO-30 hog on
 *     the CPU does not run before both locks are passed on.
 *   timeout: a FIFO-40 waiter with a deadline gives up, and the owner
 *     drops the boost it lent.
 */
#include "sim_test.h"

#define US 1000ull
#define MS 1000000ull

static struct lb_sim_world *world;
static uint32_t lock_a, lock_b;
static int tid_l, tid_x;
static uint64_t l_unlock, h_got, m_start, x_got;
static uint32_t h_word;
static int l_prio_held, l_prio_after, h_result;

static uint32_t me(void)
{
	return (uint32_t)lb_sim_self() + 1;
}

/* User space first, as glibc's and futex_pi.h's: CAS 0 -> TID, else the
 * kernel. */
static int pi_lock(uint32_t *w, uint64_t deadline)
{
	uint32_t z = 0;
	if (lb_sim_cas_u32(w, &z, me()))
		return 0;
	return lb_sim_futex_lock_pi(w, deadline);
}

static void pi_unlock(uint32_t *w)
{
	uint32_t t = me();
	if (!lb_sim_cas_u32(w, &t, 0))
		lb_sim_futex_unlock_pi(w);
}

static void low(void *arg)
{
	(void)arg;
	pi_lock(&lock_a, LB_SIM_NO_DEADLINE);
	lb_sim_spend(5 * MS);
	l_prio_held = lb_sim_thread_eff_prio(world, lb_sim_self());
	pi_unlock(&lock_a);
	l_unlock = lb_sim_now();
	l_prio_after = lb_sim_thread_eff_prio(world, lb_sim_self());
}

static void high(void *arg)
{
	uint64_t deadline = arg ? *(const uint64_t *)arg : LB_SIM_NO_DEADLINE;
	lb_sim_sleep(1 * MS);
	h_result = pi_lock(tid_x >= 0 ? &lock_b : &lock_a, deadline);
	h_got = lb_sim_now();
	h_word = lb_sim_load_u32(tid_x >= 0 ? &lock_b : &lock_a);
	if (h_result == 0)
		pi_unlock(tid_x >= 0 ? &lock_b : &lock_a);
}

static void medium(void *arg)
{
	(void)arg;
	lb_sim_sleep(2 * MS);
	m_start = lb_sim_now();
	lb_sim_spend(50 * MS);
}

static void middle(void *arg)
{
	(void)arg;
	pi_lock(&lock_b, LB_SIM_NO_DEADLINE);
	lb_sim_sleep(500 * US);  /* L has A by now */
	pi_lock(&lock_a, LB_SIM_NO_DEADLINE);
	x_got = lb_sim_now();
	pi_unlock(&lock_a);
	pi_unlock(&lock_b);
}

static void reset(void)
{
	lock_a = lock_b = 0;
	l_unlock = h_got = m_start = x_got = 0;
	h_word = 0;
	l_prio_held = l_prio_after = h_result = -1;
	tid_x = -1;
}

static int spawn(lb_sim_fn fn, void *arg, int prio)
{
	int tid = lb_sim_spawn(world, fn, arg);
	lb_sim_thread_pin(world, tid, 0);
	if (prio)
		lb_sim_thread_fifo(world, tid, prio);
	return tid;
}

static void inversion(void)
{
	world = sim_test_world(SIM_TEST_MACHINE(1, 1), 5);
	reset();
	tid_l = spawn(low, NULL, 10);
	int h = spawn(high, NULL, 50);
	spawn(medium, NULL, 30);
	lb_sim_run(world, 200 * MS);
	tap_ok(l_prio_held == 50, "inversion: the owner ran at the waiter's 50 (%d)", l_prio_held);
	tap_ok(l_unlock > 5 * MS && l_unlock < 6 * MS,
	       "inversion: the owner unlocked at 5-6 ms, above the FIFO-30 hog (%llu ns)",
	       (unsigned long long)l_unlock);
	tap_ok(h_result == 0 && h_got < 7 * MS,
	       "inversion: the FIFO-50 waiter had the lock within 7 ms (at %llu ns, result %d)",
	       (unsigned long long)h_got, h_result);
	tap_ok(h_word == ((uint32_t)(h + 1) | LB_SIM_FUTEX_WAITERS),
	       "inversion: handed over, the word is the waiter's TID | WAITERS (%#x)", h_word);
	tap_ok(l_prio_after == 10, "inversion: the owner back at its own 10 after the unlock (%d)",
	       l_prio_after);
	/* After the unlock the hog may run for the handed-to waiter's wake-up
	 * latency (the engine charges `wakeup` to every wake). */
	tap_ok(m_start > l_unlock, "inversion: the hog ran only after the unlock (%llu ns)",
	       (unsigned long long)m_start);
	lb_sim_destroy(world);
}

static void chain(void)
{
	world = sim_test_world(SIM_TEST_MACHINE(1, 1), 6);
	reset();
	tid_l = spawn(low, NULL, 0);
	tid_x = spawn(middle, NULL, 20);
	spawn(high, NULL, 40);
	spawn(medium, NULL, 30);
	lb_sim_run(world, 200 * MS);
	tap_ok(l_prio_held == 40, "chain: the fair owner of A ran at 40, lent through X (%d)",
	       l_prio_held);
	tap_ok(l_prio_after == 0, "chain: and back to fair after (%d)", l_prio_after);
	tap_ok(x_got > l_unlock && h_got > x_got && h_got < 7 * MS && m_start > l_unlock,
	       "chain: L unlocked (%llu), X took A (%llu), H took B (%llu); the hog from %llu",
	       (unsigned long long)l_unlock, (unsigned long long)x_got,
	       (unsigned long long)h_got, (unsigned long long)m_start);
	lb_sim_destroy(world);
}

static void timeout(void)
{
	static uint64_t deadline = 3 * MS;
	world = sim_test_world(SIM_TEST_MACHINE(1, 1), 7);
	reset();
	tid_l = spawn(low, NULL, 10);
	spawn(high, &deadline, 40);
	spawn(medium, NULL, 30);
	lb_sim_run(world, 200 * MS);
	tap_ok(h_result == LB_SIM_PI_TIMEDOUT && h_got >= 3 * MS && h_got < 4 * MS,
	       "timeout: the waiter gave up at its 3 ms deadline (%llu ns, result %d)",
	       (unsigned long long)h_got, h_result);
	tap_ok(l_prio_held == 10 && l_unlock > 50 * MS,
	       "timeout: the owner lost the boost and waited out the hog (prio %d, unlock %llu ns)",
	       l_prio_held, (unsigned long long)l_unlock);
	lb_sim_destroy(world);
}

int main(void)
{
	inversion();
	chain();
	timeout();
	return tap_done();
}
