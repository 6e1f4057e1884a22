/* SPDX-License-Identifier: MIT */
/*
 * sim_sched.c - the scheduler model (doc/sim.md, "Scheduler"): per-CPU run
 * queues, a CFS-like fair class (virtual runtime, a tick, wake-up
 * preemption, sleeper credit), a FIFO class above it with PI boosts,
 * placement, preempt-off regions.  Figures from the machine file.
 */
#include "sim_internal.h"

/* FIFO priority in force (its own or a boost), 0 for the fair class. */
int sim_eff_prio(const struct sim_thread *t)
{
	int own = t->fifo ? t->prio : 0;
	int boost = t->boost > t->pi_prio ? t->boost : t->pi_prio;
	return boost > own ? boost : own;
}

/* a runs before b: higher priority; FIFO in arrival order; fair by
 * virtual runtime, arrival order on ties. */
static bool runs_before(const struct sim_thread *a, const struct sim_thread *b)
{
	int pa = sim_eff_prio(a), pb = sim_eff_prio(b);
	if (pa != pb)
		return pa > pb;
	return pa == 0 && a->vruntime < b->vruntime;
}

static void update_min_vruntime(struct sim_cpu *c)
{
	uint64_t m = UINT64_MAX;
	if (c->curr && sim_eff_prio(c->curr) == 0)
		m = c->curr->vruntime;
	if (c->rq && sim_eff_prio(c->rq) == 0 && c->rq->vruntime < m)
		m = c->rq->vruntime;
	if (m != UINT64_MAX && m > c->min_vruntime)
		c->min_vruntime = m;
}

void sim_account(struct lb_sim_world *w, struct sim_thread *t)
{
	t->vruntime += w->now - t->exec_start;
	w->stats.run_ns += w->now - t->exec_start;
	t->run_ns += w->now - t->exec_start;
	t->exec_start = w->now;
	update_min_vruntime(&w->cpus[t->cpu]);
}

/* Move t's virtual runtime into cpu's frame (CFS does the same on a
 * migration: relative to the queue's minimum). */
static void renormalise(struct lb_sim_world *w, struct sim_thread *t, unsigned cpu)
{
	uint64_t to = w->cpus[cpu].min_vruntime;
	if (t->vr_cpu < 0) {
		t->vruntime = to;
	} else if ((unsigned)t->vr_cpu != cpu) {
		uint64_t from = w->cpus[t->vr_cpu].min_vruntime;
		t->vruntime = t->vruntime + to >= from ? t->vruntime + to - from : 0;
	}
	t->vr_cpu = (int)cpu;
}

void sim_enqueue(struct lb_sim_world *w, struct sim_thread *t, unsigned cpu)
{
	struct sim_cpu *c = &w->cpus[cpu];
	renormalise(w, t, cpu);
	struct sim_thread **pp = &c->rq;
	while (*pp && !runs_before(t, *pp))
		pp = &(*pp)->rq_next;
	t->rq_next = *pp;
	*pp = t;
	t->state = T_RUNNABLE;
	t->cpu = (int)cpu;
	c->nr_queued++;
}

void sim_dequeue(struct lb_sim_world *w, struct sim_thread *t)
{
	struct sim_cpu *c = &w->cpus[t->cpu];
	struct sim_thread **pp = &c->rq;
	while (*pp && *pp != t)
		pp = &(*pp)->rq_next;
	if (*pp) {
		*pp = t->rq_next;
		c->nr_queued--;
	}
	t->rq_next = NULL;
}

/* The CPU has no current thread: run the head of its queue, paying the
 * switch and whatever cost the thread had left when it was preempted. */
void sim_schedule(struct lb_sim_world *w, unsigned cpu)
{
	struct sim_cpu *c = &w->cpus[cpu];
	struct sim_thread *t = c->rq;
	if (!t) {
		if (c->busy)
			w->stats.busy_ns += w->now - c->busy_since;  /* it goes idle */
		c->busy = false;
		return;
	}
	if (!c->busy) {
		c->busy = true;
		c->busy_since = w->now;
	}
	sim_dequeue(w, t);
	c->curr = t;
	t->state = T_RUNNING;
	t->exec_start = t->slice_start = w->now;
	uint64_t cost = t->remaining;
	if (c->last != t) {
		cost += w->m.context_switch;
		w->stats.switches++;
	}
	c->last = t;
	t->remaining = 0;
	t->gen++;
	t->doing = D_CHARGE;
	t->resume_at = w->now + cost;
	sim_heap_push(w, t->resume_at, EV_RESUME, t->id, t->gen);
	update_min_vruntime(c);
}

/* Take the CPU's current thread off it and back onto its queue. */
void sim_preempt(struct lb_sim_world *w, unsigned cpu)
{
	struct sim_cpu *c = &w->cpus[cpu];
	struct sim_thread *t = c->curr;
	sim_account(w, t);
	t->remaining = 0;
	if (t->doing == D_CHARGE && t->resume_at > w->now)
		t->remaining = t->resume_at - w->now;
	if (t->doing == D_CONDWAIT) {
		sim_condwait_cancel(t);
		t->wait_result = LB_SIM_RESCHED;
	}
	t->doing = D_NONE;
	t->gen++;
	c->curr = NULL;
	w->stats.preemptions++;
	sim_enqueue(w, t, cpu);
	sim_schedule(w, cpu);
}

/* Would cand, queued on cpu, take the CPU from its current thread now? */
static bool should_preempt(struct lb_sim_world *w, struct sim_cpu *c, struct sim_thread *cand)
{
	struct sim_thread *cur = c->curr;
	int pc = sim_eff_prio(cur), pn = sim_eff_prio(cand);
	if (pn != pc)
		return pn > pc;
	if (pn > 0)
		return false;  /* FIFO: an equal priority waits its turn */
	sim_account(w, cur);
	return cur->vruntime > cand->vruntime + w->m.wakeup_granularity;
}

/* Preempt now, or mark it for the current thread's next yield point when
 * that thread is the caller or is in a preempt-off region. */
static void resched(struct lb_sim_world *w, unsigned cpu)
{
	struct sim_thread *cur = w->cpus[cpu].curr;
	if (cur == w->running || cur->preempt_count > 0)
		cur->need_resched = true;
	else
		sim_preempt(w, cpu);
}

void sim_check_preempt(struct lb_sim_world *w, unsigned cpu, struct sim_thread *t)
{
	struct sim_cpu *c = &w->cpus[cpu];
	if (!c->curr) {
		sim_schedule(w, cpu);
		return;
	}
	if (t->state == T_RUNNABLE && should_preempt(w, c, t))
		resched(w, cpu);
}

void sim_tick(struct lb_sim_world *w, unsigned cpu)
{
	struct sim_cpu *c = &w->cpus[cpu];
	sim_heap_push(w, w->now + w->m.tick, EV_TICK, (int)cpu, 0);
	struct sim_thread *cur = c->curr, *head = c->rq;
	if (!cur || !head || sim_eff_prio(cur) > 0)
		return;  /* idle, alone, or FIFO (never ticked off) */
	if (sim_eff_prio(head) > 0) {
		resched(w, cpu);
		return;
	}
	sim_account(w, cur);
	uint64_t ran = w->now - cur->slice_start;
	uint64_t ideal = w->m.sched_latency / (c->nr_queued + 1);
	if (ideal < w->m.min_granularity)
		ideal = w->m.min_granularity;
	/* CFS's check_preempt_tick: past its ideal slice, or far ahead of the
	 * leftmost queued thread once it had its minimum. */
	if (ran > ideal ||
	    (ran >= w->m.min_granularity && cur->vruntime > head->vruntime + ideal))
		resched(w, cpu);
}

unsigned sim_select_cpu(struct lb_sim_world *w, struct sim_thread *t)
{
	unsigned n = w->ncpus;
	unsigned start = t->cpu >= 0 ? (unsigned)t->cpu : (unsigned)(sim_rand(w) % n);
	unsigned best = start, best_load = UINT32_MAX;
	for (unsigned i = 0; i < n; i++) {
		unsigned cpu = (start + i) % n;
		const struct sim_cpu *c = &w->cpus[cpu];
		if (!sim_mask_has(t->allowed, cpu))
			continue;
		unsigned load = c->nr_queued + c->incoming + (c->curr ? 1 : 0);
		if (load < best_load) {
			best = cpu;
			best_load = load;
		}
		if (!load)
			break;  /* the first idle CPU going round from the last one */
	}
	return best;
}

/* A blocked thread is woken: it arrives on its CPU after the wake-up
 * latency (IPI and idle exit). */
void sim_wake(struct lb_sim_world *w, struct sim_thread *t)
{
	unsigned cpu = sim_select_cpu(w, t);
	if (t->cpu >= 0 && (unsigned)t->cpu != cpu)
		w->stats.migrations++;
	t->cpu = (int)cpu;
	w->cpus[cpu].incoming++;
	t->state = T_WAKING;
	t->gen++;
	w->stats.wakeups++;
	sim_heap_push(w, w->now + w->m.wakeup, EV_WAKE, t->id, t->gen);
}

void sim_arrive(struct lb_sim_world *w, struct sim_thread *t)
{
	unsigned cpu = (unsigned)t->cpu;
	struct sim_cpu *c = &w->cpus[cpu];
	c->incoming--;
	renormalise(w, t, cpu);
	/* CFS's sleeper credit: at most half a latency period behind. */
	uint64_t credit = w->m.sched_latency / 2;
	if (c->min_vruntime > credit && t->vruntime < c->min_vruntime - credit)
		t->vruntime = c->min_vruntime - credit;
	sim_enqueue(w, t, cpu);
	sim_check_preempt(w, cpu, t);
}

/* The running thread leaves its CPU to sleep (the caller switches out). */
void sim_block(struct lb_sim_world *w, struct sim_thread *t)
{
	unsigned cpu = (unsigned)t->cpu;
	sim_account(w, t);
	w->cpus[cpu].curr = NULL;
	t->state = T_BLOCKED;
	t->need_resched = false; /* it gives up its CPU: schedule() clears the flag */
	t->doing = D_NONE;
	t->gen++;
	sim_schedule(w, cpu);
}

/* A thread's priority changed (boost, unboost, class): its place in a
 * queue, and who should run on its CPU. */
void sim_reprioritise(struct lb_sim_world *w, struct sim_thread *t)
{
	struct sim_cpu *c = &w->cpus[t->cpu];
	switch (t->state) {
	case T_RUNNABLE:
		sim_dequeue(w, t);
		sim_enqueue(w, t, (unsigned)t->cpu);
		if (c->curr && should_preempt(w, c, t))
			resched(w, (unsigned)t->cpu);
		break;
	case T_RUNNING:
		if (c->rq && should_preempt(w, c, c->rq))
			resched(w, (unsigned)t->cpu);
		break;
	case T_BLOCKED:
		if (t->futex_addr)
			sim_futex_requeue(w, t);
		break;
	default:
		break;  /* waking: placed by priority when it arrives */
	}
}
