/* SPDX-License-Identifier: MIT */
/*
 * lb_ttest.h - two-sample tests for A/B comparisons of repeated measurements.
 *
 * Welch's t-test: no assumption that the two sides have the same variance
 * (benchmarks rarely do).  t = (mean_b - mean_a) / sqrt(va/na + vb/nb), with
 * the Welch-Satterthwaite degrees of freedom
 *     df = (va/na + vb/nb)^2 / ((va/na)^2/(na-1) + (vb/nb)^2/(nb-1)),
 * the two-sided p-value from Student's t with df (a real number), and the
 * confidence interval of the difference: diff +/- t_{1-(1-c)/2, df} * se.
 * A difference is "proven" when that interval excludes 0, i.e. when
 * |diff| > half_width (ministat's rule, with Welch's se and df instead of
 * the pooled ones).  Quantiles and tails come from GSL.
 *
 * Mann-Whitney U (Wilcoxon rank-sum), two-sided: U counts the pairs (a, b)
 * with a > b, ties counting 1/2.  Without ties and with both sides under
 * LB_MWU_EXACT_MAX values the p-value is exact (the null distribution of U
 * counted as partitions); otherwise the normal approximation with the tie
 * correction of the variance and a continuity correction of 1/2.
 */
#ifndef LB_TTEST_H
#define LB_TTEST_H

#include <stdbool.h>
#include <stddef.h>

/* Both sides below this many values and no ties: exact U distribution. */
#define LB_MWU_EXACT_MAX 50

struct lb_welch {
	double mean_a, mean_b;
	double diff;        /* mean_b - mean_a */
	double se;          /* standard error of diff */
	double t;           /* diff / se (0 when se is 0 and diff is 0) */
	double df;          /* Welch-Satterthwaite degrees of freedom */
	double p;           /* two-sided p-value */
	double half_width;  /* of the confidence interval of diff */
	bool significant;   /* the interval excludes 0 */
};

/*
 * Welch's t-test of b against a at `confidence` (a fraction, 0.5..0.9999).
 * Returns 0, or -1 when a side has fewer than 2 values or the confidence is
 * out of range (nothing can be said then; *out is zeroed), or
 * LB_WELCH_NOT_COMPUTABLE when a mean, a variance or the degrees of freedom
 * are not finite (values near a double's limit, +-1e300: their squares
 * overflow); *out then holds the means, the rest is zero.
 */
#define LB_WELCH_NOT_COMPUTABLE (-2)
int lb_welch_test(const double *a, size_t na, const double *b, size_t nb, double confidence,
		  struct lb_welch *out);

/* Quantile of Student's t with df degrees of freedom: P(T <= x) = p. */
double lb_t_quantile(double p, double df);

/* Two-sided tail: P(|T| >= |t|) with df degrees of freedom. */
double lb_t_two_sided_p(double t, double df);

struct lb_mwu {
	double u;        /* U of side a: #(a > b) + #(a == b) / 2 */
	double z;        /* normal approximation's z (0 when exact) */
	double p;        /* two-sided p-value */
	bool exact;      /* p from the exact distribution */
	bool ties;       /* some values occur more than once (across both sides) */
};

/* Mann-Whitney U test.  Returns 0, or -1 when a side is empty. */
int lb_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct lb_mwu *out);

/*
 * P(U <= u) under the null hypothesis for sides of m and n values without
 * ties (u may be fractional; it is floored).  m, n >= 1, m * n <= 1e6.
 * Exposed for the tests; NAN on bad arguments or no memory.
 */
double lb_mwu_exact_cdf(double u, size_t m, size_t n);

#endif /* LB_TTEST_H */
