/* SPDX-License-Identifier: MIT */
/*
 * sim_hooks.h - what sim_interpose.h maps the locks' atomics, spin waits
 * and system calls to (sim_hooks.c, on the engine's thread-side calls).
 * Declarations only: the force-included header includes it before any
 * lock header, and it includes nothing of the engine.
 */
#ifndef LB_SIM_HOOKS_H
#define LB_SIM_HOOKS_H

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Charge an access (kind: 0 load, 1 store, 2 read-modify-write) to the
 * line holding p, then return p for the real access.  Outside a virtual
 * thread it only returns p (a lock's init made by the host). */
void *lb_simi_access(const volatile void *p, int kind);
/* lb_cond_load's waits: until the line is written (or the thread was
 * preempted); the _until form also returns at the CPU's next tick, when
 * the loop's stop (a clock, need_resched) may have changed. */
void lb_simi_cond_wait(const void *p);
void lb_simi_cond_wait_until(const void *p);
/* lb_cond_load_pauses(p, n): until the line is written or n pauses'
 * virtual time has passed, and never less than one pause's; n <= 1 is
 * one pause, as lb_simi_pause. */
void lb_simi_cond_wait_pauses(const void *p, uint32_t n);
/* lb_cpu_relax(): a pause in virtual time. */
void lb_simi_pause(void);
/* lb_spin_budget.h's calibration cache, the running world's (zero in a
 * new world: each cell calibrates as the first one would). */
_Atomic(unsigned int) *lb_simi_spin_ps_slot(void);
/* futex(FUTEX_WAIT, _WAIT_BITSET, _WAKE, _LOCK_PI, _UNLOCK_PI) and gettid;
 * any other call ends the run with an error line naming it. */
long lb_simi_syscall(long nr, ...);
int lb_simi_sched_yield(void);
int lb_simi_sched_getcpu(void);
/* Every clock reads virtual time. */
int lb_simi_clock_gettime(clockid_t clk, struct timespec *ts);
int lb_simi_nanosleep(const struct timespec *req, struct timespec *rem);
/* The caller's virtual affinity; the virtual machine's CPU count. */
int lb_simi_sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set);
long lb_simi_sysconf(int name);
/* Scheduling policies on the engine's classes (pid 0 or a simulated TID):
 * FIFO/RR prio is the FIFO class at prio, any other policy the fair
 * class (rtmutex's real boost, sched_setscheduler on the owner's TID). */
int lb_simi_sched_setscheduler(pid_t pid, int policy, const struct sched_param *sp);
int lb_simi_sched_getscheduler(pid_t pid);
int lb_simi_sched_getparam(pid_t pid, struct sched_param *sp);
/* A thread a lock creates (rtmutex's probe for SCHED_FIFO permission):
 * permitted for every valid policy, and it runs to its end at once on the
 * caller; the join returns at once. */
int lb_simi_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			   void *arg);
int lb_simi_pthread_join(pthread_t th, void **ret);
/* A pthread mutex of the simulated allocator (sim_slub_interpose.h): a PI
 * futex on the engine in the mutex's first word (0 or the owner's
 * simulated TID | FUTEX_WAITERS), whatever the attributes said. */
int lb_simi_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr);
int lb_simi_mutex_destroy(pthread_mutex_t *m);
int lb_simi_mutex_lock(pthread_mutex_t *m);
int lb_simi_mutex_unlock(pthread_mutex_t *m);
/* The virtual clock in ns, as the simulated allocator's cycle counter. */
uint64_t lb_simi_cycles(void);
/* calloc's zeroed memory, aligned to a coherence line (free() frees it). */
void *lb_simi_calloc_lines(size_t n, size_t size);

/* lb_sched_hooks.h's and rtmutex.h's answers from the engine
 * (sim_interpose.h), each asked for by its own bit: `who` is the asking
 * header's.  A task record (any lock's: struct lb_sched_task, struct
 * lb_rtmutex_task) is bound to the virtual thread initialising it while
 * any bit is on; with the asker's bit off (the default) both return -1 and
 * the lock asks its stand-ins (rtmutex's: running, no resched). */
#define LB_SIMI_TRUTH_SCHED 1u   /* lb_sched_hooks.h (mutex.h, slub.c's gauge) */
#define LB_SIMI_TRUTH_RTMUTEX 2u /* rtmutex.h's two spins */
void lb_simi_task_bind(const void *t);
int lb_simi_owner_running(const void *t, unsigned int who);
int lb_simi_need_resched(unsigned int who);
/* A lock's preempt-off region (1) and its end (0); nothing unless the
 * world asked for LB_SIMI_TRUTH_SCHED. */
void lb_simi_lock_preempt(int off);
/* Host side, before a world runs: which headers the engine answers (a
 * mask of LB_SIMI_TRUTH_*; 0: the stand-ins everywhere); either way forget
 * every binding. */
void lb_simi_set_sched_truth(unsigned int on);
/* CLOCK_MONOTONIC's lb_now_ns() for `--workload aim7`'s compile: virtual. */
uint64_t lb_simi_now_ns(void);
/* aim7's spin-role sections: preemption off (1) and on again (0). */
void lb_simi_preempt(int off);

#endif /* LB_SIM_HOOKS_H */
