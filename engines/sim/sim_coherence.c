/* SPDX-License-Identifier: MIT */
/*
 * sim_coherence.c - the line directory (doc/sim.md, "Coherence"): one entry
 * per 64-byte line, its exclusive owner or its sharers, and the time until
 * which a transfer occupies it.  Transfers on one line are serialised:
 * the mechanism behind a ticket lock's collapse.  A store or an RMW by
 * another CPU wakes the line's cond-waiters (their copies are invalidated);
 * each re-reads and queues behind the writer like any other miss.
 */
#include "sim_internal.h"

#include <stdlib.h>
#include <string.h>

static void mask_set(uint64_t *m, unsigned cpu)
{
	m[cpu / 64] |= 1ull << (cpu % 64);
}

/* sim_line_of's miss: the map, then a new line if it has none; the
 * cache slot now holds it. */
struct sim_line *sim_line_lookup(struct lb_sim_world *w, uintptr_t tag)
{
	struct sim_line *l = sim_map_get(&w->lines, tag);
	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l || sim_map_put(&w->lines, tag, l)) {
			free(l);
			w->failed = true;
			return NULL;
		}
		l->tag = tag;
		l->owner = -1;
	}
	struct sim_line_slot *s = &w->line_cache[tag % SIM_LINE_CACHE];
	s->tag = tag;
	s->line = l;
	return l;
}

/* Latency of bringing the line to cpu: from its owner, else its nearest
 * sharer, else memory.  The loops here go over the set bits of the
 * sharer mask, not over every CPU (a minimum and a maximum: the order
 * does not matter). */
static uint64_t fetch_latency(const struct lb_sim_world *w, const struct sim_line *l,
			      unsigned cpu)
{
	if (l->owner >= 0)
		return sim_distance(w, (unsigned)l->owner, cpu);
	uint64_t best = UINT64_MAX;
	for (unsigned i = 0; i < w->mask_words; i++)
		for (uint64_t m = l->sharers[i]; m; m &= m - 1) {
			uint64_t d = sim_distance(w, i * 64 + (unsigned)__builtin_ctzll(m), cpu);
			best = d < best ? d : best;
		}
	return best == UINT64_MAX ? w->m.memory : best;
}

/* Make the line exclusive to cpu; the latency of invalidating the other
 * copies (sent in parallel: the farthest one's). */
static uint64_t take_exclusive(struct lb_sim_world *w, struct sim_line *l, unsigned cpu)
{
	uint64_t inval = 0;
	for (unsigned i = 0; i < w->mask_words; i++)
		for (uint64_t m = l->sharers[i]; m; m &= m - 1) {
			unsigned c = i * 64 + (unsigned)__builtin_ctzll(m);
			if (c == cpu)
				continue;
			w->stats.invalidations++;
			uint64_t d = sim_distance(w, c, cpu);
			inval = d > inval ? d : inval;
		}
	memset(l->sharers, 0, sizeof(l->sharers));
	l->owner = (int)cpu;
	return inval;
}

/* Wake the threads parked on the line: their copies are gone. */
static void wake_waiters(struct lb_sim_world *w, struct sim_line *l)
{
	struct sim_thread *t = NULL;
	/* The list is pushed at its head: reversed, they wake in parking order. */
	while (l->waiters) {
		struct sim_thread *x = l->waiters;
		l->waiters = x->q_next;
		x->q_next = t;
		t = x;
	}
	while (t) {
		struct sim_thread *next = t->q_next;
		t->q_next = NULL;
		t->wait_line = NULL;
		t->gen++;  /* the deadline's event is stale now */
		t->wait_result = LB_SIM_WRITTEN;
		t->doing = D_CHARGE;
		t->resume_at = w->now;
		sim_heap_push(w, w->now, EV_RESUME, t->id, t->gen);
		t = next;
	}
}

/* The cost of one access by cpu, with the directory updated as of its
 * issue; 0 latency means a hit (no transfer, nothing serialised). */
static uint64_t access_cost(struct lb_sim_world *w, struct sim_line *l, unsigned cpu,
			    enum lb_sim_access_kind kind, bool *transfer)
{
	bool excl = l->owner == (int)cpu;
	bool shared = excl || sim_mask_has(l->sharers, cpu);
	uint64_t lat = 0;
	*transfer = false;
	if (kind == LB_SIM_LOAD) {
		if (shared)
			return w->m.l1_hit;
		lat = fetch_latency(w, l, cpu);
		if (l->owner >= 0)
			mask_set(l->sharers, (unsigned)l->owner);  /* the owner keeps a shared copy */
		l->owner = -1;
		mask_set(l->sharers, cpu);
	} else if (!excl) {
		/* An owner (then there are no sharers) supplies the line and
		 * drops its copy in that transfer; sharers are invalidated. */
		uint64_t fetch = shared ? 0 : fetch_latency(w, l, cpu);
		if (l->owner >= 0)
			w->stats.invalidations++;
		l->owner = -1;
		lat = fetch + take_exclusive(w, l, cpu);
		wake_waiters(w, l);
	}
	if (!lat)
		return w->m.l1_hit + (kind == LB_SIM_RMW ? w->m.rmw : 0);
	*transfer = true;
	w->stats.transfers++;
	return lat + (kind == LB_SIM_RMW ? w->m.rmw : 0);
}

/* An access that may move the line: its cost, serialised behind the
 * line's previous transfer.  Out of line, so that the hit path of
 * lb_sim_access saves no registers for it. */
static __attribute__((noinline)) void access_miss(struct lb_sim_world *w, struct sim_thread *t,
						   struct sim_line *l,
						   enum lb_sim_access_kind kind)
{
	bool transfer;
	uint64_t cost = access_cost(w, l, (unsigned)t->cpu, kind, &transfer);
	if (!transfer) {
		sim_charge(t, cost);
		return;
	}
	/* Serialised: it starts when the line's previous transfer ends. */
	uint64_t start = l->busy_until > w->now ? l->busy_until : w->now;
	l->busy_until = start + cost;
	sim_charge(t, l->busy_until - w->now);
}

void lb_sim_access(const void *addr, enum lb_sim_access_kind kind)
{
	struct lb_sim_world *w = sim_world();
	if (!w || !w->running)
		return;  /* outside a virtual thread: nothing to charge */
	struct sim_thread *t = w->running;
	struct sim_line *l = sim_line_of(w, addr);
	if (!l) {
		sim_charge(t, 0);
		return;
	}
	/* A hit (any copy for a load, the exclusive one for a write) changes
	 * nothing in the directory: access_cost's first answer, sooner. */
	if (l->owner == t->cpu || (kind == LB_SIM_LOAD && sim_mask_has(l->sharers, (unsigned)t->cpu))) {
		sim_charge(t, w->m.l1_hit + (kind == LB_SIM_RMW ? w->m.rmw : 0));
		return;
	}
	access_miss(w, t, l, kind);
}

enum lb_sim_wait_result lb_sim_cond_wait(const void *addr, uint64_t deadline)
{
	struct lb_sim_world *w = sim_world();
	struct sim_thread *t = sim_self();
	struct sim_line *l = sim_line_of(w, addr);
	unsigned cpu = (unsigned)t->cpu;
	/* Invalidated since this CPU last read it: the spinner's next load
	 * would miss at once, so there is nothing to wait for. */
	if (!l || (l->owner != (int)cpu && !sim_mask_has(l->sharers, cpu)))
		return LB_SIM_WRITTEN;
	if (deadline <= w->now)
		return LB_SIM_TIMEDOUT;
	t->doing = D_CONDWAIT;
	t->wait_line = l;
	t->q_next = l->waiters;
	l->waiters = t;
	if (deadline != LB_SIM_NO_DEADLINE)
		sim_heap_push(w, deadline, EV_TIMEOUT, t->id, t->gen);
	sim_switch_out(t);
	return t->wait_result;
}

/* A cond-waiter leaves its line: preempted, or its deadline passed. */
void sim_condwait_cancel(struct sim_thread *t)
{
	struct sim_line *l = t->wait_line;
	struct sim_thread **pp = &l->waiters;
	while (*pp && *pp != t)
		pp = &(*pp)->q_next;
	if (*pp)
		*pp = t->q_next;
	t->q_next = NULL;
	t->wait_line = NULL;
}

uint32_t lb_sim_load_u32(const uint32_t *p)
{
	lb_sim_access(p, LB_SIM_LOAD);
	return *p;
}

void lb_sim_store_u32(uint32_t *p, uint32_t v)
{
	lb_sim_access(p, LB_SIM_STORE);
	*p = v;
}

uint32_t lb_sim_fetch_add_u32(uint32_t *p, uint32_t v)
{
	lb_sim_access(p, LB_SIM_RMW);
	uint32_t old = *p;
	*p = old + v;
	return old;
}

uint32_t lb_sim_xchg_u32(uint32_t *p, uint32_t v)
{
	lb_sim_access(p, LB_SIM_RMW);
	uint32_t old = *p;
	*p = v;
	return old;
}

bool lb_sim_cas_u32(uint32_t *p, uint32_t *expected, uint32_t desired)
{
	lb_sim_access(p, LB_SIM_RMW);
	if (*p != *expected) {
		*expected = *p;
		return false;
	}
	*p = desired;
	return true;
}

void lb_sim_line_state(const struct lb_sim_world *w, const void *addr, int *owner,
		       unsigned *sharers)
{
	const struct sim_line *l = sim_map_get(&w->lines, (uintptr_t)addr / LB_SIM_LINE + 1);
	*owner = l ? l->owner : -1;
	*sharers = 0;
	for (unsigned c = 0; l && c < w->ncpus; c++)
		*sharers += sim_mask_has(l->sharers, c);
}
