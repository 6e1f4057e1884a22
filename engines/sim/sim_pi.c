/* SPDX-License-Identifier: MIT */
/*
 * sim_pi.c - PI futexes (FUTEX_LOCK_PI / FUTEX_UNLOCK_PI) on the simulated
 * kernel, with the kernel's priority inheritance (kernel/futex/pi.c and
 * kernel/locking/rtmutex.c, as doc/sim.md describes them):
 *
 *  - the word holds its owner's TID (lb_sim_self() + 1, the simulated
 *    gettid) and LB_SIM_FUTEX_WAITERS while a waiter is queued;
 *  - a waiter queues in priority order (FIFO within one priority) and
 *    lends the owner its effective priority: the owner's PI boost is the
 *    highest top waiter of the futexes it owns, and a blocked owner passes
 *    it on along the chain (rt_mutex_adjust_prio_chain);
 *  - an unlock hands the lock to the top waiter (the word becomes its TID
 *    | WAITERS, as the kernel's wake_futex_pi writes it), which then owns
 *    the futex's other waiters, and the unlocker's boost is recomputed
 *    after the wake.
 *
 * The boost is its own field (sim_thread.pi_prio): the hooks' boost and a
 * thread's own class (sched_setscheduler) are unchanged by it, and the
 * effective priority is the highest of the three (sim_eff_prio).
 */
#include "sim_internal.h"

#define SIM_PI_MAX_DEPTH 1024 /* the kernel's max_lock_depth */

static struct sim_thread *owner_of(struct lb_sim_world *w, uint32_t word)
{
	uint32_t tid = word & LB_SIM_FUTEX_TID_MASK;
	return tid ? sim_thread_of(w, (int)tid - 1) : NULL;
}

static void attach(struct sim_futex *q, struct sim_thread *owner)
{
	if (q->pi_owner == owner)
		return;
	q->pi_owner = owner;
	q->pi_next = owner->pi_owned;
	owner->pi_owned = q;
}

static void detach(struct sim_futex *q)
{
	struct sim_thread *owner = q->pi_owner;
	if (!owner)
		return;
	struct sim_futex **pp = &owner->pi_owned;
	while (*pp && *pp != q)
		pp = &(*pp)->pi_next;
	if (*pp)
		*pp = q->pi_next;
	q->pi_owner = NULL;
	q->pi_next = NULL;
}

/* Chain walk: bounded by SIM_PI_MAX_DEPTH, which also ends a cycle (a
 * PI deadlock the kernel would refuse with EDEADLK). */
void sim_pi_update(struct lb_sim_world *w, struct sim_thread *t)
{
	for (unsigned depth = 0; t && depth < SIM_PI_MAX_DEPTH; depth++) {
		int p = 0;
		for (const struct sim_futex *q = t->pi_owned; q; q = q->pi_next)
			if (q->queue && sim_eff_prio(q->queue) > p)
				p = sim_eff_prio(q->queue);  /* queues are in priority order */
		if (p == t->pi_prio)
			return;
		if (t->state == T_RUNNING)
			sim_account(w, t);
		t->pi_prio = p;
		sim_reprioritise(w, t);  /* re-sorts it in a futex queue too */
		t = t->pi_blocked ? t->pi_blocked->pi_owner : NULL;
	}
}

int lb_sim_futex_lock_pi(uint32_t *addr, uint64_t deadline)
{
	struct lb_sim_world *w = sim_world();
	struct sim_thread *t = sim_self();
	uint32_t me = (uint32_t)t->id + 1;
	sim_charge(t, w->m.syscall);
	/* The kernel's cmpxchg of the word: its cost, and the wake of the
	 * line's cond-waiters that a store makes. */
	lb_sim_access(addr, LB_SIM_RMW);
	uint32_t v = *addr;
	struct sim_futex *q = sim_futex_queue(w, addr, true);
	if (!q)
		return LB_SIM_PI_NOOWNER;
	if ((v & LB_SIM_FUTEX_TID_MASK) == 0) {
		/* Free (a racing unlock): take it, keeping WAITERS for the
		 * waiters still queued. */
		*addr = me | (q->queue ? LB_SIM_FUTEX_WAITERS : 0);
		if (q->queue)
			attach(q, t);
		sim_pi_update(w, t);
		return LB_SIM_PI_OK;
	}
	if ((v & LB_SIM_FUTEX_TID_MASK) == me)
		return LB_SIM_PI_DEADLOCK;
	struct sim_thread *owner = owner_of(w, v);
	if (!owner || owner->state == T_DONE)
		return LB_SIM_PI_NOOWNER;
	if (deadline <= w->now)
		return LB_SIM_PI_TIMEDOUT;
	*addr = v | LB_SIM_FUTEX_WAITERS;
	if (q->pi_owner != owner)
		detach(q);
	attach(q, owner);
	sim_futex_insert(q, t);
	t->futex_addr = addr;
	t->futex_result = LB_SIM_PI_OK;
	t->pi_blocked = q;
	/* Boost before giving up the CPU (the kernel's task_blocks_on_rt_mutex
	 * runs before schedule()): a boosted owner queued here runs next. */
	sim_pi_update(w, owner);
	sim_block(w, t);
	t->need_resched = false;  /* a mark from the boost: it left the CPU anyway */
	if (deadline != LB_SIM_NO_DEADLINE)
		sim_heap_push(w, deadline, EV_TIMEOUT, t->id, t->gen);
	sim_switch_out(t);
	t->pi_blocked = NULL;
	return t->futex_result;  /* handed the lock, or timed out (sim_futex_timeout) */
}

int lb_sim_futex_unlock_pi(uint32_t *addr)
{
	struct lb_sim_world *w = sim_world();
	struct sim_thread *t = sim_self();
	uint32_t me = (uint32_t)t->id + 1;
	sim_charge(t, w->m.syscall);
	lb_sim_access(addr, LB_SIM_RMW);
	if ((*addr & LB_SIM_FUTEX_TID_MASK) != me)
		return LB_SIM_PI_NOTOWNER;
	struct sim_futex *q = sim_futex_queue(w, addr, false);
	struct sim_thread *x = q ? q->queue : NULL;
	if (q)
		detach(q);
	if (!x) {
		*addr = 0;
		sim_pi_update(w, t);
		return LB_SIM_PI_OK;
	}
	sim_futex_unlink(q, x);
	x->futex_addr = NULL;
	x->pi_blocked = NULL;
	*addr = (uint32_t)(x->id + 1) | LB_SIM_FUTEX_WAITERS;
	if (q->queue)
		attach(q, x);
	sim_pi_update(w, x);  /* the new owner inherits the rest of the queue */
	sim_wake(w, x);
	sim_pi_update(w, t);  /* the deboost after the wake, as rt_mutex_slowunlock */
	return LB_SIM_PI_OK;
}

int lb_sim_thread_eff_prio(const struct lb_sim_world *w, int tid)
{
	const struct sim_thread *t =
		tid >= 0 && (unsigned)tid < w->nthreads ? w->threads[tid] : NULL;
	return t ? sim_eff_prio(t) : -1;
}
