/* SPDX-License-Identifier: MIT */
/*
 * ab_main.c - `lockbench ab A B` as stages of the driver (bench/workload.h):
 * parse, run the interleaved slices, analyse and report.  An interrupt
 * (SIGINT, SIGTERM, SIGHUP, SIGQUIT) ends the slice in progress; the
 * finished blocks are reported and the exit status is 128 + the signal.
 * The JSON is written atomically.
 */
#include "ab.h"
#include "workload.h"
#include "lb_cli.h"
#include "lb_time.h"
#include "lb_work.h"

#include <stdlib.h>

static void ab_parse(int argc, char **argv, void *cfg)
{
	lb_ab_parse(argc, argv, cfg);
}

static void ab_outputs(const void *cfg_, struct lb_output_request req[LB_WORKLOAD_MAX_OUTPUTS])
{
	const struct lb_ab_config *cfg = cfg_;
	req[0] = (struct lb_output_request){ "--json", cfg->json_path };
}

static int ab_run(struct lb_run *run)
{
	struct lb_ab_results *res = calloc(1, sizeof(*res));
	if (!res) {
		fprintf(stderr, "%s: ab: out of memory\n", lb_cli_prog());
		return 1;
	}
	run->results = res;
	lb_cycles_per_ns(); /* calibrations before the first slice */
	lb_work_ns_per_iter();
	if (lb_ab_run(run->cfg, res))
		return 1;
	for (size_t i = 0; i < res->n; i++)
		if (res->cells[i].nblocks < 1) {
			fprintf(stderr, "%s: ab: a cell finished no block: nothing to report\n",
				lb_cli_prog());
			return 1;
		}
	return res->n ? 0 : 1;
}

static int ab_report(struct lb_run *run)
{
	const struct lb_ab_config *cfg = run->cfg;
	const struct lb_run_record *rec = &run->rec;
	struct lb_ab_results *res = run->results;
	/* Other work runnable now, not the 1-min average: that remembers the
	 * previous run of a script's loop of `ab`s (2 CPUs busy) for a minute. */
	lb_ab_analyze(res->cells, res->n, cfg->metric,
		      rec->runnable_before >= 0 && rec->host.ncpus_online > 0
			      ? rec->runnable_before / rec->host.ncpus_online : -1);
	lb_ab_report_table(run->out, cfg, rec, res);
	if (run->file[0].fp)
		lb_ab_report_json(run->file[0].fp, cfg, rec, res);
	return 0;
}

static void ab_release(struct lb_run *run)
{
	struct lb_ab_results *res = run->results;
	lb_ab_cells_free(res->cells, res->n);
}

const struct lb_workload lb_workload_ab = {
	.name = "ab",
	.summary = "A vs B in one process: interleaved slices, paired ratio by blocks, verdict",
	.signals = LB_SIGNALS_FINISH,
	.signal_flags = 0, /* no SA_RESTART: the signal must cut the slice's sleep short */
	.runnable_before = true, /* withholds contended verdicts on a busy machine */
	LB_WORKLOAD_PARTS(ab, struct lb_ab_config),
	.release = ab_release,
};
