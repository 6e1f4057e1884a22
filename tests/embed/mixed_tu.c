/* SPDX-License-Identifier: MIT */
/*
 * mixed_tu.c - one translation unit of test_mixed_tu, compiled three times
 * with different standards and configuration macros (see mixed_tu.h).
 * MIXED_VARIANT names the build; MIXED_SLEEPING says whether the futex-based
 * locks can be included (they need _GNU_SOURCE).  Also compiled as C++17
 * (mixed_tu_cxx.cc), so it is written in the common subset of C and C++.
 */
#include "mixed_tu.h"

#include "qspinlock.h"
#include "tas.h"
#include "ticket.h"
#if MIXED_SLEEPING
#include "futex_pi.h"
#include "mutex.h"
#include "qrwlock.h"
#include "qspinlock_pv.h"
#include "rtmutex.h"
#endif

#include <string.h>

#if defined(__SANITIZE_THREAD__)
#define MIXED_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MIXED_TSAN 1
#endif
#endif
#ifndef MIXED_TSAN
#define MIXED_TSAN 0
#endif

#define MIXED_CAT(a, b, c) a##b##c
#define MIXED_FN(v, name) MIXED_CAT(mixed_, v, name)

#define MIXED_RECORD(out, idx, type)                                           \
	((out)->size[idx] = sizeof(type), (out)->align[idx] = LB_ALIGNOF(type))

void MIXED_FN(MIXED_VARIANT, _layout)(struct mixed_layout *out)
{
	memset(out, 0, sizeof(*out));
	MIXED_RECORD(out, MIXED_TAS, lb_tas_t);
	MIXED_RECORD(out, MIXED_TICKET, lb_ticket_t);
	MIXED_RECORD(out, MIXED_QSPIN, lb_qspin_t);
	MIXED_RECORD(out, MIXED_QSPIN_SLOT, struct lb_qspin_slot);
	MIXED_RECORD(out, MIXED_QSPIN_CTX, struct lb_qspin_ctx);
#if MIXED_SLEEPING
	MIXED_RECORD(out, MIXED_QRW, lb_qrwlock_t);
	MIXED_RECORD(out, MIXED_QSPIN_PV, lb_qspin_pv_t);
	MIXED_RECORD(out, MIXED_QSPIN_PV_SLOT, struct lb_qspin_pv_slot);
	MIXED_RECORD(out, MIXED_QSPIN_PV_CTX, struct lb_qspin_pv_ctx);
	MIXED_RECORD(out, MIXED_MUTEX, lb_mutex_t);
	MIXED_RECORD(out, MIXED_RTMUTEX, lb_rtmutex_t);
	MIXED_RECORD(out, MIXED_FUTEX_PI, lb_futex_pi_t);
	MIXED_RECORD(out, MIXED_MUTEX_THREAD, lb_mutex_ctx_t);
	MIXED_RECORD(out, MIXED_RT_TASK, struct lb_rtmutex_task);
#endif
}

void MIXED_FN(MIXED_VARIANT, _init)(struct mixed_shared *s)
{
	lb_tas_init((lb_tas_t *)s->lock[MIXED_TAS]);
	lb_ticket_init((lb_ticket_t *)s->lock[MIXED_TICKET]);
	lb_qspin_init((lb_qspin_t *)s->lock[MIXED_QSPIN]);
#if MIXED_SLEEPING
	lb_qrwlock_init((lb_qrwlock_t *)s->lock[MIXED_QRW]);
	lb_qspin_pv_init((lb_qspin_pv_t *)s->lock[MIXED_QSPIN_PV]);
	lb_mutex_init((lb_mutex_t *)s->lock[MIXED_MUTEX], NULL);
	lb_rtmutex_init((lb_rtmutex_t *)s->lock[MIXED_RTMUTEX], NULL);
	lb_futex_pi_init((lb_futex_pi_t *)s->lock[MIXED_FUTEX_PI]);
#endif
}

/* Take every lock this build can include, iters times, from thread `index`. */
void MIXED_FN(MIXED_VARIANT, _run)(struct mixed_shared *s, unsigned int index, unsigned int iters)
{
	struct lb_qspin_ctx qctx;
	lb_tas_t *tas = (lb_tas_t *)s->lock[MIXED_TAS];
	lb_ticket_t *ticket = (lb_ticket_t *)s->lock[MIXED_TICKET];
	lb_qspin_t *qspin = (lb_qspin_t *)s->lock[MIXED_QSPIN];
#if MIXED_SLEEPING
	struct lb_qspin_pv_ctx pvctx;
	lb_qspin_pv_t *qspin_pv = (lb_qspin_pv_t *)s->lock[MIXED_QSPIN_PV];
	lb_qrwlock_t *qrw = (lb_qrwlock_t *)s->lock[MIXED_QRW];
	lb_mutex_t *mutex = (lb_mutex_t *)s->lock[MIXED_MUTEX];
	lb_rtmutex_t *rtmutex = (lb_rtmutex_t *)s->lock[MIXED_RTMUTEX];
	lb_futex_pi_t *futex_pi = (lb_futex_pi_t *)s->lock[MIXED_FUTEX_PI];
	lb_mutex_ctx_t mctx;
	struct lb_rtmutex_task rctx;
	uint32_t tid = lb_gettid();

	lb_mutex_ctx_init(&mctx);
	lb_rtmutex_ctx_init(&rctx, 0);
	(void)lb_qspin_pv_ctx_init(&pvctx, (struct lb_qspin_pv_slot *)s->lock[MIXED_QSPIN_PV_SLOT],
				   index);
#endif
	(void)lb_qspin_ctx_init(&qctx, (struct lb_qspin_slot *)s->lock[MIXED_QSPIN_SLOT], index);

	for (unsigned int i = 0; i < iters; i++) {
		lb_tas_lock(tas);
		s->count[MIXED_TAS]++;
		lb_tas_unlock(tas);

		/* FIFO spinlocks, oversubscribed: scheduler-paced, so fewer. */
		if (i < iters / 10) {
			lb_ticket_lock(ticket);
			s->count[MIXED_TICKET]++;
			lb_ticket_unlock(ticket);

			lb_qspin_lock(qspin, &qctx);
			s->count[MIXED_QSPIN]++;
			lb_qspin_unlock(qspin);
		}

#if MIXED_SLEEPING
		lb_qspin_pv_lock(qspin_pv, &pvctx);
		s->count[MIXED_QSPIN_PV]++;
		lb_qspin_pv_unlock(qspin_pv);

		if ((i + index) % 4 == 0) {
			lb_qrwlock_write_lock(qrw, &pvctx);
			s->qrw_a++;
			s->qrw_b++;
			s->count[MIXED_QRW]++;
			lb_qrwlock_write_unlock(qrw);
		} else {
			lb_qrwlock_read_lock(qrw, &pvctx);
			unsigned long a = s->qrw_a, b = s->qrw_b;
			lb_qrwlock_read_unlock(qrw);
			if (a != b)
				__atomic_fetch_add(&s->torn_reads, 1, __ATOMIC_RELAXED);
		}

		lb_mutex_lock(mutex, &mctx);
		s->count[MIXED_MUTEX]++;
		lb_mutex_unlock(mutex, &mctx);

		lb_rtmutex_lock(rtmutex, &rctx);
		s->count[MIXED_RTMUTEX]++;
		lb_rtmutex_unlock(rtmutex, &rctx);

		if (lb_futex_pi_lock(futex_pi, tid) == 0) {
#if MIXED_TSAN
			/* ThreadSanitizer cannot see the kernel's PI hand-over
			 * (FUTEX_UNLOCK_PI gives the lock to a waiter with no
			 * userspace release), so it would report this counter as
			 * a race; under TSan only, count atomically. */
			__atomic_fetch_add(&s->count[MIXED_FUTEX_PI], 1, __ATOMIC_RELAXED);
#else
			s->count[MIXED_FUTEX_PI]++;
#endif
			(void)lb_futex_pi_unlock(futex_pi, tid);
		}
#endif
	}
}

/*
 * Every static initializer equals what lb_X_init (defaults) leaves: the
 * first lock whose bytes differ, or NULL.  The init'd copy starts as junk.
 */
#define MIXED_SAME_AS_INIT(type, initializer, init_call)                       \
	do {                                                                   \
		static type fixed = initializer;                               \
		static type dyn;                                               \
		memset((void *)&dyn, 0xa5, sizeof(dyn));                       \
		init_call;                                                     \
		if (memcmp((void *)&fixed, (void *)&dyn, sizeof(dyn)) != 0)    \
			return #initializer;                                   \
	} while (0)

const char *MIXED_FN(MIXED_VARIANT, _initializer_mismatch)(void)
{
	MIXED_SAME_AS_INIT(lb_tas_t, LB_TAS_INITIALIZER, lb_tas_init(&dyn));
	MIXED_SAME_AS_INIT(lb_ticket_t, LB_TICKET_INITIALIZER, lb_ticket_init(&dyn));
	MIXED_SAME_AS_INIT(lb_qspin_t, LB_QSPIN_INITIALIZER, lb_qspin_init(&dyn));
#if MIXED_SLEEPING
	MIXED_SAME_AS_INIT(lb_qspin_pv_t, LB_QSPIN_PV_INITIALIZER, lb_qspin_pv_init(&dyn));
	MIXED_SAME_AS_INIT(lb_qrwlock_t, LB_QRWLOCK_INITIALIZER, lb_qrwlock_init(&dyn));
	MIXED_SAME_AS_INIT(lb_rtmutex_t, LB_RTMUTEX_INITIALIZER, lb_rtmutex_init(&dyn, NULL));
	MIXED_SAME_AS_INIT(lb_futex_pi_t, LB_FUTEX_PI_INITIALIZER, lb_futex_pi_init(&dyn));
#endif
	return NULL;
}
