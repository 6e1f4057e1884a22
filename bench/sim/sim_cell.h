/* SPDX-License-Identifier: MIT */
/*
 * sim_cell.h - `lockbench sim` (doc/sim.md): bench-style cells (a lock,
 * threads, critical-section and parallel work) run on the simulator
 * (engines/sim) with the registry's own lock code, built a second time
 * over sim_interpose.h.  Every figure is a model prediction.
 *
 * (The recipe's name for this header would be sim.h; that is the engine's
 * header, which this folder includes, hence sim_cell.h.)
 */
#ifndef LB_SIM_CELL_H
#define LB_SIM_CELL_H

#include "lb_lock_ops.h"
#include "lb_schema.h"
#include "sim.h"

struct lb_simr_config;

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define LB_SIMB_MAX_LOCKS 32
#define LB_SIMB_MAX_THREADS 1024
#define LB_SIMB_MAX_POINTS 16

/* What was asked (const from the run stage on). */
struct lb_simb_config {
	const struct lb_lock_ops *locks[LB_SIMB_MAX_LOCKS]; /* the simulated copies */
	size_t nlocks;
	unsigned int threads[LB_SIMB_MAX_POINTS];
	size_t nthreads;
	unsigned int cpus[LB_SIMB_MAX_POINTS]; /* CPUs used (the first N); 0: all */
	size_t ncpus;
	uint64_t cs_ns, par_ns;  /* work inside and outside the lock, per acquisition */
	uint64_t duration_ns;    /* simulated */
	uint64_t seed;
	const char *machine_path;
	struct lb_sim_machine machine;
	const char *json_path;
	bool quiet;
	const char *measure_path; /* --measure-machine: write this machine file, run no cell */
	/* --workload aim7 (sim_aim7.c): aim7's load points instead of cells. */
	bool aim7;
	unsigned int users[LB_SIMB_MAX_POINTS];
	size_t nusers;
	const char *workfile, *costs;
	const struct lb_lock_ops *aim_mutex; /* the mutex role's simulated copy */
	const struct lb_lock_ops *aim_spin, *aim_rw; /* the spin and rw roles' */
	uint64_t window_ns;
	const struct lb_simr_config *rt; /* --workload rt (sim_rt.h): no cell, its own run */
};

/* The analytic cross-check (sim_analytic.c, doc/sim.md): which closed
 * queue fits the cell's lock, its inputs and its prediction. */
enum lb_simb_analytic_kind {
	LB_SIMB_AN_NONE,   /* no model fits: why_not says why */
	LB_SIMB_AN_TICKET, /* Boyd-Wickizer et al. 2012: S(k) = s + t k */
	LB_SIMB_AN_QUEUE,  /* machine repairman, M/M/1//n: S(k) = s + t */
};
struct lb_simb_analytic {
	enum lb_simb_analytic_kind kind;
	const char *why_not;
	unsigned int n;         /* cores: the cell's threads */
	double a_ns, s_ns, t_ns; /* --par, --cs, the mean line transfer */
	double acquires_per_s;  /* the model's throughput */
};

/* One cell's figures (model predictions) and what it cost the host. */
struct lb_simb_cell {
	const char *lock;
	unsigned int threads, cpus;
	uint64_t acquires;        /* acquisitions that began in the window */
	double acquires_per_s;    /* per simulated second */
	uint64_t handovers;       /* acquisitions that waited through a release */
	double handover_ns;       /* mean release-to-acquire time of those */
	double fairness;          /* min / max acquisitions per thread */
	uint64_t events;          /* simulator events of the whole cell */
	uint64_t sim_ns;          /* virtual time the cell ran */
	uint64_t transfers, switches, wakeups;
	uint64_t violations;      /* two threads inside the lock at once */
	bool counter_ok;          /* the critical sections' counter added up */
	bool nolock;              /* `none`: excludes nobody by design, not checked */
	uint64_t digest;          /* of every event (same seed: same digest) */
	double host_s, host_cpu_s; /* host wall and CPU time of the cell */
	/* The lock's own event counters (bench --explain's), read from the
	 * simulated copy after the cell: events since its init, in virtual time. */
	struct lb_counter counters[LB_MAX_COUNTERS];
	size_t ncounters;
	struct lb_simb_analytic analytic; /* from the inputs only, not the run */
};

/* sim_opts.c */
extern const struct lb_opt_cmd lb_sim_cmd;
void lb_simb_parse(int argc, char **argv, struct lb_simb_config *cfg);

/* sim_locks.c: the locks built over sim_interpose.h, in manifest order. */
const struct lb_lock_ops *lb_simb_lock_find(const char *name);
size_t lb_simb_lock_count(void);
const struct lb_lock_ops *lb_simb_lock_at(size_t i);

/* sim_run.c: one cell; 0, or an errno value when it could not start. */
int lb_simb_run_cell(const struct lb_simb_config *cfg, const struct lb_lock_ops *ops,
		     unsigned int threads, unsigned int cpus, struct lb_simb_cell *out);

/* sim_analytic.c */
void lb_simb_analytic(const struct lb_simb_config *cfg, const char *lock, unsigned int threads,
		      unsigned int cpus, struct lb_simb_analytic *out);
/* The mean of lb_sim_machine_distance over ordered pairs of distinct CPUs
 * among the first `cpus` (0 for one CPU). */
double lb_simb_mean_transfer(const struct lb_sim_machine *m, unsigned int cpus);
const char *lb_simb_analytic_name(enum lb_simb_analytic_kind kind);

/* sim_report.c */
extern const struct lb_workload_schema lb_schema_sim;
void lb_simb_print_header(FILE *out, const struct lb_simb_config *cfg);
void lb_simb_print_cell(FILE *out, const struct lb_simb_cell *c);
void lb_simb_print_host(FILE *out, const struct lb_simb_cell *c);
/* The analytic cross-check's block under the table: every line a comment. */
void lb_simb_print_analytic(FILE *out, const struct lb_simb_cell *cells, size_t ncells);
struct lb_run_record;
struct lb_json;
void lb_simb_machine_json(struct lb_json *j, const struct lb_simb_config *cfg);
/* The same "machine" object for a run that keeps its machine elsewhere
 * (--workload rt): the file's path and every field. */
void lb_simb_machine_json_of(struct lb_json *j, const char *path, const struct lb_sim_machine *m);
/* A result of one run, in the schemas' shape: "summary" (each metric over
 * its single value), then "runs": [ { "repeat_index": 0, each metric, left
 * open for the caller's own fields; it closes the object and the array. */
struct lb_metric_desc;
void lb_simb_json_one_run_begin(struct lb_json *j, const struct lb_metric_desc *metrics,
				const double *v, size_t n);
void lb_simb_write_json(FILE *fp, const struct lb_simb_config *cfg,
			const struct lb_run_record *rec, const struct lb_simb_cell *cells,
			size_t ncells);

/* sim_aim7.c: `--workload aim7`, the run stage (the load points, each
 * printed as it ends; run->results is its own allocation) and the report
 * stage (the JSON; 1 when a point failed aim7's invariant check or got
 * stuck). */
struct lb_run;
extern const struct lb_workload_schema lb_schema_sim_aim7;
int lb_simaim_run(struct lb_run *run);
int lb_simaim_report(struct lb_run *run);

#endif /* LB_SIM_CELL_H */
