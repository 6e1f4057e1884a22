/* SPDX-License-Identifier: MIT */
/*
 * stall.h - aim7's watchdog verdict over a window in which no child and no
 * helper made progress (no lock acquired, no job ended), from what the
 * scheduler says of each thread over it (lib/lb_tasksched.h).
 *
 * A wall-clock deadline for the whole load point cannot tell a stuck lock
 * from a slow machine: a 100-user point on an emulated 64-CPU guest whose
 * vCPUs run a few percent of the time outlived the old one (20 x the
 * budget + 20 s; doc/vm-check.md).  The rules, in this order (doc/aim7.md,
 * "The watchdog"):
 *  - every thread in a lock wait ran AIM_STALL_PROOF_NS of CPU and nobody
 *    got a lock: spinning without a hand-over: a livelock or a lost
 *    hand-over: stuck;
 *  - a thread (waiter or holder) was runnable but waited for a CPU more
 *    than it ran and a tenth of the window or more, and ran less than
 *    AIM_STALL_PROOF_NS: the machine did not run it, which says nothing
 *    of the locks: slow;
 *  - a thread outside the locks ran a quarter of the window (a long test):
 *    slow;
 *  - otherwise threads are asleep and nobody runs: a deadlock or a lost
 *    wake-up: stuck; nothing readable: stuck, no evidence.
 * Slow opens a new window; AIM_STALL_MAX_SLOW of them in a row without a
 * single acquisition are stuck all the same (spinners livelocking on more
 * threads than CPUs look like threads waiting for a CPU).
 */
#ifndef AIM7_STALL_H
#define AIM7_STALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The window without progress after which the threads are judged. */
#define AIM_STALL_WINDOW_NS (10 * 1000000000ull)
/* Windows in a row called slow, without one acquisition, that are stuck
 * all the same (60 s). */
#define AIM_STALL_MAX_SLOW 6
/* CPU time that proves a waiter ran (locktorture's LB_VERDICT_PROOF_NS). */
#define AIM_STALL_PROOF_NS (200 * 1000000ull)

enum aim_stall_kind {
	AIM_STALL_PREEMPTED, /* slow: waiters were waiting for a CPU */
	AIM_STALL_BUSY,      /* slow: a thread ran outside the locks */
	AIM_STALL_SPINNING,  /* stuck: waiters ran, nobody got a lock */
	AIM_STALL_ASLEEP,    /* stuck: waiters asleep, nobody runs */
	AIM_STALL_UNKNOWN,   /* stuck: nothing readable */
};

/* One unfinished child or helper over the window. */
struct aim_stall_thread {
	bool in_lock;        /* in the same lock wait at both ends */
	bool known;          /* cpu_ns and delay_ns read at both ends */
	char run_state;      /* at the end: 'R', 'S', ...; '?' */
	uint64_t cpu_ns;     /* CPU time over the window */
	uint64_t delay_ns;   /* run delay over the window */
};

struct aim_stall_verdict {
	enum aim_stall_kind kind;
	bool stuck;
	unsigned int threads, in_lock, waiting_cpu, busy, asleep;
	int example;         /* the thread the verdict names, -1: none */
};

struct aim_stall_verdict aim_stall_judge(const struct aim_stall_thread *t, unsigned int n,
					 uint64_t window_ns);

/* One line (no newline): the verdict and the evidence for it. */
void aim_stall_describe(const struct aim_stall_verdict *v, const struct aim_stall_thread *t,
			uint64_t window_ns, char *buf, size_t len);

#endif /* AIM7_STALL_H */
