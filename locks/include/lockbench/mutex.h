/* SPDX-License-Identifier: MIT */
/*
 * mutex.h - adaptive-spinning sleeping mutex: the userspace counterpart of
 * the Linux kernel's kernel/locking/mutex.c with its osq_lock.c spinner queue.
 *
 * Design
 * ------
 * The lock is one word, `owner`: a pointer to the holder's lb_mutex_ctx_t
 * record (64-byte aligned, so the low bits are free) plus four flag bits.  The
 * uncontended lock is one compare-and-swap 0 -> self, the uncontended unlock
 * one compare-and-swap self -> 0.  Everything else is a slow path, kept out of
 * line (LB_SLOWPATH) so the fast path stays a few instructions and profiles
 * name the slow path.
 *
 * A contended locker first spins optimistically, as the kernel does: spinners
 * queue on an MCS queue of their own (the "OSQ", one node per thread record)
 * so that only the queue head polls the lock word; the head polls while the
 * owner stays the same and tries the lock whenever the owner changes.  If
 * spinning is refused or gives up, the locker appends itself to a FIFO wait
 * list (under an internal spinlock, `wait_lock`) and sleeps with a private
 * (or, for a mutex shared by processes, attr.pshared, a shared) futex wait on a word of its own record, so an unlock can wake exactly the
 * first waiter (and, for a handoff, exactly the thread it handed the lock to).
 * The woken first waiter retries, and spins for the lock as the kernel's does.
 *
 * Fairness (HANDOFF): the woken first waiter that still loses the race sets
 * HANDOFF; the next unlock then does not release the lock but gives it to that
 * waiter (owner = waiter | PICKUP).  While HANDOFF or PICKUP is set the owner
 * field is never 0, so nobody can steal.  One change from the kernel: a waiter
 * that has waited less than the starvation threshold (LB_MUTEX_HANDOFF_NS,
 * 1 ms; lb_mutex_attr.handoff_ns = 1 gives the kernel's rule) asks for the
 * handoff only while it spins for it, and withdraws the request when it goes
 * back to sleep.  Handing the lock to a thread that is not running leaves it
 * idle for a whole wake-up latency -- milliseconds when the CPUs are
 * oversubscribed -- while every other locker piles up behind it; the kernel's
 * woken task runs almost at once, ours may not.  Past the threshold the
 * request stands even while it sleeps: a waiter is overtaken for at most
 * about the threshold plus one hold after it reached the head of the list.
 * Spinners and fast-path lockers otherwise overtake sleepers (throughput
 * first, as in the kernel).
 *
 * Tenure quantum (a userspace addition, for more threads than CPUs): when the
 * waiters outnumber the CPUs beside the holder, most contended lockers sleep, and the holder
 * re-takes the lock on the fast path, back to back, until the woken first
 * waiter gets a CPU and asks for the handoff.  That "tenure" lasts one
 * wake-up latency, which the scheduler decides (microseconds on an idle CPU,
 * milliseconds behind a busy one), and per-thread throughput follows it.
 * The running threads may also pass the lock among themselves by spinning
 * (each spin win a new holder) while the sleepers wait.  So once the first
 * waiter has stood at the head of the list for LB_MUTEX_TENURE_NS (250 us),
 * whoever held the lock meanwhile, while the waiters outnumber the CPUs (it
 * counts sleepers, unlike the spinning rule:
 * lb_mutex__waiters_outnumber_cpus), the next slow unlock passes the lock to
 * it, exactly as if that waiter had set HANDOFF, and the unlocker then
 * queues behind everyone like any other contender.  (Dating the tenure of
 * each *holder* instead let two spinning threads keep the lock between them:
 * every spin win started a new tenure; min/max 0.36-0.51 at 32 threads.)
 * The check rides on the slow unlocks that already come with waiters (every
 * LB_MUTEX_TOKEN_CHECK_EVERY-th quiet unlock), so the fast path is unchanged.
 * Cost: one wake-up latency of idle lock per quantum; gain: fairness (the
 * measured figures are in doc/mutex.md, "Measured figures behind the
 * defaults").  Not crowded (spinning works), it never
 * fires: the first waiter's own HANDOFF bounds its wait there.
 *
 * What userspace cannot see, and what stands in for it:
 *
 *  - owner->on_cpu (the kernel stops spinning when the owner is preempted):
 *    not observable, and the owner record cannot even be dereferenced safely
 *    (its thread may be gone).  Stand-in: a spin budget in wall-clock time
 *    (LB_MUTEX_SPIN_NS, about one futex sleep + wake round trip on the
 *    reference machine; converted to lb_cpu_relax() iterations in
 *    lb_mutex_init by the shared calibration, lockbench/lb_spin_budget.h).
 *    An owner that keeps the lock longer than
 *    that is presumed preempted, or in a section long enough that sleeping
 *    costs nothing extra.
 *  - need_resched() (the kernel stops when the spinner itself should yield):
 *    not observable.  Stand-ins: (1) the lock is "crowded" when its
 *    contenders on a CPU -- the owner and the spinners -- outnumber the
 *    CPUs; the OSQ spinner neither starts nor continues then (a woken first
 *    waiter still may: a handoff needs it running).  Sleeping waiters, and
 *    the woken waiter until it runs, wait for no CPU of ours and are not
 *    counted (lb_mutex__crowded says why), so sleepers never turn spinning
 *    off (they once did: on 2 CPUs one sleeper stopped it).
 *    (2) spinners never exceed max_spinners (default CPUs - 1, plus the first
 *    waiter).  (3) every few polls the spinner reads the clock: far more wall
 *    time than its budget means it was itself preempted, so it stops.
 *  - preempt_disable(): none.  wait_lock is held for a few dozen instructions;
 *    if its holder is preempted the others yield the CPU after a short spin.
 *
 * The WOKEN bit, a userspace addition: in the kernel every unlock that finds
 * WAITERS wakes the first waiter, and waking a task that already runs costs
 * next to nothing.  Here a wake is a futex syscall on the unlocker's path.  So
 * the unlock that wakes the first waiter sets WOKEN in its releasing
 * compare-and-swap and hands the waiter a token (its futex word says TOKEN);
 * while WOKEN is set, unlocks release without waking anyone, because a woken
 * waiter is on its way and will retry.  The token holder clears WOKEN when it
 * takes the lock (in the same CAS) or, before sleeping again, under wait_lock
 * followed by one more try of the lock: a release it caused to be quiet is
 * never lost.  At most one token is out at a time.  A token can be lost in
 * flight: its unlocker may be preempted between the releasing CAS and the
 * FUTEX_WAKE, and then every later unlock stays quiet while the first waiter
 * sleeps.  So the token is dated (token_ns, written by the unlocker while it
 * still holds the lock) and every LB_MUTEX_TOKEN_CHECK_EVERY-th quiet unlock
 * with waiters (counted in `quiet`, holders only) takes the slow path, which
 * renews a token older than LB_MUTEX_TOKEN_STALE_NS and wakes the first
 * waiter itself (an extra wake of a running waiter is harmless).
 *
 * The OSQ head leaves the spinner queue before the trylock that may win
 * (the kernel leaves it after): osq_unlock may have to wait for a successor
 * preempted between its tail exchange and its link, and that wait must not
 * happen while the mutex is held.  A lost trylock rejoins the queue.
 *
 * Lock word (uintptr_t):
 *
 *   | bits      | name     | meaning                                         |
 *   |-----------|----------|-------------------------------------------------|
 *   | 63..6     | owner    | holder's lb_mutex_ctx_t *, 0 = free          |
 *   | 0  (0x01) | WAITERS  | wait list non-empty: unlock may have to wake    |
 *   | 1  (0x02) | HANDOFF  | first waiter asks the next unlock to hand over  |
 *   | 2  (0x04) | PICKUP   | handed over: the named owner must pick it up    |
 *   | 3  (0x08) | WOKEN    | the first waiter was woken, holds the token     |
 *
 * Transitions (owner, flags; W/H/P/K = WAITERS/HANDOFF/PICKUP/WOKEN):
 *
 *   lock fast       0,{}        -> self,{}         CAS, acquire
 *   lock steal      0,{W?,K?}   -> self,{W?,K?}    CAS, acquire (flags kept)
 *   token take      0,{W?,K}    -> self,{W?}       CAS by the token holder
 *   pickup          self,{P,*}  -> self,{*}        CAS by the named waiter
 *   ask handoff     X,{W,*}     -> X,{W,H,*}       CAS by the first waiter
 *   withdraw        X,{H,*}     -> X,{*}           CAS, waiter gave up spinning
 *   token drop      *,{K,*}     -> *,{*}           under wait_lock, then retry
 *   unlock fast     self,{}     -> 0,{}            CAS, release
 *   unlock quiet    self,{W?,K} -> 0,{W?,K}        CAS, release, no wake (token fresh)
 *   token renew     self,{W,K}  -> 0,{W,K}         CAS, release, then wake first
 *                                                  (token older than STALE_NS)
 *   unlock wake     self,{W}    -> 0,{W,K}         CAS, release, then wake first
 *   unlock handoff  self,{H,*}  -> first,{P,*}     under wait_lock, release
 *   tenure pass-on  self,{W,*}  -> first,{P,*}     likewise, waiters > CPUs and the holder's
 *                                                  tenure older than TENURE_NS
 *   last waiter     *,{W,H?,*}  -> *,{*}           under wait_lock
 *   timeout         X,{H,*}     -> X,{*}           first waiter leaving unserved
 *
 * Memory ordering:
 *
 *   | acquire side                             | pairs with                  |
 *   |------------------------------------------|-----------------------------|
 *   | CAS (acquire) taking or picking up owner | CAS (release) in unlock or  |
 *   |                                          | in the handoff              |
 *   | xchg (acquire) of wait_lock              | store (release) unlocking it|
 *   | OSQ node->locked load (acquire)          | store (release) in osq_unlock|
 *   | OSQ prev->next / node->next (acq xchg)   | release store linking a node|
 *   | waiter state load (acquire) after futex  | CAS (release) by the waker  |
 *
 * All flag-only updates (WAITERS, HANDOFF, WOKEN) are read-modify-writes of
 * the same word, so the modification order of `owner` alone decides every
 * race between an unlock and a waiter or spinner; no fences are needed.
 *
 * Lifetime: a thread record must stay valid while any lock may still touch it
 * (an OSQ neighbour writes into its node), i.e. until no thread uses these
 * locks.  The futex wake is issued after wait_lock is dropped; a wake aimed at
 * a record whose thread has moved on is harmless (futex keys are
 * addresses, or shared-mapping offsets when pshared, and every waiter re-checks its state after each wake-up).  As in
 * the kernel, unlock touches the mutex after releasing it: keep the mutex
 * alive until every unlock has returned.
 *
 * Counters (counted where LB_LOCK_COUNTERS is nonzero at compile time; the
 * fields are in the layout either way, so translation units built with and
 * without it share a mutex, and only the former count): no locked
 * read-modify-write is added.
 * Each counter is written only by a thread that holds either the mutex (fast,
 * spin_won) or wait_lock (the others), so a relaxed load + store is exact;
 * readers (lb_mutex_read_stats) see a slightly stale snapshot while threads
 * run.  `fast` shares the owner's cache line, which the holder has just
 * written anyway.
 */
#ifndef LB_MUTEX_H
#define LB_MUTEX_H

#include "lb_atomic.h"
#include "lb_cond_load.h"
#include "lb_probe.h"
#include "lb_futex.h"
#include "lb_spin_budget.h"
#include "lb_sched_hooks.h"

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(LB_LOCK_COUNTERS) && LB_LOCK_COUNTERS
#define LB_MUTEX_COUNTING 1
#else
#define LB_MUTEX_COUNTING 0
#endif

/* Flag bits in the owner word. */
#define LB_MUTEX_WAITERS ((uintptr_t)0x01)
#define LB_MUTEX_HANDOFF ((uintptr_t)0x02)
#define LB_MUTEX_PICKUP  ((uintptr_t)0x04)
#define LB_MUTEX_WOKEN   ((uintptr_t)0x08)
#define LB_MUTEX_FLAGS   ((uintptr_t)0x0f)

/*
 * Spin budget: how long a spinner keeps at it before it concludes the owner
 * is not running (see the design note).  Spinning pays while it is cheaper
 * than sleeping, so the budget is a bit more than one futex wake-up
 * latency (the measurements: doc/mutex.md, "Measured figures behind the
 * defaults").  Overridable per lock in lb_mutex_attr.
 */
#ifndef LB_MUTEX_SPIN_NS
#define LB_MUTEX_SPIN_NS 20000u
#endif
/*
 * Starvation threshold: a woken first waiter that has waited this long and
 * still loses sets HANDOFF for good (even while it sleeps), so the next
 * unlock hands it the lock.  Below it, it asks only while it spins.
 */
#ifndef LB_MUTEX_HANDOFF_NS
#define LB_MUTEX_HANDOFF_NS 1000000u
#endif
/*
 * Tenure quantum: a holder that keeps re-taking a crowded lock while others
 * sleep passes it to the first waiter after this long (see the design note).
 * Longer means less fairness; shorter means more hand-overs, each leaving the
 * lock idle for one wake-up latency (the measured trade-off: doc/mutex.md).
 */
#ifndef LB_MUTEX_TENURE_NS
#define LB_MUTEX_TENURE_NS 250000u
#endif
/*
 * A WOKEN token older than this is presumed lost: its unlocker was
 * preempted between the releasing CAS and FUTEX_WAKE.  The next unlock that
 * finds it wakes the first waiter itself (at most one extra wake per this
 * period; a wake for a waiter that is already up is harmless).
 */
#ifndef LB_MUTEX_TOKEN_STALE_NS
#define LB_MUTEX_TOKEN_STALE_NS 50000u
#endif
/* Quiet unlocks (waiters, token out) between two clock reads for that
 * check: a clock read costs several times a whole uncontended lock+unlock,
 * so only every 256th quiet unlock takes the slow path to look. */
#define LB_MUTEX_TOKEN_CHECK_EVERY 256u
/* Longest pause between two polls of the lock word, in lb_cpu_relax(). */
#ifndef LB_MUTEX_POLL_MAX
#define LB_MUTEX_POLL_MAX 16u
#endif
/* A test's hook run at every poll of the owner word while spinning on it
 * (tests/test_mutex_spin.c scripts owner changes with it); nothing by default. */
#ifndef LB_MUTEX_POLL_HOOK
#define LB_MUTEX_POLL_HOOK(m) ((void)(m))
#endif
/* wait_lock: how long to spin before sched_yield() lets a preempted holder
 * run, in ns. */
#define LB_MUTEX_WAIT_LOCK_SPIN_NS 5000u
/* OSQ: how long to wait for a successor to link in before yielding. */
#define LB_MUTEX_OSQ_LINK_SPIN_NS 25000u

/* Waiter futex-word states. */
#define LB_MUTEX__AWAKE    0u /* running, no wake token (e.g. woken for a pickup) */
#define LB_MUTEX__QUEUED   1u /* about to sleep; a waker changes it, no syscall */
#define LB_MUTEX__SLEEPING 2u /* in (or entering) FUTEX_WAIT: a waker must syscall */
#define LB_MUTEX__TOKEN    3u /* woken by an unlock and given the WOKEN token */

struct lb_mutex_osq_node {
	_Atomic(struct lb_mutex_osq_node *) next;
	_Atomic(struct lb_mutex_osq_node *) prev;
	_Atomic(uint32_t) locked; /* 1: our predecessor passed us the OSQ head */
};

struct lb_mutex_waiter {
	struct lb_mutex_waiter *next, *prev; /* FIFO wait list; wait_lock */
	_Atomic(uint32_t) state;              /* futex word, LB_MUTEX__* */
	uint64_t since;                      /* enqueue time (ns); owner thread only */
};

/*
 * Per-thread context.  One per thread, shared by every lb_mutex the thread
 * uses: a thread spins or waits on one mutex at a time, so one OSQ node and
 * one waiter suffice however many mutexes it holds.  Its address is the owner
 * value, hence the alignment.
 */
typedef struct lb_mutex_thread {
	LB_ALIGNAS(LB_CACHELINE) struct lb_mutex_osq_node osq;
	struct lb_mutex_waiter waiter;
	struct lb_sched_task sched; /* what the scheduler hooks know of this thread */
} lb_mutex_ctx_t;
/* The name before 0.2, kept as an alias for one release. */
typedef lb_mutex_ctx_t lb_mutex_thread_t;

LB_STATIC_ASSERT(LB_ALIGNOF(lb_mutex_ctx_t) > LB_MUTEX_FLAGS,
	       "thread records must leave the flag bits of the owner word free");

/*
 * Kernel generation of the algorithm, chosen at init (lb_mutex_init_gen):
 *
 *   CURRENT  today's kernel (v4.10+ handoff, waiter spinning) plus this
 *            port's WOKEN token and tenure quantum: the design note above.
 *   V3_14    the v3.14 mutex and
 *   V3_15    the v3.15 mutex: mutex_v3.h, with its own verbs
 *            (lb_mutex_v3_lock ...) on this same lb_mutex_t: a count plus
 *            an advisory owner word, spinning that stops when the owner
 *            changes, no time budget (lb_sched_hooks.h's owner-running and
 *            need_resched hooks end a spin), a ticket wait_lock.
 */
enum lb_mutex_gen {
	LB_MUTEX_GEN_CURRENT = 0,
	LB_MUTEX_GEN_V3_14 = 314,
	LB_MUTEX_GEN_V3_15 = 315,
};

/* Optional parameters for lb_mutex_init (NULL = defaults). */
struct lb_mutex_attr {
	bool nospin;           /* never spin: contended lockers go straight to sleep */
	uint32_t spin_ns;      /* spin budget; 0 = LB_MUTEX_SPIN_NS */
	uint32_t handoff_ns;   /* starvation threshold; 0 = LB_MUTEX_HANDOFF_NS,
				* 1 = at the first lost race, as the kernel */
	unsigned int ncpus;    /* CPUs the lock may use; 0 = this thread's affinity */
	int max_spinners;      /* <= 0: ncpus - 1 */
	bool pshared;          /* the mutex and every thread record live in memory
				* shared by processes: shared futexes (see below) */
};

/* Event counts since init; see doc/mutex.md for how to read them. */
struct lb_mutex_stats {
	uint64_t fast;        /* lock() taken without spinning or sleeping */
	uint64_t spin_won;    /* spin episodes (OSQ head or first waiter) that took it */
	uint64_t spin_gaveup; /* spin episodes that gave up and went to the wait list */
	uint64_t sleeps;      /* FUTEX_WAIT calls */
	uint64_t wakes;       /* FUTEX_WAKE calls */
	uint64_t handoffs;    /* unlocks that handed the lock to the first waiter */
	uint64_t timeouts;    /* timed locks that expired */
	uint64_t acq_running[3]; /* slow-path acquisitions with 1, 2, >= 3 contenders running */
};

typedef struct lb_mutex {
	/* Line 0: the word every contender polls; written by holders only. */
	LB_ALIGNAS(LB_CACHELINE) _Atomic(uintptr_t) owner;
	_Atomic(uint64_t) token_ns; /* when the WOKEN token was last given; holders only */
	_Atomic(uint32_t) quiet;    /* quiet unlocks with waiters (mod 2^32); holders only */
	_Atomic(uintptr_t) tenure_owner; /* first waiter whose wait tenure_ns dates; holders only */
	_Atomic(uint64_t) tenure_ns;     /* when slow unlocks first saw it at the head; holders only */
	/*
	 * Counters are always part of the layout, whatever LB_LOCK_COUNTERS
	 * says, so files built with and without it can share a mutex; the
	 * macro only decides whether this file's code increments them.
	 */
	_Atomic(uint64_t) n_fast, n_spin_won; /* written only by the holder */
	_Atomic(int32_t) v3_count; /* v3.x only: the kernel's count, 1 free, 0 held, < 0 waiters */
	/* Line 1: the sleeping side and the spinner queue. */
	LB_ALIGNAS(LB_CACHELINE) _Atomic(uint32_t) wait_lock;
	_Atomic(int) spinners;                          /* threads in an optimistic spin */
	_Atomic(int) nr_waiters;                        /* written under wait_lock */
	_Atomic(struct lb_mutex_osq_node *) osq_tail;  /* spinner queue, NULL = empty */
	_Atomic(struct lb_mutex_waiter *) wait_head;   /* written under wait_lock */
	struct lb_mutex_waiter *wait_tail;             /* wait_lock */
	uint32_t spin_relax; /* budget in lb_cpu_relax() iterations, 0 = never spin */
	uint32_t spin_ns;    /* budget in wall-clock ns (preemption check) */
	uint32_t handoff_ns; /* starvation threshold */
	int max_spinners;
	int ncpus;
	int gen;             /* enum lb_mutex_gen; fixed at init */
	int futex_scope;     /* FUTEX_PRIVATE_FLAG, or 0 (attr.pshared) */
	_Atomic(uint64_t) n_spin_gaveup, n_sleeps, n_wakes, n_handoffs, n_timeouts; /* wait_lock */
	/* v3.x only: wait_lock as a ticket spinlock (kernel v3.14/v3.15 x86). */
	_Atomic(uint32_t) v3_wait_next, v3_wait_serving;
	/* Running contenders at each slow-path acquisition, 1 / 2 / 3 or more
	 * (lb_mutex__gauge_acquired); written by the new holder only. */
	_Atomic(uint64_t) n_acq_running[3];
} lb_mutex_t;

/*
 * No static initializer: lb_mutex_init sizes the spin budget and the
 * spinner limit for the machine it runs on, which a constant cannot.
 */

/* ---- counters ------------------------------------------------------------ */

#if LB_MUTEX_COUNTING
/* Only a thread holding the mutex or wait_lock calls this: no RMW needed. */
static inline void lb_mutex__count(_Atomic(uint64_t) *c, uint64_t n)
{
	lb_store_relaxed(c, lb_load_relaxed(c) + n);
}
#define LB_MUTEX_COUNT(m, field, n) lb_mutex__count(&(m)->field, (n))
#else
#define LB_MUTEX_COUNT(m, field, n) ((void)(m), (void)(n))
#endif

static inline void lb_mutex_read_stats(const lb_mutex_t *m, struct lb_mutex_stats *s)
{
	lb_mutex_t *mm = (lb_mutex_t *)m; /* C11 atomic loads take non-const */
	s->fast = lb_load_relaxed(&mm->n_fast);
	s->spin_won = lb_load_relaxed(&mm->n_spin_won);
	s->spin_gaveup = lb_load_relaxed(&mm->n_spin_gaveup);
	s->sleeps = lb_load_relaxed(&mm->n_sleeps);
	s->wakes = lb_load_relaxed(&mm->n_wakes);
	s->handoffs = lb_load_relaxed(&mm->n_handoffs);
	s->timeouts = lb_load_relaxed(&mm->n_timeouts);
	for (int i = 0; i < 3; i++)
		s->acq_running[i] = lb_load_relaxed(&mm->n_acq_running[i]);
}

/*
 * The running-contenders gauge, at a slow-path acquisition: the new holder
 * (counted when lb_sched_owner_running says it is on a CPU, which it always
 * is under today's stand-in, not always in a simulator) plus the threads
 * spinning on the lock now (`spinners`, which the holder has left).  Binned
 * 1 / 2 / 3 or more (0 falls into the first bin).  The holder alone
 * writes it: no RMW.  The fast path never comes here.
 */
static inline void lb_mutex__gauge_acquired(lb_mutex_t *m, lb_mutex_ctx_t *t)
{
#if LB_MUTEX_COUNTING
	int running = (lb_sched_owner_running(&t->sched) ? 1 : 0) + lb_load_relaxed(&m->spinners);
	lb_mutex__count(&m->n_acq_running[running <= 1 ? 0 : running == 2 ? 1 : 2], 1);
#else
	(void)m, (void)t;
#endif
}

/* ---- small helpers --------------------------------------------------------- */

static inline uint64_t lb_mutex__now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline lb_mutex_ctx_t *lb_mutex__task(uintptr_t word)
{
	return (lb_mutex_ctx_t *)(word & ~LB_MUTEX_FLAGS);
}

static inline lb_mutex_ctx_t *lb_mutex__waiter_task(struct lb_mutex_waiter *w)
{
	return (lb_mutex_ctx_t *)((char *)w - offsetof(lb_mutex_ctx_t, waiter));
}

static inline void lb_mutex__misuse(const char *what)
{
	fprintf(stderr, "lb_mutex: fatal: %s\n", what);
	abort();
}

/* Online CPUs this thread may run on. */
static inline unsigned int lb_mutex__ncpus(void)
{
#if defined(_GNU_SOURCE) && defined(CPU_COUNT)
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned int)CPU_COUNT(&set);
#endif
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned int)n : 1u;
}

/*
 * How many lb_cpu_relax() iterations fit in ns: the shared, once-per-
 * process calibration (lockbench/lb_spin_budget.h), which started as this
 * header's own and now serves every spinning lock.
 */
static inline uint32_t lb_mutex__relax_for_ns(uint32_t ns)
{
	return lb_spin_loops(ns);
}

/* ---- init ------------------------------------------------------------------ */

/*
 * The contention state, empty: no wait_lock holder, spinner or waiter, no
 * quiet-unlock count or tenure.  Shared by init and by the fork child, which
 * forgets the other threads; both run with nobody else touching the mutex,
 * so atomic_init (re)initialises.
 */
static inline void lb_mutex__forget_contenders(lb_mutex_t *m)
{
	atomic_init(&m->wait_lock, 0);
	atomic_init(&m->spinners, 0);
	atomic_init(&m->nr_waiters, 0);
	atomic_init(&m->osq_tail, NULL);
	atomic_init(&m->wait_head, NULL);
	m->wait_tail = NULL;
	atomic_init(&m->quiet, 0);
	atomic_init(&m->tenure_owner, 0);
	atomic_init(&m->v3_wait_next, 0);
	atomic_init(&m->v3_wait_serving, 0);
}

static inline void lb_mutex_init(lb_mutex_t *m, const struct lb_mutex_attr *attr)
{
	struct lb_mutex_attr a;

	/* memset, not a compound literal: this header also compiles as C++. */
	memset(&a, 0, sizeof(a));
	if (attr)
		a = *attr;
	unsigned int ncpus = a.ncpus ? a.ncpus : lb_mutex__ncpus();

	atomic_init(&m->owner, 0);
	atomic_init(&m->v3_count, 1);
	atomic_init(&m->token_ns, 0);
	atomic_init(&m->tenure_ns, 0);
	lb_mutex__forget_contenders(m);
	m->spin_ns = a.spin_ns ? a.spin_ns : LB_MUTEX_SPIN_NS;
	m->handoff_ns = a.handoff_ns ? a.handoff_ns : LB_MUTEX_HANDOFF_NS;
	m->ncpus = (int)ncpus;
	m->gen = LB_MUTEX_GEN_CURRENT;
	m->futex_scope = a.pshared ? 0 : FUTEX_PRIVATE_FLAG;
	m->max_spinners = a.max_spinners > 0 ? a.max_spinners : (int)ncpus - 1;
	/* One CPU: the owner cannot run while we spin, so spinning never pays. */
	m->spin_relax = (a.nospin || m->max_spinners <= 0) ? 0 : lb_mutex__relax_for_ns(m->spin_ns);
	_Atomic(uint64_t) *const counters[] = { &m->n_fast,   &m->n_spin_won, &m->n_spin_gaveup,
						&m->n_sleeps, &m->n_wakes,    &m->n_handoffs,
						&m->n_timeouts, &m->n_acq_running[0],
						&m->n_acq_running[1], &m->n_acq_running[2] };
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		atomic_init(counters[i], 0);
}

/* lb_mutex_init, then the kernel generation of the algorithm (see above);
 * spin_ns, ncpus and nospin apply to every generation, the rest of attr to
 * CURRENT only. */
static inline void lb_mutex_init_gen(lb_mutex_t *m, enum lb_mutex_gen gen,
				     const struct lb_mutex_attr *attr)
{
	lb_mutex_init(m, attr);
	m->gen = (int)gen;
}

static inline void lb_mutex_ctx_init(lb_mutex_ctx_t *t)
{
	atomic_init(&t->osq.next, NULL);
	atomic_init(&t->osq.prev, NULL);
	atomic_init(&t->osq.locked, 0);
	t->waiter.next = t->waiter.prev = NULL;
	atomic_init(&t->waiter.state, LB_MUTEX__AWAKE);
	lb_sched_task_init(&t->sched);
}

/* The name before 0.2, kept for one release. */
static inline void lb_mutex_thread_init(lb_mutex_ctx_t *t)
{
	lb_mutex_ctx_init(t);
}

static inline bool lb_mutex_is_locked(const lb_mutex_t *m)
{
	lb_mutex_t *mm = (lb_mutex_t *)m; /* C11 atomic loads take non-const */
	if (m->gen != LB_MUTEX_GEN_CURRENT)
		return lb_load_relaxed(&mm->v3_count) != 1; /* the owner word lags */
	return (lb_load_relaxed(&mm->owner) & ~LB_MUTEX_FLAGS) != 0;
}

/* True when t holds m (for assertions; racy for any other thread). */
static inline bool lb_mutex_is_owner(const lb_mutex_t *m, const lb_mutex_ctx_t *t)
{
	uintptr_t w = lb_load_relaxed(&((lb_mutex_t *)m)->owner);
	return lb_mutex__task(w) == t && !(w & LB_MUTEX_PICKUP);
}

/* ---- wait_lock: a test-and-test-and-set spinlock over the wait list ------- */

static inline void lb_mutex__wait_lock(lb_mutex_t *m)
{
	uint32_t spins = 0, every = 0, held;
	/* xchg acquire pairs with the release store in __wait_unlock. */
	while (atomic_exchange_explicit(&m->wait_lock, 1, memory_order_acquire)) {
		if (every == 0)
			every = lb_spin_loops(LB_MUTEX_WAIT_LOCK_SPIN_NS);
		/* Spin loop, read-only (relaxed; the xchg acquires) until it
		 * looks free; no preempt_disable here, so a holder may be
		 * preempted: every `every`-th look yields instead of pausing,
		 * to let it finish. */
		for (;;) {
			lb_cond_load_relaxed_until(held, &m->wait_lock, held == 0,
						   ++spins % every == 0);
			if (held == 0)
				break;
			sched_yield();
		}
	}
}

static inline void lb_mutex__wait_unlock(lb_mutex_t *m)
{
	lb_store_release(&m->wait_lock, 0); /* publishes the list updates */
}

/* wait_lock held.  The FIFO wait list itself, shared by every generation
 * (mutex_v3.h too): append w at the tail / unlink w, with the count. */
static inline void lb_mutex__list_append(lb_mutex_t *m, struct lb_mutex_waiter *w)
{
	w->next = NULL;
	w->prev = m->wait_tail;
	if (m->wait_tail)
		m->wait_tail->next = w;
	else
		lb_store_relaxed(&m->wait_head, w);
	m->wait_tail = w;
	lb_store_relaxed(&m->nr_waiters, lb_load_relaxed(&m->nr_waiters) + 1);
}

static inline void lb_mutex__list_unlink(lb_mutex_t *m, struct lb_mutex_waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		lb_store_relaxed(&m->wait_head, w->next);
	if (w->next)
		w->next->prev = w->prev;
	else
		m->wait_tail = w->prev;
	w->next = w->prev = NULL;
	lb_store_relaxed(&m->nr_waiters, lb_load_relaxed(&m->nr_waiters) - 1);
}

/* wait_lock held.  Append w; the first waiter sets WAITERS. */
static inline void lb_mutex__enqueue(lb_mutex_t *m, struct lb_mutex_waiter *w)
{
	w->since = lb_mutex__now_ns();
	lb_store_relaxed(&w->state, LB_MUTEX__QUEUED);
	lb_mutex__list_append(m, w);
	/*
	 * *,{} -> *,{W}.  From here an unlock cannot take its fast path, and it
	 * takes wait_lock (after us) before it wakes anyone; same-word RMW, so
	 * our next trylock sees any release that happened before this.
	 */
	if (w->prev == NULL)
		atomic_fetch_or_explicit(&m->owner, LB_MUTEX_WAITERS, memory_order_relaxed);
}

/* wait_lock held.  Unlink w; the last waiter clears WAITERS and HANDOFF. */
static inline void lb_mutex__dequeue(lb_mutex_t *m, struct lb_mutex_waiter *w)
{
	lb_mutex__list_unlink(m, w);
	if (lb_load_relaxed(&m->wait_head) == NULL)
		atomic_fetch_and_explicit(&m->owner, ~(LB_MUTEX_WAITERS | LB_MUTEX_HANDOFF),
					  memory_order_relaxed);
}

/*
 * wait_lock held.  Wake w: with the token (a plain unlock woke it) or just
 * for a pickup.  Returns true if it may be asleep in FUTEX_WAIT, i.e. the
 * caller owes a futex wake (issued after dropping wait_lock).
 */
static inline bool lb_mutex__wake_waiter(struct lb_mutex_waiter *w, bool token)
{
	uint32_t old = lb_load_relaxed(&w->state);
	/* CAS retry loop (no waiting): the waiter moves QUEUED -> SLEEPING. */
	for (;;) {
		uint32_t want;
		if (token)
			want = LB_MUTEX__TOKEN;
		else if (old == LB_MUTEX__QUEUED || old == LB_MUTEX__SLEEPING)
			want = LB_MUTEX__AWAKE;
		else
			return false; /* already awake */
		if (old == want)
			return false;
		/* Release pairs with the acquire load after the waiter's futex wait. */
		if (atomic_compare_exchange_weak_explicit(&w->state, &old, want,
							  memory_order_release,
							  memory_order_relaxed))
			return old == LB_MUTEX__SLEEPING;
	}
}

/* ---- trylock ----------------------------------------------------------------- */

#define LB_MUTEX__TRY_HANDOFF 1u /* first waiter: on failure ask for a handoff */
#define LB_MUTEX__HAS_TOKEN   2u /* caller holds the WOKEN token: drop it when taking */

/*
 * Take the lock if it is free or was handed to us; otherwise, as first
 * waiter, set HANDOFF.  Returns true if we now own it; else *seen is the word
 * that stopped us.
 *
 *   0,{W?,K?}       -> self,{W?,K?}   (K cleared if we held the token)
 *   self,{P,W?,K?}  -> self,{W?,K?}   (pickup; likewise)
 *   X,{W,K?}        -> X,{H,W,K?}     (TRY_HANDOFF; still fails)
 */
static inline bool lb_mutex__trylock_common(lb_mutex_t *m, lb_mutex_ctx_t *t,
					    unsigned int how, uintptr_t *seen)
{
	const uintptr_t self = (uintptr_t)t;
	uintptr_t cur = lb_load_relaxed(&m->owner);
	/* CAS retry loop (no waiting): flags may change under us. */
	for (;;) {
		uintptr_t task = cur & ~LB_MUTEX_FLAGS, want;
		if (task == 0)
			want = self | cur; /* only W and K can stand with a free lock */
		else if (task == self && (cur & LB_MUTEX_PICKUP))
			want = cur & ~LB_MUTEX_PICKUP;
		else if ((how & LB_MUTEX__TRY_HANDOFF) &&
			 !(cur & (LB_MUTEX_HANDOFF | LB_MUTEX_PICKUP)))
			want = cur | LB_MUTEX_HANDOFF;
		else
			break;
		bool take = (want & ~LB_MUTEX_FLAGS) == self;
		if (take && (how & LB_MUTEX__HAS_TOKEN))
			want &= ~LB_MUTEX_WOKEN;
		/* Acquire (when taking) pairs with the release of the unlock or
		 * handoff that produced cur. */
		if (atomic_compare_exchange_weak_explicit(&m->owner, &cur, want,
							  memory_order_acquire,
							  memory_order_relaxed)) {
			if (take)
				return true;
			cur = want;
			break;
		}
	}
	*seen = cur;
	return false;
}

/* ---- spin budget -------------------------------------------------------------- */

/*
 * Crowded: the lock's contenders that are *on a CPU* -- the owner (presumed
 * running) and the spinners (`spinners`, the caller included when it is
 * about to join; a woken first waiter that spins is one of them) --
 * outnumber the CPUs, so at least one of them, perhaps the owner, is not
 * running and one more spinner would only keep it off a CPU longer: the
 * need_resched stand-in.  Not counted:
 *  - sleeping waiters: a sleeper needs no CPU until an unlock wakes it.
 *    (Counting them turned spinning off on 2 CPUs as soon as one thread
 *    slept: 9 spin wins per 1000 ops at 8 threads.)
 *  - the woken waiter that has not run yet (WOKEN in the owner word, its
 *    token out).  It waits in a run queue, not on a CPU, often for a whole
 *    scheduler latency when threads outnumber CPUs; counting it refused
 *    every spinner on 2 CPUs while a token was out, which with sleepers is
 *    nearly always (2-8 spin wins per 1000 ops at 8 threads).  A spinner
 *    does not keep it from a CPU the way a kernel spinner would: the kernel
 *    spins with preemption off and must poll need_resched to let the wakee
 *    in, while a userspace spinner is preempted by the scheduler whenever
 *    it would have set need_resched; and once the wakee runs it spins (or
 *    takes the lock) and is counted here.
 * The kernel's flag says "another task wants *this* CPU", which also counts
 * tasks that are not contenders; ours only sees this lock's contenders.
 */
static inline bool lb_mutex__crowded(lb_mutex_t *m, int spinners)
{
	return 1 + spinners > m->ncpus;
}

/*
 * The tenure rule's trigger (see the design note): the waiters alone
 * outnumber the CPUs left beside the holder, so a woken waiter may wait a
 * whole scheduler latency for a CPU while the holder re-takes the lock.
 * Sleepers count here on purpose: this is about how long they wait, not
 * about whether a spinner would steal a CPU.
 */
static inline bool lb_mutex__waiters_outnumber_cpus(lb_mutex_t *m)
{
	return 1 + lb_load_relaxed(&m->nr_waiters) > m->ncpus;
}

struct lb_mutex__budget {
	lb_mutex_t *m;
	int64_t relax;     /* lb_cpu_relax() iterations left */
	uint64_t deadline; /* wall clock: past it we were preempted meanwhile */
	uint32_t polls;
	bool waiter;       /* first waiter: exempt from the crowding check */
};

static inline void lb_mutex__budget_start(struct lb_mutex__budget *b, lb_mutex_t *m, bool waiter)
{
	b->m = m;
	b->relax = m->spin_relax;
	b->deadline = lb_mutex__now_ns() + 2u * (uint64_t)m->spin_ns;
	b->polls = 0;
	b->waiter = waiter;
}

/* Spend n relax iterations; false when the episode should end. */
static inline bool lb_mutex__budget_spend(struct lb_mutex__budget *b, uint32_t n)
{
	b->relax -= n;
	if (b->relax < 0)
		return false; /* owner held it past the budget: presume it off-CPU */
	if ((++b->polls & 7) != 0)
		return true;
	/* Every 8th poll: twice the budget in wall time means we lost the CPU
	 * meanwhile; or waiters queued up behind us (need_resched stand-ins). */
	if (lb_mutex__now_ns() > b->deadline)
		return false;
	return b->waiter || !lb_mutex__crowded(b->m, lb_load_relaxed(&b->m->spinners));
}

/* ---- OSQ: the MCS queue of optimistic spinners ---------------------------------- */

/*
 * If *link still points at node, point it at to instead; true if it did.
 * The plain load first keeps a doomed CAS from taking the line exclusive.
 * acq_rel on success: release makes our unlinking visible to whoever reads
 * the link next (a later xchg of the tail, a neighbour's step A), acquire
 * orders our next reads of the neighbours after it.
 */
static inline bool lb_mutex__osq_relink(_Atomic(struct lb_mutex_osq_node *) *link,
					struct lb_mutex_osq_node *node,
					struct lb_mutex_osq_node *to)
{
	struct lb_mutex_osq_node *expect = node;
	return lb_load_relaxed(link) == node &&
	       atomic_compare_exchange_strong_explicit(link, &expect, to, memory_order_acq_rel,
						       memory_order_relaxed);
}

/*
 * Append node to the spinner queue (OSQ or the v3.14 MCS lock): its
 * predecessor, or NULL when the queue was empty and node is its head.
 */
static inline struct lb_mutex_osq_node *lb_mutex__osq_join(lb_mutex_t *m,
							   struct lb_mutex_osq_node *node)
{
	lb_store_relaxed(&node->locked, 0);
	lb_store_relaxed(&node->next, NULL);
	/* acq_rel: release publishes our node's init to the successor that
	 * swaps the tail after us; acquire lets us write into prev. */
	struct lb_mutex_osq_node *prev =
		atomic_exchange_explicit(&m->osq_tail, node, memory_order_acq_rel);
	if (prev) {
		lb_store_relaxed(&node->prev, prev);
		/* Release: prev (and its unlock) must see node->prev and our
		 * initialised node before the link. */
		atomic_store_explicit(&prev->next, node, memory_order_release);
	}
	return prev;
}

/*
 * Wait until node has a stable successor, or until node is the tail, in
 * which case the tail moves back to prev (NULL: queue empty).  Returns the
 * successor, unlinked from node->next, or NULL.
 */
static inline struct lb_mutex_osq_node *
lb_mutex__osq_wait_next(lb_mutex_t *m, struct lb_mutex_osq_node *node, struct lb_mutex_osq_node *prev)
{
	uint32_t spins = 0, every = lb_spin_loops(LB_MUTEX_OSQ_LINK_SPIN_NS);
	for (;;) {
		/* We are the tail: nobody follows, hand the tail back to prev. */
		if (lb_mutex__osq_relink(&m->osq_tail, node, prev))
			return NULL;
		/* A successor linked itself: take it.  Acquire pairs with the
		 * release store of the link in osq_lock or unqueue step C. */
		if (lb_load_relaxed(&node->next)) {
			struct lb_mutex_osq_node *next =
				atomic_exchange_explicit(&node->next, NULL, memory_order_acquire);
			if (next)
				return next;
		}
		/* Spin: a successor swapped the tail but has not linked yet (a
		 * two-store window); if it was preempted there, let it run.
		 * Each look is a CAS of the tail and a look at node->next, two
		 * words, so only the wait is lb_cond_load's: node->next is the
		 * store that ends it (the successor's release link above). */
		if (++spins % every == 0)
			sched_yield();
		else
			lb_cond_load_pause(&node->next);
	}
}

/*
 * Leave the spinner queue while waiting in it (the kernel's osq_lock
 * unqueue, steps A, B, C): true if prev handed us the head meanwhile (we
 * are the head after all), false once we are out of the queue.  Shared by
 * every generation whose spinners may leave (mutex_v3.h's v3.15 OSQ).
 */
static inline bool lb_mutex__osq_unqueue(lb_mutex_t *m, struct lb_mutex_osq_node *node,
					 struct lb_mutex_osq_node *prev)
{
	/* A: undo prev->next = node, so nobody hands us the head any more. */
	for (;;) {
		if (lb_mutex__osq_relink(&prev->next, node, NULL))
			break;
		/* prev handed us the head in the meantime: we own it after all.
		 * Acquire pairs with the release in osq_unlock. */
		if (lb_load_acquire(&node->locked))
			return true;
		/* prev is unqueueing itself too; wait for step C.  Each look
		 * is a CAS of prev->next, a look at our node and a re-read of
		 * prev, so only the wait is lb_cond_load's: prev's step C
		 * stores node->prev (then its release link), or its unlock
		 * our node->locked, both in our node's line. */
		lb_cond_load_pause(&node->prev);
		/* prev may have left (its step C re-pointed our prev). */
		prev = lb_load_relaxed(&node->prev);
	}
	/* B: get a stable successor, or become nobody's predecessor. */
	struct lb_mutex_osq_node *next = lb_mutex__osq_wait_next(m, node, prev);
	if (next == NULL)
		return false;
	/* C: splice prev <-> next.  Release pairs with the acquire reads of
	 * prev->next (wait_next, step A of next). */
	lb_store_relaxed(&next->prev, prev);
	atomic_store_explicit(&prev->next, next, memory_order_release);
	return false;
}

/*
 * Join the spinner queue; true once we are its head.  False if the budget
 * ran out while queued, after unqueueing (the kernel's steps A, B, C).
 */
static inline bool lb_mutex__osq_lock(lb_mutex_t *m, struct lb_mutex_osq_node *node,
				      struct lb_mutex__budget *b)
{
	struct lb_mutex_osq_node *prev = lb_mutex__osq_join(m, node);
	if (prev == NULL)
		return true;

	/* Spin loop on our own node, bounded by the budget: only prev writes
	 * it.  Acquire pairs with the release store in osq_unlock. */
	uint32_t locked;
	lb_cond_load_acquire_until(locked, &node->locked, locked != 0, !lb_mutex__budget_spend(b, 1));
	if (!locked)
		return lb_mutex__osq_unqueue(m, node, prev);
	return true;
}

static inline void lb_mutex__osq_unlock(lb_mutex_t *m, struct lb_mutex_osq_node *node)
{
	struct lb_mutex_osq_node *expect = node;
	/* Alone in the queue: empty it.  Release orders our spin before it. */
	if (atomic_compare_exchange_strong_explicit(&m->osq_tail, &expect, NULL,
						    memory_order_release,
						    memory_order_relaxed))
		return;
	struct lb_mutex_osq_node *next =
		atomic_exchange_explicit(&node->next, NULL, memory_order_acquire);
	if (next == NULL)
		next = lb_mutex__osq_wait_next(m, node, NULL);
	if (next)
		lb_store_release(&next->locked, 1); /* pairs with its acquire spin */
}

/* ---- optimistic spinning -------------------------------------------------------- */

/*
 * Poll the owner word while `owner` keeps the lock.  True: the owner changed
 * or the lock was freed or handed to us, go try.  False: give up (budget
 * gone, or HANDOFF promised it to the first waiter and we are not it).
 * The pause between polls doubles up to LB_MUTEX_POLL_MAX while the owner
 * is unchanged: each poll pulls the line away from a holder that keeps
 * writing it, so a holder that re-locks in a loop is polled gently.
 * Spin loop, relaxed (the trylock that follows acquires).  A look is
 * LB_MUTEX_POLL_HOOK and a load, followed by `delay` pauses, so the wait is
 * lb_cond_load_pauses on the owner word: natively the `delay` pauses, in a
 * simulator a park until the owner word's line is written (an unlock's
 * release, a new owner's CAS, a flag set) or the pauses' time has passed.
 * (The kernel's mutex_spin_on_owner is a plain cpu_relax loop: it also
 * reads the owner's on_cpu.)
 */
static inline bool lb_mutex__spin_on_owner(lb_mutex_t *m, uintptr_t owner, bool waiter,
					   struct lb_mutex__budget *b)
{
	uint32_t delay = 1;
	for (;;) {
		LB_MUTEX_POLL_HOOK(m);
		/* Relaxed: we only watch; the CAS that takes the lock acquires. */
		uintptr_t cur = lb_load_relaxed(&m->owner);
		if ((cur & ~LB_MUTEX_FLAGS) != owner)
			return true;
		if (!waiter && (cur & LB_MUTEX_HANDOFF))
			return false;
		if (!lb_mutex__budget_spend(b, delay))
			return false;
		lb_cond_load_pauses(&m->owner, delay); /* back-off between polls (see above) */
		if (delay < LB_MUTEX_POLL_MAX)
			delay <<= 1;
	}
}

/*
 * Join the spinners: at most max_spinners of them, and only while the lock
 * is not crowded; the first waiter may be one more and ignores crowding (a
 * handoff needs it running, as the kernel lets it spin besides the OSQ head).
 */
static inline bool lb_mutex__spin_enter(lb_mutex_t *m, bool waiter)
{
	if (m->spin_relax == 0)
		return false;
	int before = atomic_fetch_add_explicit(&m->spinners, 1, memory_order_relaxed);
	if (before < m->max_spinners + waiter && (waiter || !lb_mutex__crowded(m, before + 1)))
		return true;
	atomic_fetch_sub_explicit(&m->spinners, 1, memory_order_relaxed);
	return false;
}

static inline void lb_mutex__spin_exit(lb_mutex_t *m)
{
	atomic_fetch_sub_explicit(&m->spinners, 1, memory_order_relaxed);
}

/*
 * The locker's optimistic spin (kernel: mutex_optimistic_spin without a
 * waiter).  Returns 1 if we took the lock, 0 if we did not spin, -1 if we
 * spun and gave up.
 */
static inline int lb_mutex__optimistic_spin(lb_mutex_t *m, lb_mutex_ctx_t *t)
{
	struct lb_mutex__budget b;
	bool won = false;
	uintptr_t seen;

	if (!lb_mutex__spin_enter(m, false))
		return 0;
	lb_mutex__budget_start(&b, m, false);
	if (!lb_mutex__osq_lock(m, &t->osq, &b))
		goto out;
	/*
	 * Spin loop (bounded by the budget through osq_lock and
	 * spin_on_owner).  Unlike the kernel, we leave the OSQ *before* the
	 * trylock that may win: osq_unlock can have to wait for a successor
	 * preempted between its tail exchange and its link, and that wait must
	 * not happen while we hold the mutex.  A lost trylock rejoins the OSQ.
	 */
	for (;;) {
		seen = lb_load_relaxed(&m->owner);
		/* Promised to the first waiter: nothing left to win. */
		if (seen & (LB_MUTEX_HANDOFF | LB_MUTEX_PICKUP))
			break;
		if ((seen & ~LB_MUTEX_FLAGS) != 0) {
			if (!lb_mutex__spin_on_owner(m, seen & ~LB_MUTEX_FLAGS, false, &b))
				break;
			continue;
		}
		lb_mutex__osq_unlock(m, &t->osq);
		if (lb_mutex__trylock_common(m, t, 0, &seen)) {
			won = true;
			goto out;
		}
		if ((seen & (LB_MUTEX_HANDOFF | LB_MUTEX_PICKUP)) ||
		    !lb_mutex__osq_lock(m, &t->osq, &b))
			goto out;
	}
	lb_mutex__osq_unlock(m, &t->osq);
out:
	lb_mutex__spin_exit(m);
	return won ? 1 : -1;
}

/*
 * The woken first waiter's spin (kernel: mutex_optimistic_spin with a
 * waiter), no OSQ.  It asks for a handoff (HANDOFF) and keeps polling, so the
 * next unlock hands the lock to a running thread that picks it up at once.
 * Giving up, it withdraws the request: handing the lock to a thread that is
 * not running would leave it idle for a whole wake-up latency while everyone
 * else queues behind it (a convoy).  Returns 1 if we took the lock, 0 if we
 * could not spin, -1 if we spun and gave up.
 */
static inline int lb_mutex__waiter_spin(lb_mutex_t *m, lb_mutex_ctx_t *t, bool starving)
{
	struct lb_mutex__budget b;
	uintptr_t seen;
	int ret = -1;

	if (!lb_mutex__spin_enter(m, true))
		return 0;
	lb_mutex__budget_start(&b, m, true);
	for (;;) {
		/* Our own state: only we change TOKEN (wakers never take it). */
		bool token = lb_load_relaxed(&t->waiter.state) == LB_MUTEX__TOKEN;
		if (lb_mutex__trylock_common(m, t, LB_MUTEX__TRY_HANDOFF |
						   (token ? LB_MUTEX__HAS_TOKEN : 0), &seen)) {
			ret = 1;
			break;
		}
		if (!lb_mutex__spin_on_owner(m, seen & ~LB_MUTEX_FLAGS, true, &b))
			break;
	}
	if (ret < 0 && !starving) {
		/* X,{H,*} -> X,{*}.  An unlock that already saw HANDOFF may
		 * still hand it to us (it decides under wait_lock); then the
		 * trylock below or the loop in our caller picks it up. */
		seen = lb_load_relaxed(&m->owner);
		/* CAS retry loop (no waiting): other flags may change under us.
		 * Relaxed: only the owner word's own order matters. */
		while ((seen & LB_MUTEX_HANDOFF) &&
		       !atomic_compare_exchange_weak_explicit(&m->owner, &seen,
							      seen & ~LB_MUTEX_HANDOFF,
							      memory_order_relaxed,
							      memory_order_relaxed))
			;
		bool token = lb_load_relaxed(&t->waiter.state) == LB_MUTEX__TOKEN;
		if (lb_mutex__trylock_common(m, t, token ? LB_MUTEX__HAS_TOKEN : 0, &seen))
			ret = 1;
	}
	lb_mutex__spin_exit(m);
	return ret;
}

/* ---- sleeping ---------------------------------------------------------------------- */

/*
 * Sleep until a waker changes our state or abs (CLOCK_MONOTONIC) passes.
 * Returns the state we woke to; LB_MUTEX__SLEEPING means we timed out.
 */
static inline uint32_t lb_mutex__sleep(const lb_mutex_t *m, struct lb_mutex_waiter *w,
				       const struct timespec *abs, uint32_t *nsleeps)
{
	uint32_t st = LB_MUTEX__QUEUED;
	/* QUEUED -> SLEEPING announces the wait; if a waker changed QUEUED
	 * first we are already woken and skip the syscall.  Acquire (on
	 * failure) pairs with the waker's release. */
	if (!atomic_compare_exchange_strong_explicit(&w->state, &st, LB_MUTEX__SLEEPING,
						     memory_order_acquire,
						     memory_order_acquire))
		return st;
	int saved_errno = errno;
	/* Off the CPU from here until we return: say so to lb_sched_owner_running
	 * for the spinners of any lock this thread holds meanwhile. */
	struct lb_sched_task *me = &lb_mutex__waiter_task(w)->sched;
	lb_sched_block_begin(me);
	for (;;) {
		long r;
		if (abs)
			r = lb_futex_wait_abs_scoped(&w->state, LB_MUTEX__SLEEPING, abs,
						     m->futex_scope);
		else
			r = lb_futex_wait_scoped(&w->state, LB_MUTEX__SLEEPING, NULL,
						 m->futex_scope);
		bool timed_out = r == -1 && errno == ETIMEDOUT;
		(*nsleeps)++;
		/* Acquire pairs with the waker's release CAS. */
		st = lb_load_acquire(&w->state);
		if (st != LB_MUTEX__SLEEPING || timed_out)
			break;
		/* EINTR, EAGAIN, or a late wake aimed at an earlier wait of
		 * this record: still SLEEPING, so sleep again. */
	}
	lb_sched_block_end(me);
	errno = saved_errno;
	return st;
}

static inline bool lb_mutex__expired(const struct timespec *abs)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > abs->tv_sec ||
	       (now.tv_sec == abs->tv_sec && now.tv_nsec >= abs->tv_nsec);
}

/*
 * wait_lock held, t's waiter queued.  One turn of a waiter's loop before it
 * sleeps: take the lock if it is free or handed to us (0), or give up past
 * abs (ETIMEDOUT), both with wait_lock still held; otherwise mark the waiter
 * QUEUED and drop wait_lock (EAGAIN), and the caller sleeps.  An unlock that
 * released before our try either is seen by it or takes wait_lock after us
 * and wakes us.
 */
static inline int lb_mutex__queued_turn(lb_mutex_t *m, lb_mutex_ctx_t *t,
					const struct timespec *abs)
{
	uintptr_t seen;
	if (lb_mutex__trylock_common(m, t, 0, &seen))
		return 0;
	if (abs && lb_mutex__expired(abs))
		return ETIMEDOUT;
	lb_store_relaxed(&t->waiter.state, LB_MUTEX__QUEUED);
	lb_mutex__wait_unlock(m);
	return EAGAIN;
}

/* ---- lock slow path --------------------------------------------------------------- */

LB_SLOWPATH int lb_mutex__lock_slow(lb_mutex_t *m, lb_mutex_ctx_t *t,
				    const struct timespec *abs)
{
	struct lb_mutex_waiter *w = &t->waiter;
	uint32_t nsleeps = 0, won = 0, gaveup = 0;
	uintptr_t seen;
	int ret = 0, r;

	if (m->gen != LB_MUTEX_GEN_CURRENT)
		lb_mutex__misuse("a v3.x generation mutex takes the lb_mutex_v3_* verbs");
	if (lb_mutex__task(lb_load_relaxed(&m->owner)) == t)
		lb_mutex__misuse("lock of a mutex this thread already holds");

	/* 1. Optimistic spin. */
	r = lb_mutex__optimistic_spin(m, t);
	if (r > 0) {
		LB_MUTEX_COUNT(m, n_spin_won, 1);
		lb_mutex__gauge_acquired(m, t);
		return 0; /* the first waiter's tenure goes on */
	}
	gaveup += r < 0;

	/* 2. Queue up, unless it came free meanwhile. */
	lb_mutex__wait_lock(m);
	if (lb_mutex__trylock_common(m, t, 0, &seen))
		goto out_unlock;
	lb_mutex__enqueue(m, w);

	/* 3. Sleep until we take it, or time out. */
	for (;;) {
		/* wait_lock held.  A token we were given and did not use goes
		 * back before we look at the lock once more (see header). */
		if (lb_load_relaxed(&w->state) == LB_MUTEX__TOKEN) {
			atomic_fetch_and_explicit(&m->owner, ~LB_MUTEX_WOKEN, memory_order_relaxed);
			lb_store_relaxed(&w->state, LB_MUTEX__AWAKE);
		}
		if ((ret = lb_mutex__queued_turn(m, t, abs)) != EAGAIN)
			break;

		uint32_t st = lb_mutex__sleep(m, w, abs, &nsleeps);
		if (st != LB_MUTEX__SLEEPING) {
			/* Woken.  The first waiter asks for a handoff and spins
			 * for it (withdrawing the request if it gives up); past
			 * the starvation threshold the request stands even if
			 * it cannot spin (mutex-nospin) and goes back to sleep,
			 * so the next unlock hands the lock over and wakes it. */
			bool first = lb_load_relaxed(&m->wait_head) == w;
			bool starving = first && lb_mutex__now_ns() - w->since >= m->handoff_ns;
			unsigned int how = (starving ? LB_MUTEX__TRY_HANDOFF : 0) |
					   (st == LB_MUTEX__TOKEN ? LB_MUTEX__HAS_TOKEN : 0);
			r = first ? lb_mutex__waiter_spin(m, t, starving) : 0;
			won += r > 0;
			gaveup += r < 0;
			if (r > 0 || (r == 0 && lb_mutex__trylock_common(m, t, how, &seen))) {
				ret = 0; /* ours (ret still said EAGAIN) */
				lb_mutex__wait_lock(m);
				break;
			}
		}
		lb_mutex__wait_lock(m);
	}
	/* Leaving without the lock as first waiter: withdraw a HANDOFF we may
	 * have left standing (starving), so no unlock hands the lock to a
	 * waiter that did not ask.  An unlock already committed to a handoff
	 * (it saw HANDOFF and waits for wait_lock) still hands it to the next
	 * first waiter.  Relaxed: same-word RMW, as every flag update. */
	if (ret != 0 && lb_load_relaxed(&m->wait_head) == w)
		atomic_fetch_and_explicit(&m->owner, ~LB_MUTEX_HANDOFF, memory_order_relaxed);
	lb_mutex__dequeue(m, w);
	lb_store_relaxed(&w->state, LB_MUTEX__AWAKE);
	/* Served: if our record comes back to the head later, its tenure
	 * starts afresh (we hold the mutex: a holder's store). */
	if (ret == 0 && lb_load_relaxed(&m->tenure_owner) == (uintptr_t)w)
		lb_store_relaxed(&m->tenure_owner, 0);
	LB_MUTEX_COUNT(m, n_sleeps, nsleeps);
	LB_MUTEX_COUNT(m, n_timeouts, ret != 0);
out_unlock:
	LB_MUTEX_COUNT(m, n_spin_gaveup, gaveup);
	if (ret == 0) {
		LB_MUTEX_COUNT(m, n_spin_won, won); /* we hold the mutex */
		lb_mutex__gauge_acquired(m, t);
	}
	lb_mutex__wait_unlock(m);
	return ret;
}

/* ---- unlock slow path ------------------------------------------------------------- */

LB_SLOWPATH void lb_mutex__unlock_slow(lb_mutex_t *m, lb_mutex_ctx_t *t)
{
	const uintptr_t self = (uintptr_t)t;
	uintptr_t cur = lb_load_relaxed(&m->owner);
	bool token_to_give = false, stale = false, pass_on = false;
	uint64_t now = 0;

	if (m->gen != LB_MUTEX_GEN_CURRENT)
		lb_mutex__misuse("a v3.x generation mutex takes the lb_mutex_v3_* verbs");

	/*
	 * Tenure quantum: with more (sleeping) waiters than CPUs, a first
	 * waiter that has stood at the head for LB_MUTEX_TENURE_NS, whoever
	 * held the lock meanwhile, is passed the lock, as if it had asked.
	 * Its tenure is dated here, on the first slow unlock that sees it at
	 * the head (every LB_MUTEX_TOKEN_CHECK_EVERY-th quiet unlock comes here
	 * too), so it is late by at most that many operations.  wait_head is
	 * only compared, never dereferenced, so reading it without wait_lock is
	 * safe.  We hold the lock: the tenure fields, written by holders only,
	 * are stable.
	 */
	if ((cur & (LB_MUTEX_WAITERS | LB_MUTEX_HANDOFF)) == LB_MUTEX_WAITERS &&
	    lb_mutex__waiters_outnumber_cpus(m)) {
		uintptr_t head = (uintptr_t)lb_load_relaxed(&m->wait_head);
		now = lb_mutex__now_ns();
		if (lb_load_relaxed(&m->tenure_owner) != head) {
			lb_store_relaxed(&m->tenure_owner, head);
			lb_store_relaxed(&m->tenure_ns, now);
		} else if (now - lb_load_relaxed(&m->tenure_ns) >= LB_MUTEX_TENURE_NS) {
			pass_on = true;
		}
	}

	/* CAS retry loop (no waiting): waiters may set flags under us. */
	for (;;) {
		if ((cur & ~LB_MUTEX_FLAGS) != self || (cur & LB_MUTEX_PICKUP))
			lb_mutex__misuse("unlock of a mutex this thread does not hold");
		if ((cur & LB_MUTEX_HANDOFF) || pass_on)
			break; /* keep it: it goes to the first waiter below */
		/* A token in flight for too long was lost with a preempted
		 * unlocker: treat it as absent (we hold the lock, so token_ns,
		 * written by holders only, is stable). */
		if ((cur & (LB_MUTEX_WAITERS | LB_MUTEX_WOKEN)) ==
		    (LB_MUTEX_WAITERS | LB_MUTEX_WOKEN)) {
			if (now == 0)
				now = lb_mutex__now_ns();
			stale = now - lb_load_relaxed(&m->token_ns) > LB_MUTEX_TOKEN_STALE_NS;
		} else {
			stale = false;
		}
		/* self,{W?,K?} -> 0,{W?,K?}; with W and no (fresh) K we owe a
		 * wake and set K for the waiter we are about to wake. */
		token_to_give = (cur & LB_MUTEX_WAITERS) && (!(cur & LB_MUTEX_WOKEN) || stale);
		uintptr_t want = (cur & (LB_MUTEX_WAITERS | LB_MUTEX_WOKEN)) |
				 (token_to_give ? LB_MUTEX_WOKEN : 0);
		/* Date the token while we still hold the lock: the next holder,
		 * which acquires after our release, reads a current value. */
		if (token_to_give)
			lb_store_relaxed(&m->token_ns, now ? now : lb_mutex__now_ns());
		/* Release: publishes the critical section to the next owner. */
		if (atomic_compare_exchange_weak_explicit(&m->owner, &cur, want,
							  memory_order_release,
							  memory_order_relaxed)) {
			if (!token_to_give)
				return;
			break;
		}
	}

	lb_mutex__wait_lock(m);
	struct lb_mutex_waiter *first = lb_load_relaxed(&m->wait_head);
	bool need_wake = false;
	if ((cur & LB_MUTEX_HANDOFF) || pass_on) {
		/* self,{H?,*} -> first,{P,*} (or 0,{*} if the list emptied).
		 * Only wait_lock holders touch the word while HANDOFF is set
		 * and the owner is ours, but stay a CAS loop for robustness.
		 * Release: the new owner's pickup CAS acquires. */
		uintptr_t want;
		/* The next head's tenure starts afresh (dated at the next
		 * slow unlock).  Still ours: a holder's store. */
		lb_store_relaxed(&m->tenure_owner, 0);
		do {
			want = cur & (LB_MUTEX_WAITERS | LB_MUTEX_WOKEN);
			if (first)
				want |= (uintptr_t)lb_mutex__waiter_task(first) | LB_MUTEX_PICKUP;
		} while (!atomic_compare_exchange_weak_explicit(&m->owner, &cur, want,
								memory_order_release,
								memory_order_relaxed));
		if (first) {
			need_wake = lb_mutex__wake_waiter(first, false);
			LB_MUTEX_COUNT(m, n_handoffs, 1);
			LB_PROBE_HANDOFF(m, lb_mutex__waiter_task(first));
		}
	} else if (first) {
		need_wake = lb_mutex__wake_waiter(first, true); /* it now holds the token */
		/* Renewing a stale token: its first wake may never have been
		 * issued, so wake even if the state already says TOKEN. */
		need_wake |= stale;
	} else {
		/* The list emptied before we got here: nobody to take the token. */
		atomic_fetch_and_explicit(&m->owner, ~LB_MUTEX_WOKEN, memory_order_relaxed);
	}
	LB_MUTEX_COUNT(m, n_wakes, need_wake);
	lb_mutex__wait_unlock(m);
	if (need_wake)
		lb_futex_wake_scoped(&first->state, 1, m->futex_scope);
}

/* ---- the verbs --------------------------------------------------------------------- */

static inline void lb_mutex_lock(lb_mutex_t *m, lb_mutex_ctx_t *t)
{
	/* 0,{} -> self,{}; or, when the lock is free but flagged (waiters
	 * asleep, a woken one on its way), 0,{W?,K?} -> self,{W?,K?}.
	 * Acquire pairs with the release of the previous unlock. */
	uintptr_t cur = lb_load_relaxed(&m->owner);
	if (LB_LIKELY((cur & ~(LB_MUTEX_WAITERS | LB_MUTEX_WOKEN)) == 0) &&
	    atomic_compare_exchange_strong_explicit(&m->owner, &cur, (uintptr_t)t | cur,
						    memory_order_acquire, memory_order_relaxed)) {
		LB_MUTEX_COUNT(m, n_fast, 1); /* we hold it: no RMW needed */
		return;
	}
	LB_PROBE_CONTENTION_BEGIN(m, LB_CONTENTION_MUTEX);
	lb_mutex__lock_slow(m, t, NULL);
	LB_PROBE_CONTENTION_END(m, 0);
}

/*
 * Lock, giving up when abs (CLOCK_MONOTONIC) has passed.  0 or ETIMEDOUT.
 */
static inline int lb_mutex_timedlock(lb_mutex_t *m, lb_mutex_ctx_t *t,
				     const struct timespec *abs)
{
	uintptr_t cur = 0;
	/* Acquire pairs with the release of the previous unlock. */
	if (atomic_compare_exchange_strong_explicit(&m->owner, &cur, (uintptr_t)t,
						    memory_order_acquire, memory_order_relaxed))
		return 0;
	LB_PROBE_CONTENTION_BEGIN(m, LB_CONTENTION_MUTEX);
	int ret = lb_mutex__lock_slow(m, t, abs);
	LB_PROBE_CONTENTION_END(m, ret);
	return ret;
}

/* Never succeeds while the lock is held or promised to a waiter. */
static inline bool lb_mutex_trylock(lb_mutex_t *m, lb_mutex_ctx_t *t)
{
	uintptr_t cur = 0, seen;
	/* Acquire pairs with the release of the previous unlock. */
	if (atomic_compare_exchange_strong_explicit(&m->owner, &cur, (uintptr_t)t,
						    memory_order_acquire, memory_order_relaxed))
		return true;
	if (cur & ~LB_MUTEX_FLAGS)
		return false; /* held (HANDOFF/PICKUP imply held) */
	return lb_mutex__trylock_common(m, t, 0, &seen);
}

static inline void lb_mutex_unlock(lb_mutex_t *m, lb_mutex_ctx_t *t)
{
	/* Our own word, normally still in our cache: read it to know which
	 * single CAS to do.  self,{} -> 0,{}; or self,{W?,K} -> 0,{W?,K}: a
	 * woken waiter holds the token, so nobody needs waking -- except that
	 * every LB_MUTEX_TOKEN_CHECK_EVERY-th such quiet unlock with waiters
	 * goes to the slow path, which renews a token older than
	 * LB_MUTEX_TOKEN_STALE_NS.  `quiet` is written by holders only (plain
	 * relaxed load and store).  Release publishes the critical section to
	 * the next owner. */
	uintptr_t cur = lb_load_relaxed(&m->owner);
	uintptr_t wk = cur & (LB_MUTEX_WAITERS | LB_MUTEX_WOKEN);
	if (LB_LIKELY((cur & ~(LB_MUTEX_WAITERS | LB_MUTEX_WOKEN)) == (uintptr_t)t) &&
	    wk != LB_MUTEX_WAITERS) {
		if (wk == (LB_MUTEX_WAITERS | LB_MUTEX_WOKEN)) {
			uint32_t q = lb_load_relaxed(&m->quiet) + 1;
			lb_store_relaxed(&m->quiet, q);
			if (LB_UNLIKELY(q % LB_MUTEX_TOKEN_CHECK_EVERY == 0))
				goto slow;
		}
		if (atomic_compare_exchange_strong_explicit(&m->owner, &cur, wk,
							    memory_order_release,
							    memory_order_relaxed))
			return;
	}
slow:
	lb_mutex__unlock_slow(m, t);
}

/*
 * In a fork() child (one thread left, nothing runs concurrently): forget the
 * waiters, spinners and wait_lock holder, which were other threads.  self is
 * the forking thread's record (NULL: it has none); a mutex it holds stays
 * its own.  A mutex held by a vanished thread stays held, by `orphan`, a
 * record no live thread has (the vanished one's memory may be recycled for a
 * new thread, which must not look like the holder).  A hand-over in flight
 * to a vanished waiter (PICKUP) was a release: the mutex becomes free.
 * Plain stores: single-threaded here.  self's own queue nodes are reset too
 * (the forking thread was neither spinning nor waiting, fork is its call).
 *
 * A no-op for a mutex shared by processes (attr.pshared, shared futex
 * scope): its holder and waiters may be threads of other processes, which
 * live on after our fork; forgetting them would strand their waiters and
 * make a process-local orphan the owner.  self's record lives in the shared
 * mapping too (it is the parent's as well) and is left as it is: a child
 * that uses the lock needs a record of its own.
 */
static inline void lb_mutex_atfork_child(lb_mutex_t *m, lb_mutex_ctx_t *self,
					 lb_mutex_ctx_t *orphan)
{
	if (m->futex_scope != FUTEX_PRIVATE_FLAG)
		return; /* pshared: nothing here belongs to this process alone */
	uintptr_t w = lb_load_relaxed(&m->owner);
	lb_mutex_ctx_t *owner = lb_mutex__task(w);
	uintptr_t keep = 0;
	if (owner && !(w & LB_MUTEX_PICKUP))
		keep = (uintptr_t)(owner == self ? self : orphan);
	lb_store_relaxed(&m->owner, keep);
	lb_mutex__forget_contenders(m);
	if (self)
		lb_mutex_ctx_init(self);
}

/* The v3.14 and v3.15 generations: their own verbs on the same lb_mutex_t. */
#include "mutex_v3.h"

#endif /* LB_MUTEX_H */
