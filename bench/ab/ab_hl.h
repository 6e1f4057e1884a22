/* SPDX-License-Identifier: MIT */
/*
 * ab_hl.h - the Hodges-Lehmann estimate of a paired shift and its
 * signed-rank confidence interval, the robust summary `lockbench ab` gives
 * of the per-pair log ratios log(B_i / A_i).
 *
 * The estimate is the median of the n(n+1)/2 Walsh averages
 * (d_i + d_j) / 2, i <= j; the interval is [W_(q), W_(M+1-q)] of the sorted
 * Walsh averages (M of them), q the smallest rank with P(W+ <= q - 1) >=
 * (1 - confidence) / 2 ... precisely R's wilcox.test(conf.int = TRUE)
 * choice: q = qsignrank(alpha / 2, n), at least 1, from the exact
 * distribution up to LB_SIGNRANK_EXACT_MAX pairs and the normal
 * approximation above.  It is the set of shifts the two-sided signed-rank
 * test does not reject, so it agrees with the verdict; a few pairs that a
 * preemption or a host migration spoilt move it by a rank, not by their
 * size, as they move a mean.
 *
 * The k-th Walsh average is found without storing the M averages: d sorted,
 * the averages <= x are counted in O(n) with two pointers, and x is
 * bisected between the smallest and the largest average.
 */
#ifndef LB_AB_HL_H
#define LB_AB_HL_H

#include <stddef.h>

struct lb_ab_hl {
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
int lb_ab_hodges_lehmann(const double *d, size_t n, double confidence, struct lb_ab_hl *out);

/* The k-th smallest (1-based, 1 <= k <= n(n+1)/2) Walsh average of sorted[0..n-1]. */
double lb_ab_walsh_kth(const double *sorted, size_t n, size_t k);

#endif /* LB_AB_HL_H */
