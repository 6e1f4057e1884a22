/* SPDX-License-Identifier: MIT */
/* slab_opts.c - `lockbench slab` options: the option table, defaults, range checks. */
#include "slab.h"
#include "lb_cli.h"
#include "lb_opt.h"
#include "lb_registry.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

enum slab_table { SLAB_TABLE_PROTECT, SLAB_TABLE_BULK, SLAB_TABLE_ALL };
static const char *const table_names[] = { "protect", "bulk", "all", NULL };

/* The configuration and what the command line holds until it is resolved. */
struct slab_args {
	struct lb_slab_config cfg;
	int table;   /* enum slab_table */
	bool no_pin; /* --no-pin after the last --cpu */
};

static int parse_opt_prot(const struct lb_opt *o, const char *arg, void *base)
{
	(void)o;
	struct lb_slab_config *cfg = &((struct slab_args *)base)->cfg;
	cfg->opt_prot = lb_prot_parse(arg);
	return cfg->opt_prot < 0 ? -1 : 0;
}

static int parse_bulk_prot(const struct lb_opt *o, const char *arg, void *base)
{
	(void)o;
	int prot = lb_prot_parse(arg);
	if (prot != LB_PROT_LOCK && prot != LB_PROT_SIGMASK && prot != LB_PROT_NONE)
		return -1;
	((struct slab_args *)base)->cfg.bulk_prot = prot;
	return 0;
}

static int parse_lock(const struct lb_opt *o, const char *arg, void *base)
{
	const struct lb_lock_ops *ops = lb_lock_find(arg);
	if (!ops || !(ops->flags & LB_LOCK_F_EXCLUSIVE) || !ops->trylock ||
	    (ops->flags & (LB_LOCK_F_BUSTED | LB_LOCK_F_NOLOCK | LB_LOCK_F_RCU)))
		return -1;
	/* The allocator takes its locks unconditionally (engines/slub). */
	if (ops->flags & LB_LOCK_F_FALLIBLE)
		lb_usage_error("--%s: lock '%s' can fail to lock, which slab does not handle; "
			       "accepted: %s", o->name, arg, o->accepted);
	if (ops->unsupported)
		lb_usage_error("--%s: '%s' cannot run here: %s", o->name, arg, ops->unsupported);
	((struct slab_args *)base)->cfg.lock = ops;
	return 0;
}

/* --cpu N, and --no-pin: whichever comes last wins (argv order). */
static int parse_cpu(const struct lb_opt *o, const char *arg, void *base)
{
	struct slab_args *a = base;
	unsigned int cpu;
	if (lb_parse_uint(arg, (unsigned int)o->min, (unsigned int)o->max, &cpu))
		return -1;
	a->cfg.cpu = (int)cpu;
	a->no_pin = false;
	return 0;
}

#define T struct slab_args
#define SLAB_COUNT_ROW(long_name, letter, field, lo, hi, default_text, help_text)          \
	{ .name = long_name, .short_name = letter, .kind = LB_OPT_U64, .arg = "N",             \
	  .help = help_text, .def = default_text, .min = lo, .max = hi,                         \
	  .offset = LB_OPT_AT(T, field, uint64_t) }
#define SLAB_UINT_ROW(long_name, arg_name, field, lo, hi, default_text, help_text)          \
	{ .name = long_name, .kind = LB_OPT_UINT, .arg = arg_name, .help = help_text,         \
	  .def = default_text, .min = lo, .max = hi, .offset = LB_OPT_AT(T, field, unsigned int) }
static const struct lb_opt slab_opts[] = {
	{ .name = "table", .short_name = 'T', .kind = LB_OPT_ENUM, .arg = "WHICH",
	  .help = "protect, bulk or all (default all)", .def = "all", .choices = table_names,
	  .offset = LB_OPT_AT(T, table, int) },
	SLAB_COUNT_ROW("iterations", 'n', cfg.section_iters, 1000, 1000000000, "200000",
		       "empty sections per measurement (default 200000;\n1000..1000000000)"),
	SLAB_COUNT_ROW("ops", 0, cfg.op_iters, 1000, 1000000000, "50000",
		       "alloc+free pairs per measurement (default 50000;\n1000..1000000000)"),
	SLAB_COUNT_ROW("bh-batch", 0, cfg.bh_batch, 1, 1000000, "10000",
		       "BH rows: alloc+free pairs per signal, raise()d by the\n"
		       "task (default 10000; 1: one signal per pair; 1..1000000)"),
	LB_OPT_ROW_REPEAT(T, cfg.repeat, LB_SLAB_MAX_REPEAT, "5",
			  "measurements per row, interleaved; medians (default 5;\n"
			  "1.." LB_OPT_STR(LB_SLAB_MAX_REPEAT) ")"),
	{ .name = "opt", .kind = LB_OPT_CUSTOM, .arg = "PROT",
	  .help = "OPT's task-stock protection: rseq, sigmask, lock, cas\n"
		  "or none (default: the cheapest per-CPU one measured)",
	  .parse = parse_opt_prot, .accepted = "rseq, sigmask, lock, cas, none" },
	{ .name = "lock", .short_name = 'L', .kind = LB_OPT_CUSTOM, .arg = "LOCK",
	  .help = "the per-CPU lock and the allocator's list_lock: an\n"
		  "exclusive lock with trylock (default tas)",
	  .parse = parse_lock, .invalid = "an exclusive lock with trylock",
	  .accepted = "an exclusive lock with trylock that cannot fail from `lockbench list` "
		      "(e.g. tas, ticket, pthread-mutex)" },
	{ .name = "cpu", .short_name = 'c', .kind = LB_OPT_CUSTOM, .arg = "N",
	  .help = "pin to CPU N (default: the first CPU allowed)", .parse = parse_cpu, .min = 0,
	  .max = CPU_SETSIZE - 1 },
	{ .name = "no-pin", .kind = LB_OPT_FLAG, .help = "do not pin",
	  .offset = LB_OPT_AT(T, no_pin, bool) },
	SLAB_UINT_ROW("size", "BYTES", cfg.bulk_size, 8, 65536, "256",
		      "Table B object size (default 256; 8..65536)"),
	{ .name = "bulk", .kind = LB_OPT_UINT_LIST, .arg = "LIST",
	  .help = "Table B bulk sizes, e.g. 1,2,4-64:4 (default\n"
		  "1,2,3,4,8,16,30,32,34,48,64,128,158,250; 1.." LB_OPT_STR(LB_SLAB_BULK_MAX_N) ")",
	  .def = "1,2,3,4,8,16,30,32,34,48,64,128,158,250", .min = 1, .max = LB_SLAB_BULK_MAX_N,
	  .cap = LB_SLAB_MAX_BULK, .offset = LB_OPT_AT(T, cfg.bulk_n, unsigned int *),
	  .count_offset = LB_OPT_AT(T, cfg.nbulk, size_t),
	  .accepted = "up to " LB_OPT_STR(LB_SLAB_MAX_BULK) " sizes 1.." LB_OPT_STR(
		  LB_SLAB_BULK_MAX_N) ", comma separated (N, A-B, A-B:S)" },
	SLAB_COUNT_ROW("bulk-objects", 0, cfg.bulk_objects, 1000, 1000000000, "100000",
		       "objects per Table B measurement (default 100000;\n1000..1000000000)"),
	{ .name = "bulk-protect", .kind = LB_OPT_CUSTOM, .arg = "P",
	  .help = "what each call (fallback) or batch (bulk) is wrapped\n"
		  "in: lock, sigmask or none (default lock)",
	  .def = "lock", .parse = parse_bulk_prot, .accepted = "lock, sigmask, none" },
	SLAB_UINT_ROW("cpu-partial", "N", cfg.cpu_partial, 0, 1000000, "0",
		      "objects' worth of per-thread partial pages (SLUB's\n"
		      "cpu_partial; default 0; 0..1000000)"),
	SLAB_UINT_ROW("min-partial", "N", cfg.min_partial, 0, 100000, "5",
		      "empty pages kept on the partial list (default 5;\n0..100000)"),
	SLAB_UINT_ROW("min-objects", "N", cfg.min_objects, 1, 4096, "30",
		      "at least N objects per slab page (default 30; 1..4096)"),
	LB_OPT_ROW_JSON(T, cfg.json_path, "write the figures as JSON (atomically; '-': stdout)"),
	LB_OPT_ROW_QUIET(T, cfg.quiet),
	LB_OPT_ROW_HELP,
	LB_OPT_ROW_END,
};
#undef SLAB_UINT_ROW
#undef SLAB_COUNT_ROW
#undef T

const struct lb_opt_cmd lb_slab_cmd = {
	.name = "lockbench slab",
	.usage = "usage: lockbench slab [options]\n"
		 "\n"
		 "The allocator fast-path experiments on the SLUB-like allocator of\n"
		 "`lockbench rt`: Table A, the cost of protecting per-CPU data (rseq, signal\n"
		 "mask, per-CPU lock, compare-and-swap, none) and alloc+free of a 128-byte\n"
		 "object OPT/NO-OPT in task and signal-handler context; Table B, N single\n"
		 "alloc+free calls against the bulk API.  With no options: both tables,\n"
		 "5-17 s on the 2-CPU guest (doc/slab.md) and much longer when other work\n"
		 "shares the CPU it is pinned to: 151 s and 286 s measured at load 48-127\n"
		 "(batches a preemption spoiled are redone).\n"
		 "\n",
	.epilogue = "\nExit status: 0 ok, 1 a run failed (allocator invariants), 2 bad usage,\n"
		    "128+N interrupted by signal N (finished repeats reported and written).\n",
	.opts = slab_opts,
};

static int first_allowed_cpu(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			return i;
	return 0;
}

void lb_slab_parse(int argc, char **argv, struct lb_slab_config *cfg)
{
	struct slab_args a = { 0 };
	struct lb_opt_seen seen;

	/* The defaults no row's text can give. */
	a.cfg.opt_prot = -1;
	a.cfg.lock = lb_lock_find("tas");
	a.cfg.cpu = -2; /* decided below */
	lb_opt_parse(&lb_slab_cmd, argc, argv, &a, &seen);
	a.cfg.table_protect = a.table != SLAB_TABLE_BULK;
	a.cfg.table_bulk = a.table != SLAB_TABLE_PROTECT;
	if (a.no_pin)
		a.cfg.cpu = -1;
	if (!a.cfg.lock)
		lb_usage_error("--lock: the default lock 'tas' is not registered; accepted: a lock "
			       "from `lockbench list`");
	if (a.cfg.cpu == -2) {
		a.cfg.cpu = first_allowed_cpu();
	} else if (a.cfg.cpu >= 0) {
		cpu_set_t set;
		if (sched_getaffinity(0, sizeof(set), &set) || !CPU_ISSET(a.cfg.cpu, &set))
			lb_usage_error("--cpu: CPU %d is not one this process may run on; accepted: "
				       "a CPU of its affinity mask", a.cfg.cpu);
	}
	*cfg = a.cfg;
}
