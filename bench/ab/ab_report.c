/* SPDX-License-Identifier: MIT */
/*
 * ab_report.c - the paired statistics of each cell, the kernel list's A/B
 * table (LABEL | COUNT | MIN | MAX | MEAN | MEDIAN | STDDEV | DIRECTION, the
 * (A) and (B) rows, then B's deltas against A), a verdict line per cell,
 * and the JSON (schema lockbench-ab-1, lib/lb_schema.h).
 */
#include "ab.h"
#include "lb_hostinfo.h"
#include "lb_json.h"
#include "lb_work.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct lb_metric_desc ab_metrics[] = {
	{ "ns_per_op", "ns", LB_BETTER_LOWER, "wall time per op" },
	{ "cpu_ns_per_op", "ns", LB_BETTER_LOWER, "CPU time per op" },
	{ "ops_per_sec", "ops/s", LB_BETTER_HIGHER, "throughput" },
	{ "c2c_ns", "ns", LB_BETTER_NONE, "cache-line round trip" },
};
static const char *const ab_params[] = { "side", "lock", "threads", NULL };

static const char *const ab_curves[] = { "ns_per_op", "cpu_ns_per_op", "ops_per_sec", NULL };
static const struct lb_plot_hints ab_plot = { .x_param = "threads", .curves = ab_curves };

const struct lb_workload_schema lb_schema_ab = {
	.name = "lockbench-ab",
	.version = 1,
	.params = ab_params,
	.metrics = ab_metrics,
	.nmetrics = sizeof(ab_metrics) / sizeof(ab_metrics[0]),
	.plot = &ab_plot,
};

void lb_ab_analyze(struct lb_ab_cell *cells, size_t n, bool metric_cpu)
{
	for (size_t i = 0; i < n; i++) {
		struct lb_ab_cell *c = &cells[i];
		size_t m = c->npairs;
		for (int s = 0; s < LB_AB_SIDES; s++) {
			c->value[s] = metric_cpu ? c->cpu[s] : c->ns[s];
			lb_summarize(c->value[s], m, &c->sum[s]);
		}
		const double *a = c->value[LB_AB_A], *b = c->value[LB_AB_B];
		lb_paired_ratio(a, b, m, LB_AB_CONFIDENCE, &c->ratio);
		double *d = malloc((m ? m : 1) * sizeof(double));
		for (size_t k = 0; d && k < m; k++)
			d[k] = a[k] > 0 && b[k] > 0 ? log(b[k] / a[k]) : 0;
		if (!d || lb_signrank_test(d, m, &c->rank))
			c->rank = (struct lb_signrank){ .p = 1 };
		free(d);
		/* Bonferroni: the family of n cells keeps its 5 % false-alarm rate. */
		c->alpha = LB_AB_ALPHA / (double)n;
		c->verdict = c->rank.p < c->alpha ? (c->ratio.geomean > 1 ? 1 : -1) : 0;
		c->c2c_min = c->c2c_max = -1;
		for (size_t k = 0; k < m; k++) {
			double v = c->c2c[k];
			if (v < 0)
				continue;
			c->c2c_min = c->c2c_min < 0 || v < c->c2c_min ? v : c->c2c_min;
			c->c2c_max = v > c->c2c_max ? v : c->c2c_max;
		}
	}
}

static double pct(double b, double a)
{
	return a != 0 ? 100.0 * (b - a) / fabs(a) : 0;
}

static const char *verdict_word(int v)
{
	return v > 0 ? "B worse" : v < 0 ? "B better" : "no difference";
}

#define RULE "--------------------------------+-------+------------+------------+------------+" \
	     "------------+------------+-----------------"

void lb_ab_report_table(FILE *out, const struct lb_ab_config *cfg, const struct lb_hostinfo *host,
			const struct lb_ab_cell *cells, size_t n)
{
	double lo = -1, hi = -1;
	for (size_t i = 0; i < n; i++) {
		if (cells[i].c2c_min >= 0 && (lo < 0 || cells[i].c2c_min < lo))
			lo = cells[i].c2c_min;
		hi = cells[i].c2c_max > hi ? cells[i].c2c_max : hi;
	}
	fprintf(out, "# lockbench ab: (A) %s vs (B) %s; %zu ABBA blocks of 4 x %.0f ms slices per "
		"cell (%zu pairs of adjacent slices), cells interleaved, one process, %.1f s\n", cfg->lock[LB_AB_A]->name,
		cfg->lock[LB_AB_B]->name, n ? cells[0].nblocks : 0,
		(double)cfg->run.duration_ns / 1e6, n ? cells[0].npairs : 0, cfg->elapsed_s);
	fprintf(out, "# %s, %d CPUs, load %.2f before", host->cpu_model, host->ncpus_online,
		cfg->load_before);
	if (lo >= 0)
		fprintf(out, "; cache-line round trip %.0f..%.0f ns over the run", lo, hi);
	fprintf(out, "\n# value: %s of one slice; ratio B/A: geometric mean over the pairs, "
		"%.0f %% interval; verdict: Wilcoxon signed-rank, two-sided, "
		"level %.2g per cell (%.2g over %zu cells)\n",
		cfg->metric_cpu ? "CPU ns/op" : "wall ns/op", 100 * LB_AB_CONFIDENCE,
		n ? cells[0].alpha : LB_AB_ALPHA, LB_AB_ALPHA, n);
	if (cfg->interrupted_by)
		fprintf(out, "# interrupted: the blocks finished before the signal\n");
	fprintf(out, "%-32s| COUNT |        MIN |        MAX |       MEAN |     MEDIAN |     STDDEV "
		"| DIRECTION\n%s\n", "LABEL", RULE);
	for (size_t i = 0; i < n; i++) {
		const struct lb_ab_cell *c = &cells[i];
		char label[64];
		snprintf(label, sizeof(label), "%s_%u_thread%s", cfg->metric_cpu ? "cpu_ns_per_op" :
			 "ns_per_op", c->nthreads,
			 c->nthreads == 1 ? "" : "s");
		fprintf(out, "%-32s|       |            |            |            |            |"
			"            |\n", label);
		for (int s = 0; s < LB_AB_SIDES; s++) {
			const struct lb_summary *m = &c->sum[s];
			snprintf(label, sizeof(label), "  (%c) %s", s ? 'B' : 'A', cfg->lock[s]->name);
			fprintf(out, "%-32.32s| %5zu | %10.3f | %10.3f | %10.3f | %10.3f | %10.4g |\n",
				label, m->n, m->min, m->max, m->mean, m->median, m->sd);
		}
		const struct lb_summary *a = &c->sum[LB_AB_A], *b = &c->sum[LB_AB_B];
		fprintf(out, "%-32s|       | %+9.2f%% | %+9.2f%% | %+9.2f%% | %+9.2f%% | %+9.2f%% "
			"| - is good\n", "", pct(b->min, a->min), pct(b->max, a->max),
			pct(b->mean, a->mean), pct(b->median, a->median), pct(b->sd, a->sd));
		fprintf(out, "  ratio B/A %.4f [%.4f, %.4f] (%+.2f%%); signed-rank W+ %.0f of %zu "
			"pairs, p %.3g%s: %s", c->ratio.geomean, c->ratio.lo, c->ratio.hi,
			100 * (c->ratio.geomean - 1), c->rank.w_plus, c->rank.n, c->rank.p,
			c->rank.exact ? " (exact)" : "", verdict_word(c->verdict));
		if (c->c2c_min >= 0)
			fprintf(out, "; round trip %.0f..%.0f ns", c->c2c_min, c->c2c_max);
		fputc('\n', out);
		for (int s = 0; s < LB_AB_SIDES; s++)
			if (c->lost_updates[s])
				fprintf(out, "  WARNING: (%c) %s lost %llu updates of the shared data: "
					"not a working lock\n", s ? 'B' : 'A', cfg->lock[s]->name,
					(unsigned long long)c->lost_updates[s]);
	}
}

static void write_side(struct lb_json *j, const struct lb_ab_config *cfg,
		       const struct lb_ab_cell *c, int s)
{
	lb_json_object_begin(j);
	lb_json_key(j, "params");
	lb_json_object_begin(j);
	lb_json_kv_string(j, "side", s ? "B" : "A");
	lb_json_kv_string(j, "lock", cfg->lock[s]->name);
	lb_json_kv_uint(j, "threads", c->nthreads);
	lb_json_object_end(j);
	lb_json_key(j, "summary");
	lb_json_object_begin(j);
	lb_json_key(j, cfg->metric_cpu ? "cpu_ns_per_op" : "ns_per_op");
	lb_json_object_begin(j);
	lb_schema_summary_fields(j, &c->sum[s]);
	lb_json_object_end(j);
	lb_json_object_end(j);
	if (s == LB_AB_B) {
		/* The paired analysis belongs to the pair: kept on B, against A. */
		lb_json_key(j, "paired");
		lb_json_object_begin(j);
		lb_json_kv_string(j, "against", cfg->lock[LB_AB_A]->name);
		lb_json_kv_string(j, "metric", cfg->metric_cpu ? "cpu_ns_per_op" : "ns_per_op");
		lb_json_kv_double(j, "ratio", c->ratio.geomean);
		lb_json_kv_double(j, "ratio_lo", c->ratio.lo);
		lb_json_kv_double(j, "ratio_hi", c->ratio.hi);
		lb_json_kv_double(j, "confidence", LB_AB_CONFIDENCE);
		lb_json_kv_double(j, "signrank_w_plus", c->rank.w_plus);
		lb_json_kv_uint(j, "signrank_n", c->rank.n);
		lb_json_kv_double(j, "p", c->rank.p);
		lb_json_kv_bool(j, "exact", c->rank.exact);
		lb_json_kv_double(j, "alpha", c->alpha);
		lb_json_kv_string(j, "verdict", c->verdict > 0 ? "worse" :
						c->verdict < 0 ? "better" : "none");
		lb_json_object_end(j);
	}
	lb_json_key(j, "runs");
	lb_json_array_begin(j);
	for (size_t k = 0; k < c->npairs; k++) {
		lb_json_object_begin(j);
		lb_json_kv_uint(j, "repeat_index", k);
		lb_json_kv_uint(j, "block", k / 2);
		lb_json_kv_string(j, "led_by", lb_ab_side(k / 2, (unsigned int)(k % 2) * 2) ? "B" : "A");
		lb_json_kv_double(j, "ns_per_op", c->ns[s][k]);
		lb_json_kv_double(j, "cpu_ns_per_op", c->cpu[s][k]);
		lb_json_kv_double(j, "ops_per_sec", c->ops[s][k]);
		if (c->c2c[k] >= 0) {
			lb_json_kv_double(j, "c2c_ns", c->c2c[k]);
			/* compare's round-trip range reads these two. */
			lb_json_kv_double(j, "c2c_before_ns", c->c2c[k]);
			lb_json_kv_double(j, "c2c_after_ns", c->c2c[k]);
		} else {
			lb_json_key(j, "c2c_ns");
			lb_json_null(j);
		}
		lb_json_object_end(j);
	}
	lb_json_array_end(j);
	lb_json_object_end(j);
}

void lb_ab_report_json(FILE *out, const struct lb_ab_config *cfg, const struct lb_hostinfo *host,
		       const struct lb_ab_cell *cells, size_t n)
{
	struct lb_json j;
	lb_json_init(&j, out);
	lb_json_object_begin(&j);
	lb_schema_write_head(&j, &lb_schema_ab, host);
	lb_json_kv_bool(&j, "interrupted", cfg->interrupted_by != 0);
	lb_json_key(&j, "config");
	lb_json_object_begin(&j);
	lb_json_kv_string(&j, "command", cfg->argv_joined);
	lb_json_kv_string(&j, "lock_a", cfg->lock[LB_AB_A]->name);
	lb_json_kv_string(&j, "lock_b", cfg->lock[LB_AB_B]->name);
	lb_json_key(&j, "threads");
	lb_json_array_begin(&j);
	for (size_t i = 0; i < cfg->run.nthread_counts; i++)
		lb_json_uint(&j, cfg->run.threads[i]);
	lb_json_array_end(&j);
	lb_json_kv_double(&j, "slice_s", (double)cfg->run.duration_ns / 1e9);
	lb_json_kv_double(&j, "budget_s", (double)cfg->budget_ns / 1e9);
	lb_json_kv_uint(&j, "blocks", n ? cells[0].nblocks : 0);
	lb_json_kv_uint(&j, "pairs", n ? cells[0].npairs : 0);
	lb_json_kv_string(&j, "order", "ABBA,BAAB alternating; cells interleaved per block");
	lb_json_kv_string(&j, "metric", cfg->metric_cpu ? "cpu_ns_per_op" : "ns_per_op");
	lb_json_kv_uint(&j, "cs_iters", cfg->run.cs.iters);
	lb_json_kv_uint(&j, "par_iters", cfg->run.par.iters);
	lb_json_kv_uint(&j, "cs_lines", cfg->run.cs_lines);
	lb_json_kv_double(&j, "load_before", cfg->load_before);
	lb_json_kv_double(&j, "elapsed_s", cfg->elapsed_s);
	lb_json_object_end(&j);
	lb_json_key(&j, "results");
	lb_json_array_begin(&j);
	for (size_t i = 0; i < n; i++)
		for (int s = 0; s < LB_AB_SIDES; s++)
			write_side(&j, cfg, &cells[i], s);
	lb_json_array_end(&j);
	lb_json_object_end(&j);
	fputc('\n', out);
}
