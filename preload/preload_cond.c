/* SPDX-License-Identifier: MIT */
/*
 * preload_cond.c - condition variables for the mutexes we took over.
 *
 * glibc's pthread_cond_wait unlocks and re-locks the mutex with its own
 * internal calls, which never reach our wrappers: it cannot be used with a
 * mutex we took over.  So a wait on such a mutex uses a futex word of our
 * own, kept in a side table keyed by the pthread_cond_t's address (the
 * cond's 48 bytes stay glibc's, for waiters on glibc-owned mutexes):
 *
 *   wait(c, m):  e = entry(c)
 *                e->waiters += 1                  (seq_cst)
 *                s = e->seq                       (seq_cst)
 *                release our lock on m
 *                futex_wait(&e->seq, s, deadline) (returns at once if seq != s)
 *                e->waiters -= 1
 *                re-take our lock on m
 *   signal(c):   e->seq += 1 (seq_cst); if e->waiters: futex_wake(1)
 *                then glibc's signal (see lbp_cond_flag_glibc)
 *   broadcast:   the same, waking all
 *
 * No lost wake-up: the waiter reads seq while it still holds m.  A signal
 * the waiter must not miss is one sent after the waiter released m (the
 * signaller changed the predicate under m afterwards, or at least after the
 * waiter checked it under m).  Such a signal increments seq after the
 * waiter's read, so the waiter's futex_wait either finds seq != s and
 * returns at once, or is already queued on the futex and is woken.  The
 * signaller sees waiters > 0: the waiter's increment precedes its unlock of
 * m, and the signaller's predicate change follows its own lock of m.  Two
 * signals may wake one waiter twice or wake a later arrival; POSIX allows
 * such spurious wake-ups (callers loop on their predicate).
 *
 * The table is open addressing with linear probing; an entry's key is set
 * once by CAS and never removed (a cond re-created at the same address
 * reuses it).  When a cond finds no free entry within LBP_COND_PROBE
 * slots it uses one shared overflow entry, which signal and broadcast
 * always poke and wake in full: still correct, only less selective.
 *
 * Timed waits: the cond's clock (pthread_condattr_setclock) is recorded by
 * our pthread_cond_init wrapper from the attribute; a static cond uses
 * CLOCK_REALTIME, as in glibc.  Cancellation: see lbp_cond_sleep; a
 * cancelled waiter passes on a wake it may have consumed (lbp_cond_cancelled).
 */
#include "preload.h"
#include "preload_glibc_probes.h"
#include "lb_atomic.h"
#include "lb_futex.h"

#include <errno.h>
#include <limits.h>
#include <sys/mman.h>

struct lbp_cond {
	_Atomic uintptr_t key;     /* the pthread_cond_t's address; 0 = free */
	_Atomic uint32_t seq;      /* the futex word */
	_Atomic uint32_t waiters;
	_Atomic int clock;         /* CLOCK_REALTIME or CLOCK_MONOTONIC */
	_Atomic uint32_t glibc;    /* a wait on a glibc-owned mutex happened */
	uint32_t pad[2];
};

#define LBP_COND_BITS 18
#define LBP_COND_SLOTS (1u << LBP_COND_BITS)
#define LBP_COND_PROBE 64

static struct lbp_cond *lbp_conds;
static struct lbp_cond lbp_cond_overflow;

int lbp_cond_setup(void)
{
	void *p = mmap(NULL, sizeof(struct lbp_cond) * LBP_COND_SLOTS, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return errno;
	lbp_conds = p;
	return 0;
}

static struct lbp_cond *lbp_cond_entry(const pthread_cond_t *c, bool create)
{
	uintptr_t key = (uintptr_t)c;
	uint64_t h = ((uint64_t)key >> 3) * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> (64 - LBP_COND_BITS));
	for (unsigned int probe = 0; probe < LBP_COND_PROBE; probe++) {
		struct lbp_cond *e = &lbp_conds[(i + probe) & (LBP_COND_SLOTS - 1)];
		uintptr_t k = atomic_load_explicit(&e->key, memory_order_acquire);
		if (k == key)
			return e;
		if (k == 0) {
			if (!create)
				return NULL;
			if (atomic_compare_exchange_strong_explicit(&e->key, &k, key,
								    memory_order_acq_rel,
								    memory_order_acquire) ||
			    k == key)
				return e;
		}
	}
	return create ? &lbp_cond_overflow : NULL;
}

/* Wake our waiters; true when glibc's signal must run too. */
static bool lbp_cond_wake(const pthread_cond_t *c, bool all)
{
	if (!lbp_conds)
		return lbp_real_ready(); /* start-up not run: nobody waited on ours */
	bool glibc = false;
	struct lbp_cond *e = lbp_cond_entry(c, false);
	if (e) {
		atomic_fetch_add_explicit(&e->seq, 1, memory_order_seq_cst);
		if (atomic_load_explicit(&e->waiters, memory_order_seq_cst))
			lb_futex_wake(&e->seq, all ? INT_MAX : 1);
		glibc = atomic_load_explicit(&e->glibc, memory_order_seq_cst);
	}
	e = &lbp_cond_overflow;
	if (atomic_load_explicit(&e->waiters, memory_order_seq_cst)) {
		/* Shared by several conds: wake everyone, each re-checks. */
		atomic_fetch_add_explicit(&e->seq, 1, memory_order_seq_cst);
		lb_futex_wake(&e->seq, INT_MAX);
	}
	return glibc || atomic_load_explicit(&e->glibc, memory_order_seq_cst) || lbp_real_ready();
}

/*
 * A wait on a glibc-owned mutex goes to glibc's cond_wait; flag the cond
 * first (before glibc releases the mutex) so signal and broadcast call
 * glibc's too.  Once glibc's entry points are resolved (our constructor
 * did it) signal always calls glibc's as well (cheap when nobody waits
 * there, and right for process-shared conds signalled from a process
 * that never waited on them).  Before that, only flagged conds do: a
 * thread started before our constructor must not call dlvsym, which would
 * wait for the loader lock held by the thread running the constructors.
 */
static void lbp_cond_flag_glibc(pthread_cond_t *c)
{
	lbp_ensure_init();
	struct lbp_cond *e = lbp_cond_entry(c, true);
	atomic_store_explicit(&e->glibc, 1, memory_order_seq_cst);
}

/*
 * Cancellation: pthread_cond_wait is a cancellation point, and a thread
 * cancelled there runs its cleanup handlers with the mutex held again.
 * The futex wait runs with asynchronous cancellation enabled (it is one
 * system call, nothing else runs in that window), under a cleanup handler
 * of ours that leaves the waiter count and re-takes our lock first.
 */
struct lbp_wait_cleanup {
	struct lbp_cond *e;
	struct lbp_lock *l;
};

/*
 * A cancelled waiter must not consume a signal meant for another waiter
 * (POSIX, pthread_cond_wait).  The cancel may hit before or after a
 * signal's FUTEX_WAKE picked this thread, and we cannot tell which, so the
 * wake is passed on: if others still wait, wake one of them.  At worst that
 * is one spurious wake-up (allowed; callers loop on their predicate).  A
 * signal that incremented seq before another waiter queued makes that
 * waiter's FUTEX_WAIT return at once (seq changed), so the only waiters
 * that need waking are the ones already asleep, which our wake reaches.
 * seq_cst on the decrement and the load: the same order every waiter count
 * update has with the signaller's seq increment.
 */
static void lbp_cond_cancelled(void *arg)
{
	struct lbp_wait_cleanup *cu = arg;
	struct lbp_cond *e = cu->e;
	if (atomic_fetch_sub_explicit(&e->waiters, 1, memory_order_seq_cst) > 1)
		lb_futex_wake(&e->seq, e == &lbp_cond_overflow ? INT_MAX : 1);
	lbp_acquire(cu->l);
}

static long lbp_cond_sleep(struct lbp_cond *e, struct lbp_lock *l, uint32_t seq, int op,
			   const struct timespec *abstime, int *err)
{
	struct lbp_wait_cleanup cu = { e, l };
	long r;
	int oldtype;
	pthread_cleanup_push(lbp_cond_cancelled, &cu);
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &oldtype);
	r = lb_futex(&e->seq, op, seq, abstime, NULL, FUTEX_BITSET_MATCH_ANY);
	*err = errno;
	pthread_setcanceltype(oldtype, NULL);
	pthread_cleanup_pop(0);
	return r;
}

static int lbp_cond_wait_ours(pthread_cond_t *c, struct lbp_lock *l, clockid_t clock,
			      const struct timespec *abstime)
{
	if (abstime && (abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000L))
		return EINVAL;
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	struct lbp_cond *e = lbp_cond_entry(c, true);
	if (e == &lbp_cond_overflow)
		atomic_fetch_add_explicit(&lbp_global.cond_overflow, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&lbp_global.cond_waits, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->waiters, 1, memory_order_seq_cst);
	uint32_t seq = atomic_load_explicit(&e->seq, memory_order_seq_cst);
	lbp_release(l);
	int ret = 0;
	if (abstime && abstime->tv_sec < 0) {
		ret = ETIMEDOUT;
	} else {
		int op = FUTEX_WAIT_BITSET_PRIVATE | (clock == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0);
		int err = 0;
		long r = lbp_cond_sleep(e, l, seq, op, abstime, &err);
		/* EAGAIN (seq moved), EINTR: a (possibly spurious) wake-up. */
		if (r < 0 && err == ETIMEDOUT)
			ret = ETIMEDOUT;
	}
	atomic_fetch_sub_explicit(&e->waiters, 1, memory_order_relaxed);
	lbp_acquire(l);
	return ret;
}

static struct lbp_lock *lbp_cond_mutex(pthread_mutex_t *m)
{
	struct lbp_lock *l = lbp_mutex_lookup(m);
	if (!l && !lbp_in_core)
		atomic_fetch_add_explicit(&lbp_global.cond_waits_passed, 1, memory_order_relaxed);
	return l;
}

LBP_EXPORT int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr)
{
	/* No attribute: the documented static initialiser is equivalent, and
	 * needs no dlvsym (see lbp_cond_flag_glibc). */
	static const pthread_cond_t initial = PTHREAD_COND_INITIALIZER;
	int err = 0;
	if (!lbp_in_core)
		LBP_GLIBC_PROBE2(cond_init, c, attr);
	if (attr)
		err = lbp_real_slow()->cond_init(c, attr);
	else
		*c = initial;
	if (err || lbp_in_core)
		return err;
	lbp_ensure_init();
	clockid_t clock = CLOCK_REALTIME;
	if (attr && pthread_condattr_getclock(attr, &clock))
		clock = CLOCK_REALTIME;
	struct lbp_cond *e = lbp_cond_entry(c, clock != CLOCK_REALTIME);
	if (e && e != &lbp_cond_overflow)
		atomic_store_explicit(&e->clock, (int)clock, memory_order_relaxed);
	return 0;
}

/*
 * Forget the clock: a cond created later at this address by the static
 * initialiser must use CLOCK_REALTIME.  glibc's destroy only waits for its
 * own waiters; before glibc's entry points are resolved a cond nobody
 * waited on at glibc needs no call (and no dlvsym, see above).
 */
LBP_EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
	bool glibc = lbp_real_ready();
	if (!lbp_in_core)
		LBP_GLIBC_PROBE1(cond_destroy, c);
	if (lbp_conds) {
		struct lbp_cond *e = lbp_cond_entry(c, false);
		if (e) {
			atomic_store_explicit(&e->clock, CLOCK_REALTIME, memory_order_relaxed);
			glibc |= atomic_load_explicit(&e->glibc, memory_order_seq_cst);
		}
	}
	return glibc ? lbp_real_slow()->cond_destroy(c) : 0;
}

static clockid_t lbp_cond_clock(const pthread_cond_t *c)
{
	struct lbp_cond *e = lbp_cond_entry(c, false);
	return e ? atomic_load_explicit(&e->clock, memory_order_relaxed) : CLOCK_REALTIME;
}

LBP_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	if (!lbp_in_core)
		LBP_GLIBC_PROBE2(cond_wait, c, m);
	struct lbp_lock *l = lbp_cond_mutex(m);
	if (l)
		return lbp_cond_wait_ours(c, l, CLOCK_REALTIME, NULL);
	lbp_cond_flag_glibc(c);
	return lbp_real_slow()->cond_wait(c, m);
}

LBP_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				      const struct timespec *abstime)
{
	if (!lbp_in_core)
		LBP_GLIBC_PROBE2(cond_wait, c, m);
	struct lbp_lock *l = lbp_cond_mutex(m);
	if (l)
		return lbp_cond_wait_ours(c, l, lbp_cond_clock(c), abstime);
	lbp_cond_flag_glibc(c);
	return lbp_real_slow()->cond_timedwait(c, m, abstime);
}

LBP_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
				      const struct timespec *abstime)
{
	if (!lbp_in_core)
		LBP_GLIBC_PROBE2(cond_wait, c, m);
	struct lbp_lock *l = lbp_cond_mutex(m);
	if (l)
		return lbp_cond_wait_ours(c, l, clock, abstime);
	lbp_cond_flag_glibc(c);
	return lbp_real_slow()->cond_clockwait(c, m, clock, abstime);
}

LBP_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	if (!lbp_in_core)
		LBP_GLIBC_PROBE1(cond_signal, c);
	return lbp_cond_wake(c, false) ? lbp_real_slow()->cond_signal(c) : 0;
}

LBP_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	if (!lbp_in_core)
		LBP_GLIBC_PROBE1(cond_broadcast, c);
	return lbp_cond_wake(c, true) ? lbp_real_slow()->cond_broadcast(c) : 0;
}
