/* SPDX-License-Identifier: MIT */
/*
 * lb_schema.h - the one shape of every JSON file lockbench writes, and the
 * per-workload table of metrics that `lockbench compare` and `lockbench plot`
 * read it through.
 *
 * Every result file is one JSON object:
 *
 *   "schema":         "lockbench-<workload>-<version>"   (e.g. lockbench-bench-1)
 *   "schema_name":    "lockbench-<workload>"
 *   "schema_version": <version>
 *   "host":           { cpu_model, cpus_online, ..., clocksource }   (lb_schema_write_host)
 *   "metrics":        { "<key>": { "unit", "better", "title" }, ... } (the table below)
 *   "config":         { "command": "<argv joined>", ...workload options }
 *   "results":        [ { "params": { <the cell's identity: lock, threads, ...> },
 *                         "summary": { "<metric key>": {mean, sd, sd_pct, median, min, max, n} },
 *                         "runs": [ { "repeat_index": i, "<metric key>": number, ... }, ... ],
 *                         ...anything else the workload keeps } ]
 *   "interrupted":    true only when a signal cut the run short
 *
 * A cell is identified by its "params" object (flat; strings and numbers):
 * compare matches cells of two files on it.  Every metric of the table is a
 * plain number in each run object (null when not measured in that run).
 */
#ifndef LB_SCHEMA_H
#define LB_SCHEMA_H

#include <stddef.h>

struct lb_json;
struct lb_hostinfo;

/* Which way is better for a metric: compare's "+ is good" / "- is good". */
enum lb_better {
	LB_BETTER_NONE = 0,    /* informational: no verdict direction */
	LB_BETTER_HIGHER = 1,
	LB_BETTER_LOWER = -1,
};

struct lb_metric_desc {
	const char *key;       /* JSON key in each run object, e.g. "ops_per_sec" */
	const char *unit;      /* "ops/s", "ns", "jobs/min", "s", "%", "" ... */
	enum lb_better better;
	const char *title;     /* axis/row label, e.g. "throughput" */
};

struct lb_workload_schema {
	const char *name;                   /* "lockbench-bench" */
	unsigned int version;               /* bumped on any incompatible change */
	const char *const *params;          /* NULL-terminated keys of "params" */
	const struct lb_metric_desc *metrics;
	size_t nmetrics;
};

/*
 * The list of every workload's schema (lb_workload_schemas[], lb_schema_find)
 * lives with the workloads in bench/schemas.c: each workload defines its
 * const table in its own folder and adds one line there.
 */

/* A metric of a schema by key; NULL when the schema has no such metric. */
const struct lb_metric_desc *lb_schema_metric(const struct lb_workload_schema *s,
					      const char *key);

/* "higher" / "lower" / "none". */
const char *lb_better_name(enum lb_better b);

/*
 * Write the common head of a result file into an object the caller has
 * begun: "schema", "schema_name", "schema_version", "host" and "metrics".
 * The caller then writes "config" and "results" and closes the object.
 */
void lb_schema_write_head(struct lb_json *j, const struct lb_workload_schema *s,
			  const struct lb_hostinfo *host);

/*
 * A "summary" entry's fields -- mean, sd, sd_pct, median, min, max, n --
 * into an object the caller has begun (and may add to, then closes).
 */
struct lb_summary;
void lb_schema_summary_fields(struct lb_json *j, const struct lb_summary *s);

/* The "host" object alone (key included). */
void lb_schema_write_host(struct lb_json *j, const struct lb_hostinfo *host);

#endif /* LB_SCHEMA_H */
