/* SPDX-License-Identifier: MIT */
/*
 * lb_sched_hooks.h - the two questions a kernel lock's spinner asks the
 * scheduler, as named hooks:
 *
 *   lb_sched_owner_running(owner)  kernel: owner->on_cpu
 *   lb_sched_need_resched(spin)    kernel: need_resched() of the spinner
 *
 * The kernel answers both exactly.  Userspace cannot see either, so the
 * defaults below are stand-ins (today's, measured against the kernel's
 * own per-thread truth in doc/mutex.md, "The scheduler hooks"):
 *
 *  - owner running: the owner has not announced that it is off the CPU.
 *    A lock's owner announces a sleep it knows of by bracketing it with
 *    lb_sched_block_begin/end on its own task record: mutex.h does it
 *    around every futex sleep of its thread, and a workload does it around
 *    a sleep it makes while holding a lock (an I/O wait).  An involuntary
 *    preemption is not announced and not seen: the stand-in says
 *    "running" for an owner waiting in a run queue.
 *  - need_resched: (1) crowded: the lock's contenders on a CPU, the owner
 *    and the spinners, outnumber the CPUs, so some task that wants a CPU
 *    has none; or (2) the spinner lost its CPU since its last look: two
 *    of its polls, a few hundred ns apart when it runs, are more than
 *    LB_SCHED_PREEMPT_GAP_NS apart in wall time, so another task wanted
 *    its CPU (in the kernel that task would have set need_resched first).
 *    The kernel's flag also counts tasks that contend for nothing; (1)
 *    sees only this lock's contenders.
 *
 * A simulator (or a test) that knows the truth replaces both: define
 * LB_SCHED_HOOKS_OVERRIDE, include this header (for its types), define
 * lb_sched_owner_running() and lb_sched_need_resched() with the
 * signatures below, then include the lock header (tests/test_mutex_spin.c
 * does; tests/sched_hooks_truth.c wraps the stand-ins, which stay
 * defined as lb_sched_*_standin, to measure them).  The types stay these.
 */
#ifndef LB_SCHED_HOOKS_H
#define LB_SCHED_HOOKS_H

#include "lb_atomic.h"

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* A wall-clock gap between two polls of one spinner, in ns, above which it
 * was off its CPU meanwhile (a poll takes well under 1 us when it runs; a
 * scheduler time slice is milliseconds). */
#ifndef LB_SCHED_PREEMPT_GAP_NS
#define LB_SCHED_PREEMPT_GAP_NS 20000u
#endif

/* What a lock knows about a task (thread): one per thread record. */
struct lb_sched_task {
	_Atomic(uint32_t) blocked; /* nesting depth of announced off-CPU waits */
};

/* One spinner's view for need_resched: the lock's count of contenders on a
 * CPU (spinners, without the owner), the CPUs, the last poll's time. */
struct lb_sched_spin {
	_Atomic(int) *spinners;
	int ncpus;
	uint32_t polls;
	uint64_t last_ns;
};

static inline uint64_t lb_sched__now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A simulator that answers the hooks from its scheduler learns here which
 * of its threads a task record belongs to (the record is initialised by
 * its own thread: lb_mutex_ctx_init); nothing natively. */
#ifndef LB_SCHED_TASK_BIND
#define LB_SCHED_TASK_BIND(t) ((void)(t))
#endif

static inline void lb_sched_task_init(struct lb_sched_task *t)
{
	atomic_init(&t->blocked, 0);
	LB_SCHED_TASK_BIND(t);
}

/*
 * The owner announces a wait off the CPU (and its end).  Relaxed: a
 * spinner that reads a stale value only spins a little longer or stops a
 * little early, as with the kernel's unlocked read of owner->on_cpu.
 */
static inline void lb_sched_block_begin(struct lb_sched_task *t)
{
	lb_store_relaxed(&t->blocked, lb_load_relaxed(&t->blocked) + 1);
}

static inline void lb_sched_block_end(struct lb_sched_task *t)
{
	lb_store_relaxed(&t->blocked, lb_load_relaxed(&t->blocked) - 1);
}

static inline void lb_sched_spin_start(struct lb_sched_spin *s, _Atomic(int) *spinners, int ncpus)
{
	s->spinners = spinners;
	s->ncpus = ncpus;
	s->polls = 0;
	s->last_ns = lb_sched__now_ns();
}

/* Stand-in for owner->on_cpu (see the header comment).  The record must
 * stay valid while a lock may name it, as every lb_mutex thread record. */
static inline bool lb_sched_owner_running_standin(struct lb_sched_task *owner)
{
	return lb_load_relaxed(&owner->blocked) == 0;
}

/* Stand-in for need_resched() (see the header comment).  The clock is read
 * every 8th poll: a read costs about as much as a poll. */
static inline bool lb_sched_need_resched_standin(struct lb_sched_spin *s)
{
	if (1 + lb_load_relaxed(s->spinners) > s->ncpus)
		return true;
	if ((++s->polls & 7) != 0)
		return false;
	uint64_t now = lb_sched__now_ns(), gap = now - s->last_ns;
	s->last_ns = now;
	return gap > LB_SCHED_PREEMPT_GAP_NS;
}

#ifndef LB_SCHED_HOOKS_OVERRIDE

static inline bool lb_sched_owner_running(struct lb_sched_task *owner)
{
	return lb_sched_owner_running_standin(owner);
}

static inline bool lb_sched_need_resched(struct lb_sched_spin *s)
{
	return lb_sched_need_resched_standin(s);
}

#endif /* LB_SCHED_HOOKS_OVERRIDE */

#endif /* LB_SCHED_HOOKS_H */
