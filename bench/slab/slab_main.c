/* SPDX-License-Identifier: MIT */
/*
 * slab_main.c - `lockbench slab` as stages of the driver (bench/workload.h):
 * run Table A and/or Table B pinned, printing each as it finishes, then
 * write the JSON.
 *
 * An interrupt (SIGINT, SIGTERM, SIGHUP, SIGQUIT) stops at the end of the
 * measurement in progress; the repeats that finished are printed and
 * written (JSON "interrupted": true) and the exit status is 128 + the
 * signal.  A second signal leaves at once, removing the temporary file.
 */
#include "slab.h"
#include "workload.h"
#include "lb_progress.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* One allocation, freed by the driver. */
struct slab_results {
	struct lb_slab_protect_result *pr; /* Table A (&protect), or NULL */
	struct lb_slab_bulk_result *br;    /* Table B (&bulk), or NULL */
	struct lb_slab_protect_result protect;
	struct lb_slab_bulk_result bulk;
};

static void slab_parse(int argc, char **argv, void *cfg)
{
	lb_slab_parse(argc, argv, cfg);
}

static void slab_outputs(const void *cfg_, struct lb_output_request req[LB_WORKLOAD_MAX_OUTPUTS])
{
	const struct lb_slab_config *cfg = cfg_;
	req[0] = (struct lb_output_request){ "--json", cfg->json_path };
}

/* One table: a progress step, the measurement, its printout.  0, or 1
 * after the error line. */
static int run_table(struct lb_run *run, struct lb_progress *pg, const char *table,
		     const char *what, int (*measure)(struct lb_run *))
{
	const struct lb_slab_config *cfg = run->cfg;
	lb_progress_step(pg, "slab: %s (%s), %u repeat%s", table, what, cfg->repeat,
			 cfg->repeat == 1 ? "" : "s");
	int err = measure(run);
	lb_progress_clear(pg);
	if (err) {
		fprintf(stderr, "lockbench: slab: %s failed: %s\n", table, strerror(err));
		return 1;
	}
	fflush(run->out);
	lb_progress_step_done(pg);
	return 0;
}

static int table_a(struct lb_run *run)
{
	const struct lb_slab_config *cfg = run->cfg;
	struct slab_results *res = run->results;
	int err = lb_slab_run_protect(cfg, res->pr);
	if (!err)
		lb_slab_print_protect(run->out, cfg, run->rec.host.cpu_model, res->pr);
	return err;
}

static int table_b(struct lb_run *run)
{
	struct slab_results *res = run->results;
	int err = lb_slab_run_bulk(run->cfg, res->br);
	if (!err)
		lb_slab_print_bulk(run->out, run->cfg, res->br);
	return err;
}

static int slab_run(struct lb_run *run)
{
	const struct lb_slab_config *cfg = run->cfg;
	int err = lb_slab_pin(cfg);
	if (err) {
		fprintf(stderr, "lockbench: slab: cannot pin to CPU %d: %s\n", cfg->cpu, strerror(err));
		return 1;
	}
	lb_slab_print_header(run->out, cfg, run->rec.host.cpu_model);
	fflush(run->out);
	struct slab_results *res = calloc(1, sizeof(*res));
	run->results = res;
	if (!res) {
		fprintf(stderr, "lockbench: slab: out of memory\n");
		return 1;
	}
	res->pr = cfg->table_protect ? &res->protect : NULL;
	res->br = cfg->table_bulk ? &res->bulk : NULL;
	struct lb_progress pg;
	lb_progress_begin(&pg, stderr, cfg->quiet, (res->pr != NULL) + (res->br != NULL), 0, -1);
	int rc = res->pr && run_table(run, &pg, "Table A", "protection cost", table_a);
	if (!rc && res->br && !lb_slab_stop_requested())
		rc = run_table(run, &pg, "Table B", "bulk API", table_b);
	lb_progress_end(&pg);
	return rc;
}

static int slab_report(struct lb_run *run)
{
	struct slab_results *res = run->results;
	if (run->rec.interrupted_by)
		fprintf(stderr, "lockbench: slab: interrupted by SIG%s: reporting the repeats that "
			"finished\n", sigabbrev_np(run->rec.interrupted_by));
	if (run->file[0].fp)
		lb_slab_write_json(run->file[0].fp, run->cfg, &run->rec, res->pr, res->br);
	return 0;
}

const struct lb_workload lb_workload_slab = {
	.name = "slab",
	.summary = "allocator fast paths: per-CPU protection cost (rseq, signal mask...), bulk API",
	.signals = LB_SIGNALS_FINISH,
	.signal_flags = SA_RESTART, /* the measurements' system calls are not cut short */
	.ignore_sigpipe = true,
	LB_WORKLOAD_PARTS(slab, struct lb_slab_config),
};
