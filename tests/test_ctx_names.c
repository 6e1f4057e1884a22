/* SPDX-License-Identifier: MIT */
/*
 * test_ctx_names.c - every lock with a per-thread context spells it
 * lb_X_ctx_t with lb_X_ctx_init() (doc/embedding.md), and the names before
 * 0.2 still compile and name the same types and functions for one release:
 * the old spellings are written here exactly as embedders wrote them.
 */
#include "tap.h"

#include <lockbench/futex_pi.h>
#include <lockbench/mutex.h>
#include <lockbench/qrwlock.h>
#include <lockbench/qspinlock.h>
#include <lockbench/qspinlock_pv.h>
#include <lockbench/rtmutex.h>

#include <string.h>

/* One node domain per queued lock type, as the adapters keep. */
static struct lb_qspin_slot qspin_slots[4];
static struct lb_qspin_pv_slot qspin_pv_slots[4];

int main(void)
{
	/* Types: the new name and the old one are the same type. */
	_Static_assert(sizeof(lb_qspin_ctx_t) == sizeof(struct lb_qspin_ctx), "qspin ctx");
	_Static_assert(sizeof(lb_qspin_pv_ctx_t) == sizeof(struct lb_qspin_pv_ctx), "qspin-pv ctx");
	_Static_assert(sizeof(lb_qrwlock_ctx_t) == sizeof(lb_qspin_pv_ctx_t), "qrwlock ctx");
	_Static_assert(sizeof(lb_mutex_ctx_t) == sizeof(lb_mutex_thread_t), "mutex ctx");
	_Static_assert(sizeof(lb_rtmutex_ctx_t) == sizeof(struct lb_rt_task), "rtmutex ctx");
	_Static_assert(sizeof(lb_futex_pi_ctx_t) == sizeof(uint32_t), "futex-pi ctx");
	/* A pointer to one converts to the other without a cast only when
	 * they are the same type (a constraint violation otherwise). */
	lb_mutex_ctx_t mctx;
	lb_mutex_thread_t *old_m = &mctx;
	lb_rtmutex_ctx_t rctx;
	struct lb_rt_task *old_r = &rctx;

	lb_qspin_ctx_t q;
	tap_ok(lb_qspin_ctx_init(&q, qspin_slots, 1) && q.index == 1, "lb_qspin_ctx_init binds slot 1");
	lb_qspin_pv_ctx_t qp;
	tap_ok(lb_qspin_pv_ctx_init(&qp, qspin_pv_slots, 2) && qp.index == 2,
	       "lb_qspin_pv_ctx_init binds slot 2");
	lb_qrwlock_ctx_t qr;
	tap_ok(lb_qrwlock_ctx_init(&qr, qspin_pv_slots, 3) && qr.index == 3,
	       "lb_qrwlock_ctx_init binds slot 3");

	/* Old and new init calls leave the same record. */
	lb_mutex_ctx_t m2;
	memset((void *)&mctx, 0xa5, sizeof(mctx));
	memset((void *)&m2, 0xa5, sizeof(m2)); /* same fill: padding compares equal */
	lb_mutex_thread_init(old_m);
	lb_mutex_ctx_init(&m2);
	tap_ok(memcmp((void *)&mctx, (void *)&m2, sizeof(m2)) == 0,
	       "lb_mutex_thread_init (old) and lb_mutex_ctx_init set the same record");
	lb_mutex_t m;
	lb_mutex_init(&m, NULL);
	lb_mutex_lock(&m, &mctx);
	tap_ok(lb_mutex_is_locked(&m), "mutex locks through a context set up by the old name");
	lb_mutex_unlock(&m, &mctx);

	lb_rt_task_init(old_r, 0);
	lb_rtmutex_t r = LB_RTMUTEX_INITIALIZER;
	lb_rtmutex_lock(&r, &rctx);
	tap_ok(lb_rtmutex_is_locked(&r) && lb_rt_task_base_prio(old_r) == lb_rtmutex_task_base_prio(&rctx),
	       "rtmutex locks through a context set up by lb_rt_task_init (old)");
	lb_rtmutex_unlock(&r, &rctx);
	lb_rtmutex_ctx_init(&rctx, LB_RT_TASK_SPIN);
	tap_ok(LB_RT_TASK_SPIN == LB_RTMUTEX_TASK_SPIN && LB_RT_TASK_REAL == LB_RTMUTEX_TASK_REAL,
	       "LB_RT_TASK_* flags alias LB_RTMUTEX_TASK_*");

	lb_futex_pi_ctx_t tid;
	lb_futex_pi_ctx_init(&tid);
	lb_futex_pi_t f = LB_FUTEX_PI_INITIALIZER;
	tap_ok(lb_futex_pi_lock(&f, tid) == 0 && lb_futex_pi_is_locked(&f) &&
		       lb_futex_pi_unlock(&f, tid) == 0,
	       "futex-pi locks and unlocks with the TID from lb_futex_pi_ctx_init");
	return tap_done();
}
