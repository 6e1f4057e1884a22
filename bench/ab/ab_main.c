/* SPDX-License-Identifier: MIT */
/*
 * ab_main.c - `lockbench ab A B`: parse, open the output, run the
 * interleaved slices, report.  An interrupt (SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT) ends the slice in progress; the finished blocks are reported and
 * the exit status is 128 + the signal.  The JSON is written atomically.
 */
#include "ab.h"
#include "commands.h"
#include "lb_cli.h"
#include "lb_hostinfo.h"
#include "lb_outfile.h"
#include "lb_time.h"
#include "lb_work.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

static void on_stop_signal(int sig)
{
	lb_bench_request_stop(sig); /* the slice returns EINTR; finished blocks stay */
}

int lb_cmd_ab(int argc, char **argv)
{
	struct lb_ab_config cfg;
	struct lb_outfile json = { 0 };
	struct lb_ab_cell cells[LB_AB_MAX_CELLS];
	lb_ab_parse(argc, argv, &cfg);
	if (cfg.json_path)
		lb_outfile_open_or_exit("--json", cfg.json_path, &json, NULL);
	char *joined = lb_cli_join_args(argc, argv);
	cfg.argv_joined = joined ? joined : "ab";
	/* No SA_RESTART: the signal must cut the slice's sleep short. */
	lb_stop_signals_catch(on_stop_signal, 0, NULL);
	cfg.load_before = lb_load_average_now();
	cfg.runnable_before = lb_runnable_others();
	lb_cycles_per_ns(); /* calibrations before the first slice */
	lb_work_ns_per_iter();

	size_t n = cfg.run.nthread_counts;
	int err = lb_ab_run(&cfg, cells);
	cfg.interrupted_by = lb_bench_stop_signal();
	int rc = 0;
	bool every_cell = n > 0;
	for (size_t i = 0; i < n; i++)
		every_cell &= cells[i].nblocks >= 1;
	if (err || !every_cell) {
		if (!err)
			fprintf(stderr, "%s: ab: a cell finished no block: nothing to report\n",
				lb_cli_prog());
		lb_outfile_abort(&json);
		rc = cfg.interrupted_by ? 128 + cfg.interrupted_by : 1;
		goto out;
	}
	struct lb_hostinfo host;
	lb_hostinfo_get(&host);
	/* Other work runnable now, not the 1-min average: that remembers the
	 * previous run of a script's loop of `ab`s (2 CPUs busy) for a minute. */
	lb_ab_analyze(cells, n, cfg.metric,
		      cfg.runnable_before >= 0 && host.ncpus_online > 0
			      ? cfg.runnable_before / host.ncpus_online : -1);
	struct lb_outfile none = { 0 };
	lb_ab_report_table(lb_outfile_report_stream(&json, &none), &cfg, &host, cells, n);
	if (cfg.json_path) {
		lb_ab_report_json(json.fp, &cfg, &host, cells, n);
		if (lb_outfile_commit_or_say(&json, "ab", "--json", cfg.json_path))
			rc = 1;
	}
	if (cfg.interrupted_by)
		rc = 128 + cfg.interrupted_by;
out:
	lb_ab_cells_free(cells, n);
	free(joined);
	return rc;
}
