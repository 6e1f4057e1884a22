/* SPDX-License-Identifier: MIT */
/*
 * qspinlock_pv.h - queued spinlock with paravirt-style parking: the
 * userspace counterpart of the Linux kernel's pv qspinlock
 * (kernel/locking/qspinlock_paravirt.h), written from scratch.
 *
 * Why
 * ---
 * qspinlock.h is the faithful native port: every waiter spins until it is
 * handed the lock.  That is right for a kernel running on bare metal, where a
 * waiting CPU has nothing better to do and the holder cannot be preempted.
 * In a guest the vCPU holding the lock, or the one next in the queue, can be
 * descheduled by the host, and everyone behind it spins for a whole host
 * time slice.  Threads that outnumber CPUs are in exactly that position, so
 * with more threads than CPUs the native queue runs at scheduler speed
 * (the figures: doc/spinlocks.md, "Measured figures behind the defaults").
 *
 * The kernel's pv protocol, in short
 * ----------------------------------
 *  - each queue node carries a vCPU state, running or halted;
 *  - a queued waiter spins for a bounded time (SPIN_THRESHOLD loops) on its
 *    node, then marks itself halted and calls pv_wait() (a hypercall that
 *    deschedules the vCPU) until the predecessor's pv_kick();
 *  - the queue head spins for a bounded time on the lock word, then writes
 *    _Q_SLOW_VAL into the locked byte, records (lock -> node) in a hash
 *    table and halts; unlock is a cmpxchg of the locked byte, which fails
 *    on _Q_SLOW_VAL, and the slow unlock looks the node up and kicks it;
 *  - a contender may steal the lock, ahead of the queue, while the queue
 *    head is not actively spinning (the head advertises spinning in the
 *    pending byte): a halted or preempted head does not idle the lock.
 *
 * Userspace version
 * -----------------
 *  - halt = FUTEX_WAIT, kick = FUTEX_WAKE (private futexes);
 *  - a queued waiter spins on its node for LB_QSPIN_PV_SPIN_NS (a time, via
 *    lockbench/lb_spin_budget.h), then halts on its node's `state` word; the
 *    predecessor that makes it the head kicks it if it is halted ("kick on
 *    hand-over": the kernel defers this kick to unlock to keep it out of the
 *    critical section, which needs its lock->node hash table; we keep the
 *    table out and pay one syscall inside the section instead);
 *  - the queue head parks on the lock word itself: it turns the locked byte
 *    from LOCKED (1) into SLOW (3) and FUTEX_WAITs on the word.  Unlock is a
 *    fetch_sub of 1 that returns the old value, so it notices SLOW (the byte
 *    is then 2, still held), clears the byte and wakes the word's one
 *    sleeper (only a queue head ever sleeps there).  No hash table: the word
 *    is the futex;
 *  - HEAD_SPIN (bit 8) is the kernel's "head is spinning" pending bit:
 *    while it is set only the head may take a free lock; while it is clear
 *    any contender may steal a free lock (fast path, trylock, and once on
 *    entry to the slow path).  The head clears it when it parks, and while
 *    its successor is still linking in (see below);
 *  - a bounded pending path (the kernel's pv lock skips pending altogether:
 *    its pending waiter cannot halt, and a preempted one would stall the
 *    queue).  With nobody queued, the first contender sets PENDING (bit 9)
 *    and spins on the lock word itself for at most LB_QSPIN_PV_SPIN_NS, then
 *    gives PENDING back and queues; a contender that finds the lock free
 *    with only PENDING set waits up to LB_QSPIN_PV_PENDING_WAIT_NS for that
 *    spinner's take, as the native lock does, and becomes the next pending
 *    spinner.  At two threads that keeps holder and waiter on one cache
 *    line instead of a queue-node hand-over per acquisition (what it
 *    gained: doc/spinlocks.md, "Measured figures behind the defaults").
 *    PENDING
 *    keeps out only stealers: the queue head takes a free lock whatever
 *    PENDING says, so a preempted pending spinner stalls nobody, and the
 *    spinner leaves for the queue as soon as a running head appears;
 *  - the new owner never waits for a successor while holding the lock.  The
 *    native port (and the kernel, which runs that window with preemption
 *    off) takes the lock first and then waits for a successor that has
 *    swapped the tail but not yet linked in; a successor preempted there
 *    stalls the lock.  Here the head takes the lock only when it is the
 *    tail (then it clears the tail) or its successor has linked in; in the
 *    window between, the lock stays free and stealable (HEAD_SPIN clear).
 *
 * Fairness: FIFO among queued waiters while the head runs; when the head
 * is not running (halted, or woken but not yet on a CPU) running threads
 * steal.  A halted head is woken by the first unlock after it parked, so it
 * is overtaken for about one wake-up latency each time it parks.  That is
 * the pv lock's deliberate trade (and pthread-mutex's): throughput under
 * oversubscription, with the scheduler, not the queue, sharing the lock out.
 *
 * Lock word (32 bits):
 *
 *   | bits  | field     | values                                            |
 *   |-------|-----------|---------------------------------------------------|
 *   | 0-7   | locked    | 0 free, 1 held (LOCKED), 3 held and the queue     |
 *   |       |           | head sleeps on the word (SLOW): unlock must wake, |
 *   |       |           | 2 being released by such an unlock (still held)   |
 *   | 8     | HEAD_SPIN | the queue head is running and will take the lock  |
 *   | 9     | PENDING   | a pending spinner (not queued) waits on the word  |
 *   | 16-31 | tail      | thread index + 1 of the last queued node, 0 none  |
 *
 * Node (one per thread, in a never-freed domain as in qspinlock.h):
 *   next   successor, written by it (release) once it has swapped the tail
 *   locked 1: you are the queue head (written by the predecessor)
 *   state  futex word: RUNNING (0) or HALTED (1)
 *
 * Transitions (tail, HEAD_SPIN, locked; PENDING noted where it changes,
 * kept by every other transition):
 *   lock fast      (0,0,0)  -> (0,0,1)          CAS, acquire
 *   steal          (t,0,0)  -> (t,0,1)          CAS, acquire (not while PENDING)
 *   pending claim  (0,0,*)  -> (0,0,*)+P        CAS (no tail, no P, no head spin)
 *   pending take   (t,*,0)+P-> (t,*,1)          CAS, acquire
 *   pending leave  +P       -> -P               fetch_and (budget spent, or a head runs)
 *   head spins     (t,0,*)  -> (t,1,*)          fetch_or
 *   head takes     (me,*,0) -> (0,0,1)          CAS, acquire (last in queue)
 *                  (t,*,0)  -> (t,0,1)          CAS, acquire, then hands on
 *   head parks     (t,*,1|2)-> (t,0,3)          CAS, then FUTEX_WAIT(word)
 *   unlock         (*,*,1)  -> (*,*,0)          fetch_sub 1, release
 *   unlock slow    (*,*,3)  -> (*,*,2) -> (*,*,0)  fetch_sub, fetch_and (release), wake
 *
 * Memory-order pairing:
 *
 *   | acquire side                               | pairs with (release)          |
 *   |--------------------------------------------|-------------------------------|
 *   | CAS taking the lock (fast, steal, pending, |                               |
 *   |   head)                                    | unlock's fetch_sub / fetch_and|
 *   | xchg_tail CAS (acq_rel)                    | the previous tail's xchg_tail |
 *   | head's load of node->next (acquire)        | successor's store prev->next  |
 *   | waiter's load of node->locked (seq_cst)    | predecessor's store (seq_cst) |
 *   | waiter: xchg state HALTED, load locked     | kicker: store locked, xchg    |
 *   |   (seq_cst both: store-load, Dekker)       |   state RUNNING (seq_cst)     |
 *   | head: CAS locked 1->3, FUTEX_WAIT checks   | unlock's fetch_sub sees 3 and |
 *   |   the word atomically in the kernel        |   wakes, or the CAS fails     |
 *
 * Lifetime: nodes in a domain that outlives every lock using it (neighbours
 * write into a node after its owner released); unlock touches the lock word
 * after releasing it (the wake), so keep the lock alive until unlock
 * returns, as for lb_mutex.  One node per thread: a signal handler must not
 * take a qspinlock-pv of the same domain while its thread is inside
 * lb_qspin_pv_lock() (no nesting, unlike qspinlock.h).
 */
#ifndef LB_QSPINLOCK_PV_H
#define LB_QSPINLOCK_PV_H

#if !defined(_GNU_SOURCE)
#error "qspinlock_pv.h needs _GNU_SOURCE (futex syscall)"
#endif

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lb_atomic.h"
#include "lb_cond_load.h"
#include "lb_probe.h"
#include "lb_futex.h"
#include "lb_spin_budget.h"

#define LB_QSPIN_PV_LOCKED      0x01u
#define LB_QSPIN_PV_SLOW        0x03u /* LOCKED plus "the head sleeps on the word" */
#define LB_QSPIN_PV_LOCKED_MASK 0xffu
#define LB_QSPIN_PV_HEAD_SPIN   0x100u
#define LB_QSPIN_PV_PENDING     0x200u
#define LB_QSPIN_PV_TAIL_SHIFT  16
#define LB_QSPIN_PV_TAIL_MASK   0xffff0000u
#define LB_QSPIN_PV_MAX_THREADS 65535u

/* Node states (futex word). */
#define LB_QSPIN_PV_RUNNING 0u
#define LB_QSPIN_PV_HALTED  1u

/*
 * How long a queued waiter, and the queue head, spin before they halt.
 * About one futex wake-up round trip (doc/mutex.md has the measured
 * figure): spinning longer than a sleep+wake costs more than it saves.
 */
#ifndef LB_QSPIN_PV_SPIN_NS
#define LB_QSPIN_PV_SPIN_NS 15000u
#endif

/* How long a contender waits for a pending spinner's take, (0,P,0) ->
 * (0,0,1), before it gives up on the pending path and queues. */
#ifndef LB_QSPIN_PV_PENDING_WAIT_NS
#define LB_QSPIN_PV_PENDING_WAIT_NS 400u
#endif

/*
 * Lock events: the kernel's CONFIG_LOCK_EVENT_COUNTS names
 * (kernel/locking/lock_events_list.h, Linux v6.6), counted where
 * kernel/locking/qspinlock_paravirt.h and lock_events.h count them, as far
 * as this port has the place:
 *
 *   pv_lock_stealing   the steal at slow-path entry succeeded
 *                      (pv_hybrid_queued_unfair_trylock)
 *   pv_wait_node       a queued waiter halted (pv_wait in pv_wait_node)
 *   pv_wait_head       the queue head parked on the word (pv_wait in
 *                      pv_wait_head_or_lock)
 *   pv_wait_again      a halt or park after the first one of the same wait
 *   pv_spurious_wakeup a halted waiter woke without its hand-over, or the
 *                      parked head woke to a lock still held
 *   pv_kick_unlock     unlock woke the parked head (the kernel's only kick)
 *   pv_kick_wake       halted waiters that woke to a kick whose time they
 *                      found (the kernel's __pv_wait), and
 *   pv_latency_wake    the kick-to-wake-up time they measured, in ns
 *   pv_latency_kick    the time unlock's FUTEX_WAKE took, in ns
 *   lock_pending       the bounded pending spin took the lock (the kernel's
 *                      pv lock has no pending path: 0 there)
 *   lock_slowpath      the contender queued (the kernel's pv slow path
 *                      jumps past this count, `pv_queue:`, so a pv kernel
 *                      reads 0 there)
 *   pv_kick_handover   ours, not the kernel's: the new owner woke its halted
 *                      successor (the kernel's pv_kick_node no longer
 *                      kicks; it defers the kick to unlock through its hash)
 *
 * No place, so never counted: pv_hash_hops (no lock->node hash table: the
 * head parks on the lock word), pv_wait_early (waiters do not watch their
 * predecessor's state), lock_use_node2..4 and lock_no_node (one node per
 * thread, no nesting).  The adapter reports them as 0 and says why.
 *
 * As in qspinlock.h: counted where LB_LOCK_COUNTERS is nonzero and only
 * through the _ev calls with a non-NULL `ev`; per lock, where the kernel's
 * are per CPU summed over every lock; events are noted in locals and added
 * with a relaxed load and store by the lock holder (exact), except
 * pv_latency_kick, which unlock measures after its release and adds with a
 * relaxed fetch_add, and the kick times handed from kicker to sleeper
 * (plain atomic stores: a race can lose a latency sample, as the kernel's
 * per-CPU kick time can).  Counting reads the clock only around a sleep.
 */
#if defined(LB_LOCK_COUNTERS) && LB_LOCK_COUNTERS
#define LB_QSPIN_PV_COUNTING 1
#else
#define LB_QSPIN_PV_COUNTING 0
#endif

struct lb_qspin_pv_events {
	_Atomic(uint64_t) pv_kick_unlock, pv_kick_wake, pv_latency_kick_ns, pv_latency_wake_ns;
	_Atomic(uint64_t) pv_lock_stealing, pv_spurious_wakeup, pv_wait_again, pv_wait_head;
	_Atomic(uint64_t) pv_wait_node, lock_pending, lock_slowpath, pv_kick_handover;
	/* When unlock last kicked the parked head (0: not since it parked). */
	_Atomic(uint64_t) head_kick_ns;
};

typedef struct lb_qspin_pv {
	_Atomic(uint32_t) val;
} lb_qspin_pv_t;

#define LB_QSPIN_PV_INITIALIZER { 0 }

struct lb_qspin_pv_node {
	_Atomic(struct lb_qspin_pv_node *) next;
	_Atomic(uint32_t) locked;
	_Atomic(uint32_t) state;
	_Atomic(uint64_t) kick_ns; /* lock events: when we were kicked, 0 none */
};

/* One node per thread, one cache line each. */
struct lb_qspin_pv_slot {
	LB_ALIGNAS(LB_CACHELINE) struct lb_qspin_pv_node node;
};

struct lb_qspin_pv_ctx {
	struct lb_qspin_pv_slot *slots; /* the domain: never freed while locks live */
	uint32_t index;                 /* this thread's slot */
	uint32_t spin_loops;            /* LB_QSPIN_PV_SPIN_NS in lb_cpu_relax() */
};
/* The per-thread context, spelled as every lock's is (doc/embedding.md);
 * `struct lb_qspin_pv_ctx` names the same type. */
typedef struct lb_qspin_pv_ctx lb_qspin_pv_ctx_t;

static inline void lb_qspin_pv_init(lb_qspin_pv_t *lock)
{
	atomic_init(&lock->val, 0);
}

static inline void lb_qspin_pv_events_init(struct lb_qspin_pv_events *ev)
{
	_Atomic(uint64_t) *f[] = { &ev->pv_kick_unlock,   &ev->pv_kick_wake,
				   &ev->pv_latency_kick_ns, &ev->pv_latency_wake_ns,
				   &ev->pv_lock_stealing, &ev->pv_spurious_wakeup,
				   &ev->pv_wait_again,    &ev->pv_wait_head,
				   &ev->pv_wait_node,     &ev->lock_pending,
				   &ev->lock_slowpath,    &ev->pv_kick_handover,
				   &ev->head_kick_ns };
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		atomic_init(f[i], 0);
}

/*
 * One slow-path acquisition's events, kept in locals until the lock is
 * held (lb_qspin_pv__tally_flush).  With counting off every note is
 * empty and the compiler drops the struct.
 */
struct lb_qspin_pv__tally {
	uint32_t steal, pending, slowpath, wait_node, wait_head, wait_again;
	uint32_t spurious, kick_wake, kick_handover;
	uint64_t wake_ns;
};
#if LB_QSPIN_PV_COUNTING
#define LB_QSPIN_PV__NOTE(t, field, n) ((t)->field += (n))
#else
#define LB_QSPIN_PV__NOTE(t, field, n) ((void)(t), (void)(n))
#endif

/* field += n; the caller holds the lock, so it is the only writer. */
static inline void lb_qspin_pv__event_add(_Atomic(uint64_t) *field, uint64_t n)
{
	if (n)
		atomic_store_explicit(field, atomic_load_explicit(field, memory_order_relaxed) + n,
				      memory_order_relaxed);
}

static inline void lb_qspin_pv__tally_flush(struct lb_qspin_pv_events *ev,
					    const struct lb_qspin_pv__tally *t)
{
#if LB_QSPIN_PV_COUNTING
	if (!ev)
		return;
	lb_qspin_pv__event_add(&ev->pv_lock_stealing, t->steal);
	lb_qspin_pv__event_add(&ev->lock_pending, t->pending);
	lb_qspin_pv__event_add(&ev->lock_slowpath, t->slowpath);
	lb_qspin_pv__event_add(&ev->pv_wait_node, t->wait_node);
	lb_qspin_pv__event_add(&ev->pv_wait_head, t->wait_head);
	lb_qspin_pv__event_add(&ev->pv_wait_again, t->wait_again);
	lb_qspin_pv__event_add(&ev->pv_spurious_wakeup, t->spurious);
	lb_qspin_pv__event_add(&ev->pv_kick_wake, t->kick_wake);
	lb_qspin_pv__event_add(&ev->pv_kick_handover, t->kick_handover);
	lb_qspin_pv__event_add(&ev->pv_latency_wake_ns, t->wake_ns);
#else
	(void)ev;
	(void)t;
#endif
}

/* A sleeper back from a kick: its kick-to-wake-up time, if the kicker left
 * one in *kick_ns (the kernel's __pv_wait). */
static inline void lb_qspin_pv__note_woken(struct lb_qspin_pv__tally *t,
					   _Atomic(uint64_t) *kick_ns)
{
#if LB_QSPIN_PV_COUNTING
	uint64_t k = atomic_load_explicit(kick_ns, memory_order_relaxed);
	if (k) {
		uint64_t now = lb_spin__clock_ns();
		t->kick_wake++;
		t->wake_ns += now > k ? now - k : 0;
		atomic_store_explicit(kick_ns, 0, memory_order_relaxed);
	}
#else
	(void)t;
	(void)kick_ns;
#endif
}

/* Bind ctx to slot index of slots; call on the thread that will use it. */
static inline bool lb_qspin_pv_ctx_init(struct lb_qspin_pv_ctx *ctx, struct lb_qspin_pv_slot *slots,
					uint32_t index)
{
	if (index >= LB_QSPIN_PV_MAX_THREADS)
		return false;
	ctx->slots = slots;
	ctx->index = index;
	ctx->spin_loops = lb_spin_loops(LB_QSPIN_PV_SPIN_NS);
	atomic_store_explicit(&slots[index].node.next, NULL, memory_order_relaxed);
	atomic_store_explicit(&slots[index].node.locked, 0, memory_order_relaxed);
	atomic_store_explicit(&slots[index].node.state, LB_QSPIN_PV_RUNNING, memory_order_relaxed);
	atomic_store_explicit(&slots[index].node.kick_ns, 0, memory_order_relaxed);
	return true;
}

/* Free, and neither a running queue head nor a pending spinner waits for
 * it: take it, whatever the queue.  Acquire pairs with the release in
 * unlock. */
static inline bool lb_qspin_pv__steal(lb_qspin_pv_t *lock)
{
	uint32_t val = atomic_load_explicit(&lock->val, memory_order_relaxed);
	if (val & (LB_QSPIN_PV_LOCKED_MASK | LB_QSPIN_PV_HEAD_SPIN | LB_QSPIN_PV_PENDING))
		return false;
	return lb_cas_acquire(&lock->val, &val, val | LB_QSPIN_PV_LOCKED);
}

static inline bool lb_qspin_pv_trylock(lb_qspin_pv_t *lock)
{
	return lb_qspin_pv__steal(lock);
}

/* p,*,* -> n,*,*; returns the old word.  acq_rel as in qspinlock.h. */
static inline uint32_t lb_qspin_pv__xchg_tail(lb_qspin_pv_t *lock, uint32_t tail)
{
	uint32_t old = atomic_load_explicit(&lock->val, memory_order_relaxed);
	/* CAS retry loop (no waiting): the low bits change under us. */
	while (!atomic_compare_exchange_weak_explicit(&lock->val, &old,
						      (old & ~LB_QSPIN_PV_TAIL_MASK) | tail,
						      memory_order_acq_rel, memory_order_relaxed))
		;
	return old;
}

/*
 * Make next the queue head and kick it if it halted.  seq_cst store then
 * seq_cst exchange: against the waiter's exchange of HALTED then load of
 * locked, one of us sees the other (store-load ordering on both sides).
 */
static inline void lb_qspin_pv__hand_over(struct lb_qspin_pv_node *next,
					  struct lb_qspin_pv__tally *t)
{
#if LB_QSPIN_PV_COUNTING
	/* The kick time for the sleeper's pv_latency_wake, read only when it
	 * looks halted (the clock stays off the running hand-over). */
	if (atomic_load_explicit(&next->state, memory_order_relaxed) == LB_QSPIN_PV_HALTED)
		atomic_store_explicit(&next->kick_ns, lb_spin__clock_ns(), memory_order_relaxed);
#endif
	atomic_store_explicit(&next->locked, 1, memory_order_seq_cst);
	if (atomic_exchange_explicit(&next->state, LB_QSPIN_PV_RUNNING, memory_order_seq_cst) ==
	    LB_QSPIN_PV_HALTED) {
		LB_QSPIN_PV__NOTE(t, kick_handover, 1);
		lb_futex_wake(&next->state, 1);
	}
}

/* Queued, not head: spin for the budget on our node, then halt until the
 * predecessor hands us the head. */
static inline void lb_qspin_pv__wait_node(struct lb_qspin_pv_node *node, uint32_t spin_loops,
					  struct lb_qspin_pv__tally *t)
{
	for (uint32_t waits = 0;; waits++) {
		uint32_t n = spin_loops, locked; /* spin_loops >= 1 (lb_spin_loops) */

		/* Spin loop, bounded by spin_loops looks: the predecessor sets
		 * locked (seq_cst, pairs with its store in hand_over). */
		lb_cond_load_until(locked, &node->locked, memory_order_seq_cst, locked != 0,
				   --n == 0);
		if (locked)
			return;
		/* The budget's last pause (each look is followed by one). */
		lb_cond_load_pause(&node->locked);
		/* No kick time yet: the kicker writes one only once it sees
		 * HALTED, i.e. after the exchange below. */
		if (LB_QSPIN_PV_COUNTING)
			atomic_store_explicit(&node->kick_ns, 0, memory_order_relaxed);
		/* Announce the halt, then look once more (Dekker, see above). */
		atomic_exchange_explicit(&node->state, LB_QSPIN_PV_HALTED, memory_order_seq_cst);
		if (atomic_load_explicit(&node->locked, memory_order_seq_cst)) {
			atomic_store_explicit(&node->state, LB_QSPIN_PV_RUNNING, memory_order_relaxed);
			return;
		}
		LB_QSPIN_PV__NOTE(t, wait_node, 1);       /* the kernel's pv_wait_node */
		LB_QSPIN_PV__NOTE(t, wait_again, waits > 0);
		/* Sleep loop: until the kicker's exchange sets RUNNING (EINTR,
		 * EAGAIN and stale wakes only retry: pv_spurious_wakeup). */
		while (atomic_load_explicit(&node->state, memory_order_acquire) == LB_QSPIN_PV_HALTED) {
			lb_futex_wait(&node->state, LB_QSPIN_PV_HALTED, NULL);
			LB_QSPIN_PV__NOTE(t, spurious,
					  atomic_load_explicit(&node->state, memory_order_relaxed) ==
						  LB_QSPIN_PV_HALTED);
		}
		lb_qspin_pv__note_woken(t, &node->kick_ns);
	}
}

/*
 * Pending spin: with nobody queued and no pending spinner, claim PENDING and
 * wait on the lock word itself for at most the spin budget -- one cache line
 * for holder and waiter, as the native lock's pending path, instead of a
 * queue node hand-over per acquisition.  Returns true holding the lock;
 * false, PENDING given up, when the budget ran out or a queue formed that
 * now has a running head (it is ahead of us: go and queue behind it).
 * A pending spinner that is preempted keeps only stealers out: the queue
 * head takes a free lock whatever PENDING says, so nobody waits for us.
 */
static inline bool lb_qspin_pv__pending_spin(lb_qspin_pv_t *lock, uint32_t spin_loops)
{
	uint32_t val = atomic_load_explicit(&lock->val, memory_order_relaxed);
	if (val == LB_QSPIN_PV_PENDING) {
		/*
		 * Free with a pending spinner only: it is about to take the
		 * lock (the releasing thread is usually back first).  Wait a
		 * moment for (0,P,0) -> (0,0,1), as the native lock does, so
		 * we become the next pending spinner instead of queueing.
		 * Spin loop, bounded by LB_QSPIN_PV_PENDING_WAIT_NS; a pause
		 * before every look, the first one too (`val` was just read;
		 * that one is lb_cond_load's wait alone).
		 */
		uint32_t n = lb_spin_loops(LB_QSPIN_PV_PENDING_WAIT_NS);
		lb_cond_load_pause(&lock->val);
		lb_cond_load_relaxed_until(val, &lock->val, val != LB_QSPIN_PV_PENDING, --n == 0);
	}
	if (val & (LB_QSPIN_PV_TAIL_MASK | LB_QSPIN_PV_PENDING | LB_QSPIN_PV_HEAD_SPIN))
		return false;
	/* Claim: (0,0,*) -> (0,P,*).  Relaxed: the acquire is the take below. */
	if (!atomic_compare_exchange_strong_explicit(&lock->val, &val, val | LB_QSPIN_PV_PENDING,
						     memory_order_relaxed, memory_order_relaxed))
		return false;
	/* Spin loop, bounded by the budget (spin_loops >= 1: looks that saw
	 * it held, and failed CASes): wait for the holder to release, or for
	 * a queue head that runs.  Relaxed looks; the CAS acquires. */
	for (uint32_t n = spin_loops;;) {
		lb_cond_load_relaxed_until(val, &lock->val,
					   !(val & LB_QSPIN_PV_LOCKED_MASK) || (val & LB_QSPIN_PV_HEAD_SPIN),
					   --n == 0);
		if (!(val & LB_QSPIN_PV_LOCKED_MASK)) {
			/* (t,P,0) -> (t,0,1).  Acquire pairs with unlock's release. */
			if (atomic_compare_exchange_weak_explicit(
				    &lock->val, &val, (val & ~LB_QSPIN_PV_PENDING) | LB_QSPIN_PV_LOCKED,
				    memory_order_acquire, memory_order_relaxed))
				return true;
			if (--n == 0)
				break;
			continue;
		}
		if (!(val & LB_QSPIN_PV_HEAD_SPIN))
			lb_cond_load_pause(&lock->val); /* the budget ran out: its last pause */
		break; /* budget gone, or a queue formed and its head runs: join it */
	}
	/* Give PENDING back.  Relaxed: nothing was acquired. */
	atomic_fetch_and_explicit(&lock->val, ~LB_QSPIN_PV_PENDING, memory_order_relaxed);
	return false;
}

/*
 * Contended path.  Steal once if the head is not running, else queue; as
 * head, spin for the budget then park on the lock word; take the lock only
 * when we are the tail or our successor has linked in.  Returns holding the
 * lock, its events noted in *t.
 */
static inline void lb_qspin_pv__lock_slow(lb_qspin_pv_t *lock, const struct lb_qspin_pv_ctx *ctx,
					  struct lb_qspin_pv_events *ev,
					  struct lb_qspin_pv__tally *t)
{
	if (lb_qspin_pv__steal(lock)) {
		LB_QSPIN_PV__NOTE(t, steal, 1); /* the kernel's pv_lock_stealing */
		return;
	}
	if (lb_qspin_pv__pending_spin(lock, ctx->spin_loops)) {
		LB_QSPIN_PV__NOTE(t, pending, 1);
		return;
	}
	LB_QSPIN_PV__NOTE(t, slowpath, 1);

	struct lb_qspin_pv_node *node = &ctx->slots[ctx->index].node;
	const uint32_t tail = (ctx->index + 1) << LB_QSPIN_PV_TAIL_SHIFT;
	atomic_store_explicit(&node->locked, 0, memory_order_relaxed);
	atomic_store_explicit(&node->next, NULL, memory_order_relaxed);
	atomic_store_explicit(&node->state, LB_QSPIN_PV_RUNNING, memory_order_relaxed);

	uint32_t old = lb_qspin_pv__xchg_tail(lock, tail);
	if (old & LB_QSPIN_PV_TAIL_MASK) {
		uint32_t prev_idx = (old >> LB_QSPIN_PV_TAIL_SHIFT) - 1;
		/* Link in.  Release pairs with the predecessor's acquire load
		 * of its next: our node's init is visible before it kicks. */
		atomic_store_explicit(&ctx->slots[prev_idx].node.next, node, memory_order_release);
		lb_qspin_pv__wait_node(node, ctx->spin_loops, t);
	}

	/* Queue head. */
	for (uint32_t parks = 0;;) {
		struct lb_qspin_pv_node *next = NULL;
		/* Spin loop, bounded by the budget: wait for a free lock we may
		 * take.  Acquire on the load pairs with unlock's release.  It
		 * watches two words (the lock word and our node's next) and
		 * sets or clears HEAD_SPIN from inside, so only the wait is
		 * lb_cond_load's, on the lock word (unlock's release store). */
		for (uint32_t n = ctx->spin_loops; n; n--) {
			uint32_t val = atomic_load_explicit(&lock->val, memory_order_acquire);
			bool last = (val & LB_QSPIN_PV_TAIL_MASK) == tail;
			if (!last && !next)
				/* Acquire pairs with the successor's link store. */
				next = atomic_load_explicit(&node->next, memory_order_acquire);
			bool can_take = last || next;
			if (!(val & LB_QSPIN_PV_LOCKED_MASK) && can_take) {
				/* Keep PENDING: a pending spinner owns it. */
				uint32_t want = (val & LB_QSPIN_PV_PENDING) | LB_QSPIN_PV_LOCKED |
						(last ? 0 : (val & LB_QSPIN_PV_TAIL_MASK));
				/* Acquire: pairs with unlock's release. */
				if (atomic_compare_exchange_weak_explicit(&lock->val, &val, want,
									  memory_order_acquire,
									  memory_order_relaxed)) {
					if (!last) {
						LB_PROBE_HANDOFF(lock, next);
						lb_qspin_pv__hand_over(next, t);
					}
					return;
				}
				continue;
			}
			if (can_take && !(val & LB_QSPIN_PV_HEAD_SPIN)) {
				/* We run and will take it: shut out stealers. */
				atomic_fetch_or_explicit(&lock->val, LB_QSPIN_PV_HEAD_SPIN,
							 memory_order_relaxed);
			} else if (!can_take && (val & LB_QSPIN_PV_HEAD_SPIN)) {
				/* Successor still linking in: let others use
				 * the lock meanwhile. */
				atomic_fetch_and_explicit(&lock->val, ~LB_QSPIN_PV_HEAD_SPIN,
							  memory_order_relaxed);
			}
			lb_cond_load_pause(&lock->val);
		}
		/*
		 * Park on the word: (t,*,1) -> (t,0,3), then sleep while the
		 * word is unchanged.  The CAS fails if the lock came free (then
		 * spin again); unlock's fetch_sub sees SLOW and wakes us.
		 */
		uint32_t val = atomic_load_explicit(&lock->val, memory_order_relaxed);
		/* Park loop: re-sleep while the lock stays SLOW (a tail change
		 * only makes FUTEX_WAIT return EAGAIN). */
		for (;;) {
			uint32_t lk = val & LB_QSPIN_PV_LOCKED_MASK;
			if (lk == 0) {
				/* Free, but our successor has not linked in
				 * for a whole budget: it was preempted in that
				 * window; give it our CPU. */
				sched_yield();
				break;
			}
			uint32_t want = (val & ~(LB_QSPIN_PV_HEAD_SPIN | LB_QSPIN_PV_LOCKED_MASK)) |
					LB_QSPIN_PV_SLOW;
			/* No kick time yet: unlock writes one only once it
			 * sees SLOW, i.e. after the CAS below. */
			if (LB_QSPIN_PV_COUNTING && ev)
				atomic_store_explicit(&ev->head_kick_ns, 0, memory_order_relaxed);
			if (val != want &&
			    !atomic_compare_exchange_weak_explicit(&lock->val, &val, want,
								   memory_order_relaxed,
								   memory_order_relaxed))
				continue;
			LB_QSPIN_PV__NOTE(t, wait_head, 1); /* the kernel's pv_wait_head */
			LB_QSPIN_PV__NOTE(t, wait_again, parks++ > 0);
			lb_futex_wait(&lock->val, want, NULL);
			val = atomic_load_explicit(&lock->val, memory_order_relaxed);
			/* The kernel's test: woken to a lock still held. */
			LB_QSPIN_PV__NOTE(t, spurious, (val & LB_QSPIN_PV_LOCKED_MASK) != 0);
			if (LB_QSPIN_PV_COUNTING && ev)
				lb_qspin_pv__note_woken(t, &ev->head_kick_ns);
			if ((val & LB_QSPIN_PV_LOCKED_MASK) != LB_QSPIN_PV_SLOW)
				break; /* woken by an unlock (or stolen since): spin */
		}
	}
}

LB_SLOWPATH void lb_qspin_pv_lock_slow(lb_qspin_pv_t *lock, const struct lb_qspin_pv_ctx *ctx,
				       struct lb_qspin_pv_events *ev)
{
	struct lb_qspin_pv__tally t;
	memset(&t, 0, sizeof(t));
	lb_qspin_pv__lock_slow(lock, ctx, ev, &t);
	lb_qspin_pv__tally_flush(ev, &t); /* we hold the lock */
}

/* (0,0,0) -> (0,0,1), else the slow path, which adds its lock events to ev
 * (NULL: none kept; see "Lock events"). */
static inline void lb_qspin_pv_lock_ev(lb_qspin_pv_t *lock, const struct lb_qspin_pv_ctx *ctx,
				       struct lb_qspin_pv_events *ev)
{
	uint32_t val = 0;
	/* Acquire pairs with the release in unlock. */
	if (LB_LIKELY(lb_cas_acquire(&lock->val, &val, LB_QSPIN_PV_LOCKED)))
		return;
	LB_PROBE_CONTENDED(lock, LB_CONTENTION_SPIN, lb_qspin_pv_lock_slow(lock, ctx, ev));
}

static inline void lb_qspin_pv_lock(lb_qspin_pv_t *lock, const struct lb_qspin_pv_ctx *ctx)
{
	lb_qspin_pv_lock_ev(lock, ctx, NULL);
}

/*
 * (*,*,1) -> (*,*,0) in one fetch_sub (x86 `lock xadd`; a fetch_and that
 * returns the old value would be a CAS loop).  If the old locked byte was
 * SLOW (3) it is now 2, still "held" to everyone, and the slow unlock clears
 * it and wakes the parked head.
 */
LB_SLOWPATH void lb_qspin_pv_unlock_slow(lb_qspin_pv_t *lock, struct lb_qspin_pv_events *ev)
{
#if LB_QSPIN_PV_COUNTING
	uint64_t start = 0;
	if (ev) {
		/* Still held (byte 2): we are the only writer of the count. */
		lb_qspin_pv__event_add(&ev->pv_kick_unlock, 1);
		start = lb_spin__clock_ns();
		atomic_store_explicit(&ev->head_kick_ns, start, memory_order_relaxed);
	}
#else
	(void)ev;
#endif
	/* (*,*,2) -> (*,*,0).  Release: the lock is free only from here. */
	atomic_fetch_and_explicit(&lock->val, ~LB_QSPIN_PV_LOCKED_MASK, memory_order_release);
	lb_futex_wake(&lock->val, 1);
#if LB_QSPIN_PV_COUNTING
	/* Released: other unlockers may add too, hence the RMW. */
	if (ev)
		atomic_fetch_add_explicit(&ev->pv_latency_kick_ns, lb_spin__clock_ns() - start,
					  memory_order_relaxed);
#endif
}

static inline void lb_qspin_pv_unlock_ev(lb_qspin_pv_t *lock, struct lb_qspin_pv_events *ev)
{
	/* Release: hands the critical section to the next acquirer. */
	uint32_t old = atomic_fetch_sub_explicit(&lock->val, LB_QSPIN_PV_LOCKED,
						 memory_order_release);
	if (LB_UNLIKELY((old & LB_QSPIN_PV_LOCKED_MASK) != LB_QSPIN_PV_LOCKED))
		lb_qspin_pv_unlock_slow(lock, ev);
}

static inline void lb_qspin_pv_unlock(lb_qspin_pv_t *lock)
{
	lb_qspin_pv_unlock_ev(lock, NULL);
}

static inline bool lb_qspin_pv_is_locked(const lb_qspin_pv_t *lock)
{
	return (atomic_load_explicit(&((lb_qspin_pv_t *)lock)->val, memory_order_relaxed) &
		LB_QSPIN_PV_LOCKED_MASK) != 0;
}

/*
 * In a fork() child (one thread left, nothing runs concurrently): the queue,
 * a pending spinner and a parked head were other threads.  The lock word
 * has no owner identity, so a held lock stays held (LOCKED) whoever held it:
 * the forking thread, which unlocks it as usual, or a vanished thread (held
 * for ever, as glibc leaves such a mutex).  A locked byte of 2 was a slow
 * unlock by a vanished thread, already past its release point: free.
 * Everything else (tail, HEAD_SPIN, PENDING) goes.  The vanished threads'
 * nodes are re-initialised when their indexes are reused (ctx_init).
 */
static inline void lb_qspin_pv_atfork_child(lb_qspin_pv_t *lock)
{
	uint32_t lk = atomic_load_explicit(&lock->val, memory_order_relaxed) &
		      LB_QSPIN_PV_LOCKED_MASK;
	bool held = lk == LB_QSPIN_PV_LOCKED || lk == LB_QSPIN_PV_SLOW;
	atomic_store_explicit(&lock->val, held ? LB_QSPIN_PV_LOCKED : 0, memory_order_relaxed);
}

#endif /* LB_QSPINLOCK_PV_H */
