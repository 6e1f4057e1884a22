/* SPDX-License-Identifier: MIT */
/* broken_mutex.c - the adapter of the broken mutex copy (broken_copies.h). */
#include "broken_copies.h"
#include "lb_adapter.h"
#include "broken_mutex_pass_on_after_release.h"

static int mutex_init(void *lock)
{
	struct lb_mutex_attr a = { .max_spinners = -1 };
	lb_mutex_init(lock, &a);
	return 0;
}

LB_CTX_ADAPTERS(mutex, lb_mutex_ctx_init, lb_mutex_lock, lb_mutex_unlock, lb_mutex_trylock)

const struct lb_lock_ops lb_broken_mutex_pass_on_ops = {
	.name = "mutex-pass-on-after-release",
	.family = "test",
	.summary = "mutex whose tenure pass-on releases, then hands over (mkbroken.py)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_SLEEPS | LB_LOCK_F_THREAD_CTX,
	LB_OPS_OBJECT(lb_mutex_t),
	LB_OPS_CTX(lb_mutex_ctx_t, mutex),
	.init = mutex_init,
	LB_OPS_EXCL(mutex),
};
