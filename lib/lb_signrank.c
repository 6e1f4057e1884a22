/* SPDX-License-Identifier: MIT */
/* lb_signrank.c - Wilcoxon's signed-rank test (see lb_signrank.h). */
#include "lb_signrank.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double lb_signrank_cdf(size_t n, double w)
{
	if (n == 0)
		return w >= 0 ? 1.0 : 0.0;
	if (n > LB_SIGNRANK_EXACT_MAX || w < 0)
		return w < 0 ? 0.0 : NAN;
	size_t max = n * (n + 1) / 2;
	/* ways[s]: sign patterns of ranks 1..k whose positive ranks sum to s.
	 * At most 2^50 each: exact in a double. */
	double *ways = calloc(max + 1, sizeof(double));
	if (!ways)
		return NAN;
	ways[0] = 1;
	for (size_t k = 1; k <= n; k++)
		for (size_t s = k * (k + 1) / 2; s >= k; s--)
			ways[s] += ways[s - k];
	double below = 0, total = ldexp(1.0, (int)n);
	for (size_t s = 0; s <= max && (double)s <= w; s++)
		below += ways[s];
	free(ways);
	return below / total;
}

struct ranked {
	double abs;
	bool positive;
};

static int by_abs(const void *a, const void *b)
{
	double x = ((const struct ranked *)a)->abs, y = ((const struct ranked *)b)->abs;
	return (x > y) - (x < y);
}

int lb_signrank_test(const double *d, size_t n, struct lb_signrank *out)
{
	memset(out, 0, sizeof(*out));
	out->p = 1;
	struct ranked *r = malloc((n ? n : 1) * sizeof(*r));
	if (!r)
		return -1;
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (d[i] == 0 || isnan(d[i])) {
			out->zeros++;
			continue;
		}
		r[m++] = (struct ranked){ fabs(d[i]), d[i] > 0 };
	}
	out->n = m;
	if (m == 0) {
		free(r);
		return 0;
	}
	qsort(r, m, sizeof(*r), by_abs);
	double w_plus = 0, tie_term = 0;
	for (size_t i = 0; i < m;) {
		size_t j = i;
		while (j + 1 < m && r[j + 1].abs == r[i].abs)
			j++;
		double rank = (double)(i + 1 + j + 1) / 2, t = (double)(j - i + 1);
		for (size_t k = i; k <= j; k++)
			w_plus += r[k].positive ? rank : 0;
		if (t > 1) {
			out->ties = true;
			tie_term += t * t * t - t;
		}
		i = j + 1;
	}
	free(r);
	double total = (double)m * (double)(m + 1) / 2;
	out->w_plus = w_plus;
	out->w_minus = total - w_plus;
	if (!out->ties && m <= LB_SIGNRANK_EXACT_MAX) {
		double small = w_plus < out->w_minus ? w_plus : out->w_minus;
		double p = 2 * lb_signrank_cdf(m, small);
		out->p = p > 1 ? 1 : p;
		out->exact = true;
		return 0;
	}
	double mean = total / 2;
	double var = (double)m * (double)(m + 1) * (double)(2 * m + 1) / 24 - tie_term / 48;
	double dev = fabs(w_plus - mean) - 0.5; /* continuity correction */
	if (dev < 0)
		dev = 0;
	out->z = var > 0 ? (w_plus > mean ? dev : -dev) / sqrt(var) : 0;
	out->p = var > 0 ? erfc(fabs(out->z) / sqrt(2.0)) : 1;
	return 0;
}
