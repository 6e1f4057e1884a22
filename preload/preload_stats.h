/* SPDX-License-Identifier: MIT */
/*
 * preload_stats.h - the exit snapshot of the statistics, shared by the
 * summary/JSON writer (preload_stats.c) and the kernel- and perf-format
 * writers (preload_lockstat_out.c).
 */
#ifndef LB_PRELOAD_STATS_H
#define LB_PRELOAD_STATS_H

#include "preload.h"
#include "preload_schema.h"

#include <stdio.h>

/* A point of a class: a site and how many waits it had. */
struct lbp_point_snap {
	const void *ip;
	uint64_t count;
};

/* The lockstat bookkeeping (struct lbp_lockstat) summed over a class. */
struct lbp_class_lockstat {
	uint64_t owner_changes, spin_resolved, slept, con_bounces, acq_bounces;
	uint64_t min_wait_ns, min_hold_ns; /* UINT64_MAX: none */
	bool rt;
	struct lbp_point_snap contention[LBP_POINTS], contending[LBP_POINTS];
};

/* Indexes into lb_schema_preload.metrics (preload_schema.c). */
enum { S_CONT, S_CONT_PCT, S_ACQ, S_TRYF, S_WAIT, S_MAXWAIT, S_AVGWAIT, S_HOLD, S_MAXHOLD,
       S_AVGHOLD, S_MUTEXES };

/* One mutex, live or destroyed, or (summed) one class. */
struct lbp_snap {
	const void *mutex;      /* a class: its first mutex */
	const void *site;       /* the class */
	bool data;              /* site is a static mutex's own address, not a call site */
	uint32_t serial;
	struct lbp_lock *lock;  /* NULL: destroyed before exit (a class: none live) */
	uint64_t mutexes, destroyed; /* a class: how many of each */
	uint64_t v[LBP_NMETRICS];
};

/* A class: its summed mutexes and their histograms. */
struct lbp_class {
	struct lbp_snap s;
	uint64_t wait_hist[LBP_HIST_BUCKETS], hold_hist[LBP_HIST_BUCKETS];
	struct lbp_class_lockstat ls;
};

struct lbp_totals {
	uint64_t acq, cont, wait, hold;
	size_t live;    /* mutexes not destroyed */
	size_t listed;  /* live + remembered destroyed ones */
	size_t nclass;  /* classes, in classes[] by contention */
	struct lbp_class *classes;
};

/* Fold one lock's lockstat into a class's; and two classes' together. */
void lbp_class_lockstat_add_lock(struct lbp_class_lockstat *c, struct lbp_lock *l);
void lbp_class_lockstat_add(struct lbp_class_lockstat *c, const struct lbp_class_lockstat *y);

/* A class key's name ("symbol+0xoff (object)", "object+0xoff", "&..."). */
void lbp_site_name(const void *site, bool data, char *buf, size_t len, const char **object);

/* LOCKBENCH_LOCKSTAT and LOCKBENCH_CONTENTION outputs, at exit. */
void lbp_write_lock_stat(FILE *out, const struct lbp_totals *t);
void lbp_write_contention(FILE *out, const struct lbp_totals *t, const char *sep);

#endif /* LB_PRELOAD_STATS_H */
