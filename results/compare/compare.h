/* SPDX-License-Identifier: MIT */
/*
 * compare.h - `lockbench compare`: groups of samples (one cell's metric, or
 * one column of plain numbers) from two or more sides, their summaries, the
 * delta of each side against the first, and the verdict (Welch's t at the
 * chosen confidence, Mann-Whitney U p-value); written as the kernel-list
 * table, JSON or CSV.
 */
#ifndef LB_COMPARE_H
#define LB_COMPARE_H

#include "lb_schema.h"
#include "lb_stats.h"
#include "lb_ttest.h"

#include <stdbool.h>
#include <stdio.h>

#define LB_CMP_MAX_SIDES 8
/* Fewer runs than this on a side: the verdict carries a warning. */
#define LB_CMP_MIN_RUNS 5

struct lb_cmp_side {
	const double *v;
	size_t n;
	struct lb_summary s;
	/* Against side 0 (unset for side 0): */
	bool tested;            /* both sides had >= 2 values */
	bool not_computable;    /* ...but the test overflowed (lb_welch_test) */
	struct lb_welch welch;
	struct lb_mwu mwu;
};

struct lb_cmp_group {
	char label[256];        /* cell label and metric */
	char cell[200];         /* cell label alone */
	const char *metric, *unit;
	enum lb_better better;
	struct lb_cmp_side side[LB_CMP_MAX_SIDES];
};

struct lb_cmp_report {
	double confidence;      /* fraction, e.g. 0.95 */
	size_t nsides;
	const char *side_label[LB_CMP_MAX_SIDES];
	const char *side_path[LB_CMP_MAX_SIDES];
	/* Two sides of one file: the selector of each ("lock=ticket"), else NULL. */
	const char *side_selector[LB_CMP_MAX_SIDES];
	/* The 1-minute load average before the side's runs; < 0: not recorded. */
	double side_load[LB_CMP_MAX_SIDES];
	/* Steal time over the side's run (config.steal_s, s); < 0: not recorded. */
	double side_steal[LB_CMP_MAX_SIDES];
	bool side_interrupted[LB_CMP_MAX_SIDES]; /* the file says "interrupted": true */
	const char *side_model[LB_CMP_MAX_SIDES]; /* its "model" (a prediction), or NULL */
	/* Cache-line round trips the side's runs saw (min, median, max ns; < 0:
	 * not recorded): see lb_rfile and lib/lb_c2c.h. */
	double side_c2c[LB_CMP_MAX_SIDES][3];
	const char *schema;     /* "lockbench-bench-1", or "plain" */
	bool sequential_ab;     /* two or more ab files: the table repeats the warning */
	bool wide;              /* --wide: the kernel list's table as it is (MIN, MAX, VERDICT) */
	struct lb_cmp_group *groups;
	size_t ngroups;
	/* Cells not present in every file: "(A) label" lines. */
	char **unmatched;
	size_t nunmatched;
};

/* A median round trip this many times another side's means the host placed
 * the CPUs differently for the two (lib/lb_c2c.h). */
#define LB_CMP_C2C_MOVED_RATIO 2.0

/* Load averages further apart than this plus this fraction of the lower one
 * mean the machine was busier for one file than for the other. */
#define LB_CMP_LOAD_MOVED_ABS 0.5
#define LB_CMP_LOAD_MOVED_FRAC 0.5

/* Steal times (s) further apart than this plus this fraction of the lower
 * one: a hypervisor took more of the vCPUs from one run than the other. */
#define LB_CMP_STEAL_MOVED_ABS 0.5
#define LB_CMP_STEAL_MOVED_FRAC 0.5

/* Summaries and tests of every group. */
void lb_cmp_compute(struct lb_cmp_report *r);

void lb_cmp_write_table(FILE *out, const struct lb_cmp_report *r);
void lb_cmp_write_json(FILE *out, const struct lb_cmp_report *r);
void lb_cmp_write_csv(FILE *out, const struct lb_cmp_report *r);

/* The verdict text of side i of a group ("difference ..." / "no difference ..."). */
void lb_cmp_verdict(const struct lb_cmp_report *r, const struct lb_cmp_group *g, size_t i,
		    char *buf, size_t len);

#endif /* LB_COMPARE_H */
