/* SPDX-License-Identifier: MIT */
/*
 * micro_gbench.c - `bench --json FILE --format gbench`: the cells in memory
 * handed to the Google Benchmark writer (lib/lb_gbench.h) through
 * the bench schema's gbench hints (micro_report.c), with no JSON in between.
 */
#include "micro.h"
#include "workload.h"
#include "lb_gbench.h"
#include "lb_cli.h"
#include "lb_json.h"

#include <math.h>
#include <stdlib.h>

/* A figure as the lockbench JSON file would give it back: null (non-finite)
 * is NAN, and -0 reads as the integer 0. */
static double as_filed(double v)
{
	return !isfinite(v) ? NAN : v == 0 ? 0.0 : v;
}

/* The run's value of the metric a hint names (NAN for no hint). */
static double hinted(const struct lb_run_result *r, const char *key)
{
	const struct lb_metric_desc *md = key ? lb_schema_metric(&lb_schema_bench, key) : NULL;
	if (!md)
		return NAN;
	return as_filed(lb_metric_value(r, (enum lb_metric)(md - lb_schema_bench.metrics)));
}

static int write_cell(struct lb_json *j, const struct lb_micro_config *cfg,
		      const struct lb_cell *c, size_t family)
{
	const struct lb_gbench_hints *hints = lb_schema_bench.gbench;
	char threads[24], read_pct[24], name[256];
	snprintf(threads, sizeof(threads), "%u", c->nthreads);
	snprintf(read_pct, sizeof(read_pct), "%d", cfg->loop.read_pct);
	/* The hints' name params, in order: lock, threads, read_pct (null: none). */
	const char *values[] = { c->ops->name, threads, cfg->loop.read_pct >= 0 ? read_pct : NULL };
	lb_gbench_name(hints, values, name, sizeof(name));
	struct lb_gbench_run *runs = calloc(c->nruns ? c->nruns : 1, sizeof(*runs));
	if (!runs)
		return -1;
	for (unsigned int r = 0; r < c->nruns; r++) {
		runs[r].real_time_ns = hinted(&c->runs[r], hints->real_time_ns);
		runs[r].cpu_time_ns = hinted(&c->runs[r], hints->cpu_time_ns);
		runs[r].items_per_second = hinted(&c->runs[r], hints->items_per_second);
		runs[r].iterations = (double)c->runs[r].total_ops;
	}
	struct lb_gbench_benchmark b = { name, c->nthreads, runs, c->nruns };
	int rc = lb_gbench_write_benchmark(j, hints, family, &b);
	free(runs);
	return rc;
}

int lb_report_gbench(FILE *out, const struct lb_micro_config *cfg,
		     const struct lb_run_record *rec, const struct lb_hostinfo *host,
		     const struct lb_cell *cells, size_t ncells)
{
	const struct lb_gbench_context ctx = { host, &lb_schema_bench, rec->command,
					       rec->interrupted_by != 0 };
	struct lb_json j;
	lb_json_init(&j, out);
	lb_gbench_begin(&j, &ctx);
	for (size_t i = 0; i < ncells; i++)
		if (write_cell(&j, cfg, &cells[i], i)) {
			fprintf(stderr, "%s: out of memory\n", lb_cli_prog());
			return -1;
		}
	lb_gbench_end(&j);
	return 0;
}
