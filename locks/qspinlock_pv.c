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

#include "lb_adapter.h"
#include <lockbench/qspinlock_pv.h>

LB_QUEUED_ADAPTERS(qspin_pv, struct lb_qspin_pv_slot, LB_QSPIN_PV_MAX_THREADS, lb_qspin_pv_init,
		   lb_qspin_pv_ctx_init, lb_qspin_pv_lock, lb_qspin_pv_unlock, lb_qspin_pv_trylock)

/* The forking thread is not queued: its node is idle. */
LB_ADAPT_VOID(qspin_pv_atfork_child, lb_qspin_pv_atfork_child)

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
	LB_OPS_CTX_LOCK(lb_qspin_pv_t, lb_qspin_pv_ctx_t, qspin_pv),
	.describe = qspin_pv_describe,
	.atfork_child = qspin_pv_atfork_child,
};
