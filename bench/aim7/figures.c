/* SPDX-License-Identifier: MIT */
/*
 * figures.c - re-aim's figures for one load point (driver.c):
 *
 *   Jobs/min       = jobs per child / parent (wall) s * 60 * children
 *   Jobs/min/child = jobs per child / parent s * 60
 *   Jobs/sec/child = jobs per child / parent s
 *   std_dev        = population standard deviation of the children's
 *                    elapsed times (each from the common start)
 *   JTI            = (1 - std_dev / mean) * 100, clamped to 0..100
 *                    (re-aim's clamp has a cast bug; we clamp properly)
 *
 * jobs per child: the list each child ran to its end, or in a fixed window
 * the jobs completed before the alarm over the children (a mean).
 */
#include "aim7.h"

#include <math.h>
#include <string.h>

void aim_figures_compute(unsigned int children, double jobs_per_child, double parent_s,
			 const double *child_s, double user_s, double sys_s,
			 struct aim_figures *out)
{
	memset(out, 0, sizeof(*out));
	out->children = children;
	out->jobs_per_child = jobs_per_child;
	out->parent_s = parent_s;
	out->child_user_s = user_s;
	out->child_sys_s = sys_s;
	if (parent_s > 0) {
		out->jobs_per_sec_child = jobs_per_child / parent_s;
		out->jobs_per_min_child = out->jobs_per_sec_child * 60.0;
		out->jobs_per_min = out->jobs_per_min_child * (double)children;
	}
	if (children == 0)
		return;
	double sum = 0, mx = child_s[0], mn = child_s[0];
	for (unsigned int i = 0; i < children; i++) {
		sum += child_s[i];
		mx = child_s[i] > mx ? child_s[i] : mx;
		mn = child_s[i] < mn ? child_s[i] : mn;
	}
	double mean = sum / children, var = 0;
	for (unsigned int i = 0; i < children; i++)
		var += (child_s[i] - mean) * (child_s[i] - mean);
	out->std_dev = sqrt(var / children);
	out->max_child_s = mx;
	out->min_child_s = mn;
	double cov = mean > 0 ? out->std_dev / mean : 0;
	out->cov_pct = cov * 100;
	double jti = children == 1 ? 100.0 : (1.0 - cov) * 100.0;
	out->jti = jti < 0 ? 0 : jti > 100 ? 100 : jti;
}

double aim_cpus_busy(const struct aim_point *p)
{
	/* Over the parent time: the window when the alarm cuts each child at
	 * once (re-aim's 2000.04 s); here a cut child first waits for a CPU
	 * and ends its job's real work, and that CPU was spent in the longer
	 * wall time. */
	return p->window_s > 0 && p->fig.parent_s > 0 ? p->child_cpu_s / p->fig.parent_s : 0;
}

double aim_progress_per_s(const struct aim_point *p)
{
	return p->window_s > 0 && p->fig.parent_s > 0 ? (double)p->jobs_done / p->fig.parent_s : 0;
}
