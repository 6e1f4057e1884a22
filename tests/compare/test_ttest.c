/* SPDX-License-Identifier: MIT */
/*
 * test_ttest.c - lib/lb_ttest against published answers, and the A/A and
 * shift checks of `lockbench compare`'s verdict (issue 11):
 *
 *   - t quantiles against the NIST table;
 *   - Welch's t, df and p on the three worked examples of the Wikipedia
 *     article "Welch's t-test";
 *   - the exact Mann-Whitney U distribution on a hand-enumerated case, and
 *     U and p on the permeability data of Hollander & Wolfe (the example of
 *     R's wilcox.test) and the diabetes-age example of scipy's mannwhitneyu
 *     documentation;
 *   - the normal approximation with ties, computed by hand below;
 *   - 20 A/A pairs from one fixed-seed distribution: at most 1 "difference";
 *     4000 of them: the false-positive rate is the nominal 5 %;
 *   - a 10 % shift at 10 runs a side: flagged in 20 of 20, and the interval
 *     covers the true shift about 95 % of the time.
 */
#include "lb_ttest.h"
#include "../tap.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>

static bool near(double got, double want, double tol)
{
	return fabs(got - want) <= tol;
}

static void t_quantiles(void)
{
	/* NIST/SEMATECH e-Handbook of Statistical Methods, 1.4.2.4 "Critical
	 * values of the Student's t distribution",
	 * https://www.itl.nist.gov/div898/handbook/eda/section3/eda3672.htm
	 * (3 decimals; upper-tail probabilities 0.025, 0.005, 0.05, 0.10). */
	static const struct { double p, df, want; } table[] = {
		{ 0.975, 1, 12.706 }, { 0.975, 10, 2.228 }, { 0.975, 30, 2.042 },
		{ 0.975, 100, 1.984 }, { 0.995, 5, 4.032 }, { 0.995, 30, 2.750 },
		{ 0.95, 20, 1.725 }, { 0.90, 3, 1.638 }, { 0.975, 1e9, 1.960 },
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		double got = lb_t_quantile(table[i].p, table[i].df);
		tap_ok(near(got, table[i].want, 0.0006), "t quantile p=%.3f df=%g: %.4f (table %.3f)",
		       table[i].p, table[i].df, got, table[i].want);
	}
	tap_ok(near(lb_t_two_sided_p(2.228, 10), 0.05, 0.0005), "two-sided p at the 97.5%% point is 0.05");
}

static void welch_examples(void)
{
	/* Wikipedia, "Welch's t-test", section "Examples": three pairs of
	 * samples with the published Welch t, df (Welch-Satterthwaite) and
	 * two-sided p, rounded as printed there (tolerance: a unit in the last
	 * printed digit; the pooled Student's t of example 3 would be 1.65,
	 * p 0.109: far outside). */
	static const double a1[] = { 27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
				     21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4 };
	static const double b1[] = { 27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
				     24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4 };
	static const double a2[] = { 17.2, 20.9, 22.6, 18.1, 21.7, 21.4, 23.5, 24.2, 14.7, 21.8 };
	static const double b2[] = { 21.5, 22.8, 21.0, 23.0, 21.6, 23.6, 22.5, 20.7, 23.4, 21.8,
				     20.7, 21.7, 21.5, 22.5, 23.6, 21.5, 22.5, 23.5, 21.5, 21.8 };
	static const double a3[] = { 19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0 };
	static const double b3[] = { 28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7,
				     23.2, 17.5, 20.6, 18.0, 23.9, 21.6, 24.3, 20.4, 23.9, 13.3 };
	static const struct {
		const double *a, *b;
		size_t na, nb;
		double t, df, p;
	} ex[] = {
		{ a1, b1, 15, 15, -2.46, 25.0, 0.021 },
		{ a2, b2, 10, 20, -1.57, 9.9, 0.149 },
		{ a3, b3, 10, 20, -2.22, 24.5, 0.036 },
	};
	for (size_t i = 0; i < 3; i++) {
		struct lb_welch w;
		/* The article computes t as mean(A1) - mean(A2): ours is b - a. */
		int rc = lb_welch_test(ex[i].b, ex[i].nb, ex[i].a, ex[i].na, 0.95, &w);
		tap_ok(rc == 0 && near(w.t, ex[i].t, 0.01), "Welch example %zu: t %.4f (published %.2f)",
		       i + 1, w.t, ex[i].t);
		tap_ok(near(w.df, ex[i].df, 0.05), "Welch example %zu: df %.4f (published %.1f)", i + 1,
		       w.df, ex[i].df);
		tap_ok(near(w.p, ex[i].p, 0.001), "Welch example %zu: p %.5f (published %.3f)", i + 1,
		       w.p, ex[i].p);
		/* The verdict is the interval: it excludes 0 exactly when p < 0.05. */
		tap_ok(w.significant == (w.p < 0.05) &&
			       (w.p < 0.05) == (fabs(w.diff) > w.half_width),
		       "Welch example %zu: interval verdict agrees with p", i + 1);
	}
	struct lb_welch w;
	double one[] = { 1 }, two[] = { 1, 2 };
	tap_ok(lb_welch_test(one, 1, two, 2, 0.95, &w) == -1, "Welch refuses a side of 1 value");
	double c1[] = { 5, 5, 5 }, c2[] = { 5, 5, 5 }, c3[] = { 6, 6, 6 };
	tap_ok(lb_welch_test(c1, 3, c2, 3, 0.95, &w) == 0 && !w.significant && w.p == 1,
	       "Welch: identical constant sides are no difference");
	tap_ok(lb_welch_test(c1, 3, c3, 3, 0.95, &w) == 0 && w.significant && w.p == 0,
	       "Welch: different constant sides are a difference");
}

static void mwu_exact(void)
{
	/* m = n = 2: the 6 orderings give U = 0,1,2,2,3,4 (by hand). */
	tap_ok(near(lb_mwu_exact_cdf(0, 2, 2), 1.0 / 6, 1e-12) &&
		       near(lb_mwu_exact_cdf(1, 2, 2), 2.0 / 6, 1e-12) &&
		       near(lb_mwu_exact_cdf(2, 2, 2), 4.0 / 6, 1e-12) &&
		       near(lb_mwu_exact_cdf(3, 2, 2), 5.0 / 6, 1e-12) &&
		       lb_mwu_exact_cdf(4, 2, 2) == 1,
	       "exact U distribution, m = n = 2, by enumeration");
	/* m = 3, n = 2: 10 orderings, U = 0:1 1:1 2:2 3:2 4:2 5:1 6:1. */
	tap_ok(near(lb_mwu_exact_cdf(2, 3, 2), 4.0 / 10, 1e-12) &&
		       near(lb_mwu_exact_cdf(2, 2, 3), 4.0 / 10, 1e-12),
	       "exact U distribution, m = 3, n = 2, either way round");
	tap_ok(near(lb_mwu_exact_cdf(24.5, 7, 7), 0.5, 1e-12), "exact U distribution is symmetric (7x7)");

	/* Hollander & Wolfe (1973), p. 69, permeability constants of the human
	 * chorioamnion; the example of R's ?wilcox.test, which prints
	 * "W = 35, p-value = 0.1272" for the one-sided test (two-sided: 0.2544). */
	static const double x[] = { 0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46 };
	static const double y[] = { 1.15, 0.88, 0.90, 0.74, 1.21 };
	struct lb_mwu u;
	lb_mann_whitney(x, 10, y, 5, &u);
	tap_ok(u.exact && u.u == 35 && near(u.p, 2 * 0.1272, 0.0002),
	       "Hollander & Wolfe permeability: U %.1f p %.4f exact=%d (published W = 35, one-sided 0.1272)",
	       u.u, u.p, u.exact);
	/* scipy.stats.mannwhitneyu documentation, after the Boston University
	 * SPH notes: ages at diagnosis, males vs females: U1 = 17, exact
	 * two-sided p = 0.1111 (= 14/126). */
	static const double males[] = { 19, 22, 16, 29, 24 }, females[] = { 20, 11, 17, 12 };
	lb_mann_whitney(males, 5, females, 4, &u);
	tap_ok(u.exact && u.u == 17 && near(u.p, 14.0 / 126, 1e-9),
	       "diabetes ages: U %.1f p %.4f (published 17, 0.1111)", u.u, u.p);
	/* Complete separation, 5 vs 5: p = 2 / C(10,5) = 2/252. */
	static const double lo[] = { 1, 2, 3, 4, 5 }, hi[] = { 6, 7, 8, 9, 10 };
	lb_mann_whitney(lo, 5, hi, 5, &u);
	tap_ok(u.exact && u.u == 0 && near(u.p, 2.0 / 252, 1e-12), "complete separation 5 vs 5: p = 2/252");
}

static void mwu_ties(void)
{
	/* a = {1,2,2,3}, b = {2,3,4,5}.  Pooled and sorted: 1a 2a 2a 2b 3a 3b 4b 5b;
	 * mid-ranks 1, 3, 3, 3, 5.5, 5.5, 7, 8.  R_a = 1+3+3+5.5 = 12.5,
	 * U_a = 12.5 - 4*5/2 = 2.5, mu = 16/2 = 8.  Ties: one group of 3, one of
	 * 2: sum(t^3 - t) = 24 + 6 = 30.  var = 16/12 * (9 - 30/(8*7)) =
	 * 11.2857143; z = (|2.5 - 8| - 0.5) / sqrt(var) = 1.4883514;
	 * p = erfc(z / sqrt 2) = 0.1366582.  (R: wilcox.test(a, b, exact=FALSE);
	 * scipy 1.10: mannwhitneyu(a, b) gives the same p.) */
	static const double a[] = { 1, 2, 2, 3 }, b[] = { 2, 3, 4, 5 };
	struct lb_mwu u;
	lb_mann_whitney(a, 4, b, 4, &u);
	tap_ok(u.ties && !u.exact && u.u == 2.5 && near(u.z, 1.4883514, 1e-6) &&
		       near(u.p, 0.1366582, 1e-6),
	       "ties: U %.1f z %.7f p %.6f (hand: 2.5, 1.4883514, 0.1366582)", u.u, u.z, u.p);
	static const double same[] = { 3, 3, 3 };
	lb_mann_whitney(same, 3, same, 3, &u);
	tap_ok(u.p == 1, "all values equal: p = 1");
	/* 60 vs 60 without ties: beyond the exact limit, the approximation. */
	double big_a[60], big_b[60];
	for (int i = 0; i < 60; i++) {
		big_a[i] = 2 * i;
		big_b[i] = 2 * i + 1;
	}
	lb_mann_whitney(big_a, 60, big_b, 60, &u);
	tap_ok(!u.exact && u.p > 0.8, "60 vs 60 interleaved: normal approximation, p %.3f", u.p);
}

#define RUNS 10

static void draw(gsl_rng *rng, double mean, double sd, double *v)
{
	for (int i = 0; i < RUNS; i++)
		v[i] = mean + gsl_ran_gaussian(rng, sd);
}

/*
 * Benchmark noise modelled as normal with a 3 % coefficient of variation
 * around 100 (a typical repeat-to-repeat spread of ops/s on a quiet machine).
 */
static void aa_and_shift(void)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 20241130);
	double a[RUNS], b[RUNS];
	struct lb_welch w;
	struct lb_mwu u;
	int diffs = 0;
	for (int i = 0; i < 20; i++) {
		draw(rng, 100, 3, a);
		draw(rng, 100, 3, b);
		lb_welch_test(a, RUNS, b, RUNS, 0.95, &w);
		diffs += w.significant;
	}
	tap_ok(diffs <= 1, "A/A: %d of 20 fixed-seed pairs called a difference (at most 1)", diffs);

	int t_fp = 0, u_fp = 0, trials = 4000;
	for (int i = 0; i < trials; i++) {
		draw(rng, 100, 3, a);
		draw(rng, 100, 3, b);
		lb_welch_test(a, RUNS, b, RUNS, 0.95, &w);
		lb_mann_whitney(a, RUNS, b, RUNS, &u);
		t_fp += w.significant;
		u_fp += u.p < 0.05;
	}
	/* Binomial sd of the rate at 4000 trials is 0.0034: +-3 sd. */
	double t_rate = (double)t_fp / trials, u_rate = (double)u_fp / trials;
	tap_ok(t_rate > 0.04 && t_rate < 0.06, "A/A: Welch false-positive rate %.4f at 95 %% (nominal 0.05)",
	       t_rate);
	tap_ok(u_rate > 0.03 && u_rate < 0.06, "A/A: U test p<0.05 rate %.4f (exact test: at most 0.05)",
	       u_rate);

	int flagged = 0;
	for (int i = 0; i < 20; i++) {
		draw(rng, 100, 3, a);
		draw(rng, 110, 3.3, b);
		lb_welch_test(a, RUNS, b, RUNS, 0.95, &w);
		flagged += w.significant && w.diff > 0;
	}
	tap_ok(flagged == 20, "10 %% shift, 10 runs a side: flagged in %d of 20", flagged);

	int covered = 0;
	for (int i = 0; i < trials; i++) {
		draw(rng, 100, 3, a);
		draw(rng, 110, 3.3, b);
		lb_welch_test(a, RUNS, b, RUNS, 0.95, &w);
		covered += fabs(w.diff - 10) <= w.half_width;
	}
	double cover = (double)covered / trials;
	tap_ok(cover > 0.94 && cover < 0.96, "95 %% interval covers the true shift in %.4f of draws", cover);
	gsl_rng_free(rng);
}

int main(void)
{
	t_quantiles();
	welch_examples();
	mwu_exact();
	mwu_ties();
	aa_and_shift();
	return tap_done();
}
