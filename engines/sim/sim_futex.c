/* SPDX-License-Identifier: MIT */
/*
 * sim_futex.c - futex wait/wake on simulated queues: one queue per address
 * (private and shared alike: one address space), in priority order and
 * FIFO within one priority, as the kernel's plist keeps futex waiters.
 */
#include "sim_internal.h"

#include <stdlib.h>

struct sim_futex *sim_futex_queue(struct lb_sim_world *w, const uint32_t *addr, bool make)
{
	struct sim_futex *q = sim_map_get(&w->futexes, (uintptr_t)addr);
	if (q || !make)
		return q;
	q = calloc(1, sizeof(*q));
	if (!q || sim_map_put(&w->futexes, (uintptr_t)addr, q)) {
		free(q);
		w->failed = true;
		return NULL;
	}
	q->addr = (uintptr_t)addr;
	return q;
}

void sim_futex_insert(struct sim_futex *q, struct sim_thread *t)
{
	struct sim_thread **pp = &q->queue;
	while (*pp && sim_eff_prio(*pp) >= sim_eff_prio(t))
		pp = &(*pp)->q_next;
	t->q_next = *pp;
	*pp = t;
}

void sim_futex_unlink(struct sim_futex *q, struct sim_thread *t)
{
	struct sim_thread **pp = &q->queue;
	while (*pp && *pp != t)
		pp = &(*pp)->q_next;
	if (*pp)
		*pp = t->q_next;
	t->q_next = NULL;
}

int lb_sim_futex_wait(const uint32_t *addr, uint32_t expected, uint64_t deadline)
{
	struct lb_sim_world *w = sim_world();
	struct sim_thread *t = sim_self();
	sim_charge(t, w->m.syscall);
	lb_sim_access(addr, LB_SIM_LOAD);  /* the kernel reads the word */
	if (*addr != expected)
		return 1;
	if (deadline <= w->now)
		return 2;
	struct sim_futex *q = sim_futex_queue(w, addr, true);
	if (!q)
		return 1;
	sim_futex_insert(q, t);
	t->futex_addr = addr;
	t->futex_result = 0;
	sim_block(w, t);
	if (deadline != LB_SIM_NO_DEADLINE)
		sim_heap_push(w, deadline, EV_TIMEOUT, t->id, t->gen);
	sim_switch_out(t);
	return t->futex_result;
}

unsigned lb_sim_futex_wake(const uint32_t *addr, unsigned n)
{
	struct lb_sim_world *w = sim_world();
	struct sim_thread *t = sim_self();
	sim_charge(t, w->m.syscall);
	struct sim_futex *q = sim_futex_queue(w, addr, false);
	unsigned woken = 0;
	while (q && q->queue && woken < n) {
		struct sim_thread *x = q->queue;
		sim_futex_unlink(q, x);
		x->futex_addr = NULL;
		sim_wake(w, x);
		woken++;
	}
	return woken;
}

void sim_futex_timeout(struct lb_sim_world *w, struct sim_thread *t)
{
	struct sim_futex *q = sim_futex_queue(w, t->futex_addr, false);
	if (q)
		sim_futex_unlink(q, t);
	t->futex_addr = NULL;
	t->futex_result = 2;
	if (t->pi_blocked) {
		/* A PI waiter gave up: its owner loses the boost it lent. */
		t->pi_blocked = NULL;
		if (q && q->pi_owner)
			sim_pi_update(w, q->pi_owner);
	}
	sim_wake(w, t);
}

void sim_futex_requeue(struct lb_sim_world *w, struct sim_thread *t)
{
	struct sim_futex *q = sim_futex_queue(w, t->futex_addr, false);
	if (!q)
		return;
	sim_futex_unlink(q, t);
	sim_futex_insert(q, t);
}
