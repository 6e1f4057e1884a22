/* SPDX-License-Identifier: MIT */
/*
 * lb_futex.h - thin, header-only wrappers over the Linux futex(2) syscall
 * for the sleeping locks.  lb_futex_wait/lb_futex_wake use private futexes
 * (the locks are process-local); the _scoped variants take the scope as a
 * flag, FUTEX_PRIVATE_FLAG (one process) or 0 (a shared futex: processes that
 * map the word meet on it), for locks that keep their scope in their data
 * (rtmutex.h); futex_pi.h's shared variant passes its own op to lb_futex.
 * Waiter and waker of one word must use the same scope: a private wake never
 * reaches a shared sleeper, nor a private one in another process.
 * Return values are the raw syscall's: 0 or -1 with errno set (EAGAIN when the
 * word no longer holds the expected value, EINTR on a signal, ETIMEDOUT).
 */
#ifndef LB_FUTEX_H
#define LB_FUTEX_H

/* syscall() is not in strict C11/POSIX: the includer must ask for it. */
#if !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE)
#error "lb_futex.h (and the sleeping locks) need _GNU_SOURCE or _DEFAULT_SOURCE defined first"
#endif

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lb_atomic.h"

static inline long lb_futex(_Atomic(uint32_t) *uaddr, int op, uint32_t val,
			    const struct timespec *timeout, uint32_t *uaddr2, uint32_t val3)
{
#if defined(LB_PERTURB)
	/* locktorture --perturb only (torture/perturb_hooks.h): delays around the
	 * call, more often right before a wait (a waiter between its state
	 * change and its sleep). */
	int cmd = op & FUTEX_CMD_MASK;
	if (cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET)
		lb_perturb_before_wait();
	lb_perturb_point();
	long ret = syscall(SYS_futex, (uint32_t *)uaddr, op, val, timeout, uaddr2, val3);
	int saved_errno = errno;
	lb_perturb_point();
	errno = saved_errno;
	return ret;
#else
	return syscall(SYS_futex, (uint32_t *)uaddr, op, val, timeout, uaddr2, val3);
#endif
}

/* Sleep while *uaddr == expected (relative timeout, NULL = forever); scope:
 * FUTEX_PRIVATE_FLAG or 0 (shared). */
static inline long lb_futex_wait_scoped(_Atomic(uint32_t) *uaddr, uint32_t expected,
					const struct timespec *rel_timeout, int scope)
{
	return lb_futex(uaddr, FUTEX_WAIT | scope, expected, rel_timeout, NULL, 0);
}

/* Sleep while *uaddr == expected until abs_timeout (CLOCK_MONOTONIC, NULL =
 * forever): FUTEX_WAIT_BITSET, which takes an absolute time; scope as above. */
static inline long lb_futex_wait_abs_scoped(_Atomic(uint32_t) *uaddr, uint32_t expected,
					    const struct timespec *abs_timeout, int scope)
{
	return lb_futex(uaddr, FUTEX_WAIT_BITSET | scope, expected, abs_timeout, NULL,
			FUTEX_BITSET_MATCH_ANY);
}

/* Wake up to n sleepers on uaddr (scope as above); returns how many were woken. */
static inline long lb_futex_wake_scoped(_Atomic(uint32_t) *uaddr, int n, int scope)
{
	return lb_futex(uaddr, FUTEX_WAKE | scope, (uint32_t)n, NULL, NULL, 0);
}

/* Sleep while *uaddr == expected (relative timeout, NULL = forever). */
static inline long lb_futex_wait(_Atomic(uint32_t) *uaddr, uint32_t expected,
				 const struct timespec *rel_timeout)
{
	return lb_futex_wait_scoped(uaddr, expected, rel_timeout, FUTEX_PRIVATE_FLAG);
}

/* Wake up to n sleepers on uaddr; returns how many were woken. */
static inline long lb_futex_wake(_Atomic(uint32_t) *uaddr, int n)
{
	return lb_futex_wake_scoped(uaddr, n, FUTEX_PRIVATE_FLAG);
}

/* The caller's kernel thread id (what FUTEX_LOCK_PI expects in the word). */
static inline uint32_t lb_gettid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

#endif /* LB_FUTEX_H */
