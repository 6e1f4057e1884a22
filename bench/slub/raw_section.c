/* SPDX-License-Identifier: MIT */
/* raw_section.c - non-preemptible list_lock sections emulated (raw_section.h). */
#include "raw_section.h"
#include "lb_futex.h"
#include "lb_time.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RLX memory_order_relaxed

bool lb_raw_lock_is_raw(const struct lb_lock_ops *ops)
{
	if (ops->flags & LB_LOCK_F_PI)
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
	rs->boost_prio = boost_prio;
	return rs->marks ? 0 : ENOMEM;
}

void lb_raw_sections_destroy(struct lb_raw_sections *rs)
{
	free(rs->marks);
	rs->marks = NULL;
}

void lb_raw_thread_init(struct lb_raw_thread *t)
{
	struct sched_param sp;
	memset(t, 0, sizeof(*t));
	t->cpu = -1;
	if (pthread_getschedparam(pthread_self(), &t->base_policy, &sp) == 0)
		t->base_prio = sp.sched_priority;
	else
		t->base_policy = SCHED_OTHER;
	if (pthread_getaffinity_np(pthread_self(), sizeof(t->affinity), &t->affinity))
		CPU_ZERO(&t->affinity);
}

static _Atomic uint32_t *mark_of(struct lb_raw_sections *rs, int cpu)
{
	return &rs->marks[(unsigned int)cpu % rs->ncpu].word;
}

void lb_raw_enter(struct lb_raw_sections *rs, struct lb_raw_thread *t)
{
	uint64_t c0 = lb_cycles();
	/* "preempt_disable": no load thread may preempt us from here on. */
	/* A SCHED_FIFO/RR thread needs no boost: no normal thread preempts it,
	 * and equal-priority FIFO peers do not preempt each other. */
	if (rs->boost_prio > 0 && t->base_policy != SCHED_FIFO && t->base_policy != SCHED_RR) {
		struct sched_param sp = { .sched_priority = rs->boost_prio };
		if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0)
			t->boosted = true;
		else
			t->boost_failures++;
	}
	int cpu = sched_getcpu();
	t->cpu = cpu < 0 ? 0 : cpu;
	/* "migrate_disable": only where there is a mask to restore and more
	 * than this CPU in it. */
	if (rs->boost_prio > 0 && CPU_COUNT(&t->affinity) > 1) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(t->cpu, &one);
		t->pinned = pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0;
	}
	/*
	 * Another section open on this CPU while we run means its thread is
	 * queued behind us at the same priority (a boosted thread that was
	 * moved here before it could pin).  Spinning on it would never end:
	 * yield (to the tail of our FIFO priority) until it is over.  Only we
	 * can open a section on this CPU now, so the check and the increment
	 * need not be one atomic step.
	 */
	_Atomic uint32_t *m = mark_of(rs, t->cpu);
	while ((t->boosted || t->pinned) && (atomic_load_explicit(m, RLX) & ~LB_RAW_WAITER)) {
		t->entry_yields++;
		sched_yield();
	}
	/* Relaxed: the mark only gates an RT thread's start; the section's
	 * data is ordered by list_lock itself. */
	atomic_fetch_add_explicit(m, 1, RLX);
	t->cost_cycles += lb_cycles() - c0;
}

void lb_raw_exit(struct lb_raw_sections *rs, struct lb_raw_thread *t)
{
	uint64_t c0 = lb_cycles();
	_Atomic uint32_t *m = mark_of(rs, t->cpu);
	/* Release: an RT thread that sees the count drop sees the section over. */
	uint32_t old = atomic_fetch_sub_explicit(m, 1, memory_order_release);
	if ((old & ~LB_RAW_WAITER) == 1 && (old & LB_RAW_WAITER)) {
		/* The last section on this CPU, and an RT thread waits for it. */
		atomic_fetch_and_explicit(m, ~LB_RAW_WAITER, RLX);
		lb_futex_wake(m, 1 << 30);
	}
	t->cpu = -1;
	t->sections++;
	if (t->pinned) {
		pthread_setaffinity_np(pthread_self(), sizeof(t->affinity), &t->affinity);
		t->pinned = false;
	}
	/* "preempt_enable": back to the thread's own scheduling; a pending
	 * preemption happens here, after the section. */
	if (t->boosted) {
		struct sched_param sp = { .sched_priority = t->base_prio };
		pthread_setschedparam(pthread_self(), t->base_policy, &sp);
		t->boosted = false;
	}
	t->cost_cycles += lb_cycles() - c0;
}

void lb_raw_thread_fold(struct lb_raw_sections *rs, struct lb_raw_thread *t)
{
	atomic_fetch_add_explicit(&rs->sections, t->sections, RLX);
	atomic_fetch_add_explicit(&rs->cost_ns, (uint64_t)lb_cycles_to_ns(t->cost_cycles), RLX);
	atomic_fetch_add_explicit(&rs->boost_failures, t->boost_failures, RLX);
	atomic_fetch_add_explicit(&rs->entry_yields, t->entry_yields, RLX);
	t->sections = t->cost_cycles = t->boost_failures = t->entry_yields = 0;
}

uint64_t lb_raw_wait_cpu(struct lb_raw_sections *rs, int cpu)
{
	_Atomic uint32_t *m = mark_of(rs, cpu < 0 ? 0 : cpu);
	/* Acquire: pairs with lb_raw_exit()'s release. */
	uint32_t v = atomic_load_explicit(m, memory_order_acquire);
	if (!(v & ~LB_RAW_WAITER))
		return 0;
	uint64_t t0 = lb_now_ns();
	/* Wait loop: set the waiter bit, sleep while the word is unchanged;
	 * the last section to end on this CPU clears the bit and wakes us. */
	while (v & ~LB_RAW_WAITER) {
		if (!(v & LB_RAW_WAITER) &&
		    !atomic_compare_exchange_weak_explicit(m, &v, v | LB_RAW_WAITER,
							   memory_order_acquire,
							   memory_order_acquire))
			continue;
		lb_futex_wait(m, v | LB_RAW_WAITER, NULL);
		v = atomic_load_explicit(m, memory_order_acquire);
	}
	uint64_t ns = lb_now_ns() - t0;
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
	if (!v)
		return 0;
	struct lb_raw_thread t;
	lb_raw_thread_init(&t);
	for (unsigned int i = 0; i < n; i++) {
		uint64_t t0 = lb_now_ns();
		lb_raw_enter(rs, &t);
		lb_raw_exit(rs, &t);
		v[i] = lb_now_ns() - t0;
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	uint64_t med = v[n / 2];
	free(v);
	return med;
}
