/* SPDX-License-Identifier: MIT */
/*
 * lb_stats.h - descriptive statistics for benchmark figures.
 *
 * lb_summary summarises n samples (repeats, or per-thread counts): mean,
 * sample standard deviation (n-1; 0 for n<2), median, min, max and the
 * coefficient of variation (sd/mean, 0 when mean is 0).
 *
 * lb_hist is a log-linear latency histogram (HDR-style: 2^k buckets split
 * into 16 linear sub-buckets, so any value is kept within 1/16 = 6.25 % of
 * its true size) over 64-bit values (ns or cycles).  Record is O(1) with no
 * allocation and no atomics: one histogram per thread, merged afterwards.
 *
 * Quantiles, one definition for every workload: the nearest rank.  The
 * q-quantile of n values is the r-th smallest, r = ceil(q n) clamped to
 * 1..n (Hyndman & Fan 1996, definition 1; R's quantile(x, q, type = 1):
 * the inverse of the empirical distribution function, no interpolation).
 * It is the one a histogram can give: it keeps only the bin of each value,
 * so its q-quantile is the bin that holds the r-th smallest, read at a
 * point of the bin its owner names (lb_hist: the bin's upper edge, clamped
 * to the max; aim7's log2 wait buckets: the upper edge; slab's gauge: the
 * bin's geometric middle).  The median is the one exception: lb_median is
 * the mean of the middle two for even n (R's median(), which is also
 * type 7 at q = 0.5), not the lower of them.
 */
#ifndef LB_STATS_H
#define LB_STATS_H

#include <stddef.h>
#include <stdint.h>

struct lb_summary {
	size_t n;
	double mean, sd, median, min, max, cov;
};

void lb_summarize(const double *samples, size_t n, struct lb_summary *out);

/* Median of v[0..n-1] (mean of the middle two for even n; 0 for n == 0).
 * Sorts v in place. */
double lb_median(double *v, size_t n);

/* The median of the finite values of v[0..n-1] (v is not changed); NAN
 * when there is none. */
double lb_median_finite(const double *v, size_t n);

/* The nearest rank of the q-quantile of n values (above): ceil(q n) in
 * 1..n (q <= 0 or NaN: 1; q >= 1: n); 0 when n == 0. */
uint64_t lb_quantile_rank(double q, uint64_t n);

/* The q-quantile of sorted[0..n-1] (ascending): sorted[rank - 1]; 0 when
 * n == 0. */
double lb_quantile(const double *sorted, size_t n, double q);

/* The bin of counts[0..nbins-1] that holds the rank-th smallest of the
 * values counted (rank >= 1); nbins when they are fewer than rank. */
size_t lb_bins_rank(const uint64_t *counts, size_t nbins, uint64_t rank);

/* The bin that holds the q-quantile of the values counted in
 * counts[0..nbins-1]; -1 when there is none. */
long lb_bins_quantile(const uint64_t *counts, size_t nbins, double q);

/* min/max ratio of per-thread counts, 1.0 = perfectly fair; 0 if n == 0. */
double lb_min_max_ratio(const double *samples, size_t n);

#define LB_HIST_SUB_BITS 4
#define LB_HIST_BUCKETS (64 * (1 << LB_HIST_SUB_BITS))

struct lb_hist {
	uint64_t count, max, min;
	uint64_t bucket[LB_HIST_BUCKETS];
};

void lb_hist_init(struct lb_hist *h);
void lb_hist_record(struct lb_hist *h, uint64_t value);
void lb_hist_merge(struct lb_hist *into, const struct lb_hist *from);
/* The value at quantile q in [0,1] (upper edge of its bucket, clamped to max);
 * 0 for an empty histogram.  q = 1 returns the exact max. */
uint64_t lb_hist_quantile(const struct lb_hist *h, double q);

/*
 * The quantile q of h (as lb_hist_quantile) with a distribution-free
 * interval [*lo, *hi]: the order statistics at ranks about
 * n q -+ z sqrt(n q (1 - q)), the upper one plus 1 (the binomial count of
 * values below the quantile, normal approximation; z = 1.96 for 95 %),
 * read as lb_hist_quantile reads them: the quantiles
 * (n q - half) / n and (n q + half + 1) / n, clamped to [0, 1].  All three
 * 0 for an empty histogram.
 */
uint64_t lb_hist_quantile_ci(const struct lb_hist *h, double q, double z, uint64_t *lo,
			     uint64_t *hi);

#endif /* LB_STATS_H */
