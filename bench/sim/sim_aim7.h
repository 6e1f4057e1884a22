/* SPDX-License-Identifier: MIT */
/*
 * sim_aim7.h - `lockbench sim --workload aim7` (doc/sim.md, "aim7 on the
 * simulator"): lockbench's aim7 work-alike (bench/aim7) run on the
 * simulator.  Its simulated kernel, its system tests and a child/helper
 * loop (sim_aim7_world.c) are compiled a second time over
 * sim_aim7_interpose.h, so they run on virtual threads; the rest
 * (options, the table, the JSON: sim_aim7.c) is native.  Only plain data
 * crosses between the two copies: this header.  Every figure is a model
 * prediction.
 */
#ifndef LB_SIM_AIM7_H
#define LB_SIM_AIM7_H

#include "aim7.h"
#include "costs.h"
#include "lb_lock_ops.h"
#include "sim.h"
#include "sizing.h"

#include <stdbool.h>
#include <stdint.h>

#define LB_SIMAIM_MAX_USERS 1000
#define LB_SIMAIM_MAX_POINTS 8

/* What one load point needs (filled by sim_aim7.c, read by the world). */
struct lb_simaim_config {
	struct lb_sim_machine machine;
	uint64_t seed;
	uint64_t window_ns;                        /* re-aim's alarm, virtual */
	unsigned int jobs;                         /* each child's list (re-aim's 100) */
	const struct lb_lock_ops *ops[AIM_NROLES]; /* the simulated copies */
	struct aim_workfile wf;
	struct aim_sizing sizing;                  /* from the cost table (sim_aim7.c) */
	/* Called on the host between slices of virtual time (progress). */
	void (*tick)(void *arg, uint64_t now_ns, uint64_t end_ns);
	void *tick_arg;
};

/* One load point's outcome, in virtual time (model predictions). */
struct lb_simaim_point {
	unsigned int users;
	uint64_t jobs_done, jobs_cut;              /* before the alarm / cut by it */
	unsigned int job_list;                     /* per child */
	double child_s[LB_SIMAIM_MAX_USERS];       /* each child's end from the common start */
	double parent_s;                           /* common start to the last child's end */
	double sys_cpu_s;                          /* children's + helpers' CPU (all kernel) */
	double cpus_busy;                          /* mean running virtual threads */
	double idle_frac;                          /* 1 - busy / CPUs */
	/* s_orphan_lock (the mutex role's contended class) */
	uint64_t orphan_acquires, orphan_sleeps;
	double orphan_rho, orphan_hold_p50_ns;
	struct lb_counter counters[LB_MAX_COUNTERS]; /* the lock's own, summed */
	size_t ncounters;
	unsigned long violations;                  /* aim7's invariant check */
	bool stuck;                                /* threads still alive at the limit */
	uint64_t events, digest, sim_ns;
};

/* sim_aim7_world.c (interposed): one load point in a fresh world; 0, or
 * an errno value (EINTR: interrupted). */
int lb_simaim_run_point(const struct lb_simaim_config *cfg, unsigned int users,
			struct lb_simaim_point *out);

#endif /* LB_SIM_AIM7_H */
