/* SPDX-License-Identifier: MIT */
/*
 * tas.h - test-and-test-and-set spinlock on atomic exchange.
 *
 * SPIN-ONLY: a waiter spins and never sleeps.  Embed it only where the
 * threads that take it never outnumber the CPUs they run on (the kernel
 * runs spinlocks with preemption off; a preempted holder or queued waiter
 * here stalls every spinner).  An ordinary program wants mutex.h; see
 * lockbench's doc/embedding.md, "Spin-only locks need threads <= CPUs".
 *
 * The physical floor for an exclusive lock: acquiring is one atomic exchange
 * on one word, releasing is one release store.  Every other lock in the tree
 * is measured against it; an uncontended queued lock that costs much more
 * than this is paying for something the fast path should not do.
 *
 * Algorithm (Rudolph & Segall 1984, "test-and-test-and-set"):
 *   lock:    exchange(word, 1) with acquire order; if the old value was 0
 *            we own it.  Otherwise spin on plain loads until the word reads
 *            0 and try the exchange again.  Spinning on loads keeps the
 *            cache line shared among waiters instead of bouncing it with a
 *            read-for-ownership per spin iteration.
 *   unlock:  store 0 with release order.
 *   trylock: one relaxed load (do not steal the line from the holder when
 *            it is visibly held), then one exchange.
 *
 * Fairness: none.  Whoever's exchange lands first after the release wins,
 * which favours the thread that just released (its cache still holds the
 * line).  Waiters can starve in principle; use ticket.h or qspinlock.h when
 * arrival order matters.  There is no queue, so a preempted waiter costs
 * nobody anything; a preempted holder stalls everyone (no userspace lock can
 * prevent that: there is no preempt_disable in userspace).
 *
 * Lock word:
 *
 *   | bits 0-31 | meaning                         |
 *   |-----------|---------------------------------|
 *   | 0         | free                            |
 *   | 1         | held (no notion of owner/queue) |
 *
 * Memory-order pairing:
 *
 *   | acquire side                        | pairs with            |
 *   |-------------------------------------|-----------------------|
 *   | exchange (acquire) in lock/trylock  | store (release) in    |
 *   |                                     | the previous unlock   |
 *
 * The spin loads are relaxed: they only decide when to retry the exchange,
 * which is what carries the acquire.
 */
#ifndef LB_TAS_H
#define LB_TAS_H

#include <stdbool.h>
#include <stdint.h>

#include "lb_atomic.h"
#include "lb_cond_load.h"
#include "lb_probe.h"

typedef struct lb_tas {
	_Atomic(uint32_t) locked; /* 0 free, 1 held */
} lb_tas_t;

#define LB_TAS_INITIALIZER { 0 }

static inline void lb_tas_init(lb_tas_t *lock)
{
	atomic_init(&lock->locked, 0);
}

/*
 * Contended path, kept out of line so that the inlined fast path is one
 * exchange and a branch, and so profiles charge spinning to this symbol by
 * name instead of smearing it over every caller.
 */
LB_SLOWPATH void lb_tas_lock_slow(lb_tas_t *lock)
{
	uint32_t locked;

	do {
		/*
		 * Spin loop, test before test-and-set: wait on a shared copy
		 * of the line until the holder's release store (in
		 * lb_tas_unlock) makes it 0; the exchange below then carries
		 * the acquire.
		 */
		lb_cond_load_relaxed(locked, &lock->locked, locked == 0);
	} while (atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire));
}

static inline void lb_tas_lock(lb_tas_t *lock)
{
	/* Acquire pairs with the release store in lb_tas_unlock. */
	if (LB_LIKELY(!atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire)))
		return;
	LB_PROBE_CONTENDED(lock, LB_CONTENTION_SPIN, lb_tas_lock_slow(lock));
}

static inline bool lb_tas_trylock(lb_tas_t *lock)
{
	/* Relaxed peek: a visibly held lock fails without an exclusive RFO. */
	if (atomic_load_explicit(&lock->locked, memory_order_relaxed))
		return false;
	/* Acquire pairs with the release store in lb_tas_unlock. */
	return !atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire);
}

static inline void lb_tas_unlock(lb_tas_t *lock)
{
	/* Release: the critical section is visible to the next acquirer. */
	atomic_store_explicit(&lock->locked, 0, memory_order_release);
}

/* A snapshot for assertions and statistics; not a synchronisation point. */
static inline bool lb_tas_is_locked(const lb_tas_t *lock)
{
	return atomic_load_explicit(&lock->locked, memory_order_relaxed) != 0;
}

#endif /* LB_TAS_H */
