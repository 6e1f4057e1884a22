/* SPDX-License-Identifier: MIT */
/*
 * sim_main.c - `lockbench sim` as stages of the driver (bench/workload.h):
 * the cells (locks x CPU counts x thread counts), each printed as it
 * finishes, then the JSON.  A cell that lets two threads into the lock, or
 * leaves one without it, fails the run (exit 1) after the report.
 * An interrupt stops between cells; the finished ones are reported.
 */
#include "sim_cell.h"
#include "sim_measure.h"
#include "sim_rt.h"
#include "sim_rt_main.h"
#include "workload.h"
#include "lb_progress.h"
#include "lb_stop.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* One allocation, freed by the driver. */
struct simb_results {
	size_t n;
	bool failed;
	struct lb_simb_measured measured; /* --measure-machine's probes */
	struct lb_simb_cell cells[];
};

static void sim_parse(int argc, char **argv, void *cfg)
{
	struct lb_simb_config *c = cfg;
	if (lb_simr_wanted(argc, argv)) { /* --workload rt: options of its own */
		c->rt = lb_simr_parse(argc, argv, &c->quiet, &c->json_path);
		return;
	}
	lb_simb_parse(argc, argv, cfg);
}

static void sim_outputs(const void *cfg_, struct lb_output_request req[LB_WORKLOAD_MAX_OUTPUTS])
{
	const struct lb_simb_config *cfg = cfg_;
	req[0] = (struct lb_output_request){ "--json", cfg->json_path };
	/* The machine file: opened (so checked) before the probes, written
	 * whole by the driver's commit, removed on a failure or a signal. */
	req[1] = (struct lb_output_request){ "--measure-machine", cfg->measure_path };
	/* --workload rt --calibrate FILE: the cost file, written whole the same way. */
	if (cfg->rt && cfg->rt->calibrate_path)
		req[1] = (struct lb_output_request){ "--calibrate", cfg->rt->calibrate_path };
}

/* One cell: run, print; false when it failed. */
static bool one_cell(struct lb_run *run, struct simb_results *res, const struct lb_lock_ops *ops,
		     unsigned int threads, unsigned int cpus, struct lb_progress *pg)
{
	const struct lb_simb_config *cfg = run->cfg;
	struct lb_simb_cell *c = &res->cells[res->n];
	/* A cell can take seconds of host time (80 CPUs, 1 s simulated): on a
	 * terminal the status line and its ticker say so. */
	lb_progress_step(pg, "sim: %s, %u threads, %u cpus", ops->name, threads, cpus);
	int err = lb_simb_run_cell(cfg, ops, threads, cpus, c);
	/* From the cell's inputs alone, never from the run's figures. */
	lb_simb_analytic(cfg, ops->name, threads, cpus, &c->analytic);
	lb_progress_clear(pg);
	if (err == EINTR)
		return true; /* interrupted: the cell is not reported */
	res->n++;
	lb_progress_step_done(pg);
	lb_simb_print_cell(run->out, c);
	if (!cfg->quiet)
		lb_simb_print_host(stderr, c);
	fflush(run->out);
	if (err == EDEADLK) {
		fprintf(stderr, "lockbench: sim: %s, %u threads: a thread never got the lock "
			"within twice the window\n", ops->name, threads);
		return false;
	}
	if (err) {
		fprintf(stderr, "lockbench: sim: %s, %u threads: %s\n", ops->name, threads,
			strerror(err));
		return false;
	}
	if (!c->counter_ok && !c->nolock) {
		fprintf(stderr, "lockbench: sim: %s, %u threads: mutual exclusion broken (%llu "
			"overlaps)\n", ops->name, threads, (unsigned long long)c->violations);
		return false;
	}
	return true;
}

static int sim_run(struct lb_run *run)
{
	const struct lb_simb_config *cfg = run->cfg;
	if (cfg->aim7)
		return lb_simaim_run(run);
	size_t max = cfg->measure_path ? 0 : cfg->nlocks * cfg->ncpus * cfg->nthreads;
	struct simb_results *res = calloc(1, sizeof(*res) + max * sizeof(res->cells[0]));
	run->results = res;
	if (!res) {
		fprintf(stderr, "lockbench: sim: out of memory\n");
		return 1;
	}
	if (cfg->measure_path)
		return lb_simb_measure(&res->measured) ? 1 : 0; /* its line said why */
	if (cfg->rt) {
		res->failed = lb_simr_main(run->out, cfg->rt, cfg->quiet) != 0;
		return 0;
	}
	lb_simb_print_header(run->out, cfg);
	fflush(run->out);
	struct lb_progress pg;
	lb_progress_begin(&pg, stderr, cfg->quiet, (unsigned int)max, 0, -1);
	for (size_t l = 0; l < cfg->nlocks; l++)
		for (size_t c = 0; c < cfg->ncpus; c++)
			for (size_t t = 0; t < cfg->nthreads && !lb_stop_signal(); t++)
				if (!one_cell(run, res, cfg->locks[l], cfg->threads[t], cfg->cpus[c],
					      &pg))
					res->failed = true;
	lb_progress_end(&pg);
	lb_simb_print_analytic(run->out, res->cells, res->n);
	fflush(run->out);
	return 0;
}

static int sim_report(struct lb_run *run)
{
	const struct lb_simb_config *cfg = run->cfg;
	if (cfg->aim7)
		return lb_simaim_report(run);
	struct simb_results *res = run->results;
	if (cfg->measure_path) {
		lb_simb_measured_write(run->file[1].fp, &res->measured, "measured-here");
		fprintf(run->out, "# measured machine file written to %s:\n", cfg->measure_path);
		lb_simb_measured_write(run->out, &res->measured, "measured-here");
		return 0;
	}
	if (cfg->rt && cfg->rt->calibrate_path) {
		if (!res->failed)
			lb_simr_write_costs(run->file[1].fp);
		return res->failed ? 1 : 0;
	}
	if (run->file[0].fp && cfg->rt)
		lb_simr_write_json(run->file[0].fp, &run->rec);
	else if (run->file[0].fp)
		lb_simb_write_json(run->file[0].fp, run->cfg, &run->rec, res->cells, res->n);
	return res->failed ? 1 : 0;
}

const struct lb_workload lb_workload_sim = {
	.name = "sim",
	.summary = "model predictions: bench cells on a simulated many-core machine (doc/sim.md)",
	.signals = LB_SIGNALS_FINISH,
	LB_WORKLOAD_PARTS(sim, struct lb_simb_config),
};
