/* SPDX-License-Identifier: MIT */
/*
 * lb_paired.h - the ratio of paired measurements, B_i / A_i: one estimator
 * family over the per-pair log ratios l_i = log(B_i / A_i).  Ratios
 * multiply, so their logarithms are what averages; an interval of the
 * ratio is then asymmetric around it, as it should be.
 *
 *  - lb_paired_ratio: the geometric mean, exp(mean of l_i), with Student's
 *    t interval (n - 1 degrees of freedom), exponentiated.  For a handful
 *    of pairs (aim7's --ab repeats): with 3..5 pairs it still gives a 95 %
 *    interval, where a rank interval cannot (5 pairs reach 93.75 % at
 *    most); but one spoilt pair moves it by its size.
 *  - lb_paired_hl: the Hodges-Lehmann estimate of the l_i (the median of
 *    their Walsh averages) with the signed-rank interval, the robust
 *    member, for many pairs (`lockbench ab`, 20 and more): a few pairs that
 *    a preemption spoilt move it by a rank, not by their size.  It pairs
 *    with Wilcoxon's signed-rank test (lb_signrank.h) on the same l_i: its
 *    interval is the set of shifts that test does not reject.
 *
 * Both estimate the centre of the l_i; for log ratios that scatter
 * symmetrically it is the same ratio.
 */
#ifndef LB_PAIRED_H
#define LB_PAIRED_H

#include <stddef.h>

struct lb_paired_ratio {
	size_t n;
	double geomean;     /* exp(mean of log ratios) */
	double lo, hi;      /* the confidence interval of the ratio (n == 1: geomean) */
	double log_sd;      /* sample sd of the log ratios (n == 1: 0) */
	double cov_pct;     /* CoV of the ratios themselves, % (n == 1: 0) */
};

/*
 * a[i], b[i] > 0 for i < n; confidence a fraction (0.95).  0, or -1 when
 * n == 0, a value is not positive or the confidence is out of (0.5, 1):
 * *out then holds n, and the geomean where the values allow it
 * (lo = hi = geomean; 1 when there is none).  One pair: 0, the ratio and
 * no interval (lo = hi = geomean).
 */
int lb_paired_ratio(const double *a, const double *b, size_t n, double confidence,
		    struct lb_paired_ratio *out);

/*
 * The Hodges-Lehmann estimate of a shift and its signed-rank confidence
 * interval, over differences d_i (for a ratio, the log ratios).
 *
 * The estimate is the median of the n(n+1)/2 Walsh averages
 * (d_i + d_j) / 2, i <= j; the interval is [W_(q), W_(M+1-q)] of the sorted
 * Walsh averages (M of them), q the smallest rank with P(W+ <= q - 1) >=
 * (1 - confidence) / 2 ... precisely R's wilcox.test(conf.int = TRUE)
 * choice: q = qsignrank(alpha / 2, n), at least 1, from the exact
 * distribution up to LB_SIGNRANK_EXACT_MAX pairs and the normal
 * approximation above.
 *
 * The k-th Walsh average is found without storing the M averages: d sorted,
 * the averages <= x are counted in O(n) with two pointers, and x is
 * bisected between the smallest and the largest average.
 */
struct lb_paired_hl {
	size_t n;            /* differences used */
	double estimate;     /* median of the Walsh averages */
	double lo, hi;       /* confidence interval of the shift */
	double confidence;   /* the interval's achieved coverage (>= the one asked when n allows) */
};

/*
 * d[0..n-1] finite (not modified); confidence in (0.5, 1).  0, or -1 when
 * n == 0, memory runs out or the confidence is out of range (*out then says
 * n and estimate = lo = hi = 0).  n == 1: the one value, interval of width 0.
 */
int lb_paired_hl(const double *d, size_t n, double confidence, struct lb_paired_hl *out);

/* The k-th smallest (1-based, 1 <= k <= n(n+1)/2) Walsh average of sorted[0..n-1]. */
double lb_walsh_kth(const double *sorted, size_t n, size_t k);

#endif /* LB_PAIRED_H */
