/* SPDX-License-Identifier: MIT */
/*
 * futex_pi.h - the smallest lock on the kernel's PI futexes
 * (FUTEX_LOCK_PI / FUTEX_UNLOCK_PI), a baseline for rtmutex.h.
 *
 * Design: the word holds the owner's thread id; the kernel owns everything
 * else.  Uncontended lock and unlock are one CAS in userspace; a contended
 * locker calls FUTEX_LOCK_PI, and the kernel sets FUTEX_WAITERS in the word,
 * queues the caller on an in-kernel rt_mutex, boosts the owner and walks the
 * PI chain (with deadlock detection: EDEADLK).  The owner then finds its CAS
 * TID -> 0 failing and calls FUTEX_UNLOCK_PI, which hands the lock straight
 * to the top waiter (the word becomes the waiter's TID): strict handoff, so
 * no stealing and a context switch per contended acquisition.  glibc's
 * PTHREAD_PRIO_INHERIT mutex is the same protocol with more bookkeeping.
 *
 * Word layout (Linux uapi):
 *   bits 0-29  owner TID (0 = free)
 *   bit  30    FUTEX_OWNER_DIED (robust lists; not used here)
 *   bit  31    FUTEX_WAITERS: the kernel has waiters; unlock must enter it
 * Transitions: 0 -> TID (user CAS); TID -> 0 (user CAS, no waiters);
 * TID|WAITERS -> TID'[|WAITERS] (kernel, FUTEX_UNLOCK_PI).
 *
 * The caller passes its TID (cache it: gettid is a syscall).
 *
 * Processes: lb_futex_pi_init_shared() makes the kernel calls shared
 * futexes (FUTEX_LOCK_PI without FUTEX_PRIVATE_FLAG), so processes that map
 * the lock at any address meet on one rt_mutex; the lock has no other state
 * (TIDs are system-wide).  lb_futex_pi_init() keeps the cheaper private
 * futexes of one process.
 */
#ifndef LB_FUTEX_PI_H
#define LB_FUTEX_PI_H

#include "lb_atomic.h"
#include "lb_probe.h"
#include "lb_futex.h"

#include <errno.h>

typedef struct lb_futex_pi {
	_Atomic(uint32_t) word;
	uint32_t shared;     /* 0: private futexes (one process), 1: shared; set by init */
} lb_futex_pi_t;

#define LB_FUTEX_PI_INITIALIZER { 0, 0 }

/* The per-thread context: the caller's kernel thread id, which the lock
 * word holds while it owns the lock.  lock/unlock/trylock take its value. */
typedef uint32_t lb_futex_pi_ctx_t;

/* Fill a context on the thread that will use it (the TID is per thread). */
static inline void lb_futex_pi_ctx_init(lb_futex_pi_ctx_t *ctx)
{
	*ctx = lb_gettid();
}

static inline void lb_futex_pi_init(lb_futex_pi_t *l)
{
	atomic_init(&l->word, 0);
	l->shared = 0;
}

/* For a lock in memory several processes map (MAP_SHARED, shm). */
static inline void lb_futex_pi_init_shared(lb_futex_pi_t *l)
{
	atomic_init(&l->word, 0);
	l->shared = 1;
}

/* The futex op for this lock: op, or op with the private flag. */
static inline int lb_futex_pi__op(const lb_futex_pi_t *l, int op)
{
	return l->shared ? op : op | FUTEX_PRIVATE_FLAG;
}

/* A snapshot for assertions and statistics; not a synchronisation point. */
static inline bool lb_futex_pi_is_locked(const lb_futex_pi_t *l)
{
	/* C11 atomic loads take non-const pointers. */
	return (lb_load_relaxed(&((lb_futex_pi_t *)l)->word) & FUTEX_TID_MASK) != 0;
}

/* Kernel path; the syscall is a full barrier.  Returns 0 or an errno. */
static LB_UNUSED LB_NOINLINE int lb_futex_pi_lock_slow(lb_futex_pi_t *l)
{
	for (;;) {
		if (lb_futex(&l->word, lb_futex_pi__op(l, FUTEX_LOCK_PI), 0, NULL, NULL, 0) == 0)
			return 0;
		/* EAGAIN: owner exiting; EINTR: not expected, harmless. */
		if (errno != EAGAIN && errno != EINTR)
			return errno;
	}
}

/* 0 (locked), EDEADLK (tid already owns it) or another errno from the kernel. */
static inline int lb_futex_pi_lock(lb_futex_pi_t *l, uint32_t tid)
{
	uint32_t z = 0;
	/* Acquire: pairs with the release CAS in unlock (or the kernel's
	 * handoff, a full barrier). */
	if (LB_LIKELY(lb_cas_acquire(&l->word, &z, tid)))
		return 0;
	LB_PROBE_CONTENTION_BEGIN(l, LB_CONTENTION_RT);
	int ret = lb_futex_pi_lock_slow(l);
	LB_PROBE_CONTENTION_END(l, ret);
	return ret;
}

static inline bool lb_futex_pi_trylock(lb_futex_pi_t *l, uint32_t tid)
{
	uint32_t z = 0;
	/* Acquire: as in lock. */
	return lb_cas_acquire(&l->word, &z, tid);
}

/* 0 or an errno (EPERM: not the owner). */
static inline int lb_futex_pi_unlock(lb_futex_pi_t *l, uint32_t tid)
{
	uint32_t me = tid;
	/* Release: the next owner sees our critical section. */
	if (LB_LIKELY(atomic_compare_exchange_strong_explicit(&l->word, &me, 0,
							      memory_order_release,
							      memory_order_relaxed)))
		return 0;
	if (lb_futex(&l->word, lb_futex_pi__op(l, FUTEX_UNLOCK_PI), 0, NULL, NULL, 0) != 0)
		return errno;
	return 0;
}

#endif /* LB_FUTEX_PI_H */
