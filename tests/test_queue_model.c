/* SPDX-License-Identifier: MIT */
/*
 * test_queue_model.c - lib/lb_queue_model.h: the closed queue of a lock
 * against chains solved by hand (n = 1, 2, 3), Little's law, the edge
 * cases, a large n, and the qualitative result of Boyd-Wickizer et al.
 * 2012: the ticket chain's throughput collapses past a core count while
 * the constant-cost queue saturates.
 */
#include "lb_queue_model.h"
#include "tap.h"

#include <math.h>

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (1 + fabs(b));
}

static void test_one_core(void)
{
	/* n = 1: P(1)/P(0) = (1/a) * S(1), so P(0) = a / (a + S(1)) and
	 * X = P(1) / S(1) = 1 / (a + S(1)): one core alternates think and lock. */
	struct lb_qm_lock t = { .n = 1, .a = 200, .s = 100, .c = 100 };
	struct lb_qm_lock q = { .n = 1, .a = 200, .s = 100, .c0 = 100 };
	struct lb_qm_result r = { 0 }, rq = { 0 };
	int rc = lb_qm_solve(&t, &r, NULL);
	tap_ok(rc == 0 && near(r.throughput, 1.0 / 400) &&
	       near(r.p0, 0.5) && near(r.mean_at_lock, 0.5),
	       "n=1 ticket: X = 1/(a+s+c) = 1/400, P0 = 1/2 (got %.12g, %.12g)", r.throughput, r.p0);
	rc = lb_qm_solve(&q, &rq, NULL);
	tap_ok(rc == 0 && near(rq.throughput, r.throughput),
	       "n=1: the constant queue with c0 = c is the same chain (got %.12g)", rq.throughput);
}

static void test_two_cores_ticket(void)
{
	/* a = 100, s = 0, c = 100: S(1) = 100, S(2) = 200.
	 * w0 = 1, w1 = (2/100) * 100 = 2, w2 = w1 * (1/100) * 200 = 4: P = 1/7, 2/7, 4/7.
	 * X = (2/7)/100 + (4/7)/200 = 4/700 per ns. */
	struct lb_qm_lock t = { .n = 2, .a = 100, .s = 0, .c = 100 };
	struct lb_qm_result r = { 0 };
	double p[3] = { 0 };
	int rc = lb_qm_solve(&t, &r, p);
	tap_ok(rc == 0 && near(p[0], 1.0 / 7) && near(p[1], 2.0 / 7) &&
	       near(p[2], 4.0 / 7), "n=2 ticket: P = 1/7, 2/7, 4/7 (got %.12g %.12g %.12g)", p[0],
	       p[1], p[2]);
	tap_ok(near(r.throughput, 4.0 / 700) && near(r.p0, 1.0 / 7) &&
	       near(r.mean_at_lock, 10.0 / 7),
	       "n=2 ticket: X = 4/700, E[k] = 10/7 (got %.12g, %.12g)", r.throughput,
	       r.mean_at_lock);
}

static void test_three_cores_queue(void)
{
	/* a = 300, S = s + c0 = 60 + 40 = 100 whatever k:
	 * w1 = (3/300) * 100 = 1, w2 = 1 * (2/300) * 100 = 2/3, w3 = (2/3) * (1/300) * 100 = 2/9;
	 * sum 26/9, P0 = 9/26, X = (1 - P0) / 100 = 17/2600 per ns. */
	struct lb_qm_lock q = { .n = 3, .a = 300, .s = 60, .c0 = 40 };
	struct lb_qm_result r = { 0 };
	double p[4] = { 0 };
	int rc = lb_qm_solve(&q, &r, p);
	tap_ok(rc == 0 && near(r.p0, 9.0 / 26) &&
	       near(r.throughput, 17.0 / 2600) && near(p[3], 2.0 / 26),
	       "n=3 constant queue: P0 = 9/26, P3 = 2/26, X = 17/2600 (got %.12g, %.12g, %.12g)",
	       r.p0, p[3], r.throughput);
}

static void test_little(void)
{
	/* The throughput out of the lock equals the arrivals into it. */
	struct lb_qm_lock t = { .n = 5, .a = 150, .s = 30, .c0 = 7, .c = 20 };
	struct lb_qm_result r = { 0 };
	double p[6] = { 0 }, sum = 0;
	lb_qm_solve(&t, &r, p);
	for (int k = 0; k <= 5; k++)
		sum += p[k];
	tap_ok(near(sum, 1) && near(r.throughput, (5 - r.mean_at_lock) / 150),
	       "n=5: P sums to 1, X = E[n-k]/a (Little; got %.12g vs %.12g)", r.throughput,
	       (5 - r.mean_at_lock) / 150);
}

static void test_edges(void)
{
	struct lb_qm_result r = { 0 };
	struct lb_qm_lock zero_n = { .n = 0, .a = 1, .s = 1 };
	struct lb_qm_lock neg = { .n = 2, .a = 1, .s = -1 };
	struct lb_qm_lock nan_c = { .n = 2, .a = 1, .s = 1, .c = NAN };
	struct lb_qm_lock both0 = { .n = 2 };
	tap_ok(lb_qm_solve(&zero_n, &r, NULL) == -1 && lb_qm_solve(&neg, &r, NULL) == -1 &&
	       lb_qm_solve(&nan_c, &r, NULL) == -1 && lb_qm_solve(&both0, &r, NULL) == -1,
	       "refused: n = 0, a negative or NaN input, a = S = 0");
	/* a = 0: every core always at the lock, X = 1/S(n). */
	struct lb_qm_lock busy = { .n = 4, .a = 0, .s = 100, .c = 25 };
	int rc = lb_qm_solve(&busy, &r, NULL);
	tap_ok(rc == 0 && near(r.throughput, 1.0 / 200) &&
	       r.p0 == 0 && near(r.mean_at_lock, 4), "a=0: X = 1/S(n) = 1/200 (got %.12g)",
	       r.throughput);
	/* S = 0: the lock is never queued at, X = n/a. */
	struct lb_qm_lock free_lock = { .n = 4, .a = 100 };
	rc = lb_qm_solve(&free_lock, &r, NULL);
	tap_ok(rc == 0 && near(r.throughput, 4.0 / 100) &&
	       r.p0 == 1, "s=c0=c=0: X = n/a = 0.04 (got %.12g)", r.throughput);
}

static void test_large_n(void)
{
	/* Products of (n-k)/a * S(k) reach far beyond a double: the log form
	 * keeps them; nearly every core waits, so X is close to 1/S(n). */
	static double p[1025];
	struct lb_qm_lock t = { .n = 1024, .a = 1, .s = 1000, .c = 1 };
	struct lb_qm_result r = { 0 };
	double sum = 0;
	int rc = lb_qm_solve(&t, &r, p);
	for (int k = 0; k <= 1024; k++)
		sum += p[k];
	tap_ok(rc == 0 && isfinite(r.throughput) && near(sum, 1) &&
	       fabs(r.throughput * 2024 - 1) < 1e-3,
	       "n=1024: finite, P sums to 1, X ~ 1/(s + c n) = 1/2024 (got %.12g)", r.throughput);
}

/* The paper's qualitative result on a 48-core range: the ticket chain's
 * throughput peaks below 48 cores and falls far below its peak, the
 * constant-cost queue never falls and saturates at 1/(s + c0). */
static void test_collapse(void)
{
	double peak = 0, last_t = 0, last_q = 0;
	unsigned int at = 0;
	bool q_monotone = true;
	for (unsigned int n = 1; n <= 48; n++) {
		struct lb_qm_lock t = { .n = n, .a = 2000, .s = 50, .c = 20 };
		struct lb_qm_lock q = { .n = n, .a = 2000, .s = 50, .c0 = 20 };
		struct lb_qm_result rt, rq;
		lb_qm_solve(&t, &rt, NULL);
		lb_qm_solve(&q, &rq, NULL);
		if (rt.throughput > peak) {
			peak = rt.throughput;
			at = n;
		}
		if (rq.throughput < last_q)
			q_monotone = false;
		last_t = rt.throughput;
		last_q = rq.throughput;
	}
	tap_ok(at > 1 && at < 48 && last_t < peak / 2,
	       "ticket (a 2000, s 50, c 20): peaks at n=%u, at 48 %.3g of the peak", at,
	       last_t / peak);
	tap_ok(q_monotone && last_q > 0.99 / 70,
	       "constant queue (s + c0 = 70): never falls, at 48 %.4g of 1/70", last_q * 70);
}

int main(void)
{
	test_one_core();
	test_two_cores_ticket();
	test_three_cores_queue();
	test_little();
	test_edges();
	test_large_n();
	test_collapse();
	return tap_done();
}
