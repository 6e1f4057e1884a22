/* SPDX-License-Identifier: MIT */
/*
 * watchdog.h - the "no progress for N seconds" detector and the per-thread
 * dump it prints before ending the test with FAILURE.
 *
 * Progress means a worker completed an acquisition or an iteration, or is
 * paused by stutter (paused threads are alive).  When every worker's last
 * progress is older than the limit, something is wedged: a lock that lost
 * a wake-up, a never-released lock (--inject_hang), a livelock.  Blocked
 * workers cannot be joined, so after the dump the program prints the
 * verdict and leaves with _exit().
 */
#ifndef LB_TORTURE_WATCHDOG_H
#define LB_TORTURE_WATCHDOG_H

#include "context.h"

/* ns since the most recent progress of any worker (coarse clock `now`). */
uint64_t lb_torture_idle_ns(const struct lb_torture_run *run, uint64_t now);

/* One "!!!" line per worker: role, state, lock, since when, progress, count,
 * spin count (evidence.h). */
void lb_torture_dump_threads(const struct lb_torture_run *run);

/*
 * The per-thread starvation check (--stall_secs), run by the monitor every
 * tick: a worker waiting for a lock at least limit_ns while the threads of
 * its own side (writers for a writer, readers for a reader) got the main
 * lock more than 2 x (threads of that side) + 2 times meanwhile (a FIFO lock
 * lets each of them in about once per waiter, however slow the hand-overs
 * on an oversubscribed machine; a lost wake-up lets them in again and
 * again), counting acquisitions through lock() only (trylock may jump a
 * fair queue), and while the waiter itself used at most
 * LB_TORTURE_STALL_MAX_CPU_NS of CPU: it sleeps, and nobody wakes it.  A
 * waiter that spins while passed over is an unfair lock's starvation, and
 * a lock that prefers one side starves the other side as a whole (no
 * progress on that side): their policies, shown in the longest-wait line,
 * not stalls.  The tracker notes when each wait began
 * and the acquisition total then; it also keeps the longest wait seen.
 */
#define LB_TORTURE_STALL_MAX_CPU_NS (5 * 1000000ull) /* 5 ms */
/*
 * ... and only once the workers' fair share of the CPU time the process got
 * over the wait (its CPU time then to now, over the workers) is at least
 * this: the workers run at nice 19, and on a machine loaded by other work
 * a spinning waiter may get under 5 ms in 10 s too (64 spinners of ck-fas
 * at load 130: "asleep" by the CPU test, yet spinning).  Below it spinning
 * and sleeping cannot be told apart yet; the wait stays tracked, and the
 * watchdog still sees a lock nobody gets.
 */
#define LB_TORTURE_STALL_MIN_SHARE_NS (10 * LB_TORTURE_STALL_MAX_CPU_NS)

struct lb_torture_stall {
	int nthreads;
	uint64_t *since;          /* state_since_ns of the wait being tracked */
	long long *acq_at;        /* total acquisitions when it was first seen */
	uint64_t *cpu_at;         /* its CPU time then (UINT64_MAX: unknown) */
	uint64_t *proc_at;        /* the process's CPU time then */
	uint64_t longest_ns;      /* the longest wait seen, and what passed it */
	long long longest_others;
	int longest_thread;       /* dense index, -1 = none */
};

int lb_torture_stall_init(struct lb_torture_stall *st, int nthreads);
void lb_torture_stall_free(struct lb_torture_stall *st);

/* The first stalled worker (sets *waited_ns, *others), or NULL; limit_ns 0
 * only tracks the longest wait. */
const struct lb_torture_thread *lb_torture_stall_check(struct lb_torture_stall *st,
						   const struct lb_torture_run *run, uint64_t now,
						   uint64_t limit_ns, uint64_t *waited_ns,
						   long long *others);

/* CPU time a worker has used; UINT64_MAX when it cannot be read. */
uint64_t lb_torture_thread_cpu_ns(const struct lb_torture_thread *t);

/*
 * The watchdog and the stall check after the end of the test: the workers
 * that did not leave, classified (one holding the lock and not releasing it;
 * one asleep in the lock while every other worker left, i.e. parked on a
 * free lock: a lost wake-up; one running without getting it), in one "!!!"
 * line saying when the hang began relative to end_ns.  cpu_at_end: each
 * worker's CPU time at the end (may be NULL).  why: the evidence's verdict
 * in words (verdict.h), said of a worker running without getting the lock;
 * NULL: no evidence ("a lost hand-over or a livelock").  The caller dumps
 * the threads.
 */
void lb_torture_report_end_hang(const struct lb_torture_run *run, uint64_t end_ns,
				const uint64_t *cpu_at_end, const char *why);

#endif /* LB_TORTURE_WATCHDOG_H */
