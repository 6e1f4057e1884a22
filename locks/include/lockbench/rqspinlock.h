/* SPDX-License-Identifier: MIT */
/*
 * rqspinlock.h - resilient queued spinlock: qspinlock.h's word and MCS
 * queue, the owner named in the word, deadlock detection and a
 * timeout, so that acquisition can FAIL (-EDEADLK, -ETIMEDOUT) instead of
 * spinning for ever.
 *
 * Origin
 * ------
 * Linux's rqspinlock (Kumar Kartikeya Dwivedi, merged for 6.15 for BPF,
 * which must never hang the kernel on a lock taken from a tracing program
 * or an NMI).  The kernel commits that introduced kernel/bpf/rqspinlock.c:
 * a8fcf2a39bdd ("locking: Copy out qspinlock.c to kernel/bpf/rqspinlock.c"),
 * 14c48ee81452 ("rqspinlock: Add support for timeouts"), 31158ad02ddb
 * ("rqspinlock: Add deadlock detection and recovery"), merged by
 * 6ffb9017e932 ("Merge branch 'resilient-queued-spin-lock'").  This is an
 * independent userspace implementation of that design, not a copy.
 *
 * Algorithm
 * ---------
 * The lock word, its states and the queue are qspinlock.h's (read its
 * design comment first), with one change: the locked byte is not 1 but the
 * owner's *tag*, its thread index + 1 (LB_RQSPIN_TAG_ANON, 255, for indices
 * from 254 up: an owner detection cannot name).  What is added:
 *
 *  - Owner in the word.  Every way of taking the lock (the fast-path CAS,
 *    trylock, the pending waiter's hand-over, the queue head's CAS or OR)
 *    writes the tag; unlock subtracts it.  So the lock word says who holds
 *    it, and the fast path writes nothing but the word: no held-locks table
 *    to push and pop (the kernel's design, which costs ~5-7 % at one
 *    thread here; doc/rqspinlock.md).
 *
 *  - Wait stack.  Each thread owns LB_RQSPIN_WAITS_MAX (31) entries and a
 *    count, in its slot of the node domain so that other threads can read
 *    it.  On entry to the slow path a thread pushes the lock it is about to
 *    wait for, and pops it when the wait ends (lock taken or failure).  A
 *    signal handler that waits while its thread waits pushes above.  Plain
 *    stores by the owning thread (relaxed atomics: detectors read them).
 *
 *  - AA detection: the word's tag is ours (we, or the context a signal
 *    handler interrupted, hold the lock), or the lock is in our wait stack
 *    below the top (a context we interrupted waits for it).  Checked on
 *    entry to the slow path, before any spinning, and every
 *    LB_RQSPIN_CHECK_NS (1 ms) while waiting.
 *
 *  - Cycle detection (ABBA, ABBCCA, ...): the wait-for chain from the lock
 *    we want: its owner (the tag), the top of that owner's wait stack (the
 *    lock it waits for), that lock's owner, ... up to LB_RQSPIN_CYCLE_HOPS
 *    threads; a deadlock if it reaches a lock whose tag is ours.  The
 *    kernel sees two-party cycles only and leaves ABBCCA to the timeout.
 *    Checked with AA.
 *
 *  - Timeout: LB_RQSPIN_TIMEOUT_NS (0.25 s) for the pending waiter and the
 *    trylock fallback; the queue head gets twice that, restarted when it
 *    becomes the head, as in the kernel.  At the deadline detection runs
 *    once more, so a cycle that exists then is reported as -EDEADLK.  Only
 *    the pending waiter, the queue head and the node-less fallback watch
 *    the clock (every LB_RQSPIN_CLOCK_SPINS spins); a waiter further back
 *    spins on its node.
 *
 *  - Failure.  A pending waiter clears its pending bit and returns.  A queue
 *    head (or a waiter told to abort) leaves the queue: if it is still the
 *    tail it clears the tail with a CAS (the lock itself stays as it is);
 *    otherwise it waits for its successor to link in and writes
 *    LB_RQSPIN_NODE_ABORT into the successor's node, which then fails with
 *    -ETIMEDOUT and does the same: the queue behind a failed head unwinds
 *    in order.  Either way the wait entry is popped before returning.
 *
 * Lock word: qspinlock.h's 32 bits (locked byte = owner tag, pending byte,
 * 16-bit tail).  Node `locked` values: 0 waiting, 1 you head the queue,
 * LB_RQSPIN_NODE_ABORT your predecessor failed: fail too.
 *
 * Memory-order pairing
 * --------------------
 * Everything in qspinlock.h's table holds unchanged; in addition:
 *
 *   | acquire side                              | pairs with (release)                   |
 *   |-------------------------------------------|----------------------------------------|
 *   | successor's spin on node->locked seeing   | our release store of ABORT: our queue  |
 *   | ABORT                                     | state is done before it unwinds        |
 *   | our acquire load of node->next (abort)    | successor's release link store         |
 *
 * Detection reads words and wait stacks with relaxed loads, one at a time:
 * a snapshot may be stale, and the periodic recheck retries.  A tag equal
 * to ours is never stale (only we write it, and our own release is the
 * latest store to the word we can see), so AA is exact and a cycle's last
 * edge is real; a cycle counts only when a second walk of the chain finds
 * one too.  The count/entry stores of the wait stack are separated by
 * compiler-only fences (atomic_signal_fence) so that a signal handler
 * interrupting a push or pop sees a consistent stack.
 *
 * Limits (see doc/rqspinlock.md): a per-thread wait stack, not per-CPU;
 * signal handlers play NMIs; the waiter only spins (no futex); 253 named
 * owners per domain (the locked byte).  Cycle detection can report a
 * deadlock that a nested handler would have resolved, like the kernel's
 * heuristic, only when a handler interrupts a waiter.
 */
#ifndef LB_RQSPINLOCK_H
#define LB_RQSPINLOCK_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_atomic.h"
#include "lb_cond_load.h"
#include "lb_probe.h"
#include "lb_spin_budget.h"
#include "qspinlock.h"

/* Entries in a thread's wait stack (the kernel's RES_NR_HELD). */
#define LB_RQSPIN_WAITS_MAX 31

/* The pending waiter's budget; the queue head gets twice this. */
#ifndef LB_RQSPIN_TIMEOUT_NS
#define LB_RQSPIN_TIMEOUT_NS 250000000u
#endif

/* Longest wait-for chain followed: 1 hop is ABBA, 2 ABBCCA, ... */
#ifndef LB_RQSPIN_CYCLE_HOPS
#define LB_RQSPIN_CYCLE_HOPS 8u
#endif

/* How often a waiter re-runs deadlock detection. */
#ifndef LB_RQSPIN_CHECK_NS
#define LB_RQSPIN_CHECK_NS 1000000u
#endif

/* Spins between two clock reads (a power of two). */
#define LB_RQSPIN_CLOCK_SPINS 16u

/* node->locked: the predecessor failed; fail and tell the successor. */
#define LB_RQSPIN_NODE_ABORT 2u

/* The locked byte of a thread whose index does not fit a byte: an owner
 * detection cannot name (its deadlocks end by the timeout only). */
#define LB_RQSPIN_TAG_ANON 255u

typedef struct lb_rqspin {
	lb_qspin_t word;
} lb_rqspin_t;

#define LB_RQSPIN_INITIALIZER { LB_QSPIN_INITIALIZER }

/* The locks a thread's contexts wait for (a signal handler's wait above the
 * one it interrupted): written by its owner only, read by detectors. */
struct lb_rqspin_waits {
	_Atomic(uint32_t) cnt; /* waits pushed; > LB_RQSPIN_WAITS_MAX: overflowed */
	_Atomic(const lb_rqspin_t *) locks[LB_RQSPIN_WAITS_MAX];
};

/* A thread's queue nodes and its wait stack, on cache lines of their own. */
struct lb_rqspin_slot {
	LB_ALIGNAS(LB_CACHELINE) struct lb_qspin_node node[LB_QSPIN_NESTING];
	LB_ALIGNAS(LB_CACHELINE) struct lb_rqspin_waits waits;
};

/*
 * The node domain: slots for every thread index (never freed while a lock
 * lives) and how many indices have been bound, which bounds the scans.
 */
struct lb_rqspin_domain {
	struct lb_rqspin_slot *slots;
	uint32_t nslots;              /* entries in slots[] */
	_Atomic(uint32_t) bound;      /* 1 + the largest index bound so far */
};

#define LB_RQSPIN_DOMAIN_INITIALIZER(slot_array, count) { (slot_array), (count), 0 }

/* The per-thread context: plain data, as qspinlock.h's. */
struct lb_rqspin_ctx {
	struct lb_rqspin_domain *domain;
	struct lb_rqspin_waits *waits; /* &domain->slots[index].waits */
	uint32_t index;
	uint32_t tag; /* our locked byte: index + 1, or LB_RQSPIN_TAG_ANON */
};
typedef struct lb_rqspin_ctx lb_rqspin_ctx_t;

static inline void lb_rqspin_init(lb_rqspin_t *lock)
{
	lb_qspin_init(&lock->word);
}

/* The locked byte thread `index` writes: it names the owner. */
static inline uint32_t lb_rqspin__tag_of(uint32_t index)
{
	return index < LB_RQSPIN_TAG_ANON - 1 ? index + 1 : LB_RQSPIN_TAG_ANON;
}

/*
 * Bind ctx to slot `index` of the domain and reset the slot.  Call from the
 * thread that will use it, before its first lock; false if the index does
 * not fit the domain or the lock word's tail.
 */
static inline bool lb_rqspin_ctx_init(struct lb_rqspin_ctx *ctx, struct lb_rqspin_domain *dom,
				      uint32_t index)
{
	if (index >= dom->nslots || index >= LB_QSPIN_MAX_THREADS)
		return false;
	struct lb_rqspin_slot *slot = &dom->slots[index];

	ctx->domain = dom;
	ctx->waits = &slot->waits;
	ctx->index = index;
	ctx->tag = lb_rqspin__tag_of(index);
	for (unsigned int i = 0; i < LB_QSPIN_NESTING; i++) {
		atomic_store_explicit(&slot->node[i].next, NULL, memory_order_relaxed);
		atomic_store_explicit(&slot->node[i].locked, 0, memory_order_relaxed);
		atomic_store_explicit(&slot->node[i].count, 0, memory_order_relaxed);
	}
	atomic_store_explicit(&slot->waits.cnt, 0, memory_order_relaxed);
	for (unsigned int i = 0; i < LB_RQSPIN_WAITS_MAX; i++)
		atomic_store_explicit(&slot->waits.locks[i], NULL, memory_order_relaxed);
	/* Raise the scan bound to cover us (relaxed: a detector that misses a
	 * brand-new thread rechecks within a millisecond). */
	uint32_t seen = atomic_load_explicit(&dom->bound, memory_order_relaxed);
	while (seen < index + 1 &&
	       !atomic_compare_exchange_weak_explicit(&dom->bound, &seen, index + 1,
						      memory_order_relaxed, memory_order_relaxed))
		; /* retry: another thread raised it meanwhile; loop ends when >= ours */
	return true;
}

/* ---- the wait stack ------------------------------------------------------ */

/* Record that we wait for `lock` (on entry to the slow path). */
static inline void lb_rqspin__wait_push(struct lb_rqspin_waits *h, const lb_rqspin_t *lock)
{
	uint32_t cnt = atomic_load_explicit(&h->cnt, memory_order_relaxed);

	atomic_store_explicit(&h->cnt, cnt + 1, memory_order_relaxed);
	/* Compiler-only: the count covers our slot before we fill it, so a
	 * signal handler arriving in between pushes above it. */
	atomic_signal_fence(memory_order_seq_cst);
	if (LB_LIKELY(cnt < LB_RQSPIN_WAITS_MAX))
		atomic_store_explicit(&h->locks[cnt], lock, memory_order_relaxed);
}

/*
 * The wait is over (the lock is ours, or we failed): its entry is the top
 * one if it was recorded at all (a handler nested in between restored the
 * stack).
 */
static inline void lb_rqspin__wait_pop(struct lb_rqspin_waits *h)
{
	uint32_t cnt = atomic_load_explicit(&h->cnt, memory_order_relaxed);

	if (cnt <= LB_RQSPIN_WAITS_MAX)
		atomic_store_explicit(&h->locks[cnt - 1], NULL, memory_order_relaxed);
	/* Compiler-only: the entry is gone before the count stops covering it. */
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&h->cnt, cnt - 1, memory_order_relaxed);
}

/* Waits in the calling thread's stack (for tests and assertions): 0 unless
 * a signal handler asks while its thread waits. */
static inline uint32_t lb_rqspin_wait_count(const struct lb_rqspin_ctx *ctx)
{
	return atomic_load_explicit(&ctx->waits->cnt, memory_order_relaxed);
}

/* The owner named by the lock word's locked byte: 0 free, else a tag. */
static inline uint32_t lb_rqspin__owner_tag(const lb_rqspin_t *lock)
{
	/* Relaxed: detection reads a snapshot; a stale tag can only be an
	 * owner that has since left, and rechecks run every millisecond. */
	return atomic_load_explicit(&((lb_rqspin_t *)lock)->word.val, memory_order_relaxed) &
	       LB_QSPIN_LOCKED_MASK;
}

/* Whether the calling thread (one of its contexts) holds `lock`.  Exact for
 * a named owner: only we write our tag, and our own release is the latest
 * store we can see. */
static inline bool lb_rqspin_holds(const lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx)
{
	return ctx->tag != LB_RQSPIN_TAG_ANON && lb_rqspin__owner_tag(lock) == ctx->tag;
}

/* ---- deadlock detection ------------------------------------------------- */

/* Is `lock` among entries [0, n) of h? */
static inline bool lb_rqspin__waits_has(const struct lb_rqspin_waits *h, uint32_t n,
					const lb_rqspin_t *lock)
{
	for (uint32_t i = 0; i < n; i++)
		if (atomic_load_explicit(&h->locks[i], memory_order_relaxed) == lock)
			return true;
	return false;
}

/*
 * One walk of the wait-for chain from `lock`: its owner (the tag in its
 * word) waits for a lock (the top of its wait stack) whose owner waits for
 * ... a lock we hold.  One hop is ABBA, two ABBCCA; at most
 * LB_RQSPIN_CYCLE_HOPS.  The chain ends at a free lock, an anonymous owner
 * or an owner that is not waiting.
 */
static inline bool lb_rqspin__cycle_once(const lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx)
{
	const struct lb_rqspin_domain *dom = ctx->domain;
	uint32_t bound = atomic_load_explicit(&dom->bound, memory_order_relaxed);
	const lb_rqspin_t *want = lock;

	for (uint32_t hop = 0; hop < LB_RQSPIN_CYCLE_HOPS; hop++) {
		uint32_t tag = lb_rqspin__owner_tag(want);
		if (!tag || tag == LB_RQSPIN_TAG_ANON || tag == ctx->tag || tag - 1 >= bound ||
		    tag - 1 >= dom->nslots)
			return false;
		const struct lb_rqspin_waits *other = &dom->slots[tag - 1].waits;
		uint32_t cnt = atomic_load_explicit(&other->cnt, memory_order_relaxed);
		if (!cnt || cnt > LB_RQSPIN_WAITS_MAX)
			return false; /* not waiting, or its top is unknown */
		want = atomic_load_explicit(&other->locks[cnt - 1], memory_order_relaxed);
		if (!want)
			return false; /* between its count and entry stores */
		if (lb_rqspin_holds(want, ctx))
			return true;
	}
	return false;
}

/*
 * ABBA and longer cycles (ABBCCA, ...).  Out of line: only waiters that
 * hold something get here.  A chain is read one relaxed load at a time, so
 * one walk could stitch it from moments apart; a cycle counts only if a
 * second walk finds one too.  Its last edge is exact (we hold that lock);
 * the others are re-read.
 */
LB_SLOWPATH int lb_rqspin__check_cycle(const lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx)
{
	if (!lb_rqspin__cycle_once(lock, ctx))
		return 0;
	return lb_rqspin__cycle_once(lock, ctx) ? -EDEADLK : 0;
}

/*
 * AA, then the cycles.  0 or -EDEADLK.  AA: the word names us as its owner
 * (we, or a context we interrupted, hold it), or a context of ours below
 * the top of our wait stack waits for it (a signal handler on a waiter).
 */
static inline int lb_rqspin__check_deadlock(const lb_rqspin_t *lock,
					    const struct lb_rqspin_ctx *ctx)
{
	uint32_t cnt = atomic_load_explicit(&ctx->waits->cnt, memory_order_relaxed);
	/* Our waits below the one for `lock` (which is on top, or unrecorded). */
	uint32_t below = cnt - 1 < LB_RQSPIN_WAITS_MAX ? cnt - 1 : LB_RQSPIN_WAITS_MAX;

	if (lb_rqspin_holds(lock, ctx) || lb_rqspin__waits_has(ctx->waits, below, lock))
		return -EDEADLK;
	return lb_rqspin__check_cycle(lock, ctx);
}

/* ---- timeout ------------------------------------------------------------ */

struct lb_rqspin_wait {
	uint64_t deadline_ns;   /* give up at this CLOCK_MONOTONIC time */
	uint64_t next_check_ns; /* rerun detection at this time */
	uint32_t spins;
};

static inline void lb_rqspin__wait_start(struct lb_rqspin_wait *w, uint64_t budget_ns)
{
	uint64_t now = lb_spin__clock_ns();

	w->deadline_ns = now + budget_ns;
	w->next_check_ns = now + LB_RQSPIN_CHECK_NS;
	w->spins = 0;
}

/*
 * Called once per spin: 0, -ETIMEDOUT, or -EDEADLK (periodic recheck).  At
 * the deadline detection runs once more first: a waiter preempted past its
 * deadline reports a deadlock that exists as such, not as a timeout.
 */
static inline int lb_rqspin__wait_check(const lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx,
					struct lb_rqspin_wait *w)
{
	if (LB_LIKELY(++w->spins & (LB_RQSPIN_CLOCK_SPINS - 1)))
		return 0;
	uint64_t now = lb_spin__clock_ns();
	if (now >= w->deadline_ns) {
		int ret = lb_rqspin__check_deadlock(lock, ctx);
		return ret ? ret : -ETIMEDOUT;
	}
	if (now >= w->next_check_ns) {
		w->next_check_ns = now + LB_RQSPIN_CHECK_NS;
		return lb_rqspin__check_deadlock(lock, ctx);
	}
	return 0;
}

/* ---- the algorithm ------------------------------------------------------ */

/*
 * Withdraw tail `tail` from the word if it is still the tail (keeping the
 * locked and pending bytes); false if someone queued behind us.  Relaxed:
 * after success nobody can reach our node, and nothing is published.
 */
static inline bool lb_rqspin__clear_own_tail(lb_rqspin_t *lock, uint32_t tail)
{
	uint32_t val = atomic_load_explicit(&lock->word.val, memory_order_relaxed);

	/* Retry while only the locked/pending bytes change under us. */
	while ((val & LB_QSPIN_TAIL_MASK) == tail)
		if (atomic_compare_exchange_weak_explicit(&lock->word.val, &val,
							  val & ~LB_QSPIN_TAIL_MASK,
							  memory_order_relaxed,
							  memory_order_relaxed))
			return true;
	return false;
}

/* (0,1,0) -> (0,0,tag): the pending waiter takes the lock in its name. */
static inline void lb_rqspin__clear_pending_set_owner(lb_rqspin_t *lock, uint32_t tag)
{
	/* Relaxed: the spin that saw locked == 0 already did the acquire.
	 * Pending is set, so adding tag - (1 << 8) cannot borrow from the tail. */
	atomic_fetch_add_explicit(&lock->word.val, tag - LB_QSPIN_PENDING, memory_order_relaxed);
}

/* (n,0,0) -> (n,0,tag): the queue head takes the lock in its name (locked
 * and pending are 0: OR sets the byte).  Relaxed: the head's spin that saw
 * locked == pending == 0 acquired. */
static inline void lb_rqspin__set_owner(lb_rqspin_t *lock, uint32_t tag)
{
	atomic_fetch_or_explicit(&lock->word.val, tag, memory_order_relaxed);
}

/* (0,0,0) -> (0,0,tag) or fail; never waits.  A relaxed peek first, so a
 * visibly busy word fails without taking its line for ownership. */
static inline bool lb_rqspin__try_owner(lb_rqspin_t *lock, uint32_t tag)
{
	/* Acquire (in lb_cas_acquire) pairs with the release in lb_rqspin_unlock. */
	return lb_cas_acquire_if_zero(&lock->word.val, tag);
}

/* Pending path (the word had no tail and no pending): 1 when the caller
 * must queue instead, else 0 (locked) or an error. */
static inline int lb_rqspin__pending(lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx,
				     struct lb_rqspin_wait *w)
{
	/* (0,0,*) -> (0,1,*); acquire pairs with unlock's release if already free. */
	uint32_t val = atomic_fetch_or_explicit(&lock->word.val, LB_QSPIN_PENDING,
						memory_order_acquire);
	int ret = 0;

	if (LB_UNLIKELY(val & ~LB_QSPIN_LOCKED_MASK)) {
		/* Lost a race: pending or a tail appeared.  Undo only our bit. */
		if (!(val & LB_QSPIN_PENDING_MASK))
			lb_qspin__clear_pending(&lock->word);
		return 1;
	}
	/* (0,1,1) -> (0,1,0): wait for the owner, watching the clock.  Acquire
	 * pairs with the release in lb_rqspin_unlock. */
	lb_cond_load_acquire_until(val, &lock->word.val, !(val & LB_QSPIN_LOCKED_MASK),
				   LB_UNLIKELY((ret = lb_rqspin__wait_check(lock, ctx, w)) != 0));
	if (LB_UNLIKELY(ret)) {
		/* Give up: only our pending bit goes (we own it). */
		lb_qspin__clear_pending(&lock->word);
		return ret;
	}
	lb_rqspin__clear_pending_set_owner(lock, ctx->tag);
	return 0;
}

/*
 * Queue head: wait for owner and pending to leave, then take the lock and
 * hand headship on (as qspinlock.h).  0 or an error (still queued: the
 * caller unwinds).
 */
static inline int lb_rqspin__head(lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx,
				  struct lb_qspin_node *node, uint32_t tail)
{
	struct lb_rqspin_wait w;
	struct lb_qspin_node *next;
	uint32_t val;
	int ret = 0;

	lb_rqspin__wait_start(&w, 2 * (uint64_t)LB_RQSPIN_TIMEOUT_NS);
	/* Spin until owner and pending leave, bounded by the deadline.  Acquire
	 * pairs with unlock's release (and the pending handover). */
	lb_cond_load_acquire_until(val, &lock->word.val, !(val & LB_QSPIN_LOCKED_PENDING_MASK),
				   LB_UNLIKELY((ret = lb_rqspin__wait_check(lock, ctx, &w)) != 0));
	if (LB_UNLIKELY(ret))
		return ret;
	/* (n,0,0) -> (0,0,tag) if we are still the tail (relaxed: the spin
	 * acquired). */
	if ((val & LB_QSPIN_TAIL_MASK) == tail &&
	    atomic_compare_exchange_strong_explicit(&lock->word.val, &val, ctx->tag,
						    memory_order_relaxed, memory_order_relaxed))
		return 0;
	lb_rqspin__set_owner(lock, ctx->tag);
	/* A successor is linking in; acquire pairs with its release link store. */
	lb_cond_load_acquire(next, &node->next, next != NULL);
	/* Make it the head; pairs with the acquire spin on its node. */
	atomic_store_explicit(&next->locked, 1, memory_order_release);
	return 0;
}

/* Leave the queue after a failure (we head it, or were told to abort). */
static inline void lb_rqspin__unqueue(lb_rqspin_t *lock, struct lb_qspin_node *node,
				      uint32_t tail)
{
	struct lb_qspin_node *next;

	if (lb_rqspin__clear_own_tail(lock, tail))
		return;
	/* Someone queued behind us: wait for its link (acquire pairs with its
	 * release store of node->next), bounded by its few instructions. */
	lb_cond_load_acquire(next, &node->next, next != NULL);
	/* Release pairs with its acquire spin: it fails and unwinds in turn. */
	atomic_store_explicit(&next->locked, LB_RQSPIN_NODE_ABORT, memory_order_release);
}

/* Out of nodes (signal handlers nested > LB_QSPIN_NESTING deep): trylock
 * until the deadline, not FIFO. */
static inline int lb_rqspin__nodeless(lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx,
				      struct lb_rqspin_wait *w)
{
	int ret;

	/* Spin on trylock (acquire on success); the deadline bounds it.  Each
	 * look is a trylock (a peek, then a CAS) and a deadline check, so only
	 * the wait is lb_cond_load's: the unlock's release store ends it. */
	while (!lb_rqspin__try_owner(lock, ctx->tag)) {
		if ((ret = lb_rqspin__wait_check(lock, ctx, w)))
			return ret;
		lb_cond_load_pause(&lock->word.val);
	}
	return 0;
}

/* The MCS queue: 0 or an error (the node is released either way). */
static inline int lb_rqspin__queue(lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx,
				   struct lb_rqspin_wait *w)
{
	struct lb_qspin_node *node0 = &ctx->domain->slots[ctx->index].node[0], *node;
	uint32_t idx = atomic_load_explicit(&node0->count, memory_order_relaxed), tail, old, head;
	int ret = 0;

	atomic_store_explicit(&node0->count, idx + 1, memory_order_relaxed);
	/* Compiler-only: the count is up before we use the node, so a signal
	 * handler nesting here picks the next one. */
	atomic_signal_fence(memory_order_seq_cst);
	if (LB_UNLIKELY(idx >= LB_QSPIN_NESTING)) {
		ret = lb_rqspin__nodeless(lock, ctx, w);
		goto release;
	}
	node = &ctx->domain->slots[ctx->index].node[idx];
	tail = lb_qspin__encode_tail(ctx->index, idx);
	atomic_store_explicit(&node->locked, 0, memory_order_relaxed);
	atomic_store_explicit(&node->next, NULL, memory_order_relaxed);
	if (lb_rqspin__try_owner(lock, ctx->tag))
		goto release;

	/* (p,*,*) -> (n,*,*): acq_rel, see qspinlock.h. */
	old = lb_qspin__xchg_tail(&lock->word, tail);
	if (old & LB_QSPIN_TAIL_MASK) {
		uint32_t thread = (old >> LB_QSPIN_TAIL_THREAD_SHIFT) - 1;
		uint32_t pidx = (old & LB_QSPIN_TAIL_IDX_MASK) >> LB_QSPIN_TAIL_IDX_SHIFT;
		struct lb_qspin_node *prev = &ctx->domain->slots[thread].node[pidx];

		/* Link in; release pairs with prev's acquire of prev->next. */
		atomic_store_explicit(&prev->next, node, memory_order_release);
		/* Spin until we head the queue or must abort; bounded by the
		 * head's timeout, which unwinds the queue to us.  Acquire pairs
		 * with the predecessor's release store. */
		lb_cond_load_acquire(head, &node->locked, head != 0);
		if (head == LB_RQSPIN_NODE_ABORT) {
			ret = -ETIMEDOUT;
			goto unqueue;
		}
	}
	ret = lb_rqspin__head(lock, ctx, node, tail);
	if (!ret)
		goto release;
unqueue:
	lb_rqspin__unqueue(lock, node, tail);
release:
	/* Compiler-only: mirrors the fence above. */
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&node0->count, idx, memory_order_relaxed);
	return ret;
}

/*
 * Contended path (`val`: what the fast-path CAS saw).  Records the wait
 * first, so that detectors (ours and other threads') see what we wait for,
 * and removes it when the wait ends either way.  0 or -EDEADLK / -ETIMEDOUT.
 */
LB_SLOWPATH int lb_rqspin_lock_slow(lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx,
				    uint32_t val)
{
	struct lb_rqspin_wait w;
	uint32_t loops;
	int ret;

	LB_PROBE_CONTENTION_BEGIN(lock, LB_CONTENTION_SPIN);
	lb_rqspin__wait_push(ctx->waits, lock);
	lb_rqspin__wait_start(&w, LB_RQSPIN_TIMEOUT_NS);
	ret = lb_rqspin__check_deadlock(lock, ctx);
	if (ret)
		goto out;
	/* (0,1,0): a pending handover is finishing; re-read briefly (bounded
	 * by the budget; a pause before every look) rather than queue behind
	 * it. */
	loops = lb_spin_loops(LB_QSPIN_PENDING_NS);
	if (val == LB_QSPIN_PENDING) {
		lb_cond_load_pause(&lock->word.val); /* the pause before the first look */
		lb_cond_load_relaxed_until(val, &lock->word.val, val != LB_QSPIN_PENDING,
					   --loops == 0);
	}
	ret = 1;
	if (!(val & ~LB_QSPIN_LOCKED_MASK))
		ret = lb_rqspin__pending(lock, ctx, &w);
	if (ret == 1)
		ret = lb_rqspin__queue(lock, ctx, &w);
out:
	lb_rqspin__wait_pop(ctx->waits);
	LB_PROBE_CONTENTION_END(lock, ret);
	return ret;
}

/*
 * Take the lock: 0, or -EDEADLK (AA, ABBA or a longer cycle detected) /
 * -ETIMEDOUT, and then the lock is not held.  Fast path: qspinlock's CAS
 * with our tag as the locked byte, (0,0,0) -> (0,0,tag): the word itself
 * records who holds it, so the fast path writes nothing else.
 */
static inline int lb_rqspin_lock(lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx)
{
	uint32_t val = 0;

	/* Acquire pairs with the release in lb_rqspin_unlock. */
	if (LB_LIKELY(lb_cas_acquire(&lock->word.val, &val, ctx->tag)))
		return 0;
	return lb_rqspin_lock_slow(lock, ctx, val);
}

/* (0,0,0) -> (0,0,tag) or fail; never waits, so never reports an error. */
static inline bool lb_rqspin_trylock(lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx)
{
	return lb_rqspin__try_owner(lock, ctx->tag);
}

/* (*,*,tag) -> (*,*,0); the caller must hold the lock (in any order: no
 * table to keep in step). */
static inline void lb_rqspin_unlock(lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx)
{
#if LB_QSPIN_SUBWORD
	(void)ctx;
	/* Release: hands the critical section to the next acquirer. */
	__atomic_store_n(lb_qspin__locked_byte(&lock->word), (uint8_t)0, __ATOMIC_RELEASE);
#else
	/* Release, as above; an RMW because pending and tail may change under
	 * us, and subtracting our own tag clears exactly the locked byte. */
	atomic_fetch_sub_explicit(&lock->word.val, ctx->tag, memory_order_release);
#endif
}

/* Held, or about to be (snapshot, not a synchronisation point). */
static inline bool lb_rqspin_is_locked(const lb_rqspin_t *lock)
{
	return lb_qspin_is_locked(&lock->word);
}

/*
 * In a fork() child: queue and pending go, a held lock stays held in its
 * owner's name (qspinlock.h's would write 1: the forking thread's unlock
 * subtracts its tag).  The others' wait stacks are reset when their
 * indices are bound again.
 */
static inline void lb_rqspin_atfork_child(lb_rqspin_t *lock)
{
	uint32_t v = atomic_load_explicit(&lock->word.val, memory_order_relaxed);
	/* Relaxed: the child has one thread. */
	atomic_store_explicit(&lock->word.val, v & LB_QSPIN_LOCKED_MASK, memory_order_relaxed);
}

#endif /* LB_RQSPINLOCK_H */
