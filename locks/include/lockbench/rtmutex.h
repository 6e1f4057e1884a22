/* SPDX-License-Identifier: MIT */
/*
 * rtmutex.h - a priority-inheritance mutex for threads, modelled on the
 * Linux kernel's rt_mutex (kernel/locking/rtmutex.c) and written from scratch.
 *
 * Design
 * ------
 * Priority inversion: a high-priority thread H waits for a lock held by a
 * low-priority thread L while a medium-priority thread M, which needs no
 * lock, keeps L off the CPU.  H then waits for M, without bound.  Priority
 * inheritance (Lampson & Redell, "Experience with Processes and Monitors in
 * Mesa", 1980; Sha, Rajkumar & Lehoczky, IEEE ToC 39(9), 1990) lends H's
 * priority to L for as long as L holds what H wants, so M cannot run in
 * between and H's wait is bounded by L's critical section.
 *
 * Every thread that uses these locks owns a task record (struct lb_rtmutex_task):
 * its base priority, its effective priority, the top waiter of every lock it
 * holds (pi_waiters, sorted), and the waiter it is blocked with (blocked_on).
 * effective = max(base, highest pi_waiter).  A lock has an owner word and a
 * queue of waiters sorted by priority, FIFO among equals, guarded by the
 * lock's wait_lock.
 *
 * When a thread blocks and becomes the lock's top waiter, it replaces the old
 * top waiter in the owner's pi_waiters and recomputes the owner's effective
 * priority ("boost").  If the owner is itself blocked, the change travels
 * down the chain: the owner's waiter is re-sorted in the next lock's queue,
 * that lock's owner is re-evaluated, and so on (lb_rtmutex_walk).  The walk holds
 * at most two internal locks at a time, stops as soon as a step changes
 * nothing, and gives up with EDEADLK after max_depth steps (1024, the
 * kernel's default kernel.max_lock_depth).  The checking lock variant walks
 * the whole chain even when nothing changes and reports a cycle (A->B->A) or
 * a self-deadlock as EDEADLK; the plain variant only finds cycles that a
 * priority change runs into, and aborts, as the kernel WARNs and sleeps.
 *
 * Unlock removes the top waiter from the owner's pi_waiters (deboost), marks
 * the lock free-with-waiters and wakes the top waiter.  There is no handoff:
 * the woken waiter competes again, and a strictly higher-priority thread may
 * take ("steal") the lock before it.  With LB_RTMUTEX_F_LATERAL_STEAL a
 * normal-priority (0) thread may also steal from a normal-priority top
 * waiter; real-time waiters are never robbed by equals.  This is what the
 * PREEMPT_RT kernel does for its sleeping spinlocks to win back throughput.
 *
 * Priorities (logical)
 * --------------------
 *   0       normal (SCHED_OTHER, SCHED_BATCH, SCHED_IDLE: all equal)
 *   1..99   SCHED_FIFO sched_priority; larger is more urgent
 * This is the user-visible SCHED_FIFO scale, not the kernel's inverted
 * internal prio (kernel prio = 99 - rt_priority).  Deadline tasks do not
 * exist here.
 *
 * Logical and real boosting
 * -------------------------
 * Boosting always changes the logical effective priority, which orders the
 * wait queues.  A task created with LB_RTMUTEX_TASK_REAL also has its kernel
 * scheduling policy follow the effective priority: SCHED_FIFO eff while
 * eff > 0, its original normal policy when eff drops back to 0.  That is a
 * sched_setscheduler() on the owner's thread id, done after all internal
 * locks are dropped and before the booster sleeps; a deboost of the unlocker
 * is applied after it has woken the top waiter, so a medium-priority thread
 * cannot slip in between.  Every thread that changes a task's effective
 * priority pushes it to the kernel itself and re-reads it until what it
 * pushed is current (lb_rtmutex_real_sync), as the kernel's rt_mutex_setprio()
 * is synchronous: a boost never waits for another thread's later apply.
 * Read, apply and re-read run under the task's apply lock, a kernel PI
 * futex (FUTEX_LOCK_PI; its acquire CAS pairs with the release CAS of the
 * previous holder's unlock, its kernel path is a full barrier), so the
 * kernel sees the task's applies in lock order and a stale one never lands
 * after a newer one; an applier preempted with a stale value applied runs
 * at the priority of every thread that waits to apply a newer value, as the
 * kernel lends it theirs (issue 39).  A refused sched_setscheduler() is
 * counted in the task's real_errors, never recorded as applied.
 * lb_rtmutex_real_boost_available() says whether this process may use
 * SCHED_FIFO up to priority 99 (probed in a throw-away thread, the caller's
 * policy is not touched); lb_rtmutex_ctx_init_auto() enables real boosting only
 * then.  Real-time tasks always return to SCHED_FIFO
 * (SCHED_RR is not restored).
 *
 * What userspace cannot do (see doc/rtmutex.md)
 * ----------------------------------------------
 *  - Disable preemption.  The kernel guards wait queues with raw spinlocks
 *    and irqs off; a SCHED_FIFO thread spinning on a lock held by a
 *    preempted lower-priority thread on the same CPU would spin forever.  Our
 *    internal locks (struct lb_rtmutex_ilock) therefore spin briefly and then
 *    sleep on a futex.  A holder preempted inside one of these short
 *    sections is the one inversion window PI does not cover.
 *  - Know whether the owner is on a CPU.  The top waiter spins only while
 *    the owner word is unchanged, the owner is not itself blocked, the
 *    spinner may run on more than one CPU (LB_RTMUTEX_TASK_SPIN), and for at most
 *    LB_RTMUTEX_SPIN_NS (a time; the shared calibration in
 *    lockbench/lb_spin_budget.h turns it into pause loops).  The kernel's
 *    owner_on_cpu() and need_resched() are hooks here
 *    (LB_RTMUTEX_OWNER_RUNNING, LB_RTMUTEX_NEED_RESCHED): natively they are
 *    1 and 0, the code is as without them; the simulator answers them from
 *    its scheduler, so there a spinner whose owner is off its CPU queues or
 *    sleeps at once, as rt_mutex_spin_on_owner() does.
 *  - Wake and boost atomically with the scheduler.  A real boost is a
 *    separate syscall; until it lands, the owner runs at its old priority.
 *
 * Owner word (like the kernel's)
 * ------------------------------
 *   owner (task *)  bit 0 HAS_WAITERS   meaning
 *   NULL            0                   free; fast acquire CAS 0 -> task
 *   NULL            1                   free, waiters queued; top waiter woken
 *   task            0                   held; fast release CAS task -> 0
 *   task            1                   held, waiters (or a slow-path locker
 *                                       inside wait_lock): release is slow
 * Bit 0 is set by a slow-path locker under wait_lock before it looks at the
 * owner; from then on the fast paths fail and the word changes only under
 * wait_lock.
 *
 * Lock order: lock->wait_lock, then task->pi_lock (one task at a time).  The
 * chain walk takes them in the reverse order with a trylock and backs off.
 * A task's apply_lock (real boosting) is a leaf taken with neither held.
 *
 * Sleep/wake: each task's waiter has a futex word, LB_RTMUTEX_WAKE_SLEEP (0, may
 * sleep), LB_RTMUTEX_WAKE_WOKEN (1) or LB_RTMUTEX_WAKE_SPIN (2, spinning: the waker
 * skips the FUTEX_WAKE syscall).  A waiter re-arms it under wait_lock before
 * every wait, so a wake-up for an earlier wait is only a spurious retry.
 *
 * Processes
 * ---------
 * lb_rtmutex_init_shared() makes a lock for tasks in several processes: the
 * lock and every task record that uses it lie in one mapping at the same
 * address in each process (MAP_SHARED before fork: the owner word and the
 * queues hold pointers), and every futex they sleep on is shared (without
 * FUTEX_PRIVATE_FLAG; a private wake never reaches a sleeper of another
 * process).  The scope is data, never a global: struct lb_rtmutex_ilock
 * carries it (zero, the all-zero default, is private), and a waiter's wake
 * word sleeps in its task's scope.  The lock's wait_lock is shared from
 * init on.  A task's pi_lock (other threads take it to boost or walk) and
 * wake word become shared the first time the task calls lock, trylock or
 * timedlock on a shared lock: the fast path, which every call starts with,
 * checks the lock's scope before its CAS can publish the task, and
 * lb_rtmutex__task_share changes the task's scope once, under its pi_lock;
 * from then on each wake of its pi_lock also wakes one private sleeper, one
 * that read the old scope (so a task may mix private and shared locks; once
 * shared it stays shared).  The change cannot wait for
 * the slow path: a task that takes a lock on the fast path is already the
 * owner that waiters in other processes boost through its pi_lock.  Private
 * locks pay one read of their own wait_lock.shared per lock call, and the
 * internal unlock one read of the flag next to the word it releases.
 * LB_RTMUTEX_TASK_SHARED makes a task shared from lb_rtmutex_ctx_init on;
 * without it, another process must not reach a task (setprio, getters)
 * before the task's first call on a shared lock (rt -P: each task sets its
 * own priority).
 * Nothing else is process-local: boosts use the kernel thread id
 * (sched_setscheduler(tid), system-wide; pthread_t `self` is only a record),
 * a task's apply lock is always a shared PI futex holding a TID,
 * waiter records are inside the task record, and there is no TLS or table.
 * lb_rtmutex_atfork_child is for a one-process fork (its orphan is the
 * caller's), not for shared locks, whose other processes live on.
 *
 * Lifetime: task records must stay valid while any lock may still reference
 * them (other threads boost and wake through them), and a task record must
 * be initialised by the thread it describes (its thread id is recorded).
 */
#ifndef LB_RTMUTEX_H
#define LB_RTMUTEX_H

#if !defined(_GNU_SOURCE)
#error "rtmutex.h needs _GNU_SOURCE (sched_getaffinity, CPU_COUNT, SCHED_RESET_ON_FORK)"
#endif

#include "lb_atomic.h"
#include "lb_cond_load.h"
#include "lb_probe.h"
#include "lb_futex.h"
#include "lb_spin_budget.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/*
 * LB_LOCK_COUNTERS=1 makes this file's code count events into the lock's
 * statistics.  The statistics are part of the layout either way, so files
 * built with and without it share locks safely.
 */
#if defined(LB_LOCK_COUNTERS) && LB_LOCK_COUNTERS
#define LB_RTMUTEX_COUNTING 1
#else
#define LB_RTMUTEX_COUNTING 0
#endif

/* Kernel default of kernel.max_lock_depth. */
#define LB_RTMUTEX_MAX_DEPTH 1024
/* Top-waiter (and pre-queue) spin budget, in ns; converted to
 * lb_cpu_relax() iterations by the shared calibration (lb_spin_budget.h). */
#ifndef LB_RTMUTEX_SPIN_NS
#define LB_RTMUTEX_SPIN_NS 20000u
#endif
/* Internal-lock spin budget before sleeping on its futex, in ns (was 100
 * loops). */
#ifndef LB_RTMUTEX_ILOCK_SPIN_NS
#define LB_RTMUTEX_ILOCK_SPIN_NS 5000u
#endif

/*
 * The scheduler's truth for the two spins (the kernel's owner_on_cpu(owner)
 * and need_resched() in rt_mutex_spin_on_owner, kernel/locking/rtmutex.c).
 * Userspace cannot know either: natively the owner always counts as
 * running and the spinner never has to reschedule, so these compile away.
 * A simulator defines them (bench/sim/sim_interpose.h): TASK_BIND(t) is
 * called by the thread that initialises task record t, OWNER_RUNNING(t)
 * answers for the thread bound to t.
 */
#ifndef LB_RTMUTEX_TASK_BIND
#define LB_RTMUTEX_TASK_BIND(t) ((void)(t))
#endif
#ifndef LB_RTMUTEX_OWNER_RUNNING
#define LB_RTMUTEX_OWNER_RUNNING(t) 1
#endif
#ifndef LB_RTMUTEX_NEED_RESCHED
#define LB_RTMUTEX_NEED_RESCHED() 0
#endif

#define LB_RTMUTEX_PRIO_MAX 99
#define LB_RTMUTEX_HAS_WAITERS ((uintptr_t)1)

/* Lock flags (m->flags, set by lb_rtmutex_init from its attr). */
#define LB_RTMUTEX_F_LATERAL_STEAL 1u /* prio-0 threads may steal from prio-0 waiters */

/* Optional parameters for lb_rtmutex_init (NULL = defaults: all false). */
struct lb_rtmutex_attr {
	bool lateral_steal; /* LB_RTMUTEX_F_LATERAL_STEAL: see "Stealing" above */
};

/* Task flags (lb_rtmutex_ctx_init). */
#define LB_RTMUTEX_TASK_REAL 1u /* kernel policy follows the effective priority */
#define LB_RTMUTEX_TASK_SPIN 2u /* may spin as top waiter (has more than one CPU) */
#define LB_RTMUTEX_TASK_SHARED 4u /* shared futexes from the start (see "Processes") */

/* Waiter futex word states. */
#define LB_RTMUTEX_WAKE_SLEEP 0u
#define LB_RTMUTEX_WAKE_WOKEN 1u
#define LB_RTMUTEX_WAKE_SPIN 2u

/* Internal lock: 0 free, 1 held, 2 held and someone may sleep on it.
 * shared (LB_RTMUTEX_SCOPE_*): where it sleeps.  A lock's wait_lock is set
 * by lb_rtmutex_init_shared and never changes; a task's pi_lock goes
 * PRIVATE -> CHANGED once (lb_rtmutex__task_share), under itself. */
#define LB_RTMUTEX_SCOPE_PRIVATE 0u /* private futex (all-zero) */
#define LB_RTMUTEX_SCOPE_SHARED 1u  /* shared futex from the start */
#define LB_RTMUTEX_SCOPE_CHANGED 2u /* shared now, private sleepers may remain */
struct lb_rtmutex_ilock {
	_Atomic(uint32_t) v;
	_Atomic(uint32_t) shared;
};

struct lb_rtmutex;
struct lb_rtmutex_task;

/* The two sorted lists a waiter can be in, indices of its `link` array. */
enum lb_rtmutex_list {
	LB_RTMUTEX_LIST_QUEUE, /* the lock's wait queue; lock->wait_lock */
	LB_RTMUTEX_LIST_PI,    /* its owner's pi_waiters; owner->pi_lock */
	LB_RTMUTEX_LISTS
};

/* One waiter's place in one doubly linked list (NULL ends). */
struct lb_rtmutex_link {
	struct lb_rtmutex_waiter *next, *prev;
};

struct lb_rtmutex_waiter {
	struct lb_rtmutex_link link[LB_RTMUTEX_LISTS]; /* [enum lb_rtmutex_list] */
	struct lb_rtmutex_task *task;
	struct lb_rtmutex *lock; /* set at enqueue under task->pi_lock */
	uint64_t seq;            /* FIFO order among equal prio; wait_lock */
	int prio;                /* queue key: task's eff prio at (re)queue; wait_lock */
	int pi_prio;             /* pi_waiters key, copied when inserted; owner->pi_lock */
	bool on_pi;              /* in some owner's pi_waiters */
	_Atomic(uint32_t) wake;   /* futex word, LB_RTMUTEX_WAKE_* */
};

struct lb_rtmutex_task {
	struct lb_rtmutex_ilock pi_lock;
	int base_prio;                 /* pi_lock */
	_Atomic(int) eff_prio;          /* written under pi_lock, read anywhere */
	struct lb_rtmutex_waiter *pi_head;  /* top waiters of held locks, by pi_prio; pi_lock */
	struct lb_rtmutex_waiter *blocked_on; /* pi_lock */
	unsigned int flags;            /* LB_RTMUTEX_TASK_* */
	unsigned int max_depth;        /* chain-walk limit for walks this task starts */
	pid_t tid;
	pthread_t self;
	int normal_policy;             /* policy restored when eff drops to 0 */
	/* Real boosting (lb_rtmutex_real_sync). */
	_Atomic(uint32_t) apply_lock;   /* PI futex: TID of the thread applying our prio */
	_Atomic(int) real_applied;      /* logical prio the kernel last accepted; apply_lock */
	_Atomic(uint64_t) real_calls, real_errors; /* errors: failed boosts, reported */
	/* Statistics, readable by tests. */
	_Atomic(uint64_t) walk_steps;   /* chain-walk steps of walks this task started */
	_Atomic(uint64_t) depth_hits;   /* walks cut off at max_depth */
	struct lb_rtmutex_waiter waiter;    /* a task blocks on one lock at a time */
};

/* The per-thread context, spelled as every lock's is (doc/embedding.md). */
typedef struct lb_rtmutex_task lb_rtmutex_ctx_t;

struct lb_rtmutex_stats {
	_Atomic(uint64_t) fast, slow, steals, sleeps, spins, boosts, walk_steps, real_sched;
	_Atomic(uint64_t) real_errors; /* sched_setscheduler calls the kernel refused */
};

typedef struct lb_rtmutex {
	_Atomic(uintptr_t) owner;       /* struct lb_rtmutex_task * | HAS_WAITERS */
	struct lb_rtmutex_ilock wait_lock;
	unsigned int flags;            /* LB_RTMUTEX_F_* */
	struct lb_rtmutex_waiter *head;     /* waiters by (prio desc, seq); wait_lock */
	uint64_t seq;                  /* wait_lock */
	struct lb_rtmutex_stats st;    /* counted only where LB_RTMUTEX_COUNTING */
} lb_rtmutex_t;

/* All-zero, as lb_rtmutex_init(m, NULL); C++ spells that {} (-Wextra). */
#ifdef __cplusplus
#define LB_RTMUTEX_INITIALIZER {}
#else
#define LB_RTMUTEX_INITIALIZER { 0 }
#endif

#if LB_RTMUTEX_COUNTING
#define LB_RTMUTEX_COUNT(m, field)                                                  \
	do {                                                                   \
		if (m)                                                         \
			atomic_fetch_add_explicit(&(m)->st.field, 1, memory_order_relaxed); \
	} while (0)
#define LB_RTMUTEX_COUNT_N(m, field, n)                                             \
	do {                                                                   \
		if ((m) && (n))                                                \
			atomic_fetch_add_explicit(&(m)->st.field, (n), memory_order_relaxed); \
	} while (0)
/* Only the holder writes `fast`: a plain load+store, no locked RMW. */
#define LB_RTMUTEX_COUNT_HELD(m, field)                                             \
	atomic_store_explicit(&(m)->st.field,                                  \
			      atomic_load_explicit(&(m)->st.field, memory_order_relaxed) + 1, \
			      memory_order_relaxed)
#else
#define LB_RTMUTEX_COUNT(m, field) ((void)(m))
#define LB_RTMUTEX_COUNT_N(m, field, n) ((void)(m), (void)(n))
#define LB_RTMUTEX_COUNT_HELD(m, field) ((void)(m))
#endif

/* ---- internal lock: spin briefly, then sleep --------------------------- */

/* The futex scope of l's word: FUTEX_PRIVATE_FLAG, or 0 (shared). */
static inline int lb_rtmutex_ilock_scope(struct lb_rtmutex_ilock *l)
{
	return lb_load_relaxed(&l->shared) != LB_RTMUTEX_SCOPE_PRIVATE ? 0 : FUTEX_PRIVATE_FLAG;
}

/* 0 -> 1.  Acquire: pairs with the release in lb_rtmutex_ilock_unlock. */
static inline bool lb_rtmutex_ilock_trylock(struct lb_rtmutex_ilock *l)
{
	uint32_t z = 0;
	return atomic_compare_exchange_strong_explicit(&l->v, &z, 1, memory_order_acquire,
						       memory_order_relaxed);
}

static LB_UNUSED LB_NOINLINE void lb_rtmutex_ilock_lock_slow(struct lb_rtmutex_ilock *l)
{
	uint32_t i = lb_spin_loops(LB_RTMUTEX_ILOCK_SPIN_NS), v; /* i >= 1 */

	/* Spin loop: holders keep the lock for a few dozen instructions; read
	 * relaxed and only try the CAS (acquire) when it looks free.  The
	 * budget is i looks, each followed by a pause (a failed CAS too). */
	for (;;) {
		lb_cond_load_relaxed_until(v, &l->v, v == 0, --i == 0);
		if (v == 0 && lb_rtmutex_ilock_trylock(l))
			return;
		lb_cond_load_pause(&l->v); /* after a failed CAS, or the budget's last look */
		if (v != 0 || --i == 0)
			break; /* v != 0: the budget ran out in the look above */
	}
	/* Sleep loop: a holder preempted on our CPU by us (SCHED_FIFO) would
	 * never release while we spin.  * -> 2 marks a sleeper; acquire pairs
	 * with the release exchange in unlock when we get it at 0.  The scope
	 * is read after each exchange, so a sleeper that read the old one
	 * (private) found the lock held before or during the change: it is
	 * woken as every CHANGED unlock wakes one sleeper of each scope. */
	while (atomic_exchange_explicit(&l->v, 2, memory_order_acquire) != 0)
		lb_futex_wait_scoped(&l->v, 2, NULL, lb_rtmutex_ilock_scope(l));
}

static inline void lb_rtmutex_ilock_lock(struct lb_rtmutex_ilock *l)
{
	if (!lb_rtmutex_ilock_trylock(l))
		lb_rtmutex_ilock_lock_slow(l);
}

/* * -> 0.  Release: publishes the section's writes to the next holder.
 * The scope is read while we still hold l (it only changes under l, in
 * lb_rtmutex__task_share).  After a change, private sleepers of the old
 * scope may remain (asleep, or about to sleep, when it changed): every
 * wake then also wakes one of them; each woken one marks 2 again when it
 * retries, so the next unlock wakes the next, until none is left (the
 * extra FUTEX_WAKE costs only tasks that changed scope). */
static inline void lb_rtmutex_ilock_unlock(struct lb_rtmutex_ilock *l)
{
	uint32_t scope = lb_load_relaxed(&l->shared);
	if (atomic_exchange_explicit(&l->v, 0, memory_order_release) == 2) {
		lb_futex_wake_scoped(&l->v, 1,
				     scope == LB_RTMUTEX_SCOPE_PRIVATE ? FUTEX_PRIVATE_FLAG : 0);
		if (scope == LB_RTMUTEX_SCOPE_CHANGED)
			lb_futex_wake_scoped(&l->v, 1, FUTEX_PRIVATE_FLAG);
	}
}

/* ---- owner word helpers -------------------------------------------------- */

static inline struct lb_rtmutex_task *lb_rtmutex_owner_of(uintptr_t word)
{
	return (struct lb_rtmutex_task *)(word & ~LB_RTMUTEX_HAS_WAITERS);
}

static inline struct lb_rtmutex_task *lb_rtmutex_owner(const lb_rtmutex_t *m)
{
	/* C11 atomic loads take non-const pointers. */
	return lb_rtmutex_owner_of(lb_load_relaxed(&((lb_rtmutex_t *)m)->owner));
}

/* A snapshot for assertions and statistics; not a synchronisation point. */
static inline bool lb_rtmutex_is_locked(const lb_rtmutex_t *m)
{
	return lb_rtmutex_owner(m) != NULL;
}

/* ---- sorted lists ------------------------------------------------------ */

/*
 * Both lists keep one order, "a sorts before b", and insert a waiter ahead
 * of the first one it sorts before, so equal keys keep insertion order.
 * The queue: higher prio first, FIFO (lower seq) among equals.  pi_waiters:
 * higher pi_prio first.
 */
static inline bool lb_rtmutex_sorts_before(enum lb_rtmutex_list list,
					   const struct lb_rtmutex_waiter *a,
					   const struct lb_rtmutex_waiter *b)
{
	if (list == LB_RTMUTEX_LIST_PI)
		return a->pi_prio > b->pi_prio;
	return a->prio > b->prio || (a->prio == b->prio && a->seq < b->seq);
}

/* Insert w into the sorted list at *head; the caller holds the list's lock. */
static inline void lb_rtmutex_list_add(enum lb_rtmutex_list list, struct lb_rtmutex_waiter **head,
				       struct lb_rtmutex_waiter *w)
{
	struct lb_rtmutex_waiter *prev = NULL, *cur = *head;
	while (cur && !lb_rtmutex_sorts_before(list, w, cur)) {
		prev = cur;
		cur = cur->link[list].next;
	}
	w->link[list].prev = prev;
	w->link[list].next = cur;
	if (cur)
		cur->link[list].prev = w;
	if (prev)
		prev->link[list].next = w;
	else
		*head = w;
}

/* Unlink w from the list at *head; the caller holds the list's lock. */
static inline void lb_rtmutex_list_del(enum lb_rtmutex_list list, struct lb_rtmutex_waiter **head,
				       struct lb_rtmutex_waiter *w)
{
	struct lb_rtmutex_link *l = &w->link[list];
	if (l->prev)
		l->prev->link[list].next = l->next;
	else
		*head = l->next;
	if (l->next)
		l->next->link[list].prev = l->prev;
	l->next = l->prev = NULL;
}

/* wait_lock held. */
static inline void lb_rtmutex_queue_add(lb_rtmutex_t *m, struct lb_rtmutex_waiter *w)
{
	lb_rtmutex_list_add(LB_RTMUTEX_LIST_QUEUE, &m->head, w);
}

/* wait_lock held. */
static inline void lb_rtmutex_queue_del(lb_rtmutex_t *m, struct lb_rtmutex_waiter *w)
{
	lb_rtmutex_list_del(LB_RTMUTEX_LIST_QUEUE, &m->head, w);
}

/* t->pi_lock held.  The key is w's queue prio, copied as it goes in. */
static inline void lb_rtmutex_pi_add(struct lb_rtmutex_task *t, struct lb_rtmutex_waiter *w)
{
	w->pi_prio = w->prio;
	lb_rtmutex_list_add(LB_RTMUTEX_LIST_PI, &t->pi_head, w);
	w->on_pi = true;
}

/* t->pi_lock held. */
static inline void lb_rtmutex_pi_del(struct lb_rtmutex_task *t, struct lb_rtmutex_waiter *w)
{
	if (!w->on_pi)
		abort(); /* invariant: a lock's top waiter is in its owner's list */
	lb_rtmutex_list_del(LB_RTMUTEX_LIST_PI, &t->pi_head, w);
	w->on_pi = false;
}

/*
 * t->pi_lock held.  effective = max(base, top pi waiter).  Returns true if
 * it changed.  Relaxed store: readers that need more take pi_lock.
 */
static inline bool lb_rtmutex_adjust(struct lb_rtmutex_task *t)
{
	int e = t->base_prio;
	if (t->pi_head && t->pi_head->pi_prio > e)
		e = t->pi_head->pi_prio;
	if (e == lb_load_relaxed(&t->eff_prio))
		return false;
	lb_store_relaxed(&t->eff_prio, e);
	return true;
}

/* ---- real (kernel) priority -------------------------------------------- */

/* Push one logical priority into the kernel scheduler for t's thread. */
static inline bool lb_rtmutex_real_apply(struct lb_rtmutex_task *t, int want)
{
	struct sched_param sp;
	memset(&sp, 0, sizeof(sp));
	sp.sched_priority = want > 0 ? want : 0;
	int policy = want > 0 ? SCHED_FIFO : t->normal_policy;
	atomic_fetch_add_explicit(&t->real_calls, 1, memory_order_relaxed);
	if (sched_setscheduler(t->tid, policy, &sp) == 0)
		return true;
	atomic_fetch_add_explicit(&t->real_errors, 1, memory_order_relaxed);
	return false;
}

/* Why a PI futex call failed where it cannot (a bug, or a kernel without
 * PI futexes): one line, then abort, as the lock's other invariants do. */
static LB_UNUSED LB_NOINLINE void lb_rtmutex_apply_lock_abort(const char *op)
{
	fprintf(stderr, "lockbench rtmutex: %s on a task's apply lock failed: %s\n", op,
		strerror(errno));
	abort();
}

/*
 * t->apply_lock: one applier of t's priority at a time.  A kernel PI futex
 * (FUTEX_LOCK_PI): the word is 0, or the TID of the thread inside
 * lb_rtmutex_real_sync_failed for t, with FUTEX_WAITERS while others wait
 * in the kernel.  A thread blocked on it lends its kernel priority to the
 * holder, so a holder preempted with a stale value just applied runs again
 * at the priority of whoever waits to apply a newer one.  Always a shared
 * futex (no FUTEX_PRIVATE_FLAG): shared tasks have appliers in several
 * processes, a task's scope changes (lb_rtmutex__task_share) while one key
 * must serve all its waiters, and a shared key works on private memory too.
 * The kernel is entered only under contention.  A leaf: taken with no
 * internal lock held, and nothing is taken under it.
 */
static LB_UNUSED LB_NOINLINE void lb_rtmutex_apply_lock_slow(struct lb_rtmutex_task *t, uint32_t me)
{
	/* Retry loop: EAGAIN (the holder is exiting) and EINTR retry; ESRCH
	 * (the holder died mid-apply: its process was killed) takes the word
	 * over, keeping FUTEX_WAITERS so our unlock enters the kernel. */
	for (;;) {
		/* The kernel made us the owner: the syscall is a full barrier
		 * after the previous holder's FUTEX_UNLOCK_PI. */
		if (lb_futex(&t->apply_lock, FUTEX_LOCK_PI, 0, NULL, NULL, 0) == 0)
			return;
		if (errno == EAGAIN || errno == EINTR)
			continue;
		if (errno != ESRCH)
			lb_rtmutex_apply_lock_abort("FUTEX_LOCK_PI");
		uint32_t dead = lb_load_relaxed(&t->apply_lock);
		/* Acquire: as in lb_rtmutex_apply_lock (the dead holder
		 * released nothing; this only makes the CAS a lock). */
		if (dead != 0 && lb_cas_acquire(&t->apply_lock, &dead, me | (dead & FUTEX_WAITERS)))
			return;
	}
}

static inline void lb_rtmutex_apply_lock(struct lb_rtmutex_task *t, uint32_t me)
{
	uint32_t z = 0;
	/* Acquire: pairs with the release CAS in lb_rtmutex_apply_unlock. */
	if (!lb_cas_acquire(&t->apply_lock, &z, me))
		lb_rtmutex_apply_lock_slow(t, me);
}

static inline void lb_rtmutex_apply_unlock(struct lb_rtmutex_task *t, uint32_t me)
{
	uint32_t cur = me;
	/* Release: the next holder (acquire CAS) sees our real_applied. */
	if (atomic_compare_exchange_strong_explicit(&t->apply_lock, &cur, 0, memory_order_release,
						    memory_order_relaxed))
		return;
	/* FUTEX_WAITERS: the kernel hands the word to its top waiter and
	 * takes back the priority it lent us.  Retry loop: EAGAIN only. */
	while (lb_futex(&t->apply_lock, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0) != 0) {
		if (errno != EAGAIN && errno != EINTR)
			lb_rtmutex_apply_lock_abort("FUTEX_UNLOCK_PI");
	}
}

/*
 * Make t's kernel priority match its effective priority.  Called by every
 * thread that changed t's eff_prio, after dropping every internal lock (it
 * is a syscall), and synchronous like the kernel's rt_mutex_setprio(): the
 * caller applies the value itself and re-reads eff_prio until what it
 * applied is still current.  No thread ever leaves the apply to another:
 * a booster preempted half-way (a low-priority applier behind hogs) must
 * not delay a higher-priority booster's change (issue 14; the test
 * rtmutex-applier reproduces it).
 *
 * Read, apply and re-read happen under t's apply lock (a kernel PI futex,
 * above), so the kernel sees t's applies in lock order.  Unserialised, a
 * stale call could land after a newer one: X (FIFO 10) reads 10; H (FIFO
 * 50) stores 50, applies it and sleeps; X's call of 10 lands after it, and a
 * FIFO-30 hog preempting X before its re-read left t at 10 for as long as
 * the hog ran (issue 39; the test rtmutex-stale-boost scripts it).  Now H
 * waits for the lock instead, lending X its priority 50: X applies its
 * stale 10, re-reads 50 and applies it above the hog, then H applies.
 * Why no stale value stays: a writer stores eff_prio (under pi_lock), then
 * takes the apply lock and reads it, so it reads its own value or a newer
 * one; every later holder reads after it (the lock orders them), and each
 * holder's calls complete before it unlocks.  The last call is thus of the
 * final eff_prio, and while a stale value is applied its applier holds the
 * lock, running at least at the priority of every thread that waits to
 * apply a newer one.
 * A failed call is counted in real_errors and not recorded in real_applied
 * (the last value the kernel accepted).  Returns the number of
 * sched_setscheduler calls made.
 */
static inline unsigned int lb_rtmutex_real_sync_failed(struct lb_rtmutex_task *t, unsigned int *failed)
{
	unsigned int calls = 0;
	if (!(t->flags & LB_RTMUTEX_TASK_REAL))
		return 0;
	uint32_t me = lb_gettid();
	lb_rtmutex_apply_lock(t, me);
	/* Relaxed: our own eff_prio store is sequenced before this read, and
	 * earlier holders' reads before our acquire of the apply lock, so
	 * coherence gives us their value or a newer one. */
	int want = lb_load_relaxed(&t->eff_prio);
	/* Apply-until-stable loop: ends when eff_prio did not move while we
	 * applied; each pass follows a real change by a thread that will
	 * apply after us (waiting on the apply lock, it lends us its
	 * priority). */
	for (;;) {
		if (lb_rtmutex_real_apply(t, want))
			lb_store_relaxed(&t->real_applied, want);
		else
			(*failed)++;
		calls++;
		int now = lb_load_relaxed(&t->eff_prio);
		if (now == want)
			break;
		want = now;
	}
	lb_rtmutex_apply_unlock(t, me);
	return calls;
}

/* lb_rtmutex_real_sync_failed without the failure count (tests, setprio). */
static inline unsigned int lb_rtmutex_real_sync(struct lb_rtmutex_task *t)
{
	unsigned int failed = 0;
	return lb_rtmutex_real_sync_failed(t, &failed);
}

/* Sync t's kernel priority and count the calls, and the refused ones
 * (reported, never recorded as applied), in m's counters. */
#define LB_RTMUTEX_SYNC(m, t)                                                       \
	do {                                                                   \
		unsigned int failed_ = 0;                                      \
		unsigned int calls_ = lb_rtmutex_real_sync_failed((t), &failed_);   \
		LB_RTMUTEX_COUNT_N(m, real_sched, calls_);                          \
		LB_RTMUTEX_COUNT_N(m, real_errors, failed_);                        \
	} while (0)

/* Probe thread of lb_rtmutex_real_boost_available_prio: created with the
 * policy under test, it only has to exist. */
static inline void *lb_rtmutex_probe_thread(void *arg)
{
	return arg;
}

/*
 * May this process run threads under SCHED_FIFO at priority prio (1..99)?
 * Probes by creating a short-lived thread with that policy and priority
 * (pthread_create fails with EPERM when RLIMIT_RTPRIO or the missing
 * capability forbids it), so the calling thread's own scheduling is never
 * touched.  Costs one thread creation.
 */
static inline bool lb_rtmutex_real_boost_available_prio(int prio)
{
	pthread_attr_t attr;
	pthread_t th;
	struct sched_param sp;
	memset(&sp, 0, sizeof(sp));
	sp.sched_priority = prio;
	if (prio < 1 || prio > LB_RTMUTEX_PRIO_MAX || pthread_attr_init(&attr) != 0)
		return false;
	bool ok = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED) == 0 &&
		  pthread_attr_setschedpolicy(&attr, SCHED_FIFO) == 0 &&
		  pthread_attr_setschedparam(&attr, &sp) == 0 &&
		  pthread_create(&th, &attr, lb_rtmutex_probe_thread, NULL) == 0;
	pthread_attr_destroy(&attr);
	if (ok)
		pthread_join(th, NULL);
	return ok;
}

/*
 * May every boost land in the kernel?  A boost carries the top waiter's
 * priority, up to 99, so that is what is probed: with RLIMIT_RTPRIO below
 * 99 real boosting is reported off rather than failing on the first
 * high-priority waiter.  lb_rtmutex_real_boost_available_prio() asks about
 * a lower ceiling.
 */
static inline bool lb_rtmutex_real_boost_available(void)
{
	return lb_rtmutex_real_boost_available_prio(LB_RTMUTEX_PRIO_MAX);
}

/* ---- task records ---------------------------------------------------- */

/*
 * Initialise the calling thread's task record.  The base priority is read
 * from the thread's current policy (SCHED_FIFO/RR priority, else 0).
 */
static inline void lb_rtmutex_ctx_init(struct lb_rtmutex_task *t, unsigned int flags)
{
	struct sched_param sp = { 0 };
	int policy = sched_getscheduler(0);
	/* All-zero is every field's initial state; (void *): C++ sees atomics. */
	memset((void *)t, 0, sizeof(*t));
	if (policy < 0 || sched_getparam(0, &sp) != 0)
		policy = SCHED_OTHER;
	policy &= ~SCHED_RESET_ON_FORK;
	bool rt = policy == SCHED_FIFO || policy == SCHED_RR;
	t->base_prio = rt ? sp.sched_priority : 0;
	lb_store_relaxed(&t->eff_prio, t->base_prio);
	lb_store_relaxed(&t->real_applied, t->base_prio);
	t->normal_policy = rt ? SCHED_OTHER : policy;
	t->flags = flags;
	t->max_depth = LB_RTMUTEX_MAX_DEPTH;
	t->tid = (pid_t)lb_gettid();
	t->self = pthread_self(); /* a record only: boosts use tid (system-wide) */
	t->waiter.task = t;
	LB_RTMUTEX_TASK_BIND(t);
	/* Nobody sees t yet: a plain (relaxed) store. */
	if (flags & LB_RTMUTEX_TASK_SHARED)
		lb_store_relaxed(&t->pi_lock.shared, LB_RTMUTEX_SCOPE_SHARED);
}

/* Flags chosen from the environment: REAL if SCHED_FIFO is permitted, SPIN
 * if the thread may run on more than one CPU. */
static inline unsigned int lb_rtmutex_task_auto_flags(void)
{
	unsigned int flags = 0;
	cpu_set_t set;
	if (lb_rtmutex_real_boost_available())
		flags |= LB_RTMUTEX_TASK_REAL;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 1)
		flags |= LB_RTMUTEX_TASK_SPIN;
	return flags;
}

static inline void lb_rtmutex_ctx_init_auto(struct lb_rtmutex_task *t)
{
	lb_rtmutex_ctx_init(t, lb_rtmutex_task_auto_flags());
}

/* Chain-walk depth limit for walks started by t (testing; default 1024). */
static inline void lb_rtmutex_task_set_max_depth(struct lb_rtmutex_task *t, unsigned int depth)
{
	t->max_depth = depth;
}

static inline int lb_rtmutex_task_eff_prio(struct lb_rtmutex_task *t)
{
	return atomic_load_explicit(&t->eff_prio, memory_order_relaxed);
}

static inline int lb_rtmutex_task_base_prio(struct lb_rtmutex_task *t)
{
	lb_rtmutex_ilock_lock(&t->pi_lock);
	int b = t->base_prio;
	lb_rtmutex_ilock_unlock(&t->pi_lock);
	return b;
}

/* The lock t is blocked on, or NULL. */
static inline lb_rtmutex_t *lb_rtmutex_task_blocked_on(struct lb_rtmutex_task *t)
{
	lb_rtmutex_ilock_lock(&t->pi_lock);
	lb_rtmutex_t *m = t->blocked_on ? t->blocked_on->lock : NULL;
	lb_rtmutex_ilock_unlock(&t->pi_lock);
	return m;
}

/* Does t hold no lock that has waiters (its pi_waiters list is empty)? */
static inline bool lb_rtmutex_task_pi_empty(struct lb_rtmutex_task *t)
{
	lb_rtmutex_ilock_lock(&t->pi_lock);
	bool e = t->pi_head == NULL;
	lb_rtmutex_ilock_unlock(&t->pi_lock);
	return e;
}

/* Snapshot of m's queue in order: up to max tasks into out[]; returns count. */
static inline size_t lb_rtmutex_waiter_tasks(lb_rtmutex_t *m, struct lb_rtmutex_task **out, size_t max)
{
	size_t n = 0;
	lb_rtmutex_ilock_lock(&m->wait_lock);
	for (struct lb_rtmutex_waiter *w = m->head; w && n < max;
	     w = w->link[LB_RTMUTEX_LIST_QUEUE].next)
		out[n++] = w->task;
	lb_rtmutex_ilock_unlock(&m->wait_lock);
	return n;
}

/* ---- wake-up ----------------------------------------------------------- */

/*
 * Wake w's task.  Release: the exchange follows our wait_lock section, so
 * the waiter's re-check under wait_lock sees the state we left.  A spinning
 * waiter (SPIN) sees WOKEN in its loop; only a (possibly) sleeping one needs
 * the syscall.
 */
static inline void lb_rtmutex_wake(struct lb_rtmutex_waiter *w)
{
	/* Acquire too: when we take SLEEP from the waiter's re-arm (a release),
	 * we see its task's futex scope as it was when it armed, which is the
	 * scope it sleeps in (a stale wake for an earlier wait included). */
	if (atomic_exchange_explicit(&w->wake, LB_RTMUTEX_WAKE_WOKEN, memory_order_acq_rel) ==
	    LB_RTMUTEX_WAKE_SLEEP)
		lb_futex_wake_scoped(&w->wake, 1, lb_rtmutex_ilock_scope(&w->task->pi_lock));
}

/* ---- the chain walk ---------------------------------------------------- */

/*
 * Propagate a priority change along the chain that starts with `task`, a
 * task whose effective priority may have changed and which was blocked on
 * `next_lock` when the caller looked.  No internal lock is held on entry.
 *
 *  orig_lock    lock the walk started from (deadlock check), or NULL
 *  orig_waiter  waiter that started it (NULL: deboost or priority change)
 *  top_task     task that started it: finding it as an owner is a deadlock
 *  detect       walk the whole chain even if nothing changes
 *  cm           lock whose counters are charged, or NULL
 *
 * Each step: [1] depth check; [2] under task->pi_lock, stop if task is no
 * longer blocked on next_lock, if the original lock was released, or (no
 * detection) if task's change does not matter; [3] trylock the lock's
 * wait_lock (reverse order: on failure drop pi_lock, wait, retry); [4]
 * deadlock check; [5] re-sort task's waiter at task's effective priority;
 * [6] lock unowned: wake a new top waiter, end; [7] under owner->pi_lock
 * swap the lock's top waiter in owner's pi_waiters and recompute owner's
 * priority; [8] continue with owner if it is blocked and (no detection) the
 * waiter still tops the lock.  Returns 0 or EDEADLK.
 */
static LB_UNUSED LB_NOINLINE int lb_rtmutex_walk(struct lb_rtmutex_task *task, bool detect,
					  lb_rtmutex_t *orig_lock, lb_rtmutex_t *next_lock,
					  struct lb_rtmutex_waiter *orig_waiter,
					  struct lb_rtmutex_task *top_task, lb_rtmutex_t *cm)
{
	struct lb_rtmutex_waiter *top_waiter = orig_waiter;
	unsigned int depth = 0;

	for (;;) {
		/* [1] */
		if (++depth > top_task->max_depth) {
			atomic_fetch_add_explicit(&top_task->depth_hits, 1, memory_order_relaxed);
			return EDEADLK;
		}
		atomic_fetch_add_explicit(&top_task->walk_steps, 1, memory_order_relaxed);
		LB_RTMUTEX_COUNT(cm, walk_steps);
	retry:
		/* [2] */
		lb_rtmutex_ilock_lock(&task->pi_lock);
		struct lb_rtmutex_waiter *w = task->blocked_on;
		if (!w || w->lock != next_lock)
			goto out_task; /* woke up or now blocked elsewhere */
		if (orig_waiter && !lb_rtmutex_owner(orig_lock))
			goto out_task; /* released: its new owner handles the rest */
		bool requeue = true;
		if (top_waiter) {
			if (!task->pi_head)
				goto out_task; /* task no longer holds a contended lock */
			if (top_waiter != task->pi_head) {
				if (!detect)
					goto out_task; /* our waiter does not set task's prio */
				requeue = false;
			}
		}
		if (w->prio == lb_load_relaxed(&task->eff_prio)) {
			if (!detect)
				goto out_task; /* nothing to propagate: stop early */
			requeue = false;
		}
		/* [3] */
		lb_rtmutex_t *m = w->lock;
		if (!lb_rtmutex_ilock_trylock(&m->wait_lock)) {
			lb_rtmutex_ilock_unlock(&task->pi_lock);
			/* Wait for the holder (sleeping if need be), then retry. */
			lb_rtmutex_ilock_lock(&m->wait_lock);
			lb_rtmutex_ilock_unlock(&m->wait_lock);
			goto retry;
		}
		/* [4] */
		struct lb_rtmutex_task *owner = lb_rtmutex_owner(m);
		if (m == orig_lock || owner == top_task) {
			lb_rtmutex_ilock_unlock(&m->wait_lock);
			lb_rtmutex_ilock_unlock(&task->pi_lock);
			return EDEADLK;
		}
		if (!requeue) {
			/* Detection only: follow the chain, change nothing. */
			lb_rtmutex_ilock_unlock(&task->pi_lock);
			if (!owner) {
				lb_rtmutex_ilock_unlock(&m->wait_lock);
				return 0;
			}
			lb_rtmutex_ilock_lock(&owner->pi_lock);
			next_lock = owner->blocked_on ? owner->blocked_on->lock : NULL;
			lb_rtmutex_ilock_unlock(&owner->pi_lock);
			lb_rtmutex_ilock_unlock(&m->wait_lock);
			if (!next_lock)
				return 0;
			task = owner;
			continue;
		}
		/* [5] */
		struct lb_rtmutex_waiter *prev_top = m->head;
		lb_rtmutex_queue_del(m, w);
		w->prio = lb_load_relaxed(&task->eff_prio);
		w->seq = m->seq++;
		lb_rtmutex_queue_add(m, w);
		lb_rtmutex_ilock_unlock(&task->pi_lock);
		/* [6] */
		if (!owner) {
			struct lb_rtmutex_waiter *nt = m->head;
			lb_rtmutex_ilock_unlock(&m->wait_lock);
			if (nt != prev_top)
				lb_rtmutex_wake(nt);
			return 0;
		}
		/* [7] */
		bool changed = false;
		lb_rtmutex_ilock_lock(&owner->pi_lock);
		if (w == m->head) {
			lb_rtmutex_pi_del(owner, prev_top); /* prev_top may be w itself */
			lb_rtmutex_pi_add(owner, w);
			changed = lb_rtmutex_adjust(owner);
		} else if (w == prev_top) {
			lb_rtmutex_pi_del(owner, w);
			w = m->head;
			lb_rtmutex_pi_add(owner, w);
			changed = lb_rtmutex_adjust(owner);
		}
		next_lock = owner->blocked_on ? owner->blocked_on->lock : NULL;
		top_waiter = m->head;
		lb_rtmutex_ilock_unlock(&owner->pi_lock);
		lb_rtmutex_ilock_unlock(&m->wait_lock);
		if (changed) {
			LB_RTMUTEX_COUNT(cm, boosts);
			LB_PROBE_PI_BOOST(cm, owner, lb_load_relaxed(&owner->eff_prio));
			LB_RTMUTEX_SYNC(cm, owner);
		}
		/* [8] */
		if (!next_lock)
			return 0;
		if (!detect && w != top_waiter)
			return 0;
		task = owner;
	}
out_task:
	lb_rtmutex_ilock_unlock(&task->pi_lock);
	return 0;
}

/* ---- acquisition ------------------------------------------------------- */

/* May a thread at prio take a free lock ahead of waiter top? */
static inline bool lb_rtmutex_may_steal(const lb_rtmutex_t *m, int prio, const struct lb_rtmutex_waiter *top)
{
	if (prio > top->prio)
		return true;
	return (m->flags & LB_RTMUTEX_F_LATERAL_STEAL) && prio == 0 && top->prio == 0;
}

/*
 * wait_lock held.  Try to make t the owner; w is t's queued waiter or NULL
 * (first attempt, trylock).  Transitions: (NULL, *) -> (t, waiters?).
 * *boosted is set if the waiters left behind raised t's priority (the
 * caller then syncs t's real priority once wait_lock is dropped).
 */
static inline bool lb_rtmutex_take_try(lb_rtmutex_t *m, struct lb_rtmutex_task *t, struct lb_rtmutex_waiter *w,
				  bool *boosted)
{
	/* Set HAS_WAITERS before looking: the owner can no longer release on
	 * the fast path, so the word only changes under wait_lock.  acq_rel:
	 * if it is free we must see the last holder's writes (pairs with the
	 * release CAS in lb_rtmutex_unlock). */
	uintptr_t o = atomic_fetch_or_explicit(&m->owner, LB_RTMUTEX_HAS_WAITERS,
					       memory_order_acq_rel);
	if (lb_rtmutex_owner_of(o))
		return false;
	struct lb_rtmutex_waiter *top = m->head;
	if (w) {
		if (w != top && !lb_rtmutex_may_steal(m, w->prio, top))
			return false;
	} else if (top && !lb_rtmutex_may_steal(m, lb_load_relaxed(&t->eff_prio), top)) {
		return false;
	}
	if (w != top && top)
		LB_RTMUTEX_COUNT(m, steals);
	lb_rtmutex_ilock_lock(&t->pi_lock);
	if (w) {
		lb_rtmutex_queue_del(m, w);
		t->blocked_on = NULL;
	}
	struct lb_rtmutex_waiter *nt = m->head;
	if (nt) {
		lb_rtmutex_pi_add(t, nt);
		if (lb_rtmutex_adjust(t))
			*boosted = true;
	}
	lb_rtmutex_ilock_unlock(&t->pi_lock);
	/* Relaxed: nobody else writes the word while bit 0 is set and we hold
	 * wait_lock; wait_lock's release publishes it. */
	lb_store_relaxed(&m->owner, (uintptr_t)t | (nt ? LB_RTMUTEX_HAS_WAITERS : 0));
	return true;
}

/* wait_lock held.  Clear a stale HAS_WAITERS when the queue is empty. */
static inline void lb_rtmutex_fix_waiters_bit(lb_rtmutex_t *m)
{
	if (m->head)
		return;
	uintptr_t o = lb_load_relaxed(&m->owner);
	/* Release: if the lock is free, a fast-path acquirer must see the
	 * last holder's writes, which we acquired through wait_lock. */
	lb_store_release(&m->owner, o & ~LB_RTMUTEX_HAS_WAITERS);
}

/*
 * wait_lock held, take_try failed.  Queue w and boost the owner; may drop
 * and retake wait_lock (real boost, chain walk).  Returns 0 or EDEADLK.
 */
static inline int lb_rtmutex_block_on(lb_rtmutex_t *m, struct lb_rtmutex_task *t, struct lb_rtmutex_waiter *w,
				 bool detect)
{
	struct lb_rtmutex_task *owner = lb_rtmutex_owner(m);
	if (owner == t)
		return EDEADLK;
	lb_rtmutex_ilock_lock(&t->pi_lock);
	w->lock = m;
	w->prio = lb_load_relaxed(&t->eff_prio);
	w->seq = m->seq++;
	t->blocked_on = w;
	lb_rtmutex_ilock_unlock(&t->pi_lock);
	struct lb_rtmutex_waiter *old_top = m->head;
	lb_rtmutex_queue_add(m, w);
	if (!owner)
		return 0; /* free, a woken waiter is on its way: we retry too */

	bool changed = false;
	lb_rtmutex_ilock_lock(&owner->pi_lock);
	if (m->head == w) {
		if (old_top)
			lb_rtmutex_pi_del(owner, old_top);
		lb_rtmutex_pi_add(owner, w);
		changed = lb_rtmutex_adjust(owner);
	}
	lb_rtmutex_t *next = owner->blocked_on ? owner->blocked_on->lock : NULL;
	lb_rtmutex_ilock_unlock(&owner->pi_lock);
	bool walk = next && (changed || detect);
	if (!changed && !walk)
		return 0;

	int ret = 0;
	lb_rtmutex_ilock_unlock(&m->wait_lock);
	if (changed) {
		LB_RTMUTEX_COUNT(m, boosts);
		LB_PROBE_PI_BOOST(m, owner, lb_load_relaxed(&owner->eff_prio));
		LB_RTMUTEX_SYNC(m, owner);
	}
	if (walk)
		ret = lb_rtmutex_walk(owner, detect, m, next, w, t, m);
	lb_rtmutex_ilock_lock(&m->wait_lock);
	return ret;
}

/*
 * wait_lock held.  Take t's queued waiter w off m after an error and undo
 * the boost it gave the owner; may drop and retake wait_lock.
 */
static inline void lb_rtmutex_remove_waiter(lb_rtmutex_t *m, struct lb_rtmutex_task *t,
				       struct lb_rtmutex_waiter *w)
{
	bool was_top = m->head == w;
	struct lb_rtmutex_task *owner = lb_rtmutex_owner(m);
	lb_rtmutex_ilock_lock(&t->pi_lock);
	lb_rtmutex_queue_del(m, w);
	t->blocked_on = NULL;
	lb_rtmutex_ilock_unlock(&t->pi_lock);
	if (!was_top)
		return;
	if (!owner) {
		/* Free with waiters: we may have been the woken one; pass it on. */
		if (m->head)
			lb_rtmutex_wake(m->head);
		return;
	}
	lb_rtmutex_ilock_lock(&owner->pi_lock);
	lb_rtmutex_pi_del(owner, w);
	if (m->head)
		lb_rtmutex_pi_add(owner, m->head);
	bool changed = lb_rtmutex_adjust(owner);
	lb_rtmutex_t *next = owner->blocked_on ? owner->blocked_on->lock : NULL;
	lb_rtmutex_ilock_unlock(&owner->pi_lock);
	if (!changed)
		return;
	lb_rtmutex_ilock_unlock(&m->wait_lock);
	LB_RTMUTEX_SYNC(m, owner);
	if (next)
		(void)lb_rtmutex_walk(owner, false, m, next, NULL, t, m);
	lb_rtmutex_ilock_lock(&m->wait_lock);
}

/*
 * Slow path of lock: queue, boost, then spin (top waiter, bounded) or
 * sleep until take_try succeeds.  Out of line so that profiles name it and
 * the fast path stays a few instructions.  abs: give up when it passes
 * (CLOCK_MONOTONIC; NULL = never).  Returns 0, EDEADLK or ETIMEDOUT.
 */
static LB_UNUSED LB_NOINLINE int lb_rtmutex_lock_slow(lb_rtmutex_t *m, struct lb_rtmutex_task *t,
						   bool detect, const struct timespec *abs)
{
	struct lb_rtmutex_waiter *w = &t->waiter;
	bool boosted = false, timed_out = false;
	int ret = 0;
	/* Our wake word's futex scope, which wakers read from our pi_lock; set
	 * by the fast path we came through and unchanged while we are here. */
	const int scope = lb_rtmutex_ilock_scope(&t->pi_lock);

	/* Optimistic spin before queueing, for normal-priority tasks only:
	 * their boost would be a no-op (0), so queueing them buys no PI, and
	 * staying off the queue keeps both fast paths alive.  Real-time tasks
	 * queue (and boost) at once. */
	if ((t->flags & LB_RTMUTEX_TASK_SPIN) && lb_load_relaxed(&t->eff_prio) == 0) {
		LB_RTMUTEX_COUNT(m, spins);
		uint32_t n = lb_spin_loops(LB_RTMUTEX_SPIN_NS); /* >= 1 */
		uintptr_t o;
		/* Spin loop, bounded (n looks, each followed by a pause, a
		 * failed CAS too): until the lock is free (then CAS, acquire
		 * as in the fast path), has queued waiters (join them), or
		 * the hooks say its owner is off its CPU or we should
		 * reschedule (queue; natively never).  Relaxed looks: the CAS
		 * acquires.  A hook per look: the wait alone, one pause (a
		 * simulated park until the tick would miss a preemption). */
		bool stopped = false;
		for (;;) {
			for (;;) {
				o = lb_load_relaxed(&m->owner);
				if (o == 0 || (o & LB_RTMUTEX_HAS_WAITERS))
					break;
				if (--n == 0)
					break;
				if (!LB_RTMUTEX_OWNER_RUNNING(lb_rtmutex_owner_of(o)) ||
				    LB_RTMUTEX_NEED_RESCHED()) {
					stopped = true;
					break;
				}
				lb_cond_load_pause(&m->owner);
			}
			if (stopped)
				break;
			bool was_free = o == 0;
			if (was_free && atomic_compare_exchange_weak_explicit(
						&m->owner, &o, (uintptr_t)t, memory_order_acq_rel,
						memory_order_relaxed)) {
				LB_RTMUTEX_COUNT_HELD(m, slow);
				return 0;
			}
			if (o & LB_RTMUTEX_HAS_WAITERS)
				break;
			lb_cond_load_pause(&m->owner); /* failed CAS, or the last look */
			if (!was_free || --n == 0)
				break; /* !was_free: the budget ran out in the look above */
		}
	}

	lb_rtmutex_ilock_lock(&m->wait_lock);
	if (lb_rtmutex_take_try(m, t, NULL, &boosted))
		goto out_locked;
	ret = lb_rtmutex_block_on(m, t, w, detect);
	if (ret) {
		if (t->blocked_on == w) /* EDEADLK from the walk: we were queued */
			lb_rtmutex_remove_waiter(m, t, w);
		lb_rtmutex_fix_waiters_bit(m);
		lb_rtmutex_ilock_unlock(&m->wait_lock);
		return ret;
	}
	for (;;) {
		if (lb_rtmutex_take_try(m, t, w, &boosted))
			break;
		uintptr_t o = lb_load_relaxed(&m->owner);
		struct lb_rtmutex_task *owner = lb_rtmutex_owner_of(o);
		bool spin = false;
		if ((t->flags & LB_RTMUTEX_TASK_SPIN) && m->head == w && owner) {
			lb_rtmutex_ilock_lock(&owner->pi_lock);
			/* A blocked owner won't release soon; one off its
			 * CPU neither (natively the hook is 1). */
			spin = owner->blocked_on == NULL && LB_RTMUTEX_OWNER_RUNNING(owner);
			lb_rtmutex_ilock_unlock(&owner->pi_lock);
		}
		/* Re-arm under wait_lock: a waker that picks us later writes
		 * WOKEN after this store (it takes wait_lock after us).
		 * Release: a waker that reads it sees our futex scope
		 * (lb_rtmutex_wake). */
		atomic_store_explicit(&w->wake, spin ? LB_RTMUTEX_WAKE_SPIN : LB_RTMUTEX_WAKE_SLEEP,
				      memory_order_release);
		lb_rtmutex_ilock_unlock(&m->wait_lock);
		if (spin) {
			LB_RTMUTEX_COUNT(m, spins);
			/* Top-waiter spin, bounded: wait for the owner word to
			 * change or for an unlocker to mark us WOKEN, while the
			 * owner runs and we need not reschedule (the hooks;
			 * natively 1 and 0).  Relaxed: we re-check everything
			 * under wait_lock.  It watches two words, so only the
			 * wait is lb_cond_load's, on the owner word (the
			 * unlock's release store), one pause per look. */
			for (uint32_t n = lb_spin_loops(LB_RTMUTEX_SPIN_NS);
			     n && lb_load_relaxed(&m->owner) == o &&
			     lb_load_relaxed(&w->wake) == LB_RTMUTEX_WAKE_SPIN &&
			     LB_RTMUTEX_OWNER_RUNNING(owner) && !LB_RTMUTEX_NEED_RESCHED();
			     n--)
				lb_cond_load_pause(&m->owner);
			uint32_t s = LB_RTMUTEX_WAKE_SPIN;
			/* SPIN -> SLEEP fails only if we were woken: retry now.
			 * acq_rel: release as the re-arm above (our scope). */
			if (!atomic_compare_exchange_strong_explicit(&w->wake, &s, LB_RTMUTEX_WAKE_SLEEP,
								     memory_order_acq_rel,
								     memory_order_acquire) ||
			    lb_load_relaxed(&m->owner) != o)
				goto relock;
		}
		LB_RTMUTEX_COUNT(m, sleeps);
		/* Sleep loop: until an unlocker sets WOKEN (the futex may
		 * return early on a signal or a stale wake-up). */
		while (lb_load_acquire(&w->wake) == LB_RTMUTEX_WAKE_SLEEP) {
			if (!abs) {
				lb_futex_wait_scoped(&w->wake, LB_RTMUTEX_WAKE_SLEEP, NULL, scope);
				continue;
			}
			int saved_errno = errno;
			long r = lb_futex_wait_abs_scoped(&w->wake, LB_RTMUTEX_WAKE_SLEEP, abs, scope);
			timed_out = r == -1 && errno == ETIMEDOUT;
			errno = saved_errno;
			if (timed_out)
				break;
		}
	relock:
		lb_rtmutex_ilock_lock(&m->wait_lock);
		if (timed_out) {
			/* Deadline passed: one last try, else leave the queue
			 * (remove_waiter passes on a wake we may have got). */
			if (lb_rtmutex_take_try(m, t, w, &boosted))
				break;
			lb_rtmutex_remove_waiter(m, t, w);
			lb_rtmutex_fix_waiters_bit(m);
			lb_rtmutex_ilock_unlock(&m->wait_lock);
			return ETIMEDOUT;
		}
	}
out_locked:
	lb_rtmutex_ilock_unlock(&m->wait_lock);
	LB_RTMUTEX_COUNT_HELD(m, slow);
	/* Waiters left behind boosted us as the new owner. */
	if (boosted)
		LB_RTMUTEX_SYNC(m, t);
	return 0;
}

/* A deadlock the plain lock ran into: the kernel WARNs and sleeps forever;
 * a benchmark is better served by a message and a core. */
static inline void lb_rtmutex_deadlock_abort(struct lb_rtmutex_task *t)
{
	fprintf(stderr, "rtmutex: deadlock detected (tid %d)\n", (int)t->tid);
	abort();
}

/* ---- public lock API --------------------------------------------------- */

/*
 * Initialise a lock; attr NULL means the defaults, which equal
 * LB_RTMUTEX_INITIALIZER (all-zero: free, no waiters, strict kernel rule).
 */
static inline void lb_rtmutex_init(lb_rtmutex_t *m, const struct lb_rtmutex_attr *attr)
{
	memset((void *)m, 0, sizeof(*m)); /* (void *): C++ sees the atomics as classes */
	m->flags = attr && attr->lateral_steal ? LB_RTMUTEX_F_LATERAL_STEAL : 0u;
}

/*
 * As lb_rtmutex_init, for a lock in memory several processes map at the same
 * address (MAP_SHARED before fork), with every task record that uses it
 * there too: its wait_lock and the sleeps of its users are shared futexes
 * (see "Processes" above).
 */
static inline void lb_rtmutex_init_shared(lb_rtmutex_t *m, const struct lb_rtmutex_attr *attr)
{
	lb_rtmutex_init(m, attr);
	lb_store_relaxed(&m->wait_lock.shared, LB_RTMUTEX_SCOPE_SHARED); /* before it is published */
}

/*
 * t takes its first shared lock: its pi_lock and its waiter's wake word go
 * shared, once, under its own pi_lock (nobody changes the scope but its
 * holder).  Threads of t's process that read the old scope may still sleep
 * privately on the pi_lock: CHANGED makes every later unlock of it wake one
 * of them too (lb_rtmutex_ilock_unlock).  Other processes reach t only
 * through a shared lock, after this (the fast path's CAS publishes it).
 * Out of line: once per task.
 */
static LB_UNUSED LB_NOINLINE void lb_rtmutex__task_share(struct lb_rtmutex_task *t)
{
	lb_rtmutex_ilock_lock(&t->pi_lock);
	lb_store_relaxed(&t->pi_lock.shared, LB_RTMUTEX_SCOPE_CHANGED);
	lb_rtmutex_ilock_unlock(&t->pi_lock);
}

/*
 * The fast path of every lock call and of trylock: a free lock with no
 * waiters (owner word 0) becomes t's in one CAS 0 -> t, acq_rel: acquire
 * pairs with the release in unlock (we see the previous holder's writes);
 * release publishes our task record to waiters that read the owner word and
 * then lock the record's pi_lock (free on x86: cmpxchg is a full barrier
 * either way).
 */
static inline bool lb_rtmutex__fast_acquire(lb_rtmutex_t *m, struct lb_rtmutex_task *t)
{
	/* Every lock call starts here, before t can be seen through m: a task
	 * on a shared lock goes shared first.  Private locks pay one read, of
	 * m's line that the CAS needs anyway. */
	if (LB_UNLIKELY(lb_load_relaxed(&m->wait_lock.shared)) &&
	    !lb_load_relaxed(&t->pi_lock.shared))
		lb_rtmutex__task_share(t);
	uintptr_t z = 0;
	if (!atomic_compare_exchange_strong_explicit(&m->owner, &z, (uintptr_t)t,
						     memory_order_acq_rel, memory_order_relaxed))
		return false;
	LB_RTMUTEX_COUNT_HELD(m, fast);
	return true;
}

/*
 * What every lock call does: the fast path, else the slow path between the
 * contention probes, with deadlock detection as `detect` says and the
 * deadline abs (NULL: none).  Returns 0 (locked) or the slow path's errno.
 */
static inline int lb_rtmutex__lock(lb_rtmutex_t *m, struct lb_rtmutex_task *t, bool detect,
				   const struct timespec *abs)
{
	if (LB_LIKELY(lb_rtmutex__fast_acquire(m, t)))
		return 0;
	LB_PROBE_CONTENTION_BEGIN(m, LB_CONTENTION_RT);
	int ret = lb_rtmutex_lock_slow(m, t, detect, abs);
	LB_PROBE_CONTENTION_END(m, ret);
	return ret;
}

/*
 * Lock, deadlock detection off (the kernel's rt_mutex_lock): deadlocks the
 * chain walk runs into abort the process.
 */
static inline void lb_rtmutex_lock(lb_rtmutex_t *m, struct lb_rtmutex_task *t)
{
	if (LB_UNLIKELY(lb_rtmutex__lock(m, t, false, NULL)))
		lb_rtmutex_deadlock_abort(t);
}

/*
 * Lock with full deadlock detection: returns 0 (locked) or EDEADLK (t owns
 * m, or a cycle of owners leads back to t, or the chain is longer than t's
 * max_depth), in which case the lock is not taken and no boost remains.
 */
static inline int lb_rtmutex_lock_check(lb_rtmutex_t *m, struct lb_rtmutex_task *t)
{
	return lb_rtmutex__lock(m, t, true, NULL);
}

/*
 * Lock, giving up when abs (CLOCK_MONOTONIC) has passed: 0 or ETIMEDOUT.
 * Deadlock detection off, as lb_rtmutex_lock.  The waiter boosts the owner
 * while it waits and takes the boost back when it leaves on timeout.
 */
static inline int lb_rtmutex_timedlock(lb_rtmutex_t *m, struct lb_rtmutex_task *t,
				       const struct timespec *abs)
{
	int ret = lb_rtmutex__lock(m, t, false, abs);
	if (ret == EDEADLK)
		lb_rtmutex_deadlock_abort(t);
	return ret;
}

/*
 * In a fork() child (one thread left, nothing runs concurrently): forget
 * the waiters and the wait_lock holder, which were other threads.  self is
 * the forking thread's task (NULL: none): a lock it holds stays its own,
 * its pi_lock and its list of top waiters (all vanished) are reset, and its
 * thread id becomes the child's.  A lock held by a vanished task stays held,
 * by `orphan`, a task no live thread has, initialised here (single-threaded,
 * and nothing is blocked on it yet): waiters that come later queue on it
 * and boost it logically (it is not LB_RTMUTEX_TASK_REAL), forever, as a glibc
 * mutex left held across fork.  Plain stores: single-threaded.
 */
static inline void lb_rtmutex_atfork_child(lb_rtmutex_t *m, struct lb_rtmutex_task *self,
					   struct lb_rtmutex_task *orphan)
{
	struct lb_rtmutex_task *owner = lb_rtmutex_owner(m);
	if (owner && owner != self) {
		lb_rtmutex_ctx_init(orphan, 0);
		owner = orphan;
	}
	lb_store_relaxed(&m->owner, (uintptr_t)owner);
	lb_store_relaxed(&m->wait_lock.v, 0);
	m->head = NULL;
	if (self) {
		lb_store_relaxed(&self->pi_lock.v, 0);
		lb_store_relaxed(&self->apply_lock, 0); /* a vanished applier's TID */
		self->pi_head = NULL;
		self->blocked_on = NULL;
		lb_store_relaxed(&self->eff_prio, self->base_prio);
		self->tid = (pid_t)lb_gettid();
	}
}

static LB_UNUSED LB_NOINLINE bool lb_rtmutex_trylock_slow(lb_rtmutex_t *m, struct lb_rtmutex_task *t)
{
	/* Held: fail without wait_lock (only a read; this is a trylock). */
	if (lb_rtmutex_owner(m))
		return false;
	bool boosted = false;
	lb_rtmutex_ilock_lock(&m->wait_lock);
	bool got = lb_rtmutex_take_try(m, t, NULL, &boosted);
	if (!got)
		lb_rtmutex_fix_waiters_bit(m);
	lb_rtmutex_ilock_unlock(&m->wait_lock);
	if (got)
		LB_RTMUTEX_COUNT_HELD(m, slow);
	if (boosted)
		LB_RTMUTEX_SYNC(m, t);
	return got;
}

/* Trylock: free and no waiters (fast), or free and t may steal (slow). */
static inline bool lb_rtmutex_trylock(lb_rtmutex_t *m, struct lb_rtmutex_task *t)
{
	return lb_rtmutex__fast_acquire(m, t) || lb_rtmutex_trylock_slow(m, t);
}

/*
 * Slow unlock: waiters queued (or a locker inside wait_lock).  Deboost,
 * mark the lock free-with-waiters, wake the top waiter, then drop our real
 * priority (after the wake, so nobody between our old and new priority
 * runs before the waiter is runnable).
 */
static LB_UNUSED LB_NOINLINE void lb_rtmutex_unlock_slow(lb_rtmutex_t *m, struct lb_rtmutex_task *t)
{
	lb_rtmutex_ilock_lock(&m->wait_lock);
	struct lb_rtmutex_waiter *top = m->head;
	if (!top) {
		/* (t, 1) -> (NULL, 0).  Release: the next owner sees our
		 * critical section (pairs with its acquire CAS / fetch_or). */
		lb_store_release(&m->owner, 0);
		lb_rtmutex_ilock_unlock(&m->wait_lock);
		return;
	}
	lb_rtmutex_ilock_lock(&t->pi_lock);
	lb_rtmutex_pi_del(t, top);
	bool changed = lb_rtmutex_adjust(t);
	lb_rtmutex_ilock_unlock(&t->pi_lock);
	/* (t, 1) -> (NULL, 1).  Release: as above, for whoever takes it. */
	lb_store_release(&m->owner, LB_RTMUTEX_HAS_WAITERS);
	lb_rtmutex_ilock_unlock(&m->wait_lock);
	lb_rtmutex_wake(top);
	if (changed)
		LB_RTMUTEX_SYNC(m, t);
}

/* Unlock by the owner t.  Fast path: CAS t -> 0, release (pairs with the
 * acquire of the next locker); fails whenever HAS_WAITERS is set. */
static inline void lb_rtmutex_unlock(lb_rtmutex_t *m, struct lb_rtmutex_task *t)
{
	uintptr_t me = (uintptr_t)t;
	if (LB_LIKELY(atomic_compare_exchange_strong_explicit(&m->owner, &me, 0,
							      memory_order_release,
							      memory_order_relaxed)))
		return;
	lb_rtmutex_unlock_slow(m, t);
}

/*
 * Set t's base priority (0..99) from any thread.  If t is blocked, its
 * waiter is re-sorted and the change walks down the chain (the kernel's
 * rt_mutex_adjust_pi).  For a REAL task the kernel policy is re-applied
 * even if the effective priority is unchanged.  Returns 0 or EINVAL.
 */
static inline int lb_rtmutex_task_setprio(struct lb_rtmutex_task *t, int prio)
{
	if (prio < 0 || prio > LB_RTMUTEX_PRIO_MAX)
		return EINVAL;
	lb_rtmutex_ilock_lock(&t->pi_lock);
	t->base_prio = prio;
	(void)lb_rtmutex_adjust(t);
	struct lb_rtmutex_waiter *w = t->blocked_on;
	lb_rtmutex_t *next = NULL;
	if (w && w->prio != lb_load_relaxed(&t->eff_prio))
		next = w->lock;
	lb_rtmutex_ilock_unlock(&t->pi_lock);
	if (t->flags & LB_RTMUTEX_TASK_REAL)
		(void)lb_rtmutex_real_sync(t); /* always applies, even if eff is unchanged */
	if (next)
		(void)lb_rtmutex_walk(t, false, NULL, next, NULL, t, NULL);
	return 0;
}

/* Counter names, in struct lb_rtmutex_stats order. */
#define LB_RTMUTEX_COUNTER_NAMES                                               \
	{ "fast", "slow", "steals", "sleeps", "spins", "boosts", "walk_steps", "real_sched",     \
	  "real_errors" }

/*
 * The names before 0.2, whose lb_rt_ prefix was also the `lockbench rt`
 * workload's: kept as aliases for one release.  Define
 * LB_RTMUTEX_NO_OLD_NAMES to leave them out.
 */
#ifndef LB_RTMUTEX_NO_OLD_NAMES
#define lb_rt_task lb_rtmutex_task /* struct tag: struct lb_rt_task */
#define lb_rt_waiter lb_rtmutex_waiter
#define lb_rt_task_init lb_rtmutex_ctx_init
#define lb_rt_task_init_auto lb_rtmutex_ctx_init_auto
#define lb_rt_task_auto_flags lb_rtmutex_task_auto_flags
#define lb_rt_task_setprio lb_rtmutex_task_setprio
#define lb_rt_task_set_max_depth lb_rtmutex_task_set_max_depth
#define lb_rt_task_base_prio lb_rtmutex_task_base_prio
#define lb_rt_task_eff_prio lb_rtmutex_task_eff_prio
#define lb_rt_task_blocked_on lb_rtmutex_task_blocked_on
#define lb_rt_task_pi_empty lb_rtmutex_task_pi_empty
#define LB_RT_TASK_REAL LB_RTMUTEX_TASK_REAL
#define LB_RT_TASK_SPIN LB_RTMUTEX_TASK_SPIN
#endif

#endif /* LB_RTMUTEX_H */
