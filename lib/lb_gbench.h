/* SPDX-License-Identifier: MIT */
/*
 * lb_gbench.h - write lockbench figures as Google Benchmark's JSON
 * (json_reporter.cc's layout, json_schema_version 1), so that Google
 * Benchmark's tools/compare.py (Debian: libbenchmark-tools) and trackers
 * that ingest it can read lockbench runs.
 *
 * Generic over the workloads: a workload whose schema has gbench hints
 * (struct lb_gbench_hints, lib/lb_schema.h) hands over its cells as plain
 * benchmarks -- a name built from the hints' name params, a thread count and
 * one row of figures per repeat.  One "iteration" entry per repeat, then the
 * "mean", "median", "stddev" and "cv" aggregates, as --benchmark_repetitions
 * does.  Nothing here knows a workload (bench/micro/micro_gbench.c is the
 * micro-benchmark's side).
 */
#ifndef LB_GBENCH_H
#define LB_GBENCH_H

#include "lb_schema.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lb_json;
struct lb_hostinfo;

/* Where the figures came from: the "context" object. */
struct lb_gbench_context {
	const struct lb_hostinfo *host;
	const struct lb_workload_schema *schema;
	const char *command;    /* the lockbench command line, or NULL */
	bool interrupted;       /* a signal let only some cells finish */
};

/* One repeat; NAN for a figure not measured. */
struct lb_gbench_run {
	double real_time_ns;
	double cpu_time_ns;
	double items_per_second;
	double iterations;      /* NAN: 1 */
};

struct lb_gbench_benchmark {
	const char *name;
	int64_t threads;
	const struct lb_gbench_run *runs;
	size_t nruns;
};

/*
 * The name of a benchmark: values[i] is the text of hints->name_params[i]
 * (NULL: the param is null, skipped); the first bare, the others "/key:value".
 */
void lb_gbench_name(const struct lb_gbench_hints *hints, const char *const *values, char *buf,
		    size_t len);

/* The document: begin (the "context", then "benchmarks" opens), one call per
 * benchmark (family = its index), end (closes it, with a newline). */
void lb_gbench_begin(struct lb_json *j, const struct lb_gbench_context *ctx);
/* 0, or -1 when out of memory. */
int lb_gbench_write_benchmark(struct lb_json *j, const struct lb_gbench_hints *hints,
			      size_t family, const struct lb_gbench_benchmark *b);
void lb_gbench_end(struct lb_json *j);

#endif /* LB_GBENCH_H */
