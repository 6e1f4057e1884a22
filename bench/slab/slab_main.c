/* SPDX-License-Identifier: MIT */
/*
 * slab_main.c - `lockbench slab`: parse, open the output before anything
 * runs, run Table A and/or Table B pinned, print them, write the JSON.
 *
 * An interrupt (SIGINT, SIGTERM, SIGHUP, SIGQUIT) stops at the end of the
 * measurement in progress; the repeats that finished are printed and
 * written (JSON "interrupted": true) and the exit status is 128 + the
 * signal.  A second signal leaves at once, removing the temporary file.
 */
#include "slab.h"
#include "workload.h"
#include "lb_cli.h"
#include "lb_hostinfo.h"
#include "lb_outfile.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

static void on_stop_signal(int sig)
{
	if (lb_slab_stop_requested()) {
		lb_outfile_unlink_pending(); /* the second one: leave now */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	lb_slab_request_stop(sig);
}

static void catch_stop_signals(void)
{
	lb_stop_signals_catch(on_stop_signal, SA_RESTART, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static int lb_cmd_slab(int argc, char **argv)
{
	struct lb_slab_config cfg;
	struct lb_outfile json = { 0 };
	lb_slab_parse(argc, argv, &cfg);
	if (cfg.json_path)
		lb_outfile_open_or_exit("--json", cfg.json_path, &json, NULL);
	struct lb_outfile unused = { 0 };
	FILE *out = lb_outfile_report_stream(&json, &unused);
	char *joined = lb_cli_join_args(argc, argv);
	cfg.argv_joined = joined ? joined : "lockbench slab";
	struct lb_hostinfo host;
	lb_hostinfo_get(&host);
	snprintf(cfg.cpu_model, sizeof(cfg.cpu_model), "%s", host.cpu_model);
	catch_stop_signals();

	int err = lb_slab_pin(&cfg);
	if (err) {
		fprintf(stderr, "lockbench: slab: cannot pin to CPU %d: %s\n", cfg.cpu, strerror(err));
		if (cfg.json_path)
			lb_outfile_abort(&json);
		free(joined);
		return 1;
	}
	lb_slab_print_header(out, &cfg);
	fflush(out);
	struct lb_slab_protect_result *pr = cfg.table_protect ? calloc(1, sizeof(*pr)) : NULL;
	struct lb_slab_bulk_result *br = cfg.table_bulk ? calloc(1, sizeof(*br)) : NULL;
	int status = 0;
	if ((cfg.table_protect && !pr) || (cfg.table_bulk && !br)) {
		fprintf(stderr, "lockbench: slab: out of memory\n");
		status = 1;
	}
	if (!status && pr) {
		if (!cfg.quiet)
			fprintf(stderr, "lockbench: slab: Table A (protection cost)...\n");
		err = lb_slab_run_protect(&cfg, pr);
		if (err) {
			fprintf(stderr, "lockbench: slab: Table A failed: %s\n", strerror(err));
			status = 1;
		} else {
			lb_slab_print_protect(out, &cfg, pr);
		}
		fflush(out);
	}
	if (!status && br && !lb_slab_stop_requested()) {
		if (!cfg.quiet)
			fprintf(stderr, "lockbench: slab: Table B (bulk API)...\n");
		err = lb_slab_run_bulk(&cfg, br);
		if (err) {
			fprintf(stderr, "lockbench: slab: Table B failed: %s\n", strerror(err));
			status = 1;
		} else {
			lb_slab_print_bulk(out, &cfg, br);
		}
		fflush(out);
	}
	int stopped = lb_slab_stop_requested();
	if (stopped)
		fprintf(stderr, "lockbench: slab: interrupted by SIG%s: reporting the repeats that "
			"finished\n", sigabbrev_np(stopped));
	if (cfg.json_path) {
		if (status) {
			lb_outfile_abort(&json);
		} else {
			lb_slab_write_json(json.fp, &cfg, pr, br, stopped);
			if (lb_outfile_commit_or_say(&json, "slab", "--json", cfg.json_path))
				status = 1;
		}
	}
	free(pr);
	free(br);
	free(joined);
	if (!status && stopped)
		status = 128 + stopped;
	return status;
}

const struct lb_workload lb_workload_slab = {
	.name = "slab",
	.summary = "allocator fast paths: per-CPU protection cost (rseq, signal mask...), bulk API",
	.main = lb_cmd_slab,
};
