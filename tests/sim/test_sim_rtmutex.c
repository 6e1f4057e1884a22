/* SPDX-License-Identifier: MIT */
/*
 * test_sim_rtmutex.c - the registry's own `rtmutex` and `futex-pi` (locks/,
 * compiled over bench/sim/sim_interpose.h, vtables lb_simlk_*_ops) bound a
 * priority inversion on the simulator, one CPU, where the FIFO class fixes
 * the order: L (fair) takes the lock and works 5 ms; H (FIFO 50) locks it
 * at 1 ms; M (FIFO 30) wakes at 2 ms and hogs 50 ms.
 *
 *   rtmutex: H's boost is rtmutex's real boost, sched_setscheduler(L's
 *     TID, SCHED_FIFO, 50) on the engine's classes (sim_hooks.c), so L
 *     finishes above M and H has the lock within 7 ms; its counters show
 *     the boost and the real scheduler calls, none refused, and L is back
 *     in the fair class after its unlock.
 *   futex-pi: the same through FUTEX_LOCK_PI/UNLOCK_PI (the engine's PI
 *     futexes, engines/sim/sim_pi.c).
 *
 * Without the boost H waits for the hog: 55 ms.
 */
#include "sim_test.h"

#include "lockbench/lb_lock_ops.h"

#include <stdlib.h>
#include <string.h>

#define MS 1000000ull

extern const struct lb_lock_ops lb_simlk_rtmutex_ops;
extern const struct lb_lock_ops lb_simlk_futex_pi_ops;

static const struct lb_lock_ops *ops;
static struct lb_sim_world *world;
static void *lock;
static unsigned char *ctx[2];
static uint64_t h_got;
static int l_prio_held, l_prio_after;

static void take(unsigned i)
{
	if (ops->thread_init && ops->thread_init(ctx[i], i)) {
		printf("Bail out! %s: thread_init failed\n", ops->name);
		exit(1);
	}
	ops->lock(lock, ctx[i]);
}

static void low(void *arg)
{
	(void)arg;
	take(0);
	lb_sim_spend(5 * MS);
	l_prio_held = lb_sim_thread_eff_prio(world, lb_sim_self());
	ops->unlock(lock, ctx[0]);
	l_prio_after = lb_sim_thread_eff_prio(world, lb_sim_self());
}

static void high(void *arg)
{
	(void)arg;
	lb_sim_sleep(1 * MS);
	take(1);
	h_got = lb_sim_now();
	ops->unlock(lock, ctx[1]);
}

static void medium(void *arg)
{
	(void)arg;
	lb_sim_sleep(2 * MS);
	lb_sim_spend(50 * MS);
}

static int spawn(lb_sim_fn fn, int prio)
{
	int tid = lb_sim_spawn(world, fn, NULL);
	lb_sim_thread_pin(world, tid, 0);
	if (prio)
		lb_sim_thread_fifo(world, tid, prio);
	return tid;
}

static void inversion(const struct lb_lock_ops *o)
{
	ops = o;
	world = sim_test_world(SIM_TEST_MACHINE(1, 1), 11);
	size_t align = ops->lock_align > 64 ? ops->lock_align : 64;
	lock = aligned_alloc(align, (ops->lock_size + align - 1) / align * align);
	for (unsigned i = 0; i < 2; i++)
		ctx[i] = calloc(1, ops->thread_ctx_size ? ops->thread_ctx_size : 1);
	if (!lock || !ctx[0] || !ctx[1]) {
		printf("Bail out! no memory\n");
		exit(1);
	}
	memset(lock, 0, ops->lock_size);
	if (ops->init && ops->init(lock)) {
		printf("Bail out! %s: init failed\n", ops->name);
		exit(1);
	}
	h_got = 0;
	l_prio_held = l_prio_after = -1;
	spawn(low, 0);
	spawn(high, 50);
	spawn(medium, 30);
	lb_sim_run(world, 200 * MS);
	tap_ok(l_prio_held == 50, "%s: the fair owner ran at the waiter's FIFO 50 (%d)", ops->name,
	       l_prio_held);
	/* After L's 5 ms section (rtmutex has no hand-off: H may run before
	 * L's unlock call returns, as soon as L dropped its boost). */
	tap_ok(h_got > 5 * MS && h_got < 7 * MS,
	       "%s: the FIFO-50 waiter had the lock within 7 ms, above the FIFO-30 hog (%llu ns)",
	       ops->name, (unsigned long long)h_got);
	tap_ok(l_prio_after == 0, "%s: the owner back in the fair class after its unlock (%d)",
	       ops->name, l_prio_after);
	if (ops->counters) {
		struct lb_counter c[16];
		size_t n = ops->counters(lock, c, 16);
		uint64_t boosts = 0, real = 0, errors = 1;
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(c[i].name, "boosts"))
				boosts = c[i].value;
			else if (!strcmp(c[i].name, "real_sched"))
				real = c[i].value;
			else if (!strcmp(c[i].name, "real_errors"))
				errors = c[i].value;
		}
		tap_ok(boosts >= 1 && real >= 2 && errors == 0,
		       "%s: a boost, its apply and the deboost's as real scheduler calls, none "
		       "refused "
		       "(boosts %llu, real_sched %llu, real_errors %llu)",
		       ops->name, (unsigned long long)boosts, (unsigned long long)real,
		       (unsigned long long)errors);
	}
	lb_sim_destroy(world);
	free(lock);
	for (unsigned i = 0; i < 2; i++)
		free(ctx[i]);
}

int main(void)
{
	inversion(&lb_simlk_rtmutex_ops);
	inversion(&lb_simlk_futex_pi_ops);
	return tap_done();
}
