/* SPDX-License-Identifier: MIT */
/*
 * sim_rt_costs.h - the socket path's calibrated costs for `lockbench sim
 * --workload rt` (doc/sim.md, "The rt workload"): per-call CPU time of
 * each send and each receive of hackbench's shape, measured on a real
 * kernel (`--calibrate FILE`, sim_rt_calibrate.c), kept as a quantile
 * table per side and drawn from by inverse CDF (`--costs FILE`).
 *
 * File format (schema "lockbench-sim-rt-costs", version 1), one item a
 * line, '#' comments and blank lines ignored, at most 64 KiB:
 *
 *   lockbench-sim-rt-costs 1     first item: the schema name and version
 *   host.KEY free text           host facts (kernel, cpu, cpus, date, load)
 *   method free text             how it was measured (one line)
 *   shape free text              the load measured under (one line)
 *   clock.KEY NS                 the clock reads' own cost (information)
 *   SIDE.count N                 SIDE is send or recv: the calls measured
 *   SIDE.mean NS                 their mean CPU time, ns
 *   SIDE.q P NS                  quantile P (0..1) of their CPU time, ns
 *
 * Each side needs its count, its mean and a quantile table from P 0 (the
 * least) to P 1 (the most) with P rising and NS not falling, every NS
 * finite, >= 0 and <= 1e9, the mean between the least and the most.
 */
#ifndef LB_SIM_RT_COSTS_H
#define LB_SIM_RT_COSTS_H

#include "lb_textfile.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LB_SIMR_COSTS_SCHEMA "lockbench-sim-rt-costs"
#define LB_SIMR_COSTS_VERSION 1
#define LB_SIMR_COSTS_MAXQ 128

/* One side's CPU time per call: the quantile table, its mean and count. */
struct lb_simr_dist {
	size_t n;                        /* quantiles: p[0] = 0 ... p[n-1] = 1 */
	double p[LB_SIMR_COSTS_MAXQ];
	double ns[LB_SIMR_COSTS_MAXQ];
	double mean;
	uint64_t count;
};

struct lb_simr_costs {
	char path[4096];                 /* the file read, or "" */
	struct lb_textfile_host host;    /* kernel, cpu, cpus, date */
	char host_load[128];
	char method[512], shape[256];
	double clock_p50_ns, clock_mean_ns; /* the clock reads' cost (information) */
	struct lb_simr_dist send, recv;
};

/* Parse a table: 0, or -1 with a one-line message ("LINE: ...") in err. */
int lb_simr_costs_parse(const char *text, struct lb_simr_costs *c, char *err, size_t errlen);
/* Read and parse a file (at most 64 KiB); the message names the file. */
int lb_simr_costs_load(const char *path, struct lb_simr_costs *c, char *err, size_t errlen);
/* The table as the parser reads it (no comment lines about where: the
 * caller adds those it knows). */
void lb_simr_costs_write(FILE *out, const struct lb_simr_costs *c);
/* The dist's quantile at probability u (0 <= u <= 1), interpolated
 * linearly between the table's neighbours. */
double lb_simr_dist_at(const struct lb_simr_dist *d, double u);
/* The mean of the draws the table gives: its piecewise-linear inverse
 * CDF's (each step's probability times its two ends' average). */
double lb_simr_dist_table_mean(const struct lb_simr_dist *d);
/* One draw, ns: the inverse CDF at a uniform u from *rng (splitmix64,
 * the engine's generator, advanced by one step). */
uint64_t lb_simr_dist_draw(const struct lb_simr_dist *d, uint64_t *rng);
/* A stream's first state, from the run's seed and a stream number (each
 * task and side its own: the draws of one do not depend on when the
 * others ran). */
uint64_t lb_simr_rng_seed(uint64_t seed, uint64_t stream);

#endif /* LB_SIM_RT_COSTS_H */
