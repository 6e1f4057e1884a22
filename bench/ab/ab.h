/* SPDX-License-Identifier: MIT */
/*
 * ab.h - `lockbench ab A B`: a paired, finely interleaved A/B experiment in
 * one process.  Each cell (a thread count) is measured in blocks of four
 * short slices in ABBA order (BAAB in odd blocks), cells interleaved block
 * by block, every slice with its cache-line round trip.  A block gives one
 * pair: the mean ns/op of its two A slices and of its two B slices, measured
 * within ~100 ms of each other, so what the host does to the machine over
 * seconds hits both sides alike.  Per cell: the kernel list's table, the
 * paired ratio B/A with its interval, blocks as the unit (ab_ratio.c), and
 * the verdict that interval gives at the same level; at 1 thread the
 * headline is the ratio of the locks' own cost (lock+unlock less the bare
 * loop), measured at the start of every block, beside the whole loop's.
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
#define LB_AB_MIN_BLOCKS 9       /* the interval's fewest (lib/lb_blockci.h: 2 df) */
#define LB_AB_OWN_ROUNDS 5        /* own-cost rounds per block (median of 5) */
/* Family-wise false-alarm level, split over the cells (Bonferroni); each
 * cell's interval is printed at its 1 - level (97.5 % with 2 cells), and
 * its verdict is that interval excluding 1: one level for both.  5 %, with
 * intervals that hold it (blocks as the unit, lib/lb_blockci.h): over 20
 * A/A runs a cell of a 2-cell run says "difference" 0.5 times on average,
 * twice or more in 9 % of such series.  The signed-rank test on pairs used
 * before needed 1 %: 4 of 20 quiet A/A 2-thread intervals excluded 1 at
 * its 95 % (and the bootstrap's 2 of 20 at 97.5 %: doc/ab.md, "Why two
 * intervals", points to an offset per process that no interval within one
 * run covers).  At 1 % the intervals over a
 * default run's ~12 blocks would be much wider (the bootstrap's t with 3
 * df ~1.8x): a 5 % change out of reach of a default run. */
#define LB_AB_ALPHA 0.05
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

/* A paired ratio B/A of a cell (ab_ratio.c), blocks as the unit: each
 * block's log ratio (its kept pairs' mean, or its own-cost ratio); their
 * trimmed mean and moving-block bootstrap interval at level 1 - alpha, or
 * (rank) their Hodges-Lehmann estimate and signed-rank interval
 * (lib/lb_blockci.h); the verdict is that interval excluding 1. */
struct lb_ab_ratio {
	size_t kept;                  /* pairs (or own-cost figures) used */
	size_t blocks;                /* blocks with one at least: the interval's unit */
	double ratio, lo, hi;         /* exp of the estimate and of the interval's ends */
	double alpha;                 /* the interval's (and verdict's) level: 1 - alpha */
	double mdc_pct;               /* minimum detectable change, %: "could see +-X %" */
	size_t block_len;             /* the bootstrap's resampling block, in blocks (rank: 1) */
	double df, rho;               /* the t quantile's df (rank: NAN); lag-1 autocorrelation used */
	bool rank_interval;           /* the signed-rank interval over the blocks */
	double widen;                 /* rank: the half-widths' AR(1) factor (>= 1) */
	struct lb_signrank rank;      /* over the pairs' log ratios: a description only */
};

/* a[i], b[i] > 0 where keep[i] (keep NULL: all); values i = k * per_block ..
 * (k + 1) * per_block - 1 belong to block k.  0, or -1 when fewer than
 * LB_BLOCKCI_MIN_N blocks are usable or memory runs out (*out: the estimate where one
 * exists, no interval: lo = hi = ratio, mdc_pct INFINITY). */
int lb_ab_ratio(const double *a, const double *b, const bool *keep, size_t n, size_t per_block,
		double alpha, bool rank, struct lb_ab_ratio *out);
/* +1 B worse (the interval above 1), -1 B better, 0 neither or no interval. */
int lb_ab_ratio_verdict(const struct lb_ab_ratio *r);

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
	struct lb_ab_ratio ratio;     /* B/A of the metric over the whole loop: > 1 means B is slower */
	struct lb_ab_ratio own_ratio; /* 1 thread: B/A of the lock's own cost per block (the
				       * headline, ab_report.c); blocks 0 otherwise */
	bool own_headline;            /* the verdict is own_ratio's */
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
