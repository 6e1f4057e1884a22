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
	/* The model that made the file's figures ("sim": lockbench sim), or
	 * NULL for a measured run: its figures are predictions. */
	const char *model;
	/* The cache-line round trips the runs saw (lib/lb_c2c.h: each run's mean
	 * of its "c2c_before_ns" and "c2c_after_ns"): min, median, max over the
	 * runs in ns; all < 0 when the file has none (older files, one CPU). */
	double c2c_min, c2c_median, c2c_max;
	/* The 1-minute load average before the runs: bench's
	 * config.load_average_before or ab's config.load_before; < 0 when the
	 * file has none (aim7, rt, older files). */
	double load_average;
	/* Steal time over the run, s (config.steal_s: bench, ab, aim7, rt); < 0
	 * when the file has none (older files). */
	double steal_s;
	struct lb_rcell *cells;
	size_t ncells;
	json_t *varying;       /* lb_rfile_varying_keys() of this file alone */
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

/*
 * The round trips (min, median, max ns, as c2c_* above) of the runs of the
 * cells that take[] marks (NULL: every cell); all < 0 when none has them.
 */
void lb_rfile_c2c_range(const struct lb_rfile *f, const bool *take, double *min, double *median,
			double *max);

/* The accepted schema names with versions, comma separated, for messages. */
void lb_rfile_accepted_schemas(char *buf, size_t len);

/*
 * Do two params objects name the same cell?  keys: NULL-terminated list of
 * the keys to compare (NULL: every key of either object).  Strings, integers,
 * booleans and null compare exactly; real numbers (measured parameters like
 * cs_ns, which come from a calibration) within 5 % of each other.
 */
bool lb_params_match(const json_t *a, const json_t *b, const char *const *keys);

/*
 * The params keys whose text (lb_param_text; a missing key reads "null")
 * differs between two of the cells of files[0..nfiles): a JSON object of
 * key -> true, for labels that name only what varies.  One pass over the
 * cells per key (cells x keys), where asking per cell was cells^2.  NULL
 * when out of memory; json_decref() it.
 */
json_t *lb_rfile_varying_keys(const struct lb_rfile *files, size_t nfiles);

/*
 * Cells that lb_params_match(a, b, keys) can pair, found by hash: the
 * signature of a cell's params over `keys` (NULL: all of its keys) in
 * sorted key order, with strings, integers, booleans and null by value
 * and real numbers by type alone (they match within 5 %, so they cannot be
 * hashed).  An index maps a signature to the cells that have it, in file
 * order; a cell whose key is an integer in one file and a real in the other
 * matches within 5 % too, but not by signature: lb_rfile_index_mixed() says
 * when two files have such a key, and the caller then scans every cell.
 */
struct lb_rindex {
	json_t *map;   /* signature -> array of cell indices */
};
int lb_rfile_index_build(const struct lb_rfile *f, const char *const *keys, struct lb_rindex *ix);
/* The cell indices that may match `params`, or NULL (none). */
const json_t *lb_rfile_index_lookup(const struct lb_rindex *ix, const json_t *params,
				    const char *const *keys);
void lb_rfile_index_free(struct lb_rindex *ix);
bool lb_rfile_index_mixed(const struct lb_rfile *a, const struct lb_rfile *b,
			  const char *const *keys);

/* A param value as text ("tas", "4", "null", "12.5"). */
void lb_param_text(const json_t *v, char *buf, size_t len);

/* A number param as double (integer or real); NAN when missing or not a number. */
double lb_param_number(const json_t *params, const char *key);

#endif /* LB_RESULT_FILE_H */
