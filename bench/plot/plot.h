/* SPDX-License-Identifier: MIT */
/*
 * plot.h - `lockbench plot FILE.json... -o DIR`: pictures of result files
 * through gnuplot (an optional run-time dependency, Debian gnuplot-nox).
 *
 * Generic over the workloads: a small per-schema description names the
 * x-axis param (threads for bench, users for aim7) and the metrics to draw;
 * a schema without one gets the scaling curve of its headline metric against
 * its first numeric param (or, when no numeric param varies, one bar per
 * cell).  bench files also get the latency distribution (per lock, log
 * axes) and per-thread fairness; rt files their latency histograms.
 */
#ifndef LB_PLOT_H
#define LB_PLOT_H

#include "result_file.h"

#include <stdbool.h>
#include <stdio.h>

struct lb_plot_quantile {
	const char *metric; /* e.g. "lat_p99_ns" */
	double q;           /* 0.99; 1 for the maximum */
};

struct lb_plot_desc {
	const char *schema;            /* "lockbench-bench" */
	const char *x_param;           /* "threads" */
	const char *const *curves;     /* metrics drawn against x, NULL-terminated */
	const struct lb_plot_quantile *quantiles; /* latency distribution, or NULL */
	size_t nquantiles;
	const char *samples_key;       /* run key: where "latency_samples" lives, or NULL */
	const char *per_thread_key;    /* run key of the per-thread array, or NULL */
	const char *per_thread_ops;    /* its count field */
	const char *hist_key;          /* cell key: array of objects with a "histogram" */
	const char *hist_unit;         /* unit of the histogram's bucket keys */
};

/* The description for a file (a generic one built from the file if none). */
void lb_plot_describe(const struct lb_rfile *f, struct lb_plot_desc *out);

enum { LB_PLOT_SVG = 1, LB_PLOT_PNG = 2 };

/*
 * Write the gnuplot script for one file: every picture in every format, to
 * `dir/<prefix>-<picture>.<ext>` via temporary names listed in *outputs
 * (the caller renames them once gnuplot succeeded).  Returns the number of
 * pictures.
 */
struct lb_plot_outputs {
	char **tmp, **final;
	size_t n;
};
size_t lb_plot_script(FILE *gp, const struct lb_rfile *f, const struct lb_plot_desc *d,
		      const char *dir, const char *prefix, int formats,
		      struct lb_plot_outputs *outputs);

#endif /* LB_PLOT_H */
