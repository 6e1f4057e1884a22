/* SPDX-License-Identifier: MIT */
/*
 * lockloop.h - the timed lock loop: an engine that `lockbench bench`
 * (bench/micro) and `lockbench ab` (bench/ab) both run on.
 *
 * One run: N threads take one lock through the vtable for a fixed time,
 * writing shared cache lines inside and doing calibrated work inside and
 * outside; the run's figures (throughput, per-op times, fairness, sampled
 * acquisition latency, lost updates) come back in struct lb_run_result.
 * The own-cost probe (lockloop_own.c) times a bare lock(); unlock(); loop
 * on one thread.  The engine knows no command line and no output format;
 * a stop request (lib/lb_stop.h) ends a run early with EINTR.
 */
#ifndef LB_LOCKLOOP_H
#define LB_LOCKLOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "lb_lock_ops.h"
#include "lb_time.h"
#include "lb_topo.h"
#include "lb_work.h" /* struct lb_work_len */

#define LB_LOOP_MAX_THREADS 1024
#define LB_LOOP_MAX_CS_LINES 64

/* How long threads may take to leave the loop after the stop flag. */
#define LB_LOOP_STOP_GRACE_NS (UINT64_C(10) * LB_NS_PER_S)

/* What one run does: the workload's own options map onto these. */
struct lb_loop_params {
	uint64_t duration_ns;
	struct lb_work_len cs, par;
	unsigned int cs_lines;
	struct lb_pin pin;
	int read_pct;            /* -1: exclusive workload; 0..100: read/write mix */
	unsigned int sample_shift; /* latency sampled every 2^shift ops */
	int c2c_cpu[2];          /* CPUs whose cache-line round trip is measured before
				  * and after each run (lib/lb_c2c.h); -1: not measured */
};

enum lb_side { LB_SIDE_WRITE, LB_SIDE_READ, LB_SIDES };

struct lb_thread_result {
	unsigned int index;
	int cpu;
	uint64_t ops[LB_SIDES];
	uint64_t window_ops;   /* ops done while every thread was running (fairness) */
	uint64_t cpu_ns;
	uint64_t start_ns, end_ns;
	uint64_t lock_failures; /* LB_LOCK_F_FALLIBLE: acquisitions that failed */
	int ctx_node;          /* NUMA node of its lock context's page; -1: none or unknown */
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
				    * (lb_loop_own_cost; NAN: none) */
	struct lb_side_result side[LB_SIDES];
	uint64_t lost_updates;     /* exclusive: increments missing from shared data */
	uint64_t torn_reads;       /* rw: reader saw writers' fields disagree */
	uint64_t lock_failures;    /* LB_LOCK_F_FALLIBLE locks: failed acquisitions
				    * (deadlock reported, timeout); 0 for others */
	struct lb_counter counters[LB_MAX_COUNTERS];
	size_t ncounters;
	char describe[LB_DESCRIBE_MAX];        /* ops->describe() of the run's lock, or "" */
	double c2c_before_ns, c2c_after_ns; /* cache-line round trip between
				    * p->c2c_cpu[] just before and after the run; < 0:
				    * not measured (one CPU) or it timed out */
	int lock_node, data_node;  /* NUMA node of the lock's and the shared data's
				    * pages (lb_mem_node_of); -1: unknown */
	struct lb_thread_result *threads; /* nthreads entries */
};

/* The loop's defaults: 1 s, no work, one shared line, unpinned, exclusive,
 * latency sampled every 64th op, the round trip of lib/lb_c2c.h's default
 * pair. */
void lb_loop_params_default(struct lb_loop_params *p);

/* One measurement.  0 or an errno value (thread creation...); EINTR when a
 * stop request (lb_stop_request) ended it: its figures are dropped. */
int lb_loop_run_one(const struct lb_loop_params *p, const struct lb_lock_ops *ops,
		    unsigned int nthreads, struct lb_run_result *out);
void lb_run_result_free(struct lb_run_result *r);

/*
 * lockloop_own.c: the own cost at 1 thread of each of ops[0..n) (n <=
 * LB_LOOP_OWN_MAX_LOCKS): a tight lock(); unlock(); loop through the vtable
 * on one thread pinned to cpu (-1: unpinned), CPU ns/op less the bare loop,
 * median over `rounds` interleaved rounds -- the calls included, as a
 * direct-call loop pays them; *none_out: the same for `none` (the calls
 * alone).  NAN on failure.  0 or an errno value.
 */
#define LB_LOOP_OWN_MAX_LOCKS 64
#define LB_LOOP_OWN_ROUNDS 15
int lb_loop_own_cost(const struct lb_lock_ops *none, const struct lb_lock_ops *const *ops,
		     size_t n, int cpu, unsigned int rounds, double *out, double *none_out);

#endif /* LB_LOCKLOOP_H */
