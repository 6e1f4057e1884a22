/* SPDX-License-Identifier: MIT */
/*
 * tas.c - vtable adapter for tas.h, the test-and-test-and-set spinlock: the
 * exclusive-lock floor every other lock's uncontended cost is compared with.
 */
#include "lb_lock_ops.h"
#include "tas.h"

static int tas_init(void *lock)
{
	lb_tas_init(lock);
	return 0;
}

static void tas_lock(void *lock, void *tctx)
{
	(void)tctx;
	lb_tas_lock(lock);
}

static void tas_unlock(void *lock, void *tctx)
{
	(void)tctx;
	lb_tas_unlock(lock);
}

static bool tas_trylock(void *lock, void *tctx)
{
	(void)tctx;
	return lb_tas_trylock(lock);
}

const struct lb_lock_ops lb_tas_ops = {
	.name = "tas",
	.family = "spin",
	.summary = "test-and-test-and-set on xchg: the floor for an exclusive lock (unfair)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK,
	.lock_size = sizeof(lb_tas_t),
	.lock_align = _Alignof(lb_tas_t),
	.init = tas_init,
	.lock = tas_lock,
	.unlock = tas_unlock,
	.trylock = tas_trylock,
};
