/* SPDX-License-Identifier: MIT */
/*
 * aim7.h - `lockbench aim7`: an AIM7/re-aim work-alike whose "system" work
 * runs on a small simulated kernel (kern.h) guarded by locks from the
 * registry.  Pieces:
 *
 *   workfile.c  re-aim workfiles: parse, look up tests, assign jobs
 *   figures.c   re-aim's figures (Jobs/min, JTI...) from child times
 *   kern_*.c    the simulated kernel, one file per subsystem (kern.h),
 *               and its invariant checks (kern_check.c)
 *   tests_sys.c the system tests (creat_clo, link_test, page_test...)
 *   tests_user.c the user-time tests (add_*, sieve, ...): no locks
 *   aim7_run.c    one load point: N children (threads), barrier, watchdog
 *   aim7_report.c the log table, CSV and JSON
 *   aim7_opts.c   options: usage, parsing, range checks
 *   aim7_main.c   users sweep, --ab, --explain
 */
#ifndef LB_AIM7_H
#define LB_AIM7_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lb_lock_ops.h"
#include "lb_schema.h"
#include "costs.h"
#include "sizing.h"

/* ---- roles: which registry lock guards which kind of kernel object ---- */
enum aim_role { AIM_ROLE_MUTEX, AIM_ROLE_SPIN, AIM_ROLE_RW, AIM_NROLES };
const char *aim_role_name(int role); /* "mutex", "spinlock", "rwlock" */

/* ---- tests ---- */
struct aim_task;
typedef uint64_t (*aim_test_fn)(struct aim_task *t);

struct aim_test {
	const char *name;
	aim_test_fn fn;
	bool system;       /* takes kernel locks */
	const char *what;  /* one line: what the analogue does */
};
/* Every test: the system tests (tests_sys.c), then the user-time ones. */
size_t aim_ntests(void);
const struct aim_test *aim_test_at(size_t i);
int aim_test_index(const char *name); /* -1 when unknown */
extern const struct aim_test aim_sys_tests[], aim_user_tests[];
extern const size_t aim_nsys_tests, aim_nuser_tests;

/* ---- workfiles ---- */
#define AIM_MAX_WORKFILE_TESTS 128
struct aim_workfile {
	char name[64];            /* as given (name or path) */
	char path[4096];          /* the file read */
	size_t ntests;
	int test[AIM_MAX_WORKFILE_TESTS];       /* index into aim_tests */
	unsigned int hits[AIM_MAX_WORKFILE_TESTS]; /* last weight wins (re-aim) */
	unsigned long total_hits;  /* every line counts (re-aim) */
	unsigned long filesize_kb, poolsize_kb; /* 0 when not given */
};

/*
 * Parse workfile text.  0 on success; on error -1 with a one-line message
 * ("LINE: unknown test 'x'") in err.
 */
int aim_workfile_parse(const char *text, struct aim_workfile *wf, char *err, size_t errlen);
/*
 * Find and read a workfile: NAME|PATH.  A PATH (contains '/' or names an
 * existing file) is read as is; a NAME is looked up as workfile.NAME, then
 * NAME, in: explicit_dir (--workfile-dir), the source tree's workfiles/
 * (baked in at build time), the installed datadir.  0 or -1 with err set.
 */
int aim_workfile_load(const char *spec, struct aim_workfile *wf, char *err, size_t errlen);
/* The shipped workfile names, comma separated. */
const char *aim_workfile_shipped(void);

/*
 * re-aim's job assignment: runs of test i = round(hits_i / total * jobs), at
 * least 1 when hits_i > 0.  counts[] gets wf->ntests entries; returns the sum.
 */
unsigned int aim_assign_jobs(const struct aim_workfile *wf, unsigned int jobs,
			     unsigned int *counts);
/* Fill order[] (length sum of counts) with the workfile slots in a random
 * order drawn with the given seed (Fisher-Yates). */
void aim_shuffle_jobs(const struct aim_workfile *wf, const unsigned int *counts,
		      uint64_t seed, uint16_t *order, unsigned int n);

/* ---- figures (re-aim driver.c semantics) ---- */
struct aim_figures {
	unsigned int children;
	double jobs_per_child;    /* a window's: jobs completed / children */
	double parent_s;          /* wall time of the load point */
	double jobs_per_min, jobs_per_min_child, jobs_per_sec_child;
	double child_user_s, child_sys_s;
	double std_dev, cov_pct, jti;
	double max_child_s, min_child_s;
};
/* child_s: each child's elapsed time from the common start. */
void aim_figures_compute(unsigned int children, double jobs_per_child, double parent_s,
			 const double *child_s, double user_s, double sys_s,
			 struct aim_figures *out);

/* ---- configuration ---- */
#define AIM_MAX_USERS 2000
/* re-aim's default jobs per child (-j), the list a --window child cycles. */
#define AIM_WINDOW_DEFAULT_JOBS 100
#define AIM_MAX_USER_POINTS 256

struct aim_config {
	const struct lb_lock_ops *role_ops[AIM_NROLES];
	struct aim_workfile wf;
	unsigned int users[AIM_MAX_USER_POINTS];
	size_t npoints;
	unsigned int jobs;        /* per child; 0 = size from --time */
	uint64_t time_ns;         /* target length of a load point */
	unsigned int repeat;
	/* --ab A,B on ab_role: side 0 = PRE (A), side 1 = POST (B) */
	bool ab;
	int ab_role;
	const struct lb_lock_ops *ab_ops[2];
	uint64_t check_ns;        /* --check period; 0 = only at the end */
	uint64_t window_ns;       /* --window: re-aim's per-child alarm; 0 = complete the jobs */
	bool explain, quiet;
	uint64_t seed;
	const char *json_path, *csv_path;
	/* --costs: the table the kernel's work is sized from (costs_on false:
	 * --costs none, the unsized kernel); the sizing made from it. */
	bool costs_on;
	struct aim_costs costs;
	struct aim_sizing sizing;
	double sizing_share_worst;   /* worst |sim/table - 1| of the check run */
	double sizing_share_worst_big; /* the same over tests with >= AIM_SIZING_BIG_SHARE */
	double sizing_sim_share[AIM_SIZING_MAX_TESTS], sizing_table_share[AIM_SIZING_MAX_TESTS];
	const char *calibrate_path;  /* --calibrate FILE: measure, write, exit */
};

/* ---- one load point ---- */
struct aim_role_stats {
	uint64_t acquires;        /* write/exclusive + read acquisitions */
	uint64_t wait_ns;         /* time inside ops->lock / read_lock */
	struct lb_counter counters[LB_MAX_COUNTERS]; /* summed over the role's locks */
	size_t ncounters;
};

/*
 * Lock classes for the mechanism gauges (--explain, JSON, A/B lines): the
 * shared directory i_mutex is the lock the kernel's AIM7 result is about;
 * the others are private per child (file i_mutex, pipe mutex) or shared by
 * everyone (the shm semaphore), and the spin / rw roles as a whole.
 */
enum aim_lock_class {
	AIM_CLASS_ORPHAN, AIM_CLASS_DIR, AIM_CLASS_FILE, AIM_CLASS_PIPE, AIM_CLASS_SHM, AIM_CLASS_SPIN, AIM_CLASS_RW,
	AIM_NCLASSES
};
const char *aim_class_name(int cls);
/* log2 buckets of wait times in ns: bucket b holds [2^b, 2^(b+1)). */
#define AIM_WAIT_BUCKETS 48
/* A wait longer than this went through the lock's slow path (a fast path
 * is a few dozen ns even with a cache miss). */
#define AIM_SLOW_WAIT_NS 1000u
/* Others inside lock() when an acquisition succeeds: 0, 1, 2, 3 or more. */
#define AIM_WAITERS_BINS 4
/* Mechanism gauges of one lock class over a load point (gauge.c). */
struct aim_class_stats {
	uint64_t acquires, wait_ns, held_ns, slow;
	uint64_t wait_hist[AIM_WAIT_BUCKETS];
	uint64_t hold_hist[AIM_WAIT_BUCKETS];     /* exclusive holds, wall ns, log2 */
	uint64_t waiters_hist[AIM_WAITERS_BINS]; /* others in lock() at acquisition */
	struct lb_counter counters[LB_MAX_COUNTERS]; /* summed over the class's locks */
	size_t ncounters;
};
struct aim_gauges {
	double rho;          /* held time / wall time (exclusive holds) */
	double hold_p50_ns;  /* median exclusive hold: its log2 bucket's upper edge */
	double waiters_share[AIM_WAITERS_BINS]; /* of acquisitions */
	/* Running contenders at contended acquisitions (the acquirer + the
	 * threads spinning on the lock then), from the lock's counters
	 * acq_running_1, acq_running_2, acq_running_3plus; have_running false
	 * when the lock does not report them (it cannot tell). */
	bool have_running;
	double running_share[3];          /* 1, 2, 3+ */
	double slow_frac;    /* acquisitions that waited > AIM_SLOW_WAIT_NS */
	double sleep_frac;   /* lock's sleeps per acquisition (counters) */
	double spin_won;     /* lock's spin wins per acquisition (counters) */
	double wait_mean_ns, wait_p99_ns;
};
void aim_gauges_compute(const struct aim_class_stats *s, double wall_s, struct aim_gauges *g);
/* Idle fraction of all CPUs between two /proc/stat samples; -1 unknown. */
struct aim_cpu_sample { unsigned long long idle, total; bool ok; };
void aim_cpu_sample(struct aim_cpu_sample *s);
double aim_idle_fraction(const struct aim_cpu_sample *a, const struct aim_cpu_sample *b);
/* The class whose utilisation decides whether an A/B on `role` can show
 * the kernel's mechanism: the shared directory i_mutex for the mutex role. */
int aim_contended_class(int role);

struct aim_point {
	unsigned int users, jobs_per_child;
	struct aim_class_stats cls[AIM_NCLASSES];
	double idle_frac;         /* machine's idle CPU fraction during the point, -1 unknown */
	int side;                 /* -1, or 0 (PRE) / 1 (POST) with --ab */
	unsigned int repeat_index;
	struct aim_figures fig;
	double child_cpu_s;       /* user + sys over all children */
	uint64_t vol_csw, invol_csw; /* children's sleeps / preemptions */
	double test_ns[AIM_MAX_WORKFILE_TESTS];   /* CPU time in each workfile slot, all children */
	double test_runs[AIM_MAX_WORKFILE_TESTS];
	uint64_t dcache_retries, dcache_locked;
	uint64_t orphan_sleeps;   /* s_orphan_lock sections whose owner slept */
	/* Fixed-window mode (the default; window_s 0 with --complete): jobs
	 * run to the end before the alarm by all children (fig counts these,
	 * not the nominal list jobs_per_child), the jobs the alarm cut in
	 * flight (one per child at most), and the children's CPU in system
	 * and in user tests (per-thread CPU clocks; the simulated kernel runs
	 * in user mode, so these stand for re-aim's Child SysTime and UTime). */
	double window_s;
	uint64_t jobs_done, jobs_cut;
	double sys_tests_cpu_s, user_tests_cpu_s;
	struct aim_role_stats role[AIM_NROLES];
	unsigned long long invariant_errors;
};

/*
 * Run one load point: `users` children each running `jobs` jobs of the
 * workfile.  role_ops gives the lock of each role.  Returns 0, or 1 when an
 * invariant failed or the watchdog fired (already reported on stderr), or
 * an errno value for a setup failure.
 */
int aim_run_point(const struct aim_config *cfg, const struct lb_lock_ops *const *role_ops,
		  unsigned int users, unsigned int jobs, uint64_t seed, struct aim_point *out);
/* re-aim's fixed window: each child cycles through its `jobs` until its
 * alarm, window_ns after its start, which cuts the job in flight (the
 * kernel sized as cfg->sizing). */
int aim_run_point_window(const struct aim_config *cfg, const struct lb_lock_ops *const *role_ops,
			 unsigned int users, unsigned int jobs, uint64_t seed, uint64_t window_ns,
			 struct aim_point *out);
/* CPUs busy (child CPU / parent time: the window plus the cut of the
 * job in flight) and progress (jobs completed per wall second) of a
 * fixed-window point; 0 when it was not one. */
double aim_cpus_busy(const struct aim_point *p);
double aim_progress_per_s(const struct aim_point *p);
/* The same with the sizing given (NULL: none), and, when kop_count is not
 * NULL, the kernel ops each slot passed, summed over children
 * (kop_count[slot * AIM_NKOPS + op]). */
int aim_run_point_sized(const struct aim_config *cfg, const struct lb_lock_ops *const *role_ops,
			unsigned int users, unsigned int jobs, uint64_t seed,
			const struct aim_sizing *sizing, double *kop_count, struct aim_point *out);

/* ---- sizing from the cost table (aim7_size.c) ---- */
/* Size cfg->sizing from cfg->costs (nothing when costs_on is false); 0 or
 * an error of aim_run_point. */
int aim_size_kernel(struct aim_config *cfg);
/* "cost table: PATH (...)": which table, the scale and the share check;
 * with detail, per test: native and table time, padding, shares. */
void aim_print_sizing(FILE *out, const struct aim_config *cfg, bool detail);

/* ---- options (aim7_opts.c) ---- */
/* argv into cfg (workfile loaded); bad input -> lb_usage_error (exit 2). */
void aim_parse(int argc, char **argv, struct aim_config *cfg);
struct lb_opt_cmd;
extern const struct lb_opt_cmd lb_aim7_cmd; /* aim7_opts.c */

/* ---- output ---- */
#define AIM_MAX_REPEAT 100
/* One cell of the results: a load point (users, side) and its repeats. */
struct aim_cell {
	unsigned int users;
	int side;                 /* -1, or 0 (PRE) / 1 (POST) */
	const struct lb_lock_ops *role_ops[AIM_NROLES];
	struct aim_point run[AIM_MAX_REPEAT];
	size_t nruns;
};

extern const struct lb_workload_schema lb_schema_aim7;
void aim_print_header(FILE *out);
void aim_print_row(FILE *out, const char *prefix, const struct aim_figures *f);
/*
 * re-aim's console table (driver.c print_header_line() and its row), the
 * nine columns of the seed thread's PRE/POST lines: Num Forked, Parent Time,
 * Child SysTime, Child UTime, Jobs per Minute, Jobs/min/Child, Std_dev Time,
 * Std_dev Percent, JTI.  The row is written into buf (returns its length).
 */
void aim_console_header(FILE *out);
int aim_console_row(char *buf, size_t len, const struct aim_figures *f);
void aim_csv_header(FILE *out);
void aim_csv_row(FILE *out, const struct aim_figures *f);
struct lb_run_record; /* bench/workload.h: the command line, the host */
void aim_write_json(FILE *out, const struct aim_config *cfg, const struct lb_run_record *rec,
		    const struct aim_cell *cells, size_t ncells);
/* Share (%) of the children's CPU+wait time spent waiting on a role. */
double aim_wait_pct(const struct aim_point *p, int role);

/* ---- paired A/B (gauge.c; the ratio is lb_paired_ratio, lib/lb_paired.h) ---- */
struct lb_paired_ratio;
/* The verdict on POST/PRE's interval: "POST faster" (above 1), "POST
 * slower" (below 1), "no difference shown", or "one pair: no interval". */
const char *aim_paired_verdict(const struct lb_paired_ratio *r);
/* ABBA: the side (0 PRE, 1 POST) that runs first in repeat r. */
int aim_ab_first_side(unsigned int repeat_index);

/* ---- mechanism gauges (gauge.c) ---- */
/* Below this utilisation the contended lock's mechanism is absent. */
#define AIM_RHO_CONTENDED 0.5
double aim_rho(uint64_t held_ns, double wall_s);
bool aim_mechanism_present(double rho);
/*
 * The spin horizon: a hold longer than this is better slept through than
 * spun on -- the current mutex's spin budget, "a bit more than one futex
 * wake-up latency" (locks/include/lockbench/mutex.h, LB_MUTEX_SPIN_NS).
 */
double aim_spin_horizon_ns(void);
/*
 * The mechanism gate of the kernel's result (optimistic spinning on a
 * mutex): a spinner wins only when the owner's hold is short and more than
 * the acquirer is running on the lock.  Present needs all of: rho >=
 * AIM_RHO_CONTENDED, the median hold below the spin horizon, and a median
 * of >= 2 running contenders at contended acquisitions.  A burn that makes
 * rho (long holds, one runner) fails the second and third.  known is false
 * when the lock cannot tell its running contenders: the verdict is then
 * withheld, not guessed.  why says which condition decided.
 */
struct aim_gate {
	bool present, known;
	char why[200];
};
void aim_gate_eval(const struct aim_class_stats *s, double wall_s, double horizon_ns,
		   struct aim_gate *g);

/* ---- the A/B lines through the gate (ab_gate.c) ---- */
/* The gate of role's contended class over every run of both sides:
 * present only when each run passed; why is the first failing run's. */
void aim_ab_gate(const struct aim_cell *pre, const struct aim_cell *post, int role,
		 struct aim_gate *g);
/*
 * "POST/PRE <what> at N users: ..." of a fixed-window figure into buf
 * (newline-terminated; the length written).  With the mechanism present
 * in every run: the paired ratio, its interval and verdict.  Otherwise
 * "kernel mechanism absent" (or "unknown"), the gate's reason, each side's
 * gauges over its runs and each side's figure: no ratio.
 */
size_t aim_window_ratio_line(char *buf, size_t len, const struct aim_cell *pre,
			     const struct aim_cell *post, int role, const char *what,
			     double (*fig)(const struct aim_point *));

#endif /* LB_AIM7_H */
