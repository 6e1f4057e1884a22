/* SPDX-License-Identifier: MIT */
/* slab_opts.c - `lockbench slab` options: defaults, parsing, range checks. */
#include "slab.h"
#include "lb_cli.h"
#include "lb_registry.h"

#include <getopt.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static const unsigned int default_bulk[] = { 1, 2, 3, 4, 8, 16, 30, 32, 34, 48, 64, 128, 158, 250 };

static void usage(FILE *out)
{
	fprintf(out,
		"usage: lockbench slab [options]\n"
		"\n"
		"The allocator fast-path experiments on the SLUB-like allocator of\n"
		"`lockbench rt`: Table A, the cost of protecting per-CPU data (rseq, signal\n"
		"mask, per-CPU lock, compare-and-swap, none) and alloc+free of a 128-byte\n"
		"object OPT/NO-OPT in task and signal-handler context; Table B, N single\n"
		"alloc+free calls against the bulk API.  With no options: both tables.\n"
		"\n"
		"  -T, --table WHICH      protect, bulk or all (default all)\n"
		"  -n, --iterations N     empty sections per measurement (default 200000;\n"
		"                         1000..1000000000)\n"
		"      --ops N            alloc+free pairs per measurement (default 50000;\n"
		"                         1000..1000000000)\n"
"      --bh-batch N       BH rows: alloc+free pairs per signal, raise()d by the\n"
		"                         task (default 10000; 1: one signal per pair; 1..1000000)\n"
		"  -r, --repeat N         measurements per row, interleaved; medians (default 5;\n"
		"                         1..%d)\n"
		"      --opt PROT         OPT's task-stock protection: rseq, sigmask, lock, cas\n"
		"                         or none (default: the cheapest per-CPU one measured)\n"
		"  -L, --lock LOCK        the per-CPU lock and the allocator's list_lock: an\n"
		"                         exclusive lock with trylock (default tas)\n"
		"  -c, --cpu N            pin to CPU N (default: the first CPU allowed)\n"
		"      --no-pin           do not pin\n"
		"      --size BYTES       Table B object size (default 256; 8..65536)\n"
		"      --bulk LIST        Table B bulk sizes, e.g. 1,2,4-64:4 (default\n"
		"                         1,2,3,4,8,16,30,32,34,48,64,128,158,250; 1..%d)\n"
		"      --bulk-objects N   objects per Table B measurement (default 100000;\n"
		"                         1000..1000000000)\n"
		"      --bulk-protect P   what each call (fallback) or batch (bulk) is wrapped\n"
		"                         in: lock, sigmask or none (default lock)\n"
		"      --cpu-partial N    objects' worth of per-thread partial pages (SLUB's\n"
		"                         cpu_partial; default 0; 0..1000000)\n"
		"      --min-partial N    empty pages kept on the partial list (default 5;\n"
		"                         0..100000)\n"
		"      --min-objects N    at least N objects per slab page (default 30; 1..4096)\n"
		"      --json FILE        write the figures as JSON (atomically; '-': stdout)\n"
		"  -q, --quiet            no progress lines on stderr\n"
		"  -h, --help             this text\n"
		"\n"
		"Exit status: 0 ok, 1 a run failed (allocator invariants), 2 bad usage,\n"
		"128+N interrupted by signal N (finished repeats reported and written).\n",
		LB_SLAB_MAX_REPEAT, LB_SLAB_BULK_MAX_N);
}

enum {
	OPT_OPS = 256, OPT_BH_BATCH, OPT_OPT, OPT_NO_PIN, OPT_SIZE, OPT_BULK, OPT_BULK_OBJECTS, OPT_BULK_PROTECT,
	OPT_CPU_PARTIAL, OPT_MIN_PARTIAL, OPT_MIN_OBJECTS, OPT_JSON,
};

static const struct option long_opts[] = {
	{ "table", required_argument, NULL, 'T' },
	{ "iterations", required_argument, NULL, 'n' },
	{ "ops", required_argument, NULL, OPT_OPS },
	{ "bh-batch", required_argument, NULL, OPT_BH_BATCH },
	{ "repeat", required_argument, NULL, 'r' },
	{ "opt", required_argument, NULL, OPT_OPT },
	{ "lock", required_argument, NULL, 'L' },
	{ "cpu", required_argument, NULL, 'c' },
	{ "no-pin", no_argument, NULL, OPT_NO_PIN },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "bulk", required_argument, NULL, OPT_BULK },
	{ "bulk-objects", required_argument, NULL, OPT_BULK_OBJECTS },
	{ "bulk-protect", required_argument, NULL, OPT_BULK_PROTECT },
	{ "cpu-partial", required_argument, NULL, OPT_CPU_PARTIAL },
	{ "min-partial", required_argument, NULL, OPT_MIN_PARTIAL },
	{ "min-objects", required_argument, NULL, OPT_MIN_OBJECTS },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};
static const char short_opts[] = ":T:n:r:L:c:qh";

static uint64_t u64_opt(const char *opt, const char *v, uint64_t min, uint64_t max)
{
	uint64_t x;
	if (lb_parse_u64(v, min, max, &x))
		lb_usage_error("%s: invalid value '%s'; accepted: an integer %llu..%llu", opt, v,
			       (unsigned long long)min, (unsigned long long)max);
	return x;
}

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
	memset(cfg, 0, sizeof(*cfg));
	cfg->table_protect = cfg->table_bulk = true;
	cfg->section_iters = 200000;
	cfg->op_iters = 50000;
	cfg->bh_batch = 10000;
	cfg->repeat = 5;
	cfg->opt_prot = -1;
	cfg->lock = lb_lock_find("tas");
	cfg->cpu = -2; /* decided below */
	cfg->bulk_size = 256;
	cfg->min_partial = 5;
	cfg->min_objects = 30;
	cfg->bulk_objects = 100000;
	cfg->bulk_prot = LB_PROT_LOCK;
	cfg->nbulk = sizeof(default_bulk) / sizeof(default_bulk[0]);
	memcpy(cfg->bulk_n, default_bulk, sizeof(default_bulk));

	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		switch (c) {
		case 'T':
			if (!strcmp(optarg, "protect"))
				cfg->table_bulk = false, cfg->table_protect = true;
			else if (!strcmp(optarg, "bulk"))
				cfg->table_protect = false, cfg->table_bulk = true;
			else if (!strcmp(optarg, "all"))
				cfg->table_protect = cfg->table_bulk = true;
			else
				lb_usage_error("--table: invalid value '%s'; accepted: protect, bulk, all",
					       optarg);
			break;
		case 'n':
			cfg->section_iters = u64_opt("--iterations", optarg, 1000, 1000000000);
			break;
		case OPT_OPS:
			cfg->op_iters = u64_opt("--ops", optarg, 1000, 1000000000);
			break;
		case OPT_BH_BATCH:
			cfg->bh_batch = u64_opt("--bh-batch", optarg, 1, 1000000);
			break;
		case 'r':
			cfg->repeat = (unsigned int)u64_opt("--repeat", optarg, 1, LB_SLAB_MAX_REPEAT);
			break;
		case OPT_OPT:
			cfg->opt_prot = lb_prot_parse(optarg);
			if (cfg->opt_prot < 0)
				lb_usage_error("--opt: invalid value '%s'; accepted: rseq, sigmask, lock, "
					       "cas, none", optarg);
			break;
		case 'L': {
			const struct lb_lock_ops *ops = lb_lock_find(optarg);
			if (!ops || !(ops->flags & LB_LOCK_F_EXCLUSIVE) || !ops->trylock ||
			    (ops->flags & (LB_LOCK_F_BUSTED | LB_LOCK_F_NOLOCK | LB_LOCK_F_RCU)))
				lb_usage_error("--lock: invalid value '%s'; accepted: an exclusive lock "
					       "with trylock from `lockbench list` (e.g. tas, ticket, "
					       "pthread-mutex)", optarg);
			if (ops->unsupported)
				lb_usage_error("--lock: '%s' cannot run here: %s", optarg,
					       ops->unsupported);
			cfg->lock = ops;
			break;
		}
		case 'c':
			cfg->cpu = (int)u64_opt("--cpu", optarg, 0, CPU_SETSIZE - 1);
			break;
		case OPT_NO_PIN:
			cfg->cpu = -1;
			break;
		case OPT_SIZE:
			cfg->bulk_size = (unsigned int)u64_opt("--size", optarg, 8, 65536);
			break;
		case OPT_BULK:
			if (lb_parse_uint_list(optarg, 1, LB_SLAB_BULK_MAX_N, cfg->bulk_n,
					       LB_SLAB_MAX_BULK, &cfg->nbulk) || !cfg->nbulk)
				lb_usage_error("--bulk: invalid value '%s'; accepted: up to %d sizes "
					       "1..%d, comma separated (N, A-B, A-B:S)", optarg,
					       LB_SLAB_MAX_BULK, LB_SLAB_BULK_MAX_N);
			break;
		case OPT_BULK_OBJECTS:
			cfg->bulk_objects = u64_opt("--bulk-objects", optarg, 1000, 1000000000);
			break;
		case OPT_BULK_PROTECT:
			cfg->bulk_prot = lb_prot_parse(optarg);
			if (cfg->bulk_prot != LB_PROT_LOCK && cfg->bulk_prot != LB_PROT_SIGMASK &&
			    cfg->bulk_prot != LB_PROT_NONE)
				lb_usage_error("--bulk-protect: invalid value '%s'; accepted: lock, "
					       "sigmask, none", optarg);
			break;
		case OPT_CPU_PARTIAL:
			cfg->cpu_partial = (uint32_t)u64_opt("--cpu-partial", optarg, 0, 1000000);
			break;
		case OPT_MIN_PARTIAL:
			cfg->min_partial = (uint32_t)u64_opt("--min-partial", optarg, 0, 100000);
			break;
		case OPT_MIN_OBJECTS:
			cfg->min_objects = (uint32_t)u64_opt("--min-objects", optarg, 1, 4096);
			break;
		case OPT_JSON:
			cfg->json_path = optarg;
			break;
		case 'q':
			cfg->quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			lb_cli_getopt_fail(c, argc, argv, short_opts, long_opts, "lockbench slab --help");
		}
	}
	if (optind < argc)
		lb_usage_error("slab: unexpected argument '%s'; accepted: options only (see "
			       "'lockbench slab --help')", argv[optind]);
	if (!cfg->lock)
		lb_usage_error("--lock: the default lock 'tas' is not registered; accepted: a lock "
			       "from `lockbench list`");
	if (cfg->cpu == -2) {
		cfg->cpu = first_allowed_cpu();
	} else if (cfg->cpu >= 0) {
		cpu_set_t set;
		if (sched_getaffinity(0, sizeof(set), &set) || !CPU_ISSET(cfg->cpu, &set))
			lb_usage_error("--cpu: CPU %d is not one this process may run on; accepted: "
				       "a CPU of its affinity mask", cfg->cpu);
	}
}
