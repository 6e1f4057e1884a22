/* SPDX-License-Identifier: MIT */
/*
 * test_mutex_atfork_pshared.c - lb_mutex_atfork_child must leave a mutex
 * shared by processes (attr.pshared) alone (issue 39, item 3).
 *
 * The fork handler is for a one-process fork: the threads it forgets are the
 * forking process's own, gone in the child.  A pshared mutex's holder and
 * waiters live in other processes, which go on after our fork; forgetting
 * them (and making a process-local orphan the owner) would strand every
 * waiter of the other processes and hand the lock to nobody.
 *
 * Scenario: in one MAP_SHARED mapping, process A holds the mutex, process B
 * waits for it (nospin: B queues and sleeps at once).  The test process
 * forks C, which calls lb_mutex_atfork_child as a fork handler would, with
 * a process-local orphan, and reports the lock word and the wait list it
 * sees before and after.  Then A unlocks and B must get the lock.  A hung or
 * failed A or B is killed at the deadline and fails the test.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "mutex.h"
#include "lb_atomic.h"
#include "lb_time.h"
#include "tap.h"
#include "test_reap.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEADLINE_NS (5 * LB_NS_PER_S)

/* A snapshot of the fields the fork handler may reset. */
struct view {
	uintptr_t owner;
	int nr_waiters;
	uintptr_t wait_head, wait_tail;
	uint32_t wait_lock;
};

struct arena {
	lb_mutex_t m;
	lb_mutex_ctx_t holder, waiter, forker; /* A's, B's, the test process's */
	/* Cross-process steps: release stores, acquire loads (polled). */
	_Atomic uint32_t held, release, waiter_got;
	struct view before, after; /* C's snapshots around the handler */
};

/* Process-local, as the adapters' orphans are (locks/mutex.c). */
static lb_mutex_ctx_t orphan;

static void view_of(lb_mutex_t *m, struct view *v)
{
	v->owner = lb_load_relaxed(&m->owner);
	v->nr_waiters = lb_load_relaxed(&m->nr_waiters);
	v->wait_head = (uintptr_t)lb_load_relaxed(&m->wait_head);
	v->wait_tail = (uintptr_t)m->wait_tail; /* B sleeps: nobody writes it now */
	v->wait_lock = lb_load_relaxed(&m->wait_lock);
}

/* Poll, bounded, until *w == v (processes: no private futex reaches here). */
static bool poll_eq(_Atomic uint32_t *w, uint32_t v, uint64_t ns)
{
	uint64_t end = lb_now_ns() + ns;
	struct timespec ts = { 0, 1000000 };
	/* Poll loop: the other process stores once; 1 ms naps, bounded. */
	while (atomic_load_explicit(w, memory_order_acquire) != v) {
		if (lb_now_ns() > end)
			return false;
		nanosleep(&ts, NULL);
	}
	return true;
}

static void run_holder(struct arena *a)
{
	lb_mutex_ctx_init(&a->holder);
	lb_mutex_lock(&a->m, &a->holder);
	atomic_store_explicit(&a->held, 1, memory_order_release);
	if (!poll_eq(&a->release, 1, DEADLINE_NS))
		_exit(2);
	lb_mutex_unlock(&a->m, &a->holder);
	_exit(0);
}

static void run_waiter(struct arena *a)
{
	if (!poll_eq(&a->held, 1, DEADLINE_NS))
		_exit(2);
	lb_mutex_ctx_init(&a->waiter);
	lb_mutex_lock(&a->m, &a->waiter);
	atomic_store_explicit(&a->waiter_got, 1, memory_order_release);
	lb_mutex_unlock(&a->m, &a->waiter);
	_exit(0);
}

/* Wait, bounded, until B is on the wait list. */
static bool waiter_queued(struct arena *a)
{
	uint64_t end = lb_now_ns() + DEADLINE_NS;
	struct timespec ts = { 0, 1000000 };
	/* Poll loop: B queues itself in its process; 1 ms naps, bounded. */
	while (lb_load_acquire(&a->m.wait_head) != &a->waiter.waiter ||
	       lb_load_relaxed(&a->m.nr_waiters) != 1) {
		if (lb_now_ns() > end)
			return false;
		nanosleep(&ts, NULL);
	}
	return true;
}

/* Fork C: the fork handler on the shared mutex, snapshots around it. */
static bool run_handler(struct arena *a)
{
	pid_t c = fork();
	if (c < 0)
		return false;
	if (c == 0) {
		view_of(&a->m, &a->before);
		lb_mutex_atfork_child(&a->m, &a->forker, &orphan);
		view_of(&a->m, &a->after);
		_exit(0);
	}
	int st;
	return waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(void)
{
	struct arena *a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			       -1, 0);
	if (a == MAP_FAILED)
		tap_skip_all("mmap(MAP_SHARED) failed");
	memset((void *)a, 0, sizeof(*a));
	struct lb_mutex_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.pshared = true;
	attr.nospin = true; /* B queues and sleeps at once */
	lb_mutex_init(&a->m, &attr);
	lb_mutex_ctx_init(&a->forker);

	tap_plan(5);
	pid_t pids[2] = { fork(), 0 };
	if (pids[0] == 0)
		run_holder(a);
	pids[1] = fork();
	if (pids[1] == 0)
		run_waiter(a);
	bool queued = pids[0] > 0 && pids[1] > 0 && waiter_queued(a);
	tap_ok(queued, "A (pid %d) holds the pshared mutex, B (pid %d) waits on it", (int)pids[0],
	       (int)pids[1]);
	bool ran = queued && run_handler(a);
	const struct view *b = &a->before, *f = &a->after;
	tap_ok(ran && lb_mutex__task(b->owner) == &a->holder,
	       "before the fork handler: A owns the lock word (0x%jx, flags 0x%jx)",
	       (uintmax_t)b->owner, (uintmax_t)(b->owner & LB_MUTEX_FLAGS));
	tap_ok(ran && f->owner == b->owner,
	       "lb_mutex_atfork_child left the owner word alone: 0x%jx -> 0x%jx", (uintmax_t)b->owner,
	       (uintmax_t)f->owner);
	tap_ok(ran && f->nr_waiters == b->nr_waiters && f->wait_head == b->wait_head &&
		       f->wait_tail == b->wait_tail && f->wait_lock == b->wait_lock,
	       "and the wait list: %d waiter(s), head 0x%jx -> %d, 0x%jx", b->nr_waiters,
	       (uintmax_t)b->wait_head, f->nr_waiters, (uintmax_t)f->wait_head);
	atomic_store_explicit(&a->release, 1, memory_order_release);
	bool hung;
	bool clean = lb_test_reap(pids, 2, DEADLINE_NS, &hung);
	tap_ok(clean && atomic_load_explicit(&a->waiter_got, memory_order_acquire) == 1,
	       "A's unlock reached B in the other process (%s)",
	       hung ? "hung: killed at the deadline" : clean ? "both exited 0" : "a process failed");
	return tap_failed ? 1 : 0;
}
