/* SPDX-License-Identifier: MIT */
/*
 * ticket.h - ticket spinlock: FIFO by construction, two counters.
 *
 * SPIN-ONLY: a waiter spins and never sleeps.  Embed it only where the
 * threads that take it never outnumber the CPUs they run on (the kernel
 * runs spinlocks with preemption off; a preempted holder or queued waiter
 * here stalls every spinner).  An ordinary program wants mutex.h; see
 * lockbench's doc/embedding.md, "Spin-only locks need threads <= CPUs".
 *
 * Algorithm (Reed & Kanodia 1979 eventcounts/sequencers; Mellor-Crummey &
 * Scott 1991 section 2.2): a thread draws a ticket by atomically incrementing
 * `next`, then waits until `owner` equals its ticket.  Unlock hands the lock
 * to the next ticket by incrementing `owner`.  Tickets are served strictly in
 * the order they were drawn, so the lock is fair (FIFO) and starvation-free,
 * and a waiter knows its place: (ticket - owner) threads are ahead of it.
 *
 * The price of FIFO: every waiter spins on the same `owner` word (global
 * spinning; each release invalidates every waiter's copy), and the lock is
 * handed to a specific thread even if that thread is not running.  With more
 * threads than CPUs a preempted waiter stalls everyone behind it until the
 * scheduler runs it again (waiter preemption); that is expected and is what
 * the benchmarks measure, not a bug.
 *
 * Port note: the kernel packs next/owner as
 * 16-bit halves of one u32, takes a ticket with a word fetch_add and
 * releases with a 16-bit store into the owner half.  C11 `_Atomic` has no
 * sub-word access to a word, and a word-wide `owner + 1` would carry into
 * `next` on wrap, so this lock uses two separate 32-bit atomics on the same
 * cache line.  Lock is one fetch_add on `next` plus a load of `owner`
 * (uncontended: both on the line the fetch_add just brought in); unlock is a
 * load and a release store to `owner` (only the holder writes it).  Counters
 * wrap at 2^32; only equality and differences are used, so wrap is harmless.
 *
 * Layout (8 bytes, 4-byte aligned, one cache line):
 *
 *   | field | bits | meaning                                       |
 *   |-------|------|-----------------------------------------------|
 *   | next  | 32   | next ticket to hand out (written by lockers)  |
 *   | owner | 32   | ticket being served (written by the holder)   |
 *
 *   free:       next == owner
 *   held:       next - owner >= 1
 *   contended:  next - owner >= 2 (somebody waits)
 *
 * Memory-order pairing:
 *
 *   | acquire side                               | pairs with              |
 *   |--------------------------------------------|-------------------------|
 *   | load(owner, acquire) in lock / lock_slow   | store(owner, release)   |
 *   | load(owner, acquire) in trylock            |   in lb_ticket_unlock   |
 *
 * The fetch_add on `next` is relaxed: it only reserves a place in line; the
 * critical section starts after the acquire load of `owner` that observes
 * our ticket.  trylock's CAS on `next` is acquire as well, so its critical
 * section cannot be hoisted above the point where the lock became ours.
 */
#ifndef LB_TICKET_H
#define LB_TICKET_H

#include <stdbool.h>
#include <stdint.h>

#include "lb_atomic.h"
#include "lb_cond_load.h"
#include "lb_probe.h"

typedef struct lb_ticket {
	_Atomic(uint32_t) next;  /* next ticket to draw */
	_Atomic(uint32_t) owner; /* ticket now being served */
} lb_ticket_t;

#define LB_TICKET_INITIALIZER { 0, 0 }

static inline void lb_ticket_init(lb_ticket_t *lock)
{
	atomic_init(&lock->next, 0);
	atomic_init(&lock->owner, 0);
}

/*
 * Contended path: out of line so the inlined fast path stays a fetch_add, a
 * load and a branch, and so profiles attribute waiting to this symbol.
 */
LB_SLOWPATH void lb_ticket_lock_slow(lb_ticket_t *lock, uint32_t ticket)
{
	uint32_t owner;

	/*
	 * Spin loop: wait for our turn.  The acquire load pairs with the
	 * release store of `owner` in lb_ticket_unlock by the holder of
	 * ticket - 1.
	 */
	lb_cond_load_acquire(owner, &lock->owner, owner == ticket);
}

static inline void lb_ticket_lock(lb_ticket_t *lock)
{
	uint32_t ticket = atomic_fetch_add_explicit(&lock->next, 1, memory_order_relaxed);

	/* Acquire pairs with the release store in lb_ticket_unlock. */
	if (LB_LIKELY(atomic_load_explicit(&lock->owner, memory_order_acquire) == ticket))
		return;
	LB_PROBE_CONTENDED(lock, LB_CONTENTION_SPIN, lb_ticket_lock_slow(lock, ticket));
}

/*
 * Take the lock only if nobody holds or waits for it: read `owner` (o), then
 * draw ticket o if it is still the next one.  If the CAS succeeds, `next`
 * was o, so no ticket in [o, next) is outstanding and owner == o: ours.
 */
static inline bool lb_ticket_trylock(lb_ticket_t *lock)
{
	/* Acquire pairs with the release store in lb_ticket_unlock. */
	uint32_t owner = atomic_load_explicit(&lock->owner, memory_order_acquire);
	uint32_t expect = owner;

	return lb_cas_acquire(&lock->next, &expect, owner + 1);
}

static inline void lb_ticket_unlock(lb_ticket_t *lock)
{
	/* Only the holder writes `owner`, so a relaxed read sees our own value. */
	uint32_t owner = atomic_load_explicit(&lock->owner, memory_order_relaxed);

	/* Release: hands the critical section's writes to ticket owner + 1. */
	atomic_store_explicit(&lock->owner, owner + 1, memory_order_release);
}

/* Snapshots for assertions and statistics; not synchronisation points. */
static inline bool lb_ticket_is_locked(const lb_ticket_t *lock)
{
	uint32_t owner = atomic_load_explicit(&lock->owner, memory_order_relaxed);

	return atomic_load_explicit(&lock->next, memory_order_relaxed) != owner;
}

static inline bool lb_ticket_is_contended(const lb_ticket_t *lock)
{
	uint32_t owner = atomic_load_explicit(&lock->owner, memory_order_relaxed);
	uint32_t next = atomic_load_explicit(&lock->next, memory_order_relaxed);

	/* Signed difference: correct across wrap while < 2^31 threads wait. */
	return (int32_t)(next - owner) > 1;
}

/*
 * In a fork() child (one thread left, nothing runs concurrently): the
 * tickets drawn by waiters were other threads' and will never be served to
 * anyone there.  A held lock (owner != next) stays held by the ticket now
 * served (the forking thread's, or a vanished thread's for ever); the queue
 * behind it goes.
 */
static inline void lb_ticket_atfork_child(lb_ticket_t *lock)
{
	uint32_t owner = atomic_load_explicit(&lock->owner, memory_order_relaxed);
	bool held = atomic_load_explicit(&lock->next, memory_order_relaxed) != owner;
	atomic_store_explicit(&lock->next, owner + (held ? 1u : 0u), memory_order_relaxed);
}

#endif /* LB_TICKET_H */
