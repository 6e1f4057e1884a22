/* SPDX-License-Identifier: MIT */
/*
 * gbench_export.h - write a lockbench result as Google Benchmark's JSON
 * (json_reporter.cc's layout, json_schema_version 1), so that Google
 * Benchmark's tools/compare.py (Debian: libbenchmark-tools) and trackers
 * that ingest it can read lockbench runs.
 *
 * Generic over the workloads: it works on a result file as read by
 * result_file.h, through a small per-schema map that says which params name
 * a benchmark and which metrics are the time per iteration (ns), the CPU time
 * and items_per_second.  One "iteration" entry per repeat, then the "mean",
 * "median", "stddev" and "cv" aggregates, as --benchmark_repetitions does.
 */
#ifndef LB_GBENCH_EXPORT_H
#define LB_GBENCH_EXPORT_H

#include "result_file.h"

#include <stdio.h>

/* 0, or -1 with a reason in err (no map for this workload). */
int lb_gbench_write(FILE *out, const struct lb_rfile *f, char *err, size_t errlen);

/*
 * `bench --json FILE --format gbench`: the bench report through the generic
 * reader into Google Benchmark's JSON.  0, or -1 after an error line.
 */
struct lb_bench_config;
struct lb_hostinfo;
struct lb_cell;
int lb_report_gbench(FILE *out, const struct lb_bench_config *cfg, const struct lb_hostinfo *host,
		     const struct lb_cell *cells, size_t ncells);

#endif /* LB_GBENCH_EXPORT_H */
