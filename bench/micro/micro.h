/* SPDX-License-Identifier: MIT */
/*
 * micro.h - the `lockbench bench` workload: configuration, per-run results
 * and the three stages (parse options -> run -> report).
 */
#ifndef LB_MICRO_H
#define LB_MICRO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lockloop.h"
#include "lb_c2c_pairs.h"
#include "lb_lock_ops.h"
#include "lb_time.h"
#include "lb_stats.h"
#include "lb_topo.h"

#define LB_MICRO_MAX_LOCKS LB_LOOP_OWN_MAX_LOCKS
#define LB_MICRO_MAX_THREAD_COUNTS 64
/* --repeat's limit: a cell's runs fit fixed arrays of this size (micro_report.c).
 * A plain number: micro_opts.c spells it into --help and the error. */
#define LB_MICRO_MAX_REPEAT 1000
struct lb_micro_config {
	const struct lb_lock_ops *locks[LB_MICRO_MAX_LOCKS];
	size_t nlocks;
	unsigned int threads[LB_MICRO_MAX_THREAD_COUNTS];
	size_t nthread_counts;
	struct lb_loop_params loop; /* each run's length, work, pinning, mix, sampling */
	unsigned int repeat;
	bool explain;            /* print lock counters */
	bool quiet;              /* no progress lines on stderr */
	const char *json_path, *csv_path;
	bool json_gbench;        /* --format gbench: --json writes Google Benchmark's JSON */
	bool table_median;       /* the table shows medians across repeats, not means */
	bool table_tail;         /* the table shows p99.9 and max latency (default true) */
	bool table_brief;        /* the default comparison's columns: no cyc/op, ovh_ns,
				  * cov, ovlap (exclusive workload only) */
	const char *table_note;  /* "# ..." lines printed under the table header, or NULL */
	bool wide;               /* --wide: every column (default: those fitting 100 columns) */
};

struct lb_run_record; /* bench/workload.h */

/* Figures that get mean/sd/median/min/max across repeats. */
enum lb_metric {
	LB_M_OPS_PER_SEC,
	LB_M_NS_PER_OP,
	LB_M_CYCLES_PER_OP,
	LB_M_CPU_NS_PER_OP,
	LB_M_OVERHEAD_NS,
	LB_M_FAIRNESS_COV,
	LB_M_MIN_MAX_RATIO,
	LB_M_OVERLAP,
	LB_M_LAT_P50,
	LB_M_LAT_P99,
	LB_M_LAT_P999,
	LB_M_LAT_MAX,
	LB_M_READ_OPS_PER_SEC,
	LB_M_WRITE_OPS_PER_SEC,
	LB_M_READ_LAT_P50,
	LB_M_READ_LAT_P99,
	LB_M_READ_LAT_P999,
	LB_M_READ_LAT_MAX,
	LB_M_WRITE_LAT_P50,
	LB_M_WRITE_LAT_P99,
	LB_M_WRITE_LAT_P999,
	LB_M_WRITE_LAT_MAX,
	LB_M_LAT_P99_WORST_THREAD, /* the highest of the threads' own p99: a starved
				    * thread's few samples count as much as a busy one's */
	LB_M_LOCK_NS_PER_OP,       /* 1 thread: the lock's own cost (lb_loop_own_cost) */
	LB_M_COUNT
};

const char *lb_metric_name(enum lb_metric m);
double lb_metric_value(const struct lb_run_result *r, enum lb_metric m);

/* All repeats of one (lock, threads) cell, and their summaries. */
struct lb_cell {
	const struct lb_lock_ops *ops;
	unsigned int nthreads;
	struct lb_run_result *runs; /* repeat entries */
	unsigned int nruns;
	struct lb_summary summary[LB_M_COUNT];
};

/* micro_opts.c: parse argv into cfg; bad input -> lb_usage_error (exit 2). */
struct lb_opt_cmd;
extern const struct lb_opt_cmd lb_micro_cmd;
extern const struct lb_workload_schema lb_schema_bench; /* micro_report.c */
void lb_micro_parse(int argc, char **argv, struct lb_micro_config *cfg);
void lb_micro_defaults(struct lb_micro_config *cfg);
void lb_micro_usage(FILE *out);

/* micro_report.c */
void lb_cells_summarize(struct lb_cell *cells, size_t ncells);
struct lb_hostinfo;
void lb_report_table(FILE *out, const struct lb_micro_config *cfg,
		     const struct lb_run_record *rec,
		     const struct lb_hostinfo *host, const struct lb_cell *cells, size_t ncells);
void lb_report_json(FILE *out, const struct lb_micro_config *cfg,
		    const struct lb_run_record *rec, const struct lb_hostinfo *host,
		    const struct lb_c2c_pairs *pairs, const struct lb_cell *cells, size_t ncells);
void lb_report_csv(FILE *out, const struct lb_micro_config *cfg, const struct lb_cell *cells,
		   size_t ncells);

/* micro_gbench.c: `--json FILE --format gbench`, Google Benchmark's JSON.
 * 0, or -1 after an error line. */
int lb_report_gbench(FILE *out, const struct lb_micro_config *cfg,
		     const struct lb_run_record *rec, const struct lb_hostinfo *host,
		     const struct lb_cell *cells, size_t ncells);

#endif /* LB_MICRO_H */
