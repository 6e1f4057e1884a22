/* SPDX-License-Identifier: MIT */
/*
 * plot.h - `lockbench plot FILE.json... -o DIR`: pictures of result files
 * through gnuplot (an optional run-time dependency, Debian gnuplot-nox).
 *
 * Generic over the workloads: each schema's plot hints (struct lb_plot_hints,
 * lib/lb_schema.h, defined beside the workload's metric table) name the
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

/* The description for a file: its schema's hints, or a generic one built
 * from the file when there are none or the file lacks what they name. */
void lb_plot_describe(const struct lb_rfile *f, struct lb_plot_hints *out);
/* s as a gnuplot string that nothing in it can escape (single-quoted, no
 * backquote or @macro expansion): every string from a file goes through it. */
void lb_plot_gp_string(FILE *gp, const char *s);

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
/* The "skipped" lines of the last lb_plot_script(): printed on stderr
 * (print) or dropped (nothing was drawn). */
void lb_plot_flush_notes(bool print);

size_t lb_plot_script(FILE *gp, const struct lb_rfile *f, const struct lb_plot_hints *d,
		      const char *dir, const char *prefix, int formats,
		      struct lb_plot_outputs *outputs);

/* The command that made f, as titles print it: "lockbench ab ...", the
 * program named once whether the file recorded it or not. */
void lb_plot_command_text(const struct lb_rfile *f, char *buf, size_t len);

/* An ab file (plot_ab.c): the paired ratio per cell with its interval, log
 * axis, as DIR/<prefix>-paired-ratio.<ext>.  The number of pictures (0: no
 * cell has an interval). */
size_t lb_plot_ab(FILE *gp, const struct lb_rfile *f, const char *dir, const char *prefix,
		  int formats, struct lb_plot_outputs *outputs);

#endif /* LB_PLOT_H */
