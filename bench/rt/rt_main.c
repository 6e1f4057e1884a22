/* SPDX-License-Identifier: MIT */
/*
 * rt_main.c - `lockbench rt` as stages of the driver (bench/workload.h):
 * state the facts, run every (repeat,
 * lock) pair with the repeats interleaved between locks, then print each
 * lock's cyclictest and perf-stat lines, the --compare table, and the files.
 */
#include "rt.h"
#include "workload.h"
#include "lb_progress.h"
#include "lb_steal.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

struct rt_results {
	struct lb_rt_facts facts;
	struct lb_rt_run *runs[LB_RT_MAX_LOCKS];             /* [lock][repeat] */
	struct lb_rt_thread_stats *merged[LB_RT_MAX_LOCKS];  /* [lock][RT thread] */
	size_t done;                                         /* repeats completed for every lock */
};

static void rt_parse(int argc, char **argv, void *cfg)
{
	lb_rt_parse(argc, argv, cfg);
	lb_rt_watchdog_check_floor(cfg);
}

static void rt_outputs(const void *cfg_, struct lb_output_request req[LB_WORKLOAD_MAX_OUTPUTS])
{
	const struct lb_rt_config *cfg = cfg_;
	req[0] = (struct lb_output_request){ "--json", cfg->json_path };
	req[1] = (struct lb_output_request){ "--csv", cfg->csv_path };
}

static int alloc_lock(const struct lb_rt_config *cfg, struct rt_results *res, size_t l)
{
	res->runs[l] = calloc(cfg->repeat, sizeof(**res->runs));
	res->merged[l] = calloc(cfg->rt_threads ? cfg->rt_threads : 1, sizeof(**res->merged));
	if (!res->runs[l] || !res->merged[l])
		return -1;
	for (unsigned int i = 0; i < cfg->rt_threads; i++) {
		struct lb_rt_thread_stats *m = &res->merged[l][i];
		m->alloc_hist = malloc(sizeof(struct lb_hist));
		if (m->alloc_hist)
			lb_hist_init(m->alloc_hist);
		m->wake_hist = malloc(sizeof(struct lb_hist));
		if (m->wake_hist)
			lb_hist_init(m->wake_hist);
		if (cfg->histogram_us) {
			m->hist = calloc(cfg->histogram_us, sizeof(uint64_t));
			m->overflow_cycles = calloc(cfg->histogram_us, sizeof(uint64_t));
		}
	}
	return 0;
}

static void print_start(FILE *out, const struct lb_rt_config *cfg, const struct lb_rt_facts *f)
{
	lb_rt_print_header(out, cfg, f);
	if (cfg->groups) {
		fprintf(out, "Running in %s mode with %u groups using %u file descriptors each "
		       "(== %u tasks)\n", cfg->process_mode ? "process" : "threaded", cfg->groups,
		       2 * cfg->fds, 2 * cfg->groups * cfg->fds);
		fprintf(out, "Each sender will pass %u messages of %u bytes\n", cfg->loops, cfg->datasize);
	}
	fflush(out);
}

/* Every (repeat, lock) pair, the repeats interleaved between locks.  0, or
 * 1 when a run could not start or the invariants failed (reported). */
static int run_repeats(const struct lb_rt_config *cfg, FILE *out, struct rt_results *res,
		       struct lb_progress *pg)
{
	int status = 0;
	for (unsigned int r = 0; r < cfg->repeat && !status; r++) {
		for (size_t l = 0; l < cfg->nlocks && !status; l++) {
			struct lb_rt_run *run = &res->runs[l][r];
			lb_progress_step(pg, "rt: %s, run %u/%u", cfg->locks[l]->name, r + 1,
					 cfg->repeat);
			int err = lb_rt_run_one(cfg, &res->facts, cfg->locks[l], r, run);
			lb_progress_clear(pg);
			if (err > 0) {
				fprintf(stderr, "lockbench: rt: list_lock '%s': the run could not start: "
					"%s\n", cfg->locks[l]->name, strerror(err));
				status = 1;
				break;
			}
			if (err < 0)
				status = 1; /* invariants failed: reported by the run */
			if (cfg->nlocks == 1 && cfg->groups) {
				lb_rt_print_run_line(out, run);
				fflush(out);
			}
			if (cfg->groups)
				lb_progress_step_done_note(pg, "hackbench Time %.3f s", run->elapsed_s);
			else
				lb_progress_step_done(pg);
			for (unsigned int i = 0; i < run->nrt; i++)
				lb_rt_stats_merge(&res->merged[l][i], &run->rt[i], cfg->histogram_us);
		}
		if (!status)
			res->done = r + 1;
	}
	return status;
}

static int rt_run(struct lb_run *run)
{
	const struct lb_rt_config *cfg = run->cfg;
	struct rt_results *res = calloc(1, sizeof(*res));
	run->results = res;
	if (!res) {
		fprintf(stderr, "lockbench: rt: out of memory\n");
		return 1;
	}
	lb_rt_facts_get(cfg, &res->facts);
	res->facts.command = run->rec.command;
	if (lb_rt_watchdog_start(cfg, res->facts.fifo_permitted)) {
		fprintf(stderr, "lockbench: rt: cannot start the watchdog thread\n");
		return 1;
	}
	print_start(run->out, cfg, &res->facts);
	for (size_t l = 0; l < cfg->nlocks; l++)
		if (alloc_lock(cfg, res, l)) {
			fprintf(stderr, "lockbench: rt: out of memory\n");
			return 1;
		}
	struct lb_progress pg;
	lb_progress_begin(&pg, stderr, cfg->quiet, cfg->repeat * (unsigned int)cfg->nlocks,
			  cfg->groups ? 0 : cfg->repeat * cfg->nlocks * cfg->duration_ns, -1);
	int status = run_repeats(cfg, run->out, res, &pg);
	lb_progress_end(&pg);
	if (res->done) {
		for (size_t l = 0; l < cfg->nlocks; l++)
			lb_rt_print_lock_block(run->out, cfg, &res->facts, res->runs[l], res->done,
					       res->merged[l], cfg->rt_threads);
		if (cfg->compare)
			lb_rt_print_compare(run->out, cfg, res->runs, res->done, res->merged,
					    cfg->rt_threads);
	}
	if (status)
		fprintf(stderr, "lockbench: rt: FAILED: the allocator's invariants do not hold with "
			"list_lock '%s' (or a run could not start); no result files written\n",
			cfg->locks[0]->name);
	fflush(run->out);
	return status;
}

static int rt_report(struct lb_run *run)
{
	const struct lb_rt_config *cfg = run->cfg;
	struct rt_results *res = run->results;
	res->facts.steal_s = run->rec.steal_s;
	lb_steal_note(run->out, "# ", run->rec.steal_s);
	if (run->file[0].fp)
		lb_rt_write_json(run->file[0].fp, cfg, &res->facts, res->runs, res->done, res->merged,
				 cfg->rt_threads, false);
	if (run->file[1].fp)
		lb_rt_write_csv(run->file[1].fp, cfg, res->runs, res->done);
	return 0;
}

static void rt_release(struct lb_run *run)
{
	const struct lb_rt_config *cfg = run->cfg;
	struct rt_results *res = run->results;
	for (size_t l = 0; l < cfg->nlocks; l++) {
		for (unsigned int r = 0; res->runs[l] && r < cfg->repeat; r++)
			lb_rt_run_free(&res->runs[l][r]);
		for (unsigned int i = 0; res->merged[l] && i < cfg->rt_threads; i++) {
			free(res->merged[l][i].alloc_hist);
			free(res->merged[l][i].wake_hist);
			free(res->merged[l][i].hist);
			free(res->merged[l][i].overflow_cycles);
		}
		free(res->runs[l]);
		free(res->merged[l]);
	}
}

const struct lb_workload lb_workload_rt = {
	.name = "rt",
	.summary = "hackbench + cyclictest on a SLUB-like allocator: raw vs PI list_lock",
	.signals = LB_SIGNALS_END, /* a cut run is worth nothing: temporaries removed */
	.ignore_sigpipe = true,
	LB_WORKLOAD_PARTS(rt, struct lb_rt_config),
	.release = rt_release,
};
