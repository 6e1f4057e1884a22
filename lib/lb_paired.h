/* SPDX-License-Identifier: MIT */
/*
 * lb_paired.h - the ratio of paired measurements, B_i / A_i, as a geometric
 * mean with a confidence interval: the mean of log(B_i / A_i) with Student's
 * t interval (n - 1 degrees of freedom), exponentiated.  Ratios multiply, so
 * their logarithms are what averages; the interval of a ratio is then
 * asymmetric around it, as it should be.
 */
#ifndef LB_PAIRED_H
#define LB_PAIRED_H

#include <stddef.h>

struct lb_paired_ratio {
	size_t n;
	double geomean;     /* exp(mean of log ratios) */
	double lo, hi;      /* the confidence interval of the ratio */
	double log_sd;      /* sample sd of the log ratios */
};

/*
 * a[i], b[i] > 0 for i < n; confidence a fraction (0.95).  0, or -1 when
 * n < 2, a value is not positive or the confidence is out of (0.5, 1):
 * *out then holds n and geomean only (lo = hi = geomean).
 */
int lb_paired_ratio(const double *a, const double *b, size_t n, double confidence,
		    struct lb_paired_ratio *out);

#endif /* LB_PAIRED_H */
