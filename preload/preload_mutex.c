/* SPDX-License-Identifier: MIT */
/*
 * preload_mutex.c - the pthread_mutex_* wrappers.
 *
 * Which mutexes are ours.  A mutex is taken over when it is a default one:
 * initialised with PTHREAD_MUTEX_INITIALIZER (all zero bytes, the documented
 * static initialiser) or by pthread_mutex_init with no attribute or an
 * attribute that pthread_mutexattr_get* report as NORMAL/DEFAULT type,
 * PRIO_NONE, STALLED (not robust) and PROCESS_PRIVATE.  Every other mutex
 * (recursive, error-checking, adaptive, robust, PI, PP, process-shared, or
 * any other static initialiser) stays glibc's, counted per reason.
 *
 * The mark.  glibc never sees the storage of a mutex we took over, so we
 * keep our state in it: the 64-bit word at offset 16 holds LBP_MARK_TAG in
 * its top 16 bits and the address of our lock (a pool slot, below 2^47) in
 * the rest.  In a glibc-owned mutex that word spans __kind, __spins and
 * __elision; __elision is a small elision retry counter, never 0x4c42, so
 * the tag cannot appear in a mutex glibc owns.  One aligned word means the
 * mark is installed by a single CAS: when several threads meet a static
 * mutex at once, each tries 0 -> mark(own slot); the losers free their slot
 * and use the winner's.  The other 32 bytes of a taken-over mutex stay zero,
 * so "whole mutex zero" reliably means "untouched static initialiser".
 *
 * destroy frees the slot and zeroes the mutex (a later init or static use
 * starts afresh); a mutex freed without destroy keeps its slot (a leak of
 * one slot, as the pool never gives memory back anyway).
 */
#include "preload.h"
#include "lb_atomic.h"

#include "lb_futex.h"
#include "preload_glibc_probes.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <string.h>

struct lbp_pool lbp_lock_pool;

#define LBP_MARK_TAG 0x4c42ull /* "LB" */
#define LBP_MARK_SHIFT 48
#define LBP_MARK_OFFSET 16

_Static_assert(sizeof(pthread_mutex_t) >= LBP_MARK_OFFSET + 8 + 16 &&
		       _Alignof(pthread_mutex_t) >= 8,
	       "pthread_mutex_t too small for the mark");

static inline _Atomic uint64_t *lbp_mark_word(pthread_mutex_t *m)
{
	return (_Atomic uint64_t *)((unsigned char *)m + LBP_MARK_OFFSET);
}

static inline bool lbp_is_mark(uint64_t w)
{
	return (w >> LBP_MARK_SHIFT) == LBP_MARK_TAG;
}

static inline struct lbp_lock *lbp_mark_lock(uint64_t w)
{
	return (struct lbp_lock *)(uintptr_t)(w & ((1ull << LBP_MARK_SHIFT) - 1));
}

/*
 * Every byte outside the mark word zero: an untouched initialiser, or one
 * of ours (whose other bytes stay zero).  The mark word is left out on
 * purpose: another thread's take-over CAS may write it at any moment, and
 * a mutex must not look glibc's just because it was installed between our
 * load of the mark word and this scan (the caller re-reads the mark word).
 */
static bool lbp_mutex_rest_zero(pthread_mutex_t *m)
{
	/* Relaxed loads: a glibc-owned mutex may change under us; any nonzero
	 * word proves it is not an initialiser of ours. */
	_Atomic uint64_t *w = (_Atomic uint64_t *)m;
	for (size_t i = 0; i < sizeof(pthread_mutex_t) / 8; i++)
		if (i != LBP_MARK_OFFSET / 8 && atomic_load_explicit(&w[i], memory_order_relaxed))
			return false;
	return true;
}

/* Every byte zero (the mark word included): PTHREAD_MUTEX_INITIALIZER. */
static bool lbp_mutex_untouched(pthread_mutex_t *m)
{
	return atomic_load_explicit(lbp_mark_word(m), memory_order_relaxed) == 0 &&
	       lbp_mutex_rest_zero(m);
}

static struct lbp_lock *lbp_lock_new(const void *mutex)
{
	static _Atomic uint32_t serial;
	struct lbp_lock *l = lbp_pool_get(&lbp_lock_pool);
	lbp_in_core++;
	int err = lbp_cfg.ops->init(lbp_lock_obj(l));
	lbp_in_core--;
	if (err)
		lbp_fatal("liblockbench-preload: %s: init failed: %s", lbp_cfg.ops->name,
			  strerror(err));
	l->serial = atomic_fetch_add_explicit(&serial, 1, memory_order_relaxed);
	if (lbp_cfg.stats)
		lbp_lockstat_init(l);
	atomic_store_explicit(&l->mutex, mutex, memory_order_relaxed);
	atomic_store_explicit(&l->state, LBP_SLOT_LIVE, memory_order_release);
	return l;
}

static void lbp_lock_retire(struct lbp_lock *l, bool counted)
{
	struct lbp_lock_stats *s = &l->st;
	atomic_fetch_add_explicit(&lbp_global.retired_acq,
				  atomic_load_explicit(&s->acquisitions, memory_order_relaxed),
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&lbp_global.retired_contended,
				  atomic_load_explicit(&s->contended, memory_order_relaxed),
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&lbp_global.retired_wait_ns,
				  atomic_load_explicit(&s->wait_ns, memory_order_relaxed),
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&lbp_global.retired_hold_ns,
				  atomic_load_explicit(&s->hold_ns, memory_order_relaxed),
				  memory_order_relaxed);
	if (counted) {
		atomic_fetch_add_explicit(&lbp_global.destroyed, 1, memory_order_relaxed);
		if (lbp_cfg.stats)
			lbp_stats_retire(l);
	}
	lbp_in_core++;
	if (lbp_cfg.ops->destroy)
		lbp_cfg.ops->destroy(lbp_lock_obj(l));
	lbp_in_core--;
	atomic_store_explicit(&l->state, LBP_SLOT_FREE, memory_order_release);
	lbp_pool_put(&lbp_lock_pool, l);
}

/* First use of an untouched static mutex: install our lock by CAS. */
static __attribute__((noinline)) struct lbp_lock *lbp_mutex_install(pthread_mutex_t *m)
{
	lbp_ensure_init();
	struct lbp_lock *l = lbp_lock_new(m);
	uint64_t expect = 0;
	uint64_t mark = (LBP_MARK_TAG << LBP_MARK_SHIFT) | (uint64_t)(uintptr_t)l;
	if (atomic_compare_exchange_strong_explicit(lbp_mark_word(m), &expect, mark,
						    memory_order_acq_rel, memory_order_acquire)) {
		atomic_fetch_add_explicit(&lbp_global.taken_over, 1, memory_order_relaxed);
		return l;
	}
	lbp_lock_retire(l, false); /* another thread installed first */
	return lbp_is_mark(expect) ? lbp_mark_lock(expect) : NULL;
}

struct lbp_lock *lbp_mutex_lookup(pthread_mutex_t *m)
{
	/* Acquire: pairs with the CAS that published the slot's init. */
	uint64_t w = atomic_load_explicit(lbp_mark_word(m), memory_order_acquire);
	if (LB_LIKELY(lbp_is_mark(w)))
		return lbp_mark_lock(w);
	/* Our own code (lbp_in_core) never installs: the pthread-* locks'
	 * internal mutexes must stay glibc's.  A marked mutex is ours even
	 * then, so glibc never sees one. */
	if (lbp_in_core || w != 0 || !lbp_mutex_rest_zero(m))
		return NULL;
	/* The mark word was 0 when we loaded it; it may hold another thread's
	 * mark by now.  The install CAS settles it either way: it installs
	 * ours, or fails and returns the winner's (never NULL for a mark, so
	 * a mutex being taken over is never handed to glibc). */
	return lbp_mutex_install(m);
}

/* Owner only: one relaxed load + store, no locked instruction. */
static inline void lbp_bump32(_Atomic uint32_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static inline void lbp_note_acquired(struct lbp_lock *l, const struct lbp_contention *c,
				     uint64_t wait_ns, uint64_t now, const void *site,
				     struct lbp_thread *self)
{
	/* We hold the lock: plain read-modify-write through relaxed atomics
	 * (only the statistics reader at exit races with us). */
	struct lbp_lock_stats *s = &l->st;
	if (LB_UNLIKELY(!atomic_load_explicit(&s->site, memory_order_relaxed)) && site)
		atomic_store_explicit(&s->site, site, memory_order_relaxed);
	if (c)
		lbp_bump32(&lbp_lock_hist(l)->wait[lbp_hist_bucket(wait_ns)]);
	atomic_store_explicit(&s->acquisitions,
			      atomic_load_explicit(&s->acquisitions, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	if (c) {
		atomic_store_explicit(&s->contended,
				      atomic_load_explicit(&s->contended, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		atomic_store_explicit(&s->wait_ns,
				      atomic_load_explicit(&s->wait_ns, memory_order_relaxed) +
					      wait_ns,
				      memory_order_relaxed);
		if (wait_ns > atomic_load_explicit(&s->max_wait_ns, memory_order_relaxed))
			atomic_store_explicit(&s->max_wait_ns, wait_ns, memory_order_relaxed);
	}
	lbp_lockstat_acquired(l, self, site, c, wait_ns);
	s->hold_start_ns = now;
}

/* Defined with the timed locks below. */
static void lbp_gate_wait(struct lbp_lock *l);
static void lbp_poke_timed(struct lbp_lock *l);

static __attribute__((noinline)) void lbp_acquire_counted(struct lbp_lock *l, const void *site)
{
	struct lbp_thread *self = lbp_self();
	void *ctx = lbp_thread_ctx(self);
	const struct lb_lock_ops *ops = lbp_cfg.ops;
	lbp_in_core++;
	/* Statistics: a trylock first tells contended from uncontended. */
	if (ops->trylock(lbp_lock_obj(l), ctx)) {
		lbp_in_core--;
		lbp_note_acquired(l, NULL, 0, lbp_now_ns(), site, self);
		return;
	}
	struct lbp_contention c;
	uint64_t t0 = lbp_now_ns();
	lbp_lockstat_wait_begin(l, self, &c, t0);
	if (LB_UNLIKELY(lbp_cfg.timed_poll &&
			atomic_load_explicit(&l->gate, memory_order_relaxed)))
		lbp_gate_wait(l);
	ops->lock(lbp_lock_obj(l), ctx);
	lbp_in_core--;
	lbp_lockstat_wait_end(self);
	uint64_t t1 = lbp_now_ns();
	lbp_note_acquired(l, &c, t1 - t0, t1, site, self);
}

/* Take l through the lock, nothing counted. */
static inline void lbp_acquire_plain(struct lbp_lock *l)
{
	void *ctx = lbp_thread_ctx(lbp_self());
	/* Relaxed: the gate is a courtesy to a starving timed waiter, not
	 * part of mutual exclusion; a late look only delays its turn. */
	if (LB_UNLIKELY(lbp_cfg.timed_poll &&
			atomic_load_explicit(&l->gate, memory_order_relaxed)))
		lbp_gate_wait(l);
	lbp_in_core++;
	lbp_cfg.ops->lock(lbp_lock_obj(l), ctx);
	lbp_in_core--;
}

/* Statistics and/or LOCKBENCH_DELAY: out of line, so the plain path keeps
 * one test and does not carry `site` across the lock call. */
static __attribute__((noinline)) void lbp_acquire_slow(struct lbp_lock *l, const void *site)
{
	if (lbp_cfg.stats)
		lbp_acquire_counted(l, site);
	else
		lbp_acquire_plain(l);
	if (lbp_cfg.ndelay)
		lbp_delay_apply(l, site);
}

void lbp_acquire_at(struct lbp_lock *l, const void *site)
{
	LBP_GLIBC_PROBE1(mutex_entry, atomic_load_explicit(&l->mutex, memory_order_relaxed));
	if (LB_UNLIKELY(lbp_cfg.acquire_slow))
		lbp_acquire_slow(l, site);
	else
		lbp_acquire_plain(l);
	LBP_GLIBC_PROBE1(mutex_acquired, atomic_load_explicit(&l->mutex, memory_order_relaxed));
}

static __attribute__((noinline)) void lbp_note_released(struct lbp_lock *l)
{
	struct lbp_lock_stats *s = &l->st;
	uint64_t held = lbp_now_ns() - s->hold_start_ns;
	lbp_bump32(&lbp_lock_hist(l)->hold[lbp_hist_bucket(held)]);
	atomic_store_explicit(&s->hold_ns,
			      atomic_load_explicit(&s->hold_ns, memory_order_relaxed) + held,
			      memory_order_relaxed);
	if (held > atomic_load_explicit(&s->max_hold_ns, memory_order_relaxed))
		atomic_store_explicit(&s->max_hold_ns, held, memory_order_relaxed);
	lbp_lockstat_released(l, held);
}

void lbp_release(struct lbp_lock *l)
{
	/* Read before the unlock: afterwards another thread may destroy it. */
	const void *m = atomic_load_explicit(&l->mutex, memory_order_relaxed);
	if (LB_UNLIKELY(lbp_cfg.stats))
		lbp_note_released(l);
	void *ctx = lbp_thread_ctx(lbp_self());
	lbp_in_core++;
	lbp_cfg.ops->unlock(lbp_lock_obj(l), ctx);
	lbp_in_core--;
	if (LB_UNLIKELY(lbp_cfg.timed_poll &&
			atomic_load_explicit(&l->timed_waiters, memory_order_relaxed)))
		lbp_poke_timed(l);
	LBP_GLIBC_PROBE1(mutex_release, m);
}

static bool lbp_try(struct lbp_lock *l, const void *site)
{
	void *ctx = lbp_thread_ctx(lbp_self());
	lbp_in_core++;
	bool got = lbp_cfg.ops->trylock(lbp_lock_obj(l), ctx);
	lbp_in_core--;
	if (lbp_cfg.stats) {
		if (got) {
			lbp_note_acquired(l, NULL, 0, lbp_now_ns(), site, lbp_self());
		} else {
			struct lbp_lock_stats *s = &l->st;
			atomic_fetch_add_explicit(&s->trylock_failed, 1, memory_order_relaxed);
		}
	}
	if (got && LB_UNLIKELY(lbp_cfg.ndelay))
		lbp_delay_apply(l, site);
	return got;
}

static void lbp_count_pass(void)
{
	struct lbp_thread *t = lbp_self_tls;
	if (t)
		atomic_store_explicit(&t->pass_lock_calls,
				      atomic_load_explicit(&t->pass_lock_calls,
							   memory_order_relaxed) + 1,
				      memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&lbp_global.pass_lock_calls, 1, memory_order_relaxed);
}

/*
 * Drop our slot if the mutex carries a mark (re-init, destroy).  The slot
 * is given back only if it really belongs to this mutex: a mutex may be
 * initialised over stale bytes, or be a struct copy of one of ours.
 */
static void lbp_unmark(pthread_mutex_t *m)
{
	uint64_t w = atomic_load_explicit(lbp_mark_word(m), memory_order_acquire);
	if (!lbp_is_mark(w))
		return;
	atomic_store_explicit(lbp_mark_word(m), 0, memory_order_relaxed);
	struct lbp_lock *l = lbp_mark_lock(w);
	unsigned char *base = lbp_lock_pool.base;
	size_t used = atomic_load_explicit(&lbp_lock_pool.used, memory_order_acquire);
	if ((unsigned char *)l < base || (unsigned char *)l >= base + used * lbp_lock_pool.slot_size ||
	    ((unsigned char *)l - base) % lbp_lock_pool.slot_size)
		return;
	if (atomic_load_explicit(&l->state, memory_order_acquire) == LBP_SLOT_LIVE &&
	    atomic_load_explicit(&l->mutex, memory_order_relaxed) == (const void *)m)
		lbp_lock_retire(l, true);
}

/* Should a mutex with this attribute be ours?  Counts the reason when not. */
static bool lbp_attr_takeover(const pthread_mutexattr_t *attr)
{
	if (!attr)
		return true;
	int type, proto, robust, pshared;
	if (pthread_mutexattr_gettype(attr, &type) || pthread_mutexattr_getprotocol(attr, &proto) ||
	    pthread_mutexattr_getrobust(attr, &robust) ||
	    pthread_mutexattr_getpshared(attr, &pshared)) {
		atomic_fetch_add_explicit(&lbp_global.pass_attr_error, 1, memory_order_relaxed);
		return false;
	}
	_Atomic uint64_t *reason = NULL;
	if (type == PTHREAD_MUTEX_RECURSIVE)
		reason = &lbp_global.pass_recursive;
	else if (type == PTHREAD_MUTEX_ERRORCHECK)
		reason = &lbp_global.pass_errorcheck;
	else if (type != PTHREAD_MUTEX_NORMAL && type != PTHREAD_MUTEX_DEFAULT)
		reason = &lbp_global.pass_adaptive;
	else if (robust != PTHREAD_MUTEX_STALLED)
		reason = &lbp_global.pass_robust;
	else if (proto == PTHREAD_PRIO_INHERIT)
		reason = &lbp_global.pass_pi;
	else if (proto != PTHREAD_PRIO_NONE)
		reason = &lbp_global.pass_pp;
	else if (pshared != PTHREAD_PROCESS_PRIVATE)
		reason = &lbp_global.pass_pshared;
	if (reason)
		atomic_fetch_add_explicit(reason, 1, memory_order_relaxed);
	return !reason;
}

LBP_EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
	if (lbp_in_core)
		return lbp_glibc_mutex_init(m, attr);
	LBP_GLIBC_PROBE1(mutex_init, m);
	lbp_ensure_init();
	lbp_unmark(m);
	if (!lbp_attr_takeover(attr))
		return lbp_glibc_mutex_init(m, attr);
	/* The static initialiser: the slot is made on first use. */
	memset(m, 0, sizeof(*m));
	return 0;
}

LBP_EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
	if (!lbp_in_core)
		LBP_GLIBC_PROBE1(mutex_destroy, m);
	uint64_t w = atomic_load_explicit(lbp_mark_word(m), memory_order_acquire);
	if (lbp_is_mark(w)) {
		/* Held (by anyone): EBUSY, as glibc says for a locked mutex. */
		struct lbp_lock *l = lbp_mark_lock(w);
		void *ctx = lbp_thread_ctx(lbp_self());
		lbp_in_core++;
		bool free_now = lbp_cfg.ops->trylock(lbp_lock_obj(l), ctx);
		if (free_now)
			lbp_cfg.ops->unlock(lbp_lock_obj(l), ctx);
		lbp_in_core--;
		if (!free_now)
			return EBUSY;
		lbp_unmark(m);
		memset(m, 0, sizeof(*m));
		return 0;
	}
	if (w == 0 && lbp_mutex_untouched(m))
		return 0; /* a default mutex never locked: nothing to free */
	return lbp_glibc_mutex_destroy(m);
}

LBP_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	struct lbp_lock *l;
	if (LB_LIKELY((l = lbp_mutex_lookup(m)) != NULL)) {
		lbp_acquire_at(l, __builtin_return_address(0));
		return 0;
	}
	if (lbp_in_core)
		return lbp_glibc_mutex_lock(m);
	lbp_count_pass();
	LBP_GLIBC_PROBE1(mutex_entry, m);
	int ret = lbp_glibc_mutex_lock(m);
	if (ret == 0)
		LBP_GLIBC_PROBE1(mutex_acquired, m);
	return ret;
}

LBP_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	struct lbp_lock *l;
	if (LB_LIKELY((l = lbp_mutex_lookup(m)) != NULL))
		return lbp_try(l, __builtin_return_address(0)) ? 0 : EBUSY;
	if (!lbp_in_core)
		lbp_count_pass();
	return lbp_glibc_mutex_trylock(m);
}

LBP_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	/* Relaxed is enough: this thread saw the mark when it locked. */
	uint64_t w = atomic_load_explicit(lbp_mark_word(m), memory_order_relaxed);
	if (LB_LIKELY(lbp_is_mark(w))) {
		lbp_release(lbp_mark_lock(w));
		return 0;
	}
	int ret = lbp_glibc_mutex_unlock(m);
	if (ret == 0 && !lbp_in_core)
		LBP_GLIBC_PROBE1(mutex_release, m);
	return ret;
}

/*
 * Timed locks (pthread_mutex_timedlock/clocklock).  Neither is a
 * cancellation point (POSIX), so nothing here may be one: no nanosleep, no
 * usleep; every wait is a futex system call, which is not.
 *
 * A lock with ops->timedlock waits in its own queue with a deadline, and
 * its turn comes as for lock().  For the others the fallback polls
 * trylock, napping on a futex word of ours (release_seq) between tries:
 * every unlock of a mutex with timed waiters bumps it and wakes them, so a
 * try follows each release.  The bump is read without a fence on the
 * unlock side (no cost for the lock's own unlock path): a wake missed in
 * that race costs one nap (at most LBP_TIMED_NAP_MAX_NS).  Polling alone
 * starves behind a FIFO queue (its trylock rarely finds the lock free), so
 * a timed waiter that has polled for LBP_TIMED_GATE_NS closes the mutex's
 * gate: new lockers wait at it (lbp_gate_wait) until the timed waiter got
 * the lock or gave up, and the ones already queued drain.  The gate is
 * closed at most until the timed waiter's deadline, so no thread waits at
 * it longer than it would wait for that timed waiter's critical section.
 */
#define LBP_TIMED_NAP_MAX_NS 200000L  /* longest nap between two tries */
#define LBP_TIMED_GATE_NS 1000000ull  /* polling this long closes the gate */

static bool lbp_try_quiet(struct lbp_lock *l)
{
	void *ctx = lbp_thread_ctx(lbp_self());
	lbp_in_core++;
	bool got = lbp_cfg.ops->trylock(lbp_lock_obj(l), ctx);
	lbp_in_core--;
	return got;
}

static void lbp_poke_timed(struct lbp_lock *l)
{
	atomic_fetch_add_explicit(&l->release_seq, 1, memory_order_relaxed);
	lb_futex_wake(&l->release_seq, INT_MAX);
}

/* A new locker meets a closed gate: wait (futex, bounded naps) until it
 * opens.  Bounded naps: a missed wake costs one nap, never a hang. */
static void lbp_gate_wait(struct lbp_lock *l)
{
	uint32_t g;
	while ((g = atomic_load_explicit(&l->gate, memory_order_relaxed)) != 0) {
		struct timespec nap = { 0, LBP_TIMED_NAP_MAX_NS };
		lb_futex_wait(&l->gate, g, &nap);
	}
}

static int64_t lbp_left_ns(clockid_t clock, const struct timespec *abstime)
{
	struct timespec now;
	clock_gettime(clock, &now);
	return (int64_t)(abstime->tv_sec - now.tv_sec) * 1000000000 +
	       (abstime->tv_nsec - now.tv_nsec);
}

static int lbp_timed_poll(struct lbp_lock *l, clockid_t clock, const struct timespec *abstime)
{
	int ret = ETIMEDOUT;
	bool gated = false;
	uint64_t start = lbp_now_ns();
	long nap_ns = 2000;
	atomic_fetch_add_explicit(&l->timed_waiters, 1, memory_order_relaxed);
	for (;;) {
		/* Read the sequence before the try: a release after the
		 * failed try changes it, and the nap returns at once. */
		uint32_t seq = atomic_load_explicit(&l->release_seq, memory_order_acquire);
		if (lbp_try_quiet(l)) {
			ret = 0;
			break;
		}
		int64_t left = lbp_left_ns(clock, abstime);
		if (left <= 0)
			break;
		if (!gated && lbp_now_ns() - start >= LBP_TIMED_GATE_NS) {
			atomic_fetch_add_explicit(&l->gate, 1, memory_order_relaxed);
			gated = true;
		}
		struct timespec nap = { 0, left < nap_ns ? (long)left : nap_ns };
		lb_futex_wait(&l->release_seq, seq, &nap);
		if (nap_ns < LBP_TIMED_NAP_MAX_NS)
			nap_ns *= 2;
	}
	atomic_fetch_sub_explicit(&l->timed_waiters, 1, memory_order_relaxed);
	if (gated && atomic_fetch_sub_explicit(&l->gate, 1, memory_order_relaxed) == 1)
		lb_futex_wake(&l->gate, INT_MAX);
	return ret;
}

static int lbp_timed(struct lbp_lock *l, clockid_t clock, const struct timespec *abstime,
		     const void *site)
{
	uint64_t t0 = 0;
	/* POSIX: a lock that can be taken at once is taken whatever abstime
	 * says; it is checked only when the thread would block. */
	if (lbp_try_quiet(l)) {
		if (lbp_cfg.stats)
			lbp_note_acquired(l, NULL, 0, lbp_now_ns(), site, lbp_self());
		if (LB_UNLIKELY(lbp_cfg.ndelay))
			lbp_delay_apply(l, site);
		return 0;
	}
	if (!abstime || abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000L ||
	    (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC))
		return EINVAL;
	struct lbp_contention c;
	if (lbp_cfg.stats) {
		t0 = lbp_now_ns();
		lbp_lockstat_wait_begin(l, lbp_self(), &c, t0);
	}
	int ret;
	if (lbp_cfg.ops->timedlock) {
		void *ctx = lbp_thread_ctx(lbp_self());
		lbp_in_core++;
		ret = lbp_cfg.ops->timedlock(lbp_lock_obj(l), ctx, abstime, clock);
		lbp_in_core--;
	} else {
		ret = lbp_timed_poll(l, clock, abstime);
	}
	if (lbp_cfg.stats) {
		uint64_t t1 = lbp_now_ns();
		lbp_lockstat_wait_end(lbp_self());
		if (ret == 0)
			lbp_note_acquired(l, &c, t1 - t0, t1, site, lbp_self());
		else
			atomic_fetch_add_explicit(&l->st.trylock_failed, 1, memory_order_relaxed);
	}
	if (ret == 0 && LB_UNLIKELY(lbp_cfg.ndelay))
		lbp_delay_apply(l, site);
	return ret;
}

LBP_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	struct lbp_lock *l;
	int ret;
	bool program = !lbp_in_core; /* not our own code: probes and counts */
	if (program)
		LBP_GLIBC_PROBE2(mutex_timedlock_entry, m, abstime);
	if ((l = lbp_mutex_lookup(m)) != NULL) {
		ret = lbp_timed(l, CLOCK_REALTIME, abstime, __builtin_return_address(0));
	} else {
		if (program)
			lbp_count_pass();
		ret = lbp_real_slow()->mutex_timedlock(m, abstime);
	}
	if (ret == 0 && program)
		LBP_GLIBC_PROBE1(mutex_timedlock_acquired, m);
	return ret;
}

LBP_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
				       const struct timespec *abstime)
{
	struct lbp_lock *l;
	if ((l = lbp_mutex_lookup(m)) != NULL)
		return lbp_timed(l, clock, abstime, __builtin_return_address(0));
	if (!lbp_in_core)
		lbp_count_pass();
	return lbp_real_slow()->mutex_clocklock(m, clock, abstime);
}
