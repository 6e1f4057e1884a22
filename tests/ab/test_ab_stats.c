/* SPDX-License-Identifier: MIT */
/*
 * test_ab_stats.c - the paired statistics of `lockbench ab` on fixed data:
 * Wilcoxon's signed-rank test against published values, the geometric-mean
 * ratio and its interval (lib/lb_paired.h), the Hodges-Lehmann estimate
 * and its signed-rank interval (bench/ab/ab_hl.h) against brute force and
 * by hand, the cell ratio's robustness to a few spoilt pairs, and the
 * ABBA/BAAB slice order.
 */
#include "../tap.h"
#include "ab/ab.h"
#include "lb_paired.h"
#include "lb_signrank.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Two-sided 5 % critical values of the signed-rank statistic (the smaller
 * rank sum), n = 6..30, as printed in the usual tables (e.g. Wilcoxon,
 * Katti & Wilcox 1970; reproduced in most statistics textbooks): reject
 * when T <= the value. */
static const int crit_05[] = { 0, 2, 3, 5, 8, 10, 13, 17, 21, 25, 29, 34, 40, 46, 52,
			       58, 65, 73, 81, 89, 98, 107, 116, 126, 137 };

/* Brute force over all 2^n sign patterns: P(W+ <= w). */
static double brute_cdf(unsigned int n, double w)
{
	unsigned long below = 0, total = 1ul << n;
	for (unsigned long mask = 0; mask < total; mask++) {
		unsigned int sum = 0;
		for (unsigned int r = 1; r <= n; r++)
			sum += (mask >> (r - 1) & 1) ? r : 0;
		below += sum <= w;
	}
	return (double)below / (double)total;
}

static void test_signrank(void)
{
	bool all = true;
	for (unsigned int i = 0; i < sizeof(crit_05) / sizeof(crit_05[0]); i++) {
		unsigned int n = 6 + i;
		double at = 2 * lb_signrank_cdf(n, crit_05[i]);
		double above = 2 * lb_signrank_cdf(n, crit_05[i] + 1);
		if (!(at <= 0.05 && above > 0.05)) {
			tap_diag("n %u: 2P(T<=%d) = %.5f, 2P(T<=%d) = %.5f", n, crit_05[i], at,
				 crit_05[i] + 1, above);
			all = false;
		}
	}
	tap_ok(all, "exact distribution reproduces the published 5 %% critical values, n 6..30");
	tap_ok(2 * lb_signrank_cdf(5, 0) > 0.05, "n 5: no 5 %% two-sided rejection is possible "
	       "(2P(T<=0) = %.4f)", 2 * lb_signrank_cdf(5, 0));
	bool same = true;
	for (unsigned int n = 1; n <= 16; n++)
		for (unsigned int w = 0; w <= n * (n + 1) / 2; w += 3)
			same &= fabs(lb_signrank_cdf(n, w) - brute_cdf(n, w)) < 1e-12;
	tap_ok(same, "exact cdf equals brute force over the sign patterns, n 1..16");

	/* Darwin's Zea mays data as differences (cross- minus self-fertilised
	 * heights, eighths of an inch), the worked example of SciPy's
	 * wilcoxon(): statistic 24, two-sided exact p = 0.041259765625. */
	const double corn[] = { 6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75 };
	struct lb_signrank r;
	lb_signrank_test(corn, 15, &r);
	tap_ok(r.exact && r.w_minus == 24 && fabs(r.p - 0.041259765625) < 1e-12,
	       "Darwin's corn: W- %.0f, exact p %.12f (published 24, 0.041259765625)", r.w_minus,
	       r.p);

	/* Ties and zeros: the normal approximation with the tie correction.
	 * d: 0 dropped; |d| = 1,1,2,2,2,3,4,5 -> ranks 1.5,1.5,4,4,4,6,7,8;
	 * W+ (positives 1,2,2,3,4,5) = 1.5+4+4+6+7+8 = 30.5, n = 8, mean 18,
	 * var = 8*9*17/24 - ((8-2) + (27-3))/48 = 51 - 0.625 = 50.375,
	 * z = (30.5 - 18 - 0.5)/sqrt(50.375) = 1.69072, p = 0.09089. */
	const double tied[] = { 0, 1, -1, 2, 2, -2, 3, 4, 5 };
	lb_signrank_test(tied, 9, &r);
	tap_ok(!r.exact && r.ties && r.zeros == 1 && r.n == 8 && r.w_plus == 30.5 &&
		       fabs(r.z - 1.69072) < 1e-4 && fabs(r.p - 0.09089) < 1e-4,
	       "ties and a zero: W+ %.1f, z %.5f, p %.5f (by hand 30.5, 1.69072, 0.09089)",
	       r.w_plus, r.z, r.p);

	/* Large n without ties: the approximation.  Ranks 1,4,...,58 negative:
	 * W+ = 1830 - 590 = 1240, mean 915, var 60*61*121/24 = 18452.5,
	 * z = 324.5/sqrt(18452.5) = 2.38884, p = 0.016902. */
	double d[60];
	for (int i = 0; i < 60; i++)
		d[i] = (i + 1) * (i % 3 == 0 ? -1.0 : 1.0);
	lb_signrank_test(d, 60, &r);
	tap_ok(!r.exact && r.w_plus == 1240 && fabs(r.z - 2.38884) < 1e-4 &&
		       fabs(r.p - 0.016902) < 1e-5,
	       "n 60 (approximation): W+ %.0f, z %.5f, p %.6f (by hand 1240, 2.38884, 0.016902)",
	       r.w_plus, r.z, r.p);
	double none[3] = { 0, 0, 0 };
	lb_signrank_test(none, 3, &r);
	tap_ok(r.n == 0 && r.p == 1, "all differences zero: nothing ranked, p 1");
}

static void test_ratio(void)
{
	const double a[] = { 10, 20, 40, 10 }, b[] = { 11, 22, 44, 11 };
	struct lb_paired_ratio r = { 0 };
	int rc = lb_paired_ratio(a, b, 4, 0.95, &r);
	tap_ok(rc == 0 && fabs(r.geomean - 1.1) < 1e-12 &&
		       fabs(r.lo - 1.1) < 1e-12 && fabs(r.hi - 1.1) < 1e-12,
	       "constant 10 %% ratio at any scale: geomean %.6f, interval [%.6f, %.6f]", r.geomean,
	       r.lo, r.hi);
	/* log ratios ln2, 0: mean ln2/2, sd ln2/sqrt2, t(0.975, 1) = 12.7062. */
	const double a2[] = { 1, 1 }, b2[] = { 2, 1 };
	lb_paired_ratio(a2, b2, 2, 0.95, &r);
	double half = 12.7062047 * (log(2) / sqrt(2)) / sqrt(2);
	tap_ok(fabs(r.geomean - sqrt(2)) < 1e-9 && fabs(log(r.hi) - (log(2) / 2 + half)) < 1e-5 &&
		       fabs(log(r.lo) - (log(2) / 2 - half)) < 1e-5,
	       "two pairs: geomean %.6f (sqrt 2), interval [%.4f, %.4f] from t(0.975, 1)", r.geomean,
	       r.lo, r.hi);
	const double zero[] = { 0, 1 };
	tap_ok(lb_paired_ratio(zero, b2, 2, 0.95, &r) == -1, "a value of 0 is refused");
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Every Walsh average, sorted: what lb_ab_walsh_kth must reproduce. */
static size_t all_walsh(const double *s, size_t n, double *out)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i; j < n; j++)
			out[m++] = (s[i] + s[j]) / 2;
	qsort(out, m, sizeof(double), by_value);
	return m;
}

static void test_hodges_lehmann(void)
{
	/* By hand: d = 1, 2, 3 -> Walsh averages 1, 1.5, 2, 2, 2.5, 3; median
	 * 2.  n = 3: P(W+ <= 0) = 1/8 >= 0.025, so q = 1 (R's rule): the
	 * interval is [1, 3], coverage 1 - 2 P(W+ <= 0) = 0.75. */
	const double d3[] = { 3, 1, 2 };
	struct lb_ab_hl h;
	int rc = lb_ab_hodges_lehmann(d3, 3, 0.95, &h);
	tap_ok(rc == 0 && h.estimate == 2 && h.lo == 1 && h.hi == 3 && fabs(h.confidence - 0.75) < 1e-12,
	       "d 1,2,3: estimate %g, interval [%g, %g], coverage %g (by hand 2, [1, 3], 0.75)",
	       h.estimate, h.lo, h.hi, h.confidence);

	/* k-th Walsh average against all of them, with ties and negatives. */
	bool same = true;
	unsigned int seed = 12345;
	double s[40], walsh[40 * 41 / 2];
	for (size_t n = 1; n <= 40 && same; n++) {
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			s[i] = (double)((seed >> 16) % 21) / 4 - 2.5; /* few values: ties */
		}
		qsort(s, n, sizeof(double), by_value);
		size_t m = all_walsh(s, n, walsh);
		for (size_t k = 1; k <= m; k++)
			if (lb_ab_walsh_kth(s, n, k) != walsh[k - 1]) {
				tap_diag("n %zu k %zu: %g, brute force %g", n, k,
					 lb_ab_walsh_kth(s, n, k), walsh[k - 1]);
				same = false;
				break;
			}
	}
	tap_ok(same, "k-th Walsh average equals brute force for every k, n 1..40 (ties, negatives)");

	/* The interval by R's rule, n 12 (exact): q = qsignrank(0.025, 12) =
	 * 14 (the published 5 % critical value 13, plus one), so [W_(14),
	 * W_(65)] of the 78 averages; coverage 1 - 2 P(W+ <= 13). */
	double d12[12];
	for (int i = 0; i < 12; i++)
		d12[i] = (i + 1) * (i % 4 == 0 ? -0.01 : 0.013);
	lb_ab_hodges_lehmann(d12, 12, 0.95, &h);
	double sorted12[12];
	memcpy(sorted12, d12, sizeof(d12));
	qsort(sorted12, 12, sizeof(double), by_value);
	size_t m = all_walsh(sorted12, 12, walsh);
	double cov = 1 - 2 * lb_signrank_cdf(12, 13);
	tap_ok(m == 78 && h.lo == walsh[13] && h.hi == walsh[64] &&
		       h.estimate == (walsh[38] + walsh[39]) / 2 && fabs(h.confidence - cov) < 1e-12 &&
		       h.confidence >= 0.95,
	       "n 12: interval [W(14), W(65)] = [%g, %g], estimate %g, coverage %.4f", h.lo, h.hi,
	       h.estimate, h.confidence);

	/* Large n (normal approximation): the interval holds about 95 % of
	 * the Walsh averages' rank range around the median, and the estimate of
	 * a symmetric sample is its centre. */
	double d200[200];
	for (int i = 0; i < 200; i++)
		d200[i] = 0.001 * (i - 99.5);
	lb_ab_hodges_lehmann(d200, 200, 0.95, &h);
	tap_ok(fabs(h.estimate) < 1e-12 && h.lo < 0 && h.hi > 0 && fabs(h.lo + h.hi) < 1e-12 &&
		       h.confidence > 0.949 && h.confidence < 0.952,
	       "n 200 symmetric: estimate %g, interval [%g, %g] symmetric, coverage %.4f",
	       h.estimate, h.lo, h.hi, h.confidence);
	tap_ok(lb_ab_hodges_lehmann(d3, 0, 0.95, &h) == -1 &&
		       lb_ab_hodges_lehmann(d3, 3, 1.2, &h) == -1,
	       "no data, or a confidence out of (0.5, 1): refused");
}

/*
 * The cell ratio: 40 pairs that agree within +-0.4 %, and 3 that a
 * preemption spoilt (B's slice 3x slower).  The per-pair estimate stays
 * within 1 % of 1 and its interval within +-2 %; a mean of the log ratios
 * (the geometric mean, as before) moves by ~8 % and its t interval spans
 * ~+-8 %.  Pairs left out (keep false) do not count.
 */
static void test_cell_ratio(void)
{
	double a[43], b[43];
	bool keep[43];
	for (int i = 0; i < 43; i++) {
		a[i] = 100;
		b[i] = 100 * (1 + 0.0002 * ((i * 7) % 41 - 20));
		keep[i] = true;
	}
	for (int i = 40; i < 43; i++)
		b[i] = 300;
	struct lb_ab_ratio r;
	int rc = lb_ab_ratio(a, b, NULL, 43, 0.95, &r);
	tap_ok(rc == 0 && r.kept == 43 && fabs(r.ratio - 1) < 0.01 && r.lo > 0.98 && r.hi < 1.02,
	       "3 spoilt pairs of 43: ratio %.4f [%.4f, %.4f] (within 1 %% and +-2 %%)", r.ratio,
	       r.lo, r.hi);
	for (int i = 40; i < 43; i++)
		keep[i] = false;
	lb_ab_ratio(a, b, keep, 43, 0.95, &r);
	tap_ok(r.kept == 40 && r.ratio > 0.995 && r.ratio < 1.005 && r.hi - r.lo < 0.005,
	       "the 3 left out: %zu pairs, ratio %.4f [%.4f, %.4f]", r.kept, r.ratio, r.lo, r.hi);
	/* A clean 5 % slowdown in every pair, with the same small scatter. */
	for (int i = 0; i < 43; i++)
		b[i] = 105 * (1 + 0.0002 * ((i * 7) % 41 - 20));
	lb_ab_ratio(a, b, NULL, 43, 0.95, &r);
	tap_ok(fabs(r.ratio - 1.05) < 0.002 && r.lo > 1.04 && r.hi < 1.06 && r.rank.p < 1e-6,
	       "5 %% slower in every pair: ratio %.4f [%.4f, %.4f], p %.3g", r.ratio, r.lo, r.hi,
	       r.rank.p);
	double zero[2] = { 0, 0 };
	tap_ok(lb_ab_ratio(zero, zero, NULL, 2, 0.95, &r) == -1 && r.ratio == 1 && r.rank.p == 1,
	       "no usable pair: ratio 1, p 1, refused");
}

static void test_order(void)
{
	char got[17] = "";
	for (unsigned int k = 0; k < 4; k++)
		for (unsigned int s = 0; s < 4; s++)
			got[k * 4 + s] = lb_ab_side(k, s) ? 'B' : 'A';
	tap_ok(!strcmp(got, "ABBABAABABBABAAB"), "slice order of blocks 0..3: %s (ABBA BAAB ...)",
	       got);
	bool balanced = true;
	for (unsigned int k = 0; k < 100; k++) {
		int n_b = 0;
		for (unsigned int s = 0; s < 4; s++)
			n_b += lb_ab_side(k, s);
		balanced &= n_b == 2;
	}
	tap_ok(balanced, "every block has two slices of each side");
}

int main(void)
{
	test_signrank();
	test_ratio();
	test_hodges_lehmann();
	test_cell_ratio();
	test_order();
	return tap_done();
}
