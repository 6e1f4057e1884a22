/* SPDX-License-Identifier: MIT */
/*
 * busted.c - a lock that does nothing but claims to be exclusive: the
 * negative control, after the kernel's lock_busted ("BUGGY, do not use in
 * real life!!!").  Conformance tests and locktorture must report failure on
 * it; that is how we know they bite.  It claims a read side too, so the
 * reader/writer checks are seen to bite as well.  Never part of a default run.
 */
#include "lb_adapter.h"

struct lb_busted_lock {
	char unused;
};

LB_ADAPT_NOP_INIT(busted_init)
LB_ADAPT_NOP(busted_lock)

static bool busted_trylock(void *lock, void *tctx)
{
	(void)lock;
	(void)tctx;
	return true;
}

const struct lb_lock_ops lb_busted_ops = {
	.name = "busted",
	.family = "baseline",
	.summary = "BUGGY on purpose: lock/unlock do nothing (negative control)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_RW | LB_LOCK_F_TRYLOCK | LB_LOCK_F_BUSTED |
		 LB_LOCK_F_PSHARED,
	.lock_size = sizeof(struct lb_busted_lock),
	.lock_align = 1,
	.init = busted_init,
	.init_shared = busted_init, /* no state: the control works across processes too */
	.lock = busted_lock,
	.unlock = busted_lock,
	.trylock = busted_trylock,
	.read_lock = busted_lock,
	.read_unlock = busted_lock,
	.read_trylock = busted_trylock,
};
