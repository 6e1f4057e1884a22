/* SPDX-License-Identifier: MIT */
/*
 * micro_main.c - `lockbench bench` and the default comparison: validate the
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
#include "commands.h"
#include "lb_cli.h"
#include "lb_hostinfo.h"
#include "lb_outfile.h"
#include "lb_registry.h"
#include "lb_time.h"
#include "lb_work.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_stop_signal(int sig)
{
	if (!lb_bench_stop_signal()) {
		lb_bench_request_stop(sig); /* finish with what was measured */
		return;
	}
	/* Asked twice: leave now, with nothing half-written left behind. */
	lb_outfile_unlink_pending();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_stop_handlers(void)
{
	/* No SA_RESTART: the signal must cut the run's sleep short (EINTR). */
	lb_stop_signals_catch(on_stop_signal, 0, NULL);
}

/* From the end of the measurements on, signals wait until we exit: the
 * outputs are written completely, then the status says we were stopped. */
static void block_stop_signals(void)
{
	sigset_t set;
	lb_stop_signal_set(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* The lock's own cost beside the harness figures: 1-thread cells only. */
static void report_lock_cost(FILE *out, const struct lb_cell *cells, size_t n, double calls)
{
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		const struct lb_summary *s = &cells[i].summary[LB_M_LOCK_NS_PER_OP];
		if (cells[i].nthreads != 1 || !isfinite(s->median))
			continue;
		if (!any)
			fprintf(out, "# lock's own cost at 1 thread (a lock+unlock loop through the "
				"vtable less the bare loop, CPU ns/op, median; the calls alone, "
				"`none`: %.2f):", calls);
		fprintf(out, "%s %s %.2f", any ? "," : "", cells[i].ops->name, s->median);
		any = true;
	}
	if (any)
		fputc('\n', out);
}

static int run_all(const struct lb_bench_config *cfg)
{
	struct lb_outfile json = { 0 }, csv = { 0 };
	size_t ncells = cfg->nlocks * cfg->nthread_counts;
	struct lb_bench_run_record rec = { .load_before = -1 };
	int rc = 0;

	/* Outputs first: a bad path exits 2 before anything is allocated. */
	install_stop_handlers();
	lb_outfile_refuse_same("--json", cfg->json_path, "--csv", cfg->csv_path);
	if (cfg->json_path)
		lb_outfile_open_or_exit("--json", cfg->json_path, &json, NULL);
	if (cfg->csv_path)
		lb_outfile_open_or_exit("--csv", cfg->csv_path, &csv, &json);
	struct lb_cell *cells = calloc(ncells, sizeof(*cells));
	if (!cells) {
		fprintf(stderr, "%s: out of memory\n", lb_cli_prog());
		lb_outfile_abort(&json);
		lb_outfile_abort(&csv);
		return 1;
	}

	/* Other work on the CPUs makes every figure vary: note it in the header. */
	rec.load_before = lb_load_average_now();
	/* Calibrate before the first run so no run pays for it. */
	lb_cycles_per_ns();
	lb_work_ns_per_iter();

	for (size_t l = 0; l < cfg->nlocks; l++)
		for (size_t t = 0; t < cfg->nthread_counts; t++) {
			struct lb_cell *c = &cells[l * cfg->nthread_counts + t];
			c->ops = cfg->locks[l];
			c->nthreads = cfg->threads[t];
			c->runs = calloc(cfg->repeat, sizeof(*c->runs));
			if (!c->runs) {
				fprintf(stderr, "%s: out of memory\n", lb_cli_prog());
				rc = 1;
				goto out;
			}
		}
	/* The locks' own cost (micro_own.c): once per round, for the locks of
	 * the 1-thread cells, so each 1-thread run has the figure of its round. */
	const struct lb_lock_ops *none = lb_lock_find("none");
	const struct lb_lock_ops *own_ops[LB_BENCH_MAX_LOCKS];
	size_t nown = 0;
	bool has_one = false;
	for (size_t t = 0; t < cfg->nthread_counts; t++)
		has_one |= cfg->threads[t] == 1;
	if (cfg->read_pct < 0 && has_one && none && !none->unsupported)
		for (size_t l = 0; l < cfg->nlocks; l++)
			own_ops[nown++] = cfg->locks[l];
	int own_cpu[1] = { -1 };
	if (nown && lb_pin_plan(&cfg->pin, 1, own_cpu))
		own_cpu[0] = -1;
	double none_calls[LB_BENCH_MAX_REPEAT];
	unsigned int nnone = 0;
	for (unsigned int r = 0; r < cfg->repeat && !lb_bench_stop_signal(); r++) {
		double own[LB_BENCH_MAX_LOCKS], calls = NAN;
		for (size_t l = 0; l < cfg->nlocks; l++)
			own[l] = NAN;
		/* A failure leaves NAN: no figure. */
		if (nown && lb_bench_own_cost(none, own_ops, nown, own_cpu[0], LB_BENCH_OWN_ROUNDS,
					      own, &calls) == 0)
			none_calls[nnone++] = calls;
		for (size_t i = 0; i < ncells && !lb_bench_stop_signal(); i++) {
			struct lb_cell *c = &cells[i];
			if (!cfg->quiet)
				fprintf(stderr, "\r%s: run %u/%u: %-18s %4u threads   ", lb_cli_prog(),
					r + 1, cfg->repeat, c->ops->name, c->nthreads);
			int err = lb_bench_run_one(cfg, c->ops, c->nthreads, &c->runs[r]);
			if (err == EINTR && lb_bench_stop_signal())
				break; /* cut short by a signal: dropped, not a failure */
			if (err) {
				fprintf(stderr, "\n%s: lock '%s' at %u threads failed: %s\n",
					lb_cli_prog(), c->ops->name, c->nthreads, strerror(err));
				rc = 1;
				goto out;
			}
			c->runs[r].repeat_index = r;
			if (c->nthreads == 1)
				c->runs[r].lock_ns_per_op = own[i / cfg->nthread_counts];
			c->nruns = r + 1;
		}
	}
	block_stop_signals();
	rec.interrupted_by = lb_bench_stop_signal();
	if (!cfg->quiet || rec.interrupted_by)
		fprintf(stderr, "\r%60s\r", "");
	size_t nreport = ncells;
	if (rec.interrupted_by) {
		/* Keep the cells with at least one finished run, in their order. */
		nreport = 0;
		for (size_t i = 0; i < ncells; i++)
			if (cells[i].nruns) {
				struct lb_cell tmp = cells[nreport];
				cells[nreport++] = cells[i];
				if (nreport - 1 != i)
					cells[i] = tmp;
			}
		fprintf(stderr, "%s: interrupted by SIG%s: reporting the %zu cell(s) with finished "
			"runs\n", lb_cli_prog(), sigabbrev_np(rec.interrupted_by), nreport);
	}
	lb_cells_summarize(cells, nreport);
	struct lb_hostinfo host;
	lb_hostinfo_get(&host);
	FILE *table = lb_outfile_report_stream(&json, &csv);
	lb_report_table(table, cfg, &rec, &host, cells, nreport);
	report_lock_cost(table, cells, nreport, nnone ? lb_median(none_calls, nnone) : NAN);
	fflush(table);
	if (cfg->json_path) {
		if (cfg->json_gbench)
			rc |= lb_report_gbench(json.fp, cfg, &rec, &host, cells, nreport) ? 1 : 0;
		else
			lb_report_json(json.fp, cfg, &rec, &host, cells, nreport);
		rc |= lb_outfile_commit_or_say(&json, "bench", "--json", cfg->json_path) ? 1 : 0;
	}
	if (cfg->csv_path) {
		lb_report_csv(csv.fp, cfg, cells, nreport);
		rc |= lb_outfile_commit_or_say(&csv, "bench", "--csv", cfg->csv_path) ? 1 : 0;
	}
	if (rec.interrupted_by)
		rc = 128 + rec.interrupted_by; /* the shell's convention for "killed by" */
out:
	/* Outputs not committed (an error on the way): remove the temporaries.
	 * A committed or never opened output is a no-op here. */
	lb_outfile_abort(&json);
	lb_outfile_abort(&csv);
	for (size_t i = 0; i < ncells; i++) {
		for (unsigned int r = 0; r < cells[i].nruns; r++)
			lb_run_result_free(&cells[i].runs[r]);
		free(cells[i].runs);
	}
	free(cells);
	return rc;
}

int lb_cmd_bench(int argc, char **argv)
{
	struct lb_bench_config cfg;
	lb_bench_parse(argc, argv, &cfg);
	char *joined = lb_cli_join_args(argc, argv);
	cfg.argv_joined = joined;
	int rc = run_all(&cfg);
	free(joined);
	return rc;
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

int lb_cmd_default(int argc, char **argv)
{
	struct lb_bench_config cfg;
	(void)argc;
	lb_bench_defaults(&cfg);
	const struct lb_lock_ops *all[LB_BENCH_MAX_LOCKS];
	size_t nall = cfg.nlocks;
	memcpy(all, cfg.locks, nall * sizeof(all[0]));

	cfg.nlocks = 0;
	for (size_t i = 0; i < sizeof(default_locks) / sizeof(default_locks[0]); i++) {
		const struct lb_lock_ops *ops = lb_lock_find(default_locks[i]);
		if (ops && !ops->unsupported)
			cfg.locks[cfg.nlocks++] = ops;
	}
	if (cfg.nlocks == 0)
		cfg.locks[cfg.nlocks++] = all[0];
	/* 1 and NCPU threads: lb_bench_defaults put 4xNCPU last. */
	unsigned int oversubscribed = cfg.threads[cfg.nthread_counts - 1];
	if (cfg.nthread_counts > 1)
		cfg.nthread_counts--;
	cfg.repeat = DEFAULT_REPEAT;
	cfg.table_median = true;
	cfg.table_tail = false;
	cfg.table_brief = true;
	/* + one `none` floor run per round (run_all). */
	uint64_t runs = (uint64_t)cfg.nlocks * cfg.nthread_counts * cfg.repeat + cfg.repeat;
	cfg.duration_ns = DEFAULT_BUDGET_NS / runs;
	if (cfg.duration_ns < 20000000)
		cfg.duration_ns = 20000000;

	/* The header lines: what was measured, what was left out, the full run. */
	char left[1024] = "";
	for (size_t i = 0; i < nall; i++) {
		bool shown = false;
		for (size_t k = 0; k < cfg.nlocks; k++)
			shown |= cfg.locks[k] == all[i];
		if (!shown)
			snprintf(left + strlen(left), sizeof(left) - strlen(left), "%s%s",
				 *left ? ", " : "", all[i]->name);
	}
	char threads[64];
	if (cfg.nthread_counts > 1)
		snprintf(threads, sizeof(threads), "%u and %u threads", cfg.threads[0], cfg.threads[1]);
	else
		snprintf(threads, sizeof(threads), "%u thread", cfg.threads[0]);
	static char note[2048];
	snprintf(note, sizeof(note),
		 "# default comparison: %zu locks at %s, %u runs of %.0f ms per cell, medians "
		 "shown\n"
		 "# left out: %s; %u threads (oversubscribed); p99.9 and max latency (they grow "
		 "with run length); per-thread ops CoV (needs 1 s runs)\n"
		 "# the full comparison (every exclusive lock, 1 s runs, 5 repeats): lockbench bench "
		 "--repeat 5\n",
		 cfg.nlocks, threads, cfg.repeat, (double)cfg.duration_ns / 1e6,
		 *left ? left : "no other lock", oversubscribed);
	cfg.table_note = note;
	cfg.argv_joined = argv[0];
	return run_all(&cfg);
}
