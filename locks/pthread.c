/* SPDX-License-Identifier: MIT */
/*
 * pthread.c - glibc's locks as baselines, each behind the same vtable:
 *
 *   pthread-mutex      PTHREAD_MUTEX_NORMAL (futex, no spinning)
 *   pthread-adaptive   PTHREAD_MUTEX_ADAPTIVE_NP (bounded spin, then futex;
 *                      the bound is the glibc.pthread.mutex_spin_count tunable)
 *   pthread-pi         PTHREAD_PRIO_INHERIT (FUTEX_LOCK_PI/FUTEX_UNLOCK_PI:
 *                      the kernel's rt_mutex does the PI chain walk)
 *   pthread-spin       pthread_spinlock_t (test-and-set, no queueing)
 *   pthread-rwlock     glibc default rwlock (prefers readers)
 *   pthread-rwlock-wp  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP
 *
 * Errors from the pthread calls on a correctly used lock cannot happen; they
 * abort through lb_die rather than letting a benchmark report nonsense.
 * Each has an init_shared: the same lock with PTHREAD_PROCESS_SHARED.
 */
#include "lb_adapter.h"

#include <errno.h>
#include <pthread.h>

/* pshared PTHREAD_PROCESS_SHARED: glibc then uses shared futexes (FUTEX_WAIT,
 * FUTEX_LOCK_PI without the private flag), so waiters in several processes
 * mapping the mutex meet in the kernel; the mutex keeps no other state. */
static int mutex_init_kind(void *lock, int type, int protocol, int pshared)
{
	pthread_mutexattr_t attr;
	int err = pthread_mutexattr_init(&attr);
	if (err)
		return err;
	err = pthread_mutexattr_settype(&attr, type);
	if (!err && protocol != PTHREAD_PRIO_NONE)
		err = pthread_mutexattr_setprotocol(&attr, protocol);
	if (!err)
		err = pthread_mutexattr_setpshared(&attr, pshared);
	if (!err)
		err = pthread_mutex_init(lock, &attr);
	pthread_mutexattr_destroy(&attr);
	return err;
}

#define LB_MUTEX_INITS(suffix, type, protocol)                                 \
	LB_ADAPT_INIT_ERR(mutex_init_##suffix, mutex_init_kind, type, protocol, \
			  PTHREAD_PROCESS_PRIVATE)                             \
	LB_ADAPT_INIT_ERR(mutex_init_##suffix##_shared, mutex_init_kind, type, \
			  protocol, PTHREAD_PROCESS_SHARED)
LB_MUTEX_INITS(normal, PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE)
LB_MUTEX_INITS(adaptive, PTHREAD_MUTEX_ADAPTIVE_NP, PTHREAD_PRIO_NONE)
LB_MUTEX_INITS(pi, PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT)

LB_ADAPT_DESTROY(mutex_destroy, pthread_mutex_destroy)

LB_ADAPT_CHECKED(mutex_lock, pthread_mutex_lock)
LB_ADAPT_CHECKED(mutex_unlock, pthread_mutex_unlock)

static bool mutex_trylock(void *lock, void *tctx)
{
	(void)tctx;
	int err = pthread_mutex_trylock(lock);
	if (err && err != EBUSY)
		lb_die(err, "pthread_mutex_trylock");
	return err == 0;
}

/*
 * glibc's own timed lock (not a cancellation point).  A PI mutex on a kernel
 * without FUTEX_LOCK_PI2 refuses CLOCK_MONOTONIC (EINVAL): then the
 * deadline goes to pthread_mutex_timedlock converted to CLOCK_REALTIME.
 */
static int mutex_timedlock(void *lock, void *tctx, const struct timespec *abs, clockid_t clock)
{
	(void)tctx;
	int err = pthread_mutex_clocklock(lock, clock, abs);
	if (err == EINVAL && clock == CLOCK_MONOTONIC && abs->tv_nsec >= 0 &&
	    abs->tv_nsec < 1000000000L) {
		struct timespec mono, rt;
		clock_gettime(CLOCK_MONOTONIC, &mono);
		clock_gettime(CLOCK_REALTIME, &rt);
		long long ns = (long long)(abs->tv_sec - mono.tv_sec) * 1000000000LL +
			       (abs->tv_nsec - mono.tv_nsec) + rt.tv_nsec;
		if (ns < rt.tv_nsec)
			ns = rt.tv_nsec; /* already past */
		rt.tv_sec += (time_t)(ns / 1000000000LL);
		rt.tv_nsec = (long)(ns % 1000000000LL);
		err = pthread_mutex_timedlock(lock, &rt);
	}
	if (err && err != ETIMEDOUT && err != EINVAL)
		lb_die(err, "pthread_mutex_clocklock");
	return err;
}

#define LB_PTHREAD_MUTEX_OPS(sym, cli, what, initfn, extra)                    \
	const struct lb_lock_ops lb_##sym##_ops = {                            \
		.name = cli,                                                   \
		.family = "baseline",                                          \
		.summary = what,                                               \
		.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK |             \
			 LB_LOCK_F_SLEEPS | LB_LOCK_F_TIMED | LB_LOCK_F_PSHARED |  \
			 (extra),                                              \
		LB_OPS_OBJECT(pthread_mutex_t),                                \
		.init = initfn,                                                \
		.init_shared = initfn##_shared,                                \
		.destroy = mutex_destroy,                                      \
		LB_OPS_EXCL(mutex),                                            \
		.timedlock = mutex_timedlock,                                  \
	};

/* glibc's normal and adaptive mutexes let an unlocker or a newcomer barge
 * past a woken waiter, which may sleep again: no turn is promised (a 64+64
 * --perturb torture saw a writer asleep 10 s while others got it 377 times). */
LB_PTHREAD_MUTEX_OPS(pthread_mutex, "pthread-mutex",
		     "glibc PTHREAD_MUTEX_NORMAL: futex, no spinning", mutex_init_normal,
		     LB_LOCK_F_NO_TURN)
LB_PTHREAD_MUTEX_OPS(pthread_adaptive, "pthread-adaptive",
		     "glibc PTHREAD_MUTEX_ADAPTIVE_NP: bounded spin, then futex",
		     mutex_init_adaptive, LB_LOCK_F_NO_TURN)
LB_PTHREAD_MUTEX_OPS(pthread_pi, "pthread-pi",
		     "glibc PTHREAD_PRIO_INHERIT: kernel FUTEX_LOCK_PI rt_mutex",
		     mutex_init_pi, LB_LOCK_F_PI)

LB_ADAPT_INIT_ERR(spin_init, pthread_spin_init, PTHREAD_PROCESS_PRIVATE)
LB_ADAPT_INIT_ERR(spin_init_shared, pthread_spin_init, PTHREAD_PROCESS_SHARED)

LB_ADAPT_DESTROY(spin_destroy, pthread_spin_destroy)

/* pthread_spin_lock/unlock cannot fail on a valid lock (glibc returns 0). */
LB_ADAPT_VOID(spin_lock, pthread_spin_lock)
LB_ADAPT_VOID(spin_unlock, pthread_spin_unlock)
LB_ADAPT_TRY0(spin_trylock, pthread_spin_trylock)

const struct lb_lock_ops lb_pthread_spin_ops = {
	.name = "pthread-spin",
	.family = "baseline",
	.summary = "glibc pthread_spinlock_t: test-and-set, unfair",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_PSHARED,
	LB_OPS_OBJECT(pthread_spinlock_t),
	.init = spin_init,
	.init_shared = spin_init_shared,
	.destroy = spin_destroy,
	LB_OPS_EXCL(spin),
};

static int rwlock_init_kind(void *lock, int kind, int pshared)
{
	pthread_rwlockattr_t attr;
	int err = pthread_rwlockattr_init(&attr);
	if (err)
		return err;
	err = pthread_rwlockattr_setkind_np(&attr, kind);
	if (!err)
		err = pthread_rwlockattr_setpshared(&attr, pshared);
	if (!err)
		err = pthread_rwlock_init(lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	return err;
}

LB_ADAPT_INIT_ERR(rwlock_init_default, rwlock_init_kind, PTHREAD_RWLOCK_DEFAULT_NP,
		  PTHREAD_PROCESS_PRIVATE)
LB_ADAPT_INIT_ERR(rwlock_init_default_shared, rwlock_init_kind, PTHREAD_RWLOCK_DEFAULT_NP,
		  PTHREAD_PROCESS_SHARED)
LB_ADAPT_INIT_ERR(rwlock_init_wp, rwlock_init_kind, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP,
		  PTHREAD_PROCESS_PRIVATE)
LB_ADAPT_INIT_ERR(rwlock_init_wp_shared, rwlock_init_kind,
		  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, PTHREAD_PROCESS_SHARED)

LB_ADAPT_DESTROY(rwlock_destroy, pthread_rwlock_destroy)

LB_ADAPT_CHECKED(rwlock_lock, pthread_rwlock_wrlock)
LB_ADAPT_CHECKED(rwlock_unlock, pthread_rwlock_unlock)
LB_ADAPT_TRY0(rwlock_trylock, pthread_rwlock_trywrlock)
LB_ADAPT_CHECKED(rwlock_read_lock, pthread_rwlock_rdlock)
LB_ADAPT_CHECKED(rwlock_read_unlock, pthread_rwlock_unlock)
LB_ADAPT_TRY0(rwlock_read_trylock, pthread_rwlock_tryrdlock)

#define LB_PTHREAD_RWLOCK_OPS(sym, cli, what, initfn)                          \
	const struct lb_lock_ops lb_##sym##_ops = {                            \
		.name = cli,                                                   \
		.family = "rwlock",                                            \
		.summary = what,                                               \
		.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_RW |                  \
			 LB_LOCK_F_TRYLOCK | LB_LOCK_F_SLEEPS |                \
			 LB_LOCK_F_NO_TURN | /* a writer can sleep through */  \
			 LB_LOCK_F_PSHARED,                                    \
		LB_OPS_OBJECT(pthread_rwlock_t),                               \
		.init = initfn,                                                \
		.init_shared = initfn##_shared,                                \
		.destroy = rwlock_destroy,                                     \
		LB_OPS_EXCL(rwlock),                                           \
		LB_OPS_READ(rwlock),                                           \
	};

LB_PTHREAD_RWLOCK_OPS(pthread_rwlock, "pthread-rwlock",
		      "glibc default rwlock: prefers readers", rwlock_init_default)
LB_PTHREAD_RWLOCK_OPS(pthread_rwlock_wp, "pthread-rwlock-wp",
		      "glibc rwlock PREFER_WRITER_NONRECURSIVE: writers first",
		      rwlock_init_wp)
