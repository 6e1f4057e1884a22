/* SPDX-License-Identifier: MIT */
/*
 * prio.h - scheduling of the torture threads: nice 19 for the workers,
 * SCHED_FIFO 50 for writer_fifo and rt_boost (the kernel's kernel/locking/locktorture.c and kernel/torture.c).
 *
 * Everything degrades gracefully: when SCHED_FIFO is refused (no
 * CAP_SYS_NICE, RLIMIT_RTPRIO 0, a container) the feature is skipped with a
 * one-time message and the test goes on.
 */
#ifndef LB_TORTURE_PRIO_H
#define LB_TORTURE_PRIO_H

#include "context.h"

/* The kernel's sched_set_fifo() priority and MAX_NICE. */
#define LB_TORTURE_FIFO_PRIO 50
#define LB_TORTURE_MAX_NICE  19

/*
 * May SCHED_FIFO be used with this lock at all?  Not with locks whose
 * waiters only spin (no LB_LOCK_F_SLEEPS, no LB_LOCK_F_PI) unless
 * --rt_spinners: a FIFO waiter spinning on the CPU of a preempted holder of
 * the same priority (or one that yielded) is never preempted, and RT
 * throttling stops both, so the test livelocks.  Kernel spinlock holders
 * cannot be preempted, which is why the kernel can boost every type.
 */
bool lb_torture_fifo_allowed(const struct lb_torture_run *run);

/* Calling thread: SCHED_OTHER at `nice`; 0 or an errno value. */
int lb_torture_set_normal(int nice);

/* Calling thread: the nice value only (policy unchanged). */
int lb_torture_set_nice(int nice);

/* Calling thread: SCHED_FIFO at prio; 0 or an errno value. */
int lb_torture_set_fifo(int prio);

/*
 * A writer's start: nice 19, or SCHED_FIFO when writer_fifo asks for it
 * (and is permitted).  Updates t->rt.
 */
void lb_torture_writer_sched_init(struct lb_torture_thread *t);

/*
 * rt_boost, once per writer iteration (reset = false) and at exit
 * (reset = true): a normal thread goes SCHED_FIFO with p(1/(W*factor)), a
 * FIFO thread goes back to normal with p(1/(W*factor*2)) and always on
 * reset.  Applies to PI locks when rt_boost >= 1 and to every lock when
 * rt_boost == 2.  PI locks are told through ops->thread_set_prio.
 */
void lb_torture_rt_boost(struct lb_torture_thread *t, bool reset);

#endif /* LB_TORTURE_PRIO_H */
