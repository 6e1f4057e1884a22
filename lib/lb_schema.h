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
 *   "interrupted_by": "SIG<name>" of that signal (lb_schema_write_interrupted)
 *
 * A cell is identified by its "params" object (flat; strings and numbers):
 * compare matches cells of two files on it.  Every metric of the table is a
 * plain number in each run object (null when not measured in that run).
 */
#ifndef LB_SCHEMA_H
#define LB_SCHEMA_H

#include <stddef.h>
#include <stdio.h>

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

/*
 * How `lockbench plot` draws a workload's files (results/plot/).  A schema
 * without hints, or a file lacking x_param or curves[0], gets the generic
 * picture: the headline metric against the first numeric param.
 */
struct lb_plot_quantile {
	const char *metric; /* e.g. "lat_p99_ns" */
	double q;           /* 0.99; 1 for the maximum */
};

struct lb_plot_hints {
	const char *x_param;           /* "threads" */
	const char *const *curves;     /* metrics drawn against x, NULL-terminated */
	const struct lb_plot_quantile *quantiles; /* latency distribution, or NULL */
	size_t nquantiles;
	const char *samples_key;       /* run key: where "latency_samples" lives, or NULL */
	const char *per_thread_key;    /* run key of the per-thread array, or NULL */
	const char *per_thread_ops;    /* its count field */
	const char *hist_key;          /* cell key: array of objects with a "histogram" */
	const char *hist_unit;         /* unit of the histogram's bucket keys */
};

/*
 * How `--format gbench` (lib/lb_gbench.h) maps a workload's
 * cells onto Google Benchmark entries; a schema without them has no export.
 */
struct lb_gbench_hints {
	const char *const *name_params; /* first one bare, the others "key:value"; nulls skipped */
	const char *real_time_ns;       /* metric: wall ns per iteration */
	const char *cpu_time_ns;        /* metric: CPU ns per iteration (NULL: real) */
	const char *items_per_second;   /* metric or NULL */
};

/*
 * How a file holds two sides to pair within itself (`compare --within`, an
 * ab file, aim7 --ab): the cells' param `side_param` takes values[0] and
 * values[1], and config strings name each side's lock.  A schema without
 * them has no sides.
 */
struct lb_sides_hints {
	const char *side_param;        /* "side" */
	const char *values[2];         /* "A", "B" */
	const char *when_config;       /* sides only when this config string exists
					* (aim7: "ab_role", set by --ab); NULL: always */
	const char *lock_param;        /* the param naming the lock, or NULL ... */
	const char *lock_param_config; /* ... the config string that holds its name */
	const char *name_config[2];    /* config strings naming each side's lock */
	int label_value;               /* labels "PRE mutex" (value, then name); 0: the name */
};

struct lb_workload_schema {
	const char *name;                   /* "lockbench-bench" */
	unsigned int version;               /* bumped on any incompatible change */
	const char *const *params;          /* NULL-terminated keys of "params" */
	const struct lb_metric_desc *metrics;
	size_t nmetrics;
	const struct lb_plot_hints *plot;     /* NULL: the generic picture */
	const struct lb_gbench_hints *gbench; /* NULL: no Google Benchmark export */
	const struct lb_sides_hints *sides;   /* NULL: no sides within one file */
};

/*
 * The list of every workload's schema (lb_workload_schemas[], lb_schema_find)
 * lives with the workloads (bench/schemas.h, bench/workloads.c): each
 * workload defines its const table in its own folder, and its row in the
 * command manifest (bench/meson.build) puts it on the list.
 */

/* A schema's identity and tables in one initializer: its name, version,
 * param keys and metric table (the count from the table's size). */
#define LB_SCHEMA_TABLES(schema_name, schema_version, param_keys, metric_table)             \
	.name = schema_name, .version = schema_version, .params = param_keys,               \
	.metrics = metric_table, .nmetrics = sizeof(metric_table) / sizeof((metric_table)[0])

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
 * Begin a result file on out: j initialised, the file's object begun, the
 * head written (lb_schema_write_head), then the "config" object begun with
 * its "command".  The caller writes the rest of "config", closes it, writes
 * "results" and closes the file's object.
 */
void lb_schema_begin_file(struct lb_json *j, FILE *out, const struct lb_workload_schema *s,
			  const struct lb_hostinfo *host, const char *command);

/*
 * A "summary" entry's fields -- mean, sd, sd_pct, median, min, max, n --
 * into an object the caller has begun (and may add to, then closes).
 */
struct lb_summary;
void lb_schema_summary_fields(struct lb_json *j, const struct lb_summary *s);

/* The summary of v[0..n) as one object, after "key": when key is not NULL
 * (lb_summarize, then the fields above). */
void lb_schema_summary_of(struct lb_json *j, const char *key, const double *v, size_t n);

/*
 * "interrupted": whether signal signo (0: none) ended the run early, and
 * then "interrupted_by": its name, "SIGINT".
 */
void lb_schema_write_interrupted(struct lb_json *j, int signo);

/* The "host" object alone (key included). */
void lb_schema_write_host(struct lb_json *j, const struct lb_hostinfo *host);

#endif /* LB_SCHEMA_H */
