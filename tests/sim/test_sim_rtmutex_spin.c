/* SPDX-License-Identifier: MIT */
/*
 * test_sim_rtmutex_spin.c - the registry's `rtmutex` (compiled over
 * bench/sim/sim_interpose.h) keeps the kernel's owner_on_cpu rule on the
 * simulator (rt_mutex_spin_on_owner, kernel/locking/rtmutex.c): a waiter
 * spins only while the lock's owner runs on a CPU.  Two CPUs; the owner O
 * (fair) is pinned to CPU 0, the waiter W (fair, allowed both CPUs, so it
 * may spin) runs on CPU 1 and locks 200 us after O took the lock.
 *
 *   preempted: a FIFO hog wakes on CPU 0 at 100 us and runs 3 ms; O,
 *     holding the lock with 1.9 of its 2 ms of work left, waits in the
 *     run queue.
 *   sleeping:  O sleeps 3 ms (nanosleep) holding the lock.
 *   mid-spin:  as preempted, but the hog wakes at 210 us, while W spins:
 *     a preemption writes no line W watches, so W's wait must end by
 *     itself within a pause or so (not at the next tick) to see it.
 *   running:   O works 215 us holding the lock, on its CPU throughout:
 *     W's pre-queue spin (20 us budget) sees the unlock.
 *
 * With the engine answering rtmutex's hooks (LB_SIMI_TRUTH_RTMUTEX, as
 * `--workload rt` does), W queues and sleeps at once when O is off its
 * CPU: under 10 us of W's CPU in its lock call (15 us mid-spin), one
 * sleep, and the lock after O's unlock.  While O runs, W spins and takes
 * the lock unslept.  With the truth off (the native answers: the owner
 * always runs) W burns both 20 us spin budgets (LB_RTMUTEX_SPIN_NS) in the
 * off-CPU cases: the contrast this test checks too.
 */
#include "sim_test.h"
#include "sim_hooks.h"

#include "lockbench/lb_lock_ops.h"

#include <stdlib.h>
#include <string.h>

#define US 1000ull
#define MS 1000000ull

extern const struct lb_lock_ops lb_simlk_rtmutex_ops;

enum scenario { PREEMPTED, SLEEPING, MIDSPIN, RUNNING };
static const char *const names[] = { "preempted", "sleeping", "mid-spin preempted", "running" };

static const struct lb_lock_ops *ops;
static void *lock;
static unsigned char *ctx[2];
static enum scenario sc;
static uint64_t w_cpu, w_got, o_unlocked;

static void init_ctx(unsigned i)
{
	if (ops->thread_init && ops->thread_init(ctx[i], i)) {
		printf("Bail out! %s: thread_init failed\n", ops->name);
		exit(1);
	}
}

static void owner(void *arg)
{
	(void)arg;
	init_ctx(0);
	ops->lock(lock, ctx[0]);
	if (sc == SLEEPING)
		lb_sim_sleep(3 * MS);
	else
		lb_sim_spend(sc == RUNNING ? 215 * US : 2 * MS);
	o_unlocked = lb_sim_now();
	ops->unlock(lock, ctx[0]);
}

static void waiter(void *arg)
{
	(void)arg;
	init_ctx(1);
	lb_sim_sleep(200 * US);
	uint64_t c0 = lb_sim_cpu_ns();
	ops->lock(lock, ctx[1]);
	w_cpu = lb_sim_cpu_ns() - c0;
	w_got = lb_sim_now();
	ops->unlock(lock, ctx[1]);
}

static void hog(void *arg)
{
	(void)arg;
	lb_sim_sleep(sc == MIDSPIN ? 210 * US : 100 * US);
	lb_sim_spend(3 * MS);
}

static uint64_t counter(const char *name)
{
	struct lb_counter c[16];
	size_t n = ops->counters(lock, c, 16);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(c[i].name, name))
			return c[i].value;
	printf("Bail out! %s: no counter %s\n", ops->name, name);
	exit(1);
}

/* One world; returns W's CPU time in its lock call (ns). */
static uint64_t run(enum scenario s, bool truth, uint64_t *sleeps)
{
	sc = s;
	w_cpu = w_got = o_unlocked = 0;
	struct lb_sim_world *world = sim_test_world(SIM_TEST_MACHINE(1, 2), 7);
	memset(lock, 0, ops->lock_size);
	if (ops->init && ops->init(lock)) {
		printf("Bail out! %s: init failed\n", ops->name);
		exit(1);
	}
	lb_simi_set_sched_truth(truth ? LB_SIMI_TRUTH_RTMUTEX : 0);
	lb_sim_thread_pin(world, lb_sim_spawn(world, owner, NULL), 0);
	lb_sim_spawn(world, waiter, NULL);
	if (s == PREEMPTED || s == MIDSPIN) {
		int h = lb_sim_spawn(world, hog, NULL);
		lb_sim_thread_pin(world, h, 0);
		lb_sim_thread_fifo(world, h, 10);
	}
	lb_sim_run(world, 50 * MS);
	lb_simi_set_sched_truth(0);
	lb_sim_destroy(world);
	*sleeps = counter("sleeps");
	return w_cpu;
}

int main(void)
{
	ops = &lb_simlk_rtmutex_ops;
	size_t align = ops->lock_align > 64 ? ops->lock_align : 64;
	lock = aligned_alloc(align, (ops->lock_size + align - 1) / align * align);
	for (unsigned i = 0; i < 2; i++)
		ctx[i] = aligned_alloc(64, (ops->thread_ctx_size + 63) / 64 * 64);
	if (!lock || !ctx[0] || !ctx[1]) {
		printf("Bail out! no memory\n");
		exit(1);
	}
	for (enum scenario s = PREEMPTED; s <= MIDSPIN; s++) {
		uint64_t sleeps, native_sleeps;
		uint64_t cpu = run(s, true, &sleeps);
		/* Mid-spin: W spun from about 203 us (its wake-up) to 210 us. */
		uint64_t bound = s == MIDSPIN ? 15 * US : 10 * US;
		tap_ok(cpu < bound && sleeps == 1 && w_got >= o_unlocked && o_unlocked > 0,
		       "%s owner: the waiter slept at once (%llu ns of CPU in lock, sleeps %llu, "
		       "lock at %llu ns, owner's unlock at %llu ns)",
		       names[s], (unsigned long long)cpu, (unsigned long long)sleeps,
		       (unsigned long long)w_got, (unsigned long long)o_unlocked);
		uint64_t native = run(s, false, &native_sleeps);
		tap_ok(native >= 30 * US && native_sleeps == 1,
		       "%s owner, native hooks (always running): both spin budgets burnt first "
		       "(%llu ns of CPU in lock, sleeps %llu)",
		       names[s], (unsigned long long)native, (unsigned long long)native_sleeps);
	}
	uint64_t sleeps;
	uint64_t cpu = run(RUNNING, true, &sleeps);
	tap_ok(sleeps == 0 && counter("spins") >= 1 && cpu > 2 * US && w_got >= o_unlocked,
	       "running owner: the waiter spun and took the lock without sleeping (%llu ns of "
	       "CPU in lock, sleeps %llu)",
	       (unsigned long long)cpu, (unsigned long long)sleeps);
	free(lock);
	for (unsigned i = 0; i < 2; i++)
		free(ctx[i]);
	return tap_done();
}
