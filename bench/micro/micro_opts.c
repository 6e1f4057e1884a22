/* SPDX-License-Identifier: MIT */
/* micro_opts.c - `lockbench bench` options: the option table, defaults, range checks. */
#include "micro.h"
#include "lb_c2c.h"
#include "lb_cli.h"
#include "lb_cpulist.h"
#include "lb_opt.h"
#include "lb_registry.h"
#include "lb_time.h"
#include "lb_work.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A lock bench runs, or exit 2 naming it. */
static const struct lb_lock_ops *micro_lock(const char *name, const char *accepted)
{
	const struct lb_lock_ops *ops = lb_lock_find(name);
	if (!ops)
		lb_usage_error("--lock: unknown lock '%s'; accepted: %s", name, accepted);
	if (ops->unsupported)
		lb_usage_error("--lock: lock '%s' cannot run here (%s); accepted: %s", name,
			       ops->unsupported, accepted);
	return ops;
}

static int parse_locks(const struct lb_opt *o, const char *arg, void *base)
{
	struct lb_micro_config *cfg = base;
	char accepted[2048];
	(void)o;
	lb_lock_names(accepted, sizeof(accepted), false);
	if (strlen(arg) >= LB_LOCK_LIST_CHARS)
		lb_usage_error("--lock: list too long; accepted names: %s", accepted);
	cfg->nlocks = lb_lock_list_parse(arg, cfg->locks, LB_MICRO_MAX_LOCKS, micro_lock, accepted);
	return 0;
}

static int parse_pin(const struct lb_opt *o, const char *arg, void *base)
{
	char allowed[256], accepted[512];
	cpu_set_t set;
	if (lb_pin_parse(arg, lb_opt_field(o, base)) == 0)
		return 0;
	lb_cpulist_allowed(&set);
	lb_cpulist_format(&set, allowed, sizeof(allowed));
	snprintf(accepted, sizeof(accepted), "%s within the allowed %s", o->accepted, allowed);
	lb_opt_bad_value(o, arg, accepted);
}

static int parse_sample_every(const struct lb_opt *o, const char *arg, void *base)
{
	struct lb_micro_config *cfg = base;
	unsigned int v;
	(void)o;
	if (lb_parse_uint(arg, 1, 65536, &v) || (v & (v - 1)))
		return -1;
	cfg->loop.sample_shift = 0;
	while ((1u << cfg->loop.sample_shift) < v)
		cfg->loop.sample_shift++;
	return 0;
}

static int parse_format(const struct lb_opt *o, const char *arg, void *base)
{
	(void)o;
	if (strcmp(arg, "lockbench") && strcmp(arg, "gbench"))
		return -1;
	((struct lb_micro_config *)base)->json_gbench = !strcmp(arg, "gbench");
	return 0;
}

#define T struct lb_micro_config
static const struct lb_opt bench_opts[] = {
	{ .name = "lock", .short_name = 'l', .kind = LB_OPT_CUSTOM, .arg = "LIST",
	  .help = "locks to compare, comma separated (default: every\n"
		  "exclusive lock except busted; see `lockbench list`)",
	  .parse = parse_locks },
	{ .name = "threads", .short_name = 't', .kind = LB_OPT_UINT_LIST, .arg = "LIST",
	  .help = "thread counts: N, A-B, A-B:STEP, comma separated\n"
		  "(default 1,NCPU,4xNCPU; 1.." LB_OPT_STR(LB_LOOP_MAX_THREADS) ")",
	  .min = 1, .max = LB_LOOP_MAX_THREADS, .cap = LB_MICRO_MAX_THREAD_COUNTS,
	  .invalid = "a valid thread list",
	  .accepted = "counts 1.." LB_OPT_STR(LB_LOOP_MAX_THREADS) " as N, A-B or A-B:STEP, "
		      "comma separated, at most " LB_OPT_STR(LB_MICRO_MAX_THREAD_COUNTS) " counts",
	  .offset = LB_OPT_AT(T, threads, unsigned int *),
	  .count_offset = LB_OPT_AT(T, nthread_counts, size_t) },
	{ .name = "duration", .short_name = 'd', .kind = LB_OPT_DURATION, .arg = "TIME",
	  .help = "length of each run: 500ms, 2s, 1.5 (s) (default 1s;\n10ms..1h)", .def = "1s",
	  .unit_ns = LB_NS_PER_S, .min = 10 * LB_NS_PER_MS, .max = 3600 * LB_NS_PER_S,
	  .invalid = "a valid duration", .accepted = "10ms..1h, e.g. 500ms, 2s, 1.5 (seconds)",
	  .offset = LB_OPT_AT(T, loop.duration_ns, uint64_t) },
	LB_OPT_ROW_WORK(T, "cs", loop.cs, "critical-section work: N loop iterations, or a time\n"
					"with unit ns/us/ms (default 0; at most 100ms)"),
	LB_OPT_ROW_WORK(T, "par", loop.par, "parallel (outside the lock) work, same units (default 0)"),
	{ .name = "cs-lines", .kind = LB_OPT_UINT, .arg = "K",
	  .help = "shared cache lines written per critical section\n"
		  "(default 1, with --read-pct 2; 0.." LB_OPT_STR(LB_LOOP_MAX_CS_LINES) ")",
	  .def = "1", .min = 0, .max = LB_LOOP_MAX_CS_LINES,
	  .offset = LB_OPT_AT(T, loop.cs_lines, unsigned int) },
	{ .name = "pin", .kind = LB_OPT_CUSTOM, .arg = "POLICY",
	  .help = "none, compact, scatter, or a CPU list like 0,2-3\n(default none)",
	  .def = "none", .parse = parse_pin, .accepted = "none, compact, scatter, or a list of CPUs",
	  .offset = LB_OPT_AT(T, loop.pin, struct lb_pin) },
	LB_OPT_ROW_REPEAT(T, repeat, LB_MICRO_MAX_REPEAT, "1",
			  "runs per (lock, threads) cell, interleaved; figures\n"
			  "become mean, sd, median, min, max (default 1; 1.."
			  LB_OPT_STR(LB_MICRO_MAX_REPEAT) ")"),
	{ .name = "read-pct", .kind = LB_OPT_INT, .arg = "P",
	  .help = "read/write mix: P% of operations take the read side\n"
		  "(0..100; every lock must have a read side)",
	  .min = 0, .max = 100, .offset = LB_OPT_AT(T, loop.read_pct, int) },
	{ .name = "sample-every", .kind = LB_OPT_CUSTOM, .arg = "N",
	  .help = "sample acquisition latency every N ops, a power of\ntwo (default 64; 1..65536)",
	  .def = "64", .parse = parse_sample_every, .accepted = "a power of two 1..65536" },
	{ .name = "explain", .kind = LB_OPT_FLAG,
	  .help = "print each lock's event counters (spins, sleeps,\n"
		  "handoffs...) beside the figures; the qspinlocks\n"
		  "count the kernel's lock events (lock_pending...)",
	  .offset = LB_OPT_AT(T, explain, bool) },
	LB_OPT_ROW_JSON(T, json_path, "write every result as JSON (atomically)"),
	LB_OPT_ROW_CSV(T, csv_path, "write one CSV row per run (atomically)"),
	{ .name = "format", .kind = LB_OPT_CUSTOM, .arg = "FMT",
	  .help = "what --json writes: lockbench (default) or gbench\n"
		  "(Google Benchmark's JSON, for its compare.py)",
	  .parse = parse_format, .accepted = "lockbench, gbench" },
	LB_OPT_ROW_WIDE(T, wide),
	LB_OPT_ROW_QUIET(T, quiet),
	LB_OPT_ROW_HELP,
	LB_OPT_ROW_END,
};
#undef T

const struct lb_opt_cmd lb_micro_cmd = {
	.name = "lockbench bench",
	.usage = "usage: lockbench bench [options]\n"
		 "\n"
		 "Fixed-time runs of each lock at each thread count.  Inside the critical\n"
		 "section a thread writes --cs-lines shared cache lines and runs --cs work;\n"
		 "outside it runs --par private work.  At the defaults (every exclusive lock\n"
		 "at 1, NCPU and 4 x NCPU threads, 1 s each) it takes about 95 s on the\n"
		 "2-CPU guest (measured at load 41); `lockbench` alone, the default\n"
		 "comparison of a few locks, about 8 s.\n"
		 "\n",
	.opts = bench_opts,
};

void lb_micro_usage(FILE *out)
{
	lb_opt_help(&lb_micro_cmd, out);
}

void lb_micro_defaults(struct lb_micro_config *cfg)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	if (ncpu > LB_LOOP_MAX_THREADS / 4)
		ncpu = LB_LOOP_MAX_THREADS / 4;
	memset(cfg, 0, sizeof(*cfg));
	const struct lb_lock_ops *const *table = lb_lock_table();
	for (size_t i = 0; i < lb_lock_count() && cfg->nlocks < LB_MICRO_MAX_LOCKS; i++)
		if ((table[i]->flags & LB_LOCK_F_EXCLUSIVE) && !(table[i]->flags & LB_LOCK_F_RCU) &&
		    lb_lock_in_default_runs(table[i]))
			cfg->locks[cfg->nlocks++] = table[i];
	cfg->threads[0] = 1;
	cfg->nthread_counts = 1;
	if (ncpu > 1)
		cfg->threads[cfg->nthread_counts++] = (unsigned int)ncpu;
	cfg->threads[cfg->nthread_counts++] = 4 * (unsigned int)ncpu;
	lb_opt_defaults(&lb_micro_cmd, cfg); /* the rows' own: duration, cs-lines, pin, repeat... */
	cfg->loop.read_pct = -1;
	cfg->table_tail = true;
	lb_c2c_default_pair(&cfg->loop.c2c_cpu[0], &cfg->loop.c2c_cpu[1]);
}

/* --read-pct: two lines at least, a default lock set with a read side, every lock has one. */
static void resolve_read_side(struct lb_micro_config *cfg, const struct lb_opt_seen *seen)
{
	char with_rw[1024] = "";
	/* Readers check that writers' fields agree: that needs two at least. */
	if (!lb_opt_given(&lb_micro_cmd, seen, "cs-lines"))
		cfg->loop.cs_lines = 2;
	const struct lb_lock_ops *const *table = lb_lock_table();
	for (size_t i = 0; i < lb_lock_count(); i++)
		if ((table[i]->flags & LB_LOCK_F_RW) && !table[i]->unsupported)
			snprintf(with_rw + strlen(with_rw), sizeof(with_rw) - strlen(with_rw), "%s%s",
				 *with_rw ? "," : "", table[i]->name);
	if (!lb_opt_given(&lb_micro_cmd, seen, "lock")) {
		/* Default lock set for a read/write mix: every lock with a read side. */
		cfg->nlocks = 0;
		for (size_t i = 0; i < lb_lock_count(); i++)
			if ((table[i]->flags & LB_LOCK_F_RW) && lb_lock_in_default_runs(table[i]))
				cfg->locks[cfg->nlocks++] = table[i];
	}
	for (size_t i = 0; i < cfg->nlocks; i++)
		if (!(cfg->locks[i]->flags & LB_LOCK_F_RW))
			lb_usage_error("--read-pct: lock '%s' has no read side; locks with one: %s",
				       cfg->locks[i]->name, with_rw);
}

void lb_micro_parse(int argc, char **argv, struct lb_micro_config *cfg)
{
	struct lb_opt_seen seen;
	lb_micro_defaults(cfg); /* the dynamic defaults (locks, threads); the rows' again below */
	lb_opt_parse(&lb_micro_cmd, argc, argv, cfg, &seen);
	if (cfg->nlocks == 0)
		lb_usage_error("--lock: no lock can run here");
	if (cfg->json_gbench && !cfg->json_path)
		lb_usage_error("--format: gbench names what --json writes; accepted: with --json FILE");
	if (cfg->loop.read_pct >= 0)
		resolve_read_side(cfg, &seen);
	/* Resolve work given in ns into loop iterations (calibrates once). */
	cfg->loop.cs.iters = cfg->loop.cs.in_ns ? lb_work_iters_for_ns(cfg->loop.cs.value) : cfg->loop.cs.value;
	cfg->loop.par.iters = cfg->loop.par.in_ns ? lb_work_iters_for_ns(cfg->loop.par.value) : cfg->loop.par.value;
	/* Pinned runs: the round trip between the first two CPUs they use. */
	int first_two[2];
	if (cfg->loop.pin.policy != LB_PIN_NONE && lb_pin_plan(&cfg->loop.pin, 2, first_two) == 0 &&
	    first_two[0] >= 0 && first_two[1] >= 0 && first_two[0] != first_two[1]) {
		cfg->loop.c2c_cpu[0] = first_two[0];
		cfg->loop.c2c_cpu[1] = first_two[1];
	}
}
