/* SPDX-License-Identifier: MIT */
/*
 * plot_ab.c - the picture of a `lockbench ab` file (plot.h, lb_plot_ab):
 * per cell the paired ratio B/A the run computed, with its interval, on a
 * log axis (a ratio and its reciprocal sit at the same distance from 1), a
 * line at 1; at 1 thread the lock's own cost (the verdict's figure) beside
 * the whole loop's.  Not the sides' means +- sd: those lose the pairing.
 * The data block $ab_ratio in NAME.gp holds what is drawn:
 * "x threads ratio lo hi series" per row.
 */
#include "plot.h"
#include "plot_overlay.h"
#include "ab_paired.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 64

size_t lb_plot_ab(FILE *gp, const struct lb_rfile *f, const char *dir, const char *prefix,
		  int formats, struct lb_plot_outputs *o)
{
	struct lb_abp_row rows[MAX_ROWS];
	size_t n = lb_abp_rows(f, rows, MAX_ROWS), drawn = 0;
	double conf = NAN, lo = INFINITY, hi = -INFINITY;
	/* x: the cell's position (threads as its tic label); the whole-loop
	 * point of a 1-thread cell sits a little right of the own-cost one. */
	double x = 0, last_threads = NAN;
	char tics[512] = "";
	size_t tl = 0;
	fputs("# lockbench plot: generated gnuplot script\nset encoding utf8\n$ab_ratio << EOD\n",
	      gp);
	for (size_t i = 0; i < n; i++) {
		const struct lb_abp_row *r = &rows[i];
		bool own = !strcmp(r->figure, "own cost");
		if (!(r->ratio > 0) || !isfinite(r->lo) || !isfinite(r->hi) || !(r->lo > 0))
			continue;
		if (r->threads != last_threads) {
			x += 1;
			if (tl < sizeof(tics))
				tl += (size_t)snprintf(tics + tl, sizeof(tics) - tl, "%s'%g' %g",
						       tl ? ", " : "", r->threads, x);
		}
		last_threads = r->threads;
		fprintf(gp, "%.2f %g %.6g %.6g %.6g %s\n", own || !*r->verdict ? x + (own ? 0 : 0.15) : x,
			r->threads, r->ratio, r->lo, r->hi, own ? "own_cost" : "whole_loop");
		conf = r->confidence;
		lo = fmin(lo, r->lo);
		hi = fmax(hi, r->hi);
		drawn++;
	}
	fputs("EOD\n", gp);
	if (!drawn)
		return 0;
	char *body = NULL, t[1024], cmd[200];
	size_t blen = 0;
	FILE *b = open_memstream(&body, &blen);
	if (!b)
		return 0;
	lb_plot_command_text(f, cmd, sizeof(cmd));
	snprintf(t, sizeof(t), "paired ratio B/A per cell, %s vs %s (%.1f %% interval, blocks as "
		 "the unit; log axis)\n%s\n%s%s", lb_abp_lock(f, 1), lb_abp_lock(f, 0),
		 100 * conf, f->host_line, cmd, f->interrupted ? "  (interrupted run)" : "");
	fputs("set title ", b);
	lb_plot_gp_string(b, t);
	/* The range holds every interval with a margin, and 1. */
	lo = fmin(lo, 1) / 1.02;
	hi = fmax(hi, 1) * 1.02;
	fprintf(b, "\nset logscale y\nset yrange [%.6g:%.6g]\nset xrange [0.5:%.2f]\n"
		   "set xtics (%s)\n", lo, hi, x + 0.65, tics);
	fputs("set ylabel 'ratio B/A (> 1: B slower)'\nset xlabel 'threads'\nset grid\n"
	      "set key outside right top\nset format y '%.3g'\n"
	      "plot $ab_ratio using (stringcolumn(6) eq 'own_cost' ? $1 : NaN):3:4:5 "
	      "with yerrorbars pt 7 lw 1.5 title \"lock's own cost (1 thread)\", "
	      "$ab_ratio using (stringcolumn(6) eq 'whole_loop' ? $1 : NaN):3:4:5 "
	      "with yerrorbars pt 5 lw 1.5 title 'whole loop', "
	      "1 with lines dt 2 lc 'black' title 'no change'\n", b);
	fclose(b);
	lb_plot_emit(gp, body, dir, prefix, "paired-ratio", formats, o);
	free(body);
	return 1;
}
