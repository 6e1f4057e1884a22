/* SPDX-License-Identifier: MIT */
/*
 * ab_gate.c - the A/B lines of --window through the mechanism gate.
 *
 * A POST/PRE ratio of CPUs busy or of progress per second reads as a
 * verdict on the lock generations.  It is one only when the kernel's
 * mechanism was there in every run of both sides (gauge.c,
 * aim_gate_eval: rho >= 0.5, median hold below the spin horizon, a median
 * of >= 2 running contenders).  Otherwise the line says "mechanism absent"
 * (or "unknown"), gives the gauges that decided it over the runs of each
 * side, and each side's own figure, and no ratio.
 */
#include "aim7.h"
#include "lb_paired.h"

#include <stdarg.h>
#include <stdio.h>

void aim_ab_gate(const struct aim_cell *pre, const struct aim_cell *post, int role,
		 struct aim_gate *g)
{
	int k = aim_contended_class(role);
	size_t n = pre->nruns < post->nruns ? pre->nruns : post->nruns;
	*g = (struct aim_gate){ .present = true, .known = true };
	for (size_t r = 0; r < n && g->present && g->known; r++)
		for (int side = 0; side < 2 && g->present && g->known; side++) {
			const struct aim_point *p = side ? &post->run[r] : &pre->run[r];
			aim_gate_eval(&p->cls[k], p->fig.parent_s, aim_spin_horizon_ns(), g);
		}
	if (n == 0) {
		*g = (struct aim_gate){ .present = false, .known = false };
		snprintf(g->why, sizeof(g->why), "no runs");
	}
}

/* Appends to buf at *at, never past len (a cut line stays terminated). */
static void put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	if (*at >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (w > 0)
		*at += (size_t)w < len - *at ? (size_t)w : len - *at - 1;
}

struct range { double lo, hi; };

static void widen(struct range *r, double v, bool first)
{
	if (first || v < r->lo)
		r->lo = v;
	if (first || v > r->hi)
		r->hi = v;
}

/* One side's gauges over its runs: rho, hold p50 and the share of
 * contended acquisitions with >= 2 running contenders. */
static void side_gauges(char *buf, size_t len, size_t *at, const struct aim_cell *c, int k,
			const char *name)
{
	struct range rho = { 0, 0 }, hold = { 0, 0 }, run2 = { 0, 0 };
	bool have_running = c->nruns > 0;
	for (size_t r = 0; r < c->nruns; r++) {
		struct aim_gauges g;
		aim_gauges_compute(&c->run[r].cls[k], c->run[r].fig.parent_s, &g);
		widen(&rho, g.rho, r == 0);
		widen(&hold, g.hold_p50_ns / 1e3, r == 0);
		widen(&run2, 100 * (g.running_share[1] + g.running_share[2]), r == 0);
		have_running &= g.have_running;
	}
	put(buf, len, at, "%s rho %.2f-%.2f, hold p50 <= %.1f-%.1f us, ", name, rho.lo, rho.hi,
	    hold.lo, hold.hi);
	if (have_running)
		put(buf, len, at, ">= 2 running %.0f-%.0f%%", run2.lo, run2.hi);
	else
		put(buf, len, at, "running n/a");
}

static void side_figure(char *buf, size_t len, size_t *at, const struct aim_cell *c,
			double (*fig)(const struct aim_point *), const char *name)
{
	struct range v = { 0, 0 };
	for (size_t r = 0; r < c->nruns; r++)
		widen(&v, fig(&c->run[r]), r == 0);
	put(buf, len, at, "%s %.3f-%.3f (n=%zu)", name, v.lo, v.hi, c->nruns);
}

size_t aim_window_ratio_line(char *buf, size_t len, const struct aim_cell *pre,
			     const struct aim_cell *post, int role, const char *what,
			     double (*fig)(const struct aim_point *))
{
	size_t at = 0;
	if (len == 0)
		return 0;
	buf[0] = '\0';
	put(buf, len, &at, "POST/PRE %s at %u users: ", what, pre->users);
	struct aim_gate gate;
	aim_ab_gate(pre, post, role, &gate);
	if (!gate.present) {
		int k = aim_contended_class(role);
		put(buf, len, &at, "kernel mechanism %s (%s: %s): no ratio; gauges ",
		    gate.known ? "absent" : "unknown", aim_class_name(k), gate.why);
		side_gauges(buf, len, &at, pre, k, "PRE");
		put(buf, len, &at, "; ");
		side_gauges(buf, len, &at, post, k, "POST");
		put(buf, len, &at, "; %s ", what);
		side_figure(buf, len, &at, pre, fig, "PRE");
		put(buf, len, &at, ", ");
		side_figure(buf, len, &at, post, fig, "POST");
		put(buf, len, &at, "\n");
		return at;
	}
	double a[AIM_MAX_REPEAT], b[AIM_MAX_REPEAT];
	size_t n = pre->nruns < post->nruns ? pre->nruns : post->nruns;
	for (size_t r = 0; r < n; r++) {
		a[r] = fig(&pre->run[r]);
		b[r] = fig(&post->run[r]);
	}
	struct lb_paired_ratio pr;
	if (lb_paired_ratio(a, b, n, 0.95, &pr) != 0)
		put(buf, len, &at, "no ratio (a side did no work)\n");
	else if (pr.n < 2)
		put(buf, len, &at, "%.3fx (one pair: no interval)\n", pr.geomean);
	else
		put(buf, len, &at, "%.3fx, 95%% interval %.3f-%.3fx, n=%zu ABBA pairs: %s\n",
		    pr.geomean, pr.lo, pr.hi, pr.n, aim_paired_verdict(&pr));
	return at;
}
