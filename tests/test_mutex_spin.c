/* SPDX-License-Identifier: MIT */
/*
 * test_mutex_spin.c - each mutex generation's spin on the owner, on scripted
 * schedules (issue 33), and the v3.14 unlock's owner-less window.
 *
 * The scheduler hooks (lb_sched_hooks.h) are replaced by scripted ones and
 * LB_MUTEX_POLL_HOOK runs the script at every poll of the owner word, so a
 * spin is driven step by step on one thread: "owner A holds; at poll 4 the
 * owner becomes B; at poll 10 it becomes NULL".  Expected:
 *
 *   owner A -> B     v3.14, v3.15: the spinner stops at the poll that sees
 *                    B and goes to sleep (mutex_spin_on_owner returns
 *                    lock->owner == NULL); current: keeps spinning on B
 *   owner -> NULL    every generation: the spinner takes the lock
 *   owner off CPU    v3.x: stops at once (the owner-running hook)
 *   need_resched     v3.x: stops at once
 *
 * The threaded cases use barriers on observable state (a waiter asleep, a
 * ticket taken), never a timing.
 */
#define LB_SCHED_HOOKS_OVERRIDE 1 /* the hooks below replace the stand-ins */
#include "lb_sched_hooks.h"

#include <stdatomic.h>
#include <stdbool.h>

/* ---- the script -------------------------------------------------------------- */

struct lb_mutex;
static void script_poll(struct lb_mutex *m);
#define LB_MUTEX_POLL_HOOK(m) script_poll(m)

static _Atomic int polls;           /* owner-word polls so far */
static _Atomic int resched_calls;   /* need_resched hook calls so far */
static _Atomic int owner_off_cpu;   /* the owner-running hook says false */
static _Atomic int resched_after;   /* need_resched says true from this call on; 0: never */

static bool lb_sched_owner_running(struct lb_sched_task *owner)
{
	(void)owner;
	return !atomic_load(&owner_off_cpu);
}

static bool lb_sched_need_resched(struct lb_sched_spin *s)
{
	(void)s;
	int n = atomic_fetch_add(&resched_calls, 1) + 1;
	int after = atomic_load(&resched_after);
	return after > 0 && n >= after;
}

#include "mutex.h"
#include "tap.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

static lb_mutex_ctx_t rec_a, rec_b, rec_t; /* owners A, B; the spinner T */

/* At poll `at`, the owner word becomes `to` (NULL: released, the count
 * free for a v3.x lock); at most two steps. */
static struct {
	int at;
	lb_mutex_ctx_t *to;
} steps[2];
static _Atomic int polls_after_change; /* polls that saw the first change's owner */

static void script_poll(struct lb_mutex *m)
{
	int n = atomic_fetch_add(&polls, 1) + 1;
	for (int i = 0; i < 2; i++) {
		if (steps[i].at != n)
			continue;
		atomic_store(&m->owner, (uintptr_t)steps[i].to);
		if (steps[i].to == NULL && m->gen != LB_MUTEX_GEN_CURRENT)
			atomic_store(&m->v3_count, 1);
	}
	if (steps[0].at && n > steps[0].at && (!steps[1].at || n < steps[1].at))
		atomic_fetch_add(&polls_after_change, 1);
}

static void script_reset(int at0, lb_mutex_ctx_t *to0, int at1, lb_mutex_ctx_t *to1)
{
	atomic_store(&polls, 0);
	atomic_store(&resched_calls, 0);
	atomic_store(&owner_off_cpu, 0);
	atomic_store(&resched_after, 0);
	atomic_store(&polls_after_change, 0);
	steps[0].at = at0, steps[0].to = to0;
	steps[1].at = at1, steps[1].to = to1;
}

static const char *gen_name(enum lb_mutex_gen g)
{
	return g == LB_MUTEX_GEN_V3_14 ? "v3.14" : g == LB_MUTEX_GEN_V3_15 ? "v3.15" : "current";
}

/* A lock of generation g held by A, nobody else queued: 8 CPUs, so the
 * current generation's crowding rule stays out of the way, and a budget of
 * 1 s, so its budget does not end the scripted spin. */
static void held_by_a(lb_mutex_t *m, enum lb_mutex_gen g)
{
	struct lb_mutex_attr a;
	memset(&a, 0, sizeof(a));
	a.ncpus = 8;
	a.spin_ns = 1000000000u;
	lb_mutex_init_gen(m, g, &a);
	atomic_store(&m->owner, (uintptr_t)&rec_a);
	if (g != LB_MUTEX_GEN_CURRENT)
		atomic_store(&m->v3_count, 0);
}

static int spin(lb_mutex_t *m)
{
	return m->gen == LB_MUTEX_GEN_CURRENT ? lb_mutex__optimistic_spin(m, &rec_t)
					      : lb_mutex_v3__optimistic_spin(m, &rec_t);
}

/* ---- 1. the owner changes hands, then the lock comes free --------------------- */

static void test_owner_change(enum lb_mutex_gen g)
{
	lb_mutex_t m;
	const char *n = gen_name(g);
	held_by_a(&m, g);
	script_reset(4, &rec_b, 10, NULL);
	int r = spin(&m);
	uintptr_t owner = atomic_load(&m.owner);
	if (g == LB_MUTEX_GEN_CURRENT) {
		tap_ok(r == 1 && owner == (uintptr_t)&rec_t,
		       "%s: owner A -> B -> NULL: the spinner keeps spinning on B and takes "
		       "the lock (spin %d, owner is T: %d)", n, r, owner == (uintptr_t)&rec_t);
		tap_ok(atomic_load(&polls_after_change) >= 5,
		       "%s: it polled B's tenure %d times (>= 5: polls 5..9)", n,
		       atomic_load(&polls_after_change));
	} else {
		tap_ok(r == -1 && owner == (uintptr_t)&rec_b && atomic_load(&m.v3_count) == 0,
		       "%s: owner A -> B: the spinner stops (spin %d, want -1: to the wait "
		       "list) and leaves the lock to B (owner is B: %d)", n, r,
		       owner == (uintptr_t)&rec_b);
		tap_ok(atomic_load(&polls) == 4 && atomic_load(&polls_after_change) == 0,
		       "%s: it stopped at the poll that saw B (%d polls, want 4)", n,
		       atomic_load(&polls));
	}
}

static void test_owner_released(enum lb_mutex_gen g)
{
	lb_mutex_t m;
	const char *n = gen_name(g);
	held_by_a(&m, g);
	script_reset(4, NULL, 0, NULL);
	int r = spin(&m);
	tap_ok(r == 1 && atomic_load(&m.owner) == (uintptr_t)&rec_t,
	       "%s: owner A -> NULL: the spinner takes the lock (spin %d after %d polls)", n, r,
	       atomic_load(&polls));
}

/* ---- 2. the hooks end a v3.x spin --------------------------------------------- */

static void test_hooks_stop(enum lb_mutex_gen g)
{
	lb_mutex_t m;
	const char *n = gen_name(g);

	held_by_a(&m, g);
	script_reset(0, NULL, 0, NULL);
	atomic_store(&owner_off_cpu, 1);
	int r = spin(&m);
	tap_ok(r <= 0 && atomic_load(&m.owner) == (uintptr_t)&rec_a && atomic_load(&polls) <= 1,
	       "%s: owner off the CPU: no spinning (spin %d, %d polls)", n, r,
	       atomic_load(&polls));

	held_by_a(&m, g);
	script_reset(0, NULL, 0, NULL);
	atomic_store(&resched_after, 3);
	r = spin(&m);
	tap_ok(r <= 0 && atomic_load(&polls) <= 3,
	       "%s: need_resched: the spin ends at the poll that sees it (spin %d, %d polls)", n,
	       r, atomic_load(&polls));
}

/* ---- 3. threaded: the v3.x spinner that sees B goes to sleep ------------------- */

struct locker {
	lb_mutex_t *m;
	_Atomic int done;
};

static void *locker_main(void *arg)
{
	struct locker *l = arg;
	lb_mutex_v3_lock(l->m, &rec_t);
	atomic_store(&l->done, 1);
	lb_mutex_v3_unlock(l->m, &rec_t);
	return NULL;
}

static bool wait_for(bool (*cond)(lb_mutex_t *), lb_mutex_t *m)
{
	/* Barrier on observable state; the bound only turns a hang into a
	 * failure (10 s, never reached when the code is right). */
	for (int i = 0; i < 100000; i++) {
		if (cond(m))
			return true;
		usleep(100);
	}
	return false;
}

static bool one_asleep(lb_mutex_t *m)
{
	struct lb_mutex_waiter *w = atomic_load(&m->wait_head);
	return atomic_load(&m->nr_waiters) == 1 && w &&
	       atomic_load(&w->state) == LB_MUTEX__SLEEPING;
}

static void test_sleeps_on_change(enum lb_mutex_gen g)
{
	lb_mutex_t m;
	const char *n = gen_name(g);
	held_by_a(&m, g);
	script_reset(4, &rec_b, 0, NULL);
	struct locker l = { .m = &m };
	pthread_t tid;
	pthread_create(&tid, NULL, locker_main, &l);
	bool slept = wait_for(one_asleep, &m);
	tap_ok(slept && !atomic_load(&l.done) && atomic_load(&polls) == 4,
	       "%s: T, spinning on A, sees B and sleeps on the wait list (asleep: %d, %d polls)",
	       n, slept, atomic_load(&polls));
	/* B unlocks: the waiter is woken, takes the lock, and returns. */
	lb_mutex_v3_unlock(&m, &rec_b);
	pthread_join(tid, NULL);
	tap_ok(atomic_load(&l.done) && atomic_load(&m.v3_count) == 1 && atomic_load(&m.owner) == 0,
	       "%s: B's unlock wakes T, which takes and frees the lock", n);
}

/* ---- 4. the v3.14 unlock's owner-less window --------------------------------- */

static void *unlocker_main(void *arg)
{
	lb_mutex_v3_unlock(arg, &rec_a);
	return NULL;
}

static bool unlocker_queued(lb_mutex_t *m)
{
	/* Its ticket taken (main holds ticket 0): it is inside unlock_slow,
	 * past v3.15's count store (read here too, not inferred). */
	return atomic_load(&m->v3_wait_next) == 2 &&
	       (m->gen == LB_MUTEX_GEN_V3_14 || atomic_load(&m->v3_count) == 1);
}

static void test_unlock_window(enum lb_mutex_gen g)
{
	lb_mutex_t m;
	const char *n = gen_name(g);
	held_by_a(&m, g);
	atomic_store(&m.v3_count, -1); /* a contender's failed decrement */
	script_reset(0, NULL, 0, NULL);
	lb_mutex_v3__wait_lock(&m); /* main holds wait_lock: A's unlock waits */
	pthread_t tid;
	pthread_create(&tid, NULL, unlocker_main, &m);
	bool in = wait_for(unlocker_queued, &m);
	int32_t count = atomic_load(&m.v3_count);
	uintptr_t owner = atomic_load(&m.owner);
	struct lb_sched_spin s;
	lb_sched_spin_start(&s, &m.spinners, m.ncpus);
	if (g == LB_MUTEX_GEN_V3_14) {
		tap_ok(in && owner == 0 && count != 1,
		       "%s: unlock waiting for wait_lock: owner cleared, count %d (still taken)", n,
		       count);
		/* A spinner in the window: no owner to spin on, the count not
		 * free: it re-queues (drops the MCS lock and tries again) until
		 * need_resched, here on its 4th look. */
		atomic_store(&resched_after, 4);
		int r = lb_mutex_v3__optimistic_spin(&m, &rec_t);
		tap_ok(r == -1 && atomic_load(&resched_calls) == 4 && atomic_load(&polls) == 0,
		       "%s: a spinner in the window re-queues %d times, then stops on "
		       "need_resched (spin %d)", n, atomic_load(&resched_calls) - 1, r);
		lb_mutex_v3__wait_unlock(&m);
		pthread_join(tid, NULL);
		tap_ok(atomic_load(&m.v3_count) == 1, "%s: the unlock then frees the count", n);
	} else {
		tap_ok(in && owner == 0 && count == 1,
		       "%s: unlock waiting for wait_lock: the count is already free (%d)", n, count);
		int r = lb_mutex_v3__optimistic_spin(&m, &rec_t);
		tap_ok(r == 1, "%s: a spinner takes it while the unlocker waits (spin %d)", n, r);
		lb_mutex_v3__wait_unlock(&m);
		pthread_join(tid, NULL);
		lb_mutex_v3_unlock(&m, &rec_t);
	}
}

int main(void)
{
	const enum lb_mutex_gen gens[] = { LB_MUTEX_GEN_CURRENT, LB_MUTEX_GEN_V3_14,
					   LB_MUTEX_GEN_V3_15 };
	lb_mutex_ctx_init(&rec_a);
	lb_mutex_ctx_init(&rec_b);
	lb_mutex_ctx_init(&rec_t);
	for (size_t i = 0; i < 3; i++) {
		test_owner_change(gens[i]);
		test_owner_released(gens[i]);
	}
	for (size_t i = 1; i < 3; i++) {
		test_hooks_stop(gens[i]);
		test_sleeps_on_change(gens[i]);
		test_unlock_window(gens[i]);
	}
	return tap_done();
}
