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
#include <stdio.h>

#include "lb_adapter.h"
#include <lockbench/qspinlock.h>

/* The node domain (qspin_slots): the analogue of the kernel's per-CPU qnodes. */
LB_QUEUED_ADAPTERS(qspin, struct lb_qspin_slot, LB_QSPIN_MAX_THREADS, lb_qspin_init,
		   lb_qspin_ctx_init, lb_qspin_lock, lb_qspin_unlock, lb_qspin_trylock)

static void qspin_describe(const void *lock, char *buf, size_t len)
{
	(void)lock;
	snprintf(buf, len, "%s lock word; pending re-reads for %u ns (%u loops); %d nodes per thread",
		 LB_QSPIN_SUBWORD ? "sub-word (byte/half-word) accesses to the" : "word-only C11 atomics on the",
		 LB_QSPIN_PENDING_NS, lb_spin_loops(LB_QSPIN_PENDING_NS), LB_QSPIN_NESTING);
}

/* The forking thread is not queued: its node is idle. */
LB_ADAPT_VOID(qspin_atfork_child, lb_qspin_atfork_child)

const struct lb_lock_ops lb_qspinlock_ops = {
	.name = "qspinlock",
	.family = "spin",
	.summary = "kernel-style queued spinlock: 32-bit word, pending bit, MCS tail (FIFO queue)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_FAIR |
		 LB_LOCK_F_THREAD_CTX,
	LB_OPS_CTX_LOCK(lb_qspin_t, lb_qspin_ctx_t, qspin),
	.describe = qspin_describe,
	.atfork_child = qspin_atfork_child,
};
