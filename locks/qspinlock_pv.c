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

/*
 * The object the vtable hands out: the lock word and its lock events (the
 * kernel's names, qspinlock_pv.h "Lock events"), counted when built with
 * LB_LOCK_COUNTERS.  The word stays first.
 */
struct qspin_pv_obj {
	lb_qspin_pv_t word;
	struct lb_qspin_pv_events ev;
};

static void qspin_pv_obj_init(struct qspin_pv_obj *o)
{
	lb_qspin_pv_init(&o->word);
	lb_qspin_pv_events_init(&o->ev);
}

static void qspin_pv_obj_lock(struct qspin_pv_obj *o, const lb_qspin_pv_ctx_t *ctx)
{
	lb_qspin_pv_lock_ev(&o->word, ctx, &o->ev);
}

static void qspin_pv_obj_unlock(struct qspin_pv_obj *o)
{
	lb_qspin_pv_unlock_ev(&o->word, &o->ev);
}

static bool qspin_pv_obj_trylock(struct qspin_pv_obj *o)
{
	return lb_qspin_pv_trylock(&o->word);
}

LB_QUEUED_ADAPTERS(qspin_pv, struct lb_qspin_pv_slot, LB_QSPIN_PV_MAX_THREADS, qspin_pv_obj_init,
		   lb_qspin_pv_ctx_init, qspin_pv_obj_lock, qspin_pv_obj_unlock,
		   qspin_pv_obj_trylock)

/* The forking thread is not queued: its node is idle. */
static void qspin_pv_atfork_child(void *lock, void *tctx)
{
	(void)tctx;
	lb_qspin_pv_atfork_child(&((struct qspin_pv_obj *)lock)->word);
}

#if LB_QSPIN_PV_COUNTING
static uint64_t qspin_pv_ld(const _Atomic(uint64_t) *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

/* Sum / count rounded to the nearest, as the kernel's debugfs file reads. */
static uint64_t qspin_pv_avg(uint64_t sum, uint64_t n)
{
	return n ? (sum + n / 2) / n : 0;
}

/*
 * The kernel's names, in lock_events_list.h's order (Linux v6.6), then
 * pv_kick_handover (ours).  pv_latency_kick and pv_latency_wake are averages
 * in ns, over pv_kick_unlock and pv_kick_wake, as the kernel's debugfs
 * files read; the events this port has no place for read 0
 * (lb_lock_event_note says why).
 */
static size_t qspin_pv_counters(const void *lock, struct lb_counter *out, size_t max)
{
	const struct lb_qspin_pv_events *ev = &((const struct qspin_pv_obj *)lock)->ev;
	uint64_t kicks = qspin_pv_ld(&ev->pv_kick_unlock), wakes = qspin_pv_ld(&ev->pv_kick_wake);
	const struct lb_counter all[] = {
		{ "pv_hash_hops", 0 },
		{ "pv_kick_unlock", kicks },
		{ "pv_kick_wake", wakes },
		{ "pv_latency_kick", qspin_pv_avg(qspin_pv_ld(&ev->pv_latency_kick_ns), kicks) },
		{ "pv_latency_wake", qspin_pv_avg(qspin_pv_ld(&ev->pv_latency_wake_ns), wakes) },
		{ "pv_lock_stealing", qspin_pv_ld(&ev->pv_lock_stealing) },
		{ "pv_spurious_wakeup", qspin_pv_ld(&ev->pv_spurious_wakeup) },
		{ "pv_wait_again", qspin_pv_ld(&ev->pv_wait_again) },
		{ "pv_wait_early", 0 },
		{ "pv_wait_head", qspin_pv_ld(&ev->pv_wait_head) },
		{ "pv_wait_node", qspin_pv_ld(&ev->pv_wait_node) },
		{ "lock_pending", qspin_pv_ld(&ev->lock_pending) },
		{ "lock_slowpath", qspin_pv_ld(&ev->lock_slowpath) },
		{ "lock_use_node2", 0 },
		{ "lock_use_node3", 0 },
		{ "lock_use_node4", 0 },
		{ "lock_no_node", 0 },
		{ "pv_kick_handover", qspin_pv_ld(&ev->pv_kick_handover) },
	};
	return lb_adapt_counters_out(out, max, all, sizeof(all) / sizeof(all[0]));
}
#define QSPIN_PV_COUNTERS_FLAG LB_LOCK_F_COUNTERS
#define QSPIN_PV_COUNTERS_FN qspin_pv_counters
#else
#define QSPIN_PV_COUNTERS_FLAG 0
#define QSPIN_PV_COUNTERS_FN NULL
#endif

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
		 LB_LOCK_F_SPIN_ROLE | QSPIN_PV_COUNTERS_FLAG,
	LB_OPS_CTX_LOCK(struct qspin_pv_obj, lb_qspin_pv_ctx_t, qspin_pv),
	.counters = QSPIN_PV_COUNTERS_FN,
	.describe = qspin_pv_describe,
	.atfork_child = qspin_pv_atfork_child,
};
