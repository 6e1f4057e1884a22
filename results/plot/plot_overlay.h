/* SPDX-License-Identifier: MIT */
/* plot_overlay.h - `lockbench plot --overlay` (plot_overlay.c). */
#ifndef LB_PLOT_OVERLAY_H
#define LB_PLOT_OVERLAY_H

#include "plot.h"

/*
 * The overlay picture of files[0..nfiles-1] (names: how each is labelled)
 * with d from files[0]: written to gp, outputs listed in *o, as
 * DIR/overlay-<metric>-vs-<x>.<ext>.  Returns the number of pictures (0 or 1).
 */
size_t lb_plot_overlay(FILE *gp, const struct lb_rfile *files, const char *const *names,
		       size_t nfiles, const struct lb_plot_hints *d, const char *dir, int formats,
		       struct lb_plot_outputs *o);

/* plot_script.c's terminal/output set-up for each format around `body`. */
void lb_plot_emit(FILE *gp, const char *body, const char *dir, const char *prefix,
		  const char *picture, int formats, struct lb_plot_outputs *o);

#endif /* LB_PLOT_OVERLAY_H */
