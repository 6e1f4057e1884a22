/* SPDX-License-Identifier: MIT */
/*
 * qspinlock.h - queued spinlock: one 32-bit word, pending bit, MCS queue.
 *
 * SPIN-ONLY: a waiter spins and never sleeps.  Embed it only where the
 * threads that take it never outnumber the CPUs they run on (the kernel
 * runs spinlocks with preemption off; a preempted holder or queued waiter
 * here stalls every spinner).  An ordinary program wants mutex.h; see
 * lockbench's doc/embedding.md, "Spin-only locks need threads <= CPUs".
 *
 * Design
 * ------
 * An MCS lock (Mellor-Crummey & Scott 1991, "Algorithms for scalable
 * synchronization on shared-memory multiprocessors") queues waiters in a
 * linked list of per-thread nodes; the lock itself is just a pointer to the
 * tail node, and each waiter spins on a flag in its *own* node, so a release
 * touches one waiter's cache line instead of all of them.  The cost is that
 * the lock is a pointer and unlock needs the holder's node.
 *
 * The queued spinlock (Linux, Waiman Long and Peter Zijlstra, 2014) packs an
 * MCS lock into 32 bits and keeps unlock node-free:
 *
 *  - the tail pointer is replaced by a small integer naming (thread, nesting
 *    slot), decoded through a table of nodes that is never freed;
 *  - the owner is a separate "locked" byte, so the holder needs no node and
 *    unlock just clears that byte with release order (see "Port note");
 *  - the first contender does not queue at all: it sets a "pending" byte and
 *    spins on the word, which saves the node and the queue handover in the
 *    common two-thread case; only a third contender builds the queue;
 *  - the queue head, not the holder, watches the locked byte; when it becomes
 *    the owner it hands queue-headship to its successor's node.
 *
 * Fairness: arrival order.  The first contender waits as the pending
 * waiter, later ones queue FIFO behind it, and while pending or a tail is
 * set nobody can barge in: the fast path and trylock only take a word that
 * is entirely 0.  (The one exception is the nesting fallback below.)  At two
 * threads this means strict alternation when both want the lock back to
 * back, which costs throughput against unfair locks that let the releasing
 * thread re-acquire while its cache is hot.  As with every spinlock, a
 * preempted holder, pending waiter or queue head stalls everyone behind it
 * (no preempt_disable in userspace), so
 * with more threads than CPUs throughput collapses to the scheduler's pace;
 * spin-then-yield would be a different lock.
 *
 * Lock word (32 bits; the tail-thread field allows up to 16383 threads):
 *
 *   | bits  | field       | values                                        |
 *   |-------|-------------|-----------------------------------------------|
 *   | 0-7   | locked      | 0 free, 1 held (LB_QSPIN_LOCKED)              |
 *   | 8-15  | pending     | 0, or 1 = first contender spinning on the word |
 *   | 16-17 | tail idx    | nesting slot of the tail node (0-3)           |
 *   | 18-31 | tail thread | thread index + 1 of the tail node; 0 = no tail |
 *
 * States are written (tail, pending, locked), '*' = any, n = some tail:
 *
 *   uncontended      (0,0,0) -> (0,0,1)                    lb_qspin_lock
 *   pending          (0,0,1) -> (0,1,1) -> (0,1,0) -> (0,0,1)
 *   queue, alone     (n,0,0) -> (0,0,1)                    head takes it, drops tail
 *   queue, followers (n,0,0) -> (n,0,1)                    head takes it, hands on
 *   unlock           (*,*,1) -> (*,*,0)
 *
 * Per-thread context and the node domain
 * --------------------------------------
 * The header hides no thread-locals.  The caller provides a *domain*: an
 * array of `struct lb_qspin_slot`, one per thread index, that lives for as
 * long as any lock using it can be touched (a static array is the natural
 * choice), and gives every thread a `struct lb_qspin_ctx` naming the
 * domain and its own index.  A slot is one cache line holding
 * LB_QSPIN_NESTING (4) nodes; a tail decodes to &slots[thread].node[idx].
 * Rules:
 *  - every thread that uses a given lock must use the same domain;
 *  - an index names one thread at a time (two live threads must not share
 *    one); reuse after a thread is done with all locks is fine;
 *  - nodes are in use only inside lb_qspin_lock(): neighbours write into our
 *    node (prev->next, next->locked) only while we wait in the queue, so the
 *    holder and unlock never need the node.
 *
 * Nesting: node[0].count counts nodes in use by the thread.  A signal
 * handler that interrupts lb_qspin_lock() and takes *another* lock of the
 * domain uses the next node (the kernel does this for softirq, hardirq and
 * NMI).  Past LB_QSPIN_NESTING levels the thread spins on trylock without a
 * node (correct, not fair).  The count is updated with relaxed atomics and
 * compiler-only fences, enough against a handler on the same thread.  As
 * with any non-recursive lock, a handler must not take a lock its thread
 * holds or is queued on (block the signal around it: that is "irqsave").
 *
 * Memory-order pairing
 * --------------------
 *
 *   | acquire side                                  | pairs with (release)                 |
 *   |-----------------------------------------------|--------------------------------------|
 *   | CAS 0->1 in lock/trylock                      | unlock's store/sub of the locked byte |
 *   | pending waiter's spin on the word             | unlock                               |
 *   | fetch_or(pending)                             | unlock (if the lock was already free) |
 *   | queue head's spin on the word                 | unlock and the pending handover      |
 *   | xchg_tail (acq_rel)                           | the previous tail's xchg_tail: its   |
 *   |                                               | node init happens before our link    |
 *   | prev's owner loading node->next (acquire)     | our store prev->next = node (release)|
 *   |                                               | so our locked = 0 precedes its 1     |
 *   | our spin on node->locked (acquire)            | predecessor's store next->locked = 1 |
 *
 * The head's final CAS / set_locked and the pending handover are relaxed:
 * the acquire was already done by the load that saw locked == 0, and no one
 * else can take the lock between that load and the store (the tail or the
 * pending bit shuts out the fast path and trylock).
 *
 * Port note: sub-word access
 * --------------------------
 * The kernel releases with a byte store, hands pending->locked over with a
 * 16-bit store and swaps the tail with a 16-bit xchg.  C11 `_Atomic` has no
 * sub-word access to a word, so by default this header uses the word-only
 * forms the port note gives (LB_QSPIN_SUBWORD 0):
 *
 *   unlock                    fetch_sub(1), release
 *   clear_pending_set_locked  fetch_add(1 - (1 << 8))
 *   set_locked                fetch_or(1)
 *   xchg_tail                 CAS loop on the word
 *
 * -DLB_QSPIN_SUBWORD=1 (GCC/Clang on x86 or arm64 only) switches to the
 * kernel's byte/half-word `__atomic` accesses into the word.  Both
 * architectures keep mixed-size accesses to one aligned word coherent, but
 * ISO C11 does not define them, and on x86 they cost more than they save
 * uncontended (figures: doc/spinlocks.md, "Measured figures behind the
 * defaults").  The byte store that releases the lock cannot be forwarded to the next
 * lock's 32-bit CAS of the same word, which then waits for the store to
 * drain; the word-only fetch_sub has no such stall.  Under two-thread
 * contention the two are within noise of each other.  So the uncontended
 * floor of this word layout is one CAS plus one RMW, about twice tas.h's
 * exchange plus store when nothing else runs between lock and unlock (any
 * real work there hides the difference).
 */
#ifndef LB_QSPINLOCK_H
#define LB_QSPINLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb_atomic.h"
#include "lb_cond_load.h"
#include "lb_probe.h"
#include "lb_spin_budget.h"

/* Word-only C11 by default; see "Port note" above. */
#ifndef LB_QSPIN_SUBWORD
#define LB_QSPIN_SUBWORD 0
#endif
#if LB_QSPIN_SUBWORD && !(defined(__GNUC__) && defined(__BYTE_ORDER__) &&          \
			  (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)))
#error "LB_QSPIN_SUBWORD=1 needs GCC or Clang on x86 or arm64"
#endif

/* Lock-word fields (see the table above). */
#define LB_QSPIN_LOCKED              (1u << 0)
#define LB_QSPIN_LOCKED_MASK         0x000000ffu
#define LB_QSPIN_PENDING             (1u << 8)
#define LB_QSPIN_PENDING_MASK        0x0000ff00u
#define LB_QSPIN_LOCKED_PENDING_MASK 0x0000ffffu
#define LB_QSPIN_TAIL_IDX_SHIFT      16
#define LB_QSPIN_TAIL_IDX_MASK       0x00030000u
#define LB_QSPIN_TAIL_THREAD_SHIFT   18
#define LB_QSPIN_TAIL_MASK           0xffff0000u

/* Nodes per thread (nesting depth), and the largest thread count. */
#define LB_QSPIN_NESTING    4
#define LB_QSPIN_MAX_THREADS ((1u << (32 - LB_QSPIN_TAIL_THREAD_SHIFT)) - 1)

/*
 * How long a contender re-reads a word caught mid-handover (0,1,0) before
 * it gives up and queues, in ns.  The handover is one cache-line transfer,
 * so a time a few of those long covers it whatever a pause costs (a loop
 * count would not: the pause's cost differs several-fold between CPUs; see
 * doc/spinlocks.md).  Converted to loops by lockbench/lb_spin_budget.h.
 */
#ifndef LB_QSPIN_PENDING_NS
#define LB_QSPIN_PENDING_NS 400u
#endif

/*
 * Lock events: the kernel's CONFIG_LOCK_EVENT_COUNTS names for this lock
 * (kernel/locking/lock_events_list.h, Linux v6.6), counted at the places
 * kernel/locking/qspinlock.c counts them:
 *
 *   lock_pending         the pending waiter took the lock (after
 *                        clear_pending_set_locked)
 *   lock_slowpath        the contender went to the MCS queue (`queue:`)
 *   lock_use_node2..4    it queued on its 2nd..4th node (a nested
 *                        acquisition: a signal handler here, irq/NMI there)
 *   lock_no_node         it had no node left and spun on trylock
 *
 * They are counted where LB_LOCK_COUNTERS is nonzero at compile time, and
 * only through lb_qspin_lock_ev() with a non-NULL `ev`; lb_qspin_lock()
 * counts nothing.  The kernel's counts are per CPU and summed over every
 * qspinlock; these are per lock (per events block).  No locked
 * read-modify-write is added: the slow path notes its events in locals and
 * adds them to `ev` with a relaxed load and store once it holds the lock,
 * so every writer is the holder and the counts are exact; a reader sees a
 * slightly stale snapshot while threads run.  The fast path is unchanged.
 */
#if defined(LB_LOCK_COUNTERS) && LB_LOCK_COUNTERS
#define LB_QSPIN_COUNTING 1
#else
#define LB_QSPIN_COUNTING 0
#endif

struct lb_qspin_events {
	_Atomic(uint64_t) lock_pending;
	_Atomic(uint64_t) lock_slowpath;
	_Atomic(uint64_t) lock_use_node[3]; /* lock_use_node2, 3, 4 */
	_Atomic(uint64_t) lock_no_node;
};

typedef struct lb_qspin {
	_Atomic(uint32_t) val;
} lb_qspin_t;

#define LB_QSPIN_INITIALIZER { 0 }

/* One MCS queue node: 16 bytes, LB_QSPIN_NESTING of them per cache line. */
struct lb_qspin_node {
	_Atomic(struct lb_qspin_node *) next; /* successor, set by it */
	_Atomic(uint32_t) locked;              /* 1: you are the queue head */
	_Atomic(uint32_t) count;               /* node[0] only: nodes in use */
};

/* A thread's nodes: one cache line, so no false sharing between threads. */
struct lb_qspin_slot {
	LB_ALIGNAS(LB_CACHELINE) struct lb_qspin_node node[LB_QSPIN_NESTING];
};

/*
 * The per-thread context every slow path needs.  Plain data: it may be
 * copied (e.g. into a signal handler), as long as `index` still names the
 * calling thread.
 */
struct lb_qspin_ctx {
	struct lb_qspin_slot *slots; /* the domain: never freed while locks live */
	uint32_t index;              /* this thread's slot, < LB_QSPIN_MAX_THREADS */
};
/* The per-thread context, spelled as every lock's is (doc/embedding.md);
 * `struct lb_qspin_ctx` names the same type. */
typedef struct lb_qspin_ctx lb_qspin_ctx_t;

static inline void lb_qspin_init(lb_qspin_t *lock)
{
	atomic_init(&lock->val, 0);
}

static inline void lb_qspin_events_init(struct lb_qspin_events *ev)
{
	atomic_init(&ev->lock_pending, 0);
	atomic_init(&ev->lock_slowpath, 0);
	for (unsigned int i = 0; i < 3; i++)
		atomic_init(&ev->lock_use_node[i], 0);
	atomic_init(&ev->lock_no_node, 0);
}

/* ev->field += n; the caller holds the lock, so it is the only writer. */
static inline void lb_qspin__event_add(_Atomic(uint64_t) *field, uint64_t n)
{
	atomic_store_explicit(field, atomic_load_explicit(field, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/*
 * Add one slow-path acquisition's events to ev (NULL: none kept).  Called
 * holding the lock.  pending: 1 if it took the lock as the pending waiter;
 * idx: the node it used, LB_QSPIN_NESTING for none, -1 if it never queued.
 */
static inline void lb_qspin__count(struct lb_qspin_events *ev, bool pending, int idx)
{
#if LB_QSPIN_COUNTING
	if (!ev)
		return;
	if (pending) {
		lb_qspin__event_add(&ev->lock_pending, 1);
		return;
	}
	if (idx < 0)
		return;
	lb_qspin__event_add(&ev->lock_slowpath, 1);
	if (idx >= LB_QSPIN_NESTING)
		lb_qspin__event_add(&ev->lock_no_node, 1);
	else if (idx > 0)
		lb_qspin__event_add(&ev->lock_use_node[idx - 1], 1);
#else
	(void)ev;
	(void)pending;
	(void)idx;
#endif
}

/*
 * Bind a context to slot `index` of the domain `slots` and reset the slot.
 * Call from the thread that will use it, before its first lock; false if
 * the index cannot be encoded in the tail.
 */
static inline bool lb_qspin_ctx_init(struct lb_qspin_ctx *ctx, struct lb_qspin_slot *slots,
				     uint32_t index)
{
	if (index >= LB_QSPIN_MAX_THREADS)
		return false;
	ctx->slots = slots;
	ctx->index = index;
	for (unsigned int i = 0; i < LB_QSPIN_NESTING; i++) {
		atomic_store_explicit(&slots[index].node[i].next, NULL, memory_order_relaxed);
		atomic_store_explicit(&slots[index].node[i].locked, 0, memory_order_relaxed);
		atomic_store_explicit(&slots[index].node[i].count, 0, memory_order_relaxed);
	}
	return true;
}

/* ---- helpers, each with its state transition ---------------------------- */

#if LB_QSPIN_SUBWORD
/* Byte/half-word addresses inside the word, for either byte order. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LB_QSPIN__LOCKED_OFS 0
#define LB_QSPIN__LP_OFS     0 /* locked+pending half-word */
#define LB_QSPIN__TAIL_OFS   2
#else
#define LB_QSPIN__LOCKED_OFS 3
#define LB_QSPIN__LP_OFS     2
#define LB_QSPIN__TAIL_OFS   0
#endif
/* may_alias: these views alias the _Atomic(uint32_t) (GNU-only branch). */
typedef uint8_t __attribute__((may_alias)) lb_qspin__u8a;
typedef uint16_t __attribute__((may_alias)) lb_qspin__u16a;
static inline lb_qspin__u8a *lb_qspin__locked_byte(lb_qspin_t *lock)
{
	return (lb_qspin__u8a *)&lock->val + LB_QSPIN__LOCKED_OFS;
}
static inline lb_qspin__u16a *lb_qspin__half(lb_qspin_t *lock, size_t ofs)
{
	return (lb_qspin__u16a *)(void *)((unsigned char *)&lock->val + ofs);
}
#endif

/* *,1,0 -> *,0,1: the pending waiter becomes the owner. */
static inline void lb_qspin__clear_pending_set_locked(lb_qspin_t *lock)
{
#if LB_QSPIN_SUBWORD
	/* Relaxed: the spin that saw locked == 0 already did the acquire. */
	__atomic_store_n(lb_qspin__half(lock, LB_QSPIN__LP_OFS), (uint16_t)LB_QSPIN_LOCKED,
			 __ATOMIC_RELAXED);
#else
	/* Pending is set, so adding 1 - (1 << 8) cannot borrow from the tail. */
	atomic_fetch_add_explicit(&lock->val, LB_QSPIN_LOCKED - LB_QSPIN_PENDING,
				  memory_order_relaxed);
#endif
}

/* *,1,* -> *,0,*: undo a pending bit we set after a tail appeared. */
static inline void lb_qspin__clear_pending(lb_qspin_t *lock)
{
	atomic_fetch_and_explicit(&lock->val, ~LB_QSPIN_PENDING_MASK, memory_order_relaxed);
}

/* *,0,0 -> *,0,1: the queue head takes the lock while others queue behind. */
static inline void lb_qspin__set_locked(lb_qspin_t *lock)
{
#if LB_QSPIN_SUBWORD
	/* Relaxed: the head's spin that saw locked == pending == 0 acquired. */
	__atomic_store_n(lb_qspin__locked_byte(lock), (uint8_t)LB_QSPIN_LOCKED, __ATOMIC_RELAXED);
#else
	atomic_fetch_or_explicit(&lock->val, LB_QSPIN_LOCKED, memory_order_relaxed);
#endif
}

/*
 * p,*,* -> n,*,*: make `tail` the queue tail, return the old word (its tail
 * field names our predecessor).  acq_rel: release publishes our node's
 * initialisation to whoever decodes our tail; acquire makes the previous
 * tail's initialisation visible before we write prev->next.
 */
static inline uint32_t lb_qspin__xchg_tail(lb_qspin_t *lock, uint32_t tail)
{
#if LB_QSPIN_SUBWORD
	uint16_t old = __atomic_exchange_n(lb_qspin__half(lock, LB_QSPIN__TAIL_OFS),
					   (uint16_t)(tail >> LB_QSPIN_TAIL_IDX_SHIFT),
					   __ATOMIC_ACQ_REL);
	return (uint32_t)old << LB_QSPIN_TAIL_IDX_SHIFT;
#else
	uint32_t old = atomic_load_explicit(&lock->val, memory_order_relaxed);

	/* Retry while locked/pending change under us; ordering as above. */
	while (!atomic_compare_exchange_weak_explicit(&lock->val, &old,
						      (old & ~LB_QSPIN_TAIL_MASK) | tail,
						      memory_order_acq_rel, memory_order_relaxed))
		;
	return old;
#endif
}

static inline uint32_t lb_qspin__encode_tail(uint32_t index, uint32_t idx)
{
	return ((index + 1) << LB_QSPIN_TAIL_THREAD_SHIFT) | (idx << LB_QSPIN_TAIL_IDX_SHIFT);
}

static inline struct lb_qspin_node *lb_qspin__decode_tail(const struct lb_qspin_ctx *ctx,
							  uint32_t tail)
{
	uint32_t thread = (tail >> LB_QSPIN_TAIL_THREAD_SHIFT) - 1;
	uint32_t idx = (tail & LB_QSPIN_TAIL_IDX_MASK) >> LB_QSPIN_TAIL_IDX_SHIFT;

	return &ctx->slots[thread].node[idx];
}

/* ---- the algorithm ------------------------------------------------------ */

/* (0,0,0) -> (0,0,1) or fail; never queues, needs no context. */
static inline bool lb_qspin_trylock(lb_qspin_t *lock)
{
	/* Acquire pairs with the release in lb_qspin_unlock. */
	return lb_cas_acquire_if_zero(&lock->val, LB_QSPIN_LOCKED);
}

/*
 * Contended path (`val` is the word the fast-path CAS saw).  Out of line for
 * two reasons: the inlined fast path stays one CAS
 * and a branch with no register pressure from the queue code, and profiles
 * attribute all waiting to this symbol by name.
 */
LB_SLOWPATH void lb_qspin_lock_slow(lb_qspin_t *lock, const struct lb_qspin_ctx *ctx,
				    uint32_t val, struct lb_qspin_events *ev)
{
	struct lb_qspin_node *node0, *node, *next;
	uint32_t idx, tail, old, locked;
	uint32_t loops = lb_spin_loops(LB_QSPIN_PENDING_NS);

	/*
	 * (0,1,0): the pending waiter is turning into the owner.  Spin loop,
	 * bounded by `loops` looks: re-read (relaxed: we only decide whether
	 * to queue; the fetch_or below acquires) rather than queueing behind
	 * a handover about to finish.  A pause comes before every look, the
	 * first one too: `val` was just read (that first one lb_cond_load's
	 * wait alone, on the word the pending waiter's take writes).
	 */
	if (val == LB_QSPIN_PENDING) {
		lb_cond_load_pause(&lock->val);
		lb_cond_load_relaxed_until(val, &lock->val, val != LB_QSPIN_PENDING, --loops == 0);
	}

	/* Anyone pending or queued: join the queue. */
	if (val & ~LB_QSPIN_LOCKED_MASK)
		goto queue;

	/*
	 * (0,0,*) -> (0,1,*): become the pending waiter.  Acquire pairs with
	 * unlock's release when the lock is already free at this point.
	 */
	val = atomic_fetch_or_explicit(&lock->val, LB_QSPIN_PENDING, memory_order_acquire);
	if (LB_UNLIKELY(val & ~LB_QSPIN_LOCKED_MASK)) {
		/* Lost a race: pending or a tail appeared.  Undo only our bit. */
		if (!(val & LB_QSPIN_PENDING_MASK))
			lb_qspin__clear_pending(lock);
		goto queue;
	}

	/*
	 * (0,1,1) -> (0,1,0): wait for the owner to leave.  Acquire pairs with
	 * the release in lb_qspin_unlock.  Newcomers see pending and queue.
	 * Spin loop on the lock word.
	 */
	if (val & LB_QSPIN_LOCKED_MASK)
		lb_cond_load_acquire(val, &lock->val, !(val & LB_QSPIN_LOCKED_MASK));

	/* (*,1,0) -> (*,0,1) */
	lb_qspin__clear_pending_set_locked(lock);
	lb_qspin__count(ev, true, -1); /* the kernel's lock_pending */
	return;

queue:
	/*
	 * Claim the next node.  The signal fence keeps the compiler from
	 * moving the count update below our first use of the node, so a
	 * signal handler nesting here picks a different one.
	 */
	node0 = &ctx->slots[ctx->index].node[0];
	idx = atomic_load_explicit(&node0->count, memory_order_relaxed);
	atomic_store_explicit(&node0->count, idx + 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);

	if (LB_UNLIKELY(idx >= LB_QSPIN_NESTING)) {
		/* Out of nodes: spin on trylock (acquires on success); not FIFO.
		 * Each look is a trylock (a peek, then a CAS when free), so
		 * only the wait is lb_cond_load's: the unlock's release store
		 * to the lock word ends it.  Nesting this deep never happens
		 * in practice. */
		while (!lb_qspin_trylock(lock))
			lb_cond_load_pause(&lock->val);
		goto release;
	}

	node = &ctx->slots[ctx->index].node[idx];
	tail = lb_qspin__encode_tail(ctx->index, idx);
	atomic_store_explicit(&node->locked, 0, memory_order_relaxed);
	atomic_store_explicit(&node->next, NULL, memory_order_relaxed);

	/* The lock may have been freed while we were getting the node. */
	if (lb_qspin_trylock(lock))
		goto release;

	/* (p,*,*) -> (n,*,*): publish our node as the tail (acq_rel, above). */
	old = lb_qspin__xchg_tail(lock, tail);
	if (old & LB_QSPIN_TAIL_MASK) {
		struct lb_qspin_node *prev = lb_qspin__decode_tail(ctx, old);

		/*
		 * Link behind prev.  Release pairs with prev's owner's acquire
		 * load of prev->next, so our node->locked = 0 above is ordered
		 * before its handover store of 1 into it.
		 */
		atomic_store_explicit(&prev->next, node, memory_order_release);

		/*
		 * Spin loop on our own node until we head the queue.  Acquire
		 * pairs with the predecessor's release store of node->locked.
		 */
		lb_cond_load_acquire(locked, &node->locked, locked != 0);
	}

	/*
	 * Queue head: (*,x,y) -> (*,0,0).  Wait for the owner and any pending
	 * waiter to leave.  Acquire pairs with the release in lb_qspin_unlock
	 * (and sees the pending waiter's handover, which precedes it).  Spin
	 * loop on the lock word.
	 */
	lb_cond_load_acquire(val, &lock->val, !(val & LB_QSPIN_LOCKED_PENDING_MASK));

	/*
	 * (n,0,0) -> (0,0,1): we are still the tail, so take the lock and
	 * clear the tail in one CAS (relaxed: the spin above acquired).  It
	 * fails if someone queued behind us, or a newcomer briefly set
	 * pending before seeing our tail; then take the other branch.
	 */
	if ((val & LB_QSPIN_TAIL_MASK) == tail &&
	    atomic_compare_exchange_strong_explicit(&lock->val, &val, LB_QSPIN_LOCKED,
						    memory_order_relaxed, memory_order_relaxed))
		goto release;

	/* (*,0,0) -> (*,0,1): take the lock, the tail stays. */
	lb_qspin__set_locked(lock);

	/*
	 * A successor exists (the tail moved) but may not have linked in yet.
	 * Spin loop; acquire pairs with its release store of our node->next.
	 */
	lb_cond_load_acquire(next, &node->next, next != NULL);

	/* Make it the queue head; pairs with the acquire spin on its node. */
	atomic_store_explicit(&next->locked, 1, memory_order_release);

release:
	/* Node free again; the compiler fence mirrors the one above. */
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&node0->count, idx, memory_order_relaxed);
	/* lock_slowpath, and lock_use_node2..4 or lock_no_node: we hold it. */
	lb_qspin__count(ev, false, idx < LB_QSPIN_NESTING ? (int)idx : LB_QSPIN_NESTING);
}

/*
 * (0,0,0) -> (0,0,1) in one CAS; anything else goes to the slow path, which
 * adds its lock events to ev (NULL: none kept; see "Lock events").
 */
static inline void lb_qspin_lock_ev(lb_qspin_t *lock, const struct lb_qspin_ctx *ctx,
				    struct lb_qspin_events *ev)
{
	uint32_t val = 0;

	/* Acquire pairs with the release in lb_qspin_unlock. */
	if (LB_LIKELY(lb_cas_acquire(&lock->val, &val, LB_QSPIN_LOCKED)))
		return;
	LB_PROBE_CONTENDED(lock, LB_CONTENTION_SPIN, lb_qspin_lock_slow(lock, ctx, val, ev));
}

static inline void lb_qspin_lock(lb_qspin_t *lock, const struct lb_qspin_ctx *ctx)
{
	lb_qspin_lock_ev(lock, ctx, NULL);
}

/* (*,*,1) -> (*,*,0); the caller must hold the lock. */
static inline void lb_qspin_unlock(lb_qspin_t *lock)
{
#if LB_QSPIN_SUBWORD
	/* Release: hands the critical section to the next acquirer. */
	__atomic_store_n(lb_qspin__locked_byte(lock), (uint8_t)0, __ATOMIC_RELEASE);
#else
	/* Release, as above; an RMW because other fields may change under us. */
	atomic_fetch_sub_explicit(&lock->val, LB_QSPIN_LOCKED, memory_order_release);
#endif
}

/* Snapshots for assertions and statistics; not synchronisation points. */

/* Held, or about to be (pending handover, queue): any field non-zero. */
static inline bool lb_qspin_is_locked(const lb_qspin_t *lock)
{
	return atomic_load_explicit(&lock->val, memory_order_relaxed) != 0;
}

/* Somebody besides the owner is pending or queued. */
static inline bool lb_qspin_is_contended(const lb_qspin_t *lock)
{
	return (atomic_load_explicit(&lock->val, memory_order_relaxed) & ~LB_QSPIN_LOCKED_MASK) != 0;
}

/*
 * In a fork() child (one thread left, nothing runs concurrently): the
 * queue and a pending spinner were other threads.  The word has no owner
 * identity, so a held lock stays held (by the forking thread, or for ever by
 * a vanished one, as glibc leaves a mutex); pending and tail go.  Vanished
 * threads' nodes are re-initialised when their indexes are reused.
 */
static inline void lb_qspin_atfork_child(lb_qspin_t *lock)
{
	uint32_t v = atomic_load_explicit(&lock->val, memory_order_relaxed);
	atomic_store_explicit(&lock->val, (v & LB_QSPIN_LOCKED_MASK) ? LB_QSPIN_LOCKED : 0,
			      memory_order_relaxed);
}

#endif /* LB_QSPINLOCK_H */
