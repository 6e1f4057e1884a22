/* SPDX-License-Identifier: MIT */
/*
 * verdict.h - what a stall was, from evidence gathered over a window in
 * which nobody got the lock: a lock that lost a hand-over (or a wake-up, or
 * never released) or threads that the scheduler, the hypervisor or an
 * emulator did not run.  Pure: the evidence is gathered elsewhere
 * (evidence.c, from /proc and the workers' spin counters), so the unit test
 * feeds it scripted thread states.
 *
 * The principle: "lost" is claimed only with proof that every thread the
 * hand-over could be waiting for really ran.  A waiter proves it by its
 * spin count: every lb_cpu_relax() in locktorture's copy of the locks adds
 * one, each iteration re-reads what the waiter waits on, and a count that
 * normal-speed spinning reaches in LB_VERDICT_PROOF_NS means it looked
 * hundreds of thousands of times and never saw its turn; and it must still
 * be spinning in the last quarter of the window (a waiter that took the
 * lock word and was preempted before lock() returned spun plenty before it,
 * then stopped: that is a holder nobody sees, preempted).  The count cannot
 * be faked by a guest that charges a thread CPU time while its vCPU is not
 * running (TCG, steal), which CPU time can.  Without a count (a wait loop
 * that does not use lb_cpu_relax) the thread's CPU time stands in for it,
 * unless the hypervisor stole time over the window.  A thread that did not
 * run that much was preempted when it was runnable and waiting for a CPU
 * (run delay over its CPU time), charged CPU time at a spin rate far below
 * normal, or on a machine with steal: then nothing can be concluded about
 * the lock, and the verdict says so instead of "lost".
 */
#ifndef LB_TORTURE_VERDICT_H
#define LB_TORTURE_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Real execution every waiter must show before a hand-over can be called
 * lost: this much CPU at the normal spin rate (about 10^6 re-reads natively). */
#define LB_VERDICT_PROOF_NS (200 * 1000000ull)
/* A spin rate under this share of normal: the CPU did not really run it. */
#define LB_VERDICT_SLOW_PCT 25
/* Steal over the window above this share of (window x CPUs): CPU time is
 * not a proof of running (per mille). */
#define LB_VERDICT_STEAL_PERMILLE 10

/* One worker's evidence over the window (the same wait or hold throughout). */
struct lb_verdict_thread {
	bool writer;
	int id;               /* among the writers or the readers */
	bool holding;         /* holding the lock (else waiting for it) */
	bool hung;            /* --inject_hang: holding on purpose, forever */
	char run_state;       /* /proc .../stat state at the end: R S D T Z ..., '?' unknown */
	char run_state0;      /* the same at the start of the window (0: not read) */
	bool sched_known;     /* cpu_ns and delay_ns were read at both ends */
	uint64_t cpu_ns;      /* on a CPU over the window (schedstat) */
	uint64_t delay_ns;    /* runnable, waiting for a CPU (schedstat run delay) */
	uint64_t spins;       /* lb_cpu_relax() iterations over the window */
	uint64_t still_ns;    /* since its spin count last moved (the window
			       * when it never did) */
};

struct lb_verdict_evidence {
	uint64_t window_ns;
	long long acquisitions;   /* by anyone over the window */
	int released;             /* holders at the start that were not at the end */
	double steal_s;           /* all CPUs over the window; < 0 unknown */
	int ncpus;
	double normal_spins_per_s; /* spins a second of CPU normally gives; 0 unknown */
	int nthreads;
	const struct lb_verdict_thread *threads;
};

enum lb_verdict_kind {
	LB_VERDICT_PROGRESS,      /* the lock changed hands: slow, not stuck */
	LB_VERDICT_RELEASED,      /* a holder let go during the window: judge
				   * again over a window after it (a waiter
				   * that ran before the release proves nothing) */
	LB_VERDICT_PREEMPTED,     /* a waiter or holder did not run enough to tell */
	LB_VERDICT_LOST_HANDOVER, /* every waiter ran, no holder, nobody got it */
	LB_VERDICT_LOST_WAKEUP,   /* waiters asleep on a lock nobody holds */
	LB_VERDICT_NOT_RELEASED,  /* a holder that ran (or hung) kept the lock */
	LB_VERDICT_UNKNOWN,       /* no evidence could be read */
};

/* How one thread ran over the window. */
enum lb_verdict_ran {
	LB_RAN_ENOUGH,    /* proof of running: spins, or CPU time without steal */
	LB_RAN_ASLEEP,    /* sleeping (S) and not enough: waits for a wake-up */
	LB_RAN_WAITING,   /* runnable or blocked, waiting for a CPU (run delay) */
	LB_RAN_SLOW,      /* charged CPU time at a spin rate far below normal */
	LB_RAN_STOLEN,    /* CPU time only, on a machine with steal */
	LB_RAN_UNKNOWN,   /* nothing readable */
};

struct lb_verdict {
	enum lb_verdict_kind kind;
	int culprit;              /* index in threads[] the wording names; -1 none */
	enum lb_verdict_ran culprit_ran;
	bool failure;             /* the run must end in FAILURE */
};

/*
 * The early verdict (lb_verdict_all_asleep): a lost wake-up is certain,
 * without waiting for the watchdog's limit, once every worker has waited in
 * the lock, asleep, over a window this long, with no holder ...
 */
#define LB_VERDICT_ASLEEP_WINDOW_NS (1000 * 1000000ull) /* 1 s */
/* ... each of them on a CPU or waiting for one (run delay) for at most
 * this much of it in all: blocked for good, not a waker that sleeps a few
 * µs at a time on its way to the wake (--perturb's sleeps are under 2 ms,
 * and each costs a wake-up and a run). */
#define LB_VERDICT_ASLEEP_RAN_NS (1 * 1000000ull) /* 1 ms */

/*
 * True when the evidence proves a lost wake-up outright: nobody got the lock
 * and no holder let go over at least LB_VERDICT_ASLEEP_WINDOW_NS, and all
 * `workers` workers (every one of the run's, so no thread outside the lock
 * is left to wake them) waited in the lock over the whole window, none
 * holding it, each asleep (state S) at both ends with at most
 * LB_VERDICT_ASLEEP_RAN_NS of CPU time and run delay together and no spin.
 * A waker preempted between its release and its wake is runnable (R) or
 * shows run delay; one in a short sleep wakes within it and runs.  Needs
 * the scheduler's figures for every worker; false without them (pure).
 */
bool lb_verdict_all_asleep(const struct lb_verdict_evidence *e, int workers);

/* Classify one thread (pure). */
enum lb_verdict_ran lb_verdict_thread_ran(const struct lb_verdict_evidence *e,
					  const struct lb_verdict_thread *t);

/* The verdict on the window (pure). */
struct lb_verdict lb_verdict_judge(const struct lb_verdict_evidence *e);

/* Its name, as printed: "lost hand-over", "preempted", ... */
const char *lb_verdict_name(enum lb_verdict_kind kind);

/*
 * One line, no newline: the verdict in words and the figures behind it
 * (the culprit's state, CPU time, run delay, spins and spin rate, the
 * least-run waiter, steal).  Returns snprintf's count.
 */
int lb_verdict_format(char *buf, size_t len, const struct lb_verdict_evidence *e,
		      const struct lb_verdict *v);

#endif /* LB_TORTURE_VERDICT_H */
