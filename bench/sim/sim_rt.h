/* SPDX-License-Identifier: MIT */
/*
 * sim_rt.h - `lockbench sim --workload rt` (doc/sim.md, "The rt workload"):
 * `lockbench rt`'s experiment on the simulator.  hackbench-like groups of
 * senders and receivers (fair class) pass messages through in-memory
 * socket queues, each message a head and a data head from two caches of
 * the SLUB-like allocator (engines/slub, the simulated copy, sim_slub.h)
 * whose list_lock is raw (qspinlock with preemption off around each
 * section) or a sleeping PI rtmutex; one cyclictest-like SCHED_FIFO thread
 * per CPU measures its virtual wake-up latency.  Every figure is a model
 * prediction.
 */
#ifndef LB_SIM_RT_H
#define LB_SIM_RT_H

#include "lb_lock_ops.h"
#include "sim.h"
#include "sim_rt_costs.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct lb_simr_config {
	const char *list_lock;     /* "raw", "pi", or a lock the simulator runs */
	unsigned int cpus;         /* the machine's first N CPUs */
	unsigned int groups, fds, loops, datasize;
	uint64_t send_ns, recv_ns; /* the socket path's work per message, each side */
	/* --costs: each message's send and receive drawn from these tables
	 * (sim_rt_costs.h) instead of send_ns and recv_ns; NULL: those. */
	const struct lb_simr_costs *costs;
	const char *calibrate_path; /* --calibrate: measure the host, simulate nothing */
	uint64_t interval_ns;      /* the RT threads' period */
	int rt_prio;
	uint64_t seed;
};

struct lb_simr_result {
	bool ok;                   /* every task finished and the invariants hold */
	unsigned long problems;    /* lb_slub_check's, both caches */
	uint64_t messages, elapsed_ns;
	struct lb_sim_stats stats; /* at the end of hackbench */
	double idle_share;         /* 1 - busy / (cpus x elapsed) */
	uint64_t list_lock_acquires;
	/* list_lock's gauges, both caches (doc/rt.md, "Running contenders"):
	 * time held, attempts that found it taken, those by running
	 * contenders 1/2/3+ (may-sleep waiters counted asleep), and owners
	 * seen off their CPU (the engine's truth where the task bound it). */
	uint64_t ll_hold_ns, ll_found_taken, ll_running[3], ll_owner_off;
	uint64_t rt_wakes, rt_p50_ns, rt_p99_ns, rt_max_ns;
	/* The socket path's work charged, all messages (the draws' sums). */
	uint64_t send_total_ns, recv_total_ns;
	/* The list_lock's own counters (bench --explain's), both caches. */
	struct lb_counter counters[LB_MAX_COUNTERS];
	size_t ncounters;
	double host_cpu_s;
};

/* The list_lock's vtable for a --list-lock name, or NULL (unknown). */
const struct lb_lock_ops *lb_simr_list_lock(const char *name);
/* Run it; 0, or an errno value (ENOMEM, EINVAL for an unknown list_lock). */
int lb_simr_run(const struct lb_simr_config *cfg, const struct lb_sim_machine *m,
		struct lb_simr_result *out);

#endif /* LB_SIM_RT_H */
