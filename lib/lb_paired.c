/* SPDX-License-Identifier: MIT */
/* lb_paired.c - geometric-mean ratio of paired values (see lb_paired.h). */
#include "lb_paired.h"
#include "lb_ttest.h"

#include <math.h>

int lb_paired_ratio(const double *a, const double *b, size_t n, double confidence,
		    struct lb_paired_ratio *out)
{
	double sum = 0, sq = 0;
	*out = (struct lb_paired_ratio){ .n = n, .geomean = 1, .lo = 1, .hi = 1 };
	for (size_t i = 0; i < n; i++)
		if (!(a[i] > 0) || !(b[i] > 0))
			return -1;
	for (size_t i = 0; i < n; i++)
		sum += log(b[i] / a[i]);
	double mean = n ? sum / (double)n : 0;
	out->geomean = out->lo = out->hi = exp(mean);
	if (n < 2 || !(confidence > 0.5 && confidence < 1))
		return -1;
	for (size_t i = 0; i < n; i++) {
		double dev = log(b[i] / a[i]) - mean;
		sq += dev * dev;
	}
	out->log_sd = sqrt(sq / (double)(n - 1));
	double half = lb_t_quantile(1 - (1 - confidence) / 2, (double)(n - 1)) * out->log_sd /
		      sqrt((double)n);
	out->lo = exp(mean - half);
	out->hi = exp(mean + half);
	return 0;
}
