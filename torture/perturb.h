/* SPDX-License-Identifier: MIT */
/*
 * perturb.h - locktorture --perturb: random short delays, yields and sleeps
 * around every atomic operation and futex call of the lock under test, and
 * inside the torture's critical sections, the userspace counterpart of the
 * kernel torture's random delays and preemption.  They widen the race
 * windows a broken lock has (two owners between a test and a set, a wake-up
 * sent before the waiter sleeps, a lock handed on after it was released)
 * from nanoseconds to microseconds, so a torture run of seconds hits them.
 *
 * Where the delays go (all generic: the hooks know only which atomic builtin
 * runs and its memory order, never which lock):
 *  - before each atomic and futex call, and after each atomic: RATE % of them;
 *  - before a futex wait: PUBLISH_BOOST times as often, mostly a yield or a
 *    sleep (the window between a waiter's state change and its sleep);
 *  - at a rarely run site (lb_perturb_slow_site): before and after a store
 *    or read-modify-write, and after a load, RARE_K / n of the time: a wait
 *    path's loads, where a window between two loads lies, as well as its
 *    stores;
 *  - after an atomic that publishes a lock state (a store or read-modify-write
 *    with release, acq_rel or seq_cst order: an unlock, a hand-over, a flag
 *    that tells others what to do): PUBLISH_BOOST times as often, and mostly
 *    a yield or a sleep, so that other threads run while the new state is
 *    visible and the publisher has not finished what comes after it (a slow
 *    unlock's second step, a pass-on after the release);
 *  - inside the torture's critical sections (lb_perturb_hold()): a preempted
 *    holder, now and then for a millisecond or two (a "long hold"), so that a
 *    second owner let in by a broken lock meets the first one there.  An
 *    acquisition that went through the lock's slow paths (more than
 *    CONTENDED_OPS hooked operations since lb_perturb_acquire_begin()) is
 *    followed by such a hold far more often than one that took the fast
 *    path: a broken slow path is where a second owner gets in, and the
 *    owner it let in (or raced) is then still inside when the other comes;
 *  - each thread's rate changes in phases of a few thousand decisions: 0,
 *    1/2, 1 or 5/2 times RATE (mean RATE), so a heavily delayed releaser
 *    meets threads that run undelayed;
 *  - a sleep is now and then a long one (a lost time slice), a yield now and
 *    then a burst of yields;
 *  - thread behaviour: each writer passes through phases of a few
 *    milliseconds, one in POLL_PHASE_EVERY of them a polling phase, in which
 *    every acquisition first polls the lock's trylock for up to a few hundred
 *    µs (lb_perturb_poll_ns()).  Sleeping waiters leave a lock alone while
 *    it is briefly free (a release followed by a hand-over that overwrites
 *    whoever took it meanwhile), and a poller that is awake and trying is
 *    what takes it in such a window.
 *
 * The hooks are compiled only into locktorture's own copy of the locks
 * (torture/perturb_hooks.h, -DLB_PERTURB=1); lockbench never has them.
 *
 * One global configuration, written by main before any worker starts and
 * read-only afterwards (the hooks in the lock code have no run context to
 * look it up in).  Each thread draws from its own generator, seeded from
 * the run's seed and the worker's index, so --seed N replays the same
 * decision streams (the interleaving itself still varies from run to run).
 */
#ifndef LB_TORTURE_PERTURB_H
#define LB_TORTURE_PERTURB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Read by every hook: true while --perturb is on. */
extern bool lb_perturb_enabled;

/* Turn the hooks on: perturb rate_ppm of every million points, seed the threads
 * from seed.  Before any worker starts. */
void lb_perturb_configure(uint32_t rate_ppm, uint64_t seed);

/* Seed the calling thread's generator for worker `index` (dense). */
void lb_perturb_thread_start(unsigned int index);

/*
 * The calling worker's spin counter (its record's `spins`), NULL in other
 * threads.  lb_cpu_relax() in locktorture's copy of the locks (LB_PERTURB)
 * adds one, whether --perturb is on or not: the watchdog's proof that a
 * waiter really ran its wait loop (evidence.h).
 */
extern _Thread_local _Atomic uint64_t *lb_perturb_spin_counter;

static inline void lb_perturb_count_spin(void)
{
	_Atomic uint64_t *c = lb_perturb_spin_counter;
	/* One writer (this thread): a load and a store, no RMW; relaxed, the
	 * watchdog's read of it orders nothing. */
	if (c)
		atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
				      memory_order_relaxed);
}

/* Points perturbed so far, by kind (a racy sum: for the summary line). */
struct lb_perturb_counts {
	uint64_t points, spins, yields, sleeps;
	uint64_t published; /* of the points: right after a publishing atomic */
	uint64_t holds;     /* of the points: inside a critical section */
	uint64_t contended; /* of those: after a slow-path acquisition */
	uint64_t rare;      /* of the points: at a rarely run store or RMW site */
	uint64_t long_ones; /* sleeps of a time slice or more */
	uint64_t polls;     /* writer acquisitions that polled trylock first */
};
void lb_perturb_read_counts(struct lb_perturb_counts *out);
/* locktorture -P: the counts' size, and moving them into zeroed shared
 * memory (before the first fork) so that every process adds to them. */
size_t lb_perturb_tally_size(void);
void lb_perturb_share_tally(void *mem);

/* One decision at a plain point: maybe spin, yield or sleep. */
void lb_perturb_slow(void);
/* One decision right after an atomic that published a lock state. */
void lb_perturb_slow_published(void);
/* One decision right before a futex wait: the window between a waiter's
 * state change and its sleep (PUBLISH_BOOST times the rate, mostly a
 * yield or a sleep, as after a publishing atomic). */
void lb_perturb_slow_before_wait(void);
static inline void lb_perturb_before_wait(void)
{
	if (__builtin_expect(lb_perturb_enabled, 0))
		lb_perturb_slow_before_wait();
}
/* One decision inside a critical section (the caller holds the lock). */
void lb_perturb_slow_hold(bool reader);

static inline void lb_perturb_point(void)
{
	if (__builtin_expect(lb_perturb_enabled, 0))
		lb_perturb_slow();
}

/*
 * A hooked atomic's point, before (after = false) or after it; *hits counts
 * the times this call site ran on this thread; publishes: a store or a
 * read-modify-write (a compare-exchange that succeeded, after it); mo its
 * memory order (after only).
 */
void lb_perturb_slow_site(uint32_t *hits, bool after, bool publishes, int mo);

/* The torture is about to acquire: count the lock's hooked operations from
 * here to the critical section. */
void lb_perturb_acquire_begin_slow(void);
static inline void lb_perturb_acquire_begin(void)
{
	if (__builtin_expect(lb_perturb_enabled, 0))
		lb_perturb_acquire_begin_slow();
}

/* In the torture's critical sections, between the checks' markers.  A read
 * section only at the plain rate: read holds that overlap keep a
 * reader-preferring lock (glibc's rwlock) read-held for good and starve its
 * writers, which the stall check would then report. */
static inline void lb_perturb_hold(bool reader)
{
	if (__builtin_expect(lb_perturb_enabled, 0))
		lb_perturb_slow_hold(reader);
}

/*
 * How long the calling writer polls trylock before this acquisition's
 * blocking op, in ns; 0 outside its polling phases (then the usual
 * --trylock_pct choice applies).  Counts a poll when it returns non-zero.
 */
uint64_t lb_perturb_poll_ns_slow(void);
static inline uint64_t lb_perturb_poll_ns(void)
{
	if (__builtin_expect(lb_perturb_enabled, 0))
		return lb_perturb_poll_ns_slow();
	return 0;
}

#endif /* LB_TORTURE_PERTURB_H */
