/* SPDX-License-Identifier: MIT */
/*
 * schemas.h - every workload's result-file schema (lib/lb_schema.h), listed
 * once so `compare` and `plot` can read any lockbench JSON file.  A workload
 * defines its const table in its own file and adds one line to schemas.c.
 */
#ifndef LB_BENCH_SCHEMAS_H
#define LB_BENCH_SCHEMAS_H

#include "lb_schema.h"

extern const struct lb_workload_schema lb_schema_bench;
extern const struct lb_workload_schema lb_schema_rt;
extern const struct lb_workload_schema lb_schema_slab;
extern const struct lb_workload_schema lb_schema_aim7;
extern const struct lb_workload_schema lb_schema_preload; /* preload/preload_schema.c */
extern const struct lb_workload_schema lb_schema_ab;      /* ab/ab_report.c */

/* NULL-terminated. */
extern const struct lb_workload_schema *const lb_workload_schemas[];

/* By name ("lockbench-bench"), NULL when unknown. */
const struct lb_workload_schema *lb_schema_find(const char *name);

#endif /* LB_BENCH_SCHEMAS_H */
