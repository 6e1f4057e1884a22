/* SPDX-License-Identifier: MIT */
/*
 * micro.h - the `lockbench bench` workload: configuration, per-run results
 * and the three stages (parse options -> run -> report).
 */
#ifndef LB_BENCH_H
#define LB_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lb_lock_ops.h"
#include "lb_time.h"
#include "lb_stats.h"
#include "lb_topo.h"

#define LB_BENCH_MAX_LOCKS 64
#define LB_BENCH_MAX_THREAD_COUNTS 64
#define LB_BENCH_MAX_THREADS 1024
#define LB_BENCH_MAX_CS_LINES 64
/* --repeat's limit: a cell's runs fit fixed arrays of this size (micro_report.c).
 * A plain number: micro_opts.c spells it into --help and the error. */
#define LB_BENCH_MAX_REPEAT 1000
/* How long threads may take to leave the loop after the stop flag. */
#define LB_BENCH_STOP_GRACE_NS (UINT64_C(10) * LB_NS_PER_S)

/* A critical or parallel section length: iterations, or ns to convert. */
struct lb_work_len {
	uint64_t value;
	bool in_ns;
	uint64_t iters; /* resolved after calibration */
};

struct lb_bench_config {
	const struct lb_lock_ops *locks[LB_BENCH_MAX_LOCKS];
	size_t nlocks;
	unsigned int threads[LB_BENCH_MAX_THREAD_COUNTS];
	size_t nthread_counts;
	uint64_t duration_ns;
	struct lb_work_len cs, par;
	unsigned int cs_lines;
	struct lb_pin pin;
	unsigned int repeat;
	int read_pct;            /* -1: exclusive workload; 0..100: read/write mix */
	unsigned int sample_shift; /* latency sampled every 2^shift ops */
	bool explain;            /* print lock counters */
	bool quiet;              /* no progress lines on stderr */
	const char *json_path, *csv_path;
	const char *argv_joined; /* the command line, for the JSON */
	bool json_gbench;        /* --format gbench: --json writes Google Benchmark's JSON */
	bool table_median;       /* the table shows medians across repeats, not means */
	bool table_tail;         /* the table shows p99.9 and max latency (default true) */
	bool table_brief;        /* the default comparison's columns: no cyc/op, ovh_ns,
				  * cov, ovlap (exclusive workload only) */
	const char *table_note;  /* "# ..." lines printed under the table header, or NULL */
	int c2c_cpu[2];          /* CPUs whose cache-line round trip is measured before
				  * and after each run (lib/lb_c2c.h); -1: not measured */
};

/* What a run found and what happened to it, beside the options it ran with:
 * filled by micro_main.c, read by the reports. */
struct lb_bench_run_record {
	double load_before;      /* 1-min load average before the first run; < 0 unknown */
	int interrupted_by;      /* the signal that ended the run early; 0 = none */
};

enum lb_side { LB_SIDE_WRITE, LB_SIDE_READ, LB_SIDES };

struct lb_thread_result {
	unsigned int index;
	int cpu;
	uint64_t ops[LB_SIDES];
	uint64_t window_ops;   /* ops done while every thread was running (fairness) */
	uint64_t cpu_ns;
	uint64_t start_ns, end_ns;
};

struct lb_side_result {
	uint64_t ops;
	double ops_per_sec;
	uint64_t lat_samples;
	double lat_p50_ns, lat_p99_ns, lat_p999_ns, lat_max_ns;
};

struct lb_run_result {
	const struct lb_lock_ops *ops;
	unsigned int nthreads;
	unsigned int repeat_index;
	uint64_t total_ops, elapsed_ns;
	double ops_per_sec, ns_per_op, cycles_per_op, cpu_ns_per_op, overhead_ns;
	double fairness_cov, min_max_ratio, overlap;
	bool overhead_clamped;     /* overhead_ns came out < 0 and is shown as 0 */
	bool exclusive;            /* no read side: read figures are null, not 0 */
	double lat_p99_worst_thread_ns; /* max over threads of each thread's p99 */
	double lock_ns_per_op;     /* 1 thread: the lock's own cost in the run's round
				    * (lb_bench_own_cost; NAN: none) */
	struct lb_side_result side[LB_SIDES];
	uint64_t lost_updates;     /* exclusive: increments missing from shared data */
	uint64_t torn_reads;       /* rw: reader saw writers' fields disagree */
	struct lb_counter counters[LB_MAX_COUNTERS];
	size_t ncounters;
	char describe[LB_DESCRIBE_MAX];        /* ops->describe() of the run's lock, or "" */
	double c2c_before_ns, c2c_after_ns; /* cache-line round trip between
				    * cfg->c2c_cpu[] just before and after the run; < 0:
				    * not measured (one CPU) or it timed out */
	struct lb_thread_result *threads; /* nthreads entries */
};

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
	LB_M_LOCK_NS_PER_OP,       /* 1 thread: the lock's own cost (lb_bench_own_cost) */
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
void lb_bench_parse(int argc, char **argv, struct lb_bench_config *cfg);
void lb_bench_defaults(struct lb_bench_config *cfg);
void lb_bench_usage(FILE *out);

/* micro_run.c: one measurement.  0 or an errno value (thread creation...). */
int lb_bench_run_one(const struct lb_bench_config *cfg, const struct lb_lock_ops *ops,
		     unsigned int nthreads, struct lb_run_result *out);
void lb_run_result_free(struct lb_run_result *r);

/*
 * micro_own.c: the own cost at 1 thread of each of ops[0..n) (n <=
 * LB_BENCH_MAX_LOCKS): a tight lock(); unlock(); loop through the vtable
 * on one thread pinned to cpu (-1: unpinned), CPU ns/op less the bare loop,
 * median over `rounds` interleaved rounds -- the calls included, as a
 * direct-call loop pays them; *none_out: the same for `none` (the calls
 * alone).  NAN on failure.  0 or an errno value.
 */
#define LB_BENCH_OWN_ROUNDS 15
int lb_bench_own_cost(const struct lb_lock_ops *none, const struct lb_lock_ops *const *ops,
		      size_t n, int cpu, unsigned int rounds, double *out, double *none_out);

/*
 * Interrupted runs (SIGINT, SIGTERM, SIGHUP, SIGQUIT): the handler calls
 * lb_bench_request_stop(sig) (async-signal-safe); the run in progress ends
 * at once and lb_bench_run_one() returns EINTR for it; lb_bench_stop_signal()
 * says which signal asked (0 = none).
 */
void lb_bench_request_stop(int sig);
int lb_bench_stop_signal(void);

/* micro_report.c */
void lb_cells_summarize(struct lb_cell *cells, size_t ncells);
struct lb_hostinfo;
void lb_report_table(FILE *out, const struct lb_bench_config *cfg,
		     const struct lb_bench_run_record *rec,
		     const struct lb_hostinfo *host, const struct lb_cell *cells, size_t ncells);
void lb_report_json(FILE *out, const struct lb_bench_config *cfg,
		    const struct lb_bench_run_record *rec,
		    const struct lb_hostinfo *host, const struct lb_cell *cells, size_t ncells);
void lb_report_csv(FILE *out, const struct lb_bench_config *cfg, const struct lb_cell *cells,
		   size_t ncells);

/* micro_gbench.c: `--json FILE --format gbench`, Google Benchmark's JSON.
 * 0, or -1 after an error line. */
int lb_report_gbench(FILE *out, const struct lb_bench_config *cfg,
		     const struct lb_bench_run_record *rec, const struct lb_hostinfo *host,
		     const struct lb_cell *cells, size_t ncells);

#endif /* LB_BENCH_H */
