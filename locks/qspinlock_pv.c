/* SPDX-License-Identifier: MIT */
/*
 * qspinlock_pv.c - vtable adapter for qspinlock_pv.h, the queued spinlock
 * with paravirt-style parking (waiters halt on a futex after a time-bounded
 * spin; the head parks on the lock word; stealing while the head is not
 * running).
 *
 * Node domain: as for qspinlock, one static table of LB_MAX_THREADS
 * cache-line slots (one node each), never freed; the thread context is
 * {table, thread index, spin budget in pause loops}.
 */
#include <errno.h>
#include <stdio.h>

#include "lb_lock_ops.h"
#include "qspinlock_pv.h"

_Static_assert(LB_MAX_THREADS <= LB_QSPIN_PV_MAX_THREADS,
	       "thread indices must fit the qspinlock-pv tail");

static struct lb_qspin_pv_slot lb_qspinlock_pv_slots[LB_MAX_THREADS];

static int qspin_pv_init(void *lock)
{
	lb_qspin_pv_init(lock);
	return 0;
}

static int qspin_pv_thread_init(void *tctx, unsigned int thread_index)
{
	if (thread_index >= LB_MAX_THREADS)
		return EINVAL;
	return lb_qspin_pv_ctx_init(tctx, lb_qspinlock_pv_slots, thread_index) ? 0 : EINVAL;
}

static void qspin_pv_lock(void *lock, void *tctx)
{
	lb_qspin_pv_lock(lock, tctx);
}

static void qspin_pv_unlock(void *lock, void *tctx)
{
	(void)tctx;
	lb_qspin_pv_unlock(lock);
}

static bool qspin_pv_trylock(void *lock, void *tctx)
{
	(void)tctx;
	return lb_qspin_pv_trylock(lock);
}

static void qspin_pv_atfork_child(void *lock, void *tctx)
{
	(void)tctx; /* the forking thread is not queued: its node is idle */
	lb_qspin_pv_atfork_child(lock);
}

static void qspin_pv_describe(const void *lock, char *buf, size_t len)
{
	(void)lock;
	snprintf(buf, len,
		 "waiters spin %u ns (%u pause loops at %.1f ns) then FUTEX_WAIT; pending spin "
		 "if none queue; head parks on the word; steals while head is off CPU",
		 LB_QSPIN_PV_SPIN_NS, lb_spin_loops(LB_QSPIN_PV_SPIN_NS),
		 (double)lb_spin_relax_ps() / 1000.0);
}

const struct lb_lock_ops lb_qspinlock_pv_ops = {
	.name = "qspinlock-pv",
	.family = "spin",
	.summary = "queued spinlock with paravirt-style parking: bounded pending spin, halt after "
		   "a timed spin, kick on hand-over, head parks on the word, steal while the head "
		   "is not running",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_SLEEPS | LB_LOCK_F_THREAD_CTX |
		 LB_LOCK_F_SPIN_ROLE,
	.lock_size = sizeof(lb_qspin_pv_t),
	.lock_align = _Alignof(lb_qspin_pv_t),
	.thread_ctx_size = sizeof(struct lb_qspin_pv_ctx),
	.init = qspin_pv_init,
	.thread_init = qspin_pv_thread_init,
	.lock = qspin_pv_lock,
	.unlock = qspin_pv_unlock,
	.trylock = qspin_pv_trylock,
	.describe = qspin_pv_describe,
	.atfork_child = qspin_pv_atfork_child,
};
