/* SPDX-License-Identifier: MIT */
/*
 * test_paired.c - the paired-ratio estimators of lib/lb_paired.h on fixed
 * data: the geometric mean and its t interval against R's paired t.test on
 * Student's sleep data and by hand, the Hodges-Lehmann estimate against
 * Hollander & Wolfe's depression example, brute force and R's interval
 * rule by hand.
 */
#include "lb_paired.h"
#include "lb_signrank.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool close_to(double got, double want, double tol)
{
	return fabs(got - want) <= tol;
}

/*
 * Student's (Cushny & Peebles') sleep data, R's `sleep`: the extra hours of
 * sleep of 10 patients under drug 2 less under drug 1.  R's
 * t.test(extra ~ group, data = sleep, paired = TRUE) prints mean difference
 * -1.58, t = -4.0621, df = 9, 95 % interval -2.4598858 -0.7001142 (drug 1
 * less drug 2).  As ratios: b_i / a_i = exp(d_i), so the log ratios are the
 * differences and the estimator's log figures are R's, signs turned.
 */
static void test_ratio_published(void)
{
	static const double d[] = { 1.2, 2.4, 1.3, 1.3, 0.0, 1.0, 1.8, 0.8, 4.6, 1.4 };
	double a[10], b[10];
	for (int i = 0; i < 10; i++) {
		a[i] = 1;
		b[i] = exp(d[i]);
	}
	struct lb_paired_ratio r;
	int rc = lb_paired_ratio(a, b, 10, 0.95, &r);
	double t = log(r.geomean) / (r.log_sd / sqrt(10));
	tap_ok(rc == 0 && close_to(log(r.geomean), 1.58, 1e-12) &&
		       close_to(log(r.lo), 0.7001142, 1e-7) && close_to(log(r.hi), 2.4598858, 1e-7) &&
		       close_to(t, 4.0621, 1e-4),
	       "sleep data: log ratio %.7f [%.7f, %.7f], t %.4f (R's t.test: 1.58 [0.7001142, "
	       "2.4598858], t 4.0621)", log(r.geomean), log(r.lo), log(r.hi), t);
}

static void test_ratio_by_hand(void)
{
	struct lb_paired_ratio r;
	const double a[] = { 10, 20, 40, 10 }, b[] = { 11, 22, 44, 11 };
	int rc = lb_paired_ratio(a, b, 4, 0.95, &r);
	tap_ok(rc == 0 && close_to(r.geomean, 1.1, 1e-12) && close_to(r.lo, 1.1, 1e-12) &&
		       close_to(r.hi, 1.1, 1e-12) && close_to(r.cov_pct, 0, 1e-9),
	       "constant 10 %% ratio at any scale: geomean %.6f, interval [%.6f, %.6f], CoV %g %%",
	       r.geomean, r.lo, r.hi, r.cov_pct);

	/* Ratios 1.5 and 2.5: log mean (ln 1.5 + ln 2.5)/2 -> geomean sqrt(3.75)
	 * = 1.93649; sd of the logs |ln 2.5 - ln 1.5| / sqrt 2 = 0.36120,
	 * t(0.975, 1) = 12.7062: half width 3.2452, interval
	 * exp(0.66087 -+ 3.2452) = 0.07544-49.71. */
	const double pre2[] = { 10, 10 }, post2[] = { 15, 25 };
	rc = lb_paired_ratio(pre2, post2, 2, 0.95, &r);
	tap_ok(rc == 0 && close_to(r.geomean, 1.93649, 1e-4) && close_to(r.lo, 0.07544, 1e-4) &&
		       close_to(r.hi, 49.71, 0.01) && close_to(r.log_sd, 0.36120, 1e-4),
	       "ratios 1.5, 2.5: geomean %.5f (1.93649), interval %.5f-%.2f (0.07544-49.71)",
	       r.geomean, r.lo, r.hi);

	/* Five ratios 0.90, 0.91, 0.89, 0.90, 0.90: mean 0.9, sample sd
	 * sqrt(0.0002 / 4) = 0.0070711, CoV 0.786 %; the interval below 1. */
	const double pre5[] = { 100, 100, 100, 100, 100 }, post5[] = { 90, 91, 89, 90, 90 };
	rc = lb_paired_ratio(pre5, post5, 5, 0.95, &r);
	tap_ok(rc == 0 && r.hi < 1 && r.lo > 0.88 && close_to(r.cov_pct, 0.78567, 1e-4),
	       "five ratios ~0.90: interval %.4f-%.4f, CoV %.5f %% (0.78567)", r.lo, r.hi, r.cov_pct);

	rc = lb_paired_ratio(pre5, post5, 1, 0.95, &r);
	tap_ok(rc == 0 && r.n == 1 && close_to(r.geomean, 0.9, 1e-12) && r.lo == r.geomean &&
		       r.hi == r.geomean && r.cov_pct == 0,
	       "one pair: ratio %.2f, no interval", r.geomean);
	const double zero[] = { 0, 100 };
	tap_ok(lb_paired_ratio(zero, pre2, 2, 0.95, &r) == -1 &&
		       lb_paired_ratio(pre2, post2, 0, 0.95, &r) == -1 &&
		       lb_paired_ratio(pre2, post2, 2, 1.5, &r) == -1 &&
		       close_to(r.geomean, 1.93649, 1e-4),
	       "a side with no work, no pairs or a confidence out of range: refused (the "
	       "geomean kept where there is one)");
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Every Walsh average, sorted: what lb_walsh_kth must reproduce. */
static size_t all_walsh(const double *s, size_t n, double *out)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i; j < n; j++)
			out[m++] = (s[i] + s[j]) / 2;
	qsort(out, m, sizeof(double), by_value);
	return m;
}

/*
 * Hollander & Wolfe's Hamilton depression scale factor IV, first visit x
 * and after the tranquilizer y, 9 patients (the data of R's wilcox.test
 * example): their Hodges-Lehmann estimate of the shift x - y is 0.46.  The
 * interval by R's rule, by hand: n 9, q = qsignrank(0.025, 9) = 6 (the
 * published 5 % critical value 5, plus one), so [W(6), W(40)] of the 45
 * Walsh averages = [0.010, 0.786], coverage 1 - 2 P(W+ <= 5) = 1 - 20/512.
 */
static void test_hl_published(void)
{
	static const double x[] = { 1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30 };
	static const double y[] = { 0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29 };
	double d[9];
	for (int i = 0; i < 9; i++)
		d[i] = x[i] - y[i];
	struct lb_paired_hl h;
	int rc = lb_paired_hl(d, 9, 0.95, &h);
	tap_ok(rc == 0 && close_to(h.estimate, 0.46, 1e-12) && close_to(h.lo, 0.010, 1e-12) &&
		       close_to(h.hi, 0.786, 1e-12) && close_to(h.confidence, 1 - 20.0 / 512, 1e-12),
	       "depression data: estimate %.4f (published 0.46), interval [%.4f, %.4f] (0.010, "
	       "0.786), coverage %.6f (0.960938)", h.estimate, h.lo, h.hi, h.confidence);

	/* 1, 3, 7, 8: Walsh averages 1 2 3 4 4.5 5 5.5 7 7.5 8, median 4.75. */
	static const double four[] = { 8, 1, 7, 3 };
	lb_paired_hl(four, 4, 0.95, &h);
	tap_ok(h.estimate == 4.75 && h.lo == 1 && h.hi == 8,
	       "1, 3, 7, 8: estimate %g (4.75), interval [%g, %g] (n 4: all of them)", h.estimate,
	       h.lo, h.hi);
}

static void test_hl_by_hand(void)
{
	/* By hand: d = 1, 2, 3 -> Walsh averages 1, 1.5, 2, 2, 2.5, 3; median
	 * 2.  n = 3: P(W+ <= 0) = 1/8 >= 0.025, so q = 1 (R's rule): the
	 * interval is [1, 3], coverage 1 - 2 P(W+ <= 0) = 0.75. */
	const double d3[] = { 3, 1, 2 };
	struct lb_paired_hl h;
	int rc = lb_paired_hl(d3, 3, 0.95, &h);
	tap_ok(rc == 0 && h.estimate == 2 && h.lo == 1 && h.hi == 3 &&
		       fabs(h.confidence - 0.75) < 1e-12,
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
			if (lb_walsh_kth(s, n, k) != walsh[k - 1]) {
				tap_diag("n %zu k %zu: %g, brute force %g", n, k,
					 lb_walsh_kth(s, n, k), walsh[k - 1]);
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
	lb_paired_hl(d12, 12, 0.95, &h);
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
	lb_paired_hl(d200, 200, 0.95, &h);
	tap_ok(fabs(h.estimate) < 1e-12 && h.lo < 0 && h.hi > 0 && fabs(h.lo + h.hi) < 1e-12 &&
		       h.confidence > 0.949 && h.confidence < 0.952,
	       "n 200 symmetric: estimate %g, interval [%g, %g] symmetric, coverage %.4f",
	       h.estimate, h.lo, h.hi, h.confidence);
	tap_ok(lb_paired_hl(d3, 0, 0.95, &h) == -1 && lb_paired_hl(d3, 3, 1.2, &h) == -1,
	       "no data, or a confidence out of (0.5, 1): refused");
}

int main(void)
{
	test_ratio_published();
	test_ratio_by_hand();
	test_hl_published();
	test_hl_by_hand();
	return tap_done();
}
