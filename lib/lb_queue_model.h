/* SPDX-License-Identifier: MIT */
/*
 * lb_queue_model.h - the closed queue of a lock: n cores, each thinking
 * (working outside the lock) for an exponential time of mean a, then
 * queueing for one server (the lock) whose mean service time, with k cores
 * at the lock (the holder and k - 1 waiters), is
 *
 *     S(k) = s + c0 + c * k
 *
 * A birth-death Markov chain on k = 0..n: k -> k+1 at rate (n - k) / a,
 * k -> k-1 at rate 1 / S(k).  Two cases have names:
 *
 *   c > 0, c0 = 0: the model of ticket-lock collapse of Boyd-Wickizer,
 *     Kaashoek, Morris, Zeldovich, "Non-scalable locks are dangerous",
 *     Linux Symposium 2012 (its section on the model): the hand-over
 *     grows by c per core at the lock, since every waiter re-reads the
 *     lock's line after each release;
 *   c = 0: the machine-repairman queue (M/M/1//n) with a constant service
 *     time s + c0: a lock whose hand-over does not grow with its waiters
 *     (MCS, a queued spinlock, a mutex whose spinners queue).
 *
 * Steady state (balance across each cut k | k+1):
 *     P(k+1) = P(k) * (n - k) / a * S(k + 1),   sum of P(k) = 1,
 * throughput X = sum over k >= 1 of P(k) / S(k), which by Little's law is
 * also E[n - k] / a.  Times in any one unit (ns here); X per that unit.
 * doc/sim.md ("Analytic cross-check") derives it and says where it applies.
 */
#ifndef LB_QUEUE_MODEL_H
#define LB_QUEUE_MODEL_H

#include <stddef.h>

struct lb_qm_lock {
	unsigned int n; /* cores (customers), 1.. */
	double a;       /* mean think time outside the lock, >= 0 */
	double s;       /* serial section (inside the lock), >= 0 */
	double c0;      /* constant part of the hand-over, >= 0 */
	double c;       /* hand-over growth per core at the lock, >= 0 */
};

struct lb_qm_result {
	double throughput;   /* acquisitions per time unit */
	double mean_at_lock; /* E[k]: cores holding or waiting */
	double p0;           /* probability that the lock is free */
};

/* Mean service time with k cores at the lock (k >= 1). */
static inline double lb_qm_service(const struct lb_qm_lock *q, unsigned int k)
{
	return q->s + q->c0 + q->c * (double)k;
}

/*
 * Solve the chain.  p (n + 1 doubles, or NULL) receives P(0..n).  0, or -1
 * for n = 0, a negative or non-finite input, or a = S(k) = 0 (both
 * instantaneous: no finite throughput).  Works in logarithms, so n in the
 * thousands neither overflows nor underflows.
 */
int lb_qm_solve(const struct lb_qm_lock *q, struct lb_qm_result *out, double *p);

#endif /* LB_QUEUE_MODEL_H */
