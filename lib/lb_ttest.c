/* SPDX-License-Identifier: MIT */
/*
 * lb_ttest.c - Welch's t-test and the Mann-Whitney U test (see lb_ttest.h).
 *
 * The exact null distribution of U: with m values on one side and n on the
 * other and no ties, every one of the C(m+n, m) orderings is equally likely,
 * and the number of orderings with U = k equals the number of partitions of k
 * into at most min(m, n) parts, each at most max(m, n) (Mann and Whitney,
 * 1947).  Those are counted by a knapsack over part sizes with additions
 * only, so the counts carry no cancellation error.
 */
#include "lb_ttest.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void mean_var(const double *v, size_t n, double *mean, double *var)
{
	double sum = 0, ss = 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	*mean = sum / (double)n;
	/* Second pass about the mean: stable where sum-of-squares is not. */
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - *mean) * (v[i] - *mean);
	*var = n > 1 ? ss / (double)(n - 1) : 0;
}

/*
 * GSL's default error handler aborts the process (an argument it cannot
 * take, 1e300 as t).  Off, a GSL function returns NAN or its error code
 * instead, and the callers here check for non-finite results.  Turned off
 * before every call: the handler is GSL's process-wide setting, and this
 * keeps it off whatever else set it.
 */
static void gsl_errors_return(void)
{
	gsl_set_error_handler_off();
}

double lb_t_quantile(double p, double df)
{
	gsl_errors_return();
	if (!isfinite(p) || !isfinite(df) || df <= 0)
		return NAN;
	return gsl_cdf_tdist_Pinv(p, df);
}

double lb_t_two_sided_p(double t, double df)
{
	gsl_errors_return();
	if (isnan(t) || !isfinite(df) || df <= 0)
		return NAN;
	double p = 2 * gsl_cdf_tdist_Q(fabs(t), df);
	return p > 1 ? 1 : p;
}

int lb_welch_test(const double *a, size_t na, const double *b, size_t nb, double confidence,
		  struct lb_welch *out)
{
	double va, vb;
	memset(out, 0, sizeof(*out));
	if (na < 2 || nb < 2 || !(confidence >= 0.5 && confidence < 1))
		return -1;
	mean_var(a, na, &out->mean_a, &va);
	mean_var(b, nb, &out->mean_b, &vb);
	out->diff = out->mean_b - out->mean_a;
	double ea = va / (double)na, eb = vb / (double)nb;
	out->se = sqrt(ea + eb);
	if (!isfinite(out->diff) || !isfinite(out->se))
		goto not_computable;
	if (out->se == 0) {
		/* No spread at all: any difference is exact, none is none. */
		out->df = (double)(na + nb - 2);
		out->t = out->diff == 0 ? 0 : copysign(INFINITY, out->diff);
		out->p = out->diff == 0 ? 1 : 0;
		out->significant = out->diff != 0;
		return 0;
	}
	out->df = (ea + eb) * (ea + eb) /
		  (ea * ea / (double)(na - 1) + eb * eb / (double)(nb - 1));
	out->t = out->diff / out->se;
	if (!isfinite(out->df) || out->df <= 0 || !isfinite(out->t))
		goto not_computable;
	out->p = lb_t_two_sided_p(out->t, out->df);
	out->half_width = lb_t_quantile(1 - (1 - confidence) / 2, out->df) * out->se;
	if (!isfinite(out->p) || !isfinite(out->half_width))
		goto not_computable;
	out->significant = fabs(out->diff) > out->half_width;
	return 0;
not_computable: {
	double mean_a = out->mean_a, mean_b = out->mean_b;
	memset(out, 0, sizeof(*out));
	out->mean_a = mean_a;
	out->mean_b = mean_b;
	return LB_WELCH_NOT_COMPUTABLE;
}
}

/* log C(m+n, m) */
static double log_choose(size_t m, size_t n)
{
	return lgamma((double)(m + n) + 1) - lgamma((double)m + 1) - lgamma((double)n + 1);
}

double lb_mwu_exact_cdf(double u, size_t m, size_t n)
{
	if (m == 0 || n == 0 || !(u == u))
		return NAN;
	if (u < 0)
		return 0;
	double mn = (double)m * (double)n;
	if (u >= mn)
		return 1;
	size_t parts = m < n ? m : n, largest = m < n ? n : m;
	size_t top = (size_t)floor(u);
	if ((double)(parts + 1) * (double)(top + 1) > 5e7)
		return NAN;
	/* ways[c][s]: partitions of s into exactly c parts, each at most the
	 * part sizes seen so far (1..j). */
	size_t stride = top + 1;
	double *ways = calloc((parts + 1) * stride, sizeof(*ways));
	if (!ways)
		return NAN;
	ways[0] = 1;
	for (size_t j = 1; j <= largest; j++)
		for (size_t c = 1; c <= parts; c++)
			for (size_t s = j; s <= top; s++)
				ways[c * stride + s] += ways[(c - 1) * stride + s - j];
	double count = 0;
	for (size_t c = 0; c <= parts; c++)
		for (size_t s = 0; s <= top; s++)
			count += ways[c * stride + s];
	free(ways);
	double p = exp(log(count) - log_choose(m, n));
	return p > 1 ? 1 : p;
}

struct ranked {
	double v;
	int side; /* 0: a, 1: b */
};

static int cmp_ranked(const void *x, const void *y)
{
	double a = ((const struct ranked *)x)->v, b = ((const struct ranked *)y)->v;
	return (a > b) - (a < b);
}

int lb_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct lb_mwu *out)
{
	memset(out, 0, sizeof(*out));
	if (na == 0 || nb == 0)
		return -1;
	size_t n = na + nb;
	struct ranked *r = malloc(n * sizeof(*r));
	if (!r)
		return -1;
	for (size_t i = 0; i < na; i++)
		r[i] = (struct ranked){ a[i], 0 };
	for (size_t i = 0; i < nb; i++)
		r[na + i] = (struct ranked){ b[i], 1 };
	qsort(r, n, sizeof(*r), cmp_ranked);
	/* Rank sum of side a with mid-ranks for ties, and the tie term
	 * sum(t^3 - t) over groups of t equal values. */
	double rank_sum_a = 0, tie_term = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && r[j + 1].v == r[i].v)
			j++;
		double t = (double)(j - i + 1), mid_rank = ((double)i + (double)j) / 2 + 1;
		for (size_t k = i; k <= j; k++)
			if (r[k].side == 0)
				rank_sum_a += mid_rank;
		tie_term += t * t * t - t;
		i = j + 1;
	}
	free(r);
	out->ties = tie_term > 0;
	out->u = rank_sum_a - (double)na * ((double)na + 1) / 2;
	double mn = (double)na * (double)nb, mu = mn / 2;
	if (!out->ties && na < LB_MWU_EXACT_MAX && nb < LB_MWU_EXACT_MAX) {
		double low = out->u < mn - out->u ? out->u : mn - out->u;
		double p = 2 * lb_mwu_exact_cdf(low, na, nb);
		if (p == p) {
			out->exact = true;
			out->p = p > 1 ? 1 : p;
			return 0;
		}
	}
	double nn = (double)n;
	double var = mn / 12 * ((nn + 1) - tie_term / (nn * (nn - 1)));
	if (var <= 0) { /* every value equal: no evidence either way */
		out->p = 1;
		return 0;
	}
	double dev = fabs(out->u - mu) - 0.5; /* continuity correction */
	out->z = dev > 0 ? dev / sqrt(var) : 0;
	out->p = erfc(out->z / sqrt(2.0));
	if (out->p > 1)
		out->p = 1;
	return 0;
}
