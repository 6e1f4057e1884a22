/* SPDX-License-Identifier: MIT */
/*
 * qspinlock.c - vtable adapter for qspinlock.h, the kernel-style queued
 * spinlock.
 *
 * Node domain: the lock word's tail names a thread index, so every waiter
 * must be able to turn an index back into that thread's nodes, and a
 * neighbour may write into a node while its owner waits.  The adapter
 * therefore keeps one static table of LB_MAX_THREADS cache-line slots (4 MCS
 * nodes each, 256 KiB of zero-filled BSS that the kernel only backs once a
 * slot is touched).  It is never freed, so no lock can ever reach a dead
 * node, and every qspinlock driven through this table shares it.  The
 * thread context is just {table, thread index}; thread_init binds it.  The
 * harness's dense thread index must name one live thread at a time (the
 * vtable contract); a later thread may reuse an index.
 */
#include <errno.h>
#include <stdio.h>

#include "lb_lock_ops.h"
#include "qspinlock.h"

_Static_assert(LB_MAX_THREADS <= LB_QSPIN_MAX_THREADS,
	       "thread indices must fit the qspinlock tail");

/* The node domain: the analogue of the kernel's per-CPU qnodes. */
static struct lb_qspin_slot lb_qspinlock_slots[LB_MAX_THREADS];

static int qspin_init(void *lock)
{
	lb_qspin_init(lock);
	return 0;
}

static int qspin_thread_init(void *tctx, unsigned int thread_index)
{
	if (thread_index >= LB_MAX_THREADS)
		return EINVAL;
	return lb_qspin_ctx_init(tctx, lb_qspinlock_slots, thread_index) ? 0 : EINVAL;
}

static void qspin_lock(void *lock, void *tctx)
{
	lb_qspin_lock(lock, tctx);
}

static void qspin_unlock(void *lock, void *tctx)
{
	(void)tctx;
	lb_qspin_unlock(lock);
}

static bool qspin_trylock(void *lock, void *tctx)
{
	(void)tctx;
	return lb_qspin_trylock(lock);
}

static void qspin_describe(const void *lock, char *buf, size_t len)
{
	(void)lock;
	snprintf(buf, len, "%s lock word; pending re-reads for %u ns (%u loops); %d nodes per thread",
		 LB_QSPIN_SUBWORD ? "sub-word (byte/half-word) accesses to the" : "word-only C11 atomics on the",
		 LB_QSPIN_PENDING_NS, lb_spin_loops(LB_QSPIN_PENDING_NS), LB_QSPIN_NESTING);
}

static void qspin_atfork_child(void *lock, void *tctx)
{
	(void)tctx; /* the forking thread is not queued */
	lb_qspin_atfork_child(lock);
}

const struct lb_lock_ops lb_qspinlock_ops = {
	.name = "qspinlock",
	.family = "spin",
	.summary = "kernel-style queued spinlock: 32-bit word, pending bit, MCS tail (FIFO queue)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_FAIR |
		 LB_LOCK_F_THREAD_CTX,
	.lock_size = sizeof(lb_qspin_t),
	.lock_align = _Alignof(lb_qspin_t),
	.thread_ctx_size = sizeof(struct lb_qspin_ctx),
	.init = qspin_init,
	.thread_init = qspin_thread_init,
	.lock = qspin_lock,
	.unlock = qspin_unlock,
	.trylock = qspin_trylock,
	.describe = qspin_describe,
	.atfork_child = qspin_atfork_child,
};
