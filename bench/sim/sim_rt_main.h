/* SPDX-License-Identifier: MIT */
/*
 * sim_rt_main.h - `lockbench sim --workload rt` as sim_main.c calls it
 * (sim_rt_main.c): whether the command line asks for it, its parse and
 * its run and report.
 */
#ifndef LB_SIM_RT_MAIN_H
#define LB_SIM_RT_MAIN_H

#include <stdbool.h>
#include <stdio.h>

struct lb_simr_config;
struct lb_run_record;

/* Whether argv says --workload rt (then lb_simr_parse reads all of it;
 * any other --workload is the bench cells' parser's to judge). */
bool lb_simr_wanted(int argc, char **argv);
/* Parse argv (exit 2 with one line on bad input); *quiet from -q, *json
 * from --json (NULL: none). */
const struct lb_simr_config *lb_simr_parse(int argc, char **argv, bool *quiet,
					   const char **json);
/* Run it and print the report to out; 0, or 1 when it failed. */
int lb_simr_main(FILE *out, const struct lb_simr_config *cfg, bool quiet);
/* --calibrate's cost file into fp. */
void lb_simr_write_costs(FILE *fp);
/* The last run's JSON (schema lockbench-sim-rt) into fp. */
void lb_simr_write_json(FILE *fp, const struct lb_run_record *rec);

#endif /* LB_SIM_RT_MAIN_H */
