/* SPDX-License-Identifier: MIT */
/*
 * lb_paired.c - the paired-ratio estimators (see lb_paired.h): the
 * geometric mean with its t interval, and the Hodges-Lehmann estimate with
 * its signed-rank interval.
 */
#include "lb_paired.h"
#include "lb_signrank.h"
#include "lb_ttest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* CoV of the ratios themselves (not their logs), in %: each ratio read back
 * as exp of its log, the way aim7 printed it. */
static double ratio_cov_pct(const double *a, const double *b, size_t n)
{
	double rs = 0, rv = 0;
	for (size_t i = 0; i < n; i++)
		rs += exp(log(b[i] / a[i]));
	double rm = rs / (double)n;
	for (size_t i = 0; i < n; i++) {
		double r = exp(log(b[i] / a[i]));
		rv += (r - rm) * (r - rm);
	}
	return rm > 0 ? 100.0 * sqrt(rv / (double)(n - 1)) / rm : 0;
}

int lb_paired_ratio(const double *a, const double *b, size_t n, double confidence,
		    struct lb_paired_ratio *out)
{
	double sum = 0, sq = 0;
	*out = (struct lb_paired_ratio){ .n = n, .geomean = 1, .lo = 1, .hi = 1 };
	for (size_t i = 0; i < n; i++)
		if (!(a[i] > 0) || !(b[i] > 0))
			return -1; /* a side that did no work: no ratio */
	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		sum += log(b[i] / a[i]);
	double mean = sum / (double)n;
	out->geomean = out->lo = out->hi = exp(mean);
	if (!(confidence > 0.5 && confidence < 1))
		return -1;
	if (n < 2)
		return 0; /* one pair: the ratio, no interval */
	for (size_t i = 0; i < n; i++) {
		double dev = log(b[i] / a[i]) - mean;
		sq += dev * dev;
	}
	out->log_sd = sqrt(sq / (double)(n - 1));
	double half = lb_t_quantile(1 - (1 - confidence) / 2, (double)(n - 1)) * out->log_sd /
		      sqrt((double)n);
	out->lo = exp(mean - half);
	out->hi = exp(mean + half);
	out->cov_pct = ratio_cov_pct(a, b, n);
	return 0;
}

/* ---- Hodges-Lehmann ---------------------------------------------------- */

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Walsh averages (s_i + s_j) / 2, i <= j, that are <= x: the count, and in
 * *largest the largest of them (-inf when none). */
static size_t walsh_at_most(const double *s, size_t n, double x, double *largest)
{
	size_t count = 0;
	size_t j = n; /* one past the largest j with s_i + s_j <= 2x, for the current i */
	*largest = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		/* s is sorted, so the bound on j only falls as i rises. */
		while (j > 0 && s[i] + s[j - 1] > 2 * x)
			j--;
		if (j <= i)
			break;
		count += j - i;
		double top = (s[i] + s[j - 1]) / 2;
		*largest = top > *largest ? top : *largest;
	}
	return count;
}

double lb_walsh_kth(const double *sorted, size_t n, size_t k)
{
	double lo = sorted[0], hi = sorted[n - 1], largest;
	/* Invariant: fewer than k averages <= lo (unless lo is the smallest and
	 * k == 1), at least k <= hi.  100 halvings leave hi within one rounding
	 * step of the answer; the snap below makes it an exact average. */
	if (walsh_at_most(sorted, n, lo, &largest) >= k)
		return largest;
	for (int it = 0; it < 100; it++) {
		double mid = lo + (hi - lo) / 2;
		if (mid <= lo || mid >= hi)
			break;
		if (walsh_at_most(sorted, n, mid, &largest) >= k)
			hi = mid;
		else
			lo = mid;
	}
	walsh_at_most(sorted, n, hi, &largest);
	return largest;
}

/* Standard normal upper quantile: z with P(Z > z) = p, 0 < p < 0.5, by
 * bisection on erfc (no closed form; 80 halvings is far below 1e-12). */
static double normal_upper_quantile(double p)
{
	double lo = 0, hi = 40;
	for (int it = 0; it < 80; it++) {
		double mid = (lo + hi) / 2;
		if (0.5 * erfc(mid / sqrt(2.0)) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* The rank q of the interval's lower end (R's qsignrank(alpha / 2, n), at
 * least 1) and the coverage [W_(q), W_(M+1-q)] achieves. */
static size_t interval_rank(size_t n, double alpha, double *coverage)
{
	size_t total = n * (n + 1) / 2, q = 0;
	if (n <= LB_SIGNRANK_EXACT_MAX) {
		while (q < total && lb_signrank_cdf(n, (double)q) < alpha / 2)
			q++;
		if (q == 0)
			q = 1;
		*coverage = 1 - 2 * lb_signrank_cdf(n, (double)q - 1);
		return q;
	}
	double mean = (double)total / 2;
	double sd = sqrt((double)n * (double)(n + 1) * (double)(2 * n + 1) / 24);
	double z = normal_upper_quantile(alpha / 2);
	/* Smallest q with Phi((q + 1/2 - mean) / sd) >= alpha / 2. */
	double qd = ceil(mean - z * sd - 0.5);
	q = qd < 1 ? 1 : (size_t)qd;
	*coverage = 1 - erfc(-((double)q - 0.5 - mean) / sd / sqrt(2.0));
	return q;
}

int lb_paired_hl(const double *d, size_t n, double confidence, struct lb_paired_hl *out)
{
	*out = (struct lb_paired_hl){ .n = n };
	if (n == 0 || !(confidence > 0.5 && confidence < 1))
		return -1;
	double *s = malloc(n * sizeof(double));
	if (!s)
		return -1;
	memcpy(s, d, n * sizeof(double));
	qsort(s, n, sizeof(double), by_value);
	size_t total = n * (n + 1) / 2;
	if (total % 2)
		out->estimate = lb_walsh_kth(s, n, (total + 1) / 2);
	else
		out->estimate = (lb_walsh_kth(s, n, total / 2) +
				 lb_walsh_kth(s, n, total / 2 + 1)) / 2;
	size_t q = interval_rank(n, 1 - confidence, &out->confidence);
	if (q > total)
		q = total;
	out->lo = lb_walsh_kth(s, n, q);
	out->hi = lb_walsh_kth(s, n, total + 1 - q);
	free(s);
	return 0;
}
