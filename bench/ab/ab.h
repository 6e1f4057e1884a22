/* SPDX-License-Identifier: MIT */
/*
 * ab.h - `lockbench ab A B`: a paired, finely interleaved A/B experiment in
 * one process.  Each cell (a thread count) is measured in blocks of four
 * short slices in ABBA order (BAAB in odd blocks), cells interleaved block
 * by block, every slice with its cache-line round trip.  A block gives one
 * pair: the mean ns/op of its two A slices and of its two B slices, measured
 * within ~100 ms of each other, so what the host does to the machine over
 * seconds hits both sides alike.  Per cell: the kernel list's table, the
 * Hodges-Lehmann estimate of the paired ratios B/A with its 95 % interval, and
 * Wilcoxon's signed-rank verdict on the paired log ratios.
 */
#ifndef LB_AB_H
#define LB_AB_H

#include <stdio.h>

#include "lockloop.h"
#include "lb_stats.h"
#include "lb_paired.h"
#include "lb_schema.h"
#include "lb_signrank.h"

#define LB_AB_MAX_CELLS 16
#define LB_AB_MAX_BLOCKS 2000
#define LB_AB_MIN_BLOCKS 6       /* 12 pairs: a signed-rank test can reject at 0.01/16 */
#define LB_AB_CONFIDENCE 0.95
#define LB_AB_OWN_ROUNDS 5        /* own-cost rounds per block (median of 5) */
/* Family-wise false-alarm level, split over the cells (Bonferroni).  1 %,
 * not 5 %: a user who runs `ab` 20 times on identical code should see at
 * most one false "difference" -- at 5 % two or more come up in 26 % of such
 * series (the quiet A/A series here had 2 of 20), at 1 % in 1.7 %.  A 5 %
 * slowdown is far past either level (p < 1e-6 with 60 pairs). */
#define LB_AB_ALPHA 0.01
#define LB_AB_DEFAULT_SLICE_NS UINT64_C(10000000)   /* 10 ms: more pairs in the same 4 s */
/* A pair is kept when its two slices' round trips are within this factor
 * of each other (or one is unknown): the host moves the vCPUs between
 * ~100 ns and ~500 ns placements, and a pair that straddles a move compares
 * two machines.  The test looks at the round trip only, never at the
 * locks' figures, so what it drops cannot favour either side. */
#define LB_AB_PLACEMENT_RATIO 1.5
/* Each slice's round-trip probe: short, so that on a loaded machine (the
 * partner thread waits for a CPU) it costs a few ms at worst, not 2 x 20. */
#define LB_AB_C2C_ROUNDS 200
#define LB_AB_C2C_BUDGET_NS UINT64_C(2000000)
#define LB_AB_DEFAULT_BUDGET_NS UINT64_C(4000000000) /* 4 s of slices: under 5 s in all */

enum { LB_AB_A, LB_AB_B, LB_AB_SIDES };

/* The paired figure: wall ns/op, CPU ns/op (time a thread was not run costs
 * nothing), or auto: CPU at 1 thread (a lone thread's CPU time is the work
 * it did, whatever else the machine ran), wall above (a waiter's spinning
 * or sleeping is the lock's cost). */
enum lb_ab_metric { LB_AB_METRIC_AUTO, LB_AB_METRIC_WALL, LB_AB_METRIC_CPU };

static inline bool lb_ab_uses_cpu(int metric, unsigned int nthreads)
{
	return metric == LB_AB_METRIC_CPU || (metric == LB_AB_METRIC_AUTO && nthreads == 1);
}

/* The paired ratio B/A of a cell (ab_report.c): Hodges-Lehmann on the log
 * ratios of the kept pairs, its interval, and the signed-rank test. */
struct lb_ab_ratio {
	size_t kept;                  /* pairs used */
	double ratio, lo, hi;         /* exp of the estimate and of the interval's ends */
	double coverage;              /* the interval's achieved coverage */
	struct lb_signrank rank;      /* on the same log ratios */
};

/* a[i], b[i] > 0 where keep[i] (keep NULL: all).  0, or -1 when no pair is
 * usable or memory runs out (*out: ratio 1, p 1). */
int lb_ab_ratio(const double *a, const double *b, const bool *keep, size_t n, double confidence,
		struct lb_ab_ratio *out);

struct lb_ab_config {
	struct lb_loop_params loop;   /* per slice: duration_ns is the slice */
	unsigned int threads[LB_AB_MAX_CELLS]; /* the cells' thread counts */
	size_t nthread_counts;
	const struct lb_lock_ops *lock[LB_AB_SIDES];
	uint64_t budget_ns;           /* slices stop after this (at LB_AB_MIN_BLOCKS blocks at least) */
	unsigned int blocks;          /* --blocks: exactly this many; 0 = as the budget allows */
	const char *json_path;
	bool quiet;
	bool wide;                    /* --wide: MIN and MAX too (default: the table fits 100 columns) */
	int metric;                   /* --metric: enum lb_ab_metric */
	int c2c_cpu[2];               /* the round trip's CPUs (the engine's own probe is off:
				       * ab probes each slice, shorter, in ab_run.c); -1 none */
};

struct lb_ab_cell {
	unsigned int nthreads;
	size_t nblocks;
	size_t npairs;                /* 2 per block */
	double *ns[LB_AB_SIDES];      /* per pair: the side's slice's wall ns/op */
	double *cpu[LB_AB_SIDES];     /* per pair: CPU ns/op likewise */
	double *ops[LB_AB_SIDES];     /* per pair: ops/s likewise */
	double *c2c;                  /* per pair: mean round trip of its slices; < 0 none */
	double *c2c_side[LB_AB_SIDES];/* per pair: the round trip before each side's slice */
	bool *keep;                   /* per pair: same placement (LB_AB_PLACEMENT_RATIO) */
	double *own[LB_AB_SIDES];     /* per block, 1-thread cells: the side's own cost
				       * (lb_loop_own_cost); NAN */
	double *own_none;             /* per block likewise: `none`'s (the calls alone) */
	uint64_t lost_updates[LB_AB_SIDES];
	uint64_t lock_failures[LB_AB_SIDES]; /* fallible locks: failed acquisitions */
	/* lb_ab_analyze */
	const double *value[LB_AB_SIDES]; /* the metric analysed: ns or cpu */
	struct lb_summary sum[LB_AB_SIDES];
	bool cpu_metric;              /* the value is CPU ns/op (lb_ab_uses_cpu) */
	struct lb_ab_ratio ratio;     /* B/A of the metric: > 1 means B is slower */
	double lock_cost[LB_AB_SIDES];/* 1 thread: median over blocks of own[side]; NAN otherwise */
	double call_cost;             /* likewise of own_none */
	double alpha;                 /* this cell's level */
	int verdict;                  /* -1 B better, 0 no difference shown, +1 B worse */
	bool withheld;                /* contended cell on a machine with more runnable work
				       * than CPUs: no verdict (LB_AB_WITHHOLD_LOAD) */
	double c2c_min, c2c_max;      /* < 0: not measured */
};

/* The side block `block` measures in its slot 0..3: ABBA, then BAAB. */
static inline int lb_ab_side(size_t block, unsigned int slot)
{
	int inner = (slot & 3) == 1 || (slot & 3) == 2;
	return inner ^ (int)(block & 1);
}

/* ab_opts.c: argv -> cfg; bad input: one line, exit 2. */
struct lb_opt_cmd;
extern const struct lb_opt_cmd lb_ab_cmd;
void lb_ab_parse(int argc, char **argv, struct lb_ab_config *cfg);
/* What a run leaves for the report: the cells and how long the interleaved
 * slices took (the budget's clock: the warm-up not counted). */
struct lb_ab_results {
	struct lb_ab_cell cells[LB_AB_MAX_CELLS];
	size_t n;                     /* cfg->nthread_counts */
	double elapsed_s;
};
/* ab_run.c: fills res (cfg->nthread_counts cells); 0 or errno. */
int lb_ab_run(const struct lb_ab_config *cfg, struct lb_ab_results *res);
void lb_ab_cells_free(struct lb_ab_cell *cells, size_t n);
/* ab_report.c */
/* A cell of 2+ threads gets no verdict when the threads runnable just
 * before the run besides ours (lb_runnable_others: procs_running, not the
 * 1-min load average, which remembers the previous run for a minute) were
 * at least this many times the online CPUs: its threads then
 * wait for CPUs, and what a slice measures is when the scheduler ran them
 * (an A/A run at load 90 on 2 CPUs said "B worse, +212 %").  The test looks
 * at the load only, never at the locks' figures.  The figures and the
 * interval are still reported. */
#define LB_AB_WITHHOLD_LOAD 1.0
/* load_per_cpu: the runnable threads before the run over the online CPUs (< 0
 * unknown: nothing withheld). */
void lb_ab_analyze(struct lb_ab_cell *cells, size_t n, int metric, double load_per_cpu);
struct lb_run_record; /* bench/workload.h: the command line, load, signal, host */
void lb_ab_report_table(FILE *out, const struct lb_ab_config *cfg,
			const struct lb_run_record *rec, const struct lb_ab_results *res);
void lb_ab_report_json(FILE *out, const struct lb_ab_config *cfg,
		       const struct lb_run_record *rec, const struct lb_ab_results *res);
extern const struct lb_workload_schema lb_schema_ab;
/* ab_main.c: the workload's stages, lb_workload_ab. */

#endif /* LB_AB_H */
