/* SPDX-License-Identifier: MIT */
/* delay.c - hold times with the kernel's probabilities, as busy-waits. */
#include "delay.h"
#include "out.h"
#include "clock.h"
#include "lb_time.h"

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>


enum lb_torture_delay_model lb_torture_delay_model_for(const struct lb_lock_ops *ops)
{
	unsigned int f = ops->flags;
	/*
	 * Holds follow the role the lock plays, not how its waiters wait: a
	 * pv spinlock or qrwlock parks its waiters under oversubscription, but
	 * the kernel uses it where critical sections are short, so it gets the
	 * spin_lock/rw_lock holds (rwsem's readers hold 50 ms every time).
	 */
	bool sleeping_role = (f & LB_LOCK_F_SLEEPS) && !(f & LB_LOCK_F_SPIN_ROLE);
	if (f & (LB_LOCK_F_BUSTED | LB_LOCK_F_NOLOCK))
		return LB_TORTURE_DELAY_BUSTED;
	if (f & LB_LOCK_F_RW)
		return sleeping_role ? LB_TORTURE_DELAY_RWSEM : LB_TORTURE_DELAY_RWLOCK;
	if (f & LB_LOCK_F_PI)
		return LB_TORTURE_DELAY_RTMUTEX;
	if (sleeping_role)
		return LB_TORTURE_DELAY_MUTEX;
	return LB_TORTURE_DELAY_SPIN;
}

const char *lb_torture_delay_model_name(enum lb_torture_delay_model model)
{
	switch (model) {
	case LB_TORTURE_DELAY_BUSTED: return "lock_busted";
	case LB_TORTURE_DELAY_SPIN: return "spin_lock";
	case LB_TORTURE_DELAY_RTMUTEX: return "rtmutex_lock";
	case LB_TORTURE_DELAY_RWLOCK: return "rw_lock";
	case LB_TORTURE_DELAY_MUTEX: return "mutex_lock";
	case LB_TORTURE_DELAY_RWSEM: return "rwsem_lock";
	}
	return "?";
}

unsigned int lb_torture_delay_max_hold_ms(enum lb_torture_delay_model model, int long_hold)
{
	unsigned int lh = (unsigned int)long_hold;
	switch (model) {
	case LB_TORTURE_DELAY_MUTEX: return 5 * lh;
	case LB_TORTURE_DELAY_RWSEM: return 10 * lh;
	default: return lh;
	}
}

/* p(1/n): true when a fresh draw is a multiple of n (n = 0 treated as 1). */
static bool one_in(struct lb_torture_random *rng, uint64_t n)
{
	return (uint64_t)lb_torture_random(rng) % (n ? n : 1) == 0;
}

static uint64_t per_thread(int nthreads)
{
	return nthreads > 0 ? (uint64_t)nthreads : 1;
}

/* The occasional long hold: p(1/(n * 2000 * long_hold)). */
static bool long_hold_due(const struct lb_torture_run *run, struct lb_torture_random *rng,
			  int nthreads)
{
	uint64_t lh = (uint64_t)run->cfg.long_hold;
	return lh && one_in(rng, per_thread(nthreads) * 2000 * lh);
}

static void preempt_maybe(struct lb_torture_random *rng, int nthreads)
{
	if (one_in(rng, per_thread(nthreads) * 20000))
		sched_yield();
}

/* spin_lock and rtmutex_lock: long hold with an alert, rare 2 us holds. */
static void spin_write_delay(const struct lb_torture_run *run, struct lb_torture_random *rng)
{
	const struct lb_torture_config *cfg = &run->cfg;
	int w = cfg->nwriters_stress;
	if (long_hold_due(run, rng, w)) {
		uint64_t t0 = lb_torture_now_ns();
		lb_torture_spin_ns((uint64_t)cfg->long_hold * LB_NS_PER_MS);
		if (cfg->verbose)
			lb_torture_printf("%s: delay = %lu jiffies.\n", "torture_spin_lock_write_delay",
					  (unsigned long)((lb_torture_now_ns() - t0) / cfg->jiffy_ns));
	}
	if (one_in(rng, per_thread(w) * 200 * 2))
		lb_torture_spin_ns(2 * LB_NS_PER_US);
	preempt_maybe(rng, w);
}

void lb_torture_write_delay(const struct lb_torture_run *run, struct lb_torture_random *rng)
{
	const struct lb_torture_config *cfg = &run->cfg;
	uint64_t lh_ns = (uint64_t)cfg->long_hold * LB_NS_PER_MS;
	int w = cfg->nwriters_stress;

	switch (run->delay_model) {
	case LB_TORTURE_DELAY_BUSTED:
		if (long_hold_due(run, rng, w))
			lb_torture_spin_ns(lh_ns);
		preempt_maybe(rng, w);
		break;
	case LB_TORTURE_DELAY_SPIN:
	case LB_TORTURE_DELAY_RTMUTEX:
		spin_write_delay(run, rng);
		break;
	case LB_TORTURE_DELAY_RWLOCK:
		if (long_hold_due(run, rng, w))
			lb_torture_spin_ns(lh_ns);
		else
			lb_torture_spin_ns(2 * LB_NS_PER_US);
		break;
	case LB_TORTURE_DELAY_MUTEX:
		if (long_hold_due(run, rng, w))
			lb_torture_spin_ns(5 * lh_ns);
		preempt_maybe(rng, w);
		break;
	case LB_TORTURE_DELAY_RWSEM:
		if (long_hold_due(run, rng, w))
			lb_torture_spin_ns(10 * lh_ns);
		preempt_maybe(rng, w);
		break;
	}
}

void lb_torture_read_delay(const struct lb_torture_run *run, struct lb_torture_random *rng)
{
	const struct lb_torture_config *cfg = &run->cfg;
	uint64_t lh_ns = (uint64_t)cfg->long_hold * LB_NS_PER_MS;
	int r = cfg->nreaders_stress;

	switch (run->delay_model) {
	case LB_TORTURE_DELAY_RWLOCK:
		if (long_hold_due(run, rng, r))
			lb_torture_spin_ns(lh_ns);
		else
			lb_torture_spin_ns(10 * LB_NS_PER_US);
		break;
	case LB_TORTURE_DELAY_RWSEM:
		/* Readers hold long_hold/2 every time: the kernel's choice. */
		if (long_hold_due(run, rng, r))
			lb_torture_spin_ns(2 * lh_ns);
		else
			lb_torture_spin_ns(lh_ns / 2);
		preempt_maybe(rng, r);
		break;
	default:
		break; /* exclusive-only models have no readers */
	}
}
