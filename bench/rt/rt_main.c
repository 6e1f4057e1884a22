/* SPDX-License-Identifier: MIT */
/*
 * rt_main.c - `lockbench rt`: parse, state the facts, run every (repeat,
 * lock) pair with the repeats interleaved between locks, then print each
 * lock's cyclictest and perf-stat lines, the --compare table, and the files.
 */
#include "rt.h"
#include "workload.h"
#include "lb_cli.h"
#include "lb_outfile.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int lb_cmd_rt(int argc, char **argv)
{
	struct lb_rt_config cfg;
	struct lb_rt_facts facts;
	struct lb_outfile json = { 0 }, csv = { 0 };
	int status = 0;

	lb_rt_parse(argc, argv, &cfg);
	lb_rt_watchdog_check_floor(&cfg);
	/* Outputs first: a bad path exits 2 before anything is allocated. */
	lb_outfile_refuse_same("--json", cfg.json_path, "--csv", cfg.csv_path);
	if (cfg.json_path)
		lb_outfile_open_or_exit("--json", cfg.json_path, &json, NULL);
	if (cfg.csv_path)
		lb_outfile_open_or_exit("--csv", cfg.csv_path, &csv, &json);
	FILE *out = lb_outfile_report_stream(&json, &csv);
	char *joined = lb_cli_join_args(argc, argv);
	cfg.argv_joined = joined ? joined : "lockbench rt";
	/* INT, TERM, HUP, QUIT: remove the output temporaries, then die of it. */
	lb_outfile_unlink_on_signals();
	signal(SIGPIPE, SIG_IGN); /* a dead receiver shows as an I/O error, not a kill */

	lb_rt_facts_get(&cfg, &facts);
	if (lb_rt_watchdog_start(&cfg, facts.fifo_permitted)) {
		fprintf(stderr, "lockbench: rt: cannot start the watchdog thread\n");
		return 1;
	}
	lb_rt_print_header(out, &cfg, &facts);
	if (cfg.groups) {
		fprintf(out, "Running in %s mode with %u groups using %u file descriptors each "
		       "(== %u tasks)\n", cfg.process_mode ? "process" : "threaded", cfg.groups,
		       2 * cfg.fds, 2 * cfg.groups * cfg.fds);
		fprintf(out, "Each sender will pass %u messages of %u bytes\n", cfg.loops, cfg.datasize);
	}
	fflush(out);

	struct lb_rt_run *runs[LB_RT_MAX_LOCKS] = { 0 };
	struct lb_rt_thread_stats *merged[LB_RT_MAX_LOCKS] = { 0 };
	size_t done = 0; /* repeats completed for every lock */
	for (size_t l = 0; l < cfg.nlocks; l++) {
		runs[l] = calloc(cfg.repeat, sizeof(**runs));
		merged[l] = calloc(cfg.rt_threads ? cfg.rt_threads : 1, sizeof(**merged));
		if (!runs[l] || !merged[l]) {
			fprintf(stderr, "lockbench: rt: out of memory\n");
			return 1;
		}
		for (unsigned int i = 0; i < cfg.rt_threads; i++) {
			merged[l][i].alloc_hist = malloc(sizeof(struct lb_hist));
			if (merged[l][i].alloc_hist)
				lb_hist_init(merged[l][i].alloc_hist);
			merged[l][i].wake_hist = malloc(sizeof(struct lb_hist));
			if (merged[l][i].wake_hist)
				lb_hist_init(merged[l][i].wake_hist);
			if (cfg.histogram_us) {
				merged[l][i].hist = calloc(cfg.histogram_us, sizeof(uint64_t));
				merged[l][i].overflow_cycles = calloc(cfg.histogram_us, sizeof(uint64_t));
			}
		}
	}
	for (unsigned int r = 0; r < cfg.repeat && !status; r++) {
		for (size_t l = 0; l < cfg.nlocks && !status; l++) {
			struct lb_rt_run *run = &runs[l][r];
			int err = lb_rt_run_one(&cfg, &facts, cfg.locks[l], r, run);
			if (err > 0) {
				fprintf(stderr, "lockbench: rt: list_lock '%s': the run could not start: "
					"%s\n", cfg.locks[l]->name, strerror(err));
				status = 1;
				break;
			}
			if (err < 0)
				status = 1; /* invariants failed: reported by the run */
			if (cfg.nlocks == 1 && cfg.groups) {
				lb_rt_print_run_line(out, run);
				fflush(out);
			} else if (!cfg.quiet && cfg.groups) {
				fprintf(stderr, "lockbench: rt: [%u/%u] %-12s ", r + 1, cfg.repeat,
					cfg.locks[l]->name);
				lb_rt_print_run_line(stderr, run);
			}
			for (unsigned int i = 0; i < run->nrt; i++)
				lb_rt_stats_merge(&merged[l][i], &run->rt[i], cfg.histogram_us);
		}
		if (!status)
			done = r + 1;
	}
	if (done) {
		for (size_t l = 0; l < cfg.nlocks; l++)
			lb_rt_print_lock_block(out, &cfg, runs[l], done, merged[l], cfg.rt_threads);
		if (cfg.compare)
			lb_rt_print_compare(out, &cfg, runs, done, merged, cfg.rt_threads);
	}
	if (status) {
		fprintf(stderr, "lockbench: rt: FAILED: the allocator's invariants do not hold with "
			"list_lock '%s' (or a run could not start); no result files written\n",
			cfg.locks[0]->name);
		if (cfg.json_path)
			lb_outfile_abort(&json);
		if (cfg.csv_path)
			lb_outfile_abort(&csv);
	} else {
		if (cfg.json_path) {
			lb_rt_write_json(json.fp, &cfg, &facts, runs, done, merged, cfg.rt_threads, false);
			status |= lb_outfile_commit_or_say(&json, "rt", "--json", cfg.json_path) ? 1 : 0;
		}
		if (cfg.csv_path) {
			lb_rt_write_csv(csv.fp, &cfg, runs, done);
			status |= lb_outfile_commit_or_say(&csv, "rt", "--csv", cfg.csv_path) ? 1 : 0;
		}
	}
	fflush(out);
	for (size_t l = 0; l < cfg.nlocks; l++) {
		for (unsigned int r = 0; r < cfg.repeat; r++)
			lb_rt_run_free(&runs[l][r]);
		for (unsigned int i = 0; i < cfg.rt_threads; i++) {
			free(merged[l][i].alloc_hist);
			free(merged[l][i].wake_hist);
			free(merged[l][i].hist);
			free(merged[l][i].overflow_cycles);
		}
		free(runs[l]);
		free(merged[l]);
	}
	free(joined);
	return status;
}

const struct lb_workload lb_workload_rt = {
	.name = "rt",
	.summary = "hackbench + cyclictest on a SLUB-like allocator: raw vs PI list_lock",
	.main = lb_cmd_rt,
};
