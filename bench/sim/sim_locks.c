/* SPDX-License-Identifier: MIT */
/*
 * sim_locks.c - the locks of locks/ built over sim_interpose.h (their
 * vtables renamed lb_simlk_<lock>_ops), in the lock manifest's order.
 * Which locks run here is bench/sim/meson.build's list (doc/sim.md says
 * why the others do not yet).
 */
#include "sim_cell.h"
#include "sim_locks_xlist.h"

#include <string.h>

#define X(sym) extern const struct lb_lock_ops lb_simlk_##sym##_ops;
LB_SIM_LOCKS(X)
#undef X

static const struct lb_lock_ops *const sim_locks[] = {
#define X(sym) &lb_simlk_##sym##_ops,
	LB_SIM_LOCKS(X)
#undef X
};

size_t lb_simb_lock_count(void)
{
	return sizeof(sim_locks) / sizeof(sim_locks[0]);
}

const struct lb_lock_ops *lb_simb_lock_at(size_t i)
{
	return i < lb_simb_lock_count() ? sim_locks[i] : NULL;
}

const struct lb_lock_ops *lb_simb_lock_find(const char *name)
{
	for (size_t i = 0; i < lb_simb_lock_count(); i++)
		if (!strcmp(sim_locks[i]->name, name))
			return sim_locks[i];
	return NULL;
}
