/* SPDX-License-Identifier: MIT */
/*
 * preload_thread.c - one record per thread that touches a taken-over mutex.
 *
 * Since glibc 2.34 a pthread_create wrapper is not reliably called (libc
 * calls it internally, and threads may exist before we are loaded), so a
 * thread gets its record on its first lock operation: a pool slot holding
 * its dense index and the lock's thread context, found through an
 * initial-exec TLS pointer.  A pthread key's destructor gives both back at
 * thread exit; a lock operation made by a later destructor simply creates
 * a new record, which the next destructor round frees again.
 */
#include "preload.h"
#include "lb_atomic.h"

#include <stdio.h>
#include <string.h>

struct lbp_pool lbp_thread_pool;
LBP_TLS __thread struct lbp_thread *lbp_self_tls;

static pthread_key_t lbp_exit_key;

/* Dense indexes 0..LB_MAX_THREADS-1: one bit each, lowest free first. */
#define LBP_INDEX_WORDS (LB_MAX_THREADS / 64)
static _Atomic uint64_t lbp_index_used[LBP_INDEX_WORDS];

static unsigned int lbp_index_get(void)
{
	for (unsigned int w = 0; w < LBP_INDEX_WORDS; w++) {
		uint64_t cur = atomic_load_explicit(&lbp_index_used[w], memory_order_relaxed);
		while (~cur) {
			unsigned int bit = (unsigned int)__builtin_ctzll(~cur);
			/* Relaxed: the index is just a number; the lock's
			 * thread_init publishes whatever it keys on it. */
			if (atomic_compare_exchange_weak_explicit(&lbp_index_used[w], &cur,
								  cur | (1ull << bit),
								  memory_order_relaxed,
								  memory_order_relaxed))
				return w * 64 + bit;
		}
	}
	lbp_fatal("liblockbench-preload: more than %d threads use locks at once", LB_MAX_THREADS);
}

static void lbp_index_put(unsigned int i)
{
	atomic_fetch_and_explicit(&lbp_index_used[i / 64], ~(1ull << (i % 64)),
				  memory_order_relaxed);
}

static void lbp_thread_free(struct lbp_thread *t)
{
	lbp_in_core++;
	if (lbp_cfg.ops->thread_fini)
		lbp_cfg.ops->thread_fini(lbp_thread_ctx(t));
	lbp_in_core--;
	atomic_fetch_add_explicit(&lbp_global.pass_lock_calls,
				  atomic_load_explicit(&t->pass_lock_calls, memory_order_relaxed),
				  memory_order_relaxed);
	lbp_index_put(t->index);
	atomic_store_explicit(&t->state, LBP_SLOT_FREE, memory_order_release);
	lbp_pool_put(&lbp_thread_pool, t);
}

static void lbp_thread_exit(void *arg)
{
	struct lbp_thread *t = arg;
	if (lbp_self_tls == t)
		lbp_self_tls = NULL;
	lbp_thread_free(t);
}

void lbp_thread_setup(void)
{
	if (pthread_key_create(&lbp_exit_key, lbp_thread_exit))
		lbp_fatal("liblockbench-preload: no pthread key left for thread exit");
}

/*
 * A spin-only lock with more threads taking locks than CPUs: a preempted
 * holder or queued waiter stalls every spinner (doc/embedding.md, "Spin-only
 * locks need threads <= CPUs").  One line on stderr, once per process, the
 * first time a thread gets a dense index past the CPU count; the program
 * goes on (LOCKBENCH_SPIN_ONLY=ok: no line).
 */
static void lbp_spin_only_check(unsigned int index)
{
	static _Atomic bool warned;
	if (!lbp_cfg.spin_only_warn || !lbp_cfg.ncpus || index < lbp_cfg.ncpus)
		return;
	/* Relaxed: only "exactly one thread prints" matters, no data. */
	if (atomic_exchange_explicit(&warned, true, memory_order_relaxed))
		return;
	dprintf(2, "liblockbench-preload: LOCKBENCH_LOCK=%s is spin-only and %u threads now take "
		   "locks on %u CPUs: a preempted holder stalls every spinner (doc/embedding.md); "
		   "use mutex, or LOCKBENCH_SPIN_ONLY=ok to silence this\n",
		lbp_cfg.ops->name, index + 1, lbp_cfg.ncpus);
}

struct lbp_thread *lbp_thread_create(void)
{
	lbp_ensure_init();
	struct lbp_thread *t = lbp_pool_get(&lbp_thread_pool);
	t->index = lbp_index_get();
	lbp_spin_only_check(t->index);
	/* A thread's first lock call lands here, and neither lock nor the
	 * timed locks are cancellation points, but a thread_init may call
	 * one (rtmutex probes SCHED_FIFO with a thread it joins): hold a
	 * pending cancel off until the program reaches a point of its own. */
	int cancel_state;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	lbp_in_core++;
	int err = lbp_cfg.ops->thread_init ? lbp_cfg.ops->thread_init(lbp_thread_ctx(t), t->index)
					   : 0;
	lbp_in_core--;
	pthread_setcancelstate(cancel_state, NULL);
	if (err)
		lbp_fatal("liblockbench-preload: %s: thread_init failed: %s", lbp_cfg.ops->name,
			  strerror(err));
	lbp_thread_sample(t);
	atomic_store_explicit(&t->state, LBP_SLOT_LIVE, memory_order_release);
	lbp_self_tls = t;
	pthread_setspecific(lbp_exit_key, t);
	return t;
}

/*
 * In a fork child only the forking thread lives on: give back every other
 * thread's record and index (they can hold no lock the child may use, as
 * with glibc's own mutexes), and keep ours.
 */
void lbp_thread_after_fork_child(void)
{
	if (lbp_self_tls)
		lbp_thread_sample(lbp_self_tls); /* the child's own thread id */
	size_t n = atomic_load_explicit(&lbp_thread_pool.used, memory_order_acquire);
	for (size_t i = 0; i < n; i++) {
		struct lbp_thread *t = lbp_pool_slot(&lbp_thread_pool, i);
		if (t != lbp_self_tls &&
		    atomic_load_explicit(&t->state, memory_order_acquire) == LBP_SLOT_LIVE) {
			atomic_fetch_add_explicit(&lbp_global.pass_lock_calls,
						  atomic_load_explicit(&t->pass_lock_calls,
								       memory_order_relaxed),
						  memory_order_relaxed);
			lbp_index_put(t->index);
			atomic_store_explicit(&t->state, LBP_SLOT_FREE, memory_order_relaxed);
			lbp_pool_put(&lbp_thread_pool, t);
		}
	}
}
