/* SPDX-License-Identifier: MIT */
/*
 * sim_thread.c - the calls a virtual thread makes (sim.h, "thread side"):
 * time, CPU, timed work, yield, sleep, class, affinity, PI hooks and
 * preempt-off regions.  Each one that costs time is a yield point.
 */
#include "sim_internal.h"

#include <string.h>

uint64_t lb_sim_now(void)
{
	return sim_world()->now;
}

unsigned lb_sim_getcpu(void)
{
	return (unsigned)sim_self()->cpu;
}

int lb_sim_self(void)
{
	return sim_self()->id;
}

void lb_sim_spend(uint64_t ns)
{
	sim_charge(sim_self(), ns);
}

/* A spin loop's pause: the machine file has no figure for it, so it is
 * charged as a hit on a held line (l1_hit, doc/sim.md). */
void lb_sim_pause(void)
{
	sim_charge(sim_self(), sim_world()->m.l1_hit);
}

const struct lb_sim_machine *lb_sim_machine_running(void)
{
	return &sim_world()->m;
}

_Atomic(unsigned int) *lb_sim_spin_cache(void)
{
	return &sim_world()->spin_relax_ps;
}

bool lb_sim_allowed(unsigned cpu)
{
	struct lb_sim_world *w = sim_world();
	return cpu < w->ncpus && sim_mask_has(sim_self()->allowed, cpu);
}

void lb_sim_yield(void)
{
	struct lb_sim_world *w = sim_world();
	struct sim_thread *t = sim_self();
	sim_charge(t, w->m.syscall);
	unsigned cpu = (unsigned)t->cpu;
	struct sim_thread *head = w->cpus[cpu].rq;
	if (!head)
		return;
	sim_account(w, t);
	/* Behind the leftmost fair thread (CFS's yield skips the caller). */
	if (sim_eff_prio(t) == 0 && sim_eff_prio(head) == 0 && t->vruntime <= head->vruntime)
		t->vruntime = head->vruntime + 1;
	w->cpus[cpu].curr = NULL;
	t->doing = D_NONE;
	t->gen++;
	sim_enqueue(w, t, cpu);
	sim_schedule(w, cpu);
	sim_switch_out(t);
}

void lb_sim_sleep(uint64_t ns)
{
	struct lb_sim_world *w = sim_world();
	struct sim_thread *t = sim_self();
	sim_charge(t, w->m.syscall);
	t->futex_addr = NULL;
	sim_block(w, t);
	sim_heap_push(w, w->now + ns, EV_TIMEOUT, t->id, t->gen);
	sim_switch_out(t);
}

void lb_sim_sleep_until(uint64_t when)
{
	struct lb_sim_world *w = sim_world();
	struct sim_thread *t = sim_self();
	sim_charge(t, w->m.syscall);
	if (when <= w->now)
		return;
	t->futex_addr = NULL;
	sim_block(w, t);
	sim_heap_push(w, when, EV_TIMEOUT, t->id, t->gen);
	sim_switch_out(t);
}

static void set_class(struct sim_thread *t, bool fifo, int prio)
{
	struct lb_sim_world *w = sim_world();
	if (t->state == T_RUNNING)
		sim_account(w, t);
	t->fifo = fifo;
	t->prio = fifo ? prio : 0;
	sim_reprioritise(w, t);
}

void lb_sim_set_fifo(int prio)
{
	set_class(sim_self(), true, prio < 1 ? 1 : prio > 99 ? 99 : prio);
	sim_charge(sim_self(), sim_world()->m.syscall);
}

void lb_sim_set_fair(void)
{
	set_class(sim_self(), false, 0);
	sim_charge(sim_self(), sim_world()->m.syscall);
}

int lb_sim_setscheduler(int tid, int prio)
{
	struct lb_sim_world *w = sim_world();
	struct sim_thread *t = sim_thread_of(w, tid);
	sim_charge(sim_self(), w->m.syscall);
	if (!t || t->state == T_DONE || prio < 0 || prio > 99)
		return -1;
	/* A waking thread is placed by priority when it arrives; a queued or
	 * running one is re-sorted now (sim_reprioritise). */
	set_class(t, prio > 0, prio);
	return 0;
}

int lb_sim_own_prio(void)
{
	const struct sim_thread *t = sim_self();
	return t->fifo ? t->prio : 0;
}

void lb_sim_set_affinity(const unsigned *cpus, unsigned n)
{
	struct lb_sim_world *w = sim_world();
	struct sim_thread *t = sim_self();
	uint64_t mask[SIM_MASK_WORDS] = {0};
	bool any = false;
	for (unsigned i = 0; i < n; i++)
		if (cpus[i] < w->ncpus) {
			mask[cpus[i] / 64] |= 1ull << (cpus[i] % 64);
			any = true;
		}
	sim_charge(t, w->m.syscall);
	if (!any)
		return;  /* the kernel refuses an empty set (EINVAL) */
	memcpy(t->allowed, mask, sizeof(mask));
	unsigned old = (unsigned)t->cpu;
	if (sim_mask_has(t->allowed, old))
		return;
	sim_account(w, t);
	w->cpus[old].curr = NULL;
	t->doing = D_NONE;
	t->gen++;
	unsigned cpu = sim_select_cpu(w, t);
	w->stats.migrations++;
	sim_enqueue(w, t, cpu);
	sim_schedule(w, old);
	sim_check_preempt(w, cpu, t);
	sim_switch_out(t);
}

void lb_sim_boost(int tid, int prio)
{
	struct lb_sim_world *w = sim_world();
	struct sim_thread *t = sim_thread_of(w, tid);
	if (!t || prio <= t->boost)
		return;
	if (t->state == T_RUNNING)
		sim_account(w, t);
	t->boost = prio > 99 ? 99 : prio;
	sim_reprioritise(w, t);
}

void lb_sim_unboost(int tid)
{
	struct lb_sim_world *w = sim_world();
	struct sim_thread *t = sim_thread_of(w, tid);
	if (!t || !t->boost)
		return;
	if (t->state == T_RUNNING)
		sim_account(w, t);
	t->boost = 0;
	sim_reprioritise(w, t);
}

void lb_sim_preempt_disable(void)
{
	sim_self()->preempt_count++;
}

void lb_sim_preempt_enable(void)
{
	struct sim_thread *t = sim_self();
	if (t->preempt_count > 0 && --t->preempt_count == 0 && t->need_resched)
		sim_charge(t, 0);  /* the yield point acts on the marked reschedule */
}

bool lb_sim_on_cpu(int tid)
{
	struct sim_thread *t = sim_thread_of(sim_world(), tid);
	return t && t->state == T_RUNNING;
}

bool lb_sim_need_resched(void)
{
	return sim_self()->need_resched;
}

uint64_t lb_sim_cpu_ns(void)
{
	struct sim_thread *t = sim_self();
	return t->run_ns + (sim_world()->now - t->exec_start); /* it runs: the open part too */
}
