/* SPDX-License-Identifier: MIT */
/* broken_mutex_scope.c - the adapter of the pshared mutex copy whose waiter
 * sleeps in the wrong futex scope (broken_copies.h, mkbroken.py). */
#include "broken_copies.h"
#include "lb_adapter.h"
#include "broken_mutex_wait_private.h"

static int mutex_setup(void *lock, bool pshared)
{
	struct lb_mutex_attr a = { .max_spinners = -1, .pshared = pshared };
	lb_mutex_init(lock, &a);
	return 0;
}

static int mutex_init(void *lock)
{
	return mutex_setup(lock, false);
}

static int mutex_init_shared(void *lock)
{
	return mutex_setup(lock, true);
}

LB_CTX_ADAPTERS(mutex, lb_mutex_ctx_init, lb_mutex_lock, lb_mutex_unlock, lb_mutex_trylock)

const struct lb_lock_ops lb_broken_mutex_wait_private_ops = {
	.name = "mutex-wait-private",
	.family = "test",
	.summary = "pshared mutex whose waiter sleeps on a private futex (mkbroken.py)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_SLEEPS | LB_LOCK_F_THREAD_CTX |
		 LB_LOCK_F_PSHARED,
	LB_OPS_OBJECT(lb_mutex_t),
	LB_OPS_CTX(lb_mutex_ctx_t, mutex),
	.init = mutex_init,
	.init_shared = mutex_init_shared,
	LB_OPS_EXCL(mutex),
};
