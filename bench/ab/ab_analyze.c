/* SPDX-License-Identifier: MIT */
/*
 * ab_analyze.c - a cell's statistics once its blocks are in (ab.h,
 * lb_ab_analyze): the summaries of the paired figure, the whole-loop ratio
 * B/A, at 1 thread the ratio of the locks' own cost (the headline), the
 * one level both the interval and the verdict use, the load rule, the
 * round-trip range.
 */
#include "ab.h"
#include "lb_stats.h"

#include <math.h>

/* Per side, the median over the blocks of the side's own cost (measured at
 * the start of each 1-thread block, ab_run.c; NAN where it was not). */
static void lock_cost(struct lb_ab_cell *c)
{
	for (int s = 0; s < LB_AB_SIDES; s++)
		c->lock_cost[s] = lb_median_finite(c->own[s], c->nblocks);
	c->call_cost = lb_median_finite(c->own_none, c->nblocks);
}

void lb_ab_analyze(struct lb_ab_cell *cells, size_t n, int metric, double load_per_cpu)
{
	for (size_t i = 0; i < n; i++) {
		struct lb_ab_cell *c = &cells[i];
		size_t m = c->npairs;
		c->cpu_metric = lb_ab_uses_cpu(metric, c->nthreads);
		for (int s = 0; s < LB_AB_SIDES; s++) {
			c->value[s] = c->cpu_metric ? c->cpu[s] : c->ns[s];
			lb_summarize(c->value[s], m, &c->sum[s]);
		}
		/* Bonferroni: the family of n cells keeps its 1 % false-alarm rate;
		 * the interval is printed at the same level. */
		c->alpha = LB_AB_ALPHA / (double)n;
		/* Contended cells: blocks independent, heavy-tailed (doc/ab.md):
		 * the signed-rank interval over them; 1 thread: the bootstrap. */
		lb_ab_ratio(c->value[LB_AB_A], c->value[LB_AB_B], c->keep, m, 2, c->alpha,
			    c->nthreads > 1, &c->ratio);
		/* 1 thread: the locks' own cost, one figure per block, is the
		 * headline when enough blocks have one (doc/ab.md: the whole
		 * loop's ratio dilutes nothing and overstates a change). */
		c->own_headline = false;
		c->own_ratio = (struct lb_ab_ratio){ .ratio = 1, .lo = 1, .hi = 1 };
		if (c->nthreads == 1)
			c->own_headline = lb_ab_ratio(c->own[LB_AB_A], c->own[LB_AB_B], NULL,
						      c->nblocks, 1, c->alpha, false,
						      &c->own_ratio) == 0;
		c->verdict = lb_ab_ratio_verdict(c->own_headline ? &c->own_ratio : &c->ratio);
		c->withheld = c->nthreads > 1 && load_per_cpu >= LB_AB_WITHHOLD_LOAD;
		if (c->withheld)
			c->verdict = 0;
		lock_cost(c);
		c->c2c_min = c->c2c_max = -1;
		for (size_t k = 0; k < m; k++) {
			double v = c->c2c[k];
			if (v < 0)
				continue;
			c->c2c_min = c->c2c_min < 0 || v < c->c2c_min ? v : c->c2c_min;
			c->c2c_max = v > c->c2c_max ? v : c->c2c_max;
		}
	}
}
