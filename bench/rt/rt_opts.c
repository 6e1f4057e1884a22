/* SPDX-License-Identifier: MIT */
/* rt_opts.c - `lockbench rt` options: defaults, parsing, range checks. */
#include "rt.h"
#include "lb_cli.h"
#include "lb_registry.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NS_PER_S UINT64_C(1000000000)
#define NS_PER_MS UINT64_C(1000000)

static void usage(FILE *out)
{
	fprintf(out,
		"usage: lockbench rt [options]\n"
		"\n"
		"A hackbench-alike (threaded) whose every message is allocated by the sender\n"
		"and freed by the receiver from a SLUB-like allocator with the lock under test\n"
		"as its list_lock, cyclictest-alike SCHED_FIFO threads measuring wake-up (and,\n"
		"with --rt-alloc, allocation) latency alongside, and perf-stat counters.\n"
		"\n"
		"  -L, --list-lock LOCK   the allocator's list_lock: any exclusive lock\n"
		"                         (default qspinlock; see `lockbench list`)\n"
		"      --compare LIST     run each lock of LIST (comma separated, 2..%d),\n"
		"                         repeats interleaved, RT threads and --rt-alloc on,\n"
		"                         and print a side-by-side table with verdicts\n"
		"  -g, --groups N         hackbench groups (default: one per CPU; 0..200;\n"
		"                         0: no load, the RT threads run alone for --duration)\n"
		"  -f, --fds N            senders and receivers per group (default 2; 1..200)\n"
		"  -l, --loops N          messages each sender passes to each receiver\n"
		"                         (default 10000; 1..1000000)\n"
		"      --load-fifo PRIO   run the load at SCHED_FIFO PRIO (default 0: normal\n"
		"                         priority, as hackbench; 0..98)\n"
		"  -s, --datasize BYTES   message size (default 100; 16..65536)\n"
		"  -p, --pipe             pipes instead of socketpairs (hackbench's -p; for\n"
		"                         cyclictest's -p PRIO use --priority PRIO)\n"
		"  -T, --threads          the load as threads (the only mode; hackbench -T)\n"
		"      --preset NAME      rt-list-lock: the kernel experiment, hackbench\n"
		"                         -g 10 -f 20 -s 4096 -l 500 under perf stat -r 10\n"
		"                         (options after it override it)\n"
		"      --cpu-partial N    objects' worth of cpu partial pages per thread\n"
		"                         (default 0: off; 0..65536)\n"
		"      --min-partial N    empty pages kept on the partial list (default 5;\n"
		"                         0..1024)\n"
		"  -r, --repeat N         runs per lock, like perf stat -r (default 5, or 1\n"
		"                         with --groups 0; 1..%d)\n"
		"  -t, --rt-threads N     cyclictest-alike threads, one per CPU in turn\n"
		"                         (default: one per CPU; 0..%d)\n"
		"      --priority PRIO    their SCHED_FIFO priority (default 99; 1..99)\n"
		"  -i, --interval US      wake-up interval of thread 0 (default 1000; 100..1000000)\n"
		"  -d, --distance US      interval increment per thread (default 500; 0..1000000)\n"
		"  -m, --mlockall         lock memory (mlockall, as it is touched)\n"
		"      --rt-alloc         each RT wake-up also allocates and frees one object\n"
		"                         through list_lock, timed (RT alloc latency)\n"
		"      --histogram US     cyclictest's wake-up latency histogram, buckets of\n"
		"                         1 us up to US (1..100000); forces distance 0\n"
		"  -D, --duration TIME    with --groups 0: how long the RT threads run\n"
		"                         (default 5s; 100ms..1h)\n"
		"      --sched-other      run the RT threads at normal priority on purpose\n"
		"      --rt-spin-budget TIME  safety net: an RT thread spinning longer than\n"
		"                         this for a raw list_lock sleeps 50 us between tries\n"
		"                         (flagged in the report; default 1ms; 10us..1s)\n"
		"      --watchdog TIME    end the run (thread dump, exit 1) after this long\n"
		"                         without progress (default 5s; 100ms..1h)\n"
		"      --run-timeout TIME end any single run that takes longer (default 60s;\n"
		"                         1s..1h)\n"
		"      --inject-hang      testing: a receiver takes list_lock and never gives\n"
		"                         it back (the watchdog must end the run)\n"
		"      --json FILE        write every result as JSON (atomically)\n"
		"      --csv FILE         write one CSV row per run (atomically)\n"
		"  -q, --quiet            no progress lines on stderr\n"
		"  -h, --help             this text (cyclictest's -h histogram is --histogram)\n"
		"\n"
		"Exit status: 0 ok, 1 allocator invariants failed or watchdog, 2 bad usage.\n",
		LB_RT_MAX_LOCKS, LB_RT_MAX_REPEAT, LB_RT_MAX_RT_THREADS);
}

enum {
	OPT_COMPARE = 256, OPT_PRIORITY, OPT_RT_ALLOC, OPT_HISTOGRAM, OPT_SCHED_OTHER,
	OPT_SPIN_BUDGET, OPT_WATCHDOG, OPT_RUN_TIMEOUT, OPT_INJECT_HANG, OPT_JSON, OPT_CSV, OPT_LOAD_FIFO,
	OPT_PRESET, OPT_CPU_PARTIAL, OPT_MIN_PARTIAL,
};

static const struct option rt_long_opts[] = {
	{ "list-lock", required_argument, NULL, 'L' },
	{ "compare", required_argument, NULL, OPT_COMPARE },
	{ "groups", required_argument, NULL, 'g' },
	{ "fds", required_argument, NULL, 'f' },
	{ "loops", required_argument, NULL, 'l' },
	{ "datasize", required_argument, NULL, 's' },
	{ "pipe", no_argument, NULL, 'p' },
	{ "threads", no_argument, NULL, 'T' },
	{ "process", no_argument, NULL, 'P' },
	{ "preset", required_argument, NULL, OPT_PRESET },
	{ "cpu-partial", required_argument, NULL, OPT_CPU_PARTIAL },
	{ "min-partial", required_argument, NULL, OPT_MIN_PARTIAL },
	{ "repeat", required_argument, NULL, 'r' },
	{ "rt-threads", required_argument, NULL, 't' },
	{ "priority", required_argument, NULL, OPT_PRIORITY },
	{ "interval", required_argument, NULL, 'i' },
	{ "distance", required_argument, NULL, 'd' },
	{ "mlockall", no_argument, NULL, 'm' },
	{ "rt-alloc", no_argument, NULL, OPT_RT_ALLOC },
	{ "histogram", required_argument, NULL, OPT_HISTOGRAM },
	{ "duration", required_argument, NULL, 'D' },
	{ "sched-other", no_argument, NULL, OPT_SCHED_OTHER },
	{ "load-fifo", required_argument, NULL, OPT_LOAD_FIFO },
	{ "rt-spin-budget", required_argument, NULL, OPT_SPIN_BUDGET },
	{ "watchdog", required_argument, NULL, OPT_WATCHDOG },
	{ "run-timeout", required_argument, NULL, OPT_RUN_TIMEOUT },
	{ "inject-hang", no_argument, NULL, OPT_INJECT_HANG },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *exclusive_names(char *buf, size_t len)
{
	const struct lb_lock_ops *const *table = lb_lock_table();
	*buf = '\0';
	for (size_t i = 0; i < lb_lock_count(); i++)
		if ((table[i]->flags & LB_LOCK_F_EXCLUSIVE) && !(table[i]->flags & LB_LOCK_F_RCU) &&
		    !table[i]->unsupported)
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", *buf ? "," : "",
				 table[i]->name);
	return buf;
}

static const struct lb_lock_ops *lock_or_die(const char *opt, const char *name)
{
	char names[1024];
	const struct lb_lock_ops *ops = lb_lock_find(name);
	if (!ops || !(ops->flags & LB_LOCK_F_EXCLUSIVE) || (ops->flags & LB_LOCK_F_RCU))
		lb_usage_error("%s: '%s' is not an exclusive lock; accepted: %s", opt, name,
			       exclusive_names(names, sizeof(names)));
	if (ops->unsupported)
		lb_usage_error("%s: lock '%s' cannot run here: %s", opt, name, ops->unsupported);
	return ops;
}

static void parse_time(const char *opt, const char *arg, uint64_t min_ns, uint64_t max_ns,
		       const char *range, uint64_t *out)
{
	if (lb_parse_duration_ns(arg, NS_PER_S, min_ns, max_ns, out))
		lb_usage_error("%s: '%s' is not a valid time; accepted: %s (units ns, us, ms, s, "
			       "m, h; a bare number is seconds)", opt, arg, range);
}

static unsigned int parse_uint(const char *opt, const char *arg, unsigned int min,
			       unsigned int max)
{
	unsigned int v;
	if (lb_parse_uint(arg, min, max, &v))
		lb_usage_error("%s: '%s' is not valid; accepted: %u..%u", opt, arg, min, max);
	return v;
}

void lb_rt_parse(int argc, char **argv, struct lb_rt_config *cfg)
{
	static const char shortopts[] = ":L:g:f:l:s:pTPr:t:i:d:mD:qh";
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	bool explicit_lock = false, explicit_repeat = false, explicit_loops = false;
	char *compare_list = NULL;

	memset(cfg, 0, sizeof(*cfg));
	cfg->locks[0] = lb_lock_find("qspinlock");
	cfg->nlocks = cfg->locks[0] ? 1 : 0;
	/* Scaled so one run takes about a second on a small machine: one
	 * group per CPU of 2 senders and 2 receivers (hackbench: 10 x 20 x 100). */
	cfg->groups = ncpu < 1 ? 1 : ncpu > 200 ? 200 : (unsigned int)ncpu;
	cfg->fds = 2;
	cfg->loops = 10000;
	cfg->datasize = 100;
	cfg->repeat = 5;
	cfg->rt_threads = ncpu < 1 ? 1 : ncpu > LB_RT_MAX_RT_THREADS ? LB_RT_MAX_RT_THREADS
								  : (unsigned int)ncpu;
	cfg->priority = 99;
	cfg->load_prio = 0; /* hackbench's tasks are SCHED_OTHER */
	cfg->interval_us = 1000;
	cfg->distance_us = 500;
	cfg->duration_ns = 5 * NS_PER_S;
	cfg->spin_budget_ns = NS_PER_MS;
	cfg->min_partial = 5; /* slub.h's LB_SLAB_MIN_PARTIAL */
	cfg->watchdog_ns = 5 * NS_PER_S;
	cfg->run_timeout_ns = 60 * NS_PER_S;

	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, shortopts, rt_long_opts, NULL)) != -1) {
		switch (c) {
		case 'L':
			cfg->locks[0] = lock_or_die("--list-lock", optarg);
			cfg->nlocks = 1;
			explicit_lock = true;
			break;
		case OPT_COMPARE:
			compare_list = optarg;
			break;
		case 'g':
			cfg->groups = parse_uint("--groups", optarg, 0, 200);
			break;
		case 'f':
			cfg->fds = parse_uint("--fds", optarg, 1, 200);
			break;
		case 'l':
			cfg->loops = parse_uint("--loops", optarg, 1, 1000000);
			explicit_loops = true;
			break;
		case 's':
			cfg->datasize = parse_uint("--datasize", optarg, 16, 65536);
			break;
		case 'p':
			cfg->pipe = true;
			break;
		case 'T':
			break; /* threads: the only mode */
		case 'P':
			lb_usage_error("--process: process mode is not implemented; accepted: -T "
				       "(threads, the default)");
		case OPT_PRESET:
			if (strcmp(optarg, "rt-list-lock"))
				lb_usage_error("--preset: '%s' is not a preset; accepted: rt-list-lock",
					       optarg);
			cfg->preset = "rt-list-lock";
			cfg->groups = 10; /* hackbench's defaults, as the experiment ran it */
			cfg->fds = 20;
			cfg->datasize = 4096;
			cfg->loops = 500;
			cfg->repeat = 10;
			explicit_loops = explicit_repeat = true;
			break;
		case OPT_CPU_PARTIAL:
			cfg->cpu_partial = parse_uint("--cpu-partial", optarg, 0, 65536);
			break;
		case OPT_MIN_PARTIAL:
			cfg->min_partial = parse_uint("--min-partial", optarg, 0, 1024);
			break;
		case 'r':
			cfg->repeat = parse_uint("--repeat", optarg, 1, LB_RT_MAX_REPEAT);
			explicit_repeat = true;
			break;
		case 't':
			cfg->rt_threads = parse_uint("--rt-threads", optarg, 0, LB_RT_MAX_RT_THREADS);
			break;
		case OPT_PRIORITY:
			cfg->priority = (int)parse_uint("--priority", optarg, 1, 99);
			break;
		case 'i':
			cfg->interval_us = parse_uint("--interval", optarg, 100, 1000000);
			break;
		case 'd':
			cfg->distance_us = parse_uint("--distance", optarg, 0, 1000000);
			break;
		case 'm':
			cfg->mlockall = true;
			break;
		case OPT_RT_ALLOC:
			cfg->rt_alloc = true;
			break;
		case OPT_HISTOGRAM:
			cfg->histogram_us = parse_uint("--histogram", optarg, 1, 100000);
			break;
		case 'D':
			parse_time("--duration", optarg, 100 * NS_PER_MS, 3600 * NS_PER_S, "100ms..1h",
				   &cfg->duration_ns);
			break;
		case OPT_LOAD_FIFO:
			cfg->load_prio = (int)parse_uint("--load-fifo", optarg, 0, 98);
			break;
		case OPT_SCHED_OTHER:
			cfg->sched_other = true;
			break;
		case OPT_SPIN_BUDGET:
			parse_time("--rt-spin-budget", optarg, 10000, NS_PER_S, "10us..1s",
				   &cfg->spin_budget_ns);
			break;
		case OPT_WATCHDOG:
			parse_time("--watchdog", optarg, 100 * NS_PER_MS, 3600 * NS_PER_S, "100ms..1h",
				   &cfg->watchdog_ns);
			break;
		case OPT_RUN_TIMEOUT:
			parse_time("--run-timeout", optarg, NS_PER_S, 3600 * NS_PER_S, "1s..1h",
				   &cfg->run_timeout_ns);
			break;
		case OPT_INJECT_HANG:
			cfg->inject_hang = true;
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
		case 'q':
			cfg->quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default: /* '?' or ':' */
			lb_cli_getopt_fail(c, argc, argv, shortopts, rt_long_opts,
					   "lockbench rt --help");
		}
	}
	if (optind < argc) {
		unsigned int prio;
		if (!strcmp(argv[optind - 1], "-p") && !lb_parse_uint(argv[optind], 1, 99, &prio))
			lb_usage_error("-p: is hackbench's --pipe and takes no value (cyclictest's -p "
				       "PRIO clashes); accepted: --priority %s", argv[optind]);
		lb_usage_error("unexpected argument '%s'; see 'lockbench rt --help'", argv[optind]);
	}
	if (compare_list) {
		char *names[LB_RT_MAX_LOCKS + 1], buf[1024];
		size_t n = 0;
		if (explicit_lock)
			lb_usage_error("--compare: give either --list-lock or --compare, not both");
		if (strlen(compare_list) >= sizeof(buf))
			lb_usage_error("--compare: list too long");
		strcpy(buf, compare_list);
		if (lb_split_names(buf, names, LB_RT_MAX_LOCKS + 1, &n) || n < 2 ||
		    n > LB_RT_MAX_LOCKS)
			lb_usage_error("--compare: '%s' is not valid; accepted: 2..%d exclusive lock "
				       "names, comma separated, e.g. qspinlock,rtmutex",
				       compare_list, LB_RT_MAX_LOCKS);
		for (size_t i = 0; i < n; i++) {
			cfg->locks[i] = lock_or_die("--compare", names[i]);
			for (size_t k = 0; k < i; k++)
				if (cfg->locks[k] == cfg->locks[i])
					lb_usage_error("--compare: lock '%s' given twice", names[i]);
		}
		cfg->nlocks = n;
		cfg->compare = true;
		cfg->rt_alloc = true; /* the experiment: RT allocation latency on */
	}
	if (!cfg->nlocks)
		lb_usage_error("--list-lock: no lock can run here");
	if (cfg->groups * cfg->fds * 2 > LB_RT_MAX_TASKS)
		lb_usage_error("--groups/--fds: %u x %u x 2 = %u threads; accepted: at most %d",
			       cfg->groups, cfg->fds, cfg->groups * cfg->fds * 2, LB_RT_MAX_TASKS);
	if (!cfg->groups && explicit_loops && !cfg->preset)
		lb_usage_error("--loops: has no effect with --groups 0 (the RT threads alone run for "
			       "--duration); accepted: --groups 1..200 with --loops, or --duration");
	if (!cfg->groups && !explicit_repeat)
		cfg->repeat = 1; /* RT threads alone: one --duration, as cyclictest -D */
	if (!cfg->groups && !cfg->rt_threads)
		lb_usage_error("--groups 0 needs RT threads; accepted: --rt-threads 1..%d",
			       LB_RT_MAX_RT_THREADS);
	if (cfg->inject_hang && !cfg->groups)
		lb_usage_error("--inject-hang needs the load; accepted: --groups 1..200");
}
