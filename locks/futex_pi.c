/* SPDX-License-Identifier: MIT */
/*
 * futex_pi.c - vtable adapter for futex_pi.h: a bare FUTEX_LOCK_PI /
 * FUTEX_UNLOCK_PI lock (the kernel's rt_mutex does all the PI work).  The
 * thread context caches the caller's TID; thread_init() must run on the
 * thread that uses it.
 */
#include <lockbench/futex_pi.h>
#include "lb_adapter.h"

LB_ADAPT_INIT(fpi_init, lb_futex_pi_init)
LB_ADAPT_INIT(fpi_init_shared, lb_futex_pi_init_shared)

LB_ADAPT_THREAD_INIT(fpi_thread_init, lb_futex_pi_ctx_init)

static void fpi_lock(void *lock, void *tctx)
{
	int err = lb_futex_pi_lock(lock, *(const lb_futex_pi_ctx_t *)tctx);
	if (LB_UNLIKELY(err))
		lb_die(err, "FUTEX_LOCK_PI");
}

static void fpi_unlock(void *lock, void *tctx)
{
	int err = lb_futex_pi_unlock(lock, *(const lb_futex_pi_ctx_t *)tctx);
	if (LB_UNLIKELY(err))
		lb_die(err, "FUTEX_UNLOCK_PI");
}

static bool fpi_trylock(void *lock, void *tctx)
{
	return lb_futex_pi_trylock(lock, *(const lb_futex_pi_ctx_t *)tctx);
}

const struct lb_lock_ops lb_futex_pi_ops = {
	.name = "futex-pi",
	.family = "pi",
	.summary = "bare FUTEX_LOCK_PI/FUTEX_UNLOCK_PI: user CAS fast path, kernel rt_mutex",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_SLEEPS | LB_LOCK_F_PI |
		 LB_LOCK_F_THREAD_CTX | LB_LOCK_F_PSHARED,
	LB_OPS_CTX_LOCK(lb_futex_pi_t, lb_futex_pi_ctx_t, fpi),
	/* The context is the TID (system-wide): shared futexes suffice. */
	.init_shared = fpi_init_shared,
};
