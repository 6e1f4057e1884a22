/* SPDX-License-Identifier: MIT */
/*
 * lb_signrank.h - Wilcoxon's signed-rank test for paired measurements.
 *
 * Input: the n paired differences d[i] (e.g. log(B_i) - log(A_i) of two
 * locks measured in the same slice pair).  Zero differences are dropped
 * (Wilcoxon's rule); the rest are ranked by |d| (ties get the mean of their
 * ranks) and W+ is the sum of the ranks of the positive ones.  Under the
 * null hypothesis (differences symmetric about 0) every sign pattern is
 * equally likely.  Two-sided p-value:
 *  - exact, from the distribution of W+ over the 2^n sign patterns (counted
 *    by subset sums), when there are no ties and n <= LB_SIGNRANK_EXACT_MAX;
 *  - otherwise the normal approximation: mean n(n+1)/4, variance
 *    n(n+1)(2n+1)/24 - sum(t^3 - t)/48 over the tie groups of size t, and a
 *    continuity correction of 1/2.
 */
#ifndef LB_SIGNRANK_H
#define LB_SIGNRANK_H

#include <stdbool.h>
#include <stddef.h>

#define LB_SIGNRANK_EXACT_MAX 50

struct lb_signrank {
	size_t n;        /* non-zero differences ranked */
	size_t zeros;    /* zero differences dropped */
	double w_plus;   /* sum of the ranks of the positive differences */
	double w_minus;  /* n(n+1)/2 - w_plus */
	double z;        /* normal approximation's z (0 when exact) */
	double p;        /* two-sided p-value (1 when n == 0) */
	bool exact;
	bool ties;       /* some |d| occur more than once */
};

/* 0, or -1 when out of memory (*out then says p = 1). */
int lb_signrank_test(const double *d, size_t n, struct lb_signrank *out);

/* P(W+ <= w) for n untied, non-zero differences (exact; n <= EXACT_MAX). */
double lb_signrank_cdf(size_t n, double w);

#endif /* LB_SIGNRANK_H */
