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

#endif /* LB_STATS_H */
