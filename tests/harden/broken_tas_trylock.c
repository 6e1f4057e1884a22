/* SPDX-License-Identifier: MIT */
/* broken_tas_trylock.c - the adapter of the tas copy whose trylock claims a
 * free lock with a plain store (broken_copies.h, mkbroken.py).  Built without
 * the --perturb hooks: the conformance test links it, not locktorture. */
#include "broken_copies.h"
#include "lb_adapter.h"
#include "broken_tas_trylock_store.h"

LB_CTXFREE_LOCK_OPS(broken_tas_trylock_store, lb_tas, lb_tas_t,
	.name = "tas-trylock-store",
	.family = "test",
	.summary = "tas whose trylock claims a free lock with a plain store (mkbroken.py)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK);
