/* SPDX-License-Identifier: MIT */
/*
 * ab_paired.h - the paired figures a `lockbench ab` file carries (each
 * cell's B result, "paired"): what `compare` and `plot` show of such a file
 * instead of re-testing its slices as if they were independent samples.
 * Per cell one row for the figure its verdict is on (at 1 thread the
 * lock's own cost) and, when that is the own cost, one for the whole loop.
 */
#ifndef LB_AB_PAIRED_H
#define LB_AB_PAIRED_H

#include "result_file.h"

#include <stdbool.h>
#include <stddef.h>

struct lb_abp_row {
	double threads;
	const char *figure;     /* "own cost" or the paired metric ("cpu_ns_per_op") */
	double ratio, lo, hi;   /* B/A and its interval; lo, hi NAN: no interval */
	double mdc_pct;         /* "could see +-X %"; NAN: none */
	double confidence;      /* the interval's level (the verdict's) */
	size_t blocks;          /* the interval's unit */
	const char *verdict;    /* "worse", "better", "none", "withheld"; "" on a row
				 * that is not the verdict's */
};

/* Is f an ab file with paired figures (schema lockbench-ab)? */
bool lb_abp_is_ab(const struct lb_rfile *f);
/* Its rows, at most cap, in the file's order; the count (0: none). */
size_t lb_abp_rows(const struct lb_rfile *f, struct lb_abp_row *rows, size_t cap);
/* Lock names of A and B (config.lock_a, lock_b; "?" when missing). */
const char *lb_abp_lock(const struct lb_rfile *f, int b);

#endif /* LB_AB_PAIRED_H */
