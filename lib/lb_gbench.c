/* SPDX-License-Identifier: MIT */
/* lb_gbench.c - lockbench figures as Google Benchmark JSON (see lb_gbench.h). */
#include "lb_gbench.h"
#include "lb_hostinfo.h"
#include "lb_json.h"
#include "lb_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void lb_gbench_begin(struct lb_json *j, const struct lb_gbench_context *ctx)
{
	const struct lb_hostinfo *host = ctx->host;
	char date[64], schema[96];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S%z", &tm);
	snprintf(schema, sizeof(schema), "%s-%u", ctx->schema->name, ctx->schema->version);
	lb_json_object_begin(j);
	lb_json_key(j, "context");
	lb_json_object_begin(j);
	lb_json_kv_string(j, "date", date);
	lb_json_kv_string(j, "host_name", host->hostname);
	lb_json_kv_string(j, "executable", "lockbench");
	lb_json_kv_int(j, "num_cpus", host->ncpus_online);
	lb_json_kv_int(j, "mhz_per_cpu", 0); /* not measured by lockbench */
	const char *gov = host->cpufreq_governor;
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
	lb_json_kv_string(j, "library_version", host->version);
	lb_json_kv_string(j, "library_build_type",
			  strstr(host->build_type, "debug") ? "debug" : "release");
	lb_json_kv_int(j, "json_schema_version", 1);
	/* Custom context: where the figures came from. */
	lb_json_kv_string(j, "lockbench_schema", schema);
	lb_json_kv_string(j, "lockbench_command", ctx->command ? ctx->command : "");
	lb_json_kv_string(j, "cpu_model", host->cpu_model);
	lb_json_kv_string(j, "kernel", host->kernel);
	lb_json_kv_string(j, "git_revision", host->git_rev);
	if (ctx->interrupted) /* only the cells a signal let finish */
		lb_json_kv_bool(j, "lockbench_interrupted", true);
	lb_json_object_end(j);
	lb_json_key(j, "benchmarks");
	lb_json_array_begin(j);
}

void lb_gbench_end(struct lb_json *j)
{
	lb_json_array_end(j);
	lb_json_object_end(j);
	fputc('\n', j->out);
}

void lb_gbench_name(const struct lb_gbench_hints *hints, const char *const *values, char *buf,
		    size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; hints->name_params[i] && used < len; i++) {
		if (!values[i])
			continue;
		int w = i == 0 ? snprintf(buf + used, len - used, "%s", values[i])
			       : snprintf(buf + used, len - used, "/%s:%s", hints->name_params[i],
					  values[i]);
		used += w > 0 ? (size_t)w : 0;
	}
}

static void entry_head(struct lb_json *j, const struct lb_gbench_benchmark *b, size_t family,
		       const char *name, const char *run_type)
{
	lb_json_object_begin(j);
	lb_json_kv_string(j, "name", name);
	lb_json_kv_uint(j, "family_index", family);
	lb_json_kv_uint(j, "per_family_instance_index", 0);
	lb_json_kv_string(j, "run_name", b->name);
	lb_json_kv_string(j, "run_type", run_type);
	lb_json_kv_uint(j, "repetitions", b->nruns);
}

static void write_aggregate(struct lb_json *j, const struct lb_gbench_benchmark *b,
			    size_t family, const char *agg, const struct lb_summary s[3],
			    bool have_items)
{
	char name[512];
	snprintf(name, sizeof(name), "%s_%s", b->name, agg);
	entry_head(j, b, family, name, "aggregate");
	lb_json_kv_int(j, "threads", b->threads);
	lb_json_kv_string(j, "aggregate_name", agg);
	bool cv = !strcmp(agg, "cv");
	lb_json_kv_string(j, "aggregate_unit", cv ? "percentage" : "time");
	lb_json_kv_uint(j, "iterations", b->nruns);
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

int lb_gbench_write_benchmark(struct lb_json *j, const struct lb_gbench_hints *hints,
			      size_t family, const struct lb_gbench_benchmark *b)
{
	bool have_items = hints->items_per_second != NULL;
	double *v[3];
	for (int k = 0; k < 3; k++) {
		v[k] = calloc(b->nruns ? b->nruns : 1, sizeof(double));
		if (!v[k]) {
			for (int i = 0; i < k; i++)
				free(v[i]);
			return -1;
		}
	}
	for (size_t r = 0; r < b->nruns; r++) {
		const struct lb_gbench_run *run = &b->runs[r];
		v[0][r] = run->real_time_ns;
		v[1][r] = hints->cpu_time_ns ? run->cpu_time_ns : v[0][r];
		v[2][r] = run->items_per_second;
		entry_head(j, b, family, b->name, "iteration");
		lb_json_kv_uint(j, "repetition_index", r);
		lb_json_kv_int(j, "threads", b->threads);
		lb_json_kv_uint(j, "iterations",
				isfinite(run->iterations) ? (uint64_t)run->iterations : 1);
		lb_json_kv_double(j, "real_time", v[0][r]);
		lb_json_kv_double(j, "cpu_time", v[1][r]);
		lb_json_kv_string(j, "time_unit", "ns");
		if (have_items)
			lb_json_kv_double(j, "items_per_second", v[2][r]);
		lb_json_object_end(j);
	}
	if (b->nruns > 1) {
		struct lb_summary s[3];
		for (int k = 0; k < 3; k++)
			lb_summarize(v[k], b->nruns, &s[k]);
		static const char *const aggs[] = { "mean", "median", "stddev", "cv" };
		for (int a = 0; a < 4; a++)
			write_aggregate(j, b, family, aggs[a], s, have_items);
	}
	for (int k = 0; k < 3; k++)
		free(v[k]);
	return 0;
}
