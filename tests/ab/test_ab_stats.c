/* SPDX-License-Identifier: MIT */
/*
 * test_ab_stats.c - the paired statistics of `lockbench ab` on fixed data:
 * Wilcoxon's signed-rank test against published values, the cell ratio's
 * robustness to a few spoilt pairs, and the ABBA/BAAB slice order.  The
 * estimators themselves (lib/lb_paired.h) are tests/test_paired.c's.
 */
#include "../tap.h"
#include "ab/ab.h"
#include "lb_signrank.h"
#include "lb_blockci.h"

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

/*
 * The cell ratio: 40 blocks that agree within +-0.4 %, and 3 that a
 * preemption spoilt (B's slice 3x slower), next to each other.  The
 * trimmed estimate stays within 1 % of 1 (a mean of the log ratios, the
 * geometric mean, would move by ~8 %); the interval widens to about +-4 %:
 * resamples that draw the bad stretch twice carry more than the trim.  Pairs left out (keep false) do
 * not count.  Each value is its own block here (per_block 1).
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
	int rc = lb_ab_ratio(a, b, NULL, 43, 1, 0.05, false, &r);
	tap_ok(rc == 0 && r.kept == 43 && fabs(r.ratio - 1) < 0.01 && r.lo > 0.95 && r.hi < 1.05,
	       "3 spoilt pairs of 43: ratio %.4f [%.4f, %.4f] (within 1 %% and +-5 %%)", r.ratio,
	       r.lo, r.hi);
	for (int i = 40; i < 43; i++)
		keep[i] = false;
	lb_ab_ratio(a, b, keep, 43, 1, 0.05, false, &r);
	tap_ok(r.kept == 40 && r.ratio > 0.995 && r.ratio < 1.005 && r.hi - r.lo < 0.005,
	       "the 3 left out: %zu pairs, ratio %.4f [%.4f, %.4f]", r.kept, r.ratio, r.lo, r.hi);
	/* A clean 5 % slowdown in every pair, with the same small scatter. */
	for (int i = 0; i < 43; i++)
		b[i] = 105 * (1 + 0.0002 * ((i * 7) % 41 - 20));
	lb_ab_ratio(a, b, NULL, 43, 1, 0.05, false, &r);
	tap_ok(fabs(r.ratio - 1.05) < 0.002 && r.lo > 1.04 && r.hi < 1.06 &&
	       lb_ab_ratio_verdict(&r) == 1,
	       "5 %% slower in every pair: ratio %.4f [%.4f, %.4f], B worse", r.ratio, r.lo, r.hi);
	double zero[2] = { 0, 0 };
	tap_ok(lb_ab_ratio(zero, zero, NULL, 2, 1, 0.05, false, &r) == -1 && r.ratio == 1 &&
	       lb_ab_ratio_verdict(&r) == 0, "no usable pair: ratio 1, no interval, no verdict");
	/* Two pairs a block: block k's figure is the mean of its two log ratios. */
	double a2[18], b2[18];
	for (int i = 0; i < 18; i++) {
		a2[i] = 1;
		b2[i] = i % 2 ? 1.04 : 1.02;
	}
	lb_ab_ratio(a2, b2, NULL, 18, 2, 0.05, false, &r);
	tap_ok(r.blocks == 9 && r.kept == 18 && fabs(r.ratio - sqrt(1.02 * 1.04)) < 1e-9,
	       "pairs grouped by block: %zu blocks of %zu pairs, ratio %.5f", r.blocks, r.kept,
	       r.ratio);
}

/* A cell of `blocks` blocks: A's whole loop 20 ns/op of which 8 is the
 * lock's own cost, B's own cost `slow` times A's; +-0.5 % noise from a
 * fixed seed. */
static void scripted_cell(struct lb_ab_cell *c, unsigned int nthreads, size_t blocks, double slow,
			  uint64_t seed)
{
	static double ns[2][400], cpu[2][400], own[2][200], none[200];
	static bool keep[400];
	memset(c, 0, sizeof(*c));
	c->nthreads = nthreads;
	c->nblocks = blocks;
	c->npairs = 2 * blocks;
	for (int s = 0; s < 2; s++) {
		c->ns[s] = ns[s];
		c->cpu[s] = cpu[s];
		c->own[s] = own[s];
	}
	c->own_none = none;
	c->keep = keep;
	static double c2c[400];
	c->c2c = c2c;
	for (size_t k = 0; k < blocks; k++) {
		own[0][k] = 8 * (1 + 0.005 * lb_rng_normal(&seed));
		own[1][k] = 8 * slow * (1 + 0.005 * lb_rng_normal(&seed));
		none[k] = 2;
	}
	for (size_t i = 0; i < 2 * blocks; i++) {
		double harness = 12 * (1 + 0.005 * lb_rng_normal(&seed));
		ns[0][i] = cpu[0][i] = harness + own[0][i / 2];
		ns[1][i] = cpu[1][i] = harness + own[1][i / 2];
		keep[i] = true;
		c2c[i] = -1;
	}
}

/* The lock's own cost is the 1-thread headline: a copy whose own cost is
 * 5 % higher reads 1.05 there, while the whole loop (20 ns of which 8 is the
 * lock) reads ~1.02; the verdict is the headline's. */
static void test_own_cost_headline(void)
{
	struct lb_ab_cell c;
	scripted_cell(&c, 1, 40, 1.05, 42);
	lb_ab_analyze(&c, 1, LB_AB_METRIC_AUTO, 0);
	tap_ok(c.own_headline && fabs(c.own_ratio.ratio - 1.05) < 0.005 &&
	       fabs(c.ratio.ratio - 1.02) < 0.005 && c.verdict == 1,
	       "1 thread, own cost +5 %%: headline %.4f [%.4f, %.4f], whole loop %.4f, verdict %d",
	       c.own_ratio.ratio, c.own_ratio.lo, c.own_ratio.hi, c.ratio.ratio, c.verdict);
	scripted_cell(&c, 2, 40, 1.05, 42);
	lb_ab_analyze(&c, 1, LB_AB_METRIC_AUTO, 0);
	tap_ok(!c.own_headline && c.own_ratio.blocks == 0, "2 threads: no own-cost headline");
}

/*
 * One level: over cells of random shifts (-3..+3 %) and noise, the verdict
 * is exactly the interval (at the cell's 1 - alpha) excluding 1, and alpha
 * is the family's level (one cell: all of it).
 */
static void test_one_level(void)
{
	bool agree = true;
	unsigned int verdicts = 0;
	uint64_t rng = 2024;
	for (unsigned int t = 0; t < 60; t++) {
		struct lb_ab_cell c;
		double shift = 1 + 0.06 * (lb_rng_uniform(&rng) - 0.5);
		scripted_cell(&c, 2, 30, shift, rng);
		for (size_t i = 0; i < c.npairs; i++)
			c.ns[1][i] *= 1 + 0.01 * lb_rng_normal(&rng);
		lb_ab_analyze(&c, 1, LB_AB_METRIC_AUTO, 0);
		bool excl = c.ratio.lo > 1 || c.ratio.hi < 1;
		agree &= (c.verdict != 0) == excl && c.ratio.alpha == LB_AB_ALPHA &&
			 c.alpha == c.ratio.alpha;
		verdicts += c.verdict != 0;
	}
	tap_ok(agree && verdicts > 0 && verdicts < 60,
	       "60 cells: each verdict is its interval excluding 1, at level %.3g (%u verdicts)",
	       LB_AB_ALPHA, verdicts);
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
	test_cell_ratio();
	test_own_cost_headline();
	test_one_level();
	test_order();
	return tap_done();
}
