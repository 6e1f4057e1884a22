/* SPDX-License-Identifier: MIT */
/*
 * schemas.h - every result-file schema lockbench reads (lib/lb_schema.h):
 * the workloads' (the manifest's rows with 'schema', bench/meson.build) and
 * the preload's, so `compare` and `plot` can read any lockbench JSON file.
 * The list is generated (bench/workloads.c); each workload declares its own
 * schema in its own header.
 */
#ifndef LB_BENCH_SCHEMAS_H
#define LB_BENCH_SCHEMAS_H

#include "lb_schema.h"

/* NULL-terminated. */
extern const struct lb_workload_schema *const lb_workload_schemas[];

/* By name ("lockbench-bench"), NULL when unknown. */
const struct lb_workload_schema *lb_schema_find(const char *name);

#endif /* LB_BENCH_SCHEMAS_H */
