/* SPDX-License-Identifier: MIT */
/* result_file.c - the generic lockbench result-file reader (see result_file.h). */
#include "result_file.h"
#include "lb_stats.h"
#include "schemas.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

void lb_rfile_accepted_schemas(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; lb_workload_schemas[i] && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%s-%u", i ? ", " : "",
				 lb_workload_schemas[i]->name, lb_workload_schemas[i]->version);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

static const char *string_at(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The schema from "schema_name" + "schema_version", or from "schema" alone
 * ("lockbench-bench-1": the version is the part after the last '-'). */
static int find_schema(struct lb_rfile *f, char *err, size_t len)
{
	char accepted[512], name[128];
	long version = -1;
	lb_rfile_accepted_schemas(accepted, sizeof(accepted));
	const char *full = string_at(f->root, "schema");
	const char *sname = string_at(f->root, "schema_name");
	const json_t *sver = json_object_get(f->root, "schema_version");
	if (!full && !sname)
		return fail(err, len, "%s: not a lockbench result file (no \"schema\" key); accepted "
			    "schemas: %s", f->path, accepted);
	if (sname && json_is_integer(sver)) {
		snprintf(name, sizeof(name), "%s", sname);
		version = (long)json_integer_value(sver);
	} else if (!full) {
		return fail(err, len, "%s: \"schema_name\" without an integer \"schema_version\" "
			    "(%s) and no \"schema\"; accepted schemas: %s", f->path,
			    sver ? "not an integer" : "missing", accepted);
	} else {
		const char *dash = strrchr(full, '-');
		char *end;
		if (!dash || dash == full || !dash[1])
			return fail(err, len, "%s: schema '%s' is not NAME-VERSION; accepted schemas: %s",
				    f->path, full, accepted);
		version = strtol(dash + 1, &end, 10);
		if (*end || version < 0)
			return fail(err, len, "%s: schema '%s' is not NAME-VERSION; accepted schemas: %s",
				    f->path, full, accepted);
		snprintf(name, sizeof(name), "%.*s", (int)(dash - full), full);
	}
	f->schema = lb_schema_find(name);
	if (!f->schema)
		return fail(err, len, "%s: unknown schema '%s'; accepted schemas: %s", f->path, name,
			    accepted);
	if ((unsigned long)version != f->schema->version)
		return fail(err, len, "%s: schema %s version %ld is not readable by this lockbench; "
			    "accepted schemas: %s", f->path, name, version, accepted);
	return 0;
}

static void make_host_line(struct lb_rfile *f)
{
	const json_t *h = json_object_get(f->root, "host");
	const char *cpu = string_at(h, "cpu_model"), *kernel = string_at(h, "kernel");
	const char *host = string_at(h, "hostname");
	json_int_t ncpu = json_integer_value(json_object_get(h, "cpus_online"));
	char kshort[64] = "?";
	if (kernel) /* "uname -r" is the first word; -v is long and dated */
		snprintf(kshort, sizeof(kshort), "%.*s", (int)strcspn(kernel, " "), kernel);
	snprintf(f->host_line, sizeof(f->host_line), "%s, %lld CPUs, kernel %s, host %s",
		 cpu ? cpu : "unknown CPU", (long long)ncpu, kshort, host ? host : "?");
}

static int read_cell(struct lb_rfile *f, size_t index, json_t *cell, char *err, size_t len)
{
	struct lb_rcell *c = &f->cells[index];
	const struct lb_workload_schema *s = f->schema;
	c->cell = cell;
	c->params = json_object_get(cell, "params");
	json_t *runs = json_object_get(cell, "runs");
	if (!json_is_object(c->params))
		return fail(err, len, "%s: results[%zu] has no \"params\" object", f->path, index);
	if (!json_is_array(runs))
		return fail(err, len, "%s: results[%zu] has no \"runs\" array", f->path, index);
	c->nruns = json_array_size(runs);
	c->values = calloc(s->nmetrics, sizeof(*c->values));
	c->nvalues = calloc(s->nmetrics, sizeof(*c->nvalues));
	if (!c->values || !c->nvalues)
		return fail(err, len, "out of memory");
	for (size_t m = 0; m < s->nmetrics; m++) {
		c->values[m] = calloc(c->nruns ? c->nruns : 1, sizeof(double));
		if (!c->values[m])
			return fail(err, len, "out of memory");
		for (size_t r = 0; r < c->nruns; r++) {
			json_t *run = json_array_get(runs, r);
			if (!json_is_object(run))
				return fail(err, len, "%s: results[%zu].runs[%zu] is not an object",
					    f->path, index, r);
			json_t *v = json_object_get(run, s->metrics[m].key);
			if (!v || json_is_null(v))
				continue; /* not measured in this run */
			if (!json_is_number(v))
				return fail(err, len, "%s: results[%zu].runs[%zu].%s is not a number",
					    f->path, index, r, s->metrics[m].key);
			c->values[m][c->nvalues[m]++] = json_number_value(v);
		}
	}
	return 0;
}

static int load_root(struct lb_rfile *f, const char *path, const json_error_t *jerr, char *err,
		     size_t len);

int lb_rfile_load(const char *path, struct lb_rfile *f, char *err, size_t len)
{
	json_error_t jerr;
	memset(f, 0, sizeof(*f));
	/* Duplicate keys would make "which value counts" a guess: refuse them. */
	f->root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	return load_root(f, path, &jerr, err, len);
}

int lb_rfile_load_string(const char *text, const char *name, struct lb_rfile *f, char *err,
			 size_t len)
{
	json_error_t jerr;
	memset(f, 0, sizeof(*f));
	f->root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	return load_root(f, name, &jerr, err, len);
}

/* A probe as the file has it: > 0 and below a second (a round trip is
 * 50-500 ns; lib/lb_c2c.h gives up far sooner); < 0 otherwise. */
static double probe_ns(const json_t *v)
{
	double x = json_is_number(v) ? json_number_value(v) : -1;
	return x > 0 && x < 1e9 ? x : -1;
}

/* A run's round trip: the mean of the probes it has; < 0 when none. */
static double run_c2c(const json_t *run)
{
	double b = probe_ns(json_object_get(run, "c2c_before_ns"));
	double a = probe_ns(json_object_get(run, "c2c_after_ns"));
	if (a > 0 && b > 0)
		return (a + b) / 2;
	return a > 0 ? a : b;
}

/* Over every run of the cells take[] marks that carries the probes. */
static void c2c_of(const json_t *results, const bool *take, double out[3])
{
	size_t n = 0, cap = 0, i;
	double *v = NULL;
	const json_t *cell;
	out[0] = out[1] = out[2] = -1;
	json_array_foreach(results, i, cell) {
		size_t k;
		const json_t *run;
		if (take && !take[i])
			continue;
		json_array_foreach(json_object_get(cell, "runs"), k, run) {
			double x = run_c2c(run);
			if (x < 0)
				continue;
			if (n == cap) {
				double *grown = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));
				if (!grown) {
					free(v);
					return; /* out of memory: the figure is only a note */
				}
				v = grown;
			}
			v[n++] = x;
		}
	}
	if (n) {
		struct lb_summary s;
		lb_summarize(v, n, &s);
		out[0] = s.min;
		out[1] = s.median;
		out[2] = s.max;
	}
	free(v);
}

void lb_rfile_c2c_range(const struct lb_rfile *f, const bool *take, double *min, double *median,
			double *max)
{
	double out[3];
	c2c_of(json_object_get(f->root, "results"), take, out);
	*min = out[0];
	*median = out[1];
	*max = out[2];
}

/* bench's config.load_average_before, or ab's config.load_before. */
static double read_load_average(const json_t *config)
{
	static const char *const keys[] = { "load_average_before", "load_before" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const json_t *v = json_object_get(config, keys[i]);
		if (json_is_number(v) && json_number_value(v) >= 0)
			return json_number_value(v);
	}
	return -1;
}

static int load_root(struct lb_rfile *f, const char *path, const json_error_t *jerr, char *err,
		     size_t len)
{
	f->path = strdup(path);
	if (!f->path)
		return fail(err, len, "out of memory");
	if (!f->root) {
		if (jerr->line < 0 || jerr->position == 0)
			return fail(err, len, "%s: cannot read: %s", path, jerr->text);
		return fail(err, len, "%s: not valid JSON (line %d, column %d: %s)", path, jerr->line,
			    jerr->column, jerr->text);
	}
	if (!json_is_object(f->root))
		return fail(err, len, "%s: not a lockbench result file (the top level is not an "
			    "object)", path);
	if (find_schema(f, err, len))
		return -1;
	const json_t *config = json_object_get(f->root, "config");
	f->command = string_at(config, "command");
	if (!f->command)
		f->command = "";
	f->interrupted = json_is_true(json_object_get(f->root, "interrupted"));
	f->model = string_at(f->root, "model");
	make_host_line(f);
	json_t *results = json_object_get(f->root, "results");
	if (!json_is_array(results))
		return fail(err, len, "%s: no \"results\" array", path);
	double c2c[3];
	c2c_of(results, NULL, c2c);
	f->c2c_min = c2c[0];
	f->c2c_median = c2c[1];
	f->c2c_max = c2c[2];
	f->load_average = read_load_average(config);
	const json_t *steal = json_object_get(config, "steal_s");
	f->steal_s = json_is_number(steal) && json_number_value(steal) >= 0 ? json_number_value(steal) : -1;
	f->ncells = json_array_size(results);
	f->cells = calloc(f->ncells ? f->ncells : 1, sizeof(*f->cells));
	if (!f->cells)
		return fail(err, len, "out of memory");
	for (size_t i = 0; i < f->ncells; i++) {
		json_t *cell = json_array_get(results, i);
		if (!json_is_object(cell))
			return fail(err, len, "%s: results[%zu] is not an object", path, i);
		if (read_cell(f, i, cell, err, len))
			return -1;
	}
	f->varying = lb_rfile_varying_keys(f, 1);
	if (!f->varying)
		return fail(err, len, "out of memory");
	return 0;
}

void lb_rfile_free(struct lb_rfile *f)
{
	for (size_t i = 0; i < f->ncells && f->schema; i++) {
		struct lb_rcell *c = &f->cells[i];
		for (size_t m = 0; c->values && m < f->schema->nmetrics; m++)
			free(c->values[m]);
		free(c->values);
		free(c->nvalues);
	}
	free(f->cells);
	if (f->varying)
		json_decref(f->varying);
	if (f->root)
		json_decref(f->root);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

static bool value_match(const json_t *a, const json_t *b)
{
	if (!a || !b)
		return a == b;
	if (json_is_real(a) || json_is_real(b)) {
		if (!json_is_number(a) || !json_is_number(b))
			return false;
		double x = json_number_value(a), y = json_number_value(b);
		double scale = fmax(fabs(x), fabs(y));
		return fabs(x - y) <= 0.05 * scale;
	}
	return json_equal(a, b);
}

bool lb_params_match(const json_t *a, const json_t *b, const char *const *keys)
{
	const char *key;
	const json_t *v;
	if (keys) {
		for (size_t i = 0; keys[i]; i++)
			if (!value_match(json_object_get(a, keys[i]), json_object_get(b, keys[i])))
				return false;
		return true;
	}
	json_object_foreach((json_t *)a, key, v)
		if (!value_match(v, json_object_get(b, key)))
			return false;
	json_object_foreach((json_t *)b, key, v)
		if (!json_object_get(a, key))
			return false;
	return true;
}

void lb_param_text(const json_t *v, char *buf, size_t len)
{
	if (!v || json_is_null(v))
		snprintf(buf, len, "null");
	else if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%.4g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
	else
		snprintf(buf, len, "?");
}

double lb_param_number(const json_t *params, const char *key)
{
	const json_t *v = json_object_get(params, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}
