/* SPDX-License-Identifier: MIT */
/*
 * mutex_v3.h - the kernel's v3.14 and v3.15 mutex generations (lockbench's
 * mutex-v3.14 and mutex-v3.15, the PRE and POST of the AIM7 result in the
 * "locking: mutex adaptive spinning tweaks and qrwlock" thread, Feb 2014),
 * on the same lb_mutex_t and thread record as mutex.h, which includes this
 * file.  Initialise with lb_mutex_init_gen(m, LB_MUTEX_GEN_V3_14 or
 * LB_MUTEX_GEN_V3_15, attr) and use only the lb_mutex_v3_* verbs on it.
 *
 * Facts from the kernel sources (kernel/locking/mutex.c and
 * kernel/locking/mcs_spinlock.h of v3.14; kernel/locking/mutex.c and
 * mcs_spinlock.c of v3.15), written anew here:
 *
 *  - The lock is `count` (1 free, 0 held, negative: held, waiters may
 *    sleep); `owner` is advisory, set after the count is taken and cleared
 *    before it is released, so there are owner-less windows on both sides.
 *    Here `v3_count` is the count and the owner word holds the owner's
 *    record, no flag bits.  Fast paths are x86's: lock decrements (1 -> 0
 *    took it), unlock increments (0 -> 1 done; anything else: slow path,
 *    which sets count = 1 and wakes the first waiter).
 *  - mutex_spin_on_owner spins while lock->owner is still the owner it
 *    started with, the owner is on a CPU and need_resched() is clear, and
 *    then returns `lock->owner == NULL`: a spinner that sees the lock
 *    change hands stops spinning and goes to sleep.  (v4.1 and later keep
 *    spinning on the new owner: mutex.h's current generation.)
 *  - v3.14: each spin attempt takes the MCS lock (mcs_spin_lock, no way
 *    out while queued), spins on the owner and tries the count while
 *    holding it, and drops it (after a win, after setting the owner).
 *    mutex_can_spin_on_owner: spin only if the owner is on a CPU.  Unlock
 *    with waiters: wait_lock (a ticket spinlock on x86), count = 1, wake
 *    the first waiter, drop wait_lock.
 *  - v3.15 (the series of the thread, patches 1-6): the spinner queues
 *    once on the cancellable OSQ (osq_lock leaves the queue on
 *    need_resched), does not start when need_resched is set
 *    (mutex_can_spin_on_owner), and unlock sets count = 1 *before* taking
 *    wait_lock.  Patch 6/8, "mutex: Extra reschedule point": a locker that
 *    fell out of the spin path calls schedule() if need_resched() before
 *    it takes wait_lock (the `slowpath:` label), so it is not scheduled
 *    out right after it obtained the mutex.
 *  - A woken waiter retries under wait_lock: xchg(count, -1) == 1 takes it
 *    (only while count >= 0, "no waiter shown"); the last waiter out sets
 *    count = 0.  No handoff, no waiter spinning.
 *
 * "Owner on a CPU" and "need_resched" are lb_sched_hooks.h's hooks (their
 * userspace stand-ins, or a simulator's truth); nothing here has a time
 * budget.  Where userspace must differ, and why:
 *
 *  - The kernel spins with preemption off; here a spinner, an MCS waiter
 *    or a wait_lock holder can be preempted.  A queued MCS waiter (v3.14)
 *    still never leaves its queue, but when need_resched says another task
 *    wants its CPU it yields it (sched_yield) and stays queued: its
 *    predecessor may be the task that wants it.  wait_lock waiters yield
 *    after LB_MUTEX_WAIT_LOCK_SPIN_NS, as mutex.h's.
 *  - The kernel wakes under wait_lock; here the futex wake is issued right
 *    after dropping it (mutex.h's rule), the waiter's state set under it.
 *  - Patch 6/8's schedule() is sched_yield(): the spinner is runnable.
 *  - A timed lock (not in those kernels) gives up past its deadline; a
 *    waiter that leaves while the lock is free wakes the next one.
 *
 * Memory ordering:
 *
 *   | acquire side                                | pairs with                   |
 *   |---------------------------------------------|------------------------------|
 *   | count decrement / CAS / xchg (acquire)      | count increment or store     |
 *   |                                             | (release) in unlock          |
 *   | ticket serving load (acquire)               | serving store (release)      |
 *   | MCS/OSQ node->locked load (acquire)         | store (release) in unlock    |
 *   | waiter state load (acquire) after futex     | CAS (release) by the waker   |
 *   | owner word load (acquire) before reading    | owner word store (release)   |
 *   | the owner's record                          | by the new owner             |
 *
 * The owner word is advisory: it never decides who holds the lock, only
 * how long a spinner spins.  Setting it is a release store and a spinner
 * that will read the owner's record loads it with acquire: the pair
 * publishes the record (its lb_sched_task) to the spinner, as the kernel's
 * task_struct is published before its address is.  Clearing it and the
 * re-reads that only compare it are relaxed.
 */
#ifndef LB_MUTEX_V3_H
#define LB_MUTEX_V3_H

#include "mutex.h"

/*
 * The kernel runs __mutex_lock_common with preemption off (preempt_disable
 * at entry, schedule_preempt_disabled to sleep, preempt_enable on return)
 * and the unlock's wait_lock section likewise: its spinners cannot be
 * preempted, a tick only sets need_resched, which ends their spin.  A
 * userspace thread cannot, so natively these are nothing; a simulator
 * that can defines them (bench/sim/sim_interpose.h).
 */
#ifndef LB_MUTEX_V3_PREEMPT_OFF
#define LB_MUTEX_V3_PREEMPT_OFF() ((void)0)
#define LB_MUTEX_V3_PREEMPT_ON() ((void)0)
#endif

/* ---- wait_lock: a ticket spinlock, as v3.14/v3.15 x86 --------------------- */

/* wait_lock's spin: true when this missed look should yield instead of
 * pausing (every `every`-th; the period is computed at the first miss). */
static inline bool lb_mutex_v3__wait_lock_yields(uint32_t *spins, uint32_t *every)
{
	if (*every == 0)
		*every = lb_spin_loops(LB_MUTEX_WAIT_LOCK_SPIN_NS);
	return ++*spins % *every == 0;
}

static inline void lb_mutex_v3__wait_lock(lb_mutex_t *m)
{
	/* Take a ticket; relaxed: the acquire is the load that sees our turn. */
	uint32_t me = atomic_fetch_add_explicit(&m->v3_wait_next, 1, memory_order_relaxed);
	uint32_t spins = 0, every = 0, serving;
	/* Spin loop until served; acquire pairs with the release in
	 * wait_unlock.  A holder (or a ticket ahead of ours) may be preempted
	 * here, never in the kernel: yield now and then to let it run. */
	for (;;) {
		lb_cond_load_acquire_until(serving, &m->v3_wait_serving, serving == me,
					   lb_mutex_v3__wait_lock_yields(&spins, &every));
		if (serving == me)
			break;
		sched_yield();
	}
}

static inline void lb_mutex_v3__wait_unlock(lb_mutex_t *m)
{
	/* Only the holder writes serving.  Release publishes the list updates. */
	lb_store_release(&m->v3_wait_serving, lb_load_relaxed(&m->v3_wait_serving) + 1);
}

/* wait_lock held.  Append / unlink w (FIFO); the count, not a flag, says
 * whether an unlock must wake. */
static inline void lb_mutex_v3__enqueue(lb_mutex_t *m, struct lb_mutex_waiter *w)
{
	w->since = 0;
	lb_mutex__list_append(m, w);
}

static inline void lb_mutex_v3__dequeue(lb_mutex_t *m, struct lb_mutex_waiter *w)
{
	lb_mutex__list_unlink(m, w);
}

/* ---- the count ------------------------------------------------------------- */

/* The spinner's and trylock's try: 1 -> 0.  Acquire pairs with the release
 * of the unlock that made it 1. */
static inline bool lb_mutex_v3__try_count(lb_mutex_t *m)
{
	int32_t one = 1;
	return lb_load_relaxed(&m->v3_count) == 1 &&
	       atomic_compare_exchange_strong_explicit(&m->v3_count, &one, 0, memory_order_acquire,
						       memory_order_relaxed);
}

/* ---- the spinner queues ------------------------------------------------------ */

/*
 * v3.14 mcs_spin_lock: queue, then wait to be passed the head, with no way
 * out.  Spin loop on our own node (only the predecessor writes it); acquire
 * pairs with the release in lb_mutex__osq_unlock.  When need_resched says
 * another task wants this CPU we yield it but stay queued (see the header).
 */
static inline void lb_mutex_v3__mcs_lock(lb_mutex_t *m, struct lb_mutex_osq_node *node,
					 struct lb_sched_spin *s)
{
	uint32_t locked;
	if (lb_mutex__osq_join(m, node) == NULL)
		return;
	for (;;) {
		lb_cond_load_acquire_until(locked, &node->locked, locked != 0,
					   lb_sched_need_resched(s));
		if (locked)
			break;
		sched_yield();
	}
}

/*
 * v3.15 osq_lock: queue; true once we are the head, false if need_resched
 * made us leave the queue (steps A, B, C of the kernel's unqueue, which
 * mutex.h's lb_mutex__osq_lock also takes; there a budget ends the wait).
 */
static inline bool lb_mutex_v3__osq_lock(lb_mutex_t *m, struct lb_mutex_osq_node *node,
					 struct lb_sched_spin *s)
{
	struct lb_mutex_osq_node *prev = lb_mutex__osq_join(m, node);
	uint32_t locked;
	if (prev == NULL)
		return true;
	/* Spin loop on our own node, until need_resched; acquire pairs with
	 * the release in osq_unlock. */
	lb_cond_load_acquire_until(locked, &node->locked, locked != 0, lb_sched_need_resched(s));
	if (!locked)
		return lb_mutex__osq_unqueue(m, node, prev);
	return true;
}

/* ---- spinning on the owner --------------------------------------------------- */

/*
 * v3.14/v3.15 mutex_spin_on_owner: spin while the lock still names owner,
 * the owner runs and we need not reschedule; true only if the lock has no
 * owner now.  An owner change returns false: the caller sleeps.
 */
static inline bool lb_mutex_v3__spin_on_owner(lb_mutex_t *m, uintptr_t owner,
					      struct lb_sched_spin *s)
{
	/* Spin loop, ended by the hooks or an owner change.  Relaxed loads:
	 * the owner word is advisory, as the kernel's ACCESS_ONCE read.  A
	 * look is LB_MUTEX_POLL_HOOK, the owner word and the hooks (the
	 * kernel's v3.14 loop is a plain one too: owner_running reads the
	 * owner's on_cpu, a second line), so only the wait is lb_cond_load's,
	 * on the owner word (the unlock's release store ends it). */
	for (;;) {
		LB_MUTEX_POLL_HOOK(m);
		if (lb_load_relaxed(&m->owner) != owner)
			break;
		if (!lb_sched_owner_running(&lb_mutex__task(owner)->sched) ||
		    lb_sched_need_resched(s))
			break;
		lb_cond_load_pause(&m->owner);
	}
	return lb_load_relaxed(&m->owner) == 0;
}

/* mutex_can_spin_on_owner: v3.15 not when need_resched; both only if the
 * owner (if any) is on a CPU. */
static inline bool lb_mutex_v3__can_spin(lb_mutex_t *m, struct lb_sched_spin *s)
{
	if (m->gen == LB_MUTEX_GEN_V3_15 && lb_sched_need_resched(s))
		return false;
	/* Acquire: we read the owner's record (see the header). */
	uintptr_t owner = lb_load_acquire(&m->owner);
	return owner == 0 || lb_sched_owner_running(&lb_mutex__task(owner)->sched);
}

/*
 * One attempt of the spin loop: look at the owner, spin on it, try the
 * count.  1 took it (owner set), 0 try again, -1 stop (go to sleep).
 */
static inline int lb_mutex_v3__spin_attempt(lb_mutex_t *m, lb_mutex_ctx_t *t,
					    struct lb_sched_spin *s)
{
	/* Acquire: spin_on_owner reads the owner's record (see the header). */
	uintptr_t owner = lb_load_acquire(&m->owner);
	if (owner != 0 && !lb_mutex_v3__spin_on_owner(m, owner, s))
		return -1;
	if (lb_mutex_v3__try_count(m)) {
		lb_store_release(&m->owner, (uintptr_t)t); /* mutex_set_owner */
		return 1;
	}
	/* No owner but held: it is being taken or released (an owner-less
	 * window); the kernel tries again unless it should reschedule. */
	if (owner == 0 && lb_sched_need_resched(s))
		return -1;
	return 0;
}

/*
 * The v3.14 / v3.15 optimistic spin: 1 took it, 0 did not spin, -1 spun and
 * stopped.  The spinner counts in `spinners` from entry to exit, queued or
 * not (the crowding stand-in and the running-contenders gauge read it).
 */
static inline int lb_mutex_v3__optimistic_spin(lb_mutex_t *m, lb_mutex_ctx_t *t)
{
	const bool v3_14 = m->gen == LB_MUTEX_GEN_V3_14;
	struct lb_sched_spin s;
	int ret = -1;

	if (m->spin_relax == 0)
		return 0; /* nospin, or one CPU */
	atomic_fetch_add_explicit(&m->spinners, 1, memory_order_relaxed);
	lb_sched_spin_start(&s, &m->spinners, m->ncpus);
	if (!lb_mutex_v3__can_spin(m, &s)) {
		ret = 0;
		goto out;
	}
	if (!v3_14 && !lb_mutex_v3__osq_lock(m, &t->osq, &s))
		goto out;
	/* Spin loop, ended by spin_attempt (the hooks or an owner change).
	 * Each pass is a whole attempt (queue, spin on the owner, trylock),
	 * not a look at one word, so only the wait between passes is
	 * lb_cond_load's: a pass failed on an owner-less held count, which
	 * the owner word's next store (mutex_set_owner) ends. */
	for (;;) {
		if (v3_14)
			lb_mutex_v3__mcs_lock(m, &t->osq, &s);
		int r = lb_mutex_v3__spin_attempt(m, t, &s);
		if (v3_14)
			lb_mutex__osq_unlock(m, &t->osq);
		if (r != 0) {
			ret = r;
			break;
		}
		lb_cond_load_pause(&m->owner); /* between attempts, as the kernel's loop */
	}
	if (!v3_14)
		lb_mutex__osq_unlock(m, &t->osq);
out:
	atomic_fetch_sub_explicit(&m->spinners, 1, memory_order_relaxed);
	/* v3.15 patch 6/8: fell out of the spin path and should reschedule:
	 * do it now, before taking wait_lock and perhaps the mutex. */
	if (ret <= 0 && !v3_14 && lb_sched_need_resched(&s))
		sched_yield();
	return ret;
}

/* ---- slow paths ---------------------------------------------------------------- */

/* wait_lock held, w queued.  Take the count as a waiter (xchg to -1 while
 * no waiter is shown, v3.14's MUTEX_SHOW_NO_WAITER), or sleep: 0 ours,
 * ETIMEDOUT, or EAGAIN after sleeping (wait_lock held again). */
static inline int lb_mutex_v3__waiter_turn(lb_mutex_t *m, struct lb_mutex_waiter *w,
					   const struct timespec *abs, uint32_t *nsleeps)
{
	/* Acquire pairs with the release of the unlock that made it 1. */
	if (lb_load_relaxed(&m->v3_count) >= 0 &&
	    atomic_exchange_explicit(&m->v3_count, -1, memory_order_acquire) == 1)
		return 0;
	if (abs && lb_mutex__expired(abs))
		return ETIMEDOUT;
	lb_store_relaxed(&w->state, LB_MUTEX__QUEUED);
	lb_mutex_v3__wait_unlock(m);
	LB_MUTEX_V3_PREEMPT_ON(); /* schedule_preempt_disabled */
	lb_mutex__sleep(m, w, abs, nsleeps);
	LB_MUTEX_V3_PREEMPT_OFF();
	lb_mutex_v3__wait_lock(m);
	return EAGAIN;
}

LB_SLOWPATH int lb_mutex_v3__lock_slow(lb_mutex_t *m, lb_mutex_ctx_t *t,
				       const struct timespec *abs)
{
	struct lb_mutex_waiter *w = &t->waiter, *next = NULL;
	uint32_t nsleeps = 0;
	bool need_wake = false;
	int ret;

	if (m->gen == LB_MUTEX_GEN_CURRENT)
		lb_mutex__misuse("the current generation takes the lb_mutex_* verbs");
	if (lb_load_relaxed(&m->owner) == (uintptr_t)t)
		lb_mutex__misuse("lock of a mutex this thread already holds");
	LB_MUTEX_V3_PREEMPT_OFF();
	int r = lb_mutex_v3__optimistic_spin(m, t);
	if (r > 0) {
		LB_MUTEX_COUNT(m, n_spin_won, 1);
		lb_mutex__gauge_acquired(m, t);
		LB_MUTEX_V3_PREEMPT_ON();
		return 0;
	}
	lb_mutex_v3__wait_lock(m);
	LB_MUTEX_COUNT(m, n_spin_gaveup, r < 0);
	/* Once more before queueing (no waiter shown: take it as 1 -> 0). */
	if (lb_load_relaxed(&m->v3_count) >= 0 &&
	    atomic_exchange_explicit(&m->v3_count, 0, memory_order_acquire) == 1) {
		ret = 0;
		goto acquired;
	}
	lb_mutex_v3__enqueue(m, w);
	/* Until we take it or time out; each turn may sleep. */
	while ((ret = lb_mutex_v3__waiter_turn(m, w, abs, &nsleeps)) == EAGAIN)
		;
	lb_mutex_v3__dequeue(m, w);
	lb_store_relaxed(&w->state, LB_MUTEX__AWAKE);
	next = lb_load_relaxed(&m->wait_head);
	if (ret == 0 && next == NULL)
		lb_store_relaxed(&m->v3_count, 0); /* no waiters left: 0, not -1 */
	/* Timing out after a wake meant for us would strand the next waiter
	 * beside a free lock: pass the wake on. */
	if (ret != 0 && next && lb_load_relaxed(&m->v3_count) == 1)
		need_wake = lb_mutex__wake_waiter(next, false);
	LB_MUTEX_COUNT(m, n_sleeps, nsleeps);
	LB_MUTEX_COUNT(m, n_timeouts, ret != 0);
	LB_MUTEX_COUNT(m, n_wakes, need_wake);
acquired:
	if (ret == 0) {
		lb_store_release(&m->owner, (uintptr_t)t); /* mutex_set_owner */
		lb_mutex__gauge_acquired(m, t);
	}
	lb_mutex_v3__wait_unlock(m);
	LB_MUTEX_V3_PREEMPT_ON();
	if (need_wake)
		lb_futex_wake_scoped(&next->state, 1, m->futex_scope);
	return ret;
}

/*
 * Unlock with waiters possible (the increment did not go 0 -> 1): count = 1
 * and wake the first waiter.  v3.14 sets the count under wait_lock, so the
 * mutex stays taken, owner-less, while the unlocker waits for its ticket;
 * v3.15 sets it first ("unlock the mutex without the wait_lock").
 */
LB_SLOWPATH void lb_mutex_v3__unlock_slow(lb_mutex_t *m)
{
	const bool v3_14 = m->gen == LB_MUTEX_GEN_V3_14;

	/* Release publishes the critical section to the next taker. */
	if (!v3_14)
		lb_store_release(&m->v3_count, 1);
	LB_MUTEX_V3_PREEMPT_OFF(); /* spin_lock_mutex(&lock->wait_lock) */
	lb_mutex_v3__wait_lock(m);
	if (v3_14)
		lb_store_release(&m->v3_count, 1);
	struct lb_mutex_waiter *first = lb_load_relaxed(&m->wait_head);
	bool need_wake = first && lb_mutex__wake_waiter(first, false);
	LB_MUTEX_COUNT(m, n_wakes, need_wake);
	lb_mutex_v3__wait_unlock(m);
	LB_MUTEX_V3_PREEMPT_ON();
	if (need_wake)
		lb_futex_wake_scoped(&first->state, 1, m->futex_scope);
}

/* ---- the verbs ------------------------------------------------------------------ */

static inline void lb_mutex_v3_lock(lb_mutex_t *m, lb_mutex_ctx_t *t)
{
	/* 1 -> 0 (x86's decrement).  Acquire pairs with the unlock's release. */
	if (LB_LIKELY(atomic_fetch_sub_explicit(&m->v3_count, 1, memory_order_acquire) == 1)) {
		/* mutex_set_owner, after; release publishes our record. */
		lb_store_release(&m->owner, (uintptr_t)t);
		LB_MUTEX_COUNT(m, n_fast, 1);              /* we hold it: no RMW */
		return;
	}
	LB_PROBE_CONTENTION_BEGIN(m, LB_CONTENTION_MUTEX);
	lb_mutex_v3__lock_slow(m, t, NULL);
	LB_PROBE_CONTENTION_END(m, 0);
}

/* Lock, giving up when abs (CLOCK_MONOTONIC) has passed: 0 or ETIMEDOUT. */
static inline int lb_mutex_v3_timedlock(lb_mutex_t *m, lb_mutex_ctx_t *t,
					const struct timespec *abs)
{
	/* As lb_mutex_v3_lock; acquire pairs with the unlock's release. */
	if (atomic_fetch_sub_explicit(&m->v3_count, 1, memory_order_acquire) == 1) {
		lb_store_release(&m->owner, (uintptr_t)t);
		return 0;
	}
	LB_PROBE_CONTENTION_BEGIN(m, LB_CONTENTION_MUTEX);
	int ret = lb_mutex_v3__lock_slow(m, t, abs);
	LB_PROBE_CONTENTION_END(m, ret);
	return ret;
}

static inline bool lb_mutex_v3_trylock(lb_mutex_t *m, lb_mutex_ctx_t *t)
{
	if (!lb_mutex_v3__try_count(m))
		return false;
	lb_store_release(&m->owner, (uintptr_t)t);
	return true;
}

static inline void lb_mutex_v3_unlock(lb_mutex_t *m, lb_mutex_ctx_t *t)
{
	if (lb_load_relaxed(&m->owner) != (uintptr_t)t)
		lb_mutex__misuse("unlock of a mutex this thread does not hold");
	/* mutex_clear_owner first: from here until the count says free,
	 * spinners see no owner on a taken lock.  Relaxed: advisory word. */
	lb_store_relaxed(&m->owner, 0);
	/* 0 -> 1.  Release publishes the critical section. */
	if (LB_LIKELY(atomic_fetch_add_explicit(&m->v3_count, 1, memory_order_release) == 0))
		return;
	lb_mutex_v3__unlock_slow(m);
}

/*
 * In a fork() child (one thread left): as lb_mutex_atfork_child, for a
 * v3.x mutex.  Taken (count != 1) stays taken, by self if self held it,
 * else by orphan; plain stores, single-threaded here.  pshared: a no-op.
 */
static inline void lb_mutex_v3_atfork_child(lb_mutex_t *m, lb_mutex_ctx_t *self,
					    lb_mutex_ctx_t *orphan)
{
	if (m->futex_scope != FUTEX_PRIVATE_FLAG)
		return;
	bool taken = lb_load_relaxed(&m->v3_count) != 1;
	uintptr_t owner = lb_load_relaxed(&m->owner);
	lb_store_relaxed(&m->v3_count, taken ? 0 : 1);
	lb_store_relaxed(&m->owner, !taken ? 0 : (uintptr_t)(owner == (uintptr_t)self ? self : orphan));
	lb_mutex__forget_contenders(m);
	if (self)
		lb_mutex_ctx_init(self);
}

#endif /* LB_MUTEX_V3_H */
