/* SPDX-License-Identifier: MIT */
/*
 * ab_ratio.c - a cell's paired ratio B/A (ab.h, lb_ab_ratio): the per-pair
 * log ratios of the kept pairs, their Hodges-Lehmann estimate and
 * signed-rank interval (lb_paired_hl), and Wilcoxon's test on the same values.
 */
#include "ab.h"

#include <math.h>
#include <stdlib.h>

int lb_ab_ratio(const double *a, const double *b, const bool *keep, size_t n, double confidence,
		struct lb_ab_ratio *out)
{
	*out = (struct lb_ab_ratio){ .ratio = 1, .lo = 1, .hi = 1, .rank = { .p = 1 } };
	double *d = malloc((n ? n : 1) * sizeof(double));
	if (!d)
		return -1;
	size_t m = 0;
	for (size_t k = 0; k < n; k++)
		if ((!keep || keep[k]) && a[k] > 0 && b[k] > 0)
			d[m++] = log(b[k] / a[k]);
	out->kept = m;
	struct lb_paired_hl hl;
	int rc = -1;
	if (m && lb_paired_hl(d, m, confidence, &hl) == 0 &&
	    lb_signrank_test(d, m, &out->rank) == 0) {
		out->ratio = exp(hl.estimate);
		out->lo = exp(hl.lo);
		out->hi = exp(hl.hi);
		out->coverage = hl.confidence;
		rc = 0;
	} else {
		out->rank = (struct lb_signrank){ .p = 1 };
	}
	free(d);
	return rc;
}
