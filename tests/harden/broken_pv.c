/* SPDX-License-Identifier: MIT */
/*
 * broken_pv.c - the adapter of a broken qspinlock-pv copy (broken_copies.h).
 * Compiled once per copy: LB_BROKEN_HEADER names the generated header,
 * LB_BROKEN_SYM the ops object and LB_BROKEN_NAME its --type name.
 */
#include "broken_copies.h"
#include "lb_adapter.h"
#include LB_BROKEN_HEADER

LB_QUEUED_ADAPTERS(qspin_pv, struct lb_qspin_pv_slot, LB_QSPIN_PV_MAX_THREADS, lb_qspin_pv_init,
		   lb_qspin_pv_ctx_init, lb_qspin_pv_lock, lb_qspin_pv_unlock, lb_qspin_pv_trylock)

const struct lb_lock_ops LB_BROKEN_SYM = {
	.name = LB_BROKEN_NAME,
	.family = "test",
	.summary = "qspinlock-pv with one deliberate bug (tests/harden/mkbroken.py)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_SLEEPS | LB_LOCK_F_THREAD_CTX |
		 LB_LOCK_F_SPIN_ROLE,
	LB_OPS_CTX_LOCK(lb_qspin_pv_t, lb_qspin_pv_ctx_t, qspin_pv),
};
