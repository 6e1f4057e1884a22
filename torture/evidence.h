/* SPDX-License-Identifier: MIT */
/*
 * evidence.h - what the watchdog gathers over a window without lock
 * progress, for verdict.h: each worker's torture state, its run state, CPU
 * time and run delay (lib/lb_tasksched.h: a thread, or with -P a worker
 * process), its spin
 * count (lb_cpu_relax() in locktorture's copy of the locks, perturb.h), the
 * acquisitions by anyone and the steal time (/proc/stat).
 *
 * Cost: two snapshots a window, taken only once progress has stopped for a
 * while (run.c), each two small /proc reads a worker; the spin count costs
 * the spinning waiter a load and a store on its own cache line per spin.
 */
#ifndef LB_TORTURE_EVIDENCE_H
#define LB_TORTURE_EVIDENCE_H

#include "context.h"
#include "verdict.h"

/* One worker at one moment. */
struct lb_evidence_snap {
	int state;            /* enum lb_torture_state */
	uint64_t since;       /* state_since_ns: the same wait at both ends */
	char run_state;       /* '?' unknown */
	bool sched_known;
	uint64_t cpu_ns, delay_ns, spins;
};

struct lb_evidence_window {
	int nthreads;
	bool armed;                  /* the first snapshot was taken */
	uint64_t t0;                 /* when (CLOCK_MONOTONIC) */
	long long acq0;              /* total acquisitions then */
	int64_t steal0;              /* /proc/stat steal ticks then; -1 unknown */
	struct lb_evidence_snap *at0, *at1;
	uint64_t *seen_spins, *moved_at;   /* each worker's spin count as the
					    * ticks saw it, and when it moved */
	struct lb_verdict_thread *threads; /* the evidence handed to the verdict */
};

int lb_evidence_init(struct lb_evidence_window *w, int nthreads);
void lb_evidence_free(struct lb_evidence_window *w);

/* Start a window now (the first snapshot). */
void lb_evidence_arm(struct lb_evidence_window *w, const struct lb_torture_run *run);

/* Every monitor tick while a window is open: note whose spin count moved
 * (relaxed loads, no /proc). */
void lb_evidence_tick(struct lb_evidence_window *w, const struct lb_torture_run *run);

/* The evidence over [t0, now] (as lb_evidence_judge's), the window left
 * open: the early look at a window that may prove a lost wake-up before the
 * watchdog's limit (lb_verdict_all_asleep).  Reads /proc: two small files a
 * worker. */
void lb_evidence_gather(struct lb_evidence_window *w, const struct lb_torture_run *run,
			struct lb_verdict_evidence *e);

/* End it now: the evidence over [t0, now] (threads waiting or holding at
 * both ends, in the same wait or hold) and its verdict. */
struct lb_verdict lb_evidence_judge(struct lb_evidence_window *w, const struct lb_torture_run *run,
				    struct lb_verdict_evidence *e);

/*
 * The normal spin rate: spins a second of this thread's CPU time gives
 * when it runs a loop like the locks' (lb_cpu_relax() and the count), for
 * about 20 ms of CPU; 0 when the CPU clock cannot be read.
 */
double lb_evidence_calibrate_spins(void);

#endif /* LB_TORTURE_EVIDENCE_H */
