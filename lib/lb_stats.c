/* SPDX-License-Identifier: MIT */
/*
 * lb_stats.c - summaries of repeated measurements and the log-linear
 * latency histogram.
 *
 * Histogram layout (LB_HIST_SUB_BITS = 4, so 16 sub-buckets per octave):
 *
 *   value v                 bucket index                 bucket width
 *   0 .. 15                 v                            1 (exact)
 *   2^m .. 2^(m+1)-1, m>=4  (m-3)*16 + ((v >> (m-4)) & 15) 2^(m-4)
 *
 * So 16..31 are still exact (indices 16..31), 32..63 go in pairs (32..47),
 * and so on up to m = 63 (indices 960..975).  A bucket starting at
 * (16 + s) << k has width 1 << k, hence any value is reported at most
 * 1/16 = 6.25 % above its true size.  Indices 976..1023 stay unused; the
 * header sizes the array as 64 * 16 to keep the arithmetic obvious.
 */
#include "lb_stats.h"
#include "lb_die.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUB_COUNT (1u << LB_HIST_SUB_BITS)

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double lb_median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void lb_summarize(const double *samples, size_t n, struct lb_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->n = n;
	if (n == 0)
		return;
	double sum = 0, min = samples[0], max = samples[0];
	for (size_t i = 0; i < n; i++) {
		sum += samples[i];
		min = samples[i] < min ? samples[i] : min;
		max = samples[i] > max ? samples[i] : max;
	}
	out->mean = sum / (double)n;
	out->min = min;
	out->max = max;
	if (n > 1) {
		/* Second pass about the mean: stable where sum-of-squares is not. */
		double ss = 0;
		for (size_t i = 0; i < n; i++)
			ss += (samples[i] - out->mean) * (samples[i] - out->mean);
		out->sd = sqrt(ss / (double)(n - 1));
	}
	out->cov = out->mean != 0 ? out->sd / out->mean : 0;

	double *copy = malloc(n * sizeof(*copy));
	if (!copy)
		lb_die(ENOMEM, "lb_summarize");
	memcpy(copy, samples, n * sizeof(*copy));
	out->median = lb_median(copy, n);
	free(copy);
}

double lb_median_finite(const double *v, size_t n)
{
	double *copy = malloc((n ? n : 1) * sizeof(*copy));
	if (!copy)
		lb_die(ENOMEM, "lb_median_finite");
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			copy[m++] = v[i];
	double med = m ? lb_median(copy, m) : NAN;
	free(copy);
	return med;
}

uint64_t lb_quantile_rank(double q, uint64_t n)
{
	if (n == 0)
		return 0;
	if (!(q < 1)) /* also q = 1 exactly: no rounding past n */
		return q >= 1 ? n : 1; /* NaN: the smallest */
	uint64_t rank = q > 0 ? (uint64_t)ceil(q * (double)n) : 1;
	return rank < 1 ? 1 : rank > n ? n : rank;
}

double lb_quantile(const double *sorted, size_t n, double q)
{
	return n ? sorted[lb_quantile_rank(q, n) - 1] : 0;
}

size_t lb_bins_rank(const uint64_t *counts, size_t nbins, uint64_t rank)
{
	uint64_t seen = 0;
	for (size_t i = 0; i < nbins; i++) {
		seen += counts[i];
		if (seen >= rank)
			return i;
	}
	return nbins;
}

long lb_bins_quantile(const uint64_t *counts, size_t nbins, double q)
{
	uint64_t total = 0;
	for (size_t i = 0; i < nbins; i++)
		total += counts[i];
	if (total == 0)
		return -1;
	return (long)lb_bins_rank(counts, nbins, lb_quantile_rank(q, total));
}

double lb_min_max_ratio(const double *samples, size_t n)
{
	if (n == 0)
		return 0;
	double min = samples[0], max = samples[0];
	for (size_t i = 1; i < n; i++) {
		min = samples[i] < min ? samples[i] : min;
		max = samples[i] > max ? samples[i] : max;
	}
	/* All zero: nobody made progress, which is no evidence of fairness. */
	return max > 0 ? min / max : 0;
}

/* Index of the most significant set bit; v != 0. */
static inline unsigned int msb64(uint64_t v)
{
#if defined(__GNUC__)
	return 63u - (unsigned int)__builtin_clzll(v);
#else
	unsigned int m = 0;
	for (unsigned int s = 32; s; s >>= 1) {
		if (v >> s) {
			v >>= s;
			m += s;
		}
	}
	return m;
#endif
}

static inline unsigned int hist_index(uint64_t v)
{
	if (v < SUB_COUNT)
		return (unsigned int)v;
	unsigned int m = msb64(v), shift = m - LB_HIST_SUB_BITS;
	return (shift + 1) * SUB_COUNT + (unsigned int)((v >> shift) & (SUB_COUNT - 1));
}

/* Largest value that lands in bucket i. */
static uint64_t hist_upper(unsigned int i)
{
	if (i < SUB_COUNT)
		return i;
	unsigned int shift = i / SUB_COUNT - 1, sub = i % SUB_COUNT;
	uint64_t lower = (uint64_t)(SUB_COUNT + sub) << shift;
	return lower + ((uint64_t)1 << shift) - 1;
}

void lb_hist_init(struct lb_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void lb_hist_record(struct lb_hist *h, uint64_t value)
{
	h->bucket[hist_index(value)]++;
	h->count++;
	if (value > h->max)
		h->max = value;
	if (value < h->min)
		h->min = value;
}

void lb_hist_merge(struct lb_hist *into, const struct lb_hist *from)
{
	for (unsigned int i = 0; i < LB_HIST_BUCKETS; i++)
		into->bucket[i] += from->bucket[i];
	into->count += from->count;
	if (from->max > into->max)
		into->max = from->max;
	if (from->min < into->min)
		into->min = from->min;
}

uint64_t lb_hist_quantile(const struct lb_hist *h, double q)
{
	if (h->count == 0)
		return 0;
	if (!(q < 1)) /* also catches NaN */
		return h->max;
	size_t i = lb_bins_rank(h->bucket, LB_HIST_BUCKETS, lb_quantile_rank(q, h->count));
	if (i >= LB_HIST_BUCKETS)
		return h->max;
	uint64_t up = hist_upper((unsigned int)i);
	return up < h->max ? up : h->max;
}

uint64_t lb_hist_quantile_ci(const struct lb_hist *h, double q, double z, uint64_t *lo,
			     uint64_t *hi)
{
	double n = (double)h->count, half = z * sqrt(n * q * (1 - q));
	*lo = *hi = 0;
	if (!h->count)
		return 0;
	double qlo = (n * q - half) / n, qhi = (n * q + half + 1) / n;
	*lo = lb_hist_quantile(h, qlo < 0 ? 0 : qlo);
	*hi = lb_hist_quantile(h, qhi > 1 ? 1 : qhi);
	return lb_hist_quantile(h, q);
}
