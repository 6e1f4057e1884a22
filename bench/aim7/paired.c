/* SPDX-License-Identifier: MIT */
/*
 * paired.c - the A/B of `--ab` as a paired experiment.
 *
 * Repeat r runs PRE then POST when r is even and POST then PRE when it is
 * odd (ABBA), so a drift of the machine (load, frequency, caches warming)
 * falls on both sides alike.  Each repeat is one pair; the figure is the
 * geometric mean of the pair ratios POST/PRE, exp(mean of l_i) with
 * l_i = ln(post_i / pre_i), and its 95 % interval
 * exp(mean +- t_{0.975, n-1} * sd(l) / sqrt(n)) (Student's t on the log
 * ratios: ratios multiply, their logs add).  Verdict: the interval above 1,
 * POST is faster; below 1, slower; across 1, no difference shown.  One pair
 * gives the ratio and no interval.
 */
#include "aim7.h"
#include "lb_ttest.h"

#include <math.h>
#include <string.h>

int aim_paired_ratio(const double *pre, const double *post, size_t n, struct aim_paired *out)
{
	memset(out, 0, sizeof(*out));
	double l[AIM_MAX_REPEAT];
	if (n == 0 || n > AIM_MAX_REPEAT)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!(pre[i] > 0) || !(post[i] > 0))
			return -1; /* a side that did no work: no ratio */
		l[i] = log(post[i] / pre[i]);
	}
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += l[i];
	double mean = sum / (double)n, var = 0;
	for (size_t i = 0; i < n; i++)
		var += (l[i] - mean) * (l[i] - mean);
	out->n = n;
	out->geomean = exp(mean);
	if (n < 2) {
		out->lo = out->hi = out->geomean;
		out->verdict = AIM_AB_ONE_PAIR;
		return 0;
	}
	double sd = sqrt(var / (double)(n - 1));
	double half = lb_t_quantile(0.975, (double)(n - 1)) * sd / sqrt((double)n);
	out->lo = exp(mean - half);
	out->hi = exp(mean + half);
	/* CoV of the pair ratios (themselves, not their logs). */
	double rs = 0, rv = 0;
	for (size_t i = 0; i < n; i++)
		rs += exp(l[i]);
	double rm = rs / (double)n;
	for (size_t i = 0; i < n; i++)
		rv += (exp(l[i]) - rm) * (exp(l[i]) - rm);
	out->cov_pct = rm > 0 ? 100.0 * sqrt(rv / (double)(n - 1)) / rm : 0;
	out->verdict = out->lo > 1 ? AIM_AB_FASTER : out->hi < 1 ? AIM_AB_SLOWER : AIM_AB_NO_DIFFERENCE;
	return 0;
}

const char *aim_paired_verdict(int verdict)
{
	switch (verdict) {
	case AIM_AB_FASTER: return "POST faster";
	case AIM_AB_SLOWER: return "POST slower";
	case AIM_AB_NO_DIFFERENCE: return "no difference shown";
	case AIM_AB_ONE_PAIR: return "one pair: no interval";
	}
	return "?";
}

int aim_ab_first_side(unsigned int repeat_index)
{
	return (int)(repeat_index & 1u); /* even: PRE first; odd: POST first */
}
