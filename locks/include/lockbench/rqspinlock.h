/* SPDX-License-Identifier: MIT */
/*
 * rqspinlock.h - resilient queued spinlock: qspinlock.h's word and MCS
 * queue, plus a per-thread table of held locks, deadlock detection and a
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
 * The lock word, its states and the queue are exactly qspinlock.h's (read
 * its design comment first); this header reuses its word helpers.  What is
 * added:
 *
 *  - Held-locks table.  Each thread owns LB_RQSPIN_HELD_MAX (31) entries
 *    and a count, in its slot of the node domain so that other threads can
 *    read it.  Every acquisition pushes the lock *before* trying the word
 *    (so the top entry of a waiting thread names the lock it waits for) and
 *    unlock removes it; both are plain stores by the owning thread (relaxed
 *    atomics: remote detectors read them).  Past 31 entries the count still
 *    goes up but nothing is recorded: those locks are invisible to
 *    detection, and only the timeout protects their waiters.
 *
 *  - AA detection: the lock we wait for is already in our own table below
 *    the top entry (we hold it, or an interrupted context of ours - a
 *    signal handler's "task" - is waiting for it).  Checked on entry to the
 *    slow path, before any spinning, and every LB_RQSPIN_CHECK_NS (1 ms)
 *    while waiting.
 *
 *  - ABBA detection: some other thread's top entry (the lock it waits for)
 *    is a lock we hold, and the lock we wait for is in its table below its
 *    top (it holds it).  Beyond the kernel (which sees two-party cycles
 *    only and leaves ABBCCA to the timeout): the walk goes on along the
 *    wait-for chain, the holder of what that thread waits for, and so on,
 *    up to LB_RQSPIN_CYCLE_HOPS threads, so ABBCCA and longer cycles are
 *    detected too.  Checked on entry when we hold anything, and
 *    periodically as above.
 *
 *  - Timeout: LB_RQSPIN_TIMEOUT_NS (0.25 s) for the pending waiter and the
 *    trylock fallback; the queue head gets twice that, restarted when it
 *    becomes the head, as in the kernel.  At the deadline detection runs
 *    once more, so a cycle that exists then is reported as -EDEADLK.  Only the pending waiter, the queue
 *    head and the node-less fallback watch the clock (every
 *    LB_RQSPIN_CLOCK_SPINS spins); a waiter further back spins on its node.
 *
 *  - Failure.  A pending waiter clears its pending bit and returns.  A queue
 *    head (or a waiter told to abort) leaves the queue: if it is still the
 *    tail it clears the tail with a CAS (the lock itself stays as it is);
 *    otherwise it waits for its successor to link in and writes
 *    LB_RQSPIN_NODE_ABORT into the successor's node, which then fails with
 *    -ETIMEDOUT and does the same: the queue behind a failed head unwinds
 *    in order.  Either way the table entry is removed before returning.
 *
 * Lock word: qspinlock.h's 32 bits (locked byte, pending byte, 16-bit
 * tail).  Node `locked` values: 0 waiting, 1 you head the queue,
 * LB_RQSPIN_NODE_ABORT your predecessor failed: fail too.
 *
 * Memory-order pairing
 * --------------------
 * Everything in qspinlock.h's table holds unchanged; in addition:
 *
 *   | acquire side                              | pairs with (release)                   |
 *   |-------------------------------------------|----------------------------------------|
 *   | the next owner's CAS/spin on the word     | unlock's fetch_sub, which also orders  |
 *   |                                           | the NULL store of our table entry      |
 *   |                                           | before it: whoever takes the lock next |
 *   |                                           | cannot read a stale entry naming it    |
 *   |                                           | (no false ABBA)                        |
 *   | successor's spin on node->locked seeing   | our release store of ABORT: our queue  |
 *   | ABORT                                     | state is done before it unwinds        |
 *   | our acquire load of node->next (abort)    | successor's release link store         |
 *
 * The table itself is read by remote detectors with relaxed loads: a
 * snapshot may be stale, and the periodic recheck retries; the pairing
 * above is what makes a stale entry impossible for a lock the detector
 * holds, so a report never names a lock cycle that did not exist.  The
 * count/entry stores are separated by compiler-only fences
 * (atomic_signal_fence) so that a signal handler interrupting a push or pop
 * sees a consistent table (the count is raised before the entry is
 * written, lowered after it is cleared).
 *
 * Limits (see doc/rqspinlock.md): a per-thread table, not per-CPU; signal
 * handlers play NMIs; the waiter only spins (no futex).  ABBA detection can
 * report a deadlock that a nested handler would have resolved, like the
 * kernel's heuristic, only when a handler interrupts a waiter.
 */
#ifndef LB_RQSPINLOCK_H
#define LB_RQSPINLOCK_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_atomic.h"
#include "lb_probe.h"
#include "lb_spin_budget.h"
#include "qspinlock.h"

/* Entries in a thread's held-locks table (the kernel's RES_NR_HELD). */
#define LB_RQSPIN_HELD_MAX 31

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

typedef struct lb_rqspin {
	lb_qspin_t word;
} lb_rqspin_t;

#define LB_RQSPIN_INITIALIZER { LB_QSPIN_INITIALIZER }

/* A thread's held (or awaited) locks: written by its owner only. */
struct lb_rqspin_held {
	_Atomic(uint32_t) cnt; /* locks pushed; > LB_RQSPIN_HELD_MAX: overflowed */
	_Atomic(const lb_rqspin_t *) locks[LB_RQSPIN_HELD_MAX];
};

/* A thread's queue nodes and its table, on cache lines of their own. */
struct lb_rqspin_slot {
	LB_ALIGNAS(LB_CACHELINE) struct lb_qspin_node node[LB_QSPIN_NESTING];
	LB_ALIGNAS(LB_CACHELINE) struct lb_rqspin_held held;
};

/*
 * The node domain: slots for every thread index (never freed while a lock
 * lives) and how many indices have been bound, which bounds the ABBA scan.
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
	struct lb_rqspin_held *held; /* &domain->slots[index].held */
	uint32_t index;
};
typedef struct lb_rqspin_ctx lb_rqspin_ctx_t;

static inline void lb_rqspin_init(lb_rqspin_t *lock)
{
	lb_qspin_init(&lock->word);
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
	ctx->held = &slot->held;
	ctx->index = index;
	for (unsigned int i = 0; i < LB_QSPIN_NESTING; i++) {
		atomic_store_explicit(&slot->node[i].next, NULL, memory_order_relaxed);
		atomic_store_explicit(&slot->node[i].locked, 0, memory_order_relaxed);
		atomic_store_explicit(&slot->node[i].count, 0, memory_order_relaxed);
	}
	atomic_store_explicit(&slot->held.cnt, 0, memory_order_relaxed);
	for (unsigned int i = 0; i < LB_RQSPIN_HELD_MAX; i++)
		atomic_store_explicit(&slot->held.locks[i], NULL, memory_order_relaxed);
	/* Raise the scan bound to cover us (relaxed: a detector that misses a
	 * brand-new thread rechecks within a millisecond). */
	uint32_t seen = atomic_load_explicit(&dom->bound, memory_order_relaxed);
	while (seen < index + 1 &&
	       !atomic_compare_exchange_weak_explicit(&dom->bound, &seen, index + 1,
						      memory_order_relaxed, memory_order_relaxed))
		; /* retry: another thread raised it meanwhile; loop ends when >= ours */
	return true;
}

/* ---- the held-locks table ------------------------------------------------ */

/* Record `lock` on top of the table (before trying it). */
static inline void lb_rqspin__held_push(struct lb_rqspin_held *h, const lb_rqspin_t *lock)
{
	uint32_t cnt = atomic_load_explicit(&h->cnt, memory_order_relaxed);

	atomic_store_explicit(&h->cnt, cnt + 1, memory_order_relaxed);
	/* Compiler-only: the count covers our slot before we fill it, so a
	 * signal handler arriving in between pushes above it. */
	atomic_signal_fence(memory_order_seq_cst);
	if (LB_LIKELY(cnt < LB_RQSPIN_HELD_MAX))
		atomic_store_explicit(&h->locks[cnt], lock, memory_order_relaxed);
}

/* Out of line: `lock` is not the top entry (out-of-order unlock, or an
 * overflowed table).  Shift the entries above it down one; a remote reader
 * may briefly see one entry twice, never a missing one. */
LB_SLOWPATH void lb_rqspin__held_remove(struct lb_rqspin_held *h, uint32_t recorded,
					const lb_rqspin_t *lock)
{
	uint32_t i = recorded;

	/* Bounded by the table size: find the highest entry naming `lock`. */
	while (i > 0 && atomic_load_explicit(&h->locks[i - 1], memory_order_relaxed) != lock)
		i--;
	if (i == 0)
		return; /* not recorded (pushed after the table overflowed) */
	for (; i < recorded; i++)
		atomic_store_explicit(&h->locks[i - 1],
				      atomic_load_explicit(&h->locks[i], memory_order_relaxed),
				      memory_order_relaxed);
	atomic_store_explicit(&h->locks[recorded - 1], NULL, memory_order_relaxed);
}

/*
 * Forget a failed attempt: its entry is the top one if it was recorded at
 * all (a handler nested in between restored the table), so no search: past
 * an overflow, a search for the lock would find and drop the entry of the
 * same lock held below (the AA case).
 */
static inline void lb_rqspin__held_forget(struct lb_rqspin_held *h)
{
	uint32_t cnt = atomic_load_explicit(&h->cnt, memory_order_relaxed);

	if (cnt <= LB_RQSPIN_HELD_MAX)
		atomic_store_explicit(&h->locks[cnt - 1], NULL, memory_order_relaxed);
	/* Compiler-only: the entry is gone before the count stops covering it. */
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&h->cnt, cnt - 1, memory_order_relaxed);
}

/* Locks in the calling thread's table (for tests and assertions). */
static inline uint32_t lb_rqspin_held_count(const struct lb_rqspin_ctx *ctx)
{
	return atomic_load_explicit(&ctx->held->cnt, memory_order_relaxed);
}

/* ---- deadlock detection ------------------------------------------------- */

/* Is `lock` among entries [0, n) of h? */
static inline bool lb_rqspin__held_has(const struct lb_rqspin_held *h, uint32_t n,
				       const lb_rqspin_t *lock)
{
	for (uint32_t i = 0; i < n; i++)
		if (atomic_load_explicit(&h->locks[i], memory_order_relaxed) == lock)
			return true;
	return false;
}

/*
 * The thread other than `skip` whose table holds `want` below its top entry
 * while it waits for something (at least two entries); its index, or
 * UINT32_MAX.  *awaited gets its top entry (what it waits for).
 */
static inline uint32_t lb_rqspin__holder(const struct lb_rqspin_domain *dom, uint32_t skip,
					 const lb_rqspin_t *want, const lb_rqspin_t **awaited)
{
	uint32_t bound = atomic_load_explicit(&dom->bound, memory_order_relaxed);

	for (uint32_t t = 0; t < bound && t < dom->nslots; t++) {
		const struct lb_rqspin_held *other = &dom->slots[t].held;
		uint32_t cnt = atomic_load_explicit(&other->cnt, memory_order_relaxed);

		/* Waiting while holding nothing, or an overflowed table (its
		 * top is unknown): no edge out of it. */
		if (t == skip || cnt < 2 || cnt > LB_RQSPIN_HELD_MAX)
			continue;
		const lb_rqspin_t *top =
			atomic_load_explicit(&other->locks[cnt - 1], memory_order_relaxed);
		if (top && lb_rqspin__held_has(other, cnt - 1, want)) {
			*awaited = top;
			return t;
		}
	}
	return UINT32_MAX;
}

/*
 * One walk of the wait-for chain from `lock`: its holder waits for a lock
 * whose holder waits for ... a lock we hold (one of our `mine` entries).
 * One hop is ABBA, two ABBCCA; at most LB_RQSPIN_CYCLE_HOPS.  A thread that
 * is not waiting has its own last lock on top, which nobody else holds, so
 * the chain stops there.
 */
static inline bool lb_rqspin__cycle_once(const lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx,
					 uint32_t mine)
{
	const lb_rqspin_t *want = lock, *awaited = NULL;
	uint32_t from = ctx->index;

	for (uint32_t hop = 0; hop < LB_RQSPIN_CYCLE_HOPS; hop++) {
		from = lb_rqspin__holder(ctx->domain, from, want, &awaited);
		if (from == UINT32_MAX || from == ctx->index)
			return false;
		if (lb_rqspin__held_has(ctx->held, mine, awaited))
			return true;
		want = awaited;
	}
	return false;
}

/*
 * ABBA and longer cycles (ABBCCA, ...).  Out of line: only nested
 * acquisitions and periodic rechecks get here.  The tables are read with
 * relaxed loads, one entry at a time, so one walk could stitch a chain
 * together from entries of different moments; a cycle counts only if a
 * second walk finds one too.  The entries of the locks we hold cannot be
 * stale (unlock clears an entry before the release we acquired through), so
 * the cycle's last edge is real; the intermediate ones are re-read.
 */
LB_SLOWPATH int lb_rqspin__check_abba(const lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx,
				      uint32_t mine)
{
	if (!lb_rqspin__cycle_once(lock, ctx, mine))
		return 0;
	return lb_rqspin__cycle_once(lock, ctx, mine) ? -EDEADLK : 0;
}

/* AA, then ABBA if we hold anything.  0 or -EDEADLK. */
static inline int lb_rqspin__check_deadlock(const lb_rqspin_t *lock,
					    const struct lb_rqspin_ctx *ctx)
{
	uint32_t cnt = atomic_load_explicit(&ctx->held->cnt, memory_order_relaxed);
	/* Our entries below the one for `lock` (which is on top, or unrecorded). */
	uint32_t mine = cnt - 1 < LB_RQSPIN_HELD_MAX ? cnt - 1 : LB_RQSPIN_HELD_MAX;

	if (lb_rqspin__held_has(ctx->held, mine, lock))
		return -EDEADLK;
	return mine ? lb_rqspin__check_abba(lock, ctx, mine) : 0;
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

/* Pending path (the word had no tail and no pending): 1 when the caller
 * must queue instead, else 0 (locked) or an error. */
static inline int lb_rqspin__pending(lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx,
				     struct lb_rqspin_wait *w)
{
	/* (0,0,*) -> (0,1,*); acquire pairs with unlock's release if already free. */
	uint32_t val = atomic_fetch_or_explicit(&lock->word.val, LB_QSPIN_PENDING,
						memory_order_acquire);
	int ret;

	if (LB_UNLIKELY(val & ~LB_QSPIN_LOCKED_MASK)) {
		/* Lost a race: pending or a tail appeared.  Undo only our bit. */
		if (!(val & LB_QSPIN_PENDING_MASK))
			lb_qspin__clear_pending(&lock->word);
		return 1;
	}
	/* (0,1,1) -> (0,1,0): wait for the owner, watching the clock.  Acquire
	 * pairs with the release in lb_rqspin_unlock. */
	while (atomic_load_explicit(&lock->word.val, memory_order_acquire) & LB_QSPIN_LOCKED_MASK) {
		if (LB_UNLIKELY(ret = lb_rqspin__wait_check(lock, ctx, w))) {
			/* Give up: only our pending bit goes (we own it). */
			lb_qspin__clear_pending(&lock->word);
			return ret;
		}
		lb_cpu_relax();
	}
	lb_qspin__clear_pending_set_locked(&lock->word);
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
	int ret;

	lb_rqspin__wait_start(&w, 2 * (uint64_t)LB_RQSPIN_TIMEOUT_NS);
	/* Spin until owner and pending leave, bounded by the deadline.  Acquire
	 * pairs with unlock's release (and the pending handover). */
	while ((val = atomic_load_explicit(&lock->word.val, memory_order_acquire)) &
	       LB_QSPIN_LOCKED_PENDING_MASK) {
		if (LB_UNLIKELY(ret = lb_rqspin__wait_check(lock, ctx, &w)))
			return ret;
		lb_cpu_relax();
	}
	/* (n,0,0) -> (0,0,1) if we are still the tail (relaxed: the spin acquired). */
	if ((val & LB_QSPIN_TAIL_MASK) == tail &&
	    atomic_compare_exchange_strong_explicit(&lock->word.val, &val, LB_QSPIN_LOCKED,
						    memory_order_relaxed, memory_order_relaxed))
		return 0;
	lb_qspin__set_locked(&lock->word);
	/* A successor is linking in; acquire pairs with its release link store. */
	while (!(next = atomic_load_explicit(&node->next, memory_order_acquire)))
		lb_cpu_relax();
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
	while (!(next = atomic_load_explicit(&node->next, memory_order_acquire)))
		lb_cpu_relax();
	/* Release pairs with its acquire spin: it fails and unwinds in turn. */
	atomic_store_explicit(&next->locked, LB_RQSPIN_NODE_ABORT, memory_order_release);
}

/* Out of nodes (signal handlers nested > LB_QSPIN_NESTING deep): trylock
 * until the deadline, not FIFO. */
static inline int lb_rqspin__nodeless(lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx,
				      struct lb_rqspin_wait *w)
{
	int ret;

	/* Spin on trylock (acquire on success); the deadline bounds it. */
	while (!lb_qspin_trylock(&lock->word)) {
		if ((ret = lb_rqspin__wait_check(lock, ctx, w)))
			return ret;
		lb_cpu_relax();
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
	if (lb_qspin_trylock(&lock->word))
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
		while (!(head = atomic_load_explicit(&node->locked, memory_order_acquire)))
			lb_cpu_relax();
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
 * Contended path (`val`: what the fast-path CAS saw; our table entry for
 * `lock` is already pushed).  0 or -EDEADLK / -ETIMEDOUT with the entry
 * removed.
 */
LB_SLOWPATH int lb_rqspin_lock_slow(lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx,
				    uint32_t val)
{
	struct lb_rqspin_wait w;
	int ret;

	LB_PROBE_CONTENTION_BEGIN(lock, LB_CONTENTION_SPIN);
	lb_rqspin__wait_start(&w, LB_RQSPIN_TIMEOUT_NS);
	ret = lb_rqspin__check_deadlock(lock, ctx);
	if (ret)
		goto out;
	/* (0,1,0): a pending handover is finishing; re-read briefly (bounded
	 * by the budget) rather than queue behind it. */
	for (uint32_t loops = lb_spin_loops(LB_QSPIN_PENDING_NS); val == LB_QSPIN_PENDING && loops;
	     loops--) {
		lb_cpu_relax();
		val = atomic_load_explicit(&lock->word.val, memory_order_relaxed);
	}
	ret = 1;
	if (!(val & ~LB_QSPIN_LOCKED_MASK))
		ret = lb_rqspin__pending(lock, ctx, &w);
	if (ret == 1)
		ret = lb_rqspin__queue(lock, ctx, &w);
out:
	if (ret)
		lb_rqspin__held_forget(ctx->held);
	LB_PROBE_CONTENTION_END(lock, ret);
	return ret;
}

/*
 * Take the lock: 0, or -EDEADLK (AA, ABBA or a longer cycle detected) / -ETIMEDOUT, and
 * then the lock is not held.  Fast path: one table push (plain stores) and
 * qspinlock's CAS (0,0,0) -> (0,0,1).
 */
static inline int lb_rqspin_lock(lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx)
{
	uint32_t val = 0;

	lb_rqspin__held_push(ctx->held, lock);
	/* Acquire pairs with the release in lb_rqspin_unlock. */
	if (LB_LIKELY(lb_cas_acquire(&lock->word.val, &val, LB_QSPIN_LOCKED)))
		return 0;
	return lb_rqspin_lock_slow(lock, ctx, val);
}

/* (0,0,0) -> (0,0,1) or fail; never waits, so never reports an error. */
static inline bool lb_rqspin_trylock(lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx)
{
	lb_rqspin__held_push(ctx->held, lock);
	/* Acquire pairs with the release in lb_rqspin_unlock. */
	if (LB_LIKELY(lb_qspin_trylock(&lock->word)))
		return true;
	lb_rqspin__held_forget(ctx->held);
	return false;
}

/*
 * Unlock when `lock` is not the recorded top entry (out-of-order unlock, or
 * an overflowed table): out of line, so the common unlock spills nothing.
 * Same order as lb_rqspin_unlock: entry, release, count.
 */
LB_SLOWPATH void lb_rqspin__unlock_slow(lb_rqspin_t *lock, struct lb_rqspin_held *h, uint32_t cnt)
{
	lb_rqspin__held_remove(h, cnt < LB_RQSPIN_HELD_MAX ? cnt : LB_RQSPIN_HELD_MAX, lock);
	lb_qspin_unlock(&lock->word);
	/* Compiler-only: the count covers the slot until it is cleared. */
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&h->cnt, cnt - 1, memory_order_relaxed);
}

/* (*,*,1) -> (*,*,0); the caller must hold the lock. */
static inline void lb_rqspin_unlock(lb_rqspin_t *lock, const struct lb_rqspin_ctx *ctx)
{
	struct lb_rqspin_held *h = ctx->held;
	uint32_t cnt = atomic_load_explicit(&h->cnt, memory_order_relaxed);

	if (LB_UNLIKELY(cnt > LB_RQSPIN_HELD_MAX ||
			atomic_load_explicit(&h->locks[cnt - 1], memory_order_relaxed) != lock)) {
		lb_rqspin__unlock_slow(lock, h, cnt);
		return;
	}
	/* The entry goes before the release below publishes it as gone. */
	atomic_store_explicit(&h->locks[cnt - 1], NULL, memory_order_relaxed);
	lb_qspin_unlock(&lock->word);
	/* Compiler-only: the count covers the slot until it is cleared. */
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&h->cnt, cnt - 1, memory_order_relaxed);
}

/* Held, or about to be (snapshot, not a synchronisation point). */
static inline bool lb_rqspin_is_locked(const lb_rqspin_t *lock)
{
	return lb_qspin_is_locked(&lock->word);
}

/*
 * In a fork() child: as qspinlock's (queue and pending go, a held lock
 * stays held).  The forking thread's own table stays as it is; the others'
 * are reset when their indices are bound again.
 */
static inline void lb_rqspin_atfork_child(lb_rqspin_t *lock)
{
	lb_qspin_atfork_child(&lock->word);
}

#endif /* LB_RQSPINLOCK_H */
