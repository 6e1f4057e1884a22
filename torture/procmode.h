/* SPDX-License-Identifier: MIT */
/*
 * procmode.h - locktorture -P: the workers are forked processes instead of
 * threads, on one lock set up by the lock's init_shared (LB_LOCK_F_PSHARED).
 *
 * The run record, the worker records, the locks and every lock context live
 * in one MAP_SHARED anonymous mapping made before the first fork, at the same
 * address in every process (init_shared's contract, lb_lock_ops.h).  The
 * checks (lock_is_write_held, holders, the plain pair), the statistics
 * counters, the state words the watchdog reads and the --perturb counts are
 * therefore the same words in every process, and main's monitor, stall
 * check, watchdog and verdict run unchanged.  What differs:
 *  - a worker is a process: its CPU time is the process's CPU clock, its
 *    /proc files are /proc/PID/task/PID/..., its affinity is set with
 *    sched_setaffinity(pid);
 *  - main reaps the workers with waitpid; one that died by a signal or
 *    exited non-zero (a sanitizer report, a crash) is a FAILURE;
 *  - a worker dies with main (PR_SET_PDEATHSIG), and main kills them all
 *    before it leaves without joining (watchdog, stall, end-of-test hang);
 *  - what needs a thread of main (--deadlock's signal contenders,
 *    call_rcu chains) is refused with -P (options.c).
 * This is how a waiter that sleeps in the wrong futex scope (a private
 * futex on a shared lock) is seen: it is never woken by the other
 * processes, and the stall check or the watchdog fails the run.
 */
#ifndef LB_TORTURE_PROCMODE_H
#define LB_TORTURE_PROCMODE_H

#include "context.h"

/* The run record (zeroed) at the start of a new shared mapping sized for
 * cfg: the threads, locks and contexts are carved from it; NULL on failure. */
struct lb_torture_run *lb_torture_proc_map(const struct lb_torture_config *cfg);

/* size bytes at align from the run's mapping (zeroed); NULL when full. */
void *lb_torture_proc_carve(struct lb_torture_run *run, size_t size, size_t align);

/* Fork worker t running fn(t) on the CPUs in set; 0 or an errno value. */
int lb_torture_proc_spawn(struct lb_torture_run *run, struct lb_torture_thread *t,
			  void *(*fn)(void *), const cpu_set_t *set);

/* Reap every worker; the number that died by a signal or exited non-zero
 * (each said in a "!!!" line). */
int lb_torture_proc_reap(struct lb_torture_run *run);

/* SIGKILL every worker still there (before leaving without reaping). */
void lb_torture_proc_kill_all(const struct lb_torture_run *run);

/* Unmap the run's mapping (the run record with it). */
void lb_torture_proc_unmap(struct lb_torture_run *run);

#endif /* LB_TORTURE_PROCMODE_H */
