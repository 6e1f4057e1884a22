/* SPDX-License-Identifier: MIT */
/*
 * test_qspin_events.c - the kernel's lock-event counts (lock_pending,
 * lock_slowpath, lock_use_node2..4, lock_no_node; the pv_* set) that
 * qspinlock.h and qspinlock_pv.h keep when built with LB_LOCK_COUNTERS
 * (issue 38), on scripted schedules: the main thread holds the lock and
 * waits, polling the lock word (or a node), until each contender stands
 * where the scenario wants it - pending, queued, halted, parked - then
 * unlocks.  Nothing is timed; a contender that never gets there within
 * POLL_LIMIT_MS fails the check instead of hanging.
 *
 *   1 thread                  every event 0
 *   pending                   lock_pending 1, lock_slowpath 0
 *   pending + one queued      lock_pending 1, lock_slowpath 1
 *   queued on a nested node   lock_use_node2 1 (node[0].count preset to 1,
 *                             as a signal handler inside lock() would)
 *   no node left              lock_no_node 1 (count preset to 4)
 *   pv: head parks            lock_slowpath 1, pv_wait_head >= 1,
 *                             pv_kick_unlock 1
 *   pv: a waiter halts        pv_wait_node >= 1, pv_kick_handover 1
 *   vtable                    the kernel's names, in lock_events_list.h's
 *                             order, and the notes for the absent ones
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lb_lock_events.h"
#include "lb_registry.h"
#include "tap.h"

#include <lockbench/qspinlock.h>
#include <lockbench/qspinlock_pv.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define POLL_LIMIT_MS 5000

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };
	nanosleep(&ts, NULL);
}

/* Poll *word (relaxed: a snapshot, no synchronisation) until
 * (value & mask) == want, sleeping between looks; false on timeout. */
static bool wait_word(_Atomic(uint32_t) *word, uint32_t mask, uint32_t want)
{
	for (long waited = 0; waited < POLL_LIMIT_MS * 10L; waited++) {
		if ((atomic_load_explicit(word, memory_order_relaxed) & mask) == want)
			return true;
		sleep_us(100);
	}
	return false;
}

/* ---- native qspinlock ---------------------------------------------------- */

static struct lb_qspin_slot q_slots[4];

struct q_arg {
	lb_qspin_t *lock;
	struct lb_qspin_events *ev;
	uint32_t index;
	uint32_t preset_count; /* node[0].count before lock(): nesting depth */
};

static void *q_contender(void *p)
{
	struct q_arg *a = p;
	struct lb_qspin_ctx ctx;
	lb_qspin_ctx_init(&ctx, q_slots, a->index);
	/* As if a signal handler ran inside an outer lb_qspin_lock() of this
	 * thread: its node[0].count says how many nodes that one holds. */
	atomic_store_explicit(&q_slots[a->index].node[0].count, a->preset_count,
			      memory_order_relaxed);
	lb_qspin_lock_ev(a->lock, &ctx, a->ev);
	lb_qspin_unlock(a->lock);
	return NULL;
}

static uint64_t ld(const _Atomic(uint64_t) *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

/*
 * Main holds; B becomes the pending waiter; C (if with_c, with its node
 * count preset) queues behind it.  Then main unlocks and both finish.
 */
static void q_scenario(const char *what, bool with_c, uint32_t c_preset,
		       struct lb_qspin_events *ev)
{
	lb_qspin_t lock;
	struct lb_qspin_ctx me;
	lb_qspin_init(&lock);
	lb_qspin_events_init(ev);
	lb_qspin_ctx_init(&me, q_slots, 0);
	lb_qspin_lock_ev(&lock, &me, ev);

	struct q_arg b = { &lock, ev, 1, 0 }, c = { &lock, ev, 2, c_preset };
	pthread_t tb, tc;
	pthread_create(&tb, NULL, q_contender, &b);
	tap_ok(wait_word(&lock.val, LB_QSPIN_PENDING_MASK, LB_QSPIN_PENDING),
	       "%s: the second thread is the pending waiter", what);
	if (with_c) {
		pthread_create(&tc, NULL, q_contender, &c);
		/* Queued with a node: its tail is in the word.  Without a node
		 * it only polls trylock, so there is nothing to wait for. */
		if (c_preset < LB_QSPIN_NESTING)
			tap_ok(wait_word(&lock.val, LB_QSPIN_TAIL_MASK,
					 lb_qspin__encode_tail(2, c_preset)),
			       "%s: the third thread queued on node %u", what, c_preset + 1);
		else
			sleep_us(20000);
	}
	lb_qspin_unlock(&lock);
	pthread_join(tb, NULL);
	if (with_c)
		pthread_join(tc, NULL);
}

static void q_tests(void)
{
	struct lb_qspin_events ev;
	lb_qspin_t lock;
	struct lb_qspin_ctx me;

	lb_qspin_init(&lock);
	lb_qspin_events_init(&ev);
	lb_qspin_ctx_init(&me, q_slots, 0);
	for (int i = 0; i < 1000; i++) {
		lb_qspin_lock_ev(&lock, &me, &ev);
		lb_qspin_unlock(&lock);
	}
	tap_ok(ld(&ev.lock_pending) == 0 && ld(&ev.lock_slowpath) == 0 &&
		       ld(&ev.lock_no_node) == 0 && ld(&ev.lock_use_node[0]) == 0,
	       "1 thread, 1000 acquisitions: lock_pending %llu, lock_slowpath %llu (both 0)",
	       (unsigned long long)ld(&ev.lock_pending), (unsigned long long)ld(&ev.lock_slowpath));

	q_scenario("pending", false, 0, &ev);
	tap_ok(ld(&ev.lock_pending) == 1 && ld(&ev.lock_slowpath) == 0,
	       "pending: lock_pending %llu (1), lock_slowpath %llu (0)",
	       (unsigned long long)ld(&ev.lock_pending), (unsigned long long)ld(&ev.lock_slowpath));

	q_scenario("queued", true, 0, &ev);
	tap_ok(ld(&ev.lock_pending) == 1 && ld(&ev.lock_slowpath) == 1 &&
		       ld(&ev.lock_use_node[0]) == 0,
	       "queued: lock_pending %llu (1), lock_slowpath %llu (1), lock_use_node2 %llu (0)",
	       (unsigned long long)ld(&ev.lock_pending), (unsigned long long)ld(&ev.lock_slowpath),
	       (unsigned long long)ld(&ev.lock_use_node[0]));

	q_scenario("nested", true, 1, &ev);
	tap_ok(ld(&ev.lock_slowpath) == 1 && ld(&ev.lock_use_node[0]) == 1 &&
		       ld(&ev.lock_use_node[1]) == 0,
	       "nested: lock_slowpath %llu (1), lock_use_node2 %llu (1), lock_use_node3 %llu (0)",
	       (unsigned long long)ld(&ev.lock_slowpath),
	       (unsigned long long)ld(&ev.lock_use_node[0]),
	       (unsigned long long)ld(&ev.lock_use_node[1]));

	q_scenario("no node", true, LB_QSPIN_NESTING, &ev);
	tap_ok(ld(&ev.lock_slowpath) == 1 && ld(&ev.lock_no_node) == 1,
	       "no node left: lock_slowpath %llu (1), lock_no_node %llu (1)",
	       (unsigned long long)ld(&ev.lock_slowpath), (unsigned long long)ld(&ev.lock_no_node));
}

/* ---- qspinlock-pv --------------------------------------------------------- */

static struct lb_qspin_pv_slot pv_slots[4];

struct pv_arg {
	lb_qspin_pv_t *lock;
	struct lb_qspin_pv_events *ev;
	uint32_t index;
};

static void *pv_contender(void *p)
{
	struct pv_arg *a = p;
	struct lb_qspin_pv_ctx ctx;
	lb_qspin_pv_ctx_init(&ctx, pv_slots, a->index);
	lb_qspin_pv_lock_ev(a->lock, &ctx, a->ev);
	lb_qspin_pv_unlock_ev(a->lock, a->ev);
	return NULL;
}

static void pv_tests(void)
{
	struct lb_qspin_pv_events ev;
	lb_qspin_pv_t lock;
	struct lb_qspin_pv_ctx me;

	lb_qspin_pv_init(&lock);
	lb_qspin_pv_events_init(&ev);
	lb_qspin_pv_ctx_init(&me, pv_slots, 0);
	for (int i = 0; i < 1000; i++) {
		lb_qspin_pv_lock_ev(&lock, &me, &ev);
		lb_qspin_pv_unlock_ev(&lock, &ev);
	}
	tap_ok(ld(&ev.lock_slowpath) == 0 && ld(&ev.pv_wait_head) == 0 &&
		       ld(&ev.pv_kick_unlock) == 0 && ld(&ev.pv_lock_stealing) == 0,
	       "pv, 1 thread: lock_slowpath %llu, pv_wait_head %llu, pv_kick_unlock %llu (all 0)",
	       (unsigned long long)ld(&ev.lock_slowpath), (unsigned long long)ld(&ev.pv_wait_head),
	       (unsigned long long)ld(&ev.pv_kick_unlock));

	/* Main holds; B queues, becomes the head, spins out its budget and
	 * parks on the word (SLOW); C queues behind B and halts on its node. */
	lb_qspin_pv_events_init(&ev);
	lb_qspin_pv_lock_ev(&lock, &me, &ev);
	struct pv_arg b = { &lock, &ev, 1 }, c = { &lock, &ev, 2 };
	pthread_t tb, tc;
	pthread_create(&tb, NULL, pv_contender, &b);
	tap_ok(wait_word(&lock.val, LB_QSPIN_PV_LOCKED_MASK, LB_QSPIN_PV_SLOW),
	       "pv: the queue head parked on the word");
	pthread_create(&tc, NULL, pv_contender, &c);
	tap_ok(wait_word(&pv_slots[2].node.state, ~0u, LB_QSPIN_PV_HALTED),
	       "pv: the second waiter halted on its node");
	lb_qspin_pv_unlock_ev(&lock, &ev);
	pthread_join(tb, NULL);
	pthread_join(tc, NULL);
	tap_ok(ld(&ev.lock_slowpath) == 2 && ld(&ev.lock_pending) == 0 &&
		       ld(&ev.pv_lock_stealing) == 0,
	       "pv: lock_slowpath %llu (2), lock_pending %llu (0), pv_lock_stealing %llu (0)",
	       (unsigned long long)ld(&ev.lock_slowpath), (unsigned long long)ld(&ev.lock_pending),
	       (unsigned long long)ld(&ev.pv_lock_stealing));
	tap_ok(ld(&ev.pv_wait_head) >= 1 && ld(&ev.pv_kick_unlock) >= 1,
	       "pv: pv_wait_head %llu (>= 1), pv_kick_unlock %llu (>= 1)",
	       (unsigned long long)ld(&ev.pv_wait_head), (unsigned long long)ld(&ev.pv_kick_unlock));
	tap_ok(ld(&ev.pv_wait_node) >= 1 && ld(&ev.pv_kick_handover) == 1,
	       "pv: pv_wait_node %llu (>= 1), pv_kick_handover %llu (1)",
	       (unsigned long long)ld(&ev.pv_wait_node),
	       (unsigned long long)ld(&ev.pv_kick_handover));
	tap_diag("pv: pv_kick_wake %llu, pv_spurious_wakeup %llu, pv_wait_again %llu",
		 (unsigned long long)ld(&ev.pv_kick_wake),
		 (unsigned long long)ld(&ev.pv_spurious_wakeup),
		 (unsigned long long)ld(&ev.pv_wait_again));
}

/* ---- through the vtable --------------------------------------------------- */

static void vtable_tests(void)
{
	static const char *const native[] = { "lock_pending",   "lock_slowpath",
					      "lock_use_node2", "lock_use_node3",
					      "lock_use_node4", "lock_no_node" };
	static const char *const pv[] = {
		"pv_hash_hops",  "pv_kick_unlock", "pv_kick_wake",   "pv_latency_kick",
		"pv_latency_wake", "pv_lock_stealing", "pv_spurious_wakeup", "pv_wait_again",
		"pv_wait_early", "pv_wait_head",   "pv_wait_node",   "lock_pending",
		"lock_slowpath", "lock_use_node2", "lock_use_node3", "lock_use_node4",
		"lock_no_node",  "pv_kick_handover",
	};
	struct {
		const char *lock;
		const char *const *names;
		size_t n;
	} want[] = { { "qspinlock", native, 6 }, { "qspinlock-pv", pv, 18 } };

	for (size_t w = 0; w < 2; w++) {
		const struct lb_lock_ops *ops = lb_lock_find(want[w].lock);
		if (!tap_ok(ops && ops->counters, "%s has counters", want[w].lock))
			continue;
		void *lock = lb_lock_alloc(ops);
		void *ctx = lb_thread_ctx_alloc(ops);
		ops->init(lock);
		ops->thread_init(ctx, 0);
		for (int i = 0; i < 100; i++) {
			ops->lock(lock, ctx);
			ops->unlock(lock, ctx);
		}
		struct lb_counter cs[LB_MAX_COUNTERS];
		size_t n = ops->counters(lock, cs, LB_MAX_COUNTERS);
		bool names = n == want[w].n, zero = true;
		for (size_t i = 0; i < n && i < want[w].n; i++) {
			names &= !strcmp(cs[i].name, want[w].names[i]);
			zero &= cs[i].value == 0;
		}
		tap_ok(names, "%s: %zu counters with the kernel's names in its order", want[w].lock,
		       n);
		tap_ok(zero, "%s: 1 thread, 100 acquisitions through the vtable: every event 0",
		       want[w].lock);
		if (ops->thread_fini)
			ops->thread_fini(ctx);
		lb_thread_ctx_free(ctx);
		lb_lock_free(lock);
	}
	tap_ok(lb_lock_events_scope("qspinlock-pv") && !lb_lock_events_scope("mutex") &&
		       lb_lock_event_note("qspinlock-pv", "pv_hash_hops") &&
		       lb_lock_event_note("qspinlock-pv", "pv_wait_early") &&
		       !lb_lock_event_note("qspinlock-pv", "pv_wait_head"),
	       "notes: scope for the qspinlocks only, pv_hash_hops and pv_wait_early say why 0");
}

int main(void)
{
	if (!LB_QSPIN_COUNTING || !LB_QSPIN_PV_COUNTING) {
		tap_skip_all("built with -Dlock_counters=false: no lock events are counted");
		return 0;
	}
	tap_plan(24);
	q_tests();
	pv_tests();
	vtable_tests();
	return tap_failed ? 1 : 0;
}
