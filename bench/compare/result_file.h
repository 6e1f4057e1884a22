/* SPDX-License-Identifier: MIT */
/*
 * result_file.h - read any lockbench result file (lib/lb_schema.h) through
 * jansson, generically: the schema named in the file is looked up in the
 * compiled-in table (bench/schemas.c), which gives each metric's unit and
 * better direction; cells are the "results" entries, identified by their
 * "params" object; each metric's values are read from the cell's "runs".
 * Used by `compare`, `plot` and the Google Benchmark export.
 */
#ifndef LB_RESULT_FILE_H
#define LB_RESULT_FILE_H

#include "lb_schema.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct lb_rcell {
	json_t *cell;      /* the "results" entry (borrowed from the document) */
	json_t *params;    /* its "params" object (borrowed) */
	size_t nruns;
	double **values;   /* [metric index of the schema] -> that metric's non-null values */
	size_t *nvalues;   /* [metric index] -> how many */
	bool matched;      /* scratch for compare */
};

struct lb_rfile {
	char *path;
	json_t *root;
	const struct lb_workload_schema *schema;
	const char *command;   /* config.command, or "" */
	char host_line[320];   /* "cpu model, N CPUs, kernel K, host H" */
	bool interrupted;
	/* The cache-line round trips the runs saw (lib/lb_c2c.h: each run's mean
	 * of its "c2c_before_ns" and "c2c_after_ns"): min, median, max over the
	 * runs in ns; all < 0 when the file has none (older files, one CPU). */
	double c2c_min, c2c_median, c2c_max;
	struct lb_rcell *cells;
	size_t ncells;
};

/*
 * Load and check a result file.  0, or -1 with a one-line reason in err
 * (not JSON, no schema, unknown schema or version, malformed results).
 */
int lb_rfile_load(const char *path, struct lb_rfile *f, char *err, size_t errlen);
/* The same from a JSON text in memory; `name` stands for the path in messages. */
int lb_rfile_load_string(const char *text, const char *name, struct lb_rfile *f, char *err,
			 size_t errlen);
void lb_rfile_free(struct lb_rfile *f);

/* The accepted schema names with versions, comma separated, for messages. */
void lb_rfile_accepted_schemas(char *buf, size_t len);

/*
 * Do two params objects name the same cell?  keys: NULL-terminated list of
 * the keys to compare (NULL: every key of either object).  Strings, integers,
 * booleans and null compare exactly; real numbers (measured parameters like
 * cs_ns, which come from a calibration) within 5 % of each other.
 */
bool lb_params_match(const json_t *a, const json_t *b, const char *const *keys);

/* A param value as text ("tas", "4", "null", "12.5"). */
void lb_param_text(const json_t *v, char *buf, size_t len);

/* A number param as double (integer or real); NAN when missing or not a number. */
double lb_param_number(const json_t *params, const char *key);

#endif /* LB_RESULT_FILE_H */
