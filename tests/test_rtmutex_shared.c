/* SPDX-License-Identifier: MIT */
/*
 * test_rtmutex_shared.c - rtmutex.h's futex scope is data (lb_rtmutex_init_shared):
 * tasks that mix a private lock and a shared one.  Two forked processes,
 * two threads each, every task record and lock in one MAP_SHARED mapping:
 * each thread takes its process's private lock P, then the shared lock S
 * (lock, timedlock or trylock in turn), increments plain counters, and lets
 * go.  A task's first call on S makes its pi_lock and wake word shared
 * while it holds P, where its process's other thread may wait and boost
 * through that pi_lock.  Tasks are created without SPIN, so contended waits
 * sleep on the futexes.  A lost wake-up hangs: the processes are killed at
 * the deadline and the test fails.  First, in one process: private
 * sleepers left on a task's pi_lock when its scope changes all wake.
 */
#include "rtmutex.h"
#include "lb_atomic.h"
#include "lb_time.h"
#include "tap.h"
#include "test_reap.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NPROC 2
#define NTHR 2
#define ITERS 20000u
#define DEADLINE_NS (20 * LB_NS_PER_S)

struct arena {
	lb_rtmutex_t shared_lock;
	lb_rtmutex_t private_lock[NPROC];
	lb_rtmutex_ctx_t task[NPROC][NTHR];
	volatile uint64_t shared_count;          /* under shared_lock */
	volatile uint64_t private_count[NPROC];  /* under private_lock[p] */
	_Atomic uint32_t in_shared;              /* 1 while a holder is inside */
	_Atomic uint64_t overlaps;
	_Atomic uint32_t ready;
};

struct worker {
	struct arena *a;
	unsigned int proc, thr;
};

static void *worker_main(void *arg)
{
	const struct worker *wk = arg;
	struct arena *a = wk->a;
	lb_rtmutex_ctx_t *t = &a->task[wk->proc][wk->thr];
	lb_rtmutex_t *p = &a->private_lock[wk->proc];
	lb_rtmutex_ctx_init(t, 0); /* no SPIN: contended waits sleep */
	atomic_fetch_add_explicit(&a->ready, 1, memory_order_relaxed);
	/* Start together (a spin: four threads, briefly). */
	while (atomic_load_explicit(&a->ready, memory_order_relaxed) < NPROC * NTHR)
		lb_cpu_relax();
	for (unsigned int i = 0; i < ITERS; i++) {
		lb_rtmutex_lock(p, t);
		switch (i % 3) {
		case 0:
			lb_rtmutex_lock(&a->shared_lock, t);
			break;
		case 1: {
			struct timespec abs;
			clock_gettime(CLOCK_MONOTONIC, &abs);
			abs.tv_sec += 60; /* far: a sleep on the scoped bitset wait */
			if (lb_rtmutex_timedlock(&a->shared_lock, t, &abs))
				abort();
			break;
		}
		default:
			/* Trylock loop, bounded by the other holders' short sections. */
			while (!lb_rtmutex_trylock(&a->shared_lock, t))
				lb_cpu_relax();
		}
		/* Relaxed: the lock orders the section; the flag only detects overlap. */
		if (atomic_exchange_explicit(&a->in_shared, 1, memory_order_relaxed))
			atomic_fetch_add_explicit(&a->overlaps, 1, memory_order_relaxed);
		uint64_t v = a->shared_count;
		for (int k = 0; k < 200; k++)
			lb_cpu_relax(); /* a section long enough for the others to queue */
		a->shared_count = v + 1;
		atomic_store_explicit(&a->in_shared, 0, memory_order_relaxed);
		lb_rtmutex_unlock(&a->shared_lock, t);
		a->private_count[wk->proc]++;
		lb_rtmutex_unlock(p, t);
	}
	return NULL;
}

#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void child(struct arena *a, unsigned int proc)
{
	pthread_t th[NTHR];
	struct worker wk[NTHR];
	for (unsigned int i = 0; i < NTHR; i++) {
		wk[i] = (struct worker){ a, proc, i };
		if (pthread_create(&th[i], NULL, worker_main, &wk[i]))
			_exit(3);
	}
	for (unsigned int i = 0; i < NTHR; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

static bool reap(pid_t *pids, bool *hung)
{
	return lb_test_reap(pids, NPROC, DEADLINE_NS, hung);
}

/* ---- the scope change with private sleepers left over ------------------ */

static _Atomic uint32_t sleepers_done;

static void *base_prio_reader(void *arg)
{
	(void)lb_rtmutex_task_base_prio(arg); /* takes the task's pi_lock */
	atomic_fetch_add_explicit(&sleepers_done, 1, memory_order_relaxed);
	return NULL;
}

/*
 * Two threads sleep (privately) on a task's pi_lock while this thread holds
 * it; we release it, which wakes one, and change the task's scope at once,
 * before the woken one runs (likely: it has to be scheduled).  The other
 * sleeper's only wake-up is then the extra private wake of a CHANGED
 * unlock; without it that thread sleeps for ever (the join times out).
 */
static void check_scope_change_wakes_old_sleepers(void)
{
	static lb_rtmutex_ctx_t t;
	pthread_t th[2];
	lb_rtmutex_ctx_init(&t, 0);
	lb_rtmutex_ilock_lock(&t.pi_lock);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, base_prio_reader, &t);
	/* Wait until both sleep: the word says 2 and they had time past their
	 * spin (5 us) into the futex. */
	while (lb_load_relaxed(&t.pi_lock.v) != 2)
		lb_cpu_relax(); /* the first sleeper marks it within microseconds */
	struct timespec settle = { 0, 50 * 1000 * 1000 };
	nanosleep(&settle, NULL);
	lb_rtmutex_ilock_unlock(&t.pi_lock);
	lb_rtmutex__task_share(&t);
	bool joined = true;
	for (int i = 0; i < 2; i++) {
		struct timespec abs;
		clock_gettime(CLOCK_REALTIME, &abs);
		abs.tv_sec += 5;
		joined &= pthread_timedjoin_np(th[i], NULL, &abs) == 0;
	}
	tap_ok(joined && atomic_load_explicit(&sleepers_done, memory_order_relaxed) == 2,
	       "scope change: both private sleepers of the pi_lock woke (%u of 2)",
	       atomic_load_explicit(&sleepers_done, memory_order_relaxed));
	if (!joined) {
		(void)tap_done();
		_exit(1); /* a thread sleeps for ever: end here */
	}
}

int main(void)
{
	check_scope_change_wakes_old_sleepers();

	struct arena *a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED) {
		tap_ok(false, "shared mapping");
		return tap_done();
	}
	lb_rtmutex_init_shared(&a->shared_lock, NULL);
	for (int i = 0; i < NPROC; i++)
		lb_rtmutex_init(&a->private_lock[i], NULL);
	pid_t pids[NPROC];
	fflush(stdout); /* nothing buffered is written twice */
	for (unsigned int i = 0; i < NPROC; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			child(a, i);
	}
	bool hung;
	bool clean = reap(pids, &hung);
	uint64_t want = (uint64_t)NPROC * NTHR * ITERS;
	tap_ok(clean, "%d processes x %d threads finished in time%s", NPROC, NTHR,
	       hung ? " (HUNG: killed)" : "");
	tap_ok(a->shared_count == want && !atomic_load_explicit(&a->overlaps, memory_order_relaxed),
	       "shared lock: %llu of %llu increments, %llu overlaps",
	       (unsigned long long)a->shared_count, (unsigned long long)want,
	       (unsigned long long)atomic_load_explicit(&a->overlaps, memory_order_relaxed));
	bool private_ok = true;
	for (int i = 0; i < NPROC; i++)
		private_ok &= a->private_count[i] == (uint64_t)NTHR * ITERS;
	tap_ok(private_ok, "private locks: every process counted %llu", (unsigned long long)NTHR * ITERS);
	bool scopes = lb_load_relaxed(&a->shared_lock.wait_lock.shared) == LB_RTMUTEX_SCOPE_SHARED;
	for (int i = 0; i < NPROC; i++) {
		scopes &= lb_load_relaxed(&a->private_lock[i].wait_lock.shared) == LB_RTMUTEX_SCOPE_PRIVATE;
		for (int j = 0; j < NTHR; j++)
			scopes &= lb_load_relaxed(&a->task[i][j].pi_lock.shared) == LB_RTMUTEX_SCOPE_CHANGED;
	}
	tap_ok(scopes, "scopes are data: the shared lock and every task that used it shared, "
		       "the private locks private");
	munmap(a, sizeof(*a));
	return tap_done();
}
