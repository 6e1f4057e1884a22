/* SPDX-License-Identifier: MIT */
/*
 * tas.c - vtable adapter for tas.h, the test-and-test-and-set spinlock: the
 * exclusive-lock floor every other lock's uncontended cost is compared with.
 */
#include "lb_adapter.h"
#include <lockbench/tas.h>

LB_CTXFREE_LOCK_OPS(tas, lb_tas, lb_tas_t,
	.name = "tas",
	.family = "spin",
	.summary = "test-and-test-and-set on xchg: the floor for an exclusive lock (unfair)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_PSHARED,
	/* One word, no context: the same init works in a shared mapping. */
	.init_shared = tas_adapt_init);
