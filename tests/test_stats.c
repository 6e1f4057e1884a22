/* SPDX-License-Identifier: MIT */
/*
 * test_stats.c - lb_summarize, lb_min_max_ratio, the latency histogram, and
 * the one quantile family (lib/lb_stats.h): the nearest-rank definition
 * against published worked examples, binned and histogram quantiles against
 * it, the quantile interval by hand and by its binomial coverage.
 */
#include "lb_stats.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NSAMPLES 200000

/* Equal up to rounding. */
static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (1 + fabs(b));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* xorshift64*: deterministic, good enough for a synthetic distribution. */
static uint64_t rng(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static void test_summary(void)
{
	static const double even[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	static const double odd[] = { 3, 1, 2 };
	static const double one[] = { 42 };
	struct lb_summary s;

	lb_summarize(even, 8, &s);
	tap_ok(s.n == 8 && near(s.mean, 5) && near(s.median, 4.5), "even n: mean 5, median 4.5 (got %g, %g)",
	       s.mean, s.median);
	tap_ok(near(s.sd, sqrt(32.0 / 7)), "even n: sample sd sqrt(32/7) (got %.12g)", s.sd);
	tap_ok(near(s.min, 2) && near(s.max, 9), "even n: min 2, max 9");
	tap_ok(near(s.cov, sqrt(32.0 / 7) / 5), "even n: cov = sd / mean (got %g)", s.cov);

	lb_summarize(odd, 3, &s);
	tap_ok(near(s.mean, 2) && near(s.median, 2) && near(s.sd, 1), "odd n: mean 2, median 2, sd 1 (got %g %g %g)",
	       s.mean, s.median, s.sd);

	lb_summarize(one, 1, &s);
	tap_ok(s.n == 1 && near(s.mean, 42) && near(s.median, 42) && s.sd == 0 && s.cov == 0,
	       "n=1: mean = median = 42, sd = cov = 0");

	lb_summarize(NULL, 0, &s);
	tap_ok(s.n == 0 && s.mean == 0 && s.sd == 0 && s.cov == 0, "n=0: all zero");

	double zeros[] = { 0, 0, 0 };
	lb_summarize(zeros, 3, &s);
	tap_ok(s.cov == 0 && !isnan(s.cov), "mean 0: cov is 0, not NaN");
}

static void test_ratio(void)
{
	static const double counts[] = { 50, 100, 75 };
	static const double equal[] = { 7, 7 };
	tap_ok(near(lb_min_max_ratio(counts, 3), 0.5), "min/max ratio of 50,100,75 is 0.5");
	tap_ok(near(lb_min_max_ratio(equal, 2), 1.0), "min/max ratio of equal counts is 1");
	tap_ok(lb_min_max_ratio(counts, 0) == 0, "min/max ratio of nothing is 0");
}

static void test_hist_small(void)
{
	struct lb_hist h;
	bool exact = true;
	lb_hist_init(&h);
	tap_ok(lb_hist_quantile(&h, 0.5) == 0 && h.count == 0, "empty histogram: quantile 0");
	for (uint64_t v = 0; v < 32; v++)
		lb_hist_record(&h, v);
	/* 32 values 0..31, all in exact buckets: the k-th smallest is k-1. */
	for (uint64_t k = 1; k <= 32; k++)
		exact &= lb_hist_quantile(&h, (double)k / 32) == k - 1;
	tap_ok(exact, "values 0..31 are exact");
	tap_ok(h.min == 0 && h.max == 31 && h.count == 32, "min/max/count tracked");
}

/*
 * Each value v alone with UINT64_MAX: the median is the upper edge of v's
 * bucket (not clamped), which must be within 1/16 above v.
 */
static void test_hist_error_bound(void)
{
	bool ok = true;
	uint64_t worst = 0, s = 1;
	for (int i = 0; i < 20000 && ok; i++) {
		uint64_t v;
		if (i < 64 * 3) { /* 2^k - 1, 2^k, 2^k + 1 for every k */
			v = ((uint64_t)1 << (i / 3)) + (uint64_t)(i % 3) - 1;
		} else {
			unsigned int shift = (unsigned int)(rng(&s) % 64);
			v = rng(&s) >> shift;
		}
		struct lb_hist h;
		lb_hist_init(&h);
		lb_hist_record(&h, v);
		lb_hist_record(&h, UINT64_MAX);
		uint64_t got = lb_hist_quantile(&h, 0.5);
		if (got < v || got - v > v / 16) {
			ok = false;
			worst = v;
		}
	}
	if (!ok)
		tap_diag("first failing value %llu", (unsigned long long)worst);
	tap_ok(ok, "every bucket's upper edge is within v/16 above v");
}

static void test_hist_quantiles(void)
{
	static const double qs[] = { 0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999 };
	uint64_t *v = malloc(NSAMPLES * sizeof(*v)), s = 12345;
	struct lb_hist all, a, b;
	bool ok = true;

	lb_hist_init(&all);
	lb_hist_init(&a);
	lb_hist_init(&b);
	/* Log-uniform over 1 .. ~2^34 ns plus a cluster near 100 ns. */
	for (int i = 0; i < NSAMPLES; i++) {
		uint64_t r = rng(&s);
		v[i] = i % 4 ? (r >> 30) >> (r % 34) : 90 + r % 20;
		lb_hist_record(&all, v[i]);
		lb_hist_record(i % 3 ? &a : &b, v[i]);
	}
	qsort(v, NSAMPLES, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		size_t rank = qs[i] > 0 ? (size_t)ceil(qs[i] * NSAMPLES) : 1;
		uint64_t exact = v[rank - 1], got = lb_hist_quantile(&all, qs[i]);
		bool in = got >= exact && (double)(got - exact) <= exact * 0.0625;
		if (!in)
			tap_diag("q=%g exact %llu hist %llu", qs[i], (unsigned long long)exact,
				 (unsigned long long)got);
		ok &= in;
	}
	tap_ok(ok, "quantiles within 6.25%% of exact on %d synthetic samples", NSAMPLES);
	tap_ok(lb_hist_quantile(&all, 1.0) == v[NSAMPLES - 1], "q=1 is the exact max (%llu)",
	       (unsigned long long)v[NSAMPLES - 1]);

	lb_hist_merge(&a, &b);
	bool same = a.count == all.count && a.min == all.min && a.max == all.max;
	for (int i = 0; i < LB_HIST_BUCKETS; i++)
		same &= a.bucket[i] == all.bucket[i];
	tap_ok(same, "merge of two halves equals the whole");
	tap_ok(lb_hist_quantile(&a, 0.99) == lb_hist_quantile(&all, 0.99), "merged p99 equals whole p99");
	free(v);
}

static void test_hist_max(void)
{
	struct lb_hist h;
	lb_hist_init(&h);
	lb_hist_record(&h, 1000);
	lb_hist_record(&h, 1001);
	lb_hist_record(&h, 123456789);
	tap_ok(lb_hist_quantile(&h, 1.0) == 123456789, "max is exact, not a bucket edge");
	tap_ok(lb_hist_quantile(&h, 0.9) == 123456789, "high quantile clamped to max");
	lb_hist_record(&h, UINT64_MAX);
	tap_ok(lb_hist_quantile(&h, 1.0) == UINT64_MAX, "UINT64_MAX recorded and returned");
}

/* The nearest-rank method's worked examples of Wikipedia's "Percentile"
 * article (the same values as R's quantile(x, p, type = 1)). */
static void test_quantile_published(void)
{
	static const double a[] = { 15, 20, 35, 40, 50 };
	static const double b[] = { 3, 6, 7, 8, 8, 10, 13, 15, 16, 20 };
	static const double c[] = { 3, 6, 7, 8, 8, 9, 10, 13, 15, 16, 20 };
	static const struct {
		const double *v;
		size_t n;
		double q, want;
	} ex[] = {
		{ a, 5, 0.05, 15 }, { a, 5, 0.30, 20 }, { a, 5, 0.40, 20 }, { a, 5, 0.50, 35 },
		{ a, 5, 1.00, 50 }, { b, 10, 0.25, 7 }, { b, 10, 0.50, 8 }, { b, 10, 0.75, 15 },
		{ b, 10, 1.00, 20 }, { c, 11, 0.25, 7 }, { c, 11, 0.50, 9 }, { c, 11, 0.75, 15 },
		{ c, 11, 1.00, 20 },
	};
	bool ok = true;
	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		double got = lb_quantile(ex[i].v, ex[i].n, ex[i].q);
		if (got != ex[i].want) {
			tap_diag("n %zu q %g: %g, published %g", ex[i].n, ex[i].q, got, ex[i].want);
			ok = false;
		}
	}
	tap_ok(ok, "nearest rank: the 13 published percentiles of 3 lists");
	tap_ok(lb_quantile(a, 5, 0) == 15 && lb_quantile(a, 5, NAN) == 15 &&
		       lb_quantile(a, 5, 2) == 50 && lb_quantile(a, 0, 0.5) == 0 &&
		       lb_quantile_rank(0.5, 0) == 0,
	       "q 0 or NaN: the smallest; q above 1: the largest; no values: 0");

	/* The callers' q times n rounds to the exact rank for every n up to
	 * 2e6: ceil(q n) equals the integer ceiling of (q in per mille) n / 1000. */
	static const unsigned int per_mille[] = { 100, 500, 900, 990, 999 };
	bool exact = true;
	for (size_t k = 0; k < 5; k++)
		for (uint64_t n = 1; n <= 2000000 && exact; n++) {
			uint64_t want = (per_mille[k] * n + 999) / 1000;
			if (lb_quantile_rank(per_mille[k] / 1000.0, n) != want) {
				tap_diag("q %g n %llu: rank %llu, exact %llu", per_mille[k] / 1000.0,
					 (unsigned long long)n,
					 (unsigned long long)lb_quantile_rank(per_mille[k] / 1000.0, n),
					 (unsigned long long)want);
				exact = false;
			}
		}
	tap_ok(exact, "ranks of q 0.1, 0.5, 0.9, 0.99, 0.999 exact for n 1..2e6");
}

/* Medians: the mean of the middle two, and of the finite values only. */
static void test_median(void)
{
	double even[] = { 4, 1, 3, 2 }, odd[] = { 5, 1, 3 };
	tap_ok(lb_median(even, 4) == 2.5 && lb_median(odd, 3) == 3 && lb_median(odd, 0) == 0,
	       "median of 1..4 is 2.5 (R's median()), of 1,3,5 is 3, of nothing 0");
	const double v[] = { 7, NAN, 1, INFINITY, 3, -INFINITY, 5 };
	double before[7];
	memcpy(before, v, sizeof(v));
	double med = lb_median_finite(v, 7);
	const double none[] = { NAN, INFINITY };
	tap_ok(med == 4 && memcmp(before, v, sizeof(v)) == 0 && isnan(lb_median_finite(none, 2)) &&
		       isnan(lb_median_finite(v, 0)),
	       "median of the finite values: %g (4), input unchanged; none finite: NaN", med);
}

/* Counts in bins: the bin of the nearest rank, the same as on the values. */
static void test_bins(void)
{
	const uint64_t counts[] = { 0, 3, 0, 2, 5 }; /* the values 1,1,1,3,3,4,4,4,4,4 */
	const double values[] = { 1, 1, 1, 3, 3, 4, 4, 4, 4, 4 };
	bool same = true;
	for (int k = 0; k <= 100; k++) {
		double q = k / 100.0;
		long bin = lb_bins_quantile(counts, 5, q);
		same &= (double)bin == lb_quantile(values, 10, q);
	}
	const uint64_t zero[4] = { 0 };
	tap_ok(same && lb_bins_quantile(zero, 4, 0.5) == -1 && lb_bins_rank(counts, 5, 11) == 5 &&
		       lb_bins_rank(counts, 5, 4) == 3,
	       "binned quantiles equal lb_quantile on the values, q 0..1; empty: -1; a rank "
	       "past the counts: nbins");
}

/*
 * The quantile interval on 30 exact values 1..30, q 0.5, z 1.96: half
 * width 1.96 sqrt(7.5) = 5.3677, ranks ceil(15 - 5.3677) = 10 and
 * ceil(15 + 5.3677 + 1) = 22, so [10, 22] around 15.  Its coverage is
 * P(10 <= B <= 21), B ~ Bin(30, 1/2) the values below the median: 0.9706,
 * at least 0.95 (the exact tables' [10, 21] has 0.9572: the approximation
 * is one rank wider above).
 */
static void test_quantile_ci(void)
{
	struct lb_hist h;
	uint64_t lo, hi;
	lb_hist_init(&h);
	uint64_t v = lb_hist_quantile_ci(&h, 0.5, 1.96, &lo, &hi);
	bool empty = v == 0 && lo == 0 && hi == 0;
	for (uint64_t x = 1; x <= 30; x++)
		lb_hist_record(&h, x);
	v = lb_hist_quantile_ci(&h, 0.5, 1.96, &lo, &hi);
	double cover = 0;
	for (int k = 10; k <= 21; k++) {
		double c = 1; /* C(30, k) */
		for (int i = 1; i <= k; i++)
			c = c * (30 - k + i) / i;
		cover += c / 1073741824.0;
	}
	tap_ok(empty && v == 15 && lo == 10 && hi == 22 && cover >= 0.95 && fabs(cover - 0.97055) < 1e-5,
	       "median of 1..30: %llu [%llu, %llu] (15 [10, 22]), binomial coverage %.4f",
	       (unsigned long long)v, (unsigned long long)lo, (unsigned long long)hi, cover);
	v = lb_hist_quantile_ci(&h, 0.99, 1.96, &lo, &hi);
	tap_ok(v == 30 && lo == 29 && hi == 30, "p99 of 30 values: %llu [%llu, %llu], clamped to the max",
	       (unsigned long long)v, (unsigned long long)lo, (unsigned long long)hi);
}

int main(void)
{
	tap_diag("test_stats: samples=%d sub-buckets=%d", NSAMPLES, 1 << LB_HIST_SUB_BITS);
	test_summary();
	test_ratio();
	test_hist_small();
	test_hist_error_bound();
	test_hist_quantiles();
	test_hist_max();
	test_quantile_published();
	test_median();
	test_bins();
	test_quantile_ci();
	return tap_done();
}
