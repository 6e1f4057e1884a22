/* SPDX-License-Identifier: MIT */
/*
 * ab_ratio.c - a paired ratio B/A of a cell (ab.h, lb_ab_ratio), with blocks
 * as the unit: each block's log ratio (the mean of its kept pairs' log(B/A),
 * or its one own-cost ratio), the block series' trimmed mean and its
 * interval at level 1 - alpha (lib/lb_blockci.h): the moving-block bootstrap
 * at 1 thread, where neighbouring blocks err alike, and the signed-rank
 * interval over the blocks in contended cells, whose blocks are independent
 * and heavy-tailed (doc/ab.md) -- the verdict's level: the verdict is the interval excluding 1.  The
 * signed-rank test over the pairs is kept as a description (its rank sum),
 * never as the verdict: it treats the pairs as independent.
 */
#include "ab.h"
#include "lb_blockci.h"

#include <math.h>
#include <stdlib.h>

/* The log ratio of block k (its values i = k * per_block ...), NAN when it has
 * no usable pair. */
static double block_log_ratio(const double *a, const double *b, const bool *keep, size_t n,
			      size_t per_block, size_t k, size_t *used)
{
	double sum = 0;
	size_t m = 0;
	for (size_t i = k * per_block; i < (k + 1) * per_block && i < n; i++)
		if ((!keep || keep[i]) && a[i] > 0 && b[i] > 0 && isfinite(a[i]) && isfinite(b[i])) {
			sum += log(b[i] / a[i]);
			m++;
		}
	*used += m;
	return m ? sum / (double)m : NAN;
}

int lb_ab_ratio(const double *a, const double *b, const bool *keep, size_t n, size_t per_block,
		double alpha, bool rank, struct lb_ab_ratio *out)
{
	*out = (struct lb_ab_ratio){ .ratio = 1, .lo = 1, .hi = 1, .mdc_pct = INFINITY,
				     .alpha = alpha, .rank = { .p = 1 }, .rank_interval = rank };
	size_t nblocks = per_block ? (n + per_block - 1) / per_block : 0;
	double *d = malloc((n ? n : 1) * sizeof(double));
	double *blk = malloc((nblocks ? nblocks : 1) * sizeof(double));
	int rc = -1;
	if (!d || !blk)
		goto out;
	size_t m = 0, nb = 0, used = 0;
	for (size_t k = 0; k < nblocks; k++) {
		double v = block_log_ratio(a, b, keep, n, per_block, k, &used);
		if (isfinite(v))
			blk[nb++] = v;
	}
	for (size_t i = 0; i < n; i++)
		if ((!keep || keep[i]) && a[i] > 0 && b[i] > 0 && isfinite(a[i]) && isfinite(b[i]))
			d[m++] = log(b[i] / a[i]);
	out->kept = used;
	out->blocks = nb;
	if (m)
		lb_signrank_test(d, m, &out->rank);
	struct lb_block_ci ci;
	rc = rank ? lb_block_rank_ci(blk, nb, alpha, &ci) :
		    lb_block_ci(blk, nb, alpha, LB_BLOCKCI_SEED, &ci);
	out->ratio = exp(ci.estimate);
	if (rc == 0) {
		out->lo = exp(ci.lo);
		out->hi = exp(ci.hi);
		out->mdc_pct = 100 * (exp(ci.mdc) - 1);
		out->block_len = ci.block_len;
		out->df = ci.df;
		out->rho = ci.rho;
		out->widen = sqrt(ci.inflation);
	} else {
		out->lo = out->hi = out->ratio;
	}
out:
	free(d);
	free(blk);
	return rc;
}

int lb_ab_ratio_verdict(const struct lb_ab_ratio *r)
{
	if (!isfinite(r->mdc_pct))
		return 0; /* no interval */
	return r->lo > 1 ? 1 : r->hi < 1 ? -1 : 0;
}
