/* SPDX-License-Identifier: MIT */
/*
 * test_sim_sched.c - the scheduler model on scripted cases (sim_test.h's
 * machine: 1 socket x 2 CPUs, wakeup 3000, context_switch 1000, syscall
 * 100, tick 4 ms, wakeup_granularity 1 ms):
 *   wake-up preemption: a fair thread woken on a CPU whose fair thread has
 *   run for milliseconds takes it at once;
 *   FIFO hog: a FIFO thread spending 50 ms starves a fair one on its CPU;
 *   PI boost: a fair lock owner preempted by a FIFO-10 hog is boosted to
 *   FIFO 20 by its waiter and finishes its section at once;
 *   preempt-off: a FIFO thread woken during a raw section runs at the
 *   section's preempt_enable, not before;
 *   timeouts and moves: cond_wait's and futex_wait's deadlines, and
 *   set_affinity, at hand-computed times;
 *   yield: two fair threads on one CPU take turns;
 *   the scheduler's truth (what aim7's v3.x mutex spinners ask): an owner
 *   on its CPU, then asleep; need_resched with a woken thread queued
 *   behind a raw section; each thread's CPU time adding up to the
 *   world's run time.
 */
#include "sim_test.h"

#include <string.h>

#define MS 1000000ull

static struct lb_sim_world *world;
static uint32_t flag;
static uint64_t a_end, b_back;

static void hog_fair(void *arg)
{
	(void)arg;
	lb_sim_spend(20 * MS);
	a_end = lb_sim_now();
}

static void sleeper(void *arg)
{
	(void)arg;
	lb_sim_futex_wait(&flag, 0, LB_SIM_NO_DEADLINE);
	b_back = lb_sim_now();
}

static void waker(void *arg)
{
	(void)arg;
	sim_test_until(5 * MS);
	lb_sim_store_u32(&flag, 1);
	lb_sim_futex_wake(&flag, 1);
}

static void wakeup_preemption(void)
{
	world = sim_test_world(SIM_TEST_MACHINE(1, 2), 3);
	flag = 0;
	lb_sim_thread_pin(world, lb_sim_spawn(world, hog_fair, NULL), 0);
	lb_sim_thread_pin(world, lb_sim_spawn(world, sleeper, NULL), 0);
	lb_sim_thread_pin(world, lb_sim_spawn(world, waker, NULL), 1);
	lb_sim_run(world, 100 * MS);
	/* Woken at 5 ms + the store and the syscall; + wakeup 3000 + switch 1000. */
	tap_ok(b_back > 5 * MS && b_back < 5 * MS + 10000,
	       "the woken thread runs within 10 us of its wake-up (%llu ns after 5 ms)",
	       (unsigned long long)(b_back - 5 * MS));
	tap_ok(a_end > 20 * MS, "the running thread was preempted for it (ends at %llu ns)",
	       (unsigned long long)a_end);
	lb_sim_destroy(world);
}

static uint64_t h_start, h_end;
static unsigned f_during, f_after;

static void hog_fifo(void *arg)
{
	(void)arg;
	sim_test_until(1 * MS);
	lb_sim_set_fifo(10);
	h_start = lb_sim_now();
	for (int i = 0; i < 50; i++)
		lb_sim_spend(1 * MS);
	h_end = lb_sim_now();
}

static void fair_worker(void *arg)
{
	(void)arg;
	while (lb_sim_now() < 80 * MS) {
		lb_sim_spend(100000);
		if (h_start && !h_end)
			f_during++;
		else if (h_end)
			f_after++;
	}
}

static void fifo_hog(void)
{
	world = sim_test_world(SIM_TEST_MACHINE(1, 2), 3);
	h_start = h_end = 0;
	lb_sim_thread_pin(world, lb_sim_spawn(world, hog_fifo, NULL), 0);
	lb_sim_thread_pin(world, lb_sim_spawn(world, fair_worker, NULL), 0);
	lb_sim_run(world, 200 * MS);
	tap_ok(h_end - h_start < 50 * MS + 10000,
	       "the FIFO hog ran its 50 ms without a break (%llu ns)",
	       (unsigned long long)(h_end - h_start));
	tap_ok(f_during == 0 && f_after > 0,
	       "the fair thread on its CPU made no progress meanwhile (%u steps), then did (%u)",
	       f_during, f_after);
	lb_sim_destroy(world);
}

static uint32_t lock_word;
static int low_tid;
static uint64_t low_unlock, high_got;

static void low_owner(void *arg)
{
	(void)arg;
	lb_sim_store_u32(&lock_word, 1);
	lb_sim_spend(5 * MS);  /* the critical section */
	lb_sim_store_u32(&lock_word, 0);
	low_unlock = lb_sim_now();
	lb_sim_futex_wake(&lock_word, 1);
	lb_sim_unboost(lb_sim_self());  /* after the wake, as rt_mutex_slowunlock */
}

static void medium_hog(void *arg)
{
	(void)arg;
	lb_sim_sleep(1 * MS);
	lb_sim_spend(50 * MS);
}

static void high_waiter(void *arg)
{
	(void)arg;
	lb_sim_sleep(2 * MS);
	while (lb_sim_load_u32(&lock_word) != 0) {
		lb_sim_boost(low_tid, 20);
		lb_sim_futex_wait(&lock_word, 1, LB_SIM_NO_DEADLINE);
	}
	high_got = lb_sim_now();
}

static void pi_boost(void)
{
	world = sim_test_world(SIM_TEST_MACHINE(1, 2), 3);
	lock_word = 0;
	low_tid = lb_sim_spawn(world, low_owner, NULL);
	lb_sim_thread_pin(world, low_tid, 0);
	int medium = lb_sim_spawn(world, medium_hog, NULL), high = lb_sim_spawn(world, high_waiter, NULL);
	lb_sim_thread_pin(world, medium, 0);
	lb_sim_thread_fifo(world, medium, 10);
	lb_sim_thread_pin(world, high, 1);
	lb_sim_thread_fifo(world, high, 20);
	lb_sim_run(world, 200 * MS);
	/* Without the boost the owner waits out the hog: unlock after 51 ms. */
	tap_ok(low_unlock > 5 * MS && low_unlock < 7 * MS,
	       "the boosted owner finished its section by 7 ms (%llu ns)",
	       (unsigned long long)low_unlock);
	tap_ok(high_got > low_unlock && high_got < low_unlock + 20000,
	       "the FIFO-20 waiter got the lock within 20 us of the unlock (%llu ns)",
	       (unsigned long long)(high_got - low_unlock));
	lb_sim_destroy(world);
}

static uint64_t raw_enabled;

static void raw_section(void *arg)
{
	(void)arg;
	lb_sim_preempt_disable();
	lb_sim_spend(3 * MS);  /* a raw spinlock's section */
	raw_enabled = lb_sim_now();
	lb_sim_preempt_enable();
	lb_sim_spend(10 * MS);
}

static void fifo_sleeper(void *arg)
{
	(void)arg;
	lb_sim_sleep(1 * MS);
	b_back = lb_sim_now();
}

static void preempt_off(void)
{
	world = sim_test_world(SIM_TEST_MACHINE(1, 2), 3);
	b_back = raw_enabled = 0;
	int raw = lb_sim_spawn(world, raw_section, NULL), rt = lb_sim_spawn(world, fifo_sleeper, NULL);
	lb_sim_thread_pin(world, raw, 0);
	lb_sim_thread_pin(world, rt, 0);
	lb_sim_thread_fifo(world, rt, 50);
	lb_sim_run(world, 100 * MS);
	/* The FIFO thread arrives at about 1 ms; it runs at the enable. */
	tap_ok(raw_enabled > 3 * MS && b_back > raw_enabled && b_back <= raw_enabled + 1000,
	       "a wake-up in a preempt-off region preempts at its end (enable %llu, ran %llu ns)",
	       (unsigned long long)raw_enabled, (unsigned long long)b_back);
	lb_sim_destroy(world);
}

static uint32_t quiet;
static enum lb_sim_wait_result cw_result;
static uint64_t cw_back, fx_back, moved_at;
static int fx_result;
static unsigned moved_to;

/* Times by hand: the load misses to memory (100); cond_wait returns at its
 * deadline; futex_wait pays the syscall (100) and a hit (1), sleeps to its
 * deadline and arrives after the wake-up latency (3000) on its own CPU
 * (no switch); the affinity call pays the syscall and a switch (1000). */
static void timeouts(void *arg)
{
	(void)arg;
	sim_test_until(10000);
	lb_sim_load_u32(&quiet);
	cw_result = lb_sim_cond_wait(&quiet, 20000);
	cw_back = lb_sim_now();
	fx_result = lb_sim_futex_wait(&quiet, 0, 30000);
	fx_back = lb_sim_now();
	const unsigned one = 1;
	lb_sim_set_affinity(&one, 1);
	moved_at = lb_sim_now();
	moved_to = lb_sim_getcpu();
}

static void timeouts_and_moves(void)
{
	world = sim_test_world(SIM_TEST_MACHINE(1, 2), 3);
	lb_sim_thread_pin(world, lb_sim_spawn(world, timeouts, NULL), 0);
	tap_ok(lb_sim_thread_pin(world, 0, 2) == -1 && lb_sim_thread_pin(world, 1, 0) == -1 &&
	       lb_sim_thread_fifo(world, 0, 100) == -1 && lb_sim_thread_fifo(world, -1, 5) == -1,
	       "an unknown CPU, thread or priority is refused before the run");
	lb_sim_run(world, 100 * MS);
	tap_ok(cw_result == LB_SIM_TIMEDOUT && cw_back == 20000,
	       "cond_wait on a quiet line returns at its deadline (%d at %llu)", (int)cw_result,
	       (unsigned long long)cw_back);
	tap_ok(fx_result == 2 && fx_back == 33000,
	       "futex_wait times out and is back after the wake-up latency (%d at %llu)",
	       fx_result, (unsigned long long)fx_back);
	tap_ok(moved_to == 1 && moved_at == 34100,
	       "set_affinity moves the thread at once (CPU %u at %llu)", moved_to,
	       (unsigned long long)moved_at);
	lb_sim_destroy(world);
}

static char order[32];
static unsigned order_n;

static void yielder(void *arg)
{
	for (int i = 0; i < 5; i++) {
		order[order_n++] = *(const char *)arg;
		lb_sim_yield();
	}
}

/* Two fair threads on one CPU take turns at each sched_yield. */
static void yield_turns(void)
{
	world = sim_test_world(SIM_TEST_MACHINE(1, 2), 3);
	order_n = 0;
	lb_sim_thread_pin(world, lb_sim_spawn(world, yielder, "A"), 0);
	lb_sim_thread_pin(world, lb_sim_spawn(world, yielder, "B"), 0);
	lb_sim_run(world, 100 * MS);
	order[order_n] = '\0';
	tap_ok(!strcmp(order, "ABABABABAB") || !strcmp(order, "BABABABABA"),
	       "two threads on one CPU alternate at each yield (%s)", order);
	lb_sim_destroy(world);
}

static int owner_tid;
static bool on_early, on_asleep, resched_alone, resched_queued;
static uint64_t cpu_of[3];

static void truth_owner(void *arg)
{
	(void)arg;
	lb_sim_spend(1 * MS);
	lb_sim_sleep(2 * MS);
	lb_sim_spend(1 * MS);
	cpu_of[0] = lb_sim_cpu_ns();
}

static void truth_spinner(void *arg)
{
	(void)arg;
	lb_sim_sleep(MS / 10); /* the late thread's first run: it goes to sleep */
	sim_test_until(MS / 2);
	on_early = lb_sim_on_cpu(owner_tid);
	resched_alone = lb_sim_need_resched();
	sim_test_until(2 * MS);
	on_asleep = lb_sim_on_cpu(owner_tid);
	lb_sim_preempt_disable();
	sim_test_until(3 * MS); /* the other thread woke at 2.5 ms: queued behind us */
	resched_queued = lb_sim_need_resched();
	lb_sim_preempt_enable();
	cpu_of[1] = lb_sim_cpu_ns();
}

static void truth_late(void *arg)
{
	(void)arg;
	lb_sim_sleep(5 * MS / 2);
	lb_sim_spend(1 * MS);
	cpu_of[2] = lb_sim_cpu_ns();
}

static void truth(void)
{
	world = sim_test_world(SIM_TEST_MACHINE(1, 2), 3);
	owner_tid = lb_sim_spawn(world, truth_owner, NULL);
	lb_sim_thread_pin(world, owner_tid, 1);
	lb_sim_thread_pin(world, lb_sim_spawn(world, truth_spinner, NULL), 0);
	lb_sim_thread_pin(world, lb_sim_spawn(world, truth_late, NULL), 0);
	lb_sim_run(world, 100 * MS);
	tap_ok(on_early && !on_asleep, "owner on its CPU at 0.5 ms (%d), not while asleep at 2 ms "
	       "(%d)", on_early, on_asleep);
	tap_ok(!resched_alone && resched_queued, "need_resched: clear alone on the CPU (%d), set "
	       "with a woken thread queued behind a raw section (%d)", resched_alone,
	       resched_queued);
	uint64_t sum = cpu_of[0] + cpu_of[1] + cpu_of[2], run = lb_sim_stats(world).run_ns;
	tap_ok(cpu_of[0] >= 2 * MS && cpu_of[0] < 2 * MS + 20000 && sum == run,
	       "CPU time: the owner's %llu ns (2 ms spent, < 20 us of calls); the threads' sum "
	       "%llu = the world's run time %llu", (unsigned long long)cpu_of[0],
	       (unsigned long long)sum, (unsigned long long)run);
	lb_sim_destroy(world);
}

static uint64_t mig_before, mig_after, woke_at;
static unsigned woke_on;

/* A leaves CPU 0 to sleep; a hog takes CPU 0; A wakes on CPU 1: one
 * migration.  It then sleeps until an absolute time. */
static void migrant(void *arg)
{
	(void)arg;
	unsigned zero = 0, both[2] = { 0, 1 };
	lb_sim_set_affinity(&zero, 1);
	lb_sim_set_affinity(both, 2);
	mig_before = lb_sim_stats(world).migrations;
	lb_sim_sleep(1 * MS);
	mig_after = lb_sim_stats(world).migrations;
	woke_on = lb_sim_getcpu();
	lb_sim_sleep_until(3 * MS);
	woke_at = lb_sim_now();
}

static void cpu0_hog(void *arg)
{
	(void)arg;
	lb_sim_sleep(500000);
	lb_sim_spend(4 * MS);
}

static void stats_and_sleep_until(void)
{
	world = sim_test_world(SIM_TEST_MACHINE(1, 2), 9);
	lb_sim_spawn(world, migrant, NULL);
	int hog = lb_sim_spawn(world, cpu0_hog, NULL);
	lb_sim_thread_pin(world, hog, 0);
	lb_sim_run(world, 10 * MS);
	struct lb_sim_stats st = lb_sim_stats(world);
	tap_ok(mig_after - mig_before == 1 && woke_on == 1,
	       "woken while its CPU ran a hog: on CPU 1, one migration (%llu, CPU %u)",
	       (unsigned long long)(mig_after - mig_before), woke_on);
	/* clock_nanosleep(TIMER_ABSTIME): the timer at 3 ms and the wake-up
	 * latency (3 us) after it; no switch: it was its CPU's last thread. */
	tap_ok(woke_at == 3 * MS + 3000, "sleep_until 3 ms: back at 3.003 ms (%llu ns)",
	       (unsigned long long)woke_at);
	/* Busy: the hog's 4 ms and a few system calls and switches; idle the
	 * rest of 2 CPUs x 10 ms. */
	tap_ok(st.busy_ns >= 4 * MS && st.busy_ns < 4 * MS + 20000,
	       "busy CPU time: the hog's 4 ms and under 20 us of calls and switches (%llu ns)",
	       (unsigned long long)st.busy_ns);
	lb_sim_destroy(world);
}

int main(void)
{
	wakeup_preemption();
	fifo_hog();
	pi_boost();
	preempt_off();
	timeouts_and_moves();
	yield_turns();
	truth();
	stats_and_sleep_until();
	return tap_done();
}
