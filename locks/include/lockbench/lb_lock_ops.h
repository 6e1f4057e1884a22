/* SPDX-License-Identifier: MIT */
/*
 * lb_lock_ops.h - the lock vtable: one const struct per lock implementation.
 *
 * Every consumer (bench workloads, locktorture, the conformance tests) talks
 * to locks only through this table.  A NULL member means "not supported"; the
 * flags word mirrors which optional members are present and lb_registry_check()
 * verifies the two agree at start-up.
 *
 * Objects and contexts:
 *  - A lock object is lock_size bytes at lock_align alignment, allocated by
 *    the caller (lb_lock_alloc() puts it on its own cache lines), set up with
 *    init() and torn down with destroy().  The ops table itself is const and
 *    never holds state.
 *  - A thread context (thread_ctx_size bytes, may be 0) belongs to one thread
 *    and is shared by every lock object of that type the thread uses, like the
 *    kernel's task_struct or per-CPU queue nodes.  thread_init() gives it the
 *    caller's dense thread index (0..LB_MAX_THREADS-1); the memory must stay
 *    valid until no lock of the type can touch it any more (other threads may
 *    write into a queued node after its owner stopped waiting).
 *    tctx is NULL when thread_ctx_size is 0.
 */
#ifndef LB_LOCK_OPS_H
#define LB_LOCK_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h> /* struct timespec, clockid_t (timedlock) */

/* The largest dense thread index + 1 any lock must cope with. */
#define LB_MAX_THREADS 4096

enum lb_lock_flag {
	LB_LOCK_F_EXCLUSIVE  = 1u << 0, /* lock/unlock give mutual exclusion */
	LB_LOCK_F_RW         = 1u << 1, /* read_lock/read_unlock present */
	LB_LOCK_F_TRYLOCK    = 1u << 2, /* trylock present (and read_trylock if RW) */
	LB_LOCK_F_SLEEPS     = 1u << 3, /* waiters may block in the kernel */
	LB_LOCK_F_PI         = 1u << 4, /* priority inheritance */
	LB_LOCK_F_THREAD_CTX = 1u << 5, /* needs a per-thread context */
	LB_LOCK_F_BUSTED     = 1u << 6, /* deliberately broken: negative control */
	LB_LOCK_F_NOLOCK     = 1u << 7, /* no lock at all (harness baseline) */
	LB_LOCK_F_FAIR       = 1u << 8, /* FIFO hand-over order by design */
	LB_LOCK_F_COUNTERS   = 1u << 9, /* counters() present */
	LB_LOCK_F_RCU        = 1u << 10, /* readers are NOT excluded by writers:
					  * writers publish new versions and
					  * unlock waits for a grace period */
	LB_LOCK_F_SPIN_ROLE  = 1u << 11, /* stands in for a spinlock_t/rwlock_t:
					  * short critical sections, even if
					  * its waiters park (pv) under
					  * oversubscription; locktorture
					  * gives it spin_lock/rw_lock holds */
	LB_LOCK_F_TIMED      = 1u << 12, /* timedlock present */
	LB_LOCK_F_NO_TURN    = 1u << 13, /* by design a waiter may be passed over
					  * without bound (glibc's rwlocks: POSIX
					  * promises waiters no order); locktorture
					  * calls such a wait starvation, not a
					  * stall */
	LB_LOCK_F_PSHARED    = 1u << 14, /* init_shared present: the lock works
					  * across processes (see init_shared) */
	LB_LOCK_F_FALLIBLE   = 1u << 15, /* lock_fallible present: acquisition
					  * can fail (deadlock detected, timeout);
					  * callers either handle that through
					  * lock_fallible or refuse the lock */
};

/* One named event counter a lock can report (for `lockbench bench --explain`). */
struct lb_counter {
	const char *name;
	uint64_t value;
};
#define LB_MAX_COUNTERS 24

/* The buffer a workload keeps for describe()'s line, terminator included. */
#define LB_DESCRIBE_MAX 256

struct lb_lock_ops {
	const char *name;        /* CLI key, unique */
	const char *family;      /* "spin", "mutex", "rwlock", "pi", "baseline", ... */
	const char *summary;     /* one line for `lockbench list` */
	const char *unsupported; /* non-NULL: cannot run here, and why */
	unsigned int flags;      /* enum lb_lock_flag */
	size_t lock_size, lock_align;
	size_t thread_ctx_size;

	int  (*init)(void *lock);            /* 0 or an errno value */
	void (*destroy)(void *lock);         /* may be NULL: nothing to do */
	int  (*thread_init)(void *tctx, unsigned int thread_index);
	void (*thread_fini)(void *tctx);

	void (*lock)(void *lock, void *tctx);
	void (*unlock)(void *lock, void *tctx);
	bool (*trylock)(void *lock, void *tctx);

	void (*read_lock)(void *lock, void *tctx);
	void (*read_unlock)(void *lock, void *tctx);
	bool (*read_trylock)(void *lock, void *tctx);

	/*
	 * Fill out[] with up to max counters (event counts since init); return
	 * how many.  Counting is off unless the lock was built with it.
	 */
	size_t (*counters)(const void *lock, struct lb_counter *out, size_t max);

	/*
	 * PI locks: set the calling thread's base priority as the lock sees
	 * it (0 = normal/SCHED_OTHER, 1..99 = SCHED_FIFO priority), e.g. when
	 * locktorture's rt_boost changes it.  NULL: the lock does not care.
	 */
	int (*thread_set_prio)(void *tctx, int prio);

	/*
	 * One line on how an initialised lock runs here (spin budget, whether
	 * priority boosts reach the scheduler...), printed beside the results
	 * so figures are never read without it.  NULL: nothing to say.  Callers
	 * pass LB_DESCRIBE_MAX bytes; the line must fit (registry-coverage
	 * checks every lock's), or reports would show it cut short.
	 */
	void (*describe)(const void *lock, char *buf, size_t len);

	/*
	 * Lock, giving up when abs on clock (CLOCK_REALTIME or CLOCK_MONOTONIC)
	 * has passed: 0 (locked) or ETIMEDOUT; EINVAL for another clock.  The
	 * caller waits in the lock's own queue (its turn comes as for lock()),
	 * never in a cancellation point; a deadline already past still takes a
	 * free lock.  NULL: none (callers poll trylock).  LB_LOCK_F_TIMED
	 * mirrors presence.
	 */
	int (*timedlock)(void *lock, void *tctx, const struct timespec *abs, clockid_t clock);

	/*
	 * In a fork() child, before the lock is used again there: only the
	 * forking thread (context tctx, NULL when it has none) survived, so
	 * forget every queued waiter, spinner and internal-lock holder, which
	 * name threads that do not exist (their records will be recycled).  A
	 * lock the forking thread holds stays held by it; one held by a
	 * vanished thread stays held, as glibc leaves it, by an owner no
	 * recycled record can be mistaken for.  Also resets what tctx itself
	 * says about vanished threads (idempotent: called once per lock).
	 * Runs single-threaded.  NULL: nothing to reset (no queue, no owner).
	 */
	void (*atfork_child)(void *lock, void *tctx);

	/*
	 * Initialise the lock (instead of init(), 0 or an errno value) for use
	 * by several processes: the object and every thread context the caller
	 * hands the lock lie in one MAP_SHARED mapping at the same address in
	 * each process (mapped before the fork), and the lock keeps no state
	 * anywhere else - no private futex, no waiter node on a stack, in TLS
	 * or in a table of its own.  destroy() as for init().  NULL: the lock
	 * cannot be shared by processes.  LB_LOCK_F_PSHARED mirrors presence.
	 * (Plugin ABI 2; a version-1 plugin reads as NULL here.)
	 */
	int (*init_shared)(void *lock);

	/*
	 * Lock, or fail: 0 (locked), EDEADLK (the lock saw that waiting would
	 * never end: the caller already holds it, or holds what its holder
	 * waits for) or ETIMEDOUT (it gave up waiting); on failure the lock is
	 * not held and the caller must not unlock it.  NULL: lock() never
	 * fails (every lock but the resilient ones).  LB_LOCK_F_FALLIBLE
	 * mirrors presence.  Such a lock's plain lock() still acquires for
	 * callers that cannot fail: it retries after a timeout and aborts the
	 * process on a detected deadlock (a caller bug there).  (Plugin ABI 3.)
	 */
	int (*lock_fallible)(void *lock, void *tctx);

	/*
	 * The calling thread announces a wait off its CPU that it makes while
	 * holding locks (begin true; an I/O wait, a sleep), and its end, to
	 * the locks whose spinners ask whether the owner runs (the kernel's
	 * owner->on_cpu; lb_sched_hooks.h): a spinner then stops as a kernel
	 * spinner stops for a sleeping owner.  NULL: the lock does not ask.
	 * Announcements nest.  (Plugin ABI 4.)
	 */
	void (*offcpu)(void *tctx, bool begin);
};

#endif /* LB_LOCK_OPS_H */
