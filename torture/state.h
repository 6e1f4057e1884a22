/* SPDX-License-Identifier: MIT */
/*
 * state.h - a worker's published state (what it is doing, since when, and
 * when it last made progress), written by the owner with relaxed stores and
 * read racily by the watchdog (see context.h).  The coarse clock keeps the
 * per-iteration cost at a few ns.
 */
#ifndef LB_TORTURE_STATE_H
#define LB_TORTURE_STATE_H

#include "clock.h"
#include "context.h"

static inline void lb_torture_set_state(struct lb_torture_thread *t, enum lb_torture_state s,
					int lock)
{
	atomic_store_explicit(&t->state_lock, lock, memory_order_relaxed);
	atomic_store_explicit(&t->state_since_ns, lb_torture_coarse_ns(), memory_order_relaxed);
	atomic_store_explicit(&t->state, (int)s, memory_order_relaxed);
}

static inline void lb_torture_note_progress(struct lb_torture_thread *t)
{
	atomic_store_explicit(&t->last_progress_ns, lb_torture_coarse_ns(), memory_order_relaxed);
}

static inline bool lb_torture_must_stop(const struct lb_torture_run *run)
{
	/* A plain flag: nothing is published with it, eventual visibility suffices. */
	return atomic_load_explicit(&run->stop, memory_order_relaxed);
}

#endif /* LB_TORTURE_STATE_H */
