/* SPDX-License-Identifier: MIT */
/* ab_opts.c - `lockbench ab` options: two locks, the cells, slice and budget. */
#include "ab.h"
#include "lb_cli.h"
#include "lb_opt.h"
#include "lb_registry.h"
#include "lb_time.h"
#include "lb_work.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* In enum lb_ab_metric's order. */
static const char *const metric_names[] = { "auto", "wall", "cpu", NULL };

/* The configuration and what the command line holds until it is resolved. */
struct ab_args {
	struct lb_ab_config cfg;
};

static const struct lb_lock_ops *resolve(const char *which, const char *name)
{
	char accepted[2048];
	lb_lock_names(accepted, sizeof(accepted), false);
	const struct lb_lock_ops *ops = lb_lock_find(name); /* a plugin path loads here */
	if (!ops)
		lb_usage_error("%s: unknown lock '%s'; accepted: %s, or a plugin path (./x.so)",
			       which, name, accepted);
	if (ops->unsupported)
		lb_usage_error("%s: lock '%s' cannot run here (%s)", which, name, ops->unsupported);
	return ops;
}

static int parse_pin(const struct lb_opt *o, const char *arg, void *base)
{
	return lb_pin_parse(arg, lb_opt_field(o, base)) ? -1 : 0;
}

#define T struct ab_args
static const struct lb_opt ab_opts[] = {
	{ .name = "threads", .short_name = 't', .kind = LB_OPT_UINT_LIST, .arg = "LIST",
	  .help = "the cells' thread counts (default 1,NCPU)", .min = 1,
	  .max = LB_LOOP_MAX_THREADS, .cap = LB_AB_MAX_CELLS,
	  .accepted = "counts 1.." LB_OPT_STR(LB_LOOP_MAX_THREADS) " as N, A-B or A-B:STEP, at "
		      "most " LB_OPT_STR(LB_AB_MAX_CELLS),
	  .offset = LB_OPT_AT(T, cfg.threads, unsigned int *),
	  .count_offset = LB_OPT_AT(T, cfg.nthread_counts, size_t) },
	{ .name = "duration", .short_name = 'd', .kind = LB_OPT_DURATION, .arg = "TIME",
	  .help = "time for all slices (default 4s; 100ms..1h)", .unit_ns = LB_NS_PER_S,
	  .min = 100 * LB_NS_PER_MS, .max = 3600 * LB_NS_PER_S,
	  .accepted = "100ms..1h, e.g. 4s, 500ms", .offset = LB_OPT_AT(T, cfg.budget_ns, uint64_t) },
	{ .name = "slice", .kind = LB_OPT_DURATION, .arg = "TIME",
	  .help = "one slice (default 10ms; 5ms..1s)", .unit_ns = LB_NS_PER_MS,
	  .min = 5 * LB_NS_PER_MS, .max = LB_NS_PER_S, .accepted = "5ms..1s, e.g. 10ms",
	  .offset = LB_OPT_AT(T, cfg.loop.duration_ns, uint64_t) },
	{ .name = "blocks", .kind = LB_OPT_UINT, .arg = "N",
	  .help = "exactly N ABBA blocks per cell instead (" LB_OPT_STR(LB_AB_MIN_BLOCKS) ".." LB_OPT_STR(
		  LB_AB_MAX_BLOCKS) ")",
	  .min = LB_AB_MIN_BLOCKS, .max = LB_AB_MAX_BLOCKS,
	  .offset = LB_OPT_AT(T, cfg.blocks, unsigned int) },
	{ .name = "metric", .kind = LB_OPT_ENUM, .arg = "M",
	  .help = "the paired figure: auto (default: cpu at 1 thread, wall above),\n"
		  "wall (ns/op) or cpu (CPU ns/op: time a thread was not run costs nothing)",
	  .def = "auto", .choices = metric_names, .offset = LB_OPT_AT(T, cfg.metric, int) },
	LB_OPT_ROW_WORK(T, "cs", cfg.loop.cs, "critical-section work: N loop iterations, or a\n"
					      "time with unit ns/us/ms, as bench's (default 0)"),
	LB_OPT_ROW_WORK(T, "par", cfg.loop.par, "work outside the lock, same units (default 0)"),
	{ .name = "cs-lines", .kind = LB_OPT_UINT, .arg = "K",
	  .help = "shared lines written per critical section (default 1)", .min = 0,
	  .max = LB_LOOP_MAX_CS_LINES, .offset = LB_OPT_AT(T, cfg.loop.cs_lines, unsigned int) },
	{ .name = "pin", .kind = LB_OPT_CUSTOM, .arg = "POLICY",
	  .help = "none, compact, scatter or a CPU list (default none)", .parse = parse_pin,
	  .accepted = "none, compact, scatter, or a list of allowed CPUs",
	  .offset = LB_OPT_AT(T, cfg.loop.pin, struct lb_pin) },
	LB_OPT_ROW_JSON(T, cfg.json_path, "write the result (schema lockbench-ab-1)"),
	{ .name = "quiet", .short_name = 'q', .kind = LB_OPT_FLAG, .help = "no progress on stderr",
	  .offset = LB_OPT_AT(T, cfg.quiet, bool) },
	LB_OPT_ROW_WIDE(T, cfg.wide),
	LB_OPT_ROW_HELP,
	LB_OPT_ROW_END,
};
#undef AB_ITERS_ROW
#undef T

const struct lb_opt_cmd lb_ab_cmd = {
	.name = "lockbench ab",
	.usage = "usage: lockbench ab [options] A B\n"
		 "\n"
		 "A paired A/B experiment in one process: short slices of A and B in ABBA\n"
		 "order over the cells; per cell a ratio B/A with an interval that takes\n"
		 "blocks as the unit, the verdict at the same level (the interval excluding\n"
		 "1) and the change the cell could see; at 1 thread the headline is the\n"
		 "locks' own cost.  A and B are lock names or plugin paths (./mylock.so).\n"
		 "At the defaults it takes about 5 s (measured on the 2-CPU guest at load 74).\n"
		 "\n",
	.opts = ab_opts,
	.operands = true,
};

/* 1 and NCPU: no oversubscription by default (one CPU: 1 and 4, the
 * oversubscribed count, so that a contended cell exists). */
static void default_threads(struct lb_ab_config *cfg)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	if (ncpu > LB_LOOP_MAX_THREADS / 4)
		ncpu = LB_LOOP_MAX_THREADS / 4;
	cfg->threads[0] = 1;
	cfg->threads[1] = ncpu > 1 ? (unsigned int)ncpu : 4;
	cfg->nthread_counts = 2;
}

void lb_ab_parse(int argc, char **argv, struct lb_ab_config *cfg)
{
	struct ab_args a = { 0 };
	struct lb_opt_seen seen;

	lb_loop_params_default(&a.cfg.loop);
	default_threads(&a.cfg);
	a.cfg.loop.duration_ns = LB_AB_DEFAULT_SLICE_NS;
	a.cfg.budget_ns = LB_AB_DEFAULT_BUDGET_NS;
	lb_opt_parse(&lb_ab_cmd, argc, argv, &a, &seen);
	int nlocks = argc - seen.first_operand;
	if (nlocks != 2)
		lb_usage_error("needs two locks, A and B (names or plugin paths), got %d; see "
			       "'lockbench ab --help'", nlocks);
	/* Work given as a time: iterations, as bench does (calibrates once). */
	struct lb_work_len *work[] = { &a.cfg.loop.cs, &a.cfg.loop.par };
	for (size_t i = 0; i < 2; i++)
		work[i]->iters = work[i]->in_ns ? lb_work_iters_for_ns(work[i]->value) : work[i]->value;
	a.cfg.lock[LB_AB_A] = resolve("A", argv[seen.first_operand]);
	a.cfg.lock[LB_AB_B] = resolve("B", argv[seen.first_operand + 1]);
	int first_two[2];
	if (a.cfg.loop.pin.policy != LB_PIN_NONE && lb_pin_plan(&a.cfg.loop.pin, 2, first_two) == 0 &&
	    first_two[0] >= 0 && first_two[1] >= 0 && first_two[0] != first_two[1]) {
		a.cfg.loop.c2c_cpu[0] = first_two[0];
		a.cfg.loop.c2c_cpu[1] = first_two[1];
	}
	a.cfg.c2c_cpu[0] = a.cfg.loop.c2c_cpu[0];
	a.cfg.c2c_cpu[1] = a.cfg.loop.c2c_cpu[1];
	a.cfg.loop.c2c_cpu[0] = a.cfg.loop.c2c_cpu[1] = -1;
	*cfg = a.cfg;
}
