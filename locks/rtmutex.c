/* SPDX-License-Identifier: MIT */
/*
 * rtmutex.c - vtable adapter for rtmutex.h, the priority-inheritance
 * rt_mutex emulation.
 *
 *   rtmutex   owner-word CAS fast path; waiters sorted by priority; PI chain
 *             walk (max depth 1024); top-waiter spinning; futex sleep.
 *             Normal-priority threads may steal from normal-priority
 *             waiters (LB_RTMUTEX_F_LATERAL_STEAL, as PREEMPT_RT's sleeping
 *             spinlocks do); real-time waiters are only overtaken by
 *             strictly higher priorities.
 *
 * The thread context is the task record.  thread_init() must run on the
 * thread it describes: it records the thread id and decides once whether
 * boosts also change the kernel policy (SCHED_FIFO permitted) and whether
 * the thread may spin (it may run on more than one CPU).  The plain lock()
 * runs without deadlock detection; lb_rtmutex_lock_check() in the header is
 * the checking variant.  init_shared (rt -P) makes every futex shared
 * (rtmutex.h, "Processes").
 */
#include <lockbench/rtmutex.h>
#include "lb_adapter.h"
#include "lb_deadline.h"

#include <stdio.h>

static int rt_init(void *lock)
{
	const struct lb_rtmutex_attr attr = { .lateral_steal = true };

	lb_rtmutex_init(lock, &attr);
	return 0;
}

/* Processes: shared futexes for the lock and, from their first call on it,
 * for the tasks that use it (the contexts lie in the caller's shared
 * mapping; boosts use TIDs). */
static int rt_init_shared(void *lock)
{
	const struct lb_rtmutex_attr attr = { .lateral_steal = true };

	lb_rtmutex_init_shared(lock, &attr);
	return 0;
}

static void rt_describe(const void *lock, char *buf, size_t len)
{
	(void)lock;
	snprintf(buf, len, "%s",
		 lb_rtmutex_real_boost_available()
			 ? "PI boosts change the owner's SCHED_FIFO priority (real boosting on)"
			 : "SCHED_FIFO not permitted: PI boosting is logical only (real boosting off)");
}

LB_CTX_ADAPTERS(rt, lb_rtmutex_ctx_init_auto, lb_rtmutex_lock, lb_rtmutex_unlock,
		lb_rtmutex_trylock)
LB_ADAPT_TIMED_MONOTONIC(rt_timedlock, lb_rtmutex_timedlock, lb_rtmutex_trylock)

/*
 * The holder of every rtmutex whose holder vanished in a fork (a child
 * process's state, set up by lb_rtmutex_atfork_child; later waiters queue
 * on it under its pi_lock).
 */
static lb_rtmutex_ctx_t rt_orphan;

static void rt_atfork_child(void *lock, void *tctx)
{
	lb_rtmutex_atfork_child(lock, tctx, &rt_orphan);
}

static int rt_thread_set_prio(void *tctx, int prio)
{
	return lb_rtmutex_task_setprio(tctx, prio);
}

#if LB_LOCK_COUNTERS
static size_t rt_counters(const void *lock, struct lb_counter *out, size_t max)
{
	static const char *const names[] = LB_RTMUTEX_COUNTER_NAMES;
	const struct lb_rtmutex_stats *st = &((const lb_rtmutex_t *)lock)->st;
	const _Atomic uint64_t *vals[] = { &st->fast,  &st->slow,  &st->steals,
					   &st->sleeps, &st->spins, &st->boosts,
					   &st->walk_steps, &st->real_sched, &st->real_errors };
	_Static_assert(sizeof(names) / sizeof(names[0]) == sizeof(vals) / sizeof(vals[0]),
		       "counter names and values disagree");
	size_t n = 0;
	for (; n < max && n < sizeof(vals) / sizeof(vals[0]); n++) {
		out[n].name = names[n];
		out[n].value = atomic_load_explicit(vals[n], memory_order_relaxed);
	}
	return n;
}
#define LB_RTMUTEX_COUNTERS_FLAG LB_LOCK_F_COUNTERS
#define LB_RTMUTEX_COUNTERS_FN rt_counters
#else
#define LB_RTMUTEX_COUNTERS_FLAG 0
#define LB_RTMUTEX_COUNTERS_FN NULL
#endif

const struct lb_lock_ops lb_rtmutex_ops = {
	.name = "rtmutex",
	.family = "pi",
	.summary = "PI rt_mutex emulation: CAS fast path, prio-sorted waiters, chain walk, "
		   "real SCHED_FIFO boost when permitted",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_SLEEPS | LB_LOCK_F_PI |
		 LB_LOCK_F_THREAD_CTX | LB_LOCK_F_TIMED | LB_LOCK_F_PSHARED | LB_RTMUTEX_COUNTERS_FLAG,
	LB_OPS_CTX_LOCK(lb_rtmutex_t, lb_rtmutex_ctx_t, rt),
	.counters = LB_RTMUTEX_COUNTERS_FN,
	.thread_set_prio = rt_thread_set_prio,
	.describe = rt_describe,
	.timedlock = rt_timedlock,
	.atfork_child = rt_atfork_child,
	.init_shared = rt_init_shared,
};
