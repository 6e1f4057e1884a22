/* SPDX-License-Identifier: MIT */
/*
 * test_rqspinlock.c - behaviour tests of locks/include/lockbench/rqspinlock.h
 * beyond the conformance every lock gets: deadlock detection on scripted
 * schedules, the owner tag and the wait stack, timeouts and the queue's
 * unwinding.
 *
 *   --group detect   AA (task and signal handler), ABBA, a handler on a
 *                    waiter, trylock and out-of-order unlock, 33 nested
 *                    locks (AA still found on each: the kernel's 31-entry
 *                    table would have overflowed), the anonymous owner
 *   --group timeout  timeout accounting (pending waiter, queue head and the
 *                    waiters behind it), ABBCCA (detected: the wait-for
 *                    chain), AA by an anonymous owner (index >= 254:
 *                    the timeout)
 *
 * Every schedule is driven step by step: a thread is known to wait once its
 * wait stack's top entry names the lock (pushed before it spins), so detection
 * on entry is deterministic.  Timings are only checked against the
 * algorithm's own bounds (never give up before the timeout; a hang is a
 * failure), never as a performance figure.  The timeout is compiled at
 * 400 ms here (LB_RQSPIN_TIMEOUT_NS) so that a loaded 2-CPU machine cannot
 * stretch a scripted step past it.
 */
#define LB_RQSPIN_TIMEOUT_NS 400000000u
#include "rqspinlock.h"
#include "tap.h"
#include "test_sync.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

/* Index 300 is an anonymous owner (its tag is LB_RQSPIN_TAG_ANON). */
#define NTHREADS 301
#define ANON_INDEX 300u
#define NLOCKS (LB_RQSPIN_WAITS_MAX + 2)
#define STEP_WAIT_NS (5ull * 1000000000ull) /* a scripted step that takes longer hung */

static struct lb_rqspin_slot slots[NTHREADS];
static struct lb_rqspin_domain domain = LB_RQSPIN_DOMAIN_INITIALIZER(slots, NTHREADS);
static lb_rqspin_t locks[NLOCKS];

/* The calling thread's context, for its signal handler. */
static _Thread_local struct lb_rqspin_ctx *self_ctx;

static void ctx_bind(struct lb_rqspin_ctx *ctx, uint32_t index)
{
	if (!lb_rqspin_ctx_init(ctx, &domain, index))
		abort();
	self_ctx = ctx;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* Sleep-poll until thread `index`'s top table entry is `lock` (it waits for
 * it, or is about to); false after STEP_WAIT_NS. */
static bool wait_until_waiting(uint32_t index, const lb_rqspin_t *lock)
{
	const struct lb_rqspin_waits *h = &slots[index].waits;
	uint64_t deadline = now_ns() + STEP_WAIT_NS;
	struct timespec nap = { 0, 50000 };

	/* Polls a remote table (relaxed reads), sleeping between reads. */
	while (now_ns() < deadline) {
		uint32_t cnt = atomic_load_explicit(&h->cnt, memory_order_relaxed);
		if (cnt && cnt <= LB_RQSPIN_WAITS_MAX &&
		    atomic_load_explicit(&h->locks[cnt - 1], memory_order_relaxed) == lock)
			return true;
		nanosleep(&nap, NULL);
	}
	return false;
}

static bool all_free(size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (lb_rqspin_is_locked(&locks[i]))
			return false;
	return true;
}

/* Thread `index`'s wait stack: its count (relaxed: the thread is done or
 * idle). */
static uint32_t slot_count(uint32_t index)
{
	return atomic_load_explicit(&slots[index].waits.cnt, memory_order_relaxed);
}

/* No entry of thread `index`'s wait stack names a lock any more. */
static bool slot_clean(uint32_t index)
{
	for (uint32_t i = 0; i < LB_RQSPIN_WAITS_MAX; i++)
		if (atomic_load_explicit(&slots[index].waits.locks[i], memory_order_relaxed))
			return false;
	return true;
}

/* Sleep-poll until lock 0's word satisfies (word & mask) == want; false
 * after STEP_WAIT_NS. */
static bool wait_word(uint32_t mask, uint32_t want)
{
	uint64_t deadline = now_ns() + STEP_WAIT_NS;
	struct timespec nap = { 0, 50000 };

	/* Polls the word (relaxed: only a schedule step, nothing to acquire). */
	while (now_ns() < deadline) {
		if ((atomic_load_explicit(&locks[0].word.val, memory_order_relaxed) & mask) == want)
			return true;
		nanosleep(&nap, NULL);
	}
	return false;
}

static void reset_locks(void)
{
	for (size_t i = 0; i < NLOCKS; i++)
		lb_rqspin_init(&locks[i]);
}

/* ---- detection ------------------------------------------------------------ */

static _Atomic int handler_ret;

static void on_sigusr1(int sig)
{
	(void)sig;
	/* An "NMI": retake lock 0 on a thread that holds or awaits it. */
	int ret = lb_rqspin_lock(&locks[0], self_ctx);
	if (ret == 0)
		lb_rqspin_unlock(&locks[0], self_ctx);
	atomic_store_explicit(&handler_ret, ret, memory_order_release);
}

static void test_aa_and_table(void)
{
	struct lb_rqspin_ctx ctx;
	ctx_bind(&ctx, 0);
	reset_locks();

	tap_ok(lb_rqspin_lock(&locks[0], &ctx) == 0 && lb_rqspin_holds(&locks[0], &ctx) &&
	       (atomic_load_explicit(&locks[0].word.val, memory_order_relaxed) &
		LB_QSPIN_LOCKED_MASK) == 1 && lb_rqspin_wait_count(&ctx) == 0,
	       "uncontended lock: 0, the locked byte is our tag (index 0 + 1), no wait recorded");
	uint64_t t0 = now_ns();
	int ret = lb_rqspin_lock(&locks[0], &ctx);
	tap_ok(ret == -EDEADLK, "AA: retaking a held lock returns -EDEADLK (got %d)", ret);
	tap_ok(now_ns() - t0 < LB_RQSPIN_TIMEOUT_NS, "AA: detected on entry, before the timeout");
	tap_ok(lb_rqspin_wait_count(&ctx) == 0 && slot_clean(0) && lb_rqspin_holds(&locks[0], &ctx),
	       "AA: the failed attempt popped its wait and left the held lock as it was");

	tap_ok(!lb_rqspin_trylock(&locks[0], &ctx) && lb_rqspin_holds(&locks[0], &ctx),
	       "trylock of a held lock fails and leaves it ours");
	tap_ok(lb_rqspin_trylock(&locks[1], &ctx) && lb_rqspin_holds(&locks[1], &ctx),
	       "trylock of a free lock takes it in our name");

	/* Out-of-order unlock: lock 0 (the first taken) first. */
	lb_rqspin_unlock(&locks[0], &ctx);
	tap_ok(!lb_rqspin_is_locked(&locks[0]) && lb_rqspin_holds(&locks[1], &ctx),
	       "out-of-order unlock frees that lock and keeps the other ours");
	tap_ok(lb_rqspin_lock(&locks[0], &ctx) == 0,
	       "the unlocked lock is taken again (no stale AA)");
	lb_rqspin_unlock(&locks[0], &ctx);
	lb_rqspin_unlock(&locks[1], &ctx);
	tap_ok(lb_rqspin_wait_count(&ctx) == 0 && all_free(2) &&
	       atomic_load_explicit(&locks[0].word.val, memory_order_relaxed) == 0,
	       "locks free, words all zero, no wait recorded");

	/* A signal handler on the holder: the kernel's NMI on a lock's owner. */
	signal(SIGUSR1, on_sigusr1);
	lb_rqspin_lock(&locks[0], &ctx);
	atomic_store_explicit(&handler_ret, 1, memory_order_relaxed);
	raise(SIGUSR1);
	ret = atomic_load_explicit(&handler_ret, memory_order_acquire);
	tap_ok(ret == -EDEADLK, "a handler retaking the lock its thread holds: -EDEADLK (got %d)",
	       ret);
	tap_ok(lb_rqspin_wait_count(&ctx) == 0, "the handler popped its wait");
	lb_rqspin_unlock(&locks[0], &ctx);
	tap_ok(!lb_rqspin_is_locked(&locks[0]), "the lock is usable after the handler's failure");
}

/* 33 nested locks: past the kernel's 31-entry table, nothing to overflow. */
static void test_deep_nesting(void)
{
	struct lb_rqspin_ctx ctx;
	ctx_bind(&ctx, 0);
	reset_locks();

	bool all = true;
	for (int i = 0; i < NLOCKS; i++)
		all &= lb_rqspin_lock(&locks[i], &ctx) == 0;
	tap_ok(all, "%d nested locks all taken", NLOCKS);
	bool aa = true;
	for (int i = 0; i < NLOCKS; i++)
		aa &= lb_rqspin_lock(&locks[i], &ctx) == -EDEADLK;
	tap_ok(aa, "AA on each of the %d held locks: -EDEADLK (the 32nd and 33rd too)", NLOCKS);
	tap_ok(lb_rqspin_wait_count(&ctx) == 0 && slot_clean(0),
	       "the failed attempts left no wait recorded");
	/* Out of order: from the middle, then the rest. */
	lb_rqspin_unlock(&locks[5], &ctx);
	tap_ok(lb_rqspin_lock(&locks[5], &ctx) == 0, "a lock unlocked from the middle is taken again");
	for (int i = NLOCKS - 1; i >= 0; i--)
		lb_rqspin_unlock(&locks[i], &ctx);
	tap_ok(all_free(NLOCKS), "all unlocked: every lock free");
}

/* An anonymous owner (index >= 254) takes and releases as anyone does. */
static void test_anonymous_owner(void)
{
	struct lb_rqspin_ctx ctx;
	ctx_bind(&ctx, ANON_INDEX);
	reset_locks();
	tap_ok(ctx.tag == LB_RQSPIN_TAG_ANON && lb_rqspin_lock(&locks[0], &ctx) == 0 &&
	       (atomic_load_explicit(&locks[0].word.val, memory_order_relaxed) &
		LB_QSPIN_LOCKED_MASK) == LB_RQSPIN_TAG_ANON && !lb_rqspin_holds(&locks[0], &ctx),
	       "index %u: the locked byte is the anonymous tag, not a name", ANON_INDEX);
	lb_rqspin_unlock(&locks[0], &ctx);
	tap_ok(!lb_rqspin_is_locked(&locks[0]), "the anonymous owner's unlock frees the lock");
}

struct duo {
	_Atomic uint32_t step;
	int ret[2];
	uint64_t fail_ns[2];
};

/* ABBA, thread 1: A then B. */
static void *abba_first(void *arg)
{
	struct duo *d = arg;
	struct lb_rqspin_ctx ctx;
	ctx_bind(&ctx, 1);
	lb_rqspin_lock(&locks[0], &ctx);
	post(&d->step, 1);
	wait_eq(&d->step, 2);
	d->ret[0] = lb_rqspin_lock(&locks[1], &ctx);
	if (d->ret[0] == 0)
		lb_rqspin_unlock(&locks[1], &ctx);
	lb_rqspin_unlock(&locks[0], &ctx);
	return NULL;
}

/* ABBA, thread 2: B, then A once thread 1 waits for B. */
static void *abba_second(void *arg)
{
	struct duo *d = arg;
	struct lb_rqspin_ctx ctx;
	ctx_bind(&ctx, 2);
	wait_eq(&d->step, 1);
	lb_rqspin_lock(&locks[1], &ctx);
	post(&d->step, 2);
	if (!wait_until_waiting(1, &locks[1]))
		abort(); /* thread 1 never got to wait: the script is broken */
	uint64_t t0 = now_ns();
	d->ret[1] = lb_rqspin_lock(&locks[0], &ctx);
	d->fail_ns[1] = now_ns() - t0;
	if (d->ret[1] == 0)
		lb_rqspin_unlock(&locks[0], &ctx);
	lb_rqspin_unlock(&locks[1], &ctx);
	return NULL;
}

static void test_abba(void)
{
	struct duo d = { 0 };
	pthread_t t[2];
	reset_locks();
	pthread_create(&t[0], NULL, abba_first, &d);
	pthread_create(&t[1], NULL, abba_second, &d);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	tap_ok(d.ret[1] == -EDEADLK, "ABBA: the second waiter gets -EDEADLK on entry (got %d)",
	       d.ret[1]);
	tap_ok(d.fail_ns[1] < LB_RQSPIN_TIMEOUT_NS, "ABBA: detected before the timeout (%.1f ms)",
	       (double)d.fail_ns[1] / 1e6);
	tap_ok(d.ret[0] == 0 || d.ret[0] == -EDEADLK,
	       "ABBA: the first waiter gets B once the second backs off, or detects it too (%d)",
	       d.ret[0]);
	tap_ok(all_free(2) && slot_count(1) == 0 && slot_count(2) == 0 && slot_clean(1) &&
	       slot_clean(2), "ABBA: both locks free and both wait stacks empty afterwards");
}

/* A handler on a thread that waits for lock 0 retakes it: AA. */
static void *waiter_with_handler(void *arg)
{
	struct duo *d = arg;
	struct lb_rqspin_ctx ctx;
	ctx_bind(&ctx, 3);
	int ret;
	/* Retry timeouts: only the handler's verdict is under test. */
	while ((ret = lb_rqspin_lock(&locks[0], &ctx)) == -ETIMEDOUT)
		;
	d->ret[0] = ret;
	if (ret == 0)
		lb_rqspin_unlock(&locks[0], &ctx);
	return NULL;
}

static void test_handler_on_waiter(void)
{
	struct duo d = { 0 };
	struct lb_rqspin_ctx ctx;
	pthread_t t;
	ctx_bind(&ctx, 0);
	reset_locks();
	signal(SIGUSR1, on_sigusr1);
	lb_rqspin_lock(&locks[0], &ctx);
	atomic_store_explicit(&handler_ret, 1, memory_order_relaxed);
	pthread_create(&t, NULL, waiter_with_handler, &d);
	bool waiting = wait_until_waiting(3, &locks[0]);
	pthread_kill(t, SIGUSR1);
	uint64_t deadline = now_ns() + STEP_WAIT_NS;
	struct timespec nap = { 0, 50000 };
	/* Sleep-poll for the handler's verdict (bounded). */
	while (atomic_load_explicit(&handler_ret, memory_order_acquire) == 1 && now_ns() < deadline)
		nanosleep(&nap, NULL);
	int hret = atomic_load_explicit(&handler_ret, memory_order_acquire);
	lb_rqspin_unlock(&locks[0], &ctx);
	pthread_join(t, NULL);
	tap_ok(waiting && hret == -EDEADLK,
	       "a handler on a waiter retaking the awaited lock: -EDEADLK (got %d)", hret);
	tap_ok(d.ret[0] == 0, "the interrupted waiter still gets the lock afterwards (got %d)",
	       d.ret[0]);
	tap_ok(all_free(1), "the lock is free at the end");
}

/* ---- timeouts ------------------------------------------------------------- */

struct waiter {
	uint32_t index;
	_Atomic uint32_t *go;
	int ret;
	uint64_t waited_ns;
};

static void *timed_waiter(void *arg)
{
	struct waiter *w = arg;
	struct lb_rqspin_ctx ctx;
	ctx_bind(&ctx, w->index);
	wait_eq(w->go, w->index);
	uint64_t t0 = now_ns();
	w->ret = lb_rqspin_lock(&locks[0], &ctx);
	w->waited_ns = now_ns() - t0;
	if (w->ret == 0)
		lb_rqspin_unlock(&locks[0], &ctx);
	return NULL;
}

/* The holder keeps lock 0 past every timeout: a pending waiter (index 1), the
 * queue head (2) and one waiter behind it (3) all fail, in order. */
static void test_timeouts(void)
{
	struct lb_rqspin_ctx ctx;
	_Atomic uint32_t go = 0;
	struct waiter w[3];
	pthread_t t[3];
	ctx_bind(&ctx, 0);
	reset_locks();
	lb_rqspin_lock(&locks[0], &ctx);
	for (uint32_t i = 0; i < 3; i++) {
		w[i] = (struct waiter){ .index = i + 1, .go = &go };
		pthread_create(&t[i], NULL, timed_waiter, &w[i]);
	}
	/* Arrive one at a time: pending, then head, then behind it (each
	 * role seen in the word before the next waiter starts). */
	bool scripted = true;
	post(&go, 1);
	scripted &= wait_word(LB_QSPIN_PENDING_MASK, LB_QSPIN_PENDING);
	post(&go, 2);
	scripted &= wait_word(LB_QSPIN_TAIL_MASK, lb_qspin__encode_tail(2, 0));
	post(&go, 3);
	scripted &= wait_word(LB_QSPIN_TAIL_MASK, lb_qspin__encode_tail(3, 0));
	for (uint32_t i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	uint32_t word = atomic_load_explicit(&locks[0].word.val, memory_order_relaxed);
	lb_rqspin_unlock(&locks[0], &ctx);

	tap_ok(scripted, "the three waiters arrived in order");
	tap_ok(w[0].ret == -ETIMEDOUT && w[0].waited_ns >= LB_RQSPIN_TIMEOUT_NS,
	       "pending waiter: -ETIMEDOUT after >= the timeout (%d, %.0f ms)", w[0].ret,
	       (double)w[0].waited_ns / 1e6);
	tap_ok(w[1].ret == -ETIMEDOUT && w[1].waited_ns >= 2ull * LB_RQSPIN_TIMEOUT_NS,
	       "queue head: -ETIMEDOUT after >= twice the timeout (%d, %.0f ms)", w[1].ret,
	       (double)w[1].waited_ns / 1e6);
	tap_ok(w[2].ret == -ETIMEDOUT && w[2].waited_ns >= w[1].waited_ns / 2,
	       "waiter behind the head: unwound with -ETIMEDOUT (%d, %.0f ms)", w[2].ret,
	       (double)w[2].waited_ns / 1e6);
	tap_ok(word == LB_QSPIN_LOCKED, "the failed waiters left no pending bit and no tail "
	       "(word 0x%08x)", word);
	tap_ok(!lb_rqspin_is_locked(&locks[0]) && lb_rqspin_lock(&locks[0], &ctx) == 0,
	       "the lock is usable after the timeouts");
	lb_rqspin_unlock(&locks[0], &ctx);
	for (uint32_t i = 0; i <= 3; i++)
		tap_ok(slot_count(i) == 0 && slot_clean(i), "thread %u's table is empty", i);
}

/* ABBCCA: thread i holds lock i and waits for lock (i+1) % 3. */
struct ring {
	_Atomic uint32_t step;
	int ret[3];
};

struct ring_member_arg {
	struct ring *ring;
	uint32_t i;
};

static void *ring_member(void *arg)
{
	struct ring *r = ((struct ring_member_arg *)arg)->ring;
	uint32_t i = ((struct ring_member_arg *)arg)->i;
	struct lb_rqspin_ctx ctx;
	ctx_bind(&ctx, 4 + i);
	lb_rqspin_lock(&locks[i], &ctx);
	/* Everyone holds its first lock before anyone waits. */
	atomic_fetch_add_explicit(&r->step, 1, memory_order_acq_rel);
	lb_futex_wake(&r->step, INT_MAX);
	wait_eq(&r->step, 3);
	/* In order: member i asks once member i - 1 waits (its wait stack
	 * names its second lock), so the last one closes the cycle. */
	if (i > 0 && !wait_until_waiting(4 + i - 1, &locks[i]))
		abort(); /* the previous member never got to wait: the script broke */
	r->ret[i] = lb_rqspin_lock(&locks[(i + 1) % 3], &ctx);
	if (r->ret[i] == 0)
		lb_rqspin_unlock(&locks[(i + 1) % 3], &ctx);
	lb_rqspin_unlock(&locks[i], &ctx);
	return NULL;
}

/* One ABBCCA round: every member's result in ret[], its time in *took. */
static void abbcca_round(struct ring *r, uint64_t *took)
{
	struct ring_member_arg args[3];
	pthread_t t[3];
	reset_locks();
	*r = (struct ring){ 0 };
	for (uint32_t i = 0; i < 3; i++) {
		args[i] = (struct ring_member_arg){ r, i };
		pthread_create(&t[i], NULL, ring_member, &args[i]);
	}
	uint64_t t0 = now_ns();
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	*took = now_ns() - t0;
}

static void test_abbcca(void)
{
	struct ring r;
	uint64_t took = 0;
	int deadlk = 0, timedout = 0, odd = 0, failed = 0;
	/* A member whose deadline (400 ms here) passes before the last one
	 * closes the cycle (a preempted thread on a loaded machine, or
	 * TSan) times out first: no cycle existed.  Up to 3 rounds, until
	 * one where nobody timed out. */
	for (int round = 0; round < 3; round++) {
		abbcca_round(&r, &took);
		deadlk = timedout = odd = failed = 0;
		for (int i = 0; i < 3; i++) {
			failed += r.ret[i] != 0;
			deadlk += r.ret[i] == -EDEADLK;
			timedout += r.ret[i] == -ETIMEDOUT;
			odd += r.ret[i] != 0 && r.ret[i] != -ETIMEDOUT && r.ret[i] != -EDEADLK;
		}
		if (!timedout)
			break;
		tap_diag("ABBCCA round %d: a timeout before the cycle formed (%d, %d, %d); again",
			 round + 1, r.ret[0], r.ret[1], r.ret[2]);
	}
	tap_ok(failed >= 1 && !odd, "ABBCCA: the cycle is broken by failures (%d, %d, %d)",
	       r.ret[0], r.ret[1], r.ret[2]);
	/* The last member closes the cycle and follows the wait-for chain on
	 * entry: EDEADLK, and nobody left to time out. */
	tap_ok(r.ret[2] == -EDEADLK && timedout == 0,
	       "ABBCCA: the member closing the cycle gets EDEADLK, nobody times out (%d, %d, %d)",
	       r.ret[0], r.ret[1], r.ret[2]);
	tap_ok(took < STEP_WAIT_NS, "ABBCCA: every member finished (%.0f ms)", (double)took / 1e6);
	tap_ok(all_free(3), "ABBCCA: all three locks free afterwards");
}

/* AA by an anonymous owner: the word cannot name it, so the timeout. */
static void test_anonymous_timeout(void)
{
	struct lb_rqspin_ctx ctx;
	ctx_bind(&ctx, ANON_INDEX);
	reset_locks();
	lb_rqspin_lock(&locks[0], &ctx);
	uint64_t t0 = now_ns();
	int ret = lb_rqspin_lock(&locks[0], &ctx);
	uint64_t took = now_ns() - t0;
	tap_ok(ret == -ETIMEDOUT && took >= LB_RQSPIN_TIMEOUT_NS,
	       "AA by an anonymous owner: -ETIMEDOUT after the timeout (%d, %.0f ms)", ret,
	       (double)took / 1e6);
	tap_ok(lb_rqspin_wait_count(&ctx) == 0 && slot_clean(ANON_INDEX),
	       "the failed attempt popped its wait");
	lb_rqspin_unlock(&locks[0], &ctx);
	tap_ok(all_free(NLOCKS), "all free");
}

int main(int argc, char **argv)
{
	const char *group = argc == 3 && !strcmp(argv[1], "--group") ? argv[2] : NULL;
	if (!group || (strcmp(group, "detect") && strcmp(group, "timeout"))) {
		fprintf(stderr, "test-rqspinlock: --group: '%s'; accepted: detect, timeout\n",
			group ? group : "");
		return 2;
	}
	if (!strcmp(group, "detect")) {
		test_aa_and_table();
		test_deep_nesting();
		test_anonymous_owner();
		test_abba();
		test_handler_on_waiter();
	} else {
		test_timeouts();
		test_abbcca();
		test_anonymous_timeout();
	}
	return tap_done();
}
