/* SPDX-License-Identifier: MIT */
/* broken_qrwlock.c - the adapter of the broken qrwlock copy (broken_copies.h). */
#include "broken_copies.h"
#include "lb_adapter.h"
#include "broken_qrwlock_seq_after_word.h"

/* Its own node domain, as locks/qrwlock.c's (never freed). */
LB_QUEUED_ADAPTERS(bqrw, struct lb_qspin_pv_slot, LB_QSPIN_PV_MAX_THREADS, lb_qrwlock_init,
		   lb_qrwlock_ctx_init, lb_qrwlock_write_lock, lb_qrwlock_write_unlock,
		   lb_qrwlock_write_trylock)
LB_ADAPT_CTX_VOID(bqrw_read_lock, lb_qrwlock_read_lock)
LB_ADAPT_VOID(bqrw_read_unlock, lb_qrwlock_read_unlock)
LB_ADAPT_BOOL(bqrw_read_trylock, lb_qrwlock_read_trylock)

const struct lb_lock_ops lb_broken_qrwlock_seq_after_word_ops = {
	.name = "qrwlock-seq-after-word",
	.family = "test",
	.summary = "qrwlock whose parked reader reads rd_seq after the word (mkbroken.py)",
	LB_OPS_CTX_RWLOCK(lb_qrwlock_t, lb_qrwlock_ctx_t, bqrw,
			  LB_LOCK_F_SLEEPS | LB_LOCK_F_SPIN_ROLE),
};
