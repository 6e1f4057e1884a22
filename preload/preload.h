/* SPDX-License-Identifier: MIT */
/*
 * preload.h - the internals of liblockbench-preload.so (see doc/preload.md).
 *
 * The library interposes pthread_mutex_* and pthread_cond_* and maps every
 * default-type mutex (normal, private, non-robust, no priority protocol)
 * onto the registry lock named by LOCKBENCH_LOCK, through the vtable.
 * Everything else goes to glibc untouched ("pass-through").
 *
 * Pieces, one file each:
 *   preload_init.c    configuration, one-time start-up, glibc's own entry
 *                     points, constructor/destructor, fork handlers
 *   preload_pool.c    fixed-size slots in one reserved mapping (no malloc)
 *   preload_thread.c  per-thread records: dense index, lock context
 *   preload_mutex.c   the pthread_mutex_* wrappers and the in-mutex mark
 *   preload_cond.c    the pthread_cond_* wrappers and their futex words
 *   preload_stats.c   statistics at exit (text on stderr, or JSON)
 *   preload_lockstat.c the kernel lockstat's per-lock bookkeeping: points,
 *                     bounces, owner changes, spin- vs sleep-resolved waits
 *   preload_lockstat_out.c /proc/lock_stat 0.4 text and perf lock
 *                     contention's table, from the class snapshots
 *   preload_waitchain.c the wait-chain dump on a signal
 *   preload_delay.c   LOCKBENCH_DELAY: a delay inside chosen classes
 *   preload_glibc_probes.h glibc's libpthread USDT probes, fired by us
 */
#ifndef LB_PRELOAD_H
#define LB_PRELOAD_H

#include "lb_lock_ops.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define LBP_EXPORT __attribute__((visibility("default")))
#define LBP_TLS __attribute__((tls_model("initial-exec")))

/* ---- configuration (preload_init.c) ------------------------------------ */

struct lbp_config {
	const struct lb_lock_ops *ops; /* the lock every default mutex becomes */
	bool stats;                    /* LOCKBENCH_STATS set: count and time */
	bool timed_poll;               /* ops->timedlock is NULL: the gate is used */
	bool acquire_slow;             /* stats or ndelay: lbp_acquire_at leaves its
					* plain path (one test for both) */
	size_t hist_offset;            /* of struct lbp_hist in a lock slot (stats) */
	const char *stats_path;        /* NULL: text summary on stderr */
	unsigned int stats_top;        /* LOCKBENCH_STATS_TOP, default 10 */
	pid_t pid;                     /* the process that parsed the config */
	bool spin_only_warn;           /* a spin-only lock (lb_lock_spin_only), and
					* LOCKBENCH_SPIN_ONLY is not "ok": warn once
					* when threads outnumber ncpus */
	unsigned int ncpus;            /* CPUs in the affinity mask at start-up */
	int stats_fd;                  /* private copy of stderr for the summary:
					* programs such as coreutils close stderr
					* in an atexit handler, before our destructor */
	size_t lockstat_offset;        /* of struct lbp_lockstat in a lock slot (stats) */
	const char *lockstat_path;     /* LOCKBENCH_LOCKSTAT: /proc/lock_stat text */
	const char *contention_path;   /* LOCKBENCH_CONTENTION: perf lock table */
	const char *contention_sep;    /* LOCKBENCH_CONTENTION_SEP: CSV (-x) */
	int dump_signal;               /* LOCKBENCH_STATS_DUMP: 0 or a signal */
	int dump_fd;                   /* private copy of stderr for the dump */
	unsigned int ndelay;           /* LOCKBENCH_DELAY classes (preload_delay.c) */
};
extern struct lbp_config lbp_cfg;

/*
 * Make sure start-up has happened; cheap after the first call.  Safe from
 * any thread, before or during our constructor, from inside another
 * library's constructor: it calls nothing that takes the loader lock.
 */
void lbp_ensure_init(void);

/*
 * Set while this thread runs our own code (the lock implementation, the
 * statistics): a pthread call made from there goes straight to glibc, so
 * pthread-mutex (whose lock IS a pthread_mutex_t) and any lock that uses
 * pthread internally do not recurse into us.
 */
extern LBP_TLS __thread unsigned int lbp_in_core;

/* glibc's own mutex entry points (its __pthread_mutex_* aliases, bound by
 * symbol version in preload_init.c, so they never resolve to our wrappers). */
int lbp_glibc_mutex_init(pthread_mutex_t *, const pthread_mutexattr_t *);
int lbp_glibc_mutex_destroy(pthread_mutex_t *);
int lbp_glibc_mutex_lock(pthread_mutex_t *);
int lbp_glibc_mutex_trylock(pthread_mutex_t *);
int lbp_glibc_mutex_unlock(pthread_mutex_t *);
__asm__(".symver lbp_glibc_mutex_init, __pthread_mutex_init@GLIBC_2.2.5");
__asm__(".symver lbp_glibc_mutex_destroy, __pthread_mutex_destroy@GLIBC_2.2.5");
__asm__(".symver lbp_glibc_mutex_lock, __pthread_mutex_lock@GLIBC_2.2.5");
__asm__(".symver lbp_glibc_mutex_trylock, __pthread_mutex_trylock@GLIBC_2.2.5");
__asm__(".symver lbp_glibc_mutex_unlock, __pthread_mutex_unlock@GLIBC_2.2.5");

/* The rest of glibc's entry points, resolved with dlvsym on first use. */
struct lbp_real {
	int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
	int (*mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
	int (*cond_init)(pthread_cond_t *, const pthread_condattr_t *);
	int (*cond_destroy)(pthread_cond_t *);
	int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
	int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
	int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
			      const struct timespec *);
	int (*cond_signal)(pthread_cond_t *);
	int (*cond_broadcast)(pthread_cond_t *);
};
extern struct lbp_real lbp_real;
/* The dlvsym-resolved members, resolved once (may take the loader lock). */
const struct lbp_real *lbp_real_slow(void);
/* Already resolved (normally by our constructor): no loader lock needed. */
bool lbp_real_ready(void);

/*
 * Exported for tests (look it up with dlsym): bit 0 = start-up done, bit 1
 * = our constructor has run; *lock_name = the lock in use (or NULL).
 */
LBP_EXPORT int lb_preload_state(const char **lock_name);

/* Write one line to stderr and _exit(2): a process never half works. */
_Noreturn void lbp_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- slot pools (preload_pool.c) ---------------------------------------- */

struct lbp_pool {
	const char *what;            /* "lock" / "thread", for messages */
	unsigned char *base;         /* reserved mapping */
	size_t slot_size, max_slots;
	_Atomic size_t used;         /* slots handed out so far (bump) */
	void *free_list;             /* first word of a free slot links the next */
	_Atomic uint32_t guard;      /* tiny spinlock over free_list and bump */
};

int lbp_pool_create(struct lbp_pool *p, const char *what, size_t slot_size, size_t max_slots);
void *lbp_pool_get(struct lbp_pool *p);      /* zeroed; fatal when exhausted */
void lbp_pool_put(struct lbp_pool *p, void *slot);
void *lbp_pool_slot(struct lbp_pool *p, size_t i); /* i < used */
/* Fork handlers: hold the pool across fork() so the child never inherits it locked. */
void lbp_pool_lock(struct lbp_pool *p);
void lbp_pool_unlock(struct lbp_pool *p);

/* ---- locks (preload_mutex.c) ------------------------------------------- */

enum lbp_slot_state { LBP_SLOT_FREE = 0, LBP_SLOT_LIVE = 1 };

/* Statistics of one taken-over mutex, written only by its owner. */
struct lbp_lock_stats {
	_Atomic uint64_t acquisitions, contended, trylock_failed;
	_Atomic uint64_t wait_ns, max_wait_ns, hold_ns, max_hold_ns;
	uint64_t hold_start_ns;
	/* The class: return address of the first lock call made on it
	 * (pthread_mutex_lock/trylock/timedlock), set by its first owner. */
	_Atomic(const void *) site;
};

/*
 * Wait (contended acquisitions) and hold histograms of one lock, log2
 * buckets of ns: bucket 0 counts 0 ns, bucket b (1..30) [2^(b-1), 2^b),
 * bucket 31 everything from 2^30 ns (~1.07 s).  Written only by the owner.
 * Only present with LOCKBENCH_STATS, after the lock object (hist_offset).
 */
#define LBP_HIST_BUCKETS 32
struct lbp_hist {
	_Atomic uint32_t wait[LBP_HIST_BUCKETS], hold[LBP_HIST_BUCKETS];
};

static inline unsigned int lbp_hist_bucket(uint64_t ns)
{
	unsigned int b = ns ? 64u - (unsigned int)__builtin_clzll(ns) : 0u;
	return b < LBP_HIST_BUCKETS ? b : LBP_HIST_BUCKETS - 1;
}

/*
 * One taken-over mutex: a pool slot.  The header (state, the mutex it
 * stands for, statistics) fills the first two cache lines; the registry
 * lock starts at LBP_LOCK_OFFSET, so waiters spinning on the lock word never
 * share a line with the owner's statistics updates.
 */
struct lbp_lock {
	void *free_link;               /* pool free list (first word) */
	_Atomic uint32_t state;        /* enum lbp_slot_state */
	uint32_t serial;               /* order of creation, for stable output */
	_Atomic(const void *) mutex;   /* the pthread_mutex_t, for statistics */
	struct lbp_lock_stats st;
	/* Timed locks on a lock without ops->timedlock (preload_mutex.c). */
	_Atomic uint32_t timed_waiters; /* threads in lbp_timed_poll */
	_Atomic uint32_t release_seq;   /* futex word they nap on; bumped by unlocks */
	_Atomic uint32_t gate;          /* starving timed waiters: new lockers wait */
	/* LOCKBENCH_DELAY: 0 undecided, 1 no delay, 2 + i: delay class i
	 * (decided once by the first owner, preload_delay.c). */
	_Atomic uint32_t delay_state;
};
#define LBP_LOCK_OFFSET 128
_Static_assert(sizeof(struct lbp_lock) <= LBP_LOCK_OFFSET, "lock header too large");

static inline void *lbp_lock_obj(struct lbp_lock *l)
{
	return (unsigned char *)l + LBP_LOCK_OFFSET;
}

/* With LOCKBENCH_STATS only. */
static inline struct lbp_hist *lbp_lock_hist(struct lbp_lock *l)
{
	return (struct lbp_hist *)((unsigned char *)l + lbp_cfg.hist_offset);
}

/*
 * The kernel lockstat's per-lock bookkeeping (kernel/locking/lockdep.c,
 * __lock_contended/__lock_acquired; LOCKSTAT_POINTS = 4 in
 * include/linux/lockdep_types.h), plus mutrace's owner changes and its
 * realtime flag, and waits resolved by spinning apart from waits that
 * slept.  Written only by the lock's owner (preload_lockstat.c); with
 * LOCKBENCH_STATS only, at lockstat_offset in the slot, on lines of its own.
 */
#define LBP_POINTS 4
struct lbp_points {
	_Atomic(const void *) ip[LBP_POINTS]; /* first LBP_POINTS distinct sites */
	_Atomic uint64_t count[LBP_POINTS];
};
struct lbp_lockstat {
	_Atomic uint64_t owner_changes;  /* acquired by another thread than the last owner */
	_Atomic uint64_t spin_resolved;  /* contended, no voluntary context switch */
	_Atomic uint64_t slept;          /* contended, slept (voluntary switch) */
	_Atomic uint64_t con_bounces;    /* contended on another CPU than the last acquirer's */
	_Atomic uint64_t acq_bounces;    /* acquired on another CPU than the last acquirer */
	_Atomic uint64_t min_wait_ns, min_hold_ns; /* UINT64_MAX: none yet */
	_Atomic uint32_t last_owner_tid; /* the previous owner (owner changes) */
	_Atomic uint32_t owner_tid;      /* the owner now, 0 when free (wait chain) */
	_Atomic int32_t last_cpu;        /* CPU of the last acquisition, -1 none */
	_Atomic uint32_t rt;             /* taken by a SCHED_FIFO/RR thread */
	_Atomic(const void *) holder_ip; /* the owner's lock call site (kernel: lock->ip) */
	struct lbp_points contention;    /* waiters' call sites */
	struct lbp_points contending;    /* the holder's sites they waited for */
};

/* With LOCKBENCH_STATS only. */
static inline struct lbp_lockstat *lbp_lock_lockstat(struct lbp_lock *l)
{
	return (struct lbp_lockstat *)((unsigned char *)l + lbp_cfg.lockstat_offset);
}

extern struct lbp_pool lbp_lock_pool;

/* Find (or, for an untouched PTHREAD_MUTEX_INITIALIZER mutex, create) ours;
 * NULL: the mutex belongs to glibc. */
struct lbp_lock *lbp_mutex_lookup(pthread_mutex_t *m);
/* Take / give back a taken-over mutex with statistics; site: the program's
 * call (its class if the first), NULL for our own re-locks (cond waits). */
void lbp_acquire_at(struct lbp_lock *l, const void *site);
static inline void lbp_acquire(struct lbp_lock *l)
{
	lbp_acquire_at(l, NULL);
}
void lbp_release(struct lbp_lock *l);

/* Counters of everything left to glibc, and of retired (destroyed) locks. */
struct lbp_global_stats {
	_Atomic uint64_t taken_over;         /* mutexes mapped onto the lock */
	_Atomic uint64_t destroyed;          /* ... of which destroyed again */
	_Atomic uint64_t pass_recursive, pass_errorcheck, pass_adaptive, pass_robust,
		pass_pi, pass_pp, pass_pshared, pass_static_other, pass_attr_error;
	_Atomic uint64_t pass_lock_calls;    /* lock/trylock calls sent to glibc */
	_Atomic uint64_t cond_waits, cond_waits_passed;
	_Atomic uint64_t cond_overflow;      /* cond waits on the shared overflow word */
	/* Retired locks' statistics, so totals survive pthread_mutex_destroy. */
	_Atomic uint64_t retired_acq, retired_contended, retired_wait_ns, retired_hold_ns;
};
extern struct lbp_global_stats lbp_global;

/* ---- threads (preload_thread.c) ----------------------------------------- */

struct lbp_thread {
	void *free_link;
	_Atomic uint32_t state;
	unsigned int index;            /* dense, recycled at thread exit */
	_Atomic uint64_t pass_lock_calls;
	_Atomic uint32_t tid;          /* gettid(), renewed in a fork child */
	_Atomic uint32_t rt;           /* SCHED_FIFO/RR when last looked (statistics) */
	/* What this thread waits for now (statistics; the wait-chain dump). */
	_Atomic(struct lbp_lock *) waiting_on;
	_Atomic uint64_t wait_since_ns;
	/* the lock's thread context follows at LBP_THREAD_CTX_OFFSET */
};
#define LBP_THREAD_CTX_OFFSET 64
_Static_assert(sizeof(struct lbp_thread) <= LBP_THREAD_CTX_OFFSET, "thread record too large");

extern struct lbp_pool lbp_thread_pool;
extern LBP_TLS __thread struct lbp_thread *lbp_self_tls;

struct lbp_thread *lbp_thread_create(void);
void lbp_thread_setup(void); /* once, from start-up: the exit key */
void lbp_thread_after_fork_child(void);

static inline struct lbp_thread *lbp_self(void)
{
	struct lbp_thread *t = lbp_self_tls;
	return t ? t : lbp_thread_create();
}

static inline void *lbp_thread_ctx(struct lbp_thread *t)
{
	return lbp_cfg.ops->thread_ctx_size ? (unsigned char *)t + LBP_THREAD_CTX_OFFSET : NULL;
}

/* ---- condition variables (preload_cond.c) ------------------------------ */

int lbp_cond_setup(void);

/* ---- lockstat bookkeeping (preload_lockstat.c) ------------------------- */

/* What a contended acquisition saw before it waited. */
struct lbp_contention {
	uint64_t t0;               /* clock at the start of the wait */
	const void *holder_ip;     /* the holder's lock call site then */
	long nvcsw;                /* this thread's voluntary switches then */
	bool bounced;              /* the last acquirer ran on another CPU */
};
void lbp_lockstat_wait_begin(struct lbp_lock *l, struct lbp_thread *self,
			     struct lbp_contention *c, uint64_t t0);
void lbp_lockstat_wait_end(struct lbp_thread *self);
/* The owner, right after acquiring; c NULL: uncontended. */
void lbp_lockstat_acquired(struct lbp_lock *l, struct lbp_thread *self, const void *site,
			   const struct lbp_contention *c, uint64_t wait_ns);
/* The owner, before unlocking; held_ns as measured. */
void lbp_lockstat_released(struct lbp_lock *l, uint64_t held_ns);
void lbp_lockstat_init(struct lbp_lock *l); /* a new slot, stats on */
void lbp_thread_sample(struct lbp_thread *t); /* tid and scheduling class */

/* ---- LOCKBENCH_DELAY (preload_delay.c) ---------------------------------- */

void lbp_delay_parse(void);  /* constructor: resolve the named classes, or exit 2 */
void lbp_delay_apply(struct lbp_lock *l, const void *site); /* owner, just acquired */
void lbp_delay_report(void); /* exit: a named class that never took a lock */

/* ---- wait-chain dump (preload_waitchain.c) ------------------------------ */

void lbp_waitchain_setup(void); /* constructor: LOCKBENCH_STATS_DUMP's handler */

/* ---- statistics (preload_stats.c) --------------------------------------- */

uint64_t lbp_now_ns(void);
void lbp_stats_write(void);
/* A taken-over mutex is destroyed: remember it if it ranks. */
void lbp_stats_retire(struct lbp_lock *l);
/* Guards the remembered destroyed mutexes (only the guard word is used). */
extern struct lbp_pool lbp_retired_guard;
/* Constructor: an unwritable LOCKBENCH_STATS path is fatal up front (exit 2). */
void lbp_stats_check_path(void);

#endif /* LB_PRELOAD_H */
