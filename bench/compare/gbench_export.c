/* SPDX-License-Identifier: MIT */
/* gbench_export.c - lockbench results as Google Benchmark JSON (see gbench_export.h). */
#include "gbench_export.h"
#include "micro/micro.h"
#include "lb_cli.h"
#include "lb_json.h"
#include "lb_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct gbench_map {
	const char *schema;
	const char *const *name_params; /* first one bare, the others "key:value"; nulls skipped */
	const char *real_time_ns;       /* metric: wall ns per iteration */
	const char *cpu_time_ns;        /* metric: CPU ns per iteration (NULL: real) */
	const char *items_per_second;   /* metric or NULL */
	const char *iterations;         /* run key with the iteration count, or NULL */
	const char *threads;            /* param with the thread count, or NULL */
};

static const char *const bench_name_params[] = { "lock", "threads", "read_pct", NULL };

static const struct gbench_map maps[] = {
	{ "lockbench-bench", bench_name_params, "ns_per_op", "cpu_ns_per_op", "ops_per_sec",
	  "total_ops", "threads" },
};

static const struct gbench_map *find_map(const char *schema)
{
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		if (!strcmp(maps[i].schema, schema))
			return &maps[i];
	return NULL;
}

static const char *host_string(const struct lb_rfile *f, const char *key)
{
	const json_t *v = json_object_get(json_object_get(f->root, "host"), key);
	return json_is_string(v) ? json_string_value(v) : "";
}

static void write_context(struct lb_json *j, const struct lb_rfile *f)
{
	char date[64];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S%z", &tm);
	const json_t *host = json_object_get(f->root, "host");
	lb_json_key(j, "context");
	lb_json_object_begin(j);
	lb_json_kv_string(j, "date", date);
	lb_json_kv_string(j, "host_name", host_string(f, "hostname"));
	lb_json_kv_string(j, "executable", "lockbench");
	lb_json_kv_int(j, "num_cpus", (int64_t)json_integer_value(json_object_get(host, "cpus_online")));
	lb_json_kv_int(j, "mhz_per_cpu", 0); /* not measured by lockbench */
	const char *gov = host_string(f, "cpufreq_governor");
	if (*gov && strcmp(gov, "none"))
		lb_json_kv_bool(j, "cpu_scaling_enabled", strcmp(gov, "performance") != 0);
	lb_json_key(j, "caches");
	lb_json_array_begin(j);
	lb_json_array_end(j);
	double load[3];
	lb_json_key(j, "load_avg");
	lb_json_array_begin(j);
	if (getloadavg(load, 3) == 3)
		for (int i = 0; i < 3; i++)
			lb_json_double(j, load[i]);
	lb_json_array_end(j);
	lb_json_kv_string(j, "library_version", host_string(f, "version"));
	lb_json_kv_string(j, "library_build_type",
			  strstr(host_string(f, "build_type"), "debug") ? "debug" : "release");
	lb_json_kv_int(j, "json_schema_version", 1);
	/* Custom context: where the figures came from. */
	lb_json_kv_string(j, "lockbench_schema",
			  json_string_value(json_object_get(f->root, "schema")));
	lb_json_kv_string(j, "lockbench_command", f->command);
	lb_json_kv_string(j, "cpu_model", host_string(f, "cpu_model"));
	lb_json_kv_string(j, "kernel", host_string(f, "kernel"));
	lb_json_kv_string(j, "git_revision", host_string(f, "git_revision"));
	if (f->interrupted) /* only the cells a signal let finish */
		lb_json_kv_bool(j, "lockbench_interrupted", true);
	lb_json_object_end(j);
}

static void bench_name(const struct gbench_map *m, const json_t *params, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; m->name_params[i] && used < len; i++) {
		const json_t *v = json_object_get(params, m->name_params[i]);
		char text[128];
		if (!v || json_is_null(v))
			continue;
		lb_param_text(v, text, sizeof(text));
		int w = i == 0 ? snprintf(buf + used, len - used, "%s", text)
			       : snprintf(buf + used, len - used, "/%s:%s", m->name_params[i], text);
		used += w > 0 ? (size_t)w : 0;
	}
}

struct entry {
	const char *name;
	size_t family;
	size_t repetitions;
	int64_t threads;
};

static void entry_head(struct lb_json *j, const struct entry *e, const char *name,
		       const char *run_type)
{
	lb_json_object_begin(j);
	lb_json_kv_string(j, "name", name);
	lb_json_kv_uint(j, "family_index", e->family);
	lb_json_kv_uint(j, "per_family_instance_index", 0);
	lb_json_kv_string(j, "run_name", e->name);
	lb_json_kv_string(j, "run_type", run_type);
	lb_json_kv_uint(j, "repetitions", e->repetitions);
}

/* Values of one metric across the runs (NAN where missing). */
static double run_value(const json_t *run, const char *key)
{
	const json_t *v = key ? json_object_get(run, key) : NULL;
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void write_aggregate(struct lb_json *j, const struct entry *e, const char *agg,
			    const struct lb_summary s[3], bool have_items)
{
	char name[512];
	snprintf(name, sizeof(name), "%s_%s", e->name, agg);
	entry_head(j, e, name, "aggregate");
	lb_json_kv_int(j, "threads", e->threads);
	lb_json_kv_string(j, "aggregate_name", agg);
	bool cv = !strcmp(agg, "cv");
	lb_json_kv_string(j, "aggregate_unit", cv ? "percentage" : "time");
	lb_json_kv_uint(j, "iterations", e->repetitions);
	const char *keys[3] = { "real_time", "cpu_time", "items_per_second" };
	for (int k = 0; k < 3; k++) {
		if (k == 2 && !have_items)
			break;
		double v = !strcmp(agg, "mean") ? s[k].mean : !strcmp(agg, "median") ? s[k].median
			 : !strcmp(agg, "stddev") ? s[k].sd : s[k].cov;
		lb_json_kv_double(j, keys[k], v);
		if (k == 1)
			lb_json_kv_string(j, "time_unit", "ns");
	}
	lb_json_object_end(j);
}

int lb_gbench_write(FILE *out, const struct lb_rfile *f, char *err, size_t errlen)
{
	const struct gbench_map *m = find_map(f->schema->name);
	if (!m) {
		snprintf(err, errlen, "--format gbench: no Google Benchmark mapping for %s results; "
			 "accepted: lockbench-bench", f->schema->name);
		return -1;
	}
	struct lb_json j;
	lb_json_init(&j, out);
	lb_json_object_begin(&j);
	write_context(&j, f);
	lb_json_key(&j, "benchmarks");
	lb_json_array_begin(&j);
	for (size_t c = 0; c < f->ncells; c++) {
		const struct lb_rcell *cell = &f->cells[c];
		const json_t *runs = json_object_get(cell->cell, "runs");
		char name[256];
		bench_name(m, cell->params, name, sizeof(name));
		struct entry e = { name, c, cell->nruns,
				   m->threads ? (int64_t)lb_param_number(cell->params, m->threads) : 1 };
		double *v[3];
		bool have_items = m->items_per_second != NULL;
		for (int k = 0; k < 3; k++) {
			v[k] = calloc(cell->nruns ? cell->nruns : 1, sizeof(double));
			if (!v[k]) {
				for (int i = 0; i < k; i++)
					free(v[i]);
				snprintf(err, errlen, "out of memory");
				return -1;
			}
		}
		for (size_t r = 0; r < cell->nruns; r++) {
			const json_t *run = json_array_get(runs, r);
			v[0][r] = run_value(run, m->real_time_ns);
			v[1][r] = m->cpu_time_ns ? run_value(run, m->cpu_time_ns) : v[0][r];
			v[2][r] = run_value(run, m->items_per_second);
			double iters = run_value(run, m->iterations);
			entry_head(&j, &e, name, "iteration");
			lb_json_kv_uint(&j, "repetition_index", r);
			lb_json_kv_int(&j, "threads", e.threads);
			lb_json_kv_uint(&j, "iterations", isfinite(iters) ? (uint64_t)iters : 1);
			lb_json_kv_double(&j, "real_time", v[0][r]);
			lb_json_kv_double(&j, "cpu_time", v[1][r]);
			lb_json_kv_string(&j, "time_unit", "ns");
			if (have_items)
				lb_json_kv_double(&j, "items_per_second", v[2][r]);
			lb_json_object_end(&j);
		}
		if (cell->nruns > 1) {
			struct lb_summary s[3];
			for (int k = 0; k < 3; k++)
				lb_summarize(v[k], cell->nruns, &s[k]);
			static const char *const aggs[] = { "mean", "median", "stddev", "cv" };
			for (int a = 0; a < 4; a++)
				write_aggregate(&j, &e, aggs[a], s, have_items);
		}
		for (int k = 0; k < 3; k++)
			free(v[k]);
	}
	lb_json_array_end(&j);
	lb_json_object_end(&j);
	fputc('\n', out);
	return 0;
}

int lb_report_gbench(FILE *out, const struct lb_bench_config *cfg, const struct lb_hostinfo *host,
		     const struct lb_cell *cells, size_t ncells)
{
	char *text = NULL, err[512];
	size_t len = 0;
	struct lb_rfile f;
	FILE *mem = open_memstream(&text, &len);
	if (!mem) {
		fprintf(stderr, "%s: out of memory\n", lb_cli_prog());
		return -1;
	}
	lb_report_json(mem, cfg, host, cells, ncells);
	fclose(mem);
	int rc = lb_rfile_load_string(text, "bench report", &f, err, sizeof(err));
	if (rc == 0)
		rc = lb_gbench_write(out, &f, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s: %s\n", lb_cli_prog(), err);
	lb_rfile_free(&f);
	free(text);
	return rc;
}
