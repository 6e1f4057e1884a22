/* SPDX-License-Identifier: MIT */
/* watchdog.c - progress detection and the thread-state dump. */
#include "watchdog.h"
#include "out.h"
#include "lb_time.h"
#include "clock.h"
#include "workers.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>

uint64_t lb_torture_idle_ns(const struct lb_torture_run *run, uint64_t now)
{
	uint64_t latest = 0;
	for (int i = 0; i < run->nthreads; i++) {
		/* Racy snapshot: a stale value only delays the verdict by a tick. */
		uint64_t p = atomic_load_explicit(&run->threads[i].last_progress_ns,
						  memory_order_relaxed);
		if (p > latest)
			latest = p;
	}
	if (latest == 0 || now <= latest)
		return 0;
	return now - latest;
}

int lb_torture_stall_init(struct lb_torture_stall *st, int nthreads)
{
	*st = (struct lb_torture_stall){ .nthreads = nthreads, .longest_thread = -1 };
	st->since = calloc((size_t)nthreads, sizeof(*st->since));
	st->acq_at = calloc((size_t)nthreads, sizeof(*st->acq_at));
	st->cpu_at = calloc((size_t)nthreads, sizeof(*st->cpu_at));
	st->proc_at = calloc((size_t)nthreads, sizeof(*st->proc_at));
	return st->since && st->acq_at && st->cpu_at && st->proc_at ? 0 : -1;
}

void lb_torture_stall_free(struct lb_torture_stall *st)
{
	free(st->since);
	free(st->acq_at);
	free(st->cpu_at);
	free(st->proc_at);
	st->proc_at = NULL;
	st->since = NULL;
	st->acq_at = NULL;
	st->cpu_at = NULL;
}

uint64_t lb_torture_thread_cpu_ns(const struct lb_torture_thread *t)
{
	clockid_t clock;
	struct timespec ts;
	/* -P: the worker is a process of its own, with its own CPU clock. */
	int err = !t->created ? ESRCH : t->pid ? clock_getcpuclockid(t->pid, &clock)
					     : pthread_getcpuclockid(t->handle, &clock);
	if (err || clock_gettime(clock, &ts) != 0)
		return UINT64_MAX;
	return (uint64_t)ts.tv_sec * LB_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* The CPU time of every worker: this process's, or (-P) the sum of the
 * worker processes' (main's own monitoring is in neither's share much). */
static uint64_t process_cpu_ns(const struct lb_torture_run *run)
{
	if (run->shared_map) {
		uint64_t sum = 0;
		for (int i = 0; i < run->nthreads; i++) {
			uint64_t ns = lb_torture_thread_cpu_ns(&run->threads[i]);
			sum += ns == UINT64_MAX ? 0 : ns;
		}
		return sum;
	}
	struct timespec ts;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * LB_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* Acquisitions through lock()/read_lock(): trylock may legitimately jump a
 * fair lock's queue, so its successes do not count as passing a waiter. */
static long long queued_acquisitions(const struct lb_torture_thread *t)
{
	return atomic_load_explicit(&t->n_lock_acquired, memory_order_relaxed) -
	       atomic_load_explicit(&t->n_trylock, memory_order_relaxed);
}

const struct lb_torture_thread *lb_torture_stall_check(struct lb_torture_stall *st,
						   const struct lb_torture_run *run, uint64_t now,
						   uint64_t limit_ns, uint64_t *waited_ns,
						   long long *others)
{
	const struct lb_torture_thread *stalled = NULL;
	/*
	 * A wait is compared with its own side's progress: writers with the
	 * writers' acquisitions, readers with the readers'.  A FIFO lock lets
	 * each other thread of the side in at most about once while one waits;
	 * more than two full rounds means the waiter is being passed over.  A
	 * lock that prefers one side starves the whole other side together
	 * (no progress on that side), which is its policy, not a stall.
	 */
	int nwriters = run->cfg.nwriters_stress;
	long long side_total[2] = { 0, 0 }; /* [1] writers, [0] readers */
	for (int i = 0; i < run->nthreads; i++)
		side_total[i < nwriters] += queued_acquisitions(&run->threads[i]);
	for (int i = 0; i < run->nthreads && st->since; i++) {
		const struct lb_torture_thread *t = &run->threads[i];
		/* Racy snapshot: a stale state only delays the verdict by a tick. */
		if (atomic_load_explicit(&t->state, memory_order_relaxed) != LB_TORTURE_WAITING)
			continue;
		uint64_t since = atomic_load_explicit(&t->state_since_ns, memory_order_relaxed);
		bool writer = i < nwriters;
		long long total = side_total[writer];
		long long min_others = 2LL * (writer ? nwriters : run->nthreads - nwriters) + 2;
		if (since != st->since[i]) { /* a new wait: count from here */
			st->since[i] = since;
			st->acq_at[i] = total;
			st->cpu_at[i] = lb_torture_thread_cpu_ns(t);
			st->proc_at[i] = process_cpu_ns(run);
		}
		if (now <= since)
			continue;
		uint64_t waited = now - since;
		/* Its own acquisitions cannot have grown while it waited. */
		long long passed = total - st->acq_at[i];
		if (waited > st->longest_ns) {
			st->longest_ns = waited;
			st->longest_others = passed;
			st->longest_thread = i;
		}
		if (!limit_ns || waited < limit_ns || passed < min_others || stalled)
			continue;
		/* Asleep, not spinning: a waiter that keeps burning CPU while it is
		 * passed over is an unfair lock starving it (its policy under heavy
		 * oversubscription), a waiter that sleeps through it all was not
		 * woken.  Only the first is left to the longest-wait line. */
		uint64_t cpu = lb_torture_thread_cpu_ns(t);
		if (cpu == UINT64_MAX || st->cpu_at[i] == UINT64_MAX ||
		    cpu - st->cpu_at[i] > LB_TORTURE_STALL_MAX_CPU_NS)
			continue;
		/* A share too small to tell a spinner from a sleeper: not yet. */
		uint64_t proc = process_cpu_ns(run);
		if (proc < st->proc_at[i] ||
		    (proc - st->proc_at[i]) / (uint64_t)run->nthreads < LB_TORTURE_STALL_MIN_SHARE_NS)
			continue;
		stalled = t;
		*waited_ns = waited;
		*others = passed;
	}
	return stalled;
}

static const char *state_name(int s)
{
	switch (s) {
	case LB_TORTURE_STARTING: return "starting";
	case LB_TORTURE_OUTSIDE: return "outside";
	case LB_TORTURE_WAITING: return "waiting for";
	case LB_TORTURE_HOLDING: return "holding";
	case LB_TORTURE_PAUSED: return "paused (stutter)";
	case LB_TORTURE_HUNG: return "holding (inject_hang, forever)";
	case LB_TORTURE_EXITED: return "exited";
	}
	return "?";
}

/* Seconds from the start of the test to a (coarse) stamp; 0 before it. */
static double since_start(const struct lb_torture_run *run, uint64_t stamp)
{
	return stamp > run->start_ns ? (double)(stamp - run->start_ns) / LB_NS_PER_S : 0.0;
}

void lb_torture_dump_threads(const struct lb_torture_run *run)
{
	const char *type = run->cfg.type;
	uint64_t now = lb_torture_coarse_ns();

	for (int i = 0; i < run->nthreads; i++) {
		const struct lb_torture_thread *t = &run->threads[i];
		/* Each field is read racily; they may be from different moments. */
		int s = atomic_load_explicit(&t->state, memory_order_relaxed);
		int which = atomic_load_explicit(&t->state_lock, memory_order_relaxed);
		uint64_t since = atomic_load_explicit(&t->state_since_ns, memory_order_relaxed);
		uint64_t prog = atomic_load_explicit(&t->last_progress_ns, memory_order_relaxed);
		long n = atomic_load_explicit(&t->n_lock_acquired, memory_order_relaxed);
		char lock[96] = "";

		if (s == LB_TORTURE_WAITING || s == LB_TORTURE_HOLDING || s == LB_TORTURE_HUNG) {
			if (which == LB_TORTURE_MAIN_LOCK)
				snprintf(lock, sizeof(lock), " %s", type);
			else
				snprintf(lock, sizeof(lock), " nested lock %d (%s)", which, type);
		}
		/* Its spins (evidence.h): whether a waiter is still looking. */
		unsigned long long spins = atomic_load_explicit(&t->spins, memory_order_relaxed);
		lb_torture_printf("%s%s!!! %s %d: %s%s since %.3f s (%.3f s ago), last progress %.3f s, "
				  "acquisitions %ld, spins %llu\n",
				  type, LB_TORTURE_FLAG, lb_torture_role(t), t->id, state_name(s), lock,
				  since_start(run, since), now > since ? (double)(now - since) / LB_NS_PER_S : 0.0,
				  since_start(run, prog), n, spins);
	}
	fflush(stdout);
}

/* How a worker that did not leave after the end spent the drain: asleep (at
 * most the stall check's CPU allowance) or running. */
static bool slept_through(const struct lb_torture_thread *t, uint64_t cpu_at_end)
{
	uint64_t cpu = lb_torture_thread_cpu_ns(t);
	return cpu != UINT64_MAX && cpu_at_end != UINT64_MAX &&
	       cpu - cpu_at_end <= LB_TORTURE_STALL_MAX_CPU_NS;
}

void lb_torture_report_end_hang(const struct lb_torture_run *run, uint64_t end_ns,
				const uint64_t *cpu_at_end, const char *why)
{
	const struct lb_torture_thread *holder = NULL, *sleeper = NULL, *spinner = NULL;
	int left = 0;
	for (int i = 0; i < run->nthreads; i++) {
		const struct lb_torture_thread *t = &run->threads[i];
		int s = atomic_load_explicit(&t->state, memory_order_relaxed);
		/* --inject_hang: the thread left with the lock still held. */
		if (s == LB_TORTURE_HUNG && !holder)
			holder = t;
		/* Acquire: pairs with the worker's release of exited. */
		if (!t->created || atomic_load_explicit(&t->exited, memory_order_acquire)) {
			left++;
			continue;
		}
		if ((s == LB_TORTURE_HOLDING || s == LB_TORTURE_HUNG) && !holder)
			holder = t;
		else if (s == LB_TORTURE_WAITING && slept_through(t, cpu_at_end ? cpu_at_end[i] : UINT64_MAX))
			sleeper = sleeper ? sleeper : t;
		else if (s == LB_TORTURE_WAITING && !spinner)
			spinner = t;
	}
	const struct lb_torture_thread *t = holder ? holder : sleeper ? sleeper : spinner;
	const char *type = run->cfg.type;
	uint64_t now = lb_torture_coarse_ns();
	double after = now > end_ns ? (double)(now - end_ns) / 1e9 : 0.0;
	if (!t) {
		lb_torture_printf("%s%s!!! watchdog: workers still running %.1f s after the end of the test, none "
				  "of them leaving or getting the lock; thread states:\n", type, LB_TORTURE_FLAG,
				  after);
		return;
	}
	uint64_t since = atomic_load_explicit(&t->state_since_ns, memory_order_relaxed);
	double began = since_start(run, since);
	double before = since < end_ns ? (double)(end_ns - since) / 1e9 : 0.0;
	if (holder)
		lb_torture_printf("%s%s!!! watchdog: %s %d holding %s since %.3f s (%.1f s before the end of the "
				  "test) and not releasing it %.1f s after the end: a lock that is never "
				  "released; thread states:\n", type, LB_TORTURE_FLAG, lb_torture_role(t), t->id, type,
				  began, before, after);
	else if (sleeper)
		lb_torture_printf("%s%s!!! stall: %s %d asleep waiting for %s since %.3f s (%.1f s before the end "
				  "of the test) and still %.1f s after it, while %d other workers left: a lost "
				  "wake-up (the lock is free, nobody wakes it); thread states:\n", type,
				  LB_TORTURE_FLAG, lb_torture_role(t), t->id, type, began, before, after, left);
	else
		lb_torture_printf("%s%s!!! watchdog: %s %d running but not getting %s since %.3f s (%.1f s before "
				  "the end of the test) and still %.1f s after it, while %d other workers left: "
				  "%s; thread states:\n", type, LB_TORTURE_FLAG, lb_torture_role(t), t->id, type,
				  began, before, after, left, why ? why : "a lost hand-over or a livelock");
}
