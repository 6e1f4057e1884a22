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
#include <stdio.h>

#include "lb_adapter.h"
#include <lockbench/qrwlock.h>

/* The node domain of every qrwlock's wait_lock (qrw_slots). */
LB_QUEUED_ADAPTERS(qrw, struct lb_qspin_pv_slot, LB_QSPIN_PV_MAX_THREADS, lb_qrwlock_init,
		   lb_qrwlock_ctx_init, lb_qrwlock_write_lock, lb_qrwlock_write_unlock,
		   lb_qrwlock_write_trylock)
LB_ADAPT_CTX_VOID(qrw_read_lock, lb_qrwlock_read_lock)
LB_ADAPT_VOID(qrw_read_unlock, lb_qrwlock_read_unlock)
LB_ADAPT_BOOL(qrw_read_trylock, lb_qrwlock_read_trylock)

/* The forking thread is not queued: its node is idle. */
LB_ADAPT_VOID(qrw_atfork_child, lb_qrwlock_atfork_child)

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
	LB_OPS_CTX_RWLOCK(lb_qrwlock_t, lb_qrwlock_ctx_t, qrw,
			  LB_LOCK_F_SLEEPS | LB_LOCK_F_SPIN_ROLE),
	.describe = qrw_describe,
	.atfork_child = qrw_atfork_child,
};
