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

/*
 * The object the vtable hands out: the lock word and its lock events (the
 * kernel's names, qspinlock.h "Lock events"), counted when built with
 * LB_LOCK_COUNTERS.  The word stays first, so the object is a lb_qspin_t.
 */
struct qspin_obj {
	lb_qspin_t word;
	struct lb_qspin_events ev;
};

static void qspin_obj_init(struct qspin_obj *o)
{
	lb_qspin_init(&o->word);
	lb_qspin_events_init(&o->ev);
}

static void qspin_obj_lock(struct qspin_obj *o, const lb_qspin_ctx_t *ctx)
{
	lb_qspin_lock_ev(&o->word, ctx, &o->ev);
}

static void qspin_obj_unlock(struct qspin_obj *o)
{
	lb_qspin_unlock(&o->word);
}

static bool qspin_obj_trylock(struct qspin_obj *o)
{
	return lb_qspin_trylock(&o->word);
}

/* The node domain (qspin_slots): the analogue of the kernel's per-CPU qnodes. */
LB_QUEUED_ADAPTERS(qspin, struct lb_qspin_slot, LB_QSPIN_MAX_THREADS, qspin_obj_init,
		   lb_qspin_ctx_init, qspin_obj_lock, qspin_obj_unlock, qspin_obj_trylock)

#if LB_QSPIN_COUNTING
/* The kernel's names, in lock_events_list.h's order (Linux v6.6). */
static size_t qspin_counters(const void *lock, struct lb_counter *out, size_t max)
{
	const struct lb_qspin_events *ev = &((const struct qspin_obj *)lock)->ev;
	const struct lb_counter all[] = {
		{ "lock_pending", atomic_load_explicit(&ev->lock_pending, memory_order_relaxed) },
		{ "lock_slowpath", atomic_load_explicit(&ev->lock_slowpath, memory_order_relaxed) },
		{ "lock_use_node2", atomic_load_explicit(&ev->lock_use_node[0], memory_order_relaxed) },
		{ "lock_use_node3", atomic_load_explicit(&ev->lock_use_node[1], memory_order_relaxed) },
		{ "lock_use_node4", atomic_load_explicit(&ev->lock_use_node[2], memory_order_relaxed) },
		{ "lock_no_node", atomic_load_explicit(&ev->lock_no_node, memory_order_relaxed) },
	};
	return lb_adapt_counters_out(out, max, all, sizeof(all) / sizeof(all[0]));
}
#define QSPIN_COUNTERS_FLAG LB_LOCK_F_COUNTERS
#define QSPIN_COUNTERS_FN qspin_counters
#else
#define QSPIN_COUNTERS_FLAG 0
#define QSPIN_COUNTERS_FN NULL
#endif

static void qspin_describe(const void *lock, char *buf, size_t len)
{
	(void)lock;
	snprintf(buf, len, "%s lock word; pending re-reads for %u ns (%u loops); %d nodes per thread",
		 LB_QSPIN_SUBWORD ? "sub-word (byte/half-word) accesses to the" : "word-only C11 atomics on the",
		 LB_QSPIN_PENDING_NS, lb_spin_loops(LB_QSPIN_PENDING_NS), LB_QSPIN_NESTING);
}

/* The forking thread is not queued: its node is idle. */
static void qspin_atfork_child(void *lock, void *tctx)
{
	(void)tctx;
	lb_qspin_atfork_child(&((struct qspin_obj *)lock)->word);
}

const struct lb_lock_ops lb_qspinlock_ops = {
	.name = "qspinlock",
	.family = "spin",
	.summary = "kernel-style queued spinlock: 32-bit word, pending bit, MCS tail (FIFO queue)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_FAIR |
		 LB_LOCK_F_THREAD_CTX | QSPIN_COUNTERS_FLAG,
	LB_OPS_CTX_LOCK(struct qspin_obj, lb_qspin_ctx_t, qspin),
	.counters = QSPIN_COUNTERS_FN,
	.describe = qspin_describe,
	.atfork_child = qspin_atfork_child,
};
