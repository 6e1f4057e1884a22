/* SPDX-License-Identifier: MIT */
/* ab_opts.c - `lockbench ab` options: two locks, the cells, slice and budget. */
#include "ab.h"
#include "lb_cli.h"
#include "lb_registry.h"
#include "lb_work.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_MS UINT64_C(1000000)

static void usage(FILE *out)
{
	fprintf(out,
		"usage: lockbench ab [options] A B\n"
		"\n"
		"A paired A/B experiment in one process: short slices of A and B in ABBA\n"
		"order over the cells, a ratio B/A with its 95 %% interval and a signed-rank\n"
		"verdict per cell.  A and B are lock names or plugin paths (./mylock.so).\n"
		"\n"
		"  -t, --threads LIST     the cells' thread counts (default 1,NCPU)\n"
		"  -d, --duration TIME    time for all slices (default 4s; 100ms..1h)\n"
		"      --slice TIME       one slice (default 20ms; 5ms..1s)\n"
		"      --blocks N         exactly N ABBA blocks per cell instead (%d..%d)\n"
		"      --metric M         the paired figure: wall (ns/op, default) or cpu\n"
		"                         (CPU ns/op: time a thread was not run costs nothing)\n"
		"      --cs N             critical-section work in loop iterations (default 0)\n"
		"      --par N            work outside the lock, iterations (default 0)\n"
		"      --cs-lines K       shared lines written per critical section (default 1)\n"
		"      --pin POLICY       none, compact, scatter or a CPU list (default none)\n"
		"      --json FILE        write the result (schema lockbench-ab-1)\n"
		"  -q, --quiet            no progress on stderr\n"
		"  -h, --help             this text\n",
		LB_AB_MIN_BLOCKS, LB_AB_MAX_BLOCKS);
}

enum { OPT_METRIC = 255, OPT_SLICE = 256, OPT_BLOCKS, OPT_CS, OPT_PAR, OPT_CS_LINES, OPT_PIN, OPT_JSON };

static const struct option ab_long_opts[] = {
	{ "threads", required_argument, NULL, 't' },
	{ "duration", required_argument, NULL, 'd' },
	{ "slice", required_argument, NULL, OPT_SLICE },
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "blocks", required_argument, NULL, OPT_BLOCKS },
	{ "cs", required_argument, NULL, OPT_CS },
	{ "par", required_argument, NULL, OPT_PAR },
	{ "cs-lines", required_argument, NULL, OPT_CS_LINES },
	{ "pin", required_argument, NULL, OPT_PIN },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
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

static void parse_iters(const char *opt, const char *arg, struct lb_work_len *w)
{
	if (lb_parse_u64(arg, 0, 1000000000, &w->value))
		lb_usage_error("%s: '%s' is not valid; accepted: 0..1000000000 loop iterations", opt,
			       arg);
	w->iters = w->value;
}

void lb_ab_parse(int argc, char **argv, struct lb_ab_config *cfg)
{
	bool help = false;
	size_t n;
	memset(cfg, 0, sizeof(*cfg));
	lb_bench_defaults(&cfg->run);
	if (cfg->run.nthread_counts > 2)
		cfg->run.nthread_counts = 2; /* 1 and NCPU: no oversubscription by default */
	cfg->run.duration_ns = LB_AB_DEFAULT_SLICE_NS;
	cfg->run.quiet = true;
	cfg->budget_ns = LB_AB_DEFAULT_BUDGET_NS;
	opterr = 0;
	optind = 1;
	for (;;) {
		int c = getopt_long(argc, argv, ":t:d:qh", ab_long_opts, NULL);
		if (c == -1)
			break;
		switch (c) {
		case 't':
			if (lb_parse_uint_list(optarg, 1, LB_BENCH_MAX_THREADS, cfg->run.threads,
					       LB_AB_MAX_CELLS, &n))
				lb_usage_error("--threads: '%s' is not valid; accepted: counts 1..%d as "
					       "N, A-B or A-B:STEP, at most %d", optarg,
					       LB_BENCH_MAX_THREADS, LB_AB_MAX_CELLS);
			cfg->run.nthread_counts = n;
			break;
		case 'd':
			if (lb_parse_duration_ns(optarg, 1000000000, 100 * NS_PER_MS,
						 UINT64_C(3600000000000), &cfg->budget_ns))
				lb_usage_error("--duration: '%s' is not valid; accepted: 100ms..1h, e.g. "
					       "4s, 500ms", optarg);
			break;
		case OPT_SLICE:
			if (lb_parse_duration_ns(optarg, NS_PER_MS, 5 * NS_PER_MS, 1000 * NS_PER_MS,
						 &cfg->run.duration_ns))
				lb_usage_error("--slice: '%s' is not valid; accepted: 5ms..1s, e.g. "
					       "20ms", optarg);
			break;
		case OPT_BLOCKS:
			if (lb_parse_uint(optarg, LB_AB_MIN_BLOCKS, LB_AB_MAX_BLOCKS, &cfg->blocks))
				lb_usage_error("--blocks: '%s' is not valid; accepted: %d..%d", optarg,
					       LB_AB_MIN_BLOCKS, LB_AB_MAX_BLOCKS);
			break;
		case OPT_METRIC:
			if (strcmp(optarg, "wall") && strcmp(optarg, "cpu"))
				lb_usage_error("--metric: '%s' is not valid; accepted: wall, cpu", optarg);
			cfg->metric_cpu = !strcmp(optarg, "cpu");
			break;
		case OPT_CS: parse_iters("--cs", optarg, &cfg->run.cs); break;
		case OPT_PAR: parse_iters("--par", optarg, &cfg->run.par); break;
		case OPT_CS_LINES:
			if (lb_parse_uint(optarg, 0, LB_BENCH_MAX_CS_LINES, &cfg->run.cs_lines))
				lb_usage_error("--cs-lines: '%s' is not valid; accepted: 0..%d", optarg,
					       LB_BENCH_MAX_CS_LINES);
			break;
		case OPT_PIN:
			if (lb_pin_parse(optarg, &cfg->run.pin))
				lb_usage_error("--pin: '%s' is not valid; accepted: none, compact, "
					       "scatter, or a list of allowed CPUs", optarg);
			break;
		case OPT_JSON:
			if (!*optarg)
				lb_usage_error("--json: needs a file name");
			cfg->json_path = optarg;
			break;
		case 'q': cfg->quiet = true; break;
		case 'h': help = true; break;
		default:
			lb_cli_getopt_fail(c, argc, argv, "t:d:qh", ab_long_opts, "lockbench ab --help");
		}
	}
	if (help) {
		usage(stdout);
		exit(0);
	}
	if (argc - optind != 2)
		lb_usage_error("needs two locks, A and B (names or plugin paths), got %d; see "
			       "'lockbench ab --help'", argc - optind);
	cfg->lock[LB_AB_A] = resolve("A", argv[optind]);
	cfg->lock[LB_AB_B] = resolve("B", argv[optind + 1]);
	int first_two[2];
	if (cfg->run.pin.policy != LB_PIN_NONE && lb_pin_plan(&cfg->run.pin, 2, first_two) == 0 &&
	    first_two[0] >= 0 && first_two[1] >= 0 && first_two[0] != first_two[1]) {
		cfg->run.c2c_cpu[0] = first_two[0];
		cfg->run.c2c_cpu[1] = first_two[1];
	}
	cfg->c2c_cpu[0] = cfg->run.c2c_cpu[0];
	cfg->c2c_cpu[1] = cfg->run.c2c_cpu[1];
	cfg->run.c2c_cpu[0] = cfg->run.c2c_cpu[1] = -1;
}
