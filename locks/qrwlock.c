/* SPDX-License-Identifier: MIT */
/*
 * qrwlock.c - vtable adapter for qrwlock.h, the kernel-style queued
 * reader/writer lock.  lock/unlock/trylock are the write side.
 *
 * The slow paths queue on an embedded qspinlock, so threads need the same
 * kind of context qspinlock.c gives them: {node table, thread index}.  This
 * adapter keeps its own static, never-freed table of LB_MAX_THREADS node
 * slots (see qspinlock.c for why it must never be freed); it is separate
 * from qspinlock.c's so each adapter stands alone, and a thread that holds
 * a qspinlock while it queues here uses different nodes anyway.
 *
 * Waiting policy (see the header): the queue head spins LB_QRWLOCK_SPIN_LOOPS
 * times and then parks on a futex; threads queued behind it spin on their
 * own MCS nodes.  The flags do not claim LB_LOCK_F_SLEEPS: most waiters
 * spin, so the lock is run like a spinlock.
 */
#include <errno.h>
#include <stdio.h>

#include "lb_lock_ops.h"
#include "qrwlock.h"

_Static_assert(LB_MAX_THREADS <= LB_QSPIN_MAX_THREADS,
	       "thread indices must fit the qspinlock tail");

/* The node domain of every qrwlock's wait_lock. */
static struct lb_qspin_slot lb_qrwlock_slots[LB_MAX_THREADS];

static int qrw_init(void *lock)
{
	lb_qrwlock_init(lock);
	return 0;
}

static int qrw_thread_init(void *tctx, unsigned int thread_index)
{
	if (thread_index >= LB_MAX_THREADS)
		return EINVAL;
	return lb_qspin_ctx_init(tctx, lb_qrwlock_slots, thread_index) ? 0 : EINVAL;
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

static void qrw_describe(const void *lock, char *buf, size_t len)
{
	(void)lock;
	if (LB_QRWLOCK_FUTEX)
		snprintf(buf, len,
			 "queue head spins %d relax loops, then parks on a futex; queued waiters spin",
			 LB_QRWLOCK_SPIN_LOOPS);
	else
		snprintf(buf, len, "all waiters spin (built without futex parking)");
}

const struct lb_lock_ops lb_qrwlock_ops = {
	.name = "qrwlock",
	.family = "rwlock",
	.summary = "kernel-style queued rwlock: one word, FIFO qspinlock queue, head parks on a futex",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_RW | LB_LOCK_F_TRYLOCK | LB_LOCK_F_FAIR |
		 LB_LOCK_F_THREAD_CTX,
	.lock_size = sizeof(lb_qrwlock_t),
	.lock_align = _Alignof(lb_qrwlock_t),
	.thread_ctx_size = sizeof(struct lb_qspin_ctx),
	.init = qrw_init,
	.thread_init = qrw_thread_init,
	.lock = qrw_write_lock,
	.unlock = qrw_write_unlock,
	.trylock = qrw_write_trylock,
	.read_lock = qrw_read_lock,
	.read_unlock = qrw_read_unlock,
	.read_trylock = qrw_read_trylock,
	.describe = qrw_describe,
};
