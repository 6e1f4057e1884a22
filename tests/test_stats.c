/* SPDX-License-Identifier: MIT */
/* test_stats.c - lb_summarize, lb_min_max_ratio and the latency histogram. */
#include "lb_stats.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>

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

int main(void)
{
	tap_diag("test_stats: samples=%d sub-buckets=%d", NSAMPLES, 1 << LB_HIST_SUB_BITS);
	test_summary();
	test_ratio();
	test_hist_small();
	test_hist_error_bound();
	test_hist_quantiles();
	test_hist_max();
	return tap_done();
}
