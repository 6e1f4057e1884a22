/* SPDX-License-Identifier: MIT */
/*
 * raw_section.h - a raw (non-preemptible) spinlock section emulated in
 * userspace, for the allocator's list_lock (doc/rt.md, "Raw sections").
 *
 * On PREEMPT_RT a raw_spinlock_t section runs with preemption off: nothing
 * preempts its holder or its spinning waiters, and an RT task woken on that
 * CPU starts only when the section ends.  Here, while a thread spins on or
 * holds a raw list_lock:
 *  - it runs at SCHED_FIFO `boost_prio` (just below the RT threads), so no
 *    load thread preempts it and no waiter is preempted in a FIFO queue
 *    (no convoy behind a preempted holder or waiter);
 *  - it is pinned to its CPU for the section ("migrate_disable": a boosted
 *    thread preempted by an RT thread is not pushed to another CPU, where
 *    it would run unmarked), and that CPU is marked in a per-CPU word, so an
 *    RT thread that wakes there waits on that word (a futex) until the
 *    section ends: the holder runs on, as with preemption off, and the wait
 *    is part of the RT thread's wake-up latency.
 * The cost (two sched_setscheduler and two sched_setaffinity calls, the mark, the clock reads) is
 * measured per section and reported.  PI and sleeping locks never use it.
 */
#ifndef LB_RAW_SECTION_H
#define LB_RAW_SECTION_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lb_lock_ops.h"

/* The waiter bit of a CPU's mark word; the low bits count open sections. */
#define LB_RAW_WAITER UINT32_C(0x80000000)

/* One mark word per CPU, each on its own cache line. */
struct lb_raw_mark {
	_Atomic uint32_t word;
	char pad[60];
};

struct lb_raw_sections {
	struct lb_raw_mark *marks;
	unsigned int ncpu;
	int boost_prio;              /* SCHED_FIFO priority of a section (0: no boost) */
	/* Totals, folded in by lb_raw_thread_fold(). */
	_Atomic uint64_t sections, cost_ns, boost_failures, entry_yields;
	_Atomic uint64_t rt_waits, rt_wait_ns, rt_wait_max_ns;
};

/* Per-thread state. */
struct lb_raw_thread {
	int base_policy, base_prio;  /* what the thread returns to after a section */
	int cpu;                     /* the CPU marked by the open section, -1: none */
	bool boosted, pinned;
	cpu_set_t affinity;          /* restored after a section */
	uint64_t sections, cost_cycles, boost_failures;
	uint64_t entry_yields;       /* yields to a section queued on our CPU */
};

/* Is this lock a raw one (spin role, or a family whose waiters never sleep)? */
bool lb_raw_lock_is_raw(const struct lb_lock_ops *ops);

/* 0 or ENOMEM.  boost_prio 0: mark only (SCHED_FIFO not permitted). */
int lb_raw_sections_init(struct lb_raw_sections *rs, int boost_prio);
void lb_raw_sections_destroy(struct lb_raw_sections *rs);

/* The thread's scheduling as it is now (call after any priority change). */
void lb_raw_thread_init(struct lb_raw_thread *t);
/* Before spinning for the lock / after releasing it. */
void lb_raw_enter(struct lb_raw_sections *rs, struct lb_raw_thread *t);
void lb_raw_exit(struct lb_raw_sections *rs, struct lb_raw_thread *t);
void lb_raw_thread_fold(struct lb_raw_sections *rs, struct lb_raw_thread *t);

/* The median ns of one enter+exit pair on the calling thread, over n pairs
 * taken with nothing else in the section (what the emulation itself costs). */
uint64_t lb_raw_calibrate(struct lb_raw_sections *rs, unsigned int n);

/*
 * An RT thread just woke on `cpu`: wait until no raw section is open there.
 * Returns the ns waited (0 when the CPU was not marked).
 */
uint64_t lb_raw_wait_cpu(struct lb_raw_sections *rs, int cpu);

#endif /* LB_RAW_SECTION_H */
