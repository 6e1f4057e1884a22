/* SPDX-License-Identifier: MIT */
/*
 * raw_section.h - a raw (non-preemptible) spinlock section emulated in
 * userspace, for the allocator's list_lock (doc/rt.md, "Raw sections").
 *
 * On PREEMPT_RT a raw_spinlock_t section runs with preemption off: nothing
 * preempts its holder or its spinning waiters, no other section starts on
 * that CPU until it ends, and an RT task woken there starts only when it
 * ends.  Here the uncontended section costs no system call:
 *  - entry marks the CPU (sched_getcpu(), read from the rseq area, and a
 *    compare-and-swap of that CPU's mark word from "no section" to "one"),
 *    exit unmarks it.  One section per CPU at a time: a thread that finds
 *    its CPU marked has preempted that section's thread, so it boosts it
 *    (it then runs on and ends its section first) and waits for the mark.
 *  - only who waits pays: a thread that must spin for list_lock boosts
 *    itself (SCHED_FIFO boost_prio - 1) and the current holder (boost_prio)
 *    before it spins, so no load thread can preempt a spinner or a holder
 *    (no convoy behind a preempted holder or FIFO successor); a holder that
 *    took the lock by trylock while others spin boosts itself.  A boosted
 *    thread returns to its own scheduling when its section ends.
 *  - an RT thread that wakes on a marked CPU boosts that CPU's section and
 *    waits on the mark (a futex) until the section ends: the wait is part of
 *    its wake-up latency, as with preemption off.
 * The cost per section (alone and in the run) and the boost system calls
 * are counted and reported.  PI and sleeping locks never use it.
 */
#ifndef LB_RAW_SECTION_H
#define LB_RAW_SECTION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lb_lock_ops.h"
#include "shared_arena.h"

/* The waiter bit of a CPU's mark word; the low bits count open sections. */
#define LB_RAW_WAITER UINT32_C(0x80000000)
/* Threads that can take part in raw sections of one lb_raw_sections. */
#define LB_RAW_MAX_THREADS 4096

/* One mark word per CPU, each on its own cache line. */
struct lb_raw_mark {
	_Atomic uint32_t word;
	char pad[60];
};

struct lb_raw_thread;

struct lb_raw_sections {
	struct lb_raw_mark *marks;
	unsigned int ncpu;
	int boost_prio;              /* SCHED_FIFO priority of a holder (0: no boosts) */
	/* Registered threads (lb_raw_thread_init), scanned for a CPU's section. */
	struct lb_raw_thread *_Atomic *slots;
	_Atomic uint32_t nslots;     /* high-water mark of slots[] */
	struct lb_raw_thread *_Atomic holder; /* who holds list_lock now (NULL: nobody) */
	_Atomic uint32_t spinners;   /* threads on the contended path */
	bool no_proxy_boost;         /* testing: lb_raw_debug_no_proxy_boost() */
	bool shared;                 /* marks and slots in an arena, shared futexes */
	/* Totals, folded in by lb_raw_thread_fini(). */
	_Atomic uint64_t sections, contended, cost_ns, boost_calls, boost_failures, entry_yields;
	_Atomic uint64_t wait_ns;    /* of cost_ns: entries' waits, unboost calls (see below) */
	_Atomic uint64_t rt_waits, rt_wait_ns, rt_wait_max_ns;
};

/* Per-thread state. */
struct lb_raw_thread {
	struct lb_raw_sections *rs;
	int tid;
	int slot;                    /* index in rs->slots, -1: not registered */
	/* What the thread returns to after a boost (relaxed: boosters read it). */
	_Atomic int base_policy, base_prio;
	_Atomic int cpu;             /* the CPU marked by the open section, -1: none */
	bool contended;              /* this section waits on the contended path */
	_Atomic int in_section;      /* read by boosters (seq_cst, see boost_thread) */
	_Atomic uint32_t boost;      /* 0 not boosted, 1 a boost under way, 2 boosted */
	uint64_t sections, contended_sections, cost_cycles, boost_calls, boost_failures;
	/* Part of cost_cycles: waits for another section on the CPU at entry,
	 * and the unboost call at exit, with the preemption it lets happen. */
	uint64_t wait_cycles;
	uint64_t entry_yields;       /* entries that found their CPU's mark taken */
};

/* Is this lock a raw one (spin role, or a family whose waiters never sleep)? */
bool lb_raw_lock_is_raw(const struct lb_lock_ops *ops);

/* 0 or ENOMEM.  boost_prio 0: mark only (SCHED_FIFO not permitted). */
int lb_raw_sections_init(struct lb_raw_sections *rs, int boost_prio);
/* The same for sections of several processes (rt -P): rs itself, the marks,
 * the slots and every registered lb_raw_thread lie in shared memory (the
 * marks and slots come from `arena`), and the marks' futexes are shared.
 * Boosts name threads by their system-wide TID, so they cross processes. */
int lb_raw_sections_init_shared(struct lb_raw_sections *rs, int boost_prio,
				struct lb_arena *arena);
void lb_raw_sections_destroy(struct lb_raw_sections *rs);

/* On the thread: register it (0, or ENOSPC past LB_RAW_MAX_THREADS) and
 * record its scheduling. */
int lb_raw_thread_init(struct lb_raw_sections *rs, struct lb_raw_thread *t);
/* The thread changed its own scheduling (outside a section). */
void lb_raw_thread_resched(struct lb_raw_thread *t);
/* Fold its counts into rs and unregister it. */
void lb_raw_thread_fini(struct lb_raw_thread *t);

/*
 * A section: lb_raw_enter() before trying for the lock; then either
 * lb_raw_acquired(t, false) after a trylock that succeeded at once, or
 * lb_raw_contended() before spinning and lb_raw_acquired(t, true) once
 * the lock is ours; lb_raw_exit() after releasing it.
 */
void lb_raw_enter(struct lb_raw_thread *t);
void lb_raw_contended(struct lb_raw_thread *t);
void lb_raw_acquired(struct lb_raw_thread *t, bool contended);
void lb_raw_exit(struct lb_raw_thread *t);

/* The median ns of one uncontended section's emulation on the calling
 * thread (enter, acquired, exit), over n sections with nothing in them. */
uint64_t lb_raw_calibrate(struct lb_raw_sections *rs, unsigned int n);

/*
 * An RT thread just woke on `cpu`: boost the section open there and wait
 * until it ends.  Returns the ns waited (0 when the CPU was not marked).
 */
uint64_t lb_raw_wait_cpu(struct lb_raw_sections *rs, int cpu);

/* Testing: with broken, contended waiters boost nobody (the old convoy). */
void lb_raw_debug_no_proxy_boost(struct lb_raw_sections *rs, bool broken);

#endif /* LB_RAW_SECTION_H */
