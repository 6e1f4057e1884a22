/* SPDX-License-Identifier: MIT */
/*
 * micro_main.c - `lockbench bench` and the default comparison as stages of
 * the driver (bench/workload.h): validate the
 * output paths before anything runs, run every (lock, threads) cell R times
 * (repeats interleaved so slow drift spreads over all cells), then report.
 *
 * Output files are opened as temporaries first and committed atomically at
 * the end.  An interrupt (SIGINT, SIGTERM, SIGHUP, SIGQUIT) stops the run in
 * progress at once (it is dropped), then the runs that finished are printed
 * and written as usual (JSON "interrupted": true) and the exit status is
 * 128 + the signal number (130 SIGINT, 143 SIGTERM, 129 SIGHUP, 131
 * SIGQUIT).  A second signal before the outputs are written leaves at
 * once, removing the temporaries.  An error removes them too, so no
 * half-written file is ever left.
 */
#include "micro.h"
#include "workload.h"
#include "lb_stop.h"
#include "lb_cli.h"
#include "lb_progress.h"
#include "lb_registry.h"
#include "lb_time.h"
#include "lb_work.h"
#include "lb_wrap.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The lock's own cost beside the harness figures: 1-thread cells only. */
static void report_lock_cost(FILE *out, const struct lb_cell *cells, size_t n, double calls)
{
	char line[4096];
	size_t used = 0;
	for (size_t i = 0; i < n && used < sizeof(line); i++) {
		const struct lb_summary *s = &cells[i].summary[LB_M_LOCK_NS_PER_OP];
		if (cells[i].nthreads != 1 || !isfinite(s->median))
			continue;
		if (!used)
			used = (size_t)snprintf(line, sizeof(line), "# lock's own cost at 1 thread (a "
						"lock+unlock loop through the vtable less the bare "
						"loop, CPU ns/op, median; the calls alone, `none`: "
						"%.2f):", calls);
		if (used < sizeof(line))
			used += (size_t)snprintf(line + used, sizeof(line) - used, "%s %s %.2f",
						 line[used - 1] == ':' ? "" : ",", cells[i].ops->name,
						 s->median);
	}
	if (used)
		lb_wrap(out, "#   ", line);
}

/* What the run stage hands the report stage. */
struct micro_results {
	struct lb_cell *cells;
	size_t ncells;
	double none_calls[LB_MICRO_MAX_REPEAT]; /* `none`'s own cost per round */
	unsigned int nnone;
	struct lb_progress progress;  /* a step per cell and round */
	struct lb_c2c_pairs c2c_pairs; /* a many-CPU machine's round trips, before the runs */
};

static int alloc_cells(const struct lb_micro_config *cfg, struct micro_results *res)
{
	res->ncells = cfg->nlocks * cfg->nthread_counts;
	res->cells = calloc(res->ncells, sizeof(*res->cells));
	if (!res->cells)
		return -1;
	for (size_t l = 0; l < cfg->nlocks; l++)
		for (size_t t = 0; t < cfg->nthread_counts; t++) {
			struct lb_cell *c = &res->cells[l * cfg->nthread_counts + t];
			c->ops = cfg->locks[l];
			c->nthreads = cfg->threads[t];
			c->runs = calloc(cfg->repeat, sizeof(*c->runs));
			if (!c->runs)
				return -1;
		}
	return 0;
}

/* The locks whose own cost is measured (micro_own): those of the 1-thread
 * cells of an exclusive run; their count. */
static size_t own_cost_locks(const struct lb_micro_config *cfg, const struct lb_lock_ops *none,
			     const struct lb_lock_ops **own_ops)
{
	bool has_one = false;
	for (size_t t = 0; t < cfg->nthread_counts; t++)
		has_one |= cfg->threads[t] == 1;
	if (cfg->loop.read_pct >= 0 || !has_one || !none || none->unsupported)
		return 0;
	for (size_t l = 0; l < cfg->nlocks; l++)
		own_ops[l] = cfg->locks[l];
	return cfg->nlocks;
}

/* One round: every cell's run r.  0, or 1 after the error line. */
static int run_round(const struct lb_micro_config *cfg, struct micro_results *res, unsigned int r,
		     const double *own)
{
	for (size_t i = 0; i < res->ncells && !lb_stop_signal(); i++) {
		struct lb_cell *c = &res->cells[i];
		lb_progress_step(&res->progress, "run %u/%u: %s, %u thread%s", r + 1, cfg->repeat,
				 c->ops->name, c->nthreads, c->nthreads == 1 ? "" : "s");
		int err = lb_loop_run_one(&cfg->loop, c->ops, c->nthreads, &c->runs[r]);
		if (err == EINTR && lb_stop_signal())
			break; /* cut short by a signal: dropped, not a failure */
		if (err) {
			lb_progress_clear(&res->progress);
			fprintf(stderr, "%s: lock '%s' at %u threads failed: %s\n",
				lb_cli_prog(), c->ops->name, c->nthreads, strerror(err));
			return 1;
		}
		c->runs[r].repeat_index = r;
		if (c->nthreads == 1)
			c->runs[r].lock_ns_per_op = own[i / cfg->nthread_counts];
		c->nruns = r + 1;
		lb_progress_step_done(&res->progress);
	}
	return 0;
}

/* Every round (the own-cost probe, then each cell's run r). */
static int run_rounds(const struct lb_micro_config *cfg, struct micro_results *res)
{
	/* Calibrate before the first run so no run pays for it. */
	lb_cycles_per_ns();
	lb_work_ns_per_iter();
	/* The locks' own cost (lockloop_own.c): once per round, for the locks of
	 * the 1-thread cells, so each 1-thread run has the figure of its round. */
	const struct lb_lock_ops *none = lb_lock_find("none");
	const struct lb_lock_ops *own_ops[LB_MICRO_MAX_LOCKS];
	size_t nown = own_cost_locks(cfg, none, own_ops);
	int own_cpu[1] = { -1 };
	if (nown && lb_pin_plan(&cfg->loop.pin, 1, own_cpu))
		own_cpu[0] = -1;
	for (unsigned int r = 0; r < cfg->repeat && !lb_stop_signal(); r++) {
		double own[LB_MICRO_MAX_LOCKS], calls = NAN;
		for (size_t l = 0; l < cfg->nlocks; l++)
			own[l] = NAN;
		if (nown)
			lb_progress_step(&res->progress, "run %u/%u: the locks' own cost", r + 1,
					 cfg->repeat);
		/* A failure leaves NAN: no figure. */
		if (nown && lb_loop_own_cost(none, own_ops, nown, own_cpu[0], LB_LOOP_OWN_ROUNDS,
					     own, &calls) == 0)
			res->none_calls[res->nnone++] = calls;
		if (run_round(cfg, res, r, own))
			return 1;
	}
	return 0;
}

/* Run every (lock, threads) cell R times, repeats interleaved so slow drift
 * spreads over all cells. */
static int micro_run(struct lb_run *run)
{
	const struct lb_micro_config *cfg = run->cfg;
	struct micro_results *res = calloc(1, sizeof(*res));
	run->results = res;
	if (!res || alloc_cells(cfg, res)) {
		fprintf(stderr, "%s: out of memory\n", lb_cli_prog());
		return 1;
	}
	lb_progress_begin(&res->progress, stderr, cfg->quiet,
			  (unsigned int)(cfg->repeat * res->ncells), 0, -1);
	/* Where the CPUs of a many-CPU machine are from each other (a few ms). */
	lb_c2c_pick_pairs(&res->c2c_pairs);
	lb_c2c_measure_pairs(&res->c2c_pairs);
	int rc = run_rounds(cfg, res);
	lb_progress_end(&res->progress);
	return rc;
}

/* An interrupted run keeps the cells with at least one finished run, in
 * their order, at the front; how many. */
static size_t keep_finished(struct lb_cell *cells, size_t ncells)
{
	size_t n = 0;
	for (size_t i = 0; i < ncells; i++)
		if (cells[i].nruns) {
			struct lb_cell tmp = cells[n];
			cells[n++] = cells[i];
			if (n - 1 != i)
				cells[i] = tmp;
		}
	return n;
}

static int micro_report(struct lb_run *run)
{
	const struct lb_micro_config *cfg = run->cfg;
	const struct lb_run_record *rec = &run->rec;
	struct micro_results *res = run->results;
	struct lb_outfile *json = &run->file[0], *csv = &run->file[1];
	int rc = 0;
	struct lb_cell *cells = res->cells;
	size_t n = res->ncells;
	if (rec->interrupted_by) {
		n = keep_finished(cells, res->ncells); /* the finished cells, first */
		fprintf(stderr, "%s: interrupted by SIG%s: reporting the %zu cell(s) with finished "
			"runs\n", lb_cli_prog(), sigabbrev_np(rec->interrupted_by), n);
	}
	lb_cells_summarize(cells, n);
	lb_report_table(run->out, cfg, rec, &rec->host, cells, n);
	lb_c2c_pairs_print(run->out, &res->c2c_pairs);
	report_lock_cost(run->out, cells, n, res->nnone ? lb_median(res->none_calls, res->nnone)
							 : NAN);
	fflush(run->out);
	if (json->fp) {
		if (cfg->json_gbench)
			rc |= lb_report_gbench(json->fp, cfg, rec, &rec->host, cells, n) ? 1 : 0;
		else
			lb_report_json(json->fp, cfg, rec, &rec->host, &res->c2c_pairs, cells, n);
	}
	if (csv->fp)
		lb_report_csv(csv->fp, cfg, cells, n);
	return rc;
}

static void micro_release(struct lb_run *run)
{
	struct micro_results *res = run->results;
	for (size_t i = 0; res->cells && i < res->ncells; i++) {
		for (unsigned int r = 0; r < res->cells[i].nruns; r++)
			lb_run_result_free(&res->cells[i].runs[r]);
		free(res->cells[i].runs);
	}
	free(res->cells);
}

static void micro_outputs(const void *cfg_, struct lb_output_request req[LB_WORKLOAD_MAX_OUTPUTS])
{
	const struct lb_micro_config *cfg = cfg_;
	req[0] = (struct lb_output_request){ "--json", cfg->json_path };
	req[1] = (struct lb_output_request){ "--csv", cfg->csv_path };
}

static void micro_parse(int argc, char **argv, void *cfg)
{
	lb_micro_parse(argc, argv, cfg);
}

/*
 * `lockbench` with no arguments: a first look that does not mislead.
 * Short cells make contended and fairness figures artefacts of scheduling
 * (a thread that was not run in a 60 ms cell shows min/max 0), so the
 * default measures few cells, each several times, and prints medians:
 * DEFAULT_LOCKS at 1 and NCPU threads, DEFAULT_REPEAT runs of about
 * DEFAULT_BUDGET_NS / runs each, in the brief table (ops/s and its spread,
 * ns/op, CPU per op, min/max, p50/p99).  Left out, and named in the header
 * with the command for the full comparison: oversubscription (4xNCPU), tail
 * latency (p99.9, max) and the CoV of per-thread ops, which need 1 s runs to
 * settle; and the spinlocks without parking (ticket, qspinlock, tas...),
 * whose contended figures on a guest swing with how the host runs the vCPUs
 * (doc/lockbench.md, "default comparison", has the figures).  What
 * still moves the printed figures between invocations is the machine: the
 * c2c_ns column (lib/lb_c2c.h) shows where the host had put the CPUs.
 */
#define DEFAULT_REPEAT 3
#define DEFAULT_BUDGET_NS UINT64_C(3600000000) /* the rest of 5 s: start-up, calibration */
static const char *const default_locks[] = { "pthread-mutex", "mutex", "qspinlock-pv" };

static void default_parse(int argc, char **argv, void *cfg_)
{
	struct lb_micro_config *cfg = cfg_;
	(void)argc;
	(void)argv;
	lb_micro_defaults(cfg);
	const struct lb_lock_ops *all[LB_MICRO_MAX_LOCKS];
	size_t nall = cfg->nlocks;
	memcpy(all, cfg->locks, nall * sizeof(all[0]));

	cfg->nlocks = 0;
	for (size_t i = 0; i < sizeof(default_locks) / sizeof(default_locks[0]); i++) {
		const struct lb_lock_ops *ops = lb_lock_find(default_locks[i]);
		if (ops && !ops->unsupported)
			cfg->locks[cfg->nlocks++] = ops;
	}
	if (cfg->nlocks == 0)
		cfg->locks[cfg->nlocks++] = all[0];
	/* 1 and NCPU threads: lb_micro_defaults put 4xNCPU last. */
	unsigned int oversubscribed = cfg->threads[cfg->nthread_counts - 1];
	if (cfg->nthread_counts > 1)
		cfg->nthread_counts--;
	cfg->repeat = DEFAULT_REPEAT;
	cfg->table_median = true;
	cfg->table_tail = false;
	cfg->table_brief = true;
	/* + one `none` floor run per round (micro_run). */
	uint64_t runs = (uint64_t)cfg->nlocks * cfg->nthread_counts * cfg->repeat + cfg->repeat;
	cfg->loop.duration_ns = DEFAULT_BUDGET_NS / runs;
	if (cfg->loop.duration_ns < 20000000)
		cfg->loop.duration_ns = 20000000;

	/* The header lines: what was measured, what was left out, the full run. */
	char left[1024] = "";
	for (size_t i = 0; i < nall; i++) {
		bool shown = false;
		for (size_t k = 0; k < cfg->nlocks; k++)
			shown |= cfg->locks[k] == all[i];
		if (!shown)
			snprintf(left + strlen(left), sizeof(left) - strlen(left), "%s%s",
				 *left ? ", " : "", all[i]->name);
	}
	char threads[64];
	if (cfg->nthread_counts > 1)
		snprintf(threads, sizeof(threads), "%u and %u threads", cfg->threads[0], cfg->threads[1]);
	else
		snprintf(threads, sizeof(threads), "%u thread", cfg->threads[0]);
	static char note[2048];
	snprintf(note, sizeof(note),
		 "# default comparison: %zu locks at %s, %u runs of %.0f ms per cell, medians "
		 "shown\n"
		 "# left out: %s; %u threads (oversubscribed); p99.9 and max latency (they grow "
		 "with run length); per-thread ops CoV (needs 1 s runs)\n"
		 "# the full comparison (every exclusive lock, 1 s runs, 5 repeats): lockbench bench "
		 "--repeat 5\n",
		 cfg->nlocks, threads, cfg->repeat, (double)cfg->loop.duration_ns / 1e6,
		 *left ? left : "no other lock", oversubscribed);
	cfg->table_note = note;
}

/* What `bench` and the default comparison share: all but the parse stage. */
#define MICRO_WORKLOAD(parse_stage)                                                       \
	.options = &lb_micro_cmd, .schema = &lb_schema_bench,                               \
	.signals = LB_SIGNALS_FINISH,                                                       \
	.signal_flags = 0, /* no SA_RESTART: the signal must cut the run's sleep short */   \
	.config_size = sizeof(struct lb_micro_config), .parse = parse_stage,                \
	.outputs = micro_outputs, .run = micro_run, .report = micro_report,                 \
	.release = micro_release

const struct lb_workload lb_workload_bench = {
	.name = "bench",
	.summary = "fixed-time throughput, fairness and latency of locks",
	MICRO_WORKLOAD(micro_parse),
};

/* A bare `lockbench`: the same stages after default_parse. */
const struct lb_workload lb_workload_default = {
	.name = "bench",
	.summary = "the default comparison (lockbench with no command)",
	MICRO_WORKLOAD(default_parse),
};
