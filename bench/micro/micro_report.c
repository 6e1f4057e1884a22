/* SPDX-License-Identifier: MIT */
/*
 * micro_report.c - summaries across repeats, and the three output forms:
 * the aligned table on stdout, JSON and CSV.
 */
#include "micro.h"
#include "workload.h"
#include "lb_c2c.h"
#include "lb_hostinfo.h"
#include "lb_json.h"
#include "lb_lock_events.h"
#include "lb_schema.h"
#include "lb_steal.h"
#include "lb_time.h"
#include "lb_work.h"
#include "lb_wrap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * The bench workload's metric table: one entry per enum lb_metric, in enum
 * order, with the unit and which direction is better (lib/lb_schema.h).
 */
static const struct lb_metric_desc bench_metrics[LB_M_COUNT] = {
	[LB_M_OPS_PER_SEC] = { "ops_per_sec", "ops/s", LB_BETTER_HIGHER, "throughput" },
	[LB_M_NS_PER_OP] = { "ns_per_op", "ns", LB_BETTER_LOWER, "wall time per op" },
	[LB_M_CYCLES_PER_OP] = { "cycles_per_op", "cycles", LB_BETTER_LOWER, "cycles per op" },
	[LB_M_CPU_NS_PER_OP] = { "cpu_ns_per_op", "ns", LB_BETTER_LOWER, "CPU time per op" },
	[LB_M_OVERHEAD_NS] = { "overhead_ns", "ns", LB_BETTER_LOWER, "lock overhead per acquire" },
	[LB_M_FAIRNESS_COV] = { "fairness_cov", "", LB_BETTER_LOWER, "per-thread ops CoV" },
	[LB_M_MIN_MAX_RATIO] = { "min_max_ratio", "", LB_BETTER_HIGHER, "min/max thread ops" },
	[LB_M_OVERLAP] = { "overlap", "", LB_BETTER_NONE, "threads running at once" },
	[LB_M_LAT_P50] = { "lat_p50_ns", "ns", LB_BETTER_LOWER, "acquire latency p50" },
	[LB_M_LAT_P99] = { "lat_p99_ns", "ns", LB_BETTER_LOWER, "acquire latency p99" },
	[LB_M_LAT_P999] = { "lat_p999_ns", "ns", LB_BETTER_LOWER, "acquire latency p99.9" },
	[LB_M_LAT_MAX] = { "lat_max_ns", "ns", LB_BETTER_LOWER, "acquire latency max" },
	[LB_M_LAT_P99_WORST_THREAD] = { "lat_p99_worst_thread_ns", "ns", LB_BETTER_LOWER,
					"worst thread's acquire p99" },
	[LB_M_LOCK_NS_PER_OP] = { "lock_ns_per_op", "ns", LB_BETTER_LOWER,
				  "lock's own cost per op (ns/op less none's)" },
	[LB_M_READ_OPS_PER_SEC] = { "read_ops_per_sec", "ops/s", LB_BETTER_HIGHER, "read throughput" },
	[LB_M_WRITE_OPS_PER_SEC] = { "write_ops_per_sec", "ops/s", LB_BETTER_HIGHER, "write throughput" },
	[LB_M_READ_LAT_P50] = { "read_lat_p50_ns", "ns", LB_BETTER_LOWER, "read acquire p50" },
	[LB_M_READ_LAT_P99] = { "read_lat_p99_ns", "ns", LB_BETTER_LOWER, "read acquire p99" },
	[LB_M_READ_LAT_P999] = { "read_lat_p999_ns", "ns", LB_BETTER_LOWER, "read acquire p99.9" },
	[LB_M_READ_LAT_MAX] = { "read_lat_max_ns", "ns", LB_BETTER_LOWER, "read acquire max" },
	[LB_M_WRITE_LAT_P50] = { "write_lat_p50_ns", "ns", LB_BETTER_LOWER, "write acquire p50" },
	[LB_M_WRITE_LAT_P99] = { "write_lat_p99_ns", "ns", LB_BETTER_LOWER, "write acquire p99" },
	[LB_M_WRITE_LAT_P999] = { "write_lat_p999_ns", "ns", LB_BETTER_LOWER, "write acquire p99.9" },
	[LB_M_WRITE_LAT_MAX] = { "write_lat_max_ns", "ns", LB_BETTER_LOWER, "write acquire max" },
};

static const char *const bench_params[] = { "lock", "threads", "read_pct", "cs_ns", "par_ns",
					    "cs_lines", "pin", NULL };

static const char *const bench_plot_curves[] = { "ops_per_sec", NULL };
static const struct lb_plot_quantile bench_plot_quantiles[] = {
	{ "lat_p50_ns", 0.5 }, { "lat_p99_ns", 0.99 }, { "lat_p999_ns", 0.999 }, { "lat_max_ns", 1 },
};
/* Scaling against threads, the latency distribution, per-thread fairness. */
static const struct lb_plot_hints bench_plot = {
	.x_param = "threads",
	.curves = bench_plot_curves,
	.quantiles = bench_plot_quantiles,
	.nquantiles = sizeof(bench_plot_quantiles) / sizeof(bench_plot_quantiles[0]),
	.samples_key = "write_side",
	.per_thread_key = "per_thread",
	.per_thread_ops = "ops",
};

static const char *const bench_gbench_name_params[] = { "lock", "threads", "read_pct", NULL };
/* One Google Benchmark entry per (lock, threads[, read_pct]); micro_gbench.c
 * writes the same from the cells in memory. */
static const struct lb_gbench_hints bench_gbench = {
	.name_params = bench_gbench_name_params,
	.real_time_ns = "ns_per_op",
	.cpu_time_ns = "cpu_ns_per_op",
	.items_per_second = "ops_per_sec",
};

const struct lb_workload_schema lb_schema_bench = {
	LB_SCHEMA_TABLES("lockbench-bench", 1, bench_params, bench_metrics),
	.plot = &bench_plot,
	.gbench = &bench_gbench,
};

const char *lb_metric_name(enum lb_metric m)
{
	return bench_metrics[m].key;
}

double lb_metric_value(const struct lb_run_result *r, enum lb_metric m)
{
	const struct lb_side_result *w = &r->side[LB_SIDE_WRITE], *rd = &r->side[LB_SIDE_READ];
	/* In the exclusive workload every op is a "write": the overall latency
	 * figures are those of the exclusive side. */
	const struct lb_side_result *all = w->lat_samples || !rd->lat_samples ? w : rd;
	/* An exclusive run has no read side: its figures are not measured (null). */
	if (r->exclusive && (m == LB_M_READ_OPS_PER_SEC || m == LB_M_READ_LAT_P50 ||
			     m == LB_M_READ_LAT_P99 || m == LB_M_READ_LAT_P999 ||
			     m == LB_M_READ_LAT_MAX))
		return NAN;
	switch (m) {
	case LB_M_OPS_PER_SEC: return r->ops_per_sec;
	case LB_M_NS_PER_OP: return r->ns_per_op;
	case LB_M_CYCLES_PER_OP: return r->cycles_per_op;
	case LB_M_CPU_NS_PER_OP: return r->cpu_ns_per_op;
	case LB_M_OVERHEAD_NS: return r->overhead_ns;
	case LB_M_FAIRNESS_COV: return r->fairness_cov;
	case LB_M_MIN_MAX_RATIO: return r->min_max_ratio;
	case LB_M_OVERLAP: return r->overlap;
	case LB_M_LAT_P50: return all->lat_p50_ns;
	case LB_M_LAT_P99: return all->lat_p99_ns;
	case LB_M_LAT_P999: return all->lat_p999_ns;
	case LB_M_LAT_MAX: return all->lat_max_ns;
	case LB_M_READ_OPS_PER_SEC: return rd->ops_per_sec;
	case LB_M_WRITE_OPS_PER_SEC: return w->ops_per_sec;
	case LB_M_READ_LAT_P50: return rd->lat_p50_ns;
	case LB_M_READ_LAT_P99: return rd->lat_p99_ns;
	case LB_M_READ_LAT_P999: return rd->lat_p999_ns;
	case LB_M_READ_LAT_MAX: return rd->lat_max_ns;
	case LB_M_WRITE_LAT_P50: return w->lat_p50_ns;
	case LB_M_WRITE_LAT_P99: return w->lat_p99_ns;
	case LB_M_WRITE_LAT_P999: return w->lat_p999_ns;
	case LB_M_WRITE_LAT_MAX: return w->lat_max_ns;
	case LB_M_LAT_P99_WORST_THREAD: return r->lat_p99_worst_thread_ns;
	case LB_M_LOCK_NS_PER_OP: return r->lock_ns_per_op;
	case LB_M_COUNT: break;
	}
	return NAN;
}

void lb_cells_summarize(struct lb_cell *cells, size_t ncells)
{
	for (size_t c = 0; c < ncells; c++) {
		double v[LB_MICRO_MAX_REPEAT];
		struct lb_cell *cell = &cells[c];
		for (int m = 0; m < LB_M_COUNT; m++) {
			for (unsigned int r = 0; r < cell->nruns; r++)
				v[r] = lb_metric_value(&cell->runs[r], (enum lb_metric)m);
			lb_summarize(v, cell->nruns, &cell->summary[m]);
		}
	}
}

/* The figure the table shows: the mean, or the median (--repeat with few
 * runs, as the default comparison uses, where one outlier moves a mean). */
static double fig(const struct lb_micro_config *cfg, const struct lb_cell *c, enum lb_metric m)
{
	return cfg->table_median ? c->summary[m].median : c->summary[m].mean;
}

/* Spread of ops/s across a cell's runs above which the default comparison
 * says the cell needs the longer command. */
#define UNSTEADY_SD_PCT 15.0

static double sd_pct(const struct lb_cell *c, enum lb_metric m)
{
	return c->summary[m].mean != 0 ? 100.0 * c->summary[m].sd / fabs(c->summary[m].mean) : 0;
}

/* The ±sd% column: "-" for a cell of one run (no spread to speak of). */
static const char *sd_text(const struct lb_cell *c, char *buf, size_t size)
{
	if (c->nruns < 2)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.1f", sd_pct(c, LB_M_OPS_PER_SEC));
	return buf;
}

/* The units and the better direction of the table's columns (wrapped). */
static void print_units(FILE *out, const struct lb_micro_config *cfg)
{
	if (cfg->loop.read_pct >= 0 && !cfg->wide)
		lb_wrap(out, "#   ", "# units: ops/s, rd_ops/s, wr_ops/s higher is better; rd_p99, wr_p99 in "
			"ns, lower is better; --wide adds cov, min/max and the other latencies");
	else if (cfg->loop.read_pct >= 0)
		lb_wrap(out, "#   ", "# units: *ops/s higher is better; *_p50/_p99/_max ns, lower is better; "
			"cov, min/max: fairness (cov 0, min/max 1 is fair)");
	else if (cfg->table_brief)
		lb_wrap(out, "#   ", "# units: ops/s higher is better; ns/op, cpu_ns, lat_*, c2c_ns in ns, "
			"lower is better; min/max: slowest thread / fastest (1 is fair)");
	else if (!cfg->wide)
		lb_wrap(out, "#   ", "# units: ops/s higher is better; ns/op, cpu_ns, lat_* in ns, lower is "
			"better; min/max: slowest thread / fastest (1 is fair); --wide adds cyc/op, "
			"ovh_ns, cov, ovlap, p99.9");
	else
		lb_wrap(out, "#   ", "# units: ops/s higher is better; ns/op, cpu_ns, ovh_ns, lat_*, p99.9 in "
			"ns, cyc/op in cycles, lower is better; cov, min/max: fairness (0, 1 is fair)");
}

/* A run's cache-line round trip: the mean of the probes before and after
 * it that finished; < 0 when neither did (lib/lb_c2c.h). */
static double run_c2c(const struct lb_run_result *r)
{
	if (r->c2c_before_ns >= 0 && r->c2c_after_ns >= 0)
		return (r->c2c_before_ns + r->c2c_after_ns) / 2;
	return r->c2c_before_ns >= 0 ? r->c2c_before_ns : r->c2c_after_ns;
}

/* The median of a cell's run round trips; < 0 when none was measured. */
static double cell_c2c(const struct lb_cell *c)
{
	double v[LB_MICRO_MAX_REPEAT];
	unsigned int n = 0;
	for (unsigned int r = 0; r < c->nruns && n < LB_MICRO_MAX_REPEAT; r++) {
		double ns = run_c2c(&c->runs[r]);
		if (ns >= 0)
			v[n++] = ns;
	}
	if (n == 0)
		return -1;
	struct lb_summary s;
	lb_summarize(v, n, &s);
	return s.median;
}

/* A round trip that moved by more than this factor during one command means
 * the host moved the vCPUs (lib/lb_c2c.h; doc/lockbench.md gives the two
 * levels seen on a guest). */
#define C2C_MOVED_RATIO 2.0

/* The smallest and largest probe around the runs of cells[0..ncells); both
 * < 0 when no probe finished. */
static void probe_range(const struct lb_cell *cells, size_t ncells, double *lo, double *hi)
{
	*lo = *hi = -1;
	for (size_t i = 0; i < ncells; i++)
		for (unsigned int r = 0; r < cells[i].nruns; r++) {
			const struct lb_run_result *run = &cells[i].runs[r];
			const double probe[2] = { run->c2c_before_ns, run->c2c_after_ns };
			for (int k = 0; k < 2; k++) {
				if (probe[k] < 0)
					continue;
				*lo = *lo < 0 || probe[k] < *lo ? probe[k] : *lo;
				*hi = probe[k] > *hi ? probe[k] : *hi;
			}
		}
}

/* Whether the probes around a cell's runs moved by more than
 * C2C_MOVED_RATIO: its runs then mix two placements of the CPUs. */
static bool cell_c2c_moved(const struct lb_cell *c)
{
	double lo, hi;
	probe_range(c, 1, &lo, &hi);
	return lo > 0 && hi > C2C_MOVED_RATIO * lo;
}

/* "# cache-line round trip" line, and a warning when it moved. */
static void print_c2c(FILE *out, const struct lb_micro_config *cfg, const struct lb_cell *cells,
		      size_t ncells)
{
	double lo, hi;
	probe_range(cells, ncells, &lo, &hi);
	if (cfg->loop.c2c_cpu[0] < 0)
		return; /* one CPU: nothing to measure */
	if (lo < 0) {
		lb_wrapf(out, "#   ", "# cache-line round trip CPU%d<->CPU%d: not measured (the two "
			 "probe threads never ran at once within %u ms)", cfg->loop.c2c_cpu[0],
			 cfg->loop.c2c_cpu[1], LB_C2C_BUDGET_NS / 1000000u);
		return;
	}
	lb_wrapf(out, "#   ", "# cache-line round trip CPU%d<->CPU%d: %.0f-%.0f ns (probes before "
		 "and after each run)", cfg->loop.c2c_cpu[0], cfg->loop.c2c_cpu[1], lo, hi);
	if (hi > C2C_MOVED_RATIO * lo)
		lb_wrapf(out, "#   ", "# WARNING: the round trip changed %.1fx during this command: "
			 "the host moved the CPUs (vCPUs) between near and distant cores, and "
			 "contended figures follow it; compare cells at similar round trips%s", hi / lo,
			 cfg->table_brief ? " (column c2c_ns)" : " (JSON: c2c_before_ns, c2c_after_ns)");
}

static void print_header(FILE *out, const struct lb_micro_config *cfg,
			 const struct lb_hostinfo *h)
{
	lb_wrapf(out, "#   ", "# lockbench %s (%s, %s) on %s: %d CPUs, %d NUMA node%s, kernel %s",
		 h->version, h->git_rev, h->build_type, h->cpu_model, h->ncpus_online, h->numa_nodes,
		 h->numa_nodes == 1 ? "" : "s", h->kernel);
	lb_wrapf(out, "#   ",
		 "# duration %.3fs  cs %llu it (%.0f ns)  par %llu it (%.0f ns)  cs-lines %u  pin %s"
		 "  repeat %u  latency 1/%u ops  clock %s %.3f cycles/ns",
		 (double)cfg->loop.duration_ns / LB_NS_PER_S, (unsigned long long)cfg->loop.cs.iters,
		 (double)cfg->loop.cs.iters * lb_work_ns_per_iter(),
		 (unsigned long long)cfg->loop.par.iters,
		 (double)cfg->loop.par.iters * lb_work_ns_per_iter(), cfg->loop.cs_lines,
		 cfg->loop.pin.text, cfg->repeat, 1u << cfg->loop.sample_shift, lb_cycles_source(),
		 lb_cycles_per_ns());
}

/* For locks with the kernel's lock-event names: the scope, and a note per
 * event that reads 0 here or differs from the kernel's (once per lock). */
static void print_event_notes(FILE *out, const char *lock, const struct lb_run_result *r)
{
	const char *scope = lb_lock_events_scope(lock);
	if (!scope || r->ncounters == 0)
		return;
	lb_wrapf(out, "#   ", "# %s counters: %s", lock, scope);
	for (size_t i = 0; i < r->ncounters; i++) {
		const char *note = lb_lock_event_note(lock, r->counters[i].name);
		if (note)
			lb_wrapf(out, "#     ", "#   %s: %s", r->counters[i].name, note);
	}
}

static void print_counters(FILE *out, const struct lb_micro_config *cfg, const struct lb_cell *c)
{
	char line[4096];
	size_t used;
	uint64_t ops = 0;
	const struct lb_run_result *last = &c->runs[c->nruns - 1];
	if (!c->ops->counters) {
		fprintf(out, "    %-14s (no counters: this lock does not explain itself)\n", "counters");
		return;
	}
	ops = last->total_ops ? last->total_ops : 1;
	used = (size_t)snprintf(line, sizeof(line), "    counters (last run, per 1000 ops):");
	for (size_t i = 0; i < last->ncounters && used < sizeof(line); i++) {
		const char *name = last->counters[i].name;
		unsigned long long v = (unsigned long long)last->counters[i].value;
		if (lb_lock_event_is_average(name))
			used += (size_t)snprintf(line + used, sizeof(line) - used, " %s=%llu ns (avg)",
						 name, v);
		else
			used += (size_t)snprintf(line + used, sizeof(line) - used, " %s=%llu (%.1f)",
						 name, v, 1000.0 * (double)v / (double)ops);
	}
	if (last->ncounters == 0 && used < sizeof(line))
		snprintf(line + used, sizeof(line) - used,
			 " none recorded (built with -Dlock_counters=false?)");
	if (cfg->wide)
		fprintf(out, "%s\n", line);
	else
		lb_wrap(out, "    ", line);
}

/* The note after a cell's row ("" when there is none). */
static void flags_note(const struct lb_cell *c, char *buf, size_t size)
{
	uint64_t lost = 0, torn = 0, failed = 0;
	size_t used = 0;
	buf[0] = '\0';
	for (unsigned int r = 0; r < c->nruns; r++) {
		lost += c->runs[r].lost_updates;
		torn += c->runs[r].torn_reads;
		failed += c->runs[r].lock_failures;
	}
	/* Only a fallible lock (rqspinlock) can show this: others print as before. */
	if (failed)
		used = (size_t)snprintf(buf, size, "  (%llu failed acquisitions: timeout or deadlock "
					"reported)", (unsigned long long)failed);
	/* Expected of `none` and `busted`; a real lock showing it is broken. */
	bool expected = c->ops->flags & (LB_LOCK_F_NOLOCK | LB_LOCK_F_BUSTED);
	if ((lost || torn) && used < size)
		snprintf(buf + used, size - used, "  %s %s%s%s%s",
			 expected ? "(no exclusion:" : "!! BROKEN:", lost ? "lost updates" : "",
			 lost && torn ? ", " : "", torn ? "torn reads" : "", expected ? ")" : "");
}

/*
 * The table's columns.  Each mode (exclusive, read/write, the default
 * comparison's brief one) has its own list; a WIDE column shows only with
 * --wide (the default table fits LB_WIDTH columns), a TAIL one only when
 * cfg->table_tail.  Spelled as the table always was: --wide prints it
 * unchanged.
 */
enum col_kind { COL_FIG, COL_MAX, COL_SD, COL_OVH, COL_C2C, COL_RDPCT, COL_THR };
#define COL_WIDE 1u
#define COL_TAIL 2u
struct col {
	const char *head;
	int width, prec;
	enum col_kind kind;
	enum lb_metric m;
	unsigned int flags;
};

#define COLF(h, w, p, m) { h, w, p, COL_FIG, m, 0 }
#define COLW(h, w, p, m) { h, w, p, COL_FIG, m, COL_WIDE }
static const struct col excl_cols[] = {
	{ "thr", 4, 0, COL_THR, 0, 0 }, COLF("ops/s", 13, 0, LB_M_OPS_PER_SEC),
	{ "±sd%", 6, 0, COL_SD, 0, 0 }, COLF("ns/op", 9, 2, LB_M_NS_PER_OP),
	COLW("cyc/op", 8, 1, LB_M_CYCLES_PER_OP), COLF("cpu_ns", 8, 2, LB_M_CPU_NS_PER_OP),
	{ "ovh_ns", 8, 0, COL_OVH, 0, COL_WIDE }, COLW("cov", 6, 3, LB_M_FAIRNESS_COV),
	COLF("min/max", 7, 3, LB_M_MIN_MAX_RATIO), COLW("ovlap", 6, 3, LB_M_OVERLAP),
	COLF("lat_p50", 8, 0, LB_M_LAT_P50), COLF("lat_p99", 8, 0, LB_M_LAT_P99),
	{ "p99.9", 8, 0, COL_FIG, LB_M_LAT_P999, COL_WIDE | COL_TAIL },
	{ "lat_max", 9, 0, COL_MAX, LB_M_LAT_MAX, COL_TAIL },
	{ NULL, 0, 0, 0, 0, 0 },
};
static const struct col rw_cols[] = {
	{ "thr", 4, 0, COL_THR, 0, 0 }, { "rd%", 4, 0, COL_RDPCT, 0, 0 },
	COLF("ops/s", 13, 0, LB_M_OPS_PER_SEC), { "±sd%", 6, 0, COL_SD, 0, 0 },
	COLF("rd_ops/s", 12, 0, LB_M_READ_OPS_PER_SEC), COLF("wr_ops/s", 12, 0, LB_M_WRITE_OPS_PER_SEC),
	COLW("cov", 6, 3, LB_M_FAIRNESS_COV), COLW("min/max", 7, 3, LB_M_MIN_MAX_RATIO),
	COLW("rd_p50", 8, 0, LB_M_READ_LAT_P50), COLF("rd_p99", 8, 0, LB_M_READ_LAT_P99),
	{ "rd_max", 9, 0, COL_MAX, LB_M_READ_LAT_MAX, COL_WIDE },
	COLW("wr_p50", 8, 0, LB_M_WRITE_LAT_P50), COLF("wr_p99", 8, 0, LB_M_WRITE_LAT_P99),
	COLW("wr_p99.9", 8, 0, LB_M_WRITE_LAT_P999),
	{ "wr_max", 9, 0, COL_MAX, LB_M_WRITE_LAT_MAX, COL_WIDE },
	{ NULL, 0, 0, 0, 0, 0 },
};
static const struct col brief_cols[] = {
	{ "thr", 4, 0, COL_THR, 0, 0 }, COLF("ops/s", 13, 0, LB_M_OPS_PER_SEC),
	{ "±sd%", 6, 0, COL_SD, 0, 0 }, COLF("ns/op", 9, 2, LB_M_NS_PER_OP),
	COLF("cpu_ns", 8, 2, LB_M_CPU_NS_PER_OP), COLF("min/max", 7, 3, LB_M_MIN_MAX_RATIO),
	COLF("lat_p50", 8, 0, LB_M_LAT_P50), COLF("lat_p99", 8, 0, LB_M_LAT_P99),
	{ "c2c_ns", 7, 0, COL_C2C, 0, 0 },
	{ NULL, 0, 0, 0, 0, 0 },
};
#undef COLF
#undef COLW

static const struct col *table_cols(const struct lb_micro_config *cfg)
{
	return cfg->loop.read_pct >= 0 ? rw_cols : cfg->table_brief ? brief_cols : excl_cols;
}

static bool col_shown(const struct lb_micro_config *cfg, const struct col *k)
{
	return (cfg->wide || !(k->flags & COL_WIDE)) && (cfg->table_tail || !(k->flags & COL_TAIL));
}

/* What the cell's row shows and says beside it, across the table. */
struct row_marks {
	bool any_clamped, unsteady, moved;
};

/* One cell's figure in column k. */
static void col_text(const struct lb_micro_config *cfg, const struct lb_cell *c,
		     const struct col *k, struct row_marks *mk, char *buf, size_t size)
{
	bool clamped = false, mixed;
	double c2c_ns;
	switch (k->kind) {
	case COL_THR: snprintf(buf, size, "%u", c->nthreads); break;
	case COL_RDPCT: snprintf(buf, size, "%d", cfg->loop.read_pct); break;
	case COL_SD: sd_text(c, buf, size); break;
	case COL_MAX: snprintf(buf, size, "%.*f", k->prec, c->summary[k->m].max); break;
	case COL_FIG: snprintf(buf, size, "%.*f", k->prec, fig(cfg, c, k->m)); break;
	case COL_OVH:
		/* A '*' marks a mean that includes runs clamped at 0 (see the footnote). */
		for (unsigned int r = 0; r < c->nruns; r++)
			clamped |= c->runs[r].overhead_clamped;
		mk->any_clamped |= clamped;
		snprintf(buf, size, "%.2f%s", fig(cfg, c, LB_M_OVERHEAD_NS), clamped ? "*" : "");
		break;
	case COL_C2C:
		/* '~' on contended cells only: one thread moves no line. */
		mixed = c->nthreads > 1 && cell_c2c_moved(c);
		c2c_ns = cell_c2c(c);
		snprintf(buf, size, "-");
		if (c2c_ns >= 0)
			snprintf(buf, size, "%.0f%s", c2c_ns, mixed ? "~" : "");
		mk->moved |= mixed;
		break;
	}
}

static void print_rows(FILE *out, const struct lb_micro_config *cfg, const struct lb_cell *cells,
		       size_t ncells, struct row_marks *mk)
{
	const struct col *cols = table_cols(cfg);
	char line[1024];
	size_t used = (size_t)snprintf(line, sizeof(line), "%-18s", "lock");
	for (const struct col *k = cols; k->head; k++)
		if (col_shown(cfg, k) && used < sizeof(line))
			used += (size_t)snprintf(line + used, sizeof(line) - used, " %*s", k->width,
						 k->head);
	fprintf(out, "%s\n", line);
	for (size_t i = 0; i < ncells; i++) {
		const struct lb_cell *c = &cells[i];
		char v[64];
		used = (size_t)snprintf(line, sizeof(line), "%-18s", c->ops->name);
		mk->unsteady |= sd_pct(c, LB_M_OPS_PER_SEC) > UNSTEADY_SD_PCT;
		for (const struct col *k = cols; k->head; k++) {
			if (!col_shown(cfg, k) || used >= sizeof(line))
				continue;
			col_text(cfg, c, k, mk, v, sizeof(v));
			used += (size_t)snprintf(line + used, sizeof(line) - used, " %*s", k->width, v);
		}
		if (used < sizeof(line))
			flags_note(c, line + used, sizeof(line) - used);
		if (cfg->wide)
			fprintf(out, "%s\n", line);
		else
			lb_wrap(out, "    ", line);
		if (cfg->explain)
			print_counters(out, cfg, c);
	}
}

/* The lines under the table: each lock's description, then the footnotes. */
static void print_footer(FILE *out, const struct lb_micro_config *cfg,
			 const struct lb_run_record *rec, const struct lb_cell *cells, size_t ncells,
			 const struct row_marks *mk)
{
	/* How each lock ran here (once per lock, from its first run). */
	for (size_t i = 0; i < ncells; i++) {
		const struct lb_cell *c = &cells[i];
		bool first = true;
		for (size_t k = 0; k < i; k++)
			first &= cells[k].ops != c->ops;
		if (first && c->runs[0].describe[0])
			lb_wrapf(out, "#   ", "# %s: %s", c->ops->name, c->runs[0].describe);
		if (first && cfg->explain && c->nruns)
			print_event_notes(out, c->ops->name, &c->runs[c->nruns - 1]);
	}
	if (mk->moved)
		lb_wrapf(out, "#   ", "# c2c_ns ~: the round trip moved more than %.0fx around that "
			 "cell's runs, so its contended figures (latency most) mix two placements of "
			 "the CPUs", C2C_MOVED_RATIO);
	if (mk->unsteady && cfg->table_brief && cfg->repeat > 1)
		lb_wrapf(out, "#   ", "# a ±sd%% above %.0f: that cell's runs disagree (scheduling on "
			 "this machine); rerun it with --duration 1s --repeat 5", UNSTEADY_SD_PCT);
	if (mk->any_clamped && !cfg->table_brief)
		lb_wrap(out, "#   ", "# ovh_ns *: below timer/calibration resolution: CPU time per op "
			"came out below the calibrated --cs/--par work, so the overhead is shown as 0");
	if (cfg->repeat > 1 && cfg->table_median)
		lb_wrapf(out, "#   ", "# figures are medians over %u runs; ±sd%% is the sample "
			 "standard deviation of ops/s%s", cfg->repeat,
			 cfg->table_tail ? "; lat_max is the largest seen" : "");
	else if (cfg->repeat > 1 && rec->interrupted_by)
		lb_wrapf(out, "#   ", "# figures are means over each cell's finished runs (of %u); "
			 "±sd%% is the sample standard deviation of ops/s; lat_max is the largest seen",
			 cfg->repeat);
	else if (cfg->repeat > 1)
		lb_wrapf(out, "#   ", "# figures are means over %u runs; ±sd%% is the sample standard "
			 "deviation of ops/s; lat_max is the largest seen", cfg->repeat);
}

void lb_report_table(FILE *out, const struct lb_micro_config *cfg,
		     const struct lb_run_record *rec,
		     const struct lb_hostinfo *host, const struct lb_cell *cells, size_t ncells)
{
	struct row_marks mk = { false, false, false };
	print_header(out, cfg, host);
	if (cfg->table_note)
		lb_wrap(out, "#   ", cfg->table_note);
	/* Busy CPUs before we started: half a CPU's worth of other work already
	 * moves contended figures by large factors between runs. */
	if (rec->load_before >= 0.5 * host->ncpus_online && host->ncpus_online > 0)
		lb_wrapf(out, "#   ", "# WARNING: load average %.1f on %d CPUs before the run: other "
			 "work shares these CPUs, so figures (contended ones most) vary between runs",
			 rec->load_before, host->ncpus_online);
	lb_steal_note(out, "# ", rec->steal_s);
	print_c2c(out, cfg, cells, ncells);
	if (rec->interrupted_by) {
		unsigned int runs = 0;
		for (size_t i = 0; i < ncells; i++)
			runs += cells[i].nruns;
		lb_wrapf(out, "#   ", "# INTERRUPTED by SIG%s: %u of %zu runs finished; the figures "
			 "cover those only", sigabbrev_np(rec->interrupted_by), runs,
			 (size_t)cfg->nlocks * cfg->nthread_counts * cfg->repeat);
	}
	print_units(out, cfg);
	print_rows(out, cfg, cells, ncells, &mk);
	print_footer(out, cfg, rec, cells, ncells, &mk);
}

static void json_summary(struct lb_json *j, const struct lb_summary *s)
{
	lb_json_object_begin(j);
	lb_schema_summary_fields(j, s);
	lb_json_object_end(j);
}

static void json_side(struct lb_json *j, const char *key, const struct lb_side_result *s)
{
	lb_json_key(j, key);
	lb_json_object_begin(j);
	lb_json_kv_uint(j, "ops", s->ops);
	lb_json_kv_double(j, "ops_per_sec", s->ops_per_sec);
	lb_json_kv_uint(j, "latency_samples", s->lat_samples);
	lb_json_kv_double(j, "lat_p50_ns", s->lat_p50_ns);
	lb_json_kv_double(j, "lat_p99_ns", s->lat_p99_ns);
	lb_json_kv_double(j, "lat_p999_ns", s->lat_p999_ns);
	lb_json_kv_double(j, "lat_max_ns", s->lat_max_ns);
	lb_json_object_end(j);
}

static void json_run(struct lb_json *j, const char *lock, const struct lb_run_result *r)
{
	lb_json_object_begin(j);
	lb_json_kv_uint(j, "repeat_index", r->repeat_index);
	lb_json_kv_uint(j, "total_ops", r->total_ops);
	lb_json_kv_uint(j, "elapsed_ns", r->elapsed_ns);
	for (int m = 0; m < LB_M_COUNT; m++)
		lb_json_kv_double(j, lb_metric_name((enum lb_metric)m),
				  lb_metric_value(r, (enum lb_metric)m));
	json_side(j, "write_side", &r->side[LB_SIDE_WRITE]);
	if (r->exclusive) {
		lb_json_key(j, "read_side"); /* not measured: an exclusive run */
		lb_json_null(j);
	} else {
		json_side(j, "read_side", &r->side[LB_SIDE_READ]);
	}
	/* 1: overhead_ns came out negative (below calibration resolution), shown as 0. */
	lb_json_kv_uint(j, "overhead_clamped", r->overhead_clamped ? 1 : 0);
	lb_json_kv_uint(j, "lost_updates", r->lost_updates);
	lb_json_kv_uint(j, "torn_reads", r->torn_reads);
	/* Cache-line round trip between config.c2c_cpus just before and after
	 * the run (lib/lb_c2c.h); null: not measured. */
	if (r->c2c_before_ns >= 0)
		lb_json_kv_double(j, "c2c_before_ns", r->c2c_before_ns);
	else
		lb_json_kv_string(j, "c2c_before_ns", NULL);
	if (r->c2c_after_ns >= 0)
		lb_json_kv_double(j, "c2c_after_ns", r->c2c_after_ns);
	else
		lb_json_kv_string(j, "c2c_after_ns", NULL);
	/* Where the lock and the shared data are (lb_mem_node_of): -1 unknown. */
	lb_json_kv_int(j, "lock_node", r->lock_node);
	lb_json_kv_int(j, "data_node", r->data_node);
	lb_json_key(j, "counters");
	lb_json_object_begin(j);
	for (size_t i = 0; i < r->ncounters; i++)
		lb_json_kv_uint(j, r->counters[i].name, r->counters[i].value);
	lb_json_object_end(j);
	/* Kernel lock-event names: their scope and notes (lb_lock_events.h). */
	const char *scope = lb_lock_events_scope(lock);
	if (scope && r->ncounters) {
		lb_json_kv_string(j, "counters_scope", scope);
		lb_json_key(j, "counter_notes");
		lb_json_object_begin(j);
		for (size_t i = 0; i < r->ncounters; i++) {
			const char *note = lb_lock_event_note(lock, r->counters[i].name);
			if (note)
				lb_json_kv_string(j, r->counters[i].name, note);
		}
		lb_json_object_end(j);
	}
	lb_json_key(j, "per_thread");
	lb_json_array_begin(j);
	for (unsigned int t = 0; t < r->nthreads && r->threads; t++) {
		const struct lb_thread_result *th = &r->threads[t];
		lb_json_object_begin(j);
		lb_json_kv_uint(j, "index", th->index);
		lb_json_kv_int(j, "cpu", th->cpu);
		lb_json_kv_int(j, "ctx_node", th->ctx_node); /* -1: no context or unknown */
		lb_json_kv_uint(j, "ops", th->ops[LB_SIDE_WRITE] + th->ops[LB_SIDE_READ]);
		/* The ops fairness (cov, min/max) is computed from: the window in
		 * which every thread was running. */
		lb_json_kv_uint(j, "window_ops", th->window_ops);
		lb_json_kv_uint(j, "write_ops", th->ops[LB_SIDE_WRITE]);
		lb_json_kv_uint(j, "read_ops", th->ops[LB_SIDE_READ]);
		lb_json_kv_uint(j, "cpu_ns", th->cpu_ns);
		lb_json_kv_uint(j, "run_ns", th->end_ns - th->start_ns);
		lb_json_object_end(j);
	}
	lb_json_array_end(j);
	lb_json_object_end(j);
}

void lb_report_json(FILE *out, const struct lb_micro_config *cfg,
		    const struct lb_run_record *rec, const struct lb_hostinfo *host,
		    const struct lb_c2c_pairs *pairs, const struct lb_cell *cells, size_t ncells)
{
	const struct lb_hostinfo h = *host;
	struct lb_json j;
	lb_json_init(&j, out);
	lb_json_object_begin(&j);
	lb_schema_write_head(&j, &lb_schema_bench, &h);
	/* true: a signal ended the run; "results" holds the runs that finished. */
	lb_schema_write_interrupted(&j, rec->interrupted_by);

	lb_json_key(&j, "config");
	lb_json_object_begin(&j);
	lb_json_kv_string(&j, "command", rec->command);
	lb_json_key(&j, "locks");
	lb_json_array_begin(&j);
	for (size_t i = 0; i < cfg->nlocks; i++)
		lb_json_string(&j, cfg->locks[i]->name);
	lb_json_array_end(&j);
	lb_json_kv_uint_array(&j, "threads", cfg->threads, cfg->nthread_counts);
	lb_json_kv_double(&j, "duration_s", (double)cfg->loop.duration_ns / LB_NS_PER_S);
	lb_json_key(&j, "c2c_cpus");
	if (cfg->loop.c2c_cpu[0] >= 0) {
		lb_json_array_begin(&j);
		lb_json_int(&j, cfg->loop.c2c_cpu[0]);
		lb_json_int(&j, cfg->loop.c2c_cpu[1]);
		lb_json_array_end(&j);
	} else {
		lb_json_null(&j);
	}
	lb_json_kv_uint(&j, "cs_iters", cfg->loop.cs.iters);
	lb_json_kv_double(&j, "cs_ns", (double)cfg->loop.cs.iters * lb_work_ns_per_iter());
	lb_json_kv_uint(&j, "par_iters", cfg->loop.par.iters);
	lb_json_kv_double(&j, "par_ns", (double)cfg->loop.par.iters * lb_work_ns_per_iter());
	lb_json_kv_uint(&j, "cs_lines", cfg->loop.cs_lines);
	lb_json_kv_string(&j, "pin", cfg->loop.pin.text);
	lb_json_kv_uint(&j, "repeat", cfg->repeat);
	if (cfg->loop.read_pct >= 0)
		lb_json_kv_int(&j, "read_pct", cfg->loop.read_pct);
	else
		lb_json_kv_string(&j, "read_pct", NULL);
	lb_json_kv_uint(&j, "latency_sample_every", 1u << cfg->loop.sample_shift);
	lb_json_kv_bool(&j, "explain", cfg->explain);
	/* 1-min load average just before the first run (null: unknown). */
	if (rec->load_before >= 0)
		lb_json_kv_double(&j, "load_average_before", rec->load_before);
	else
		lb_json_kv_string(&j, "load_average_before", NULL);
	lb_steal_json(&j, rec->steal_s); /* over the run stage, s (null: unknown) */
	lb_json_object_end(&j);
	/* Found while running: a many-CPU machine's round trips by CPU pair
	 * (lib/lb_c2c_pairs.h; empty with fewer than three CPUs). */
	lb_c2c_pairs_json(&j, pairs);

	lb_json_key(&j, "results");
	lb_json_array_begin(&j);
	for (size_t i = 0; i < ncells; i++) {
		const struct lb_cell *c = &cells[i];
		lb_json_object_begin(&j);
		lb_json_key(&j, "params");
		lb_json_object_begin(&j);
		lb_json_kv_string(&j, "lock", c->ops->name);
		lb_json_kv_uint(&j, "threads", c->nthreads);
		if (cfg->loop.read_pct >= 0)
			lb_json_kv_int(&j, "read_pct", cfg->loop.read_pct);
		else
			lb_json_kv_string(&j, "read_pct", NULL);
		lb_json_kv_double(&j, "cs_ns", (double)cfg->loop.cs.iters * lb_work_ns_per_iter());
		lb_json_kv_double(&j, "par_ns", (double)cfg->loop.par.iters * lb_work_ns_per_iter());
		lb_json_kv_uint(&j, "cs_lines", cfg->loop.cs_lines);
		lb_json_kv_string(&j, "pin", cfg->loop.pin.text);
		lb_json_object_end(&j);
		lb_json_kv_string(&j, "lock", c->ops->name);
		lb_json_kv_string(&j, "family", c->ops->family);
		lb_json_kv_uint(&j, "threads", c->nthreads);
		if (c->nruns && c->runs[0].describe[0])
			lb_json_kv_string(&j, "describe", c->runs[0].describe);
		lb_json_key(&j, "summary");
		lb_json_object_begin(&j);
		for (int m = 0; m < LB_M_COUNT; m++) {
			lb_json_key(&j, lb_metric_name((enum lb_metric)m));
			json_summary(&j, &c->summary[m]);
		}
		lb_json_object_end(&j);
		lb_json_key(&j, "runs");
		lb_json_array_begin(&j);
		for (unsigned int r = 0; r < c->nruns; r++)
			json_run(&j, c->ops->name, &c->runs[r]);
		lb_json_array_end(&j);
		lb_json_object_end(&j);
	}
	lb_json_array_end(&j);
	lb_json_object_end(&j);
	fputc('\n', out);
}

void lb_report_csv(FILE *out, const struct lb_micro_config *cfg, const struct lb_cell *cells,
		   size_t ncells)
{
	fprintf(out, "lock,threads,repeat_index,read_pct,duration_s,cs_iters,par_iters,cs_lines,pin,"
		     "total_ops,elapsed_ns,read_ops,write_ops,lost_updates,torn_reads");
	for (int m = 0; m < LB_M_COUNT; m++)
		fprintf(out, ",%s", lb_metric_name((enum lb_metric)m));
	fputs(",c2c_before_ns,c2c_after_ns\n", out);
	for (size_t i = 0; i < ncells; i++) {
		const struct lb_cell *c = &cells[i];
		for (unsigned int r = 0; r < c->nruns; r++) {
			const struct lb_run_result *run = &c->runs[r];
			fprintf(out, "%s,%u,%u,%d,%.6g,%llu,%llu,%u,\"%s\",%llu,%llu,%llu,%llu,%llu,%llu",
				c->ops->name, c->nthreads, run->repeat_index, cfg->loop.read_pct,
				(double)cfg->loop.duration_ns / LB_NS_PER_S, (unsigned long long)cfg->loop.cs.iters,
				(unsigned long long)cfg->loop.par.iters, cfg->loop.cs_lines, cfg->loop.pin.text,
				(unsigned long long)run->total_ops,
				(unsigned long long)run->elapsed_ns,
				(unsigned long long)run->side[LB_SIDE_READ].ops,
				(unsigned long long)run->side[LB_SIDE_WRITE].ops,
				(unsigned long long)run->lost_updates,
				(unsigned long long)run->torn_reads);
			for (int m = 0; m < LB_M_COUNT; m++) {
				double v = lb_metric_value(run, (enum lb_metric)m);
				if (isnan(v))
					fputc(',', out); /* empty: not measured */
				else
					fprintf(out, ",%.6g", v);
			}
			/* Empty: not measured. */
			if (run->c2c_before_ns >= 0)
				fprintf(out, ",%.0f", run->c2c_before_ns);
			else
				fputc(',', out);
			if (run->c2c_after_ns >= 0)
				fprintf(out, ",%.0f", run->c2c_after_ns);
			else
				fputc(',', out);
			fputc('\n', out);
		}
	}
}
