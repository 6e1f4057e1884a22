/* SPDX-License-Identifier: MIT */
/*
 * ab_report.c - the paired statistics of each cell, the kernel list's A/B
 * table (LABEL | COUNT | MIN | MAX | MEAN | MEDIAN | STDDEV | DIRECTION, the
 * (A) and (B) rows, then B's deltas against A), a verdict line per cell,
 * and the JSON (schema lockbench-ab-1, lib/lb_schema.h).
 */
#include "ab.h"
#include "workload.h"
#include "lb_hostinfo.h"
#include "lb_stats.h"
#include "lb_json.h"
#include "lb_steal.h"
#include "lb_work.h"
#include "lb_wrap.h"

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

/* Each cell is two sides, A and B, the locks named in the config. */
static const struct lb_sides_hints ab_sides = {
	.side_param = "side",
	.values = { "A", "B" },
	.lock_param = "lock",
	.name_config = { "lock_a", "lock_b" },
};

const struct lb_workload_schema lb_schema_ab = {
	LB_SCHEMA_TABLES("lockbench-ab", 1, ab_params, ab_metrics),
	.plot = &ab_plot,
	.sides = &ab_sides,
};

static double pct(double b, double a)
{
	return a != 0 ? 100.0 * (b - a) / fabs(a) : 0;
}

static const char *verdict_word(int v)
{
	return v > 0 ? "B worse" : v < 0 ? "B better" : "no difference";
}

/*
 * The kernel list's table: LABEL | COUNT | MIN | MAX | MEAN | MEDIAN |
 * STDDEV | DIRECTION.  MIN and MAX only with --wide: the default table fits
 * LB_WIDTH columns (doc/ab.md).
 */
static void table_row(FILE *out, bool wide, const char *label, const char *count,
		      const char *const v[5], const char *direction)
{
	fprintf(out, "%-32.32s| %5s |", label, count);
	for (int k = 0; k < 5; k++)
		if (wide || k >= 2)
			fprintf(out, " %10s |", v[k]);
	fprintf(out, "%s%s\n", *direction ? " " : "", direction);
}

static void table_head(FILE *out, bool wide)
{
	static const char *const head[5] = { "MIN", "MAX", "MEAN", "MEDIAN", "STDDEV" };
	table_row(out, wide, "LABEL", "COUNT", head, "DIRECTION");
	fputs("--------------------------------+-------+", out);
	for (int k = wide ? 0 : 2; k < 5; k++)
		fputs("------------+", out);
	fputs("-----------------\n", out);
}

/* "1.0523 [1.0312, 1.0741] (+5.23%)" of r, at its level. */
static void ratio_text(const struct lb_ab_ratio *r, char *buf, size_t len)
{
	if (isfinite(r->mdc_pct))
		snprintf(buf, len, "%.4f [%.4f, %.4f] (%+.2f%%)", r->ratio, r->lo, r->hi,
			 100 * (r->ratio - 1));
	else
		snprintf(buf, len, "%.4f (%+.2f%%), no interval (%zu blocks)", r->ratio,
			 100 * (r->ratio - 1), r->blocks);
}

/* "+-X %" with a digit that is not 0: a quiet 1-thread cell can see changes
 * well under 0.1 %, which "%.1f" printed as "+-0.0 %". */
static const char *mdc_text(double pct, char *buf, size_t len)
{
	snprintf(buf, len, pct < 0.95 ? "+-%.2f %%" : "+-%.1f %%", pct);
	return buf;
}

/* The verdict's words: the interval's side, or what the cell could see. */
static void verdict_text(const struct lb_ab_cell *c, const struct lb_ab_ratio *r, char *buf,
			 size_t len)
{
	char mdc[32];
	mdc_text(r->mdc_pct, mdc, sizeof(mdc));
	if (c->withheld && isfinite(r->mdc_pct))
		snprintf(buf, len, "no verdict (more runnable work than CPUs before the run: "
			 "contended slices measure the scheduler); this cell could see %s", mdc);
	else if (c->withheld)
		snprintf(buf, len, "no verdict (more runnable work than CPUs before the run: "
			 "contended slices measure the scheduler)");
	else if (c->verdict)
		snprintf(buf, len, "%s (this cell could see %s)", verdict_word(c->verdict), mdc);
	else if (isfinite(r->mdc_pct))
		snprintf(buf, len, "no difference seen; this cell could see %s", mdc);
	else
		snprintf(buf, len, "no verdict (too few blocks for an interval)");
}

/* The lines under a cell's rows: the ratios and the verdict, the pairs and
 * blocks behind them, the lock costs, warnings. */
static void cell_notes(FILE *out, const struct lb_ab_config *cfg, const struct lb_ab_cell *c)
{
	const struct lb_signrank *rk = &c->ratio.rank;
	const struct lb_ab_ratio *head = c->own_headline ? &c->own_ratio : &c->ratio;
	char pairs[160] = "", trip[64] = "", rt[96], vt[192];
	ratio_text(head, rt, sizeof(rt));
	verdict_text(c, head, vt, sizeof(vt));
	if (c->own_headline) {
		lb_wrapf(out, "    ", "  lock's own cost B/A %s: %s", rt, vt);
		ratio_text(&c->ratio, rt, sizeof(rt));
		lb_wrapf(out, "    ", "  whole loop B/A %s (the harness loop included: overstates "
			 "the lock's change, doc/ab.md)", rt);
	} else {
		lb_wrapf(out, "    ", "  ratio B/A %s: %s", rt, vt);
	}
	if (c->c2c_min >= 0)
		snprintf(trip, sizeof(trip), "; round trip %.0f..%.0f ns", c->c2c_min, c->c2c_max);
	if (c->ratio.kept < c->npairs)
		snprintf(pairs, sizeof(pairs), "; %zu of %zu pairs left out (the round trip moved "
			 "between their slices)", c->npairs - c->ratio.kept, c->npairs);
	char how[128];
	if (head->rank_interval)
		snprintf(how, sizeof(how), "signed-rank interval over %zu blocks (each block a unit, "
			 "lag-1 correlation %.2f, half-widths x%.2f)", head->blocks, head->rho,
			 head->widen);
	else
		snprintf(how, sizeof(how), "bootstrap interval over %zu blocks (resampled %zu at a "
			 "time, lag-1 correlation %.2f)", head->blocks, head->block_len, head->rho);
	lb_wrapf(out, "    ", "  %.1f %% %s; %zu pairs, signed-rank sum W+ %.0f of %.0f%s%s",
		 100 * (1 - c->alpha), how, c->ratio.kept, rk->w_plus, rk->w_plus + rk->w_minus,
		 trip, pairs);
	if (isfinite(c->lock_cost[LB_AB_A]) && isfinite(c->lock_cost[LB_AB_B]))
		lb_wrapf(out, "    ", "  lock's own cost (a lock+unlock loop through the vtable less "
			 "the bare loop, CPU ns/op, median over blocks): (A) %.2f, (B) %.2f; the calls "
			 "alone (`none`): %.2f", c->lock_cost[LB_AB_A], c->lock_cost[LB_AB_B],
			 c->call_cost);
	for (int s = 0; s < LB_AB_SIDES; s++)
		if (c->lost_updates[s])
			lb_wrapf(out, "    ", "  WARNING: (%c) %s lost %llu updates of the shared "
				 "data: not a working lock", s ? 'B' : 'A', cfg->lock[s]->name,
				 (unsigned long long)c->lost_updates[s]);
	/* Only a fallible lock (rqspinlock) has any: others print as before. */
	for (int s = 0; s < LB_AB_SIDES; s++)
		if (c->lock_failures[s])
			lb_wrapf(out, "    ", "  (%c) %s: %llu failed acquisitions (timeout or "
				 "deadlock reported), left out of its ops", s ? 'B' : 'A',
				 cfg->lock[s]->name, (unsigned long long)c->lock_failures[s]);
}

static void print_cell(FILE *out, const struct lb_ab_config *cfg, const struct lb_ab_cell *c)
{
	static const char *const empty[5] = { "", "", "", "", "" };
	char label[64], count[16], v[5][32];
	snprintf(label, sizeof(label), "%s_%u_thread%s", c->cpu_metric ? "cpu_ns_per_op" :
		 "ns_per_op", c->nthreads, c->nthreads == 1 ? "" : "s");
	table_row(out, cfg->wide, label, "", empty, "");
	for (int s = 0; s < LB_AB_SIDES; s++) {
		const struct lb_summary *m = &c->sum[s];
		const char *const cols[5] = { v[0], v[1], v[2], v[3], v[4] };
		snprintf(label, sizeof(label), "  (%c) %s", s ? 'B' : 'A', cfg->lock[s]->name);
		snprintf(count, sizeof(count), "%zu", m->n);
		snprintf(v[0], sizeof(v[0]), "%.3f", m->min);
		snprintf(v[1], sizeof(v[1]), "%.3f", m->max);
		snprintf(v[2], sizeof(v[2]), "%.3f", m->mean);
		snprintf(v[3], sizeof(v[3]), "%.3f", m->median);
		snprintf(v[4], sizeof(v[4]), "%.4g", m->sd);
		table_row(out, cfg->wide, label, count, cols, "");
	}
	const struct lb_summary *a = &c->sum[LB_AB_A], *b = &c->sum[LB_AB_B];
	const char *const cols[5] = { v[0], v[1], v[2], v[3], v[4] };
	snprintf(v[0], sizeof(v[0]), "%+9.2f%%", pct(b->min, a->min));
	snprintf(v[1], sizeof(v[1]), "%+9.2f%%", pct(b->max, a->max));
	snprintf(v[2], sizeof(v[2]), "%+9.2f%%", pct(b->mean, a->mean));
	snprintf(v[3], sizeof(v[3]), "%+9.2f%%", pct(b->median, a->median));
	snprintf(v[4], sizeof(v[4]), "%+9.2f%%", pct(b->sd, a->sd));
	table_row(out, cfg->wide, "", "", cols, "- is good");
	cell_notes(out, cfg, c);
}

void lb_ab_report_table(FILE *out, const struct lb_ab_config *cfg,
			const struct lb_run_record *rec, const struct lb_ab_results *res)
{
	const struct lb_hostinfo *host = &rec->host;
	const struct lb_ab_cell *cells = res->cells;
	size_t n = res->n;
	double lo = -1, hi = -1;
	char line[2048];
	size_t used;
	for (size_t i = 0; i < n; i++) {
		if (cells[i].c2c_min >= 0 && (lo < 0 || cells[i].c2c_min < lo))
			lo = cells[i].c2c_min;
		hi = cells[i].c2c_max > hi ? cells[i].c2c_max : hi;
	}
	used = (size_t)snprintf(line, sizeof(line), "# lockbench ab: (A) %s vs (B) %s; ABBA blocks "
				"of 4 x %.0f ms slices (2 pairs of adjacent slices each) per cell:",
				cfg->lock[LB_AB_A]->name, cfg->lock[LB_AB_B]->name,
				(double)cfg->loop.duration_ns / 1e6);
	for (size_t i = 0; i < n && used < sizeof(line); i++)
		used += (size_t)snprintf(line + used, sizeof(line) - used, "%s %zu at %u thread%s",
					 i ? "," : "", cells[i].nblocks, cells[i].nthreads,
					 cells[i].nthreads == 1 ? "" : "s");
	if (used < sizeof(line))
		snprintf(line + used, sizeof(line) - used, "; cells interleaved, cheaper ones given "
			 "more blocks; one process, %.1f s", res->elapsed_s);
	lb_wrap(out, "#   ", line);
	used = (size_t)snprintf(line, sizeof(line), "# %s, %d CPUs, load %.2f before",
				host->cpu_model, host->ncpus_online, rec->load_before);
	if (rec->runnable_before >= 0 && used < sizeof(line))
		used += (size_t)snprintf(line + used, sizeof(line) - used, " (%.0f other thread%s "
					 "runnable)", rec->runnable_before,
					 rec->runnable_before == 1 ? "" : "s");
	if (lo >= 0 && used < sizeof(line))
		snprintf(line + used, sizeof(line) - used, "; cache-line round trip %.0f..%.0f ns over "
			 "the run", lo, hi);
	lb_wrap(out, "#   ", line);
	lb_wrapf(out, "#   ", "# value: %s of one slice (ns, lower is better: - is good)",
		 cfg->metric == LB_AB_METRIC_CPU ? "CPU ns/op" : cfg->metric == LB_AB_METRIC_WALL ?
		 "wall ns/op" : "CPU ns/op at 1 thread, wall ns/op above");
	lb_wrapf(out, "#   ", "# ratio B/A: per block, the mean log ratio of its pairs whose two "
		 "slices saw round trips within %.1fx; over the blocks, at 1 thread their 10 %% "
		 "trimmed mean and a moving-block bootstrap interval (neighbours share the host's "
		 "state), above their Hodges-Lehmann estimate and signed-rank interval (independent, "
		 "heavy-tailed blocks); at 1 thread the headline is the lock's own cost (lock+unlock "
		 "less the bare loop), one figure per block", LB_AB_PLACEMENT_RATIO);
	lb_wrapf(out, "#   ", "# verdict: the interval excludes 1, at level %.2g per cell (%.2g over "
		 "%zu cells, the interval printed at %.1f %%); \"could see +-X %%\": the change the "
		 "cell finds 4 times in 5%s", n ? cells[0].alpha : LB_AB_ALPHA, LB_AB_ALPHA, n,
		 100 * (1 - (n ? cells[0].alpha : LB_AB_ALPHA)),
		 cfg->wide ? "" : "; --wide adds MIN and MAX");
	if (rec->interrupted_by)
		fprintf(out, "# interrupted: the blocks finished before the signal\n");
	lb_steal_note(out, "# ", rec->steal_s);
	table_head(out, cfg->wide);
	for (size_t i = 0; i < n; i++)
		print_cell(out, cfg, &cells[i]);
}

/* A ratio's figures, at the cell's level (its alpha). */
static void write_ratio(struct lb_json *j, const struct lb_ab_ratio *r)
{
	lb_json_kv_double(j, "ratio", r->ratio);
	if (isfinite(r->mdc_pct)) {
		lb_json_kv_double(j, "ratio_lo", r->lo);
		lb_json_kv_double(j, "ratio_hi", r->hi);
		lb_json_kv_double(j, "mdc_pct", r->mdc_pct);
	} else {
		lb_json_key(j, "ratio_lo");
		lb_json_null(j);
		lb_json_key(j, "ratio_hi");
		lb_json_null(j);
		lb_json_key(j, "mdc_pct");
		lb_json_null(j);
	}
	lb_json_kv_double(j, "confidence", 1 - r->alpha);
	lb_json_kv_uint(j, "blocks", r->blocks);
	lb_json_kv_uint(j, "resample_blocks", r->block_len);
	lb_json_kv_string(j, "interval", r->rank_interval ? "signed-rank" : "block-bootstrap-t");
	if (isfinite(r->df))
		lb_json_kv_double(j, "df", r->df);
	else {
		lb_json_key(j, "df");
		lb_json_null(j);
	}
	if (r->rank_interval)
		lb_json_kv_double(j, "ar1_widening", r->widen);
	lb_json_kv_double(j, "lag1_correlation", r->rho);
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
	lb_json_key(j, c->cpu_metric ? "cpu_ns_per_op" : "ns_per_op");
	lb_json_object_begin(j);
	lb_schema_summary_fields(j, &c->sum[s]);
	lb_json_object_end(j);
	lb_json_object_end(j);
	lb_json_kv_uint(j, "blocks", c->nblocks);
	if (isfinite(c->lock_cost[s]))
		lb_json_kv_double(j, "lock_ns_per_op", c->lock_cost[s]);
	if (s == LB_AB_B) {
		/* The paired analysis belongs to the pair: kept on B, against A. */
		lb_json_key(j, "paired");
		lb_json_object_begin(j);
		lb_json_kv_string(j, "against", cfg->lock[LB_AB_A]->name);
		lb_json_kv_string(j, "metric", c->cpu_metric ? "cpu_ns_per_op" : "ns_per_op");
		lb_json_kv_string(j, "estimator", c->ratio.rank_interval ?
				  "Hodges-Lehmann estimate of per-block log(B/A), signed-rank "
				  "interval over the blocks" : "10% trimmed mean of per-block "
				  "log(B/A), moving-block bootstrap interval");
		write_ratio(j, &c->ratio);
		lb_json_kv_uint(j, "pairs_kept", c->ratio.kept);
		lb_json_kv_uint(j, "pairs_left_out", c->npairs - c->ratio.kept);
		lb_json_kv_double(j, "signrank_rank_sum_w_plus", c->ratio.rank.w_plus);
		lb_json_kv_uint(j, "signrank_pairs", c->ratio.rank.n);
		lb_json_kv_double(j, "alpha", c->alpha);
		if (c->own_headline) {
			lb_json_key(j, "own_cost");
			lb_json_object_begin(j);
			lb_json_kv_string(j, "metric", "lock+unlock loop less the bare loop, CPU ns/op");
			write_ratio(j, &c->own_ratio);
			lb_json_object_end(j);
		}
		lb_json_kv_string(j, "verdict_on", c->own_headline ? "own_cost" : "ratio");
		lb_json_kv_string(j, "verdict", c->withheld ? "withheld" : c->verdict > 0 ? "worse" :
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
		lb_json_kv_bool(j, "kept", c->keep[k]);
		/* 1 thread: the side's own cost in this pair's block (the headline's data). */
		if (c->nthreads == 1 && isfinite(c->own[s][k / 2]))
			lb_json_kv_double(j, "block_own_ns_per_op", c->own[s][k / 2]);
		if (c->c2c_side[s][k] >= 0)
			lb_json_kv_double(j, "c2c_slice_ns", c->c2c_side[s][k]);
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

void lb_ab_report_json(FILE *out, const struct lb_ab_config *cfg,
		       const struct lb_run_record *rec, const struct lb_ab_results *res)
{
	const struct lb_hostinfo *host = &rec->host;
	const struct lb_ab_cell *cells = res->cells;
	size_t n = res->n;
	struct lb_json j;
	lb_json_init(&j, out);
	lb_json_object_begin(&j);
	lb_schema_write_head(&j, &lb_schema_ab, host);
	lb_json_kv_bool(&j, "interrupted", rec->interrupted_by != 0);
	lb_json_key(&j, "config");
	lb_json_object_begin(&j);
	lb_json_kv_string(&j, "command", rec->command);
	lb_json_kv_string(&j, "lock_a", cfg->lock[LB_AB_A]->name);
	lb_json_kv_string(&j, "lock_b", cfg->lock[LB_AB_B]->name);
	lb_json_kv_uint_array(&j, "threads", cfg->threads, cfg->nthread_counts);
	lb_json_kv_double(&j, "slice_s", (double)cfg->loop.duration_ns / 1e9);
	lb_json_kv_double(&j, "budget_s", (double)cfg->budget_ns / 1e9);
	/* What was asked: --blocks, or null (as the budget allows); each cell's
	 * count is a fact of the run (results[].blocks, elapsed below). */
	if (cfg->blocks) {
		lb_json_kv_uint(&j, "blocks", cfg->blocks);
		lb_json_kv_uint(&j, "pairs", 2 * (uint64_t)cfg->blocks);
	} else {
		lb_json_key(&j, "blocks");
		lb_json_null(&j);
		lb_json_key(&j, "pairs");
		lb_json_null(&j);
	}
	lb_json_kv_double(&j, "alpha", LB_AB_ALPHA);
	lb_json_kv_string(&j, "order", "ABBA,BAAB alternating; cells interleaved per block");
	lb_json_kv_string(&j, "metric", cfg->metric == LB_AB_METRIC_CPU ? "cpu_ns_per_op" :
			  cfg->metric == LB_AB_METRIC_WALL ? "ns_per_op" :
			  "auto: cpu_ns_per_op at 1 thread, ns_per_op above");
	lb_json_kv_double(&j, "placement_ratio", LB_AB_PLACEMENT_RATIO);
	lb_json_kv_bool(&j, "warm_up_block", true);
	lb_json_kv_uint(&j, "cs_iters", cfg->loop.cs.iters);
	lb_json_kv_uint(&j, "par_iters", cfg->loop.par.iters);
	lb_json_kv_uint(&j, "cs_lines", cfg->loop.cs_lines);
	lb_json_kv_double(&j, "load_before", rec->load_before);
	lb_json_kv_double(&j, "runnable_before", rec->runnable_before);
	lb_steal_json(&j, rec->steal_s);
	lb_json_kv_double(&j, "elapsed_s", res->elapsed_s);
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
