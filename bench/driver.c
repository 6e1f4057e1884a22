/* SPDX-License-Identifier: MIT */
/*
 * driver.c - the one lifecycle every workload runs through (workload.h):
 * parse, open the outputs, signal policy, run, host facts, report, commit
 * or discard, exit status.
 */
#include "workload.h"
#include "lb_cli.h"
#include "lb_stop.h"
#include "lb_steal.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* LB_SIGNALS_FINISH: the first signal asks the run to stop; a second one
 * before the outputs are written leaves at once, with nothing half-written
 * left behind. */
static void on_stop_signal(int sig)
{
	if (!lb_stop_signal()) {
		lb_stop_request(sig);
		return;
	}
	lb_outfile_die_of_signal(sig);
}

static void install_signal_policy(const struct lb_workload *w)
{
	if (w->signals == LB_SIGNALS_END)
		lb_outfile_unlink_on_signals();
	else
		lb_stop_signals_catch(on_stop_signal, w->signal_flags, NULL);
	if (w->ignore_sigpipe)
		signal(SIGPIPE, SIG_IGN); /* a closed reader shows as a write error, not a kill */
}

/* From the end of the run on, the stop signals wait until the process
 * exits: the outputs are written completely, then the status says a signal
 * ended the run. */
static void hold_stop_signals(void)
{
	sigset_t set;
	lb_stop_signal_set(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* Outputs first: two naming one file, or a path that cannot be written,
 * exit 2 before anything runs. */
static void open_outputs(const struct lb_workload *w, struct lb_run *run)
{
	if (w->outputs)
		w->outputs(run->cfg, run->req);
	for (size_t i = 0; i < LB_WORKLOAD_MAX_OUTPUTS; i++)
		for (size_t k = i + 1; k < LB_WORKLOAD_MAX_OUTPUTS; k++)
			if (run->req[i].path && run->req[k].path)
				lb_outfile_refuse_same(run->req[i].option, run->req[i].path,
						       run->req[k].option, run->req[k].path);
	for (size_t i = 0; i < LB_WORKLOAD_MAX_OUTPUTS; i++)
		if (run->req[i].path)
			lb_outfile_open_or_exit(run->req[i].option, run->req[i].path, &run->file[i],
						i ? &run->file[0] : NULL);
	run->out = lb_outfile_report_stream(&run->file[0], &run->file[1]);
}

static void discard_outputs(struct lb_run *run)
{
	for (size_t i = 0; i < LB_WORKLOAD_MAX_OUTPUTS; i++)
		lb_outfile_abort(&run->file[i]); /* a no-op for one never opened */
}

static int commit_outputs(const struct lb_workload *w, struct lb_run *run)
{
	int rc = 0;
	for (size_t i = 0; i < LB_WORKLOAD_MAX_OUTPUTS; i++)
		if (run->file[i].fp && lb_outfile_commit_or_say(&run->file[i], w->name,
								 run->req[i].option,
								 run->req[i].path))
			rc = 1;
	return rc;
}

int lb_driver_run(const struct lb_workload *w, int argc, char **argv)
{
	if (w->main)
		return w->main(argc, argv);
	void *cfg = calloc(1, w->config_size);
	if (!cfg) {
		fprintf(stderr, "%s: %s: out of memory\n", lb_cli_prog(), w->name);
		return 1;
	}
	w->parse(argc, argv, cfg);
	struct lb_run run = { .cfg = cfg };
	char *joined = lb_cli_join_args(argc, argv);
	run.rec.command = joined ? joined : w->name;
	open_outputs(w, &run);
	install_signal_policy(w);
	/* Other work on the CPUs makes every figure vary: the reports say so. */
	run.rec.load_before = lb_load_average_now();
	/* 11 reads 10 ms apart: only for the workloads that use the figure. */
	run.rec.runnable_before = w->runnable_before ? lb_runnable_others() : -1;
	lb_hostinfo_get(&run.rec.host); /* static facts: the run's headers print them */

	/* Steal time over the run: vCPUs a hypervisor took away (the reports
	 * print it when it is not zero). */
	int64_t steal_before = lb_steal_ticks_now();
	int run_failed = w->run(&run);
	run.rec.steal_s = lb_steal_seconds(steal_before, lb_steal_ticks_now());
	if (w->signals == LB_SIGNALS_FINISH)
		hold_stop_signals();
	run.rec.interrupted_by = lb_stop_signal();
	int write_failed = 0;
	if (!run_failed)
		write_failed = w->report(&run) || commit_outputs(w, &run);
	discard_outputs(&run); /* what was not committed: a failure on the way */
	int rc = run_failed || write_failed ? 1 : 0;
	/* Stopped by a signal: the shell's convention for "killed by", unless
	 * writing what finished failed. */
	if (run.rec.interrupted_by && !write_failed)
		rc = 128 + run.rec.interrupted_by;
	if (run.results && w->release)
		w->release(&run);
	free(run.results);
	free(joined);
	free(cfg);
	return rc;
}
