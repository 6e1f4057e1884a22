/* SPDX-License-Identifier: MIT */
/*
 * test_rtmutex_pi.c - deterministic unit tests of rtmutex.h's priority
 * inheritance, with logical priorities only (no RT privileges needed):
 *
 *   1. single thread: fast paths, trylock, self-deadlock -> EDEADLK;
 *   2. a 3-level chain: each new waiter boosts every owner down the chain;
 *      unwinding deboosts each owner as it releases;
 *   3. a blocked waiter's priority change re-sorts the queue and re-boosts
 *      the owner; FIFO among equal priorities; wake order follows the queue;
 *   4. EDEADLK on A->B->A (boost undone afterwards) and on A->B->C->A with
 *      equal priorities (only full detection finds it);
 *   5. the depth cut-off: a small max depth on a 4-owner chain, and the
 *      default 1024 on chains of 1025 (cut) and 1024 (fine) blocked owners;
 *   6. exact counts under contention, through the vtable and with mixed
 *      priorities, nested locks and priority changes through the header;
 *   7. real boosting (when SCHED_FIFO is permitted): the owner's kernel
 *      policy follows its effective priority and is restored.
 *
 * Threads ("actors") run a script: take `hold`, wait for go_block, take
 * `want`, wait for go_release, release both.  The main thread advances them
 * and polls for the expected state (bounded, 5 s per condition).  alarm()
 * kills the whole test if anything hangs.
 */
#include "rtmutex.h"
#include "lb_registry.h"
#include "tap.h"

#include <limits.h>
#include <string.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define POLL_TIMEOUT_NS 5000000000ull

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Poll expr every 100 us for up to 5 s; evaluates to whether it held.
 * (A GNU statement expression: GCC and Clang; test code only.) */
#define WAIT_FOR(expr)                                                         \
	({                                                                     \
		uint64_t wf_end = now_ns() + POLL_TIMEOUT_NS;                  \
		bool wf_ok;                                                    \
		while (!(wf_ok = (expr)) && now_ns() < wf_end)                 \
			usleep(100);                                           \
		wf_ok;                                                         \
	})

/* A one-shot event on a futex word. */
static void event_wait(_Atomic uint32_t *e)
{
	/* Wait loop: until event_set; acquire pairs with its release store. */
	while (atomic_load_explicit(e, memory_order_acquire) == 0)
		lb_futex_wait(e, 0, NULL);
}

static void event_set(_Atomic uint32_t *e)
{
	atomic_store_explicit(e, 1, memory_order_release);
	lb_futex_wake(e, INT_MAX);
}

enum { ST_INIT, ST_HOLDING, ST_GOT, ST_RELEASED, ST_DONE };

struct actor {
	_Alignas(LB_CACHELINE) struct lb_rtmutex_task task;
	pthread_t th;
	unsigned int task_flags;
	unsigned int max_depth; /* 0: default */
	int prio;
	lb_rtmutex_t *hold, *want;
	bool check;
	bool linger; /* after releasing, wait for go_exit */
	int result;
	int order;
	_Atomic uint32_t go_block, go_release, go_exit;
	_Atomic int stage;
};

static _Atomic int order_counter;

static void *actor_main(void *arg)
{
	struct actor *a = arg;
	lb_rtmutex_ctx_init(&a->task, a->task_flags);
	if (a->max_depth)
		lb_rtmutex_task_set_max_depth(&a->task, a->max_depth);
	lb_rtmutex_task_setprio(&a->task, a->prio);
	if (a->hold)
		lb_rtmutex_lock(a->hold, &a->task);
	atomic_store_explicit(&a->stage, ST_HOLDING, memory_order_release);
	event_wait(&a->go_block);
	if (a->want) {
		if (a->check)
			a->result = lb_rtmutex_lock_check(a->want, &a->task);
		else
			lb_rtmutex_lock(a->want, &a->task);
		if (a->result == 0)
			a->order = atomic_fetch_add_explicit(&order_counter, 1, memory_order_relaxed);
	}
	atomic_store_explicit(&a->stage, ST_GOT, memory_order_release);
	event_wait(&a->go_release);
	if (a->want && a->result == 0)
		lb_rtmutex_unlock(a->want, &a->task);
	if (a->hold)
		lb_rtmutex_unlock(a->hold, &a->task);
	atomic_store_explicit(&a->stage, ST_RELEASED, memory_order_release);
	if (a->linger)
		event_wait(&a->go_exit);
	if (a->task_flags & LB_RTMUTEX_TASK_REAL)
		lb_rtmutex_task_setprio(&a->task, 0); /* leave SCHED_FIFO before exiting */
	atomic_store_explicit(&a->stage, ST_DONE, memory_order_release);
	return NULL;
}

static pthread_attr_t small_stack;

static int stage(struct actor *a)
{
	return atomic_load_explicit(&a->stage, memory_order_acquire);
}

/* Zeroed, cache-line aligned actors (the task record is _Alignas). */
static struct actor *actors_alloc(size_t n)
{
	struct actor *a = aligned_alloc(_Alignof(struct actor), n * sizeof(*a));
	if (!a)
		abort();
	memset(a, 0, n * sizeof(*a));
	return a;
}

static void actor_start(struct actor *a, int prio, lb_rtmutex_t *hold, lb_rtmutex_t *want)
{
	a->prio = prio;
	a->hold = hold;
	a->want = want;
	if (pthread_create(&a->th, &small_stack, actor_main, a) != 0) {
		perror("pthread_create");
		exit(1);
	}
	/* Our `hold` locks are always free: the actor reaches HOLDING at
	 * once.  Waiting here keeps the main thread off its task record
	 * until the actor has initialised it. */
	WAIT_FOR(stage(a) >= ST_HOLDING);
}

static int eff(struct actor *a)
{
	return lb_rtmutex_task_eff_prio(&a->task);
}

static void actor_join(struct actor *a)
{
	pthread_join(a->th, NULL);
}

/* ---- 1. single thread ---------------------------------------------------- */

static void test_single(void)
{
	static lb_rtmutex_t m = LB_RTMUTEX_INITIALIZER;
	static struct lb_rtmutex_task t;
	lb_rtmutex_ctx_init(&t, 0);
	tap_ok(lb_rtmutex_task_eff_prio(&t) == 0 && lb_rtmutex_task_base_prio(&t) == 0,
	       "single: a SCHED_OTHER thread starts at logical priority 0");
	lb_rtmutex_lock(&m, &t);
	tap_ok(lb_load_relaxed(&m.owner) == (uintptr_t)&t,
	       "single: fast lock stores the task pointer, no waiters bit");
	tap_ok(!lb_rtmutex_trylock(&m, &t), "single: trylock of a held lock fails");
	tap_ok(lb_rtmutex_lock_check(&m, &t) == EDEADLK, "single: lock_check on own lock -> EDEADLK");
	tap_ok(lb_load_relaxed(&m.owner) == (uintptr_t)&t && m.head == NULL,
	       "single: after EDEADLK the lock is still ours, no waiter, bit clear");
	lb_rtmutex_unlock(&m, &t);
	tap_ok(!lb_rtmutex_is_locked(&m), "single: unlock frees it");
	tap_ok(lb_rtmutex_trylock(&m, &t) && lb_rtmutex_owner(&m) == &t, "single: trylock on a free lock");
	lb_rtmutex_unlock(&m, &t);
	tap_ok(lb_rtmutex_task_setprio(&t, 100) == EINVAL && lb_rtmutex_task_setprio(&t, -1) == EINVAL,
	       "single: priorities outside 0..99 are rejected");
#if LB_LOCK_COUNTERS
	tap_ok(atomic_load(&m.st.fast) == 2 && atomic_load(&m.st.slow) == 0,
	       "single: counters: 2 fast, 0 slow acquisitions (got %llu, %llu)",
	       (unsigned long long)atomic_load(&m.st.fast), (unsigned long long)atomic_load(&m.st.slow));
#endif
}

/* ---- 2. chain boost and deboost ------------------------------------------ */

static void test_chain(void)
{
	lb_rtmutex_t l[3];
	struct actor *a = actors_alloc(4);
	for (int i = 0; i < 3; i++)
		lb_rtmutex_init(&l[i], NULL);
	/* a0 (1) holds L0; a1 (2) holds L1, wants L0; a2 (3) holds L2, wants
	 * L1; a3 (40) wants L2. */
	actor_start(&a[0], 1, &l[0], NULL);
	actor_start(&a[1], 2, &l[1], &l[0]);
	actor_start(&a[2], 3, &l[2], &l[1]);
	actor_start(&a[3], 40, NULL, &l[2]);
	bool ok = true;
	for (int i = 0; i < 4; i++)
		ok &= WAIT_FOR(stage(&a[i]) == ST_HOLDING);
	tap_ok(ok, "chain: four actors hold their locks");

	event_set(&a[1].go_block);
	ok = WAIT_FOR(lb_rtmutex_task_blocked_on(&a[1].task) == &l[0] && eff(&a[0]) == 2);
	tap_ok(ok, "chain: a1 (2) blocks on L0 -> owner a0 boosted 1 -> 2 (eff %d)", eff(&a[0]));

	event_set(&a[2].go_block);
	ok = WAIT_FOR(lb_rtmutex_task_blocked_on(&a[2].task) == &l[1] && eff(&a[1]) == 3 &&
		      eff(&a[0]) == 3);
	tap_ok(ok, "chain: a2 (3) blocks on L1 -> a1 and, through L0, a0 boosted to 3 (%d, %d)",
	       eff(&a[1]), eff(&a[0]));

	event_set(&a[3].go_block);
	ok = WAIT_FOR(lb_rtmutex_task_blocked_on(&a[3].task) == &l[2] && eff(&a[2]) == 40 &&
		      eff(&a[1]) == 40 && eff(&a[0]) == 40);
	tap_ok(ok, "chain: a3 (40) blocks on L2 -> 3-level walk boosts a2, a1, a0 to 40 (%d %d %d)",
	       eff(&a[2]), eff(&a[1]), eff(&a[0]));
	tap_ok(lb_rtmutex_task_base_prio(&a[0].task) == 1 && lb_rtmutex_task_base_prio(&a[2].task) == 3,
	       "chain: base priorities are unchanged by boosting");

	/* Unwind from the bottom. */
	event_set(&a[0].go_block);
	event_set(&a[0].go_release);
	ok = WAIT_FOR(stage(&a[0]) == ST_DONE && stage(&a[1]) == ST_GOT);
	tap_ok(ok && eff(&a[0]) == 1 && eff(&a[1]) == 40 && lb_rtmutex_task_pi_empty(&a[0].task),
	       "chain: a0 releases L0 -> a0 deboosted to 1 (%d); a1 takes L0, still 40 via L1 (%d)",
	       eff(&a[0]), eff(&a[1]));
	event_set(&a[1].go_release);
	ok = WAIT_FOR(stage(&a[1]) == ST_DONE && stage(&a[2]) == ST_GOT);
	tap_ok(ok && eff(&a[1]) == 2 && eff(&a[2]) == 40,
	       "chain: a1 releases -> deboosted to 2 (%d); a2 takes L1, still 40 (%d)", eff(&a[1]),
	       eff(&a[2]));
	event_set(&a[2].go_release);
	ok = WAIT_FOR(stage(&a[2]) == ST_DONE && stage(&a[3]) == ST_GOT);
	tap_ok(ok && eff(&a[2]) == 3 && eff(&a[3]) == 40,
	       "chain: a2 releases -> deboosted to 3 (%d); a3 takes L2 (%d)", eff(&a[2]), eff(&a[3]));
	event_set(&a[3].go_release);
	for (int i = 0; i < 4; i++)
		actor_join(&a[i]);
	ok = true;
	for (int i = 0; i < 4; i++)
		ok &= lb_rtmutex_task_pi_empty(&a[i].task) && eff(&a[i]) == a[i].prio;
	for (int i = 0; i < 3; i++)
		ok &= lb_load_relaxed(&l[i].owner) == 0 && l[i].head == NULL;
	tap_ok(ok, "chain: all locks free, no waiters, every task back at its base priority");
	free(a);
}

/* ---- 3. priority change re-sorts the queue ------------------------------- */

static bool queue_is(lb_rtmutex_t *m, struct actor *const *want, size_t n)
{
	struct lb_rtmutex_task *got[8];
	size_t k = lb_rtmutex_waiter_tasks(m, got, 8);
	if (k != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (got[i] != &want[i]->task)
			return false;
	return true;
}

static void test_requeue(void)
{
	lb_rtmutex_t m;
	struct actor *a = actors_alloc(5);
	struct actor *o = &a[0], *w1 = &a[1], *w2 = &a[2], *w3 = &a[3], *w4 = &a[4];
	lb_rtmutex_init(&m, NULL);
	actor_start(o, 0, &m, NULL);
	tap_ok(WAIT_FOR(stage(o) == ST_HOLDING), "requeue: owner holds the lock");
	int prios[] = { 0, 10, 20, 30 };
	for (int i = 1; i <= 3; i++) {
		actor_start(&a[i], prios[i], NULL, &m);
		event_set(&a[i].go_block);
		event_set(&a[i].go_release); /* release as soon as it has the lock */
		WAIT_FOR(lb_rtmutex_task_blocked_on(&a[i].task) == &m);
	}
	bool ok = WAIT_FOR(eff(o) == 30);
	tap_ok(ok && queue_is(&m, (struct actor *[]){ w3, w2, w1 }, 3),
	       "requeue: queue sorted by priority (30, 20, 10), owner boosted to 30 (%d)", eff(o));

	lb_rtmutex_task_setprio(&w1->task, 50);
	tap_ok(queue_is(&m, (struct actor *[]){ w1, w3, w2 }, 3) && eff(o) == 50,
	       "requeue: waiter 10 -> 50 moves to the head, owner boosted to 50 (%d)", eff(o));
	lb_rtmutex_task_setprio(&w1->task, 5);
	tap_ok(queue_is(&m, (struct actor *[]){ w3, w2, w1 }, 3) && eff(o) == 30,
	       "requeue: waiter 50 -> 5 moves to the tail, owner deboosted to 30 (%d)", eff(o));

	actor_start(w4, 20, NULL, &m);
	event_set(&w4->go_block);
	event_set(&w4->go_release);
	WAIT_FOR(lb_rtmutex_task_blocked_on(&w4->task) == &m);
	tap_ok(queue_is(&m, (struct actor *[]){ w3, w2, w4, w1 }, 4),
	       "requeue: a second waiter at 20 queues after the first (FIFO among equals)");
	lb_rtmutex_task_setprio(&w2->task, 20);
	tap_ok(queue_is(&m, (struct actor *[]){ w3, w2, w4, w1 }, 4),
	       "requeue: setting an unchanged priority keeps the position");

	lb_rtmutex_task_setprio(&o->task, 60);
	tap_ok(eff(o) == 60, "requeue: owner's own base 60 above its waiters -> eff 60 (%d)", eff(o));
	lb_rtmutex_task_setprio(&o->task, 0);
	tap_ok(eff(o) == 30, "requeue: owner base back to 0 -> eff is the top waiter's 30 (%d)", eff(o));

	atomic_store(&order_counter, 0);
	event_set(&o->go_block);
	event_set(&o->go_release);
	for (int i = 0; i < 5; i++)
		actor_join(&a[i]);
	tap_ok(w3->order == 0 && w2->order == 1 && w4->order == 2 && w1->order == 3,
	       "requeue: acquisition order follows the queue: 30, 20, 20', 5 (got %d %d %d %d)",
	       w3->order, w2->order, w4->order, w1->order);
	tap_ok(eff(o) == 0 && lb_load_relaxed(&m.owner) == 0, "requeue: owner deboosted to 0, lock free");
	free(a);
}

/* ---- 4. deadlock detection ----------------------------------------------- */

static void test_deadlock(void)
{
	lb_rtmutex_t la, lb, lc;
	struct actor *a = actors_alloc(3);
	lb_rtmutex_init(&la, NULL);
	lb_rtmutex_init(&lb, NULL);
	lb_rtmutex_init(&lc, NULL);

	/* A (10) holds LA and waits for LB; B (20) holds LB and asks for LA. */
	actor_start(&a[0], 10, &la, &lb);
	a[1].check = true;
	actor_start(&a[1], 20, &lb, &la);
	WAIT_FOR(stage(&a[0]) == ST_HOLDING && stage(&a[1]) == ST_HOLDING);
	event_set(&a[0].go_block);
	WAIT_FOR(lb_rtmutex_task_blocked_on(&a[0].task) == &lb);
	event_set(&a[1].go_block);
	bool ok = WAIT_FOR(stage(&a[1]) == ST_GOT);
	tap_ok(ok && a[1].result == EDEADLK, "deadlock: A->B->A: lock_check returns EDEADLK (%d)",
	       a[1].result);
	tap_ok(eff(&a[0]) == 10 && eff(&a[1]) == 20,
	       "deadlock: the boost B gave A is undone (A %d, B %d)", eff(&a[0]), eff(&a[1]));
	tap_ok(lb_load_relaxed(&la.owner) == (uintptr_t)&a[0].task && la.head == NULL,
	       "deadlock: LA still owned by A, no waiter left, waiters bit cleared");
	event_set(&a[1].go_release); /* B releases LB: A gets it */
	event_set(&a[0].go_release);
	actor_join(&a[0]);
	actor_join(&a[1]);
	tap_ok(a[0].result == 0 && !lb_rtmutex_is_locked(&la) && !lb_rtmutex_is_locked(&lb),
	       "deadlock: after B backs off, A gets LB and everything is released");

	/* A->B->C->A at equal priority: nothing to boost, so only full
	 * detection walks the chain. */
	memset(a, 0, 3 * sizeof(*a));
	actor_start(&a[0], 0, &la, &lb);
	actor_start(&a[1], 0, &lb, &lc);
	a[2].check = true;
	actor_start(&a[2], 0, &lc, &la);
	WAIT_FOR(stage(&a[0]) == ST_HOLDING && stage(&a[1]) == ST_HOLDING &&
		 stage(&a[2]) == ST_HOLDING);
	event_set(&a[0].go_block);
	event_set(&a[1].go_block);
	WAIT_FOR(lb_rtmutex_task_blocked_on(&a[0].task) == &lb &&
		 lb_rtmutex_task_blocked_on(&a[1].task) == &lc);
	event_set(&a[2].go_block);
	ok = WAIT_FOR(stage(&a[2]) == ST_GOT);
	tap_ok(ok && a[2].result == EDEADLK,
	       "deadlock: A->B->C->A at equal priorities: lock_check returns EDEADLK (%d)",
	       a[2].result);
	for (int i = 2; i >= 0; i--) {
		event_set(&a[i].go_release);
		actor_join(&a[i]);
	}
	tap_ok(!lb_rtmutex_is_locked(&la) && !lb_rtmutex_is_locked(&lb) && !lb_rtmutex_is_locked(&lc),
	       "deadlock: the cycle unwinds once C backs off");
	free(a);
}

/* ---- 5. depth cut-off ---------------------------------------------------- */

/*
 * Build a chain: c[0] holds l[0]; c[i] holds l[i] and blocks on l[i-1].
 * A walk from a waiter on l[n-1] takes n-1 steps (one per blocked owner).
 */
static bool chain_build(struct actor *c, lb_rtmutex_t *l, int n)
{
	for (int i = 0; i < n; i++) {
		lb_rtmutex_init(&l[i], NULL);
		actor_start(&c[i], 0, &l[i], i ? &l[i - 1] : NULL);
	}
	for (int i = 0; i < n; i++)
		if (!WAIT_FOR(stage(&c[i]) == ST_HOLDING))
			return false;
	for (int i = 1; i < n; i++)
		event_set(&c[i].go_block);
	for (int i = 1; i < n; i++)
		if (!WAIT_FOR(lb_rtmutex_task_blocked_on(&c[i].task) == &l[i - 1]))
			return false;
	return true;
}

static void chain_release(struct actor *c, int n)
{
	event_set(&c[0].go_block);
	for (int i = 0; i < n; i++)
		event_set(&c[i].go_release);
	for (int i = 0; i < n; i++)
		actor_join(&c[i]);
}

static void test_depth(void)
{
	enum { N = 5 };
	struct actor *c = actors_alloc(N + 2);
	lb_rtmutex_t l[N];
	bool ok = chain_build(c, l, N);
	struct actor *t = &c[N], *t2 = &c[N + 1];

	/* 4 blocked owners, max depth 3: cut off; the boosts are undone. */
	t->check = true;
	t->max_depth = 3;
	actor_start(t, 50, NULL, &l[N - 1]);
	event_set(&t->go_block);
	ok &= WAIT_FOR(stage(t) == ST_GOT);
	bool restored = true;
	for (int i = 0; i < N; i++)
		restored &= WAIT_FOR(eff(&c[i]) == 0);
	tap_ok(ok && t->result == EDEADLK && atomic_load(&t->task.depth_hits) >= 1,
	       "depth: 4-owner chain, max depth 3 -> EDEADLK (%d), %llu cut-offs", t->result,
	       (unsigned long long)atomic_load(&t->task.depth_hits));
	tap_ok(restored && l[N - 1].head == NULL,
	       "depth: the partial boosts are undone, the waiter is gone");

	/* Same chain, max depth 4: blocks, boosts all five owners. */
	t2->check = true;
	t2->max_depth = 4;
	actor_start(t2, 50, NULL, &l[N - 1]);
	event_set(&t2->go_block);
	ok = WAIT_FOR(lb_rtmutex_task_blocked_on(&t2->task) == &l[N - 1]);
	for (int i = 0; i < N; i++)
		ok &= WAIT_FOR(eff(&c[i]) == 50);
	tap_ok(ok && atomic_load(&t2->task.walk_steps) == 4,
	       "depth: max depth 4 suffices: 4 walk steps (%llu), all 5 owners boosted to 50",
	       (unsigned long long)atomic_load(&t2->task.walk_steps));
	event_set(&t->go_release);
	event_set(&t2->go_release);
	chain_release(c, N);
	actor_join(t);
	actor_join(t2);
	tap_ok(t2->result == 0, "depth: the chain unwinds and the waiter gets the lock");
	free(c);
}

static void test_depth_default(void)
{
	/* 1026 chain actors: owners c[1..1025] are blocked.  A walk from a
	 * waiter on l[1025] needs 1025 steps (> 1024), from l[1024] 1024. */
	enum { N = LB_RTMUTEX_MAX_DEPTH + 2 };
	struct actor *c = actors_alloc(N + 2);
	lb_rtmutex_t *l = calloc(N, sizeof(*l));
	bool ok = chain_build(c, l, N);
	tap_ok(ok, "depth: built a chain of %d locks, %d blocked owners", N, N - 1);
	struct actor *t = &c[N], *t2 = &c[N + 1];
	t->check = true;
	actor_start(t, 0, NULL, &l[N - 1]);
	event_set(&t->go_block);
	ok = WAIT_FOR(stage(t) == ST_GOT);
	tap_ok(ok && t->result == EDEADLK && atomic_load(&t->task.walk_steps) == LB_RTMUTEX_MAX_DEPTH,
	       "depth: 1025 blocked owners -> EDEADLK at the default 1024 (%d, %llu steps)",
	       t->result, (unsigned long long)atomic_load(&t->task.walk_steps));
	t2->check = true;
	actor_start(t2, 0, NULL, &l[N - 2]);
	event_set(&t2->go_block);
	/* blocked_on is set before the walk runs: wait for the walk too. */
	ok = WAIT_FOR(lb_rtmutex_task_blocked_on(&t2->task) == &l[N - 2] &&
		      atomic_load(&t2->task.walk_steps) >= LB_RTMUTEX_MAX_DEPTH);
	tap_ok(ok && atomic_load(&t2->task.depth_hits) == 0 &&
		       atomic_load(&t2->task.walk_steps) == LB_RTMUTEX_MAX_DEPTH,
	       "depth: 1024 blocked owners -> blocks normally (%llu steps)",
	       (unsigned long long)atomic_load(&t2->task.walk_steps));
	event_set(&t->go_release);
	event_set(&t2->go_release);
	chain_release(c, N);
	actor_join(t);
	actor_join(t2);
	tap_ok(t2->result == 0, "depth: the 1026-thread chain unwinds");
	free(l);
	free(c);
}

/* ---- 6. exact counts ----------------------------------------------------- */

struct count_shared {
	const struct lb_lock_ops *ops;
	void *lock;
	unsigned int iters;
	_Alignas(LB_CACHELINE) _Atomic uint64_t counter;
	_Alignas(LB_CACHELINE) _Atomic uint64_t acquisitions;
	_Alignas(LB_CACHELINE) _Atomic int holders;
	_Atomic uint64_t overlaps;
};

/* Inside the lock: detect a second holder, then a lost-update-prone +1. */
static void count_section(struct count_shared *s)
{
	if (atomic_fetch_add_explicit(&s->holders, 1, memory_order_relaxed) != 0)
		atomic_fetch_add_explicit(&s->overlaps, 1, memory_order_relaxed);
	uint64_t v = atomic_load_explicit(&s->counter, memory_order_relaxed);
	atomic_store_explicit(&s->counter, v + 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&s->holders, 1, memory_order_relaxed);
}

static void *vtable_worker(void *arg)
{
	struct count_shared *s = arg;
	void *tctx = lb_thread_ctx_alloc(s->ops);
	s->ops->thread_init(tctx, 0);
	uint64_t got = 0;
	for (unsigned int i = 0; i < s->iters; i++) {
		if ((i & 7) == 0) {
			if (!s->ops->trylock(s->lock, tctx))
				continue;
		} else {
			s->ops->lock(s->lock, tctx);
		}
		count_section(s);
		got++;
		s->ops->unlock(s->lock, tctx);
	}
	atomic_fetch_add_explicit(&s->acquisitions, got, memory_order_relaxed);
	return tctx; /* freed by the main thread once every worker is done */
}

static void test_count_vtable(const char *name)
{
	enum { T = 4 };
	struct count_shared s = { .ops = lb_lock_find(name), .iters = 100000 };
	pthread_t th[T];
	void *ctxs[T];
	if (!s.ops) {
		tap_ok(false, "count: lock %s is registered", name);
		return;
	}
	s.lock = lb_lock_alloc(s.ops);
	s.ops->init(s.lock);
	for (int i = 0; i < T; i++)
		pthread_create(&th[i], NULL, vtable_worker, &s);
	for (int i = 0; i < T; i++) {
		void *tctx;
		pthread_join(th[i], &tctx);
		ctxs[i] = tctx;
	}
	for (int i = 0; i < T; i++)
		lb_thread_ctx_free(ctxs[i]);
	uint64_t acq = atomic_load(&s.acquisitions), cnt = atomic_load(&s.counter);
	tap_ok(cnt == acq && atomic_load(&s.overlaps) == 0,
	       "count: %s via the vtable, %d threads: counter %llu == acquisitions %llu, overlaps %llu",
	       name, T, (unsigned long long)cnt, (unsigned long long)acq,
	       (unsigned long long)atomic_load(&s.overlaps));
	if (s.ops->counters) {
		struct lb_counter cs[LB_MAX_COUNTERS];
		size_t n = s.ops->counters(s.lock, cs, LB_MAX_COUNTERS);
		uint64_t fast = 0, slow = 0;
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(cs[i].name, "fast"))
				fast = cs[i].value;
			if (!strcmp(cs[i].name, "slow"))
				slow = cs[i].value;
		}
		tap_ok(fast + slow == acq, "count: %s counters: fast %llu + slow %llu == %llu", name,
		       (unsigned long long)fast, (unsigned long long)slow, (unsigned long long)acq);
	}
	if (s.ops->destroy)
		s.ops->destroy(s.lock);
	lb_lock_free(s.lock);
}

/* Header API, mixed logical priorities, two nested locks, priority churn. */
struct mixed_shared {
	lb_rtmutex_t outer, inner;
	unsigned int iters;
	_Alignas(LB_CACHELINE) _Atomic uint64_t counter;
	_Atomic int holders;
	_Atomic uint64_t overlaps;
	struct lb_rtmutex_task *tasks[4];
};

struct mixed_arg {
	struct mixed_shared *s;
	int index;
	_Alignas(LB_CACHELINE) struct lb_rtmutex_task task;
};

static void *mixed_worker(void *arg)
{
	struct mixed_arg *ma = arg;
	struct mixed_shared *s = ma->s;
	unsigned int seed = 12345u + (unsigned int)ma->index;
	lb_rtmutex_ctx_init(&ma->task, ma->index & 1 ? LB_RTMUTEX_TASK_SPIN : 0);
	lb_rtmutex_task_setprio(&ma->task, 10 * ma->index);
	for (unsigned int i = 0; i < s->iters; i++) {
		bool nested = (i % 3) == 0;
		if (nested)
			lb_rtmutex_lock(&s->outer, &ma->task);
		lb_rtmutex_lock(&s->inner, &ma->task);
		if (atomic_fetch_add_explicit(&s->holders, 1, memory_order_relaxed) != 0)
			atomic_fetch_add_explicit(&s->overlaps, 1, memory_order_relaxed);
		uint64_t v = atomic_load_explicit(&s->counter, memory_order_relaxed);
		if ((i & 31) == 0)
			sched_yield(); /* force contention even when CPUs are scarce */
		atomic_store_explicit(&s->counter, v + 1, memory_order_relaxed);
		atomic_fetch_sub_explicit(&s->holders, 1, memory_order_relaxed);
		lb_rtmutex_unlock(&s->inner, &ma->task);
		if (nested)
			lb_rtmutex_unlock(&s->outer, &ma->task);
		if ((i & 255) == 0) {
			seed = seed * 1103515245u + 12345u;
			lb_rtmutex_task_setprio(&ma->task, (int)((seed >> 16) % 100));
		}
	}
	lb_rtmutex_task_setprio(&ma->task, 10 * ma->index);
	return NULL;
}

static void test_count_mixed(void)
{
	enum { T = 4 };
	struct mixed_shared *s = aligned_alloc(LB_CACHELINE, sizeof(*s) + LB_CACHELINE);
	struct mixed_arg *ma = aligned_alloc(LB_CACHELINE, T * sizeof(*ma));
	pthread_t th[T];
	memset(s, 0, sizeof(*s));
	memset(ma, 0, T * sizeof(*ma));
	lb_rtmutex_init(&s->outer, NULL);
	lb_rtmutex_init(&s->inner, NULL);
	s->iters = 50000;
	for (int i = 0; i < T; i++) {
		ma[i].s = s;
		ma[i].index = i;
		pthread_create(&th[i], NULL, mixed_worker, &ma[i]);
	}
	for (int i = 0; i < T; i++)
		pthread_join(th[i], NULL);
	tap_ok(atomic_load(&s->counter) == (uint64_t)T * s->iters && atomic_load(&s->overlaps) == 0,
	       "count: header API, prios 0..99 churning, nested locks: %llu == %llu, overlaps %llu",
	       (unsigned long long)atomic_load(&s->counter), (unsigned long long)T * s->iters,
	       (unsigned long long)atomic_load(&s->overlaps));
	bool idle = lb_load_relaxed(&s->outer.owner) == 0 && lb_load_relaxed(&s->inner.owner) == 0;
	for (int i = 0; i < T; i++)
		idle &= lb_rtmutex_task_pi_empty(&ma[i].task) &&
			lb_rtmutex_task_eff_prio(&ma[i].task) == 10 * i;
	tap_ok(idle, "count: afterwards both locks are free and every task is at its base priority");
#if LB_LOCK_COUNTERS
	lb_rtmutex_t *ls[2] = { &s->outer, &s->inner };
	for (int i = 0; i < 2; i++)
		tap_diag("mixed: %s lock: fast %llu slow %llu steals %llu boosts %llu walk_steps %llu "
			 "spins %llu sleeps %llu",
			 i ? "inner" : "outer", (unsigned long long)atomic_load(&ls[i]->st.fast),
			 (unsigned long long)atomic_load(&ls[i]->st.slow),
			 (unsigned long long)atomic_load(&ls[i]->st.steals),
			 (unsigned long long)atomic_load(&ls[i]->st.boosts),
			 (unsigned long long)atomic_load(&ls[i]->st.walk_steps),
			 (unsigned long long)atomic_load(&ls[i]->st.spins),
			 (unsigned long long)atomic_load(&ls[i]->st.sleeps));
#endif
	free(ma);
	free(s);
}

/* ---- 7. real boosting ---------------------------------------------------- */

static int real_prio_of(pid_t tid)
{
	struct sched_param sp;
	int pol = sched_getscheduler(tid);
	if (pol < 0 || sched_getparam(tid, &sp) != 0)
		return -1;
	pol &= ~SCHED_RESET_ON_FORK;
	return pol == SCHED_FIFO ? sp.sched_priority : pol == SCHED_OTHER ? 0 : -1;
}

static void test_real(void)
{
	if (!lb_rtmutex_real_boost_available()) {
		tap_ok(true, "real: owner policy follows boosts # SKIP SCHED_FIFO not permitted");
		return;
	}
	/* Both threads only sleep while at SCHED_FIFO: nothing can hog a CPU. */
	lb_rtmutex_t m;
	struct actor *a = actors_alloc(2);
	lb_rtmutex_init(&m, NULL);
	a[0].task_flags = a[1].task_flags = LB_RTMUTEX_TASK_REAL;
	a[0].linger = true;
	actor_start(&a[0], 0, &m, NULL);
	WAIT_FOR(stage(&a[0]) == ST_HOLDING);
	actor_start(&a[1], 30, NULL, &m);
	event_set(&a[1].go_block);
	bool ok = WAIT_FOR(real_prio_of(a[0].task.tid) == 30);
	tap_ok(ok && eff(&a[0]) == 30,
	       "real: waiter at 30 -> owner's kernel policy SCHED_FIFO 30 (got %d)",
	       real_prio_of(a[0].task.tid));
	event_set(&a[0].go_block);
	event_set(&a[0].go_release);
	ok = WAIT_FOR(stage(&a[0]) == ST_RELEASED && real_prio_of(a[0].task.tid) == 0);
	int after = real_prio_of(a[0].task.tid);
	event_set(&a[0].go_exit);
	tap_ok(ok && after == 0 && atomic_load(&a[0].task.real_errors) == 0,
	       "real: after unlock the owner is back to SCHED_OTHER (%d), no syscall errors", after);
	event_set(&a[1].go_release);
	actor_join(&a[0]);
	actor_join(&a[1]);
	free(a);
}

int main(void)
{
	alarm(60); /* a hang is a failure, not a stuck CI job */
	pthread_attr_init(&small_stack);
	pthread_attr_setstacksize(&small_stack, 64 * 1024);
	tap_diag("real boosting %s", lb_rtmutex_real_boost_available() ? "available" : "off");

	test_single();
	test_chain();
	test_requeue();
	test_deadlock();
	test_depth();
	test_depth_default();
	test_count_vtable("rtmutex");
	test_count_vtable("futex-pi");
	test_count_mixed();
	test_real();
	return tap_done();
}
