/* SPDX-License-Identifier: MIT */
/* micro_opts.c - `lockbench bench` options: defaults, parsing, range checks. */
#include "micro.h"
#include "lb_c2c.h"
#include "lb_cli.h"
#include "lb_cpulist.h"
#include "lb_registry.h"
#include "lb_work.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NS_PER_S UINT64_C(1000000000)

void lb_bench_usage(FILE *out)
{
	fprintf(out,
		"usage: lockbench bench [options]\n"
		"\n"
		"Fixed-time runs of each lock at each thread count.  Inside the critical\n"
		"section a thread writes --cs-lines shared cache lines and runs --cs work;\n"
		"outside it runs --par private work.\n"
		"\n"
		"  -l, --lock LIST        locks to compare, comma separated (default: every\n"
		"                         exclusive lock except busted; see `lockbench list`)\n"
		"  -t, --threads LIST     thread counts: N, A-B, A-B:STEP, comma separated\n"
		"                         (default 1,NCPU,4xNCPU; 1..%d)\n"
		"  -d, --duration TIME    length of each run: 500ms, 2s, 1.5 (s) (default 1s;\n"
		"                         10ms..1h)\n"
		"      --cs WORK          critical-section work: N loop iterations, or a time\n"
		"                         with unit ns/us/ms (default 0; at most 100ms)\n"
		"      --par WORK         parallel (outside the lock) work, same units (default 0)\n"
		"      --cs-lines K       shared cache lines written per critical section\n"
		"                         (default 1, with --read-pct 2; 0..%d)\n"
		"      --pin POLICY       none, compact, scatter, or a CPU list like 0,2-3\n"
		"                         (default none)\n"
		"  -r, --repeat R         runs per (lock, threads) cell, interleaved; figures\n"
		"                         become mean, sd, median, min, max (default 1; 1..1000)\n"
		"      --read-pct P       read/write mix: P%% of operations take the read side\n"
		"                         (0..100; every lock must have a read side)\n"
		"      --sample-every N   sample acquisition latency every N ops, a power of\n"
		"                         two (default 64; 1..65536)\n"
		"      --explain          print each lock's event counters (spins, sleeps,\n"
		"                         handoffs...) beside the figures\n"
		"      --json FILE        write every result as JSON (atomically)\n"
		"      --csv FILE         write one CSV row per run (atomically)\n"
		"      --format FMT       what --json writes: lockbench (default) or gbench\n"
		"                         (Google Benchmark's JSON, for its compare.py)\n"
		"  -q, --quiet            no progress lines on stderr\n"
		"  -h, --help             this text\n",
		LB_BENCH_MAX_THREADS, LB_BENCH_MAX_CS_LINES);
}

void lb_bench_defaults(struct lb_bench_config *cfg)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	if (ncpu > LB_BENCH_MAX_THREADS / 4)
		ncpu = LB_BENCH_MAX_THREADS / 4;
	memset(cfg, 0, sizeof(*cfg));
	const struct lb_lock_ops *const *table = lb_lock_table();
	for (size_t i = 0; i < lb_lock_count() && cfg->nlocks < LB_BENCH_MAX_LOCKS; i++)
		if ((table[i]->flags & LB_LOCK_F_EXCLUSIVE) && !(table[i]->flags & LB_LOCK_F_RCU) &&
		    lb_lock_in_default_runs(table[i]))
			cfg->locks[cfg->nlocks++] = table[i];
	cfg->threads[0] = 1;
	cfg->nthread_counts = 1;
	if (ncpu > 1)
		cfg->threads[cfg->nthread_counts++] = (unsigned int)ncpu;
	cfg->threads[cfg->nthread_counts++] = 4 * (unsigned int)ncpu;
	cfg->duration_ns = NS_PER_S;
	cfg->cs_lines = 1;
	lb_pin_parse("none", &cfg->pin);
	cfg->repeat = 1;
	cfg->read_pct = -1;
	cfg->sample_shift = 6;
	cfg->table_tail = true;
	lb_c2c_default_pair(&cfg->c2c_cpu[0], &cfg->c2c_cpu[1]);
}

/* "N" = iterations, "N<unit>" = time (ns, us, ms). */
static void parse_work(const char *opt, const char *arg, struct lb_work_len *w)
{
	size_t len = strlen(arg);
	if (len && arg[len - 1] >= '0' && arg[len - 1] <= '9') {
		if (lb_parse_u64(arg, 0, 1000000000, &w->value))
			lb_usage_error("%s: '%s' is not a valid amount of work; accepted: 0..1000000000 "
				       "loop iterations, or a time like 200ns, 5us, 1ms (at most 100ms)",
				       opt, arg);
		w->in_ns = false;
		return;
	}
	if (lb_parse_duration_ns(arg, 1, 0, 100000000, &w->value))
		lb_usage_error("%s: '%s' is not a valid amount of work; accepted: 0..1000000000 "
			       "loop iterations, or a time like 200ns, 5us, 1ms (at most 100ms)",
			       opt, arg);
	w->in_ns = true;
}

static void parse_locks(const char *arg, struct lb_bench_config *cfg)
{
	char names[4096], accepted[2048];
	char *items[LB_BENCH_MAX_LOCKS];
	size_t n;
	lb_lock_names(accepted, sizeof(accepted), false);
	if (strlen(arg) >= sizeof(names))
		lb_usage_error("--lock: list too long; accepted names: %s", accepted);
	strcpy(names, arg);
	if (lb_split_names(names, items, LB_BENCH_MAX_LOCKS, &n))
		lb_usage_error("--lock: '%s' is not a comma-separated list of lock names; "
			       "accepted: %s", arg, accepted);
	cfg->nlocks = 0;
	for (size_t i = 0; i < n; i++) {
		const struct lb_lock_ops *ops = lb_lock_find(items[i]);
		if (!ops)
			lb_usage_error("--lock: unknown lock '%s'; accepted: %s", items[i], accepted);
		if (ops->unsupported)
			lb_usage_error("--lock: lock '%s' cannot run here (%s); accepted: %s",
				       items[i], ops->unsupported, accepted);
		for (size_t j = 0; j < cfg->nlocks; j++)
			if (cfg->locks[j] == ops)
				lb_usage_error("--lock: '%s' is listed twice", items[i]);
		cfg->locks[cfg->nlocks++] = ops;
	}
}

enum {
	OPT_CS = 256,
	OPT_PAR,
	OPT_CS_LINES,
	OPT_PIN,
	OPT_READ_PCT,
	OPT_SAMPLE_EVERY,
	OPT_EXPLAIN,
	OPT_JSON,
	OPT_CSV,
	OPT_FORMAT,
};

static const struct option bench_long_opts[] = {
	{ "lock", required_argument, NULL, 'l' },
	{ "threads", required_argument, NULL, 't' },
	{ "duration", required_argument, NULL, 'd' },
	{ "cs", required_argument, NULL, OPT_CS },
	{ "par", required_argument, NULL, OPT_PAR },
	{ "cs-lines", required_argument, NULL, OPT_CS_LINES },
	{ "pin", required_argument, NULL, OPT_PIN },
	{ "repeat", required_argument, NULL, 'r' },
	{ "read-pct", required_argument, NULL, OPT_READ_PCT },
	{ "sample-every", required_argument, NULL, OPT_SAMPLE_EVERY },
	{ "explain", no_argument, NULL, OPT_EXPLAIN },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void lb_bench_parse(int argc, char **argv, struct lb_bench_config *cfg)
{
	unsigned int v;
	size_t n;
	bool explicit_locks = false, explicit_lines = false, help = false;
	lb_bench_defaults(cfg);
	opterr = 0; /* we print our own one-line errors */
	optind = 1;
	for (;;) {
		int c = getopt_long(argc, argv, ":l:t:d:r:qh", bench_long_opts, NULL);
		if (c == -1)
			break;
		switch (c) {
		case 'l':
			parse_locks(optarg, cfg);
			explicit_locks = true;
			break;
		case 't':
			if (lb_parse_uint_list(optarg, 1, LB_BENCH_MAX_THREADS, cfg->threads,
					       LB_BENCH_MAX_THREAD_COUNTS, &n))
				lb_usage_error("--threads: '%s' is not a valid thread list; accepted: "
					       "counts 1..%d as N, A-B or A-B:STEP, comma separated, "
					       "at most %d counts", optarg, LB_BENCH_MAX_THREADS,
					       LB_BENCH_MAX_THREAD_COUNTS);
			cfg->nthread_counts = n;
			break;
		case 'd':
			if (lb_parse_duration_ns(optarg, NS_PER_S, 10000000, 3600 * NS_PER_S,
						 &cfg->duration_ns))
				lb_usage_error("--duration: '%s' is not a valid duration; accepted: "
					       "10ms..1h, e.g. 500ms, 2s, 1.5 (seconds)", optarg);
			break;
		case OPT_CS:
			parse_work("--cs", optarg, &cfg->cs);
			break;
		case OPT_PAR:
			parse_work("--par", optarg, &cfg->par);
			break;
		case OPT_CS_LINES:
			if (lb_parse_uint(optarg, 0, LB_BENCH_MAX_CS_LINES, &cfg->cs_lines))
				lb_usage_error("--cs-lines: '%s' is not valid; accepted: 0..%d", optarg,
					       LB_BENCH_MAX_CS_LINES);
			explicit_lines = true;
			break;
		case OPT_PIN:
			if (lb_pin_parse(optarg, &cfg->pin)) {
				char allowed[256];
				cpu_set_t set;
				lb_cpulist_allowed(&set);
				lb_cpulist_format(&set, allowed, sizeof(allowed));
				lb_usage_error("--pin: '%s' is not valid; accepted: none, compact, "
					       "scatter, or a list of CPUs within the allowed %s",
					       optarg, allowed);
			}
			break;
		case 'r':
			if (lb_parse_uint(optarg, 1, 1000, &cfg->repeat))
				lb_usage_error("--repeat: '%s' is not valid; accepted: 1..1000", optarg);
			break;
		case OPT_READ_PCT:
			if (lb_parse_uint(optarg, 0, 100, &v))
				lb_usage_error("--read-pct: '%s' is not valid; accepted: 0..100", optarg);
			cfg->read_pct = (int)v;
			break;
		case OPT_SAMPLE_EVERY:
			if (lb_parse_uint(optarg, 1, 65536, &v) || (v & (v - 1)))
				lb_usage_error("--sample-every: '%s' is not valid; accepted: a power of "
					       "two 1..65536", optarg);
			cfg->sample_shift = 0;
			while ((1u << cfg->sample_shift) < v)
				cfg->sample_shift++;
			break;
		case OPT_EXPLAIN:
			cfg->explain = true;
			break;
		case OPT_JSON:
			if (!*optarg)
				lb_usage_error("--json: needs a file name");
			cfg->json_path = optarg;
			break;
		case OPT_CSV:
			if (!*optarg)
				lb_usage_error("--csv: needs a file name");
			cfg->csv_path = optarg;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "lockbench") && strcmp(optarg, "gbench"))
				lb_usage_error("--format: '%s' is not valid; accepted: lockbench, gbench",
					       optarg);
			cfg->json_gbench = !strcmp(optarg, "gbench");
			break;
		case 'q':
			cfg->quiet = true;
			break;
		case 'h':
			help = true; /* after the loop: stray arguments are refused first */
			break;
		default: /* '?' or ':' */
			lb_cli_getopt_fail(c, argc, argv, "l:t:d:r:qh", bench_long_opts,
					   "lockbench bench --help");
		}
	}
	if (optind < argc)
		lb_usage_error("unexpected argument '%s'; see 'lockbench bench --help'", argv[optind]);
	if (help) {
		lb_bench_usage(stdout);
		exit(0);
	}
	if (cfg->nlocks == 0)
		lb_usage_error("--lock: no lock can run here");
	if (cfg->json_gbench && !cfg->json_path)
		lb_usage_error("--format: gbench names what --json writes; accepted: with --json FILE");
	if (cfg->read_pct >= 0) {
		char with_rw[1024] = "";
		/* Readers check that writers' fields agree: that needs two at least. */
		if (!explicit_lines)
			cfg->cs_lines = 2;
		const struct lb_lock_ops *const *table = lb_lock_table();
		for (size_t i = 0; i < lb_lock_count(); i++)
			if ((table[i]->flags & LB_LOCK_F_RW) && !table[i]->unsupported)
				snprintf(with_rw + strlen(with_rw), sizeof(with_rw) - strlen(with_rw),
					 "%s%s", *with_rw ? "," : "", table[i]->name);
		if (!explicit_locks) {
			/* Default lock set for a read/write mix: every lock with a read side. */
			cfg->nlocks = 0;
			for (size_t i = 0; i < lb_lock_count(); i++)
				if ((table[i]->flags & LB_LOCK_F_RW) &&
				    lb_lock_in_default_runs(table[i]))
					cfg->locks[cfg->nlocks++] = table[i];
		}
		for (size_t i = 0; i < cfg->nlocks; i++)
			if (!(cfg->locks[i]->flags & LB_LOCK_F_RW))
				lb_usage_error("--read-pct: lock '%s' has no read side; locks with one: %s",
					       cfg->locks[i]->name, with_rw);
	}
	/* Resolve work given in ns into loop iterations (calibrates once). */
	cfg->cs.iters = cfg->cs.in_ns ? lb_work_iters_for_ns(cfg->cs.value) : cfg->cs.value;
	cfg->par.iters = cfg->par.in_ns ? lb_work_iters_for_ns(cfg->par.value) : cfg->par.value;
	/* Pinned runs: the round trip between the first two CPUs they use. */
	int first_two[2];
	if (cfg->pin.policy != LB_PIN_NONE && lb_pin_plan(&cfg->pin, 2, first_two) == 0 &&
	    first_two[0] >= 0 && first_two[1] >= 0 && first_two[0] != first_two[1]) {
		cfg->c2c_cpu[0] = first_two[0];
		cfg->c2c_cpu[1] = first_two[1];
	}
}
