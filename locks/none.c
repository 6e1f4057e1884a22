/* SPDX-License-Identifier: MIT */
/*
 * none.c - the "no lock" baseline: lock and unlock are empty calls through
 * the vtable.  What it measures is the harness itself (loop, indirect calls,
 * critical-section and parallel work, latency sampling), which every other
 * lock's figures include too.  It gives no exclusion and claims none
 * (LB_LOCK_F_NOLOCK), so conformance tests skip it.
 */
#include "lb_adapter.h"

struct lb_none_lock {
	char unused;
};

LB_ADAPT_NOP_INIT(none_init)
LB_ADAPT_NOP(none_lock)

const struct lb_lock_ops lb_none_ops = {
	.name = "none",
	.family = "baseline",
	.summary = "no lock at all: measures the harness (not exclusive)",
	.flags = LB_LOCK_F_NOLOCK,
	.lock_size = sizeof(struct lb_none_lock),
	.lock_align = 1,
	.init = none_init,
	.lock = none_lock,
	.unlock = none_lock,
};
