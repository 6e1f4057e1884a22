/* SPDX-License-Identifier: MIT */
/*
 * context.h - the locktorture run context: configuration, the shared
 * exclusion-check state, and one record per worker thread.
 *
 * One struct lb_torture_run is passed explicitly to every part of the
 * program (workers, stats, watchdog, background threads); there are no
 * module-parameter-style globals.  The only globals are the --perturb
 * settings (perturb.c: the hooks in the lock code have no context), the
 * fatal-signal report's (fatal.c) and the signal flag in
 * run.c.
 *
 * Sharing rules:
 *  - cfg and the lock pointers are written before any thread starts and are
 *    read-only afterwards.
 *  - The check flags (lock_is_write_held, lock_is_read_held, holders,
 *    rcu_gen and each reader's rcu_reader word) are
 *    relaxed atomics: the kernel uses plain racy accesses here, which are
 *    undefined behaviour in C11.  Relaxed keeps them defined without adding
 *    ordering of our own that could mask a broken lock; when the lock is
 *    correct, its own acquire/release already orders them.
 *  - Per-thread counters and state words have one writer (the owner) and are
 *    read racily by the stats/watchdog code, like the kernel's data_race()
 *    reads: relaxed loads, a snapshot may be slightly stale.
 */
#ifndef LB_TORTURE_CONTEXT_H
#define LB_TORTURE_CONTEXT_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lb_atomic.h"
#include "lb_lock_ops.h"
#include "random.h"

/* The kernel's limit on nested_locks (bits of the lockset word used). */
#define LB_TORTURE_MAX_NESTED 8
/* Largest nwriters_stress / nreaders_stress accepted. */
#define LB_TORTURE_MAX_STRESS 1024

/* Everything the command line decides; resolved before the run starts. */
struct lb_torture_config {
	const struct lb_lock_ops *ops;
	const char *type;            /* the CLI lock name, printed as "<type>-torture:" */

	int nwriters_stress;         /* resolved thread counts (printed) */
	int nreaders_stress;
	int stat_interval;           /* s; 0 = only at the end */
	int duration;                /* s (the kernel's shutdown_secs); 0 = until a signal */
	int long_hold;               /* ms; 0 = no long holds */
	int stutter;                 /* jiffies; 0 = off */
	int shuffle_interval;        /* jiffies; 0 = off */
	int onoff_interval;          /* s; 0 = off */
	int onoff_holdoff;           /* s */
	int rt_boost;                /* 0 off, 1 PI locks only, 2 all locks */
	int rt_boost_factor;
	int writer_fifo;             /* 0/1 */
	int nested_locks;            /* 0..LB_TORTURE_MAX_NESTED */
	int call_rcu_chains;
	int verbose;
	int acq_writer_lim;          /* jiffies; 0 = off */
	cpu_set_t bind_readers;      /* all allowed CPUs unless given */
	cpu_set_t bind_writers;

	/* Port-only settings. */
	uint64_t jiffy_ns;           /* length of a port jiffy (default 1 ms) */
	int watchdog;                /* s without progress before FAILURE; 0 = off */
	long long inject_hang;       /* writer 0 keeps the lock after N acquisitions; -1 off */
	bool holders_check;          /* deterministic fetch_add holders counter */
	bool fail_fast;              /* end the test at the first failure */
	bool rt_spinners;            /* allow SCHED_FIFO with spinning locks anyway */
	int trylock_pct;             /* % of acquisitions through trylock-and-retry */
	int stall_secs;              /* one waiter stuck this long while others progress
				      * = FAILURE; 0 = off */

	int deadlock;                /* --deadlock: enum lb_torture_deadlock_mode (deadlock.h) */
	bool deadlock_nmi;           /* --deadlock_nmi: signal-handler contenders (default on) */

	uint32_t perturb_ppm;        /* --perturb: points perturbed per million; 0 = off */
	uint64_t seed;               /* --seed, or drawn at start; printed for replay */
	bool kernel_defaults;        /* -1 thread counts as the kernel chooses them */
	bool processes;              /* -P: workers are forked processes sharing one
				      * MAP_SHARED lock set up by init_shared (procmode.h) */
	int argc;                    /* the command line, for the replay line */
	char **argv;

	cpu_set_t allowed;           /* the CPUs this process may use at start */
	int ncpus;                   /* CPU_COUNT(&allowed) */
};

/* What a worker is doing, for the watchdog's dump. */
enum lb_torture_state {
	LB_TORTURE_STARTING,
	LB_TORTURE_OUTSIDE,          /* not holding, not waiting */
	LB_TORTURE_WAITING,          /* inside lock()/read_lock() */
	LB_TORTURE_HOLDING,
	LB_TORTURE_PAUSED,           /* stutter */
	LB_TORTURE_HUNG,             /* --inject_hang: holding on purpose, forever */
	LB_TORTURE_EXITED,
};

/* state_lock values: which lock a WAITING/HOLDING thread is on. */
#define LB_TORTURE_MAIN_LOCK (-1)

struct lb_torture_run;

/* One worker thread.  The first cache line is what other threads read. */
struct lb_torture_thread {
	_Alignas(LB_CACHELINE) _Atomic long n_lock_acquired;
	_Atomic long n_lock_fail;
	_Atomic int state;              /* enum lb_torture_state */
	_Atomic int state_lock;         /* LB_TORTURE_MAIN_LOCK or a nested index */
	_Atomic uint64_t state_since_ns;   /* coarse clock */
	_Atomic uint64_t last_progress_ns; /* coarse clock */
	_Atomic bool ready;             /* set-up done (or failed) */
	_Atomic bool init_failed;
	_Atomic bool exited;            /* release: the thread touches nothing after it */
	_Atomic uint64_t rcu_reader;    /* RCU locks: generation seen << 1 | inside */
	_Atomic long n_trylock;         /* acquisitions that came through trylock */
	/* lb_cpu_relax() calls in the lock's wait loops (perturb.h): one writer,
	 * read by the watchdog's evidence (evidence.h). */
	_Atomic uint64_t spins;
	_Atomic int tid;                /* kernel thread id; 0 before set-up */

	/* Owner-private from here on (main reads tctx only after joining). */
	_Alignas(LB_CACHELINE) struct lb_torture_run *run;
	bool writer;
	int id;                         /* index among the writers or the readers */
	unsigned int index;             /* dense index over all workers */
	bool created;                   /* pthread_create succeeded (main only) */
	pthread_t handle;
	pid_t pid;                      /* -P: the worker's process; 0 for a thread */
	bool rt;                        /* currently SCHED_FIFO */
	int ntctx;                      /* contexts in tctx[] that thread_init accepted */
	void *tctx[1 + LB_TORTURE_MAX_NESTED]; /* [0] main lock, [1+k] nested lock k */
	struct lb_torture_random rng;
};

/* The delay model of the kernel's kernel/locking/locktorture.c, picked from the lock's flags. */
enum lb_torture_delay_model {
	LB_TORTURE_DELAY_BUSTED,     /* lock_busted */
	LB_TORTURE_DELAY_SPIN,       /* spin_lock family */
	LB_TORTURE_DELAY_RTMUTEX,    /* rtmutex_lock (PI): the spin delays */
	LB_TORTURE_DELAY_RWLOCK,     /* rw_lock: spinning reader/writer */
	LB_TORTURE_DELAY_MUTEX,      /* mutex_lock: sleeping exclusive */
	LB_TORTURE_DELAY_RWSEM,      /* rwsem_lock: sleeping reader/writer */
};

struct lb_torture_affinity;
struct lb_torture_stutter;
struct lb_torture_rcu_chains;
struct lb_torture_deadlock;

struct lb_torture_run {
	struct lb_torture_config cfg;
	const struct lb_lock_ops *ops;
	enum lb_torture_delay_model delay_model;
	void *lock;                              /* the main lock */
	void *nested[LB_TORTURE_MAX_NESTED];     /* separate lock instances */

	struct lb_torture_thread *threads;       /* writers [0, W), then readers */
	int nthreads;

	/* The exclusion check (see the sharing rules above). */
	_Alignas(LB_CACHELINE) _Atomic bool lock_is_write_held;
	_Alignas(LB_CACHELINE) _Atomic int lock_is_read_held;
	_Alignas(LB_CACHELINE) _Atomic uint64_t holders;
	_Alignas(LB_CACHELINE) _Atomic uint64_t rcu_gen;   /* RCU locks: writer generation */
	bool rcu;                                /* LB_LOCK_F_RCU: readers overlap writers */

	/*
	 * Plain (non-atomic) data written by writers and read by readers inside
	 * their critical sections, deliberately NOT atomic: only the lock's
	 * acquire/release orders these accesses, so under ThreadSanitizer a lock
	 * that lost its ordering shows up as a data race, and without TSan a
	 * torn pair (first != second) shows a missing exclusion.  RCU readers
	 * skip it (they overlap writers by design).
	 */
	_Alignas(LB_CACHELINE) struct {
		uint64_t first, second;
	} plain;

	/* Control words, polled with relaxed loads (they publish no data). */
	_Alignas(LB_CACHELINE) _Atomic bool stop;
	_Atomic int stutter_pause;               /* 0 run, 1 sleep-pause, 2 spin-pause */
	_Atomic bool go;                         /* release: start_ns is set */
	_Atomic bool boost_disabled;             /* SCHED_FIFO refused once */

	/* Print-once flags (WARN_ON_ONCE) and the first failure's time. */
	_Atomic bool warned_write_held, warned_read_held, warned_reader, warned_holders;
	_Atomic bool warned_plain;
	_Atomic bool warned_boost, warned_fifo;
	_Atomic bool warned_false_deadlock;      /* a fallible lock reported EDEADLK */
	_Atomic long lock_timeouts;              /* a fallible lock's ETIMEDOUT, retried */
	_Atomic uint64_t first_fail_ns;          /* ns after start_ns + 1; 0 = none */

	uint64_t start_ns;                       /* CLOCK_MONOTONIC at "go" */
	int64_t steal_start;                     /* /proc/stat steal ticks at "go"; -1 unknown */
	double normal_spins_per_s;               /* evidence.h's calibration; 0 unknown */
	/* The stall tracker's longest wait, for the summary (main thread only). */
	uint64_t longest_wait_ns;
	long long longest_wait_others;
	int longest_wait_thread;                 /* dense index, -1 = none */
	_Atomic uint64_t rcu_callbacks;          /* call_rcu chain callbacks run */

	struct lb_torture_stutter *stutter;
	struct lb_torture_affinity *affinity;
	struct lb_torture_rcu_chains *chains;
	struct lb_torture_deadlock *deadlock;    /* --deadlock: its locks and counts */

	/* -P: this struct, the threads, the locks and their contexts lie in one
	 * MAP_SHARED mapping made before the fork (procmode.h); NULL otherwise. */
	void *shared_map;
	size_t shared_size, shared_used;         /* main only, before the fork */
};

/* Shorthand for the "<type>-torture:" prefix every output line carries. */
#define LB_TORTURE_FLAG "-torture:"

#endif /* LB_TORTURE_CONTEXT_H */
