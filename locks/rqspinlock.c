/* SPDX-License-Identifier: MIT */
/*
 * rqspinlock.c - vtable adapter for rqspinlock.h, the resilient queued
 * spinlock (acquisition can fail: deadlock detected, or a timeout).
 *
 * Node domain: as qspinlock.c's, one static table of LB_MAX_THREADS slots
 * (queue nodes plus the thread's wait stack, 320 bytes each, BSS the
 * kernel backs only once touched), never freed.  Cycle detection reads the
 * other threads' wait stacks in it, up to the highest index ever bound.
 *
 * The vtable's two lock slots:
 *  - lock_fallible: lb_rqspin_lock as is, its -EDEADLK/-ETIMEDOUT turned
 *    into the vtable's positive errno values;
 *  - lock: for callers that cannot fail (conformance, own-cost probes): a
 *    timeout means only that a holder was slow (preempted, say), so it
 *    retries; a detected deadlock is a bug of the caller, and aborts.
 */
#include <stdio.h>

#include "lb_adapter.h"
#include <lockbench/rqspinlock.h>

_Static_assert(LB_MAX_THREADS <= LB_QSPIN_MAX_THREADS,
	       "thread indices must fit the lock word's tail");

static struct lb_rqspin_slot rqspin_slots[LB_MAX_THREADS];
static struct lb_rqspin_domain rqspin_domain =
	LB_RQSPIN_DOMAIN_INITIALIZER(rqspin_slots, LB_MAX_THREADS);

LB_ADAPT_INIT(rqspin_init, lb_rqspin_init)

static int rqspin_thread_init(void *tctx, unsigned int thread_index)
{
	return lb_rqspin_ctx_init(tctx, &rqspin_domain, thread_index) ? 0 : EINVAL;
}

static int rqspin_lock_fallible(void *lock, void *tctx)
{
	return -lb_rqspin_lock(lock, tctx);
}

/* Out of line, so that lock()'s fast path needs no stack frame. */
LB_NOINLINE static void rqspin_lock_retry(void *lock, void *tctx, int err)
{
	/* Each try is bounded by the timeout; a slow holder ends eventually. */
	while (err == -ETIMEDOUT)
		err = lb_rqspin_lock(lock, tctx);
	if (err)
		lb_die(-err, "rqspinlock: lock() (a deadlock this caller created)");
}

static void rqspin_lock(void *lock, void *tctx)
{
	int err = lb_rqspin_lock(lock, tctx);
	if (LB_UNLIKELY(err))
		rqspin_lock_retry(lock, tctx, err);
}

LB_ADAPT_CTX_BOOL(rqspin_trylock, lb_rqspin_trylock)
LB_ADAPT_CTX_VOID(rqspin_unlock, lb_rqspin_unlock)

static void rqspin_describe(const void *lock, char *buf, size_t len)
{
	(void)lock;
	snprintf(buf, len, "qspinlock word, owner tag in the locked byte; %d-entry wait stack per "
		 "thread; AA and cycle (up to %u threads) checks on entry and every %u us; timeout "
		 "%u ms (queue head %u ms)",
		 LB_RQSPIN_WAITS_MAX, LB_RQSPIN_CYCLE_HOPS, LB_RQSPIN_CHECK_NS / 1000u,
		 LB_RQSPIN_TIMEOUT_NS / 1000000u, 2u * (LB_RQSPIN_TIMEOUT_NS / 1000000u));
}

/* The forking thread is not queued: its node is idle. */
LB_ADAPT_VOID(rqspin_atfork_child, lb_rqspin_atfork_child)

const struct lb_lock_ops lb_rqspinlock_ops = {
	.name = "rqspinlock",
	.family = "spin",
	.summary = "resilient queued spinlock: qspinlock + owner in the word, AA/ABBA/longer-cycle "
		   "detection, timeout; lock can fail",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_FAIR |
		 LB_LOCK_F_THREAD_CTX | LB_LOCK_F_FALLIBLE,
	LB_OPS_CTX_LOCK(lb_rqspin_t, lb_rqspin_ctx_t, rqspin),
	.describe = rqspin_describe,
	.atfork_child = rqspin_atfork_child,
	.lock_fallible = rqspin_lock_fallible,
};
