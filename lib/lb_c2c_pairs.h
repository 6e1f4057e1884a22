/* SPDX-License-Identifier: MIT */
/*
 * lb_c2c_pairs.h - the cache-line round trip of a many-CPU machine, pair by
 * pair.
 *
 * One pair (lb_c2c.h) describes a 2-CPU machine.  On a bigger one the round
 * trip depends on where the two CPUs are: a neighbour on the same NUMA node
 * and a CPU on each other node can differ several-fold, and a run whose
 * threads span nodes pays the far figure.  The pairs here all start at the
 * first CPU this process may use (c0): c0 and the next allowed CPU on its
 * node, then c0 and the first allowed CPU of every other node in node
 * order.  A machine where the process may use fewer than three CPUs gets no
 * pairs: its one pair is already the run's probe.
 */
#ifndef LB_C2C_PAIRS_H
#define LB_C2C_PAIRS_H

#include <sched.h>
#include <stddef.h>
#include <stdio.h>

struct lb_json;

/* At most this many pairs: the neighbour and 8 other nodes. */
#define LB_C2C_MAX_PAIRS 9

struct lb_c2c_pair {
	int cpu[2];
	int node[2];    /* each CPU's NUMA node (0 without NUMA) */
	double ns;      /* round trip; < 0 not measured (lb_c2c_round_trip_ns) */
};

struct lb_c2c_pairs {
	struct lb_c2c_pair pair[LB_C2C_MAX_PAIRS];
	size_t n;
};

/* Choose the pairs (above) among the CPUs this process may use; their
 * round trips are -1 until measured. */
void lb_c2c_pick_pairs(struct lb_c2c_pairs *set);

/* The same among `allowed`, with node_of(cpu) giving each CPU's node (the
 * test's made-up machines). */
void lb_c2c_pick_pairs_on(struct lb_c2c_pairs *set, const cpu_set_t *allowed,
			  int (*node_of)(int cpu));

/* Measure each pair once (LB_C2C_ROUNDS round trips, LB_C2C_BUDGET_NS). */
void lb_c2c_measure_pairs(struct lb_c2c_pairs *set);

/* "c2c_pairs": [ {"cpus": [a, b], "nodes": [x, y], "round_trip_ns": ns|null}, ...]
 * (an empty array without pairs). */
void lb_c2c_pairs_json(struct lb_json *j, const struct lb_c2c_pairs *set);

/* The comment line "# cache-line round trip by CPU pair: ..." (wrapped,
 * prefix "#   "); nothing without pairs. */
void lb_c2c_pairs_print(FILE *out, const struct lb_c2c_pairs *set);

#endif /* LB_C2C_PAIRS_H */
