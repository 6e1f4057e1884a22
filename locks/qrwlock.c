/* SPDX-License-Identifier: MIT */
/*
 * qrwlock.c - vtable adapter for qrwlock.h, the kernel-style queued
 * reader/writer lock.  lock/unlock/trylock are the write side.
 *
 * The slow paths queue on an embedded qspinlock-pv, so threads need the
 * same kind of context qspinlock_pv.c gives them: {node table, thread index,
 * spin budget}.  This adapter keeps its own static, never-freed table of
 * LB_MAX_THREADS node slots (see qspinlock.c for why it must never be
 * freed); it is separate from qspinlock_pv.c's so each adapter stands alone.
 *
 * Waiting policy (see the header): the queue head spins LB_QRWLOCK_SPIN_NS
 * and then parks on a futex word of its own; threads queued behind it spin
 * on their own nodes for LB_QSPIN_PV_SPIN_NS and then sleep too, so the
 * flags claim LB_LOCK_F_SLEEPS.  Not LB_LOCK_F_FAIR: the parking wait_lock
 * lets a running thread overtake a sleeping queue head.  LB_LOCK_F_SPIN_ROLE:
 * it stands in for the kernel's rwlock_t, so locktorture gives it rw_lock
 * hold times (10 us reads), not rwsem_lock's (50 ms reads every time).
 */
#include <errno.h>
#include <stdio.h>

#include "lb_lock_ops.h"
#include "qrwlock.h"

_Static_assert(LB_MAX_THREADS <= LB_QSPIN_PV_MAX_THREADS,
	       "thread indices must fit the qspinlock-pv tail");

/* The node domain of every qrwlock's wait_lock. */
static struct lb_qspin_pv_slot lb_qrwlock_slots[LB_MAX_THREADS];

static int qrw_init(void *lock)
{
	lb_qrwlock_init(lock);
	return 0;
}

static int qrw_thread_init(void *tctx, unsigned int thread_index)
{
	if (thread_index >= LB_MAX_THREADS)
		return EINVAL;
	return lb_qspin_pv_ctx_init(tctx, lb_qrwlock_slots, thread_index) ? 0 : EINVAL;
}

static void qrw_write_lock(void *lock, void *tctx)
{
	lb_qrwlock_write_lock(lock, tctx);
}

static void qrw_write_unlock(void *lock, void *tctx)
{
	(void)tctx;
	lb_qrwlock_write_unlock(lock);
}

static bool qrw_write_trylock(void *lock, void *tctx)
{
	(void)tctx;
	return lb_qrwlock_write_trylock(lock);
}

static void qrw_read_lock(void *lock, void *tctx)
{
	lb_qrwlock_read_lock(lock, tctx);
}

static void qrw_read_unlock(void *lock, void *tctx)
{
	(void)tctx;
	lb_qrwlock_read_unlock(lock);
}

static bool qrw_read_trylock(void *lock, void *tctx)
{
	(void)tctx;
	return lb_qrwlock_read_trylock(lock);
}

static void qrw_atfork_child(void *lock, void *tctx)
{
	(void)tctx; /* the forking thread is not queued: its node is idle */
	lb_qrwlock_atfork_child(lock);
}

static void qrw_describe(const void *lock, char *buf, size_t len)
{
	(void)lock;
	snprintf(buf, len,
		 "queue head spins %u ns, then parks on its own futex word; queued waiters spin "
		 "%u ns, then sleep (qspinlock-pv wait_lock)",
		 LB_QRWLOCK_SPIN_NS, LB_QSPIN_PV_SPIN_NS);
}

const struct lb_lock_ops lb_qrwlock_ops = {
	.name = "qrwlock",
	.family = "rwlock",
	.summary = "kernel-style queued rwlock: one word, qspinlock-pv queue, waiters sleep",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_RW | LB_LOCK_F_TRYLOCK | LB_LOCK_F_SLEEPS |
		 LB_LOCK_F_THREAD_CTX | LB_LOCK_F_SPIN_ROLE,
	.lock_size = sizeof(lb_qrwlock_t),
	.lock_align = _Alignof(lb_qrwlock_t),
	.thread_ctx_size = sizeof(lb_qrwlock_ctx_t),
	.init = qrw_init,
	.thread_init = qrw_thread_init,
	.lock = qrw_write_lock,
	.unlock = qrw_write_unlock,
	.trylock = qrw_write_trylock,
	.read_lock = qrw_read_lock,
	.read_unlock = qrw_read_unlock,
	.read_trylock = qrw_read_trylock,
	.describe = qrw_describe,
	.atfork_child = qrw_atfork_child,
};
