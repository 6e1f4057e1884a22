/* SPDX-License-Identifier: MIT */
/* lb_blockci.c - the moving-block bootstrap interval (see lb_blockci.h). */
#include "lb_blockci.h"
#include "lb_ttest.h"
#include "lb_paired.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64 (Steele, Lea and Flood, OOPSLA 2014): one 64-bit state, a
 * Weyl increment and a mixing function; plenty for resampling. */
uint64_t lb_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

double lb_rng_uniform(uint64_t *state)
{
	return (double)(lb_splitmix64(state) >> 11) * 0x1.0p-53;
}

double lb_rng_normal(uint64_t *state)
{
	double u = 1 - lb_rng_uniform(state); /* (0, 1]: log defined */
	double v = lb_rng_uniform(state);
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Trimmed mean of s[0..n-1], sorted in place. */
static double trimmed_sorted(double *s, size_t n, double trim)
{
	qsort(s, n, sizeof(double), by_value);
	size_t cut = (size_t)floor(trim * (double)n);
	if (2 * cut >= n)
		cut = (n - 1) / 2;
	double sum = 0;
	for (size_t i = cut; i < n - cut; i++)
		sum += s[i];
	return sum / (double)(n - 2 * cut);
}

double lb_trimmed_mean(const double *x, size_t n, double trim)
{
	double *s = malloc(n * sizeof(double));
	if (!s)
		return NAN;
	memcpy(s, x, n * sizeof(double));
	double m = trimmed_sorted(s, n, trim);
	free(s);
	return m;
}

/* One resample of x: whole blocks of L consecutive values, starts drawn
 * uniformly, cut to n values; its trimmed mean. */
static double resample(const double *x, size_t n, size_t len, uint64_t *rng, double *buf)
{
	size_t starts = n - len + 1, m = 0;
	while (m < n) {
		size_t at = (size_t)(lb_rng_uniform(rng) * (double)starts);
		for (size_t j = 0; j < len && m < n; j++)
			buf[m++] = x[at + j];
	}
	return trimmed_sorted(buf, n, LB_BLOCKCI_TRIM);
}

/* Lag-1 autocorrelation of x, clamped to [0, 0.95]: a negative one
 * (alternating errors) only narrows the truth, and the bootstrap's se
 * already holds it. */
static double lag1(const double *x, size_t n)
{
	double m = 0, c0 = 0, c1 = 0;
	for (size_t i = 0; i < n; i++)
		m += x[i] / (double)n;
	for (size_t i = 0; i < n; i++) {
		c0 += (x[i] - m) * (x[i] - m);
		if (i + 1 < n)
			c1 += (x[i] - m) * (x[i + 1] - m);
	}
	double r = c0 > 0 ? c1 / c0 : 0;
	/* The estimate is short by about (1 + 3 rho) / n when the mean is
	 * estimated too (Kendall 1954, Biometrika 41(3/4)): added back. */
	r += (1 + 3 * r) / (double)n;
	return r < 0 ? 0 : r > 0.95 ? 0.95 : r;
}

/*
 * Blocks of L values keep the correlation of lag k < L only in part
 * (weight 1 - k/L, Bartlett's window) and none beyond: for AR(1) errors of
 * lag-1 correlation rho the bootstrap's variance is short by the factor
 * (1 + 2 sum_{k<L} (1 - k/L) rho^k) / ((1 + rho) / (1 - rho)).  Its inverse,
 * >= 1, scales the variance back up (rho estimated from the data).
 */
static double ar1_inflation(double rho, size_t len)
{
	double window = 1, pk = 1;
	for (size_t k = 1; k < len; k++) {
		pk *= rho;
		window += 2 * (1 - (double)k / (double)len) * pk;
	}
	double full = (1 + rho) / (1 - rho);
	return full > window ? full / window : 1;
}

int lb_block_ci(const double *x, size_t n, double alpha, uint64_t seed, struct lb_block_ci *out)
{
	double mean = 0;
	for (size_t i = 0; i < n; i++)
		mean += x[i] / (double)n;
	*out = (struct lb_block_ci){ .n = n, .estimate = mean, .lo = mean, .hi = mean,
				     .mdc = INFINITY, .coverage = 1 - alpha };
	if (n < LB_BLOCKCI_MIN_N || !(alpha > 0 && alpha < 0.5))
		return -1;
	double *buf = malloc(n * sizeof(double));
	if (!buf)
		return -1;
	size_t len = (size_t)floor(sqrt((double)n));
	out->block_len = len;
	out->estimate = lb_trimmed_mean(x, n, LB_BLOCKCI_TRIM);
	uint64_t rng = seed;
	double sum = 0, sq = 0;
	for (unsigned int r = 0; r < LB_BLOCKCI_RESAMPLES; r++) {
		double t = resample(x, n, len, &rng, buf);
		sum += t;
		sq += t * t;
	}
	free(buf);
	double rm = sum / LB_BLOCKCI_RESAMPLES;
	double var = (sq - LB_BLOCKCI_RESAMPLES * rm * rm) / (LB_BLOCKCI_RESAMPLES - 1);
	out->rho = lag1(x, n);
	out->inflation = ar1_inflation(out->rho, len);
	out->se = var > 0 ? sqrt(var * out->inflation) : 0;
	out->df = floor((double)n / (double)len) - 1;
	if (out->df < LB_BLOCKCI_MIN_DF) { /* t(0.9875, 1) is 25: no interval worth printing */
		out->lo = out->hi = out->estimate;
		out->se = 0;
		out->mdc = INFINITY;
		return -1;
	}
	if (out->df < 1)
		out->df = 1;
	double t = lb_t_quantile(1 - alpha / 2, out->df);
	out->lo = out->estimate - t * out->se;
	out->hi = out->estimate + t * out->se;
	out->mdc = (t + LB_BLOCKCI_POWER_Z) * out->se;
	return 0;
}

/* Standard normal quantile: z with P(Z <= z) = p, 0.5 < p < 1, by bisection
 * on erfc (80 halvings: far below 1e-12). */
static double normal_quantile(double p)
{
	double lo = 0, hi = 40;
	for (int it = 0; it < 80; it++) {
		double mid = (lo + hi) / 2;
		if (0.5 * erfc(mid / sqrt(2.0)) > 1 - p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

int lb_block_rank_ci(const double *x, size_t n, double alpha, struct lb_block_ci *out)
{
	double mean = 0;
	for (size_t i = 0; i < n; i++)
		mean += x[i] / (double)n;
	*out = (struct lb_block_ci){ .n = n, .estimate = mean, .lo = mean, .hi = mean,
				     .mdc = INFINITY, .rank = true, .block_len = 1, .df = NAN,
				     .coverage = 1 - alpha };
	if (n < LB_BLOCKCI_MIN_N || !(alpha > 0 && alpha < 0.5))
		return -1;
	struct lb_paired_hl hl;
	if (lb_paired_hl(x, n, 1 - alpha, &hl) != 0)
		return -1;
	out->estimate = hl.estimate;
	out->coverage = hl.confidence;
	if (hl.confidence < 1 - alpha) /* too few values to reach the level */
		return -1;
	out->rho = lag1(x, n);
	out->inflation = ar1_inflation(out->rho, 1);
	double widen = sqrt(out->inflation);
	out->lo = hl.estimate - (hl.estimate - hl.lo) * widen;
	out->hi = hl.estimate + (hl.hi - hl.estimate) * widen;
	double half = (out->hi - out->lo) / 2, z = normal_quantile(1 - alpha / 2);
	out->se = half / z;
	out->mdc = half + LB_BLOCKCI_POWER_Z * out->se;
	return 0;
}
