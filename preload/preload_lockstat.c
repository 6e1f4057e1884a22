/* SPDX-License-Identifier: MIT */
/*
 * preload_lockstat.c - the kernel lockstat's per-lock bookkeeping, for
 * LOCKBENCH_STATS runs (doc/preload.md, "Columns and where they come from").
 *
 * The kernel (kernel/locking/lockdep.c, v6.x: __lock_contended and
 * __lock_acquired) keeps per class: the first LOCKSTAT_POINTS (4) distinct
 * call sites of waiters (contention points) and of the holders they waited
 * for (contending points: lock->ip, the site of the holder's acquisition),
 * each with a count; con-bounces (the waiter runs on another CPU than the
 * lock's last acquirer) and acq-bounces (an acquisition on another CPU than
 * the last one).  We keep the same per lock and sum per class at exit.
 * Beside them: mutrace's owner changes (an acquisition by another thread
 * than the previous owner) and its realtime flag (a SCHED_FIFO/RR thread
 * took the lock), and jemalloc-style spin/sleep resolution of each wait:
 * a wait that made this thread switch out voluntarily (getrusage's
 * ru_nvcsw grew: a futex sleep, a yield that switched) slept; any other
 * contended acquisition was resolved by spinning.
 *
 * Every field of struct lbp_lockstat is written only by the lock's owner
 * (relaxed load + store, no locked instruction); waiters only read
 * holder_ip, owner_tid and last_cpu, racily, as the kernel's lockstat reads
 * lock->ip and lock->cpu of a lock it does not hold.  The exit snapshot
 * and the wait-chain dump read everything racily too.
 */
#include "preload.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline void lbp_add(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
			      memory_order_relaxed);
}

static inline void lbp_min(_Atomic uint64_t *c, uint64_t v)
{
	if (v < atomic_load_explicit(c, memory_order_relaxed))
		atomic_store_explicit(c, v, memory_order_relaxed);
}

static long lbp_nvcsw(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nvcsw : 0;
}

void lbp_thread_sample(struct lbp_thread *t)
{
	atomic_store_explicit(&t->tid, (uint32_t)syscall(SYS_gettid), memory_order_relaxed);
	int policy = sched_getscheduler(0);
	atomic_store_explicit(&t->rt, policy == SCHED_FIFO || policy == SCHED_RR,
			      memory_order_relaxed);
}

void lbp_lockstat_init(struct lbp_lock *l)
{
	struct lbp_lockstat *ls = lbp_lock_lockstat(l);
	atomic_store_explicit(&ls->min_wait_ns, UINT64_MAX, memory_order_relaxed);
	atomic_store_explicit(&ls->min_hold_ns, UINT64_MAX, memory_order_relaxed);
	atomic_store_explicit(&ls->last_cpu, -1, memory_order_relaxed);
}

/*
 * The kernel's lock_point(): the slot of ip among the first LBP_POINTS
 * distinct ones, taking the first empty slot for a new ip; LBP_POINTS when
 * all are taken by others (then that wait is not counted in any point, as
 * in the kernel).
 */
static unsigned int lbp_point(struct lbp_points *p, const void *ip)
{
	unsigned int i;
	for (i = 0; i < LBP_POINTS; i++) {
		const void *cur = atomic_load_explicit(&p->ip[i], memory_order_relaxed);
		if (!cur) {
			atomic_store_explicit(&p->ip[i], ip, memory_order_relaxed);
			break;
		}
		if (cur == ip)
			break;
	}
	return i;
}

static void lbp_point_count(struct lbp_points *p, const void *ip)
{
	if (!ip)
		return;
	unsigned int i = lbp_point(p, ip);
	if (i < LBP_POINTS)
		lbp_add(&p->count[i], 1);
}

void lbp_lockstat_wait_begin(struct lbp_lock *l, struct lbp_thread *self,
			     struct lbp_contention *c, uint64_t t0)
{
	struct lbp_lockstat *ls = lbp_lock_lockstat(l);
	c->t0 = t0;
	c->holder_ip = atomic_load_explicit(&ls->holder_ip, memory_order_relaxed);
	int last = atomic_load_explicit(&ls->last_cpu, memory_order_relaxed);
	c->bounced = last >= 0 && last != sched_getcpu();
	c->nvcsw = lbp_nvcsw();
	/* A wait is long anyway: look at the scheduling class again, so a
	 * thread made SCHED_FIFO after its first lock call is seen. */
	int policy = sched_getscheduler(0);
	atomic_store_explicit(&self->rt, policy == SCHED_FIFO || policy == SCHED_RR,
			      memory_order_relaxed);
	atomic_store_explicit(&self->wait_since_ns, t0, memory_order_relaxed);
	atomic_store_explicit(&self->waiting_on, l, memory_order_relaxed);
}

void lbp_lockstat_wait_end(struct lbp_thread *self)
{
	atomic_store_explicit(&self->waiting_on, NULL, memory_order_relaxed);
}

void lbp_lockstat_acquired(struct lbp_lock *l, struct lbp_thread *self, const void *site,
			   const struct lbp_contention *c, uint64_t wait_ns)
{
	struct lbp_lockstat *ls = lbp_lock_lockstat(l);
	uint32_t tid = atomic_load_explicit(&self->tid, memory_order_relaxed);
	int cpu = sched_getcpu();
	if (atomic_load_explicit(&ls->last_owner_tid, memory_order_relaxed) != tid) {
		/* The very first acquisition is no change of owner (mutrace). */
		if (atomic_load_explicit(&ls->last_owner_tid, memory_order_relaxed))
			lbp_add(&ls->owner_changes, 1);
		atomic_store_explicit(&ls->last_owner_tid, tid, memory_order_relaxed);
	}
	atomic_store_explicit(&ls->owner_tid, tid, memory_order_relaxed);
	if (atomic_load_explicit(&self->rt, memory_order_relaxed))
		atomic_store_explicit(&ls->rt, 1, memory_order_relaxed);
	int last = atomic_load_explicit(&ls->last_cpu, memory_order_relaxed);
	if (last >= 0 && last != cpu)
		lbp_add(&ls->acq_bounces, 1);
	atomic_store_explicit(&ls->last_cpu, cpu, memory_order_relaxed);
	if (c) {
		lbp_add(lbp_nvcsw() > c->nvcsw ? &ls->slept : &ls->spin_resolved, 1);
		if (c->bounced)
			lbp_add(&ls->con_bounces, 1);
		lbp_min(&ls->min_wait_ns, wait_ns);
		lbp_point_count(&ls->contention, site);
		lbp_point_count(&ls->contending, c->holder_ip);
	}
	/* Our own re-locks (cond waits) have no site: keep the last one. */
	if (site)
		atomic_store_explicit(&ls->holder_ip, site, memory_order_relaxed);
}

void lbp_lockstat_released(struct lbp_lock *l, uint64_t held_ns)
{
	struct lbp_lockstat *ls = lbp_lock_lockstat(l);
	lbp_min(&ls->min_hold_ns, held_ns);
	atomic_store_explicit(&ls->owner_tid, 0, memory_order_relaxed);
}
