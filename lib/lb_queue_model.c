/* SPDX-License-Identifier: MIT */
/*
 * lb_queue_model.c - the closed birth-death queue of a lock (the chain is
 * described in lb_queue_model.h and doc/sim.md, "Analytic cross-check").
 */
#include "lb_queue_model.h"

#include <math.h>

static int valid(const struct lb_qm_lock *q)
{
	const double v[] = { q->a, q->s, q->c0, q->c };
	if (q->n == 0)
		return 0;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!isfinite(v[i]) || v[i] < 0)
			return 0;
	return 1;
}

/* log of P(k)'s unnormalised weight, from log w(k - 1): the balance of the
 * cut between k - 1 and k (k - 1 -> k at (n - k + 1) / a, back at 1 / S(k)). */
static double log_step(const struct lb_qm_lock *q, unsigned int k)
{
	return log((double)(q->n - k + 1)) - log(q->a) + log(lb_qm_service(q, k));
}

/* One state holds all the probability: k = at. */
static void point_mass(const struct lb_qm_lock *q, unsigned int at, struct lb_qm_result *out,
		       double *p)
{
	for (unsigned int k = 0; p && k <= q->n; k++)
		p[k] = k == at ? 1 : 0;
	out->p0 = at == 0 ? 1 : 0;
	out->mean_at_lock = at;
	/* At 0 the lock is never held: each core comes back every a. */
	out->throughput = at == 0 ? q->n / q->a : 1 / lb_qm_service(q, at);
}

int lb_qm_solve(const struct lb_qm_lock *q, struct lb_qm_result *out, double *p)
{
	if (!valid(q))
		return -1;
	double s_top = lb_qm_service(q, q->n);
	if (q->a == 0 && s_top == 0)
		return -1;
	if (q->a == 0) { /* no think time: every core is always at the lock */
		point_mass(q, q->n, out, p);
		return 0;
	}
	if (s_top == 0) { /* s = c0 = c = 0: an instantaneous lock, never queued at */
		point_mass(q, 0, out, p);
		return 0;
	}
	/* Two passes over the log weights: their maximum, then the sums scaled
	 * by it (no overflow however large the products grow). */
	double lw = 0, max = 0;
	for (unsigned int k = 1; k <= q->n; k++) {
		lw += log_step(q, k);
		max = lw > max ? lw : max;
	}
	double total = 0, busy_rate = 0, at_lock = 0;
	lw = 0;
	for (unsigned int k = 0; k <= q->n; k++) {
		if (k)
			lw += log_step(q, k);
		double w = exp(lw - max);
		if (p)
			p[k] = w;
		total += w;
		if (k)
			busy_rate += w / lb_qm_service(q, k);
		at_lock += w * k;
	}
	for (unsigned int k = 0; p && k <= q->n; k++)
		p[k] /= total;
	out->p0 = exp(-max) / total;
	out->throughput = busy_rate / total;
	out->mean_at_lock = at_lock / total;
	return 0;
}
