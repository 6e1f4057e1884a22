/* SPDX-License-Identifier: MIT */
/* raw_section.c - non-preemptible list_lock sections emulated (raw_section.h). */
#include "raw_section.h"
#include "lb_futex.h"
#include "lb_time.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RLX memory_order_relaxed
#define SC memory_order_seq_cst

/* t->boost */
#define BOOST_NONE    0u
#define BOOST_PENDING 1u /* a booster is between its claim and its system call */
#define BOOST_ON      2u

bool lb_raw_lock_is_raw(const struct lb_lock_ops *ops)
{
	/* PI locks never; nor the negative controls: one section per CPU
	 * would itself serialise most of what a broken lock lets overlap. */
	if (ops->flags & (LB_LOCK_F_PI | LB_LOCK_F_BUSTED | LB_LOCK_F_NOLOCK))
		return false;
	if (ops->flags & LB_LOCK_F_SPIN_ROLE)
		return true;
	if (ops->family && !strcmp(ops->family, "spin"))
		return true;
	return !(ops->flags & LB_LOCK_F_SLEEPS);
}

int lb_raw_sections_init(struct lb_raw_sections *rs, int boost_prio)
{
	memset(rs, 0, sizeof(*rs));
	long n = sysconf(_SC_NPROCESSORS_CONF);
	rs->ncpu = n < 1 ? 1 : (unsigned int)n;
	rs->marks = calloc(rs->ncpu, sizeof(*rs->marks));
	rs->slots = calloc(LB_RAW_MAX_THREADS, sizeof(*rs->slots));
	rs->boost_prio = boost_prio;
	if (!rs->marks || !rs->slots) {
		lb_raw_sections_destroy(rs);
		return ENOMEM;
	}
	return 0;
}

int lb_raw_sections_init_shared(struct lb_raw_sections *rs, int boost_prio,
				struct lb_arena *arena)
{
	memset(rs, 0, sizeof(*rs));
	long n = sysconf(_SC_NPROCESSORS_CONF);
	rs->ncpu = n < 1 ? 1 : (unsigned int)n;
	rs->shared = true;
	rs->boost_prio = boost_prio;
	rs->marks = lb_arena_alloc(arena, rs->ncpu * sizeof(*rs->marks), 64);
	rs->slots = lb_arena_alloc(arena, LB_RAW_MAX_THREADS * sizeof(*rs->slots), 64);
	return rs->marks && rs->slots ? 0 : ENOMEM; /* arena memory: nothing to free */
}

/* The marks' futex scope: shared when processes share the sections. */
static int futex_scope(const struct lb_raw_sections *rs)
{
	return rs->shared ? 0 : FUTEX_PRIVATE_FLAG;
}

void lb_raw_sections_destroy(struct lb_raw_sections *rs)
{
	if (!rs->shared) { /* else arena memory, unmapped with the arena */
		free(rs->marks);
		free((void *)rs->slots);
	}
	rs->marks = NULL;
	rs->slots = NULL;
}

void lb_raw_debug_no_proxy_boost(struct lb_raw_sections *rs, bool broken)
{
	rs->no_proxy_boost = broken;
}

void lb_raw_thread_resched(struct lb_raw_thread *t)
{
	struct sched_param sp;
	int policy = sched_getscheduler(0);
	atomic_store_explicit(&t->base_policy, policy < 0 ? SCHED_OTHER : policy, RLX);
	atomic_store_explicit(&t->base_prio, sched_getparam(0, &sp) == 0 ? sp.sched_priority : 0,
			      RLX);
}

int lb_raw_thread_init(struct lb_raw_sections *rs, struct lb_raw_thread *t)
{
	memset(t, 0, sizeof(*t));
	t->rs = rs;
	t->tid = (int)lb_gettid();
	t->slot = -1;
	atomic_init(&t->cpu, -1);
	lb_raw_thread_resched(t);
	for (int i = 0; i < LB_RAW_MAX_THREADS; i++) {
		struct lb_raw_thread *none = NULL;
		/* CAS: claim a free slot; release publishes the fields above to
		 * a scanner that loads the pointer (acquire in boost_cpu). */
		if (atomic_compare_exchange_strong_explicit(&rs->slots[i], &none, t,
							    memory_order_release, RLX)) {
			t->slot = i;
			uint32_t hw = atomic_load_explicit(&rs->nslots, RLX);
			/* CAS loop: raise the high-water mark. */
			while (hw < (uint32_t)i + 1 &&
			       !atomic_compare_exchange_weak_explicit(&rs->nslots, &hw,
								      (uint32_t)i + 1, RLX, RLX))
				;
			return 0;
		}
	}
	return ENOSPC;
}

void lb_raw_thread_fini(struct lb_raw_thread *t)
{
	struct lb_raw_sections *rs = t->rs;
	if (!rs)
		return;
	atomic_fetch_add_explicit(&rs->sections, t->sections, RLX);
	atomic_fetch_add_explicit(&rs->contended, t->contended_sections, RLX);
	atomic_fetch_add_explicit(&rs->cost_ns, (uint64_t)lb_cycles_to_ns(t->cost_cycles), RLX);
	atomic_fetch_add_explicit(&rs->wait_ns, (uint64_t)lb_cycles_to_ns(t->wait_cycles), RLX);
	atomic_fetch_add_explicit(&rs->boost_calls, t->boost_calls, RLX);
	atomic_fetch_add_explicit(&rs->boost_failures, t->boost_failures, RLX);
	atomic_fetch_add_explicit(&rs->entry_yields, t->entry_yields, RLX);
	t->sections = t->contended_sections = t->cost_cycles = t->wait_cycles = 0;
	t->boost_calls = t->boost_failures = t->entry_yields = 0;
	if (t->slot >= 0)
		atomic_store_explicit(&rs->slots[t->slot], NULL, RLX);
	t->slot = -1;
	t->rs = NULL;
}

static _Atomic uint32_t *mark_of(struct lb_raw_sections *rs, int cpu)
{
	return &rs->marks[(unsigned int)(cpu < 0 ? 0 : cpu) % rs->ncpu].word;
}

/* One sched_setscheduler on `tid`, counted on the caller's thread (or on
 * rs's totals when it has none, an RT thread's wait). */
static void set_sched(struct lb_raw_sections *rs, struct lb_raw_thread *by, int tid, int policy,
		      int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	/* ESRCH is no failure: the target ended its section and its thread
	 * exited between our claim and this call (nothing left to boost). */
	bool failed = sched_setscheduler(tid, policy, &sp) != 0 && errno != ESRCH;
	if (by) {
		by->boost_calls++;
		by->boost_failures += failed;
	} else {
		atomic_fetch_add_explicit(&rs->boost_calls, 1, RLX);
		if (failed)
			atomic_fetch_add_explicit(&rs->boost_failures, 1, RLX);
	}
}

/*
 * Run `target` at SCHED_FIFO prio while it is in its section.  The target
 * drops a boost itself when the section ends (lb_raw_exit); the claim
 * (BOOST_PENDING) and the in_section check are seq_cst against its
 * in_section store and boost exchange there, so either we see the section
 * over and boost nothing, or it sees our claim and undoes what we do.
 */
static void boost_thread(struct lb_raw_sections *rs, struct lb_raw_thread *by,
			 struct lb_raw_thread *target, int prio)
{
	/* A SCHED_FIFO/RR thread (the --load-fifo load, an RT thread) needs
	 * no boost: no normal thread preempts it, and equal-priority FIFO
	 * peers do not preempt each other. */
	int base = atomic_load_explicit(&target->base_policy, RLX);
	if (prio <= 0 || base == SCHED_FIFO || base == SCHED_RR)
		return;
	uint32_t none = BOOST_NONE;
	if (!atomic_compare_exchange_strong_explicit(&target->boost, &none, BOOST_PENDING, SC, RLX))
		return; /* boosted, or being boosted */
	if (!atomic_load_explicit(&target->in_section, SC)) {
		uint32_t p = BOOST_PENDING;
		atomic_compare_exchange_strong_explicit(&target->boost, &p, BOOST_NONE, RLX, RLX);
		return;
	}
	set_sched(rs, by, target->tid, SCHED_FIFO, prio);
	uint32_t p = BOOST_PENDING;
	if (atomic_compare_exchange_strong_explicit(&target->boost, &p, BOOST_ON, SC, RLX))
		return;
	/* Its section ended while we boosted (its exit reset the word).  In a
	 * new section already: that section keeps the boost; else undo it. */
	none = BOOST_NONE;
	if (atomic_load_explicit(&target->in_section, SC) &&
	    atomic_compare_exchange_strong_explicit(&target->boost, &none, BOOST_ON, SC, RLX))
		return;
	set_sched(rs, by, target->tid, base, atomic_load_explicit(&target->base_prio, RLX));
}

/* Boost every registered thread whose open section marked `cpu`. */
static void boost_cpu(struct lb_raw_sections *rs, struct lb_raw_thread *by, int cpu)
{
	uint32_t n = atomic_load_explicit(&rs->nslots, RLX);
	for (uint32_t i = 0; i < n; i++) {
		/* Acquire: pairs with the registration's release. */
		struct lb_raw_thread *t = atomic_load_explicit(&rs->slots[i], memory_order_acquire);
		if (t && t != by && atomic_load_explicit(&t->in_section, RLX) &&
		    atomic_load_explicit(&t->cpu, RLX) == cpu)
			boost_thread(rs, by, t, rs->boost_prio);
	}
}

/* Sleep until no section is open on `cpu` (the waiter bit set, the last
 * section's exit wakes us).  Returns the ns waited, 0 if none was open. */
static uint64_t wait_mark(struct lb_raw_sections *rs, struct lb_raw_thread *by, int cpu)
{
	_Atomic uint32_t *m = mark_of(rs, cpu);
	/* Acquire: pairs with unmark()'s release. */
	uint32_t v = atomic_load_explicit(m, memory_order_acquire);
	if (!(v & ~LB_RAW_WAITER))
		return 0;
	uint64_t t0 = lb_now_ns();
	boost_cpu(rs, by, cpu); /* its thread runs on and ends the section */
	/* Wait loop: set the waiter bit, sleep while the word is unchanged. */
	while (v & ~LB_RAW_WAITER) {
		if (!(v & LB_RAW_WAITER) &&
		    !atomic_compare_exchange_weak_explicit(m, &v, v | LB_RAW_WAITER,
							   memory_order_acquire,
							   memory_order_acquire))
			continue;
		lb_futex_wait_scoped(m, v | LB_RAW_WAITER, NULL, futex_scope(rs));
		v = atomic_load_explicit(m, memory_order_acquire);
	}
	return lb_now_ns() - t0;
}

static void unmark(struct lb_raw_sections *rs, int cpu)
{
	_Atomic uint32_t *m = mark_of(rs, cpu);
	/* Release: a waiter that sees the count drop sees the section over. */
	uint32_t old = atomic_fetch_sub_explicit(m, 1, memory_order_release);
	if ((old & ~LB_RAW_WAITER) == 1 && (old & LB_RAW_WAITER)) {
		/* The last section on this CPU, and someone waits for it. */
		atomic_fetch_and_explicit(m, ~LB_RAW_WAITER, RLX);
		lb_futex_wake_scoped(m, 1 << 30, futex_scope(rs));
	}
}

void lb_raw_enter(struct lb_raw_thread *t)
{
	struct lb_raw_sections *rs = t->rs;
	uint64_t c0 = lb_cycles();
	t->contended = false;
	for (;;) {
		int cpu = sched_getcpu();
		cpu = cpu < 0 ? 0 : cpu;
		_Atomic uint32_t *m = mark_of(rs, cpu);
		uint32_t free_word = 0;
		/* "preempt_disable": this CPU is ours until exit.  Relaxed: the
		 * mark only gates other sections' and RT threads' starts; the
		 * section's data is ordered by list_lock itself. */
		if (atomic_compare_exchange_strong_explicit(m, &free_word, 1, RLX, RLX)) {
			if (sched_getcpu() == cpu) {
				atomic_store_explicit(&t->cpu, cpu, RLX);
				/* seq_cst: against boost_thread's claim. */
				atomic_store_explicit(&t->in_section, 1, SC);
				break;
			}
			unmark(rs, cpu); /* moved between the read and the mark: again */
			continue;
		}
		/* Another section is open on this CPU: we preempted its thread
		 * (with preemption off it would have run on).  Boost it and
		 * wait for its end, as preempt-off would have made us. */
		t->entry_yields++;
		uint64_t w0 = lb_cycles();
		wait_mark(rs, t, cpu);
		t->wait_cycles += lb_cycles() - w0;
	}
	t->cost_cycles += lb_cycles() - c0;
}

void lb_raw_contended(struct lb_raw_thread *t)
{
	struct lb_raw_sections *rs = t->rs;
	uint64_t c0 = lb_cycles();
	t->contended = true;
	t->contended_sections++;
	/* seq_cst: against lb_raw_acquired's holder store and spinners load:
	 * either the holder sees us spinning, or we see it holding. */
	atomic_fetch_add_explicit(&rs->spinners, 1, SC);
	/* A spinner is not preempted by load threads (one below a holder, so
	 * a holder it boosts preempts it where the two share a CPU). */
	boost_thread(rs, t, t, rs->boost_prio - 1);
	struct lb_raw_thread *h = atomic_load_explicit(&rs->holder, SC);
	if (h && h != t && !rs->no_proxy_boost)
		boost_thread(rs, t, h, rs->boost_prio);
	t->cost_cycles += lb_cycles() - c0;
}

void lb_raw_acquired(struct lb_raw_thread *t, bool contended)
{
	struct lb_raw_sections *rs = t->rs;
	atomic_store_explicit(&rs->holder, t, SC);
	if (contended) {
		atomic_fetch_sub_explicit(&rs->spinners, 1, RLX);
	} else if (atomic_load_explicit(&rs->spinners, SC) && !rs->no_proxy_boost) {
		/* Others spin for the lock we took by trylock: we must not be
		 * preempted while we hold it. */
		uint64_t c0 = lb_cycles();
		boost_thread(rs, t, t, rs->boost_prio);
		t->cost_cycles += lb_cycles() - c0;
	}
}

void lb_raw_exit(struct lb_raw_thread *t)
{
	struct lb_raw_sections *rs = t->rs;
	uint64_t c0 = lb_cycles();
	struct lb_raw_thread *me = t;
	/* CAS: only if no successor has stored itself yet. */
	atomic_compare_exchange_strong_explicit(&rs->holder, &me, NULL, RLX, RLX);
	/* seq_cst: against boost_thread's claim and check. */
	atomic_store_explicit(&t->in_section, 0, SC);
	int cpu = atomic_load_explicit(&t->cpu, RLX);
	atomic_store_explicit(&t->cpu, -1, RLX);
	unmark(rs, cpu);
	t->sections++;
	/* "preempt_enable": a boost (ours, or one under way: undone again by
	 * its booster if it lands after this) ends here, and a pending
	 * preemption happens now, after the section. */
	if (atomic_exchange_explicit(&t->boost, BOOST_NONE, SC) != BOOST_NONE) {
		uint64_t w0 = lb_cycles();
		set_sched(rs, t, t->tid, atomic_load_explicit(&t->base_policy, RLX),
			  atomic_load_explicit(&t->base_prio, RLX));
		t->wait_cycles += lb_cycles() - w0; /* mostly the preemption it allows */
	}
	t->cost_cycles += lb_cycles() - c0;
}

uint64_t lb_raw_wait_cpu(struct lb_raw_sections *rs, int cpu)
{
	uint64_t ns = wait_mark(rs, NULL, cpu);
	if (!ns)
		return 0;
	atomic_fetch_add_explicit(&rs->rt_waits, 1, RLX);
	atomic_fetch_add_explicit(&rs->rt_wait_ns, ns, RLX);
	uint64_t cur = atomic_load_explicit(&rs->rt_wait_max_ns, RLX);
	/* CAS loop: raise the maximum. */
	while (ns > cur &&
	       !atomic_compare_exchange_weak_explicit(&rs->rt_wait_max_ns, &cur, ns, RLX, RLX))
		;
	return ns;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t lb_raw_calibrate(struct lb_raw_sections *rs, unsigned int n)
{
	uint64_t *v = n ? malloc(n * sizeof(*v)) : NULL;
	struct lb_raw_thread t;
	if (!v || lb_raw_thread_init(rs, &t)) {
		free(v);
		return 0;
	}
	/* The clock reads' own cost, taken off the figure. */
	for (unsigned int i = 0; i < n; i++) {
		uint64_t t0 = lb_now_ns();
		v[i] = lb_now_ns() - t0;
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	uint64_t clock_ns = v[n / 2];
	for (unsigned int i = 0; i < n; i++) {
		uint64_t t0 = lb_now_ns();
		lb_raw_enter(&t);
		lb_raw_acquired(&t, false);
		lb_raw_exit(&t);
		v[i] = lb_now_ns() - t0;
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	uint64_t med = v[n / 2] > clock_ns ? v[n / 2] - clock_ns : 0;
	free(v);
	/* Not folded: the calibration's sections are no part of the run. */
	atomic_store_explicit(&rs->slots[t.slot], NULL, RLX);
	return med;
}
