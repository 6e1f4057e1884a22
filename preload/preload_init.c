/* SPDX-License-Identifier: MIT */
/*
 * preload_init.c - configuration, one-time start-up and glibc's entry points.
 *
 * Start-up is lazy: the first pthread call (possibly from another
 * library's constructor, possibly from several threads at once that were
 * created before our constructor) runs it under a three-state word; the
 * constructor merely calls it too.  It reads the environment, checks the
 * lock, reserves the pools and creates the thread-exit key.  It never calls
 * dlsym: a thread created before our constructor could otherwise block on
 * the loader lock that the thread running the constructors holds, while
 * that thread waits for it to finish start-up.  The five mutex entry
 * points come from glibc's exported __pthread_mutex_* aliases, bound at load
 * time; the rarely used timed/cond entry points are looked up with dlvsym
 * on first use, or in the constructor.
 */
#include "preload.h"
#include "lb_atomic.h"
#include "lb_futex.h"
#include "lb_registry.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

struct lbp_config lbp_cfg;
struct lbp_real lbp_real;
struct lbp_global_stats lbp_global;
LBP_TLS __thread unsigned int lbp_in_core;

enum { LBP_INIT_NONE, LBP_INIT_RUNNING, LBP_INIT_DONE };
static _Atomic uint32_t lbp_init_state;

_Noreturn void lbp_fatal(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	/* write(2), not stdio: we may be inside a stdio or malloc lock. */
	ssize_t ignored = write(STDERR_FILENO, buf, (size_t)n);
	(void)ignored;
	_exit(2);
}

static bool lbp_lock_usable(const struct lb_lock_ops *o)
{
	/* pthread_mutex_lock of a default mutex cannot fail: no fallible lock. */
	return !o->unsupported && (o->flags & LB_LOCK_F_EXCLUSIVE) && o->trylock &&
	       !(o->flags & LB_LOCK_F_FALLIBLE) && o->lock_align <= LBP_LOCK_OFFSET;
}

static void lbp_accepted_locks(char *buf, size_t len)
{
	const struct lb_lock_ops *const *t = lb_lock_table();
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < lb_lock_count(); i++) {
		if (!lbp_lock_usable(t[i]))
			continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", t[i]->name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

static void lbp_parse_config(void)
{
	char names[512];
	const char *name = getenv("LOCKBENCH_LOCK");
	lbp_accepted_locks(names, sizeof(names));
	if (!name || !*name)
		lbp_fatal("liblockbench-preload: LOCKBENCH_LOCK is not set; accepted: %s", names);
	const struct lb_lock_ops *ops = lb_lock_find(name);
	if (!ops || !lbp_lock_usable(ops))
		lbp_fatal("liblockbench-preload: LOCKBENCH_LOCK='%s' is not an exclusive lock "
			  "with trylock that cannot fail, available here; accepted: %s", name, names);
	lbp_cfg.ops = ops;
	lbp_cfg.timed_poll = !ops->timedlock;
	const char *spin_ok = getenv("LOCKBENCH_SPIN_ONLY");
	lbp_cfg.spin_only_warn = lb_lock_spin_only(ops) && !(spin_ok && !strcmp(spin_ok, "ok"));
	cpu_set_t mask;
	lbp_cfg.ncpus = sched_getaffinity(0, sizeof(mask), &mask) == 0 ? (unsigned int)CPU_COUNT(&mask)
									: 0;

	const char *st = getenv("LOCKBENCH_STATS");
	if (st && *st && strcmp(st, "0") != 0) {
		lbp_cfg.stats = true;
		lbp_cfg.acquire_slow = true;
		lbp_cfg.stats_path = strcmp(st, "1") == 0 ? NULL : st;
	}
	lbp_cfg.stats_top = 10;
	const char *top = getenv("LOCKBENCH_STATS_TOP");
	if (top && *top) {
		char *end;
		unsigned long v = strtoul(top, &end, 10);
		if (*top < '0' || *top > '9' || *end || v == 0 || v > 100000) /* no " 5", "+5" */
			lbp_fatal("liblockbench-preload: LOCKBENCH_STATS_TOP='%s': "
				  "accepted: an integer 1..100000", top);
		lbp_cfg.stats_top = (unsigned int)v;
	}
	lbp_cfg.lockstat_path = getenv("LOCKBENCH_LOCKSTAT");
	lbp_cfg.contention_path = getenv("LOCKBENCH_CONTENTION");
	lbp_cfg.contention_sep = getenv("LOCKBENCH_CONTENTION_SEP");
	if (lbp_cfg.lockstat_path && !*lbp_cfg.lockstat_path)
		lbp_cfg.lockstat_path = NULL;
	if (lbp_cfg.contention_path && !*lbp_cfg.contention_path)
		lbp_cfg.contention_path = NULL;
	if ((lbp_cfg.lockstat_path || lbp_cfg.contention_path) && !lbp_cfg.stats)
		lbp_fatal("liblockbench-preload: LOCKBENCH_%s needs LOCKBENCH_STATS (1 or a path)",
			  lbp_cfg.lockstat_path ? "LOCKSTAT" : "CONTENTION");
	/* perf lock contention -x refuses what its fields contain. */
	const char *sep = lbp_cfg.contention_sep;
	if (sep && (!*sep || strpbrk(sep, ":+.\n")))
		lbp_fatal("liblockbench-preload: LOCKBENCH_CONTENTION_SEP='%s': accepted: a "
			  "non-empty separator without ':', '+', '.' or a newline", sep);
	lbp_cfg.pid = getpid();
}

/* Hold every internal spinlock across fork(), so the child never starts
 * with one held by a thread that does not exist there. */
static void lbp_fork_prepare(void)
{
	lbp_pool_lock(&lbp_thread_pool);
	lbp_pool_lock(&lbp_lock_pool);
	lbp_pool_lock(&lbp_retired_guard);
}

static void lbp_fork_parent(void)
{
	lbp_pool_unlock(&lbp_retired_guard);
	lbp_pool_unlock(&lbp_lock_pool);
	lbp_pool_unlock(&lbp_thread_pool);
}

/*
 * Only the forking thread lives on in the child.  Before anything can use a
 * lock again (our handlers were registered in our constructor, before a
 * program's own: child handlers run in registration order, so ours come
 * first and the program's may then unlock what its prepare handler
 * locked), every live lock forgets the waiters and spinners that were
 * other threads, keeping what this thread holds (ops->atfork_child); then
 * the other threads' records and indexes are given back.  The pools are
 * still held here, so no slot changes state under the walk.
 */
static void lbp_fork_child(void)
{
	void (*reset)(void *, void *) = lbp_cfg.ops ? lbp_cfg.ops->atfork_child : NULL;
	struct lbp_thread *self = lbp_self_tls;
	void *ctx = self ? lbp_thread_ctx(self) : NULL;
	size_t n = atomic_load_explicit(&lbp_lock_pool.used, memory_order_acquire);
	lbp_in_core++;
	for (size_t i = 0; i < n; i++) {
		struct lbp_lock *l = lbp_pool_slot(&lbp_lock_pool, i);
		if (atomic_load_explicit(&l->state, memory_order_acquire) != LBP_SLOT_LIVE)
			continue;
		/* Timed waiters were other threads (we are in fork): a gate one
		 * of them closed would keep every locker out for ever. */
		atomic_store_explicit(&l->timed_waiters, 0, memory_order_relaxed);
		atomic_store_explicit(&l->gate, 0, memory_order_relaxed);
		if (reset)
			reset(lbp_lock_obj(l), ctx);
	}
	lbp_in_core--;
	lbp_pool_unlock(&lbp_retired_guard);
	lbp_pool_unlock(&lbp_lock_pool);
	lbp_pool_unlock(&lbp_thread_pool);
	lbp_thread_after_fork_child();
}

static void lbp_start(void)
{
	lbp_parse_config();
	size_t lock_slot = LBP_LOCK_OFFSET + lbp_cfg.ops->lock_size;
	lock_slot = (lock_slot + LB_CACHELINE - 1) / LB_CACHELINE * LB_CACHELINE;
	if (lbp_cfg.stats) { /* histograms after the lock, on lines of their own */
		lbp_cfg.hist_offset = lock_slot;
		lock_slot += (sizeof(struct lbp_hist) + LB_CACHELINE - 1) / LB_CACHELINE *
			     LB_CACHELINE;
		lbp_cfg.lockstat_offset = lock_slot;
		lock_slot += (sizeof(struct lbp_lockstat) + LB_CACHELINE - 1) / LB_CACHELINE *
			     LB_CACHELINE;
	}
	size_t thread_slot = LBP_THREAD_CTX_OFFSET + lbp_cfg.ops->thread_ctx_size;
	thread_slot = (thread_slot + LB_CACHELINE - 1) / LB_CACHELINE * LB_CACHELINE;
	/* 4 GiB of address space for locks (millions of mutexes), pages
	 * committed only when used. */
	if (lbp_pool_create(&lbp_lock_pool, "lock", lock_slot, ((size_t)4 << 30) / lock_slot) ||
	    lbp_pool_create(&lbp_thread_pool, "thread", thread_slot, LB_MAX_THREADS))
		lbp_fatal("liblockbench-preload: cannot reserve memory for the lock pools");
	if (lbp_cond_setup())
		lbp_fatal("liblockbench-preload: cannot reserve memory for the condvar table");
	lbp_thread_setup();
}

void lbp_ensure_init(void)
{
	if (LB_LIKELY(atomic_load_explicit(&lbp_init_state, memory_order_acquire) == LBP_INIT_DONE))
		return;
	uint32_t expect = LBP_INIT_NONE;
	if (atomic_compare_exchange_strong_explicit(&lbp_init_state, &expect, LBP_INIT_RUNNING,
						    memory_order_acquire, memory_order_acquire)) {
		lbp_in_core++;
		lbp_start();
		lbp_in_core--;
		atomic_store_explicit(&lbp_init_state, LBP_INIT_DONE, memory_order_release);
		lb_futex_wake(&lbp_init_state, INT32_MAX);
		return;
	}
	/* Another thread is starting up: sleep until it is done (it takes no
	 * lock we could hold, so it always finishes).  Re-check after each
	 * wake-up; the futex returns at once if the word already changed. */
	while (atomic_load_explicit(&lbp_init_state, memory_order_acquire) != LBP_INIT_DONE)
		lb_futex_wait(&lbp_init_state, LBP_INIT_RUNNING, NULL);
}

static void *lbp_dlvsym(const char *name, const char *version)
{
	void *f = dlvsym(RTLD_NEXT, name, version);
	if (!f)
		lbp_fatal("liblockbench-preload: glibc has no %s@%s", name, version);
	return f;
}

static _Atomic uint32_t resolved;

bool lbp_real_ready(void)
{
	return atomic_load_explicit(&resolved, memory_order_acquire);
}

const struct lbp_real *lbp_real_slow(void)
{
	if (LB_LIKELY(atomic_load_explicit(&resolved, memory_order_acquire)))
		return &lbp_real;
	/* Several threads may resolve at once: they store the same values, and
	 * none reads them before its own store or the release below. */
	lbp_in_core++;
	struct lbp_real r;
	r.mutex_timedlock = lbp_dlvsym("pthread_mutex_timedlock", "GLIBC_2.2.5");
	r.mutex_clocklock = lbp_dlvsym("pthread_mutex_clocklock", "GLIBC_2.30");
	r.cond_init = lbp_dlvsym("pthread_cond_init", "GLIBC_2.3.2");
	r.cond_destroy = lbp_dlvsym("pthread_cond_destroy", "GLIBC_2.3.2");
	r.cond_wait = lbp_dlvsym("pthread_cond_wait", "GLIBC_2.3.2");
	r.cond_timedwait = lbp_dlvsym("pthread_cond_timedwait", "GLIBC_2.3.2");
	r.cond_clockwait = lbp_dlvsym("pthread_cond_clockwait", "GLIBC_2.30");
	r.cond_signal = lbp_dlvsym("pthread_cond_signal", "GLIBC_2.3.2");
	r.cond_broadcast = lbp_dlvsym("pthread_cond_broadcast", "GLIBC_2.3.2");
	lbp_in_core--;
	static pthread_mutex_t store_once = PTHREAD_MUTEX_INITIALIZER;
	lbp_glibc_mutex_lock(&store_once);
	if (!atomic_load_explicit(&resolved, memory_order_relaxed)) {
		lbp_real.mutex_timedlock = r.mutex_timedlock;
		lbp_real.mutex_clocklock = r.mutex_clocklock;
		lbp_real.cond_init = r.cond_init;
		lbp_real.cond_destroy = r.cond_destroy;
		lbp_real.cond_wait = r.cond_wait;
		lbp_real.cond_timedwait = r.cond_timedwait;
		lbp_real.cond_clockwait = r.cond_clockwait;
		lbp_real.cond_signal = r.cond_signal;
		lbp_real.cond_broadcast = r.cond_broadcast;
		atomic_store_explicit(&resolved, 1, memory_order_release);
	}
	lbp_glibc_mutex_unlock(&store_once);
	return &lbp_real;
}

/* Query for tests: has start-up run, and has our constructor? */
static _Atomic int lbp_constructed;
LBP_EXPORT int lb_preload_state(const char **lock_name)
{
	if (lock_name)
		*lock_name = atomic_load_explicit(&lbp_init_state, memory_order_acquire) ==
					     LBP_INIT_DONE
				     ? lbp_cfg.ops->name
				     : NULL;
	return (atomic_load_explicit(&lbp_init_state, memory_order_acquire) == LBP_INIT_DONE) |
	       (atomic_load_explicit(&lbp_constructed, memory_order_acquire) << 1);
}

/*
 * The constructor runs under the loader lock: start-up takes no lock, and
 * dlvsym from here re-enters the loader lock this thread already holds.
 * pthread_atfork only takes glibc's fork-handler lock, never ours.
 */
__attribute__((constructor)) static void lbp_constructor(void)
{
	lbp_ensure_init();
	lbp_stats_check_path();
	lbp_cfg.stats_fd = -1;
	if (lbp_cfg.stats && !lbp_cfg.stats_path)
		lbp_cfg.stats_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 100);
	lbp_real_slow();
	lbp_delay_parse();
	lbp_cfg.acquire_slow = lbp_cfg.stats || lbp_cfg.ndelay;
	lbp_waitchain_setup();
	pthread_atfork(lbp_fork_prepare, lbp_fork_parent, lbp_fork_child);
	atomic_store_explicit(&lbp_constructed, 1, memory_order_release);
}

__attribute__((destructor)) static void lbp_destructor(void)
{
	if (atomic_load_explicit(&lbp_init_state, memory_order_acquire) != LBP_INIT_DONE)
		return;
	if (lbp_cfg.stats)
		lbp_stats_write();
	if (lbp_cfg.ndelay && getpid() == lbp_cfg.pid)
		lbp_delay_report();
}
