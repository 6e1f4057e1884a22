/* SPDX-License-Identifier: MIT */
/* rt_opts.c - `lockbench rt` options: the option table, defaults, range checks. */
#include "rt.h"
#include "lb_cli.h"
#include "lb_opt.h"
#include "lb_registry.h"
#include "lb_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The configuration and what the command line holds until it is resolved. */
struct rt_args {
	struct lb_rt_config cfg;
	const char *compare_list;
	bool threads_mode, process_mode; /* hackbench's -T (the default) and -P */
};

/* The list_lock under -P when none is given: qspinlock (the default) keeps
 * its MCS nodes in a per-process table, so it cannot be shared. */
#define RT_PROCESS_DEFAULT_LOCK "ticket"

/* The exclusive locks rt accepts, comma separated; with shared_only, only
 * those that can be shared by processes (init_shared). */
static const char *list_lock_names(char *buf, size_t len, bool shared_only)
{
	const struct lb_lock_ops *const *table = lb_lock_table();
	*buf = '\0';
	for (size_t i = 0; i < lb_lock_count(); i++)
		if ((table[i]->flags & LB_LOCK_F_EXCLUSIVE) &&
		    !(table[i]->flags & (LB_LOCK_F_RCU | LB_LOCK_F_FALLIBLE)) &&
		    !table[i]->unsupported && (!shared_only || table[i]->init_shared))
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
			       list_lock_names(names, sizeof(names), false));
	/* The allocator's list_lock is taken unconditionally (engines/slub). */
	if (ops->flags & LB_LOCK_F_FALLIBLE)
		lb_usage_error("%s: lock '%s' can fail to lock, which rt does not handle; "
			       "accepted: %s", opt, name, list_lock_names(names, sizeof(names), false));
	if (ops->unsupported)
		lb_usage_error("%s: lock '%s' cannot run here: %s", opt, name, ops->unsupported);
	return ops;
}

static int parse_list_lock(const struct lb_opt *o, const char *arg, void *base)
{
	struct lb_rt_config *cfg = &((struct rt_args *)base)->cfg;
	char opt[32];
	snprintf(opt, sizeof(opt), "--%s", o->name);
	cfg->locks[0] = lock_or_die(opt, arg);
	cfg->nlocks = 1;
	return 0;
}

/* --cpu-slab: whose cpu slab a task allocates from (slub.h's cpu_mode). */
static int parse_cpu_slab(const struct lb_opt *o, const char *arg, void *base)
{
	struct lb_rt_config *cfg = &((struct rt_args *)base)->cfg;
	(void)o;
	static const char *const names[] = { "thread", "percpu", "local-lock" };
	for (unsigned int i = 0; i < 3; i++)
		if (!strcmp(arg, names[i])) {
			cfg->cpu_slab = i; /* LB_SLUB_PER_THREAD, PER_CPU, PER_CPU_LOCAL_LOCK */
			return 0;
		}
	return -1;
}

/* --slub-cpu-partial: which kernel's cpu partial slabs (slub.h's partial_mode). */
static int parse_slub_cpu_partial(const struct lb_opt *o, const char *arg, void *base)
{
	struct lb_rt_config *cfg = &((struct rt_args *)base)->cfg;
	(void)o;
	if (!strcmp(arg, "off"))
		cfg->slub_cpu_partial = 0; /* LB_SLUB_PARTIAL_CONFIG_OFF */
	else if (!strcmp(arg, "sysfs-0"))
		cfg->slub_cpu_partial = 1; /* LB_SLUB_PARTIAL_SYSFS_ZERO */
	else
		return -1;
	return 0;
}

/* --slab-caches: whose caches a message's head and data come from (rt_skb.h). */
static int parse_slab_caches(const struct lb_opt *o, const char *arg, void *base)
{
	struct lb_rt_config *cfg = &((struct rt_args *)base)->cfg;
	(void)o;
	if (!strcmp(arg, "6.18"))
		cfg->slab_caches = 0; /* LB_RT_SKB_V6_18 */
	else if (!strcmp(arg, "6.1"))
		cfg->slab_caches = 1; /* LB_RT_SKB_V6_1 */
	else
		return -1;
	return 0;
}

/* --preset rt-list-lock: the kernel experiment's hackbench -g 10 -f 20 -s 4096
 * -l 500 under perf stat -r 10; options after it override it (argv order). */
static int parse_preset(const struct lb_opt *o, const char *arg, void *base)
{
	struct lb_rt_config *cfg = &((struct rt_args *)base)->cfg;
	(void)o;
	if (strcmp(arg, "rt-list-lock"))
		return -1;
	cfg->preset = "rt-list-lock";
	cfg->groups = 10; /* hackbench's defaults, as the experiment ran it */
	cfg->fds = 20;
	cfg->datasize = 4096;
	cfg->loops = 500;
	cfg->repeat = 10;
	return 0;
}

#define RT_TIME_ACCEPTED(range) range " (units ns, us, ms, s, m, h; a bare number is seconds)"
#define T struct rt_args
static const struct lb_opt rt_opts[] = {
	{ .name = "list-lock", .alias = "lock", .short_name = 'L', .kind = LB_OPT_CUSTOM, .arg = "LOCK",
	  .help = "the allocator's list_lock: any exclusive lock\n"
		  "(default qspinlock, ticket with -P; see\n"
		  "`lockbench list`)",
	  .parse = parse_list_lock },
	{ .name = "compare", .kind = LB_OPT_STRING, .arg = "LIST",
	  .help = "run each lock of LIST (comma separated, 2.." LB_OPT_STR(LB_RT_MAX_LOCKS) "),\n"
		  "repeats interleaved, RT threads and --rt-alloc on,\n"
		  "and print a side-by-side table with verdicts,\n"
		  "each gated on the kernel mechanism's gauges (CPUs\n"
		  "left idle, >= 2 running list_lock contenders)",
	  .offset = LB_OPT_AT(T, compare_list, const char *) },
	{ .name = "groups", .short_name = 'g', .kind = LB_OPT_UINT, .arg = "N",
	  .help = "hackbench groups (default 10, as hackbench; 0..200;\n"
		  "0: no load, the RT threads run alone for --duration)",
	  .def = "10", .min = 0, .max = 200, .offset = LB_OPT_AT(T, cfg.groups, unsigned int) },
	{ .name = "fds", .short_name = 'f', .kind = LB_OPT_UINT, .arg = "N",
	  .help = "senders and receivers per group (default 20, as\n"
		  "hackbench; 1..200)", .def = "20", .min = 1,
	  .max = 200, .offset = LB_OPT_AT(T, cfg.fds, unsigned int) },
	{ .name = "loops", .short_name = 'l', .kind = LB_OPT_UINT, .arg = "N",
	  .help = "messages each sender passes to each receiver\n(default 100, as hackbench; 1..1000000)",
	  .def = "100", .min = 1, .max = 1000000, .offset = LB_OPT_AT(T, cfg.loops, unsigned int) },
	{ .name = "load-fifo", .kind = LB_OPT_INT, .arg = "PRIO",
	  .help = "run the load at SCHED_FIFO PRIO (default 0: normal\n"
		  "priority, as hackbench; 0..98)",
	  .def = "0", .min = 0, .max = 98, .offset = LB_OPT_AT(T, cfg.load_prio, int) },
	{ .name = "datasize", .short_name = 's', .kind = LB_OPT_UINT, .arg = "BYTES",
	  .help = "message size (default 100; 16..65536)", .def = "100", .min = 16, .max = 65536,
	  .offset = LB_OPT_AT(T, cfg.datasize, unsigned int) },
	{ .name = "pipe", .short_name = 'p', .kind = LB_OPT_FLAG,
	  .help = "pipes instead of socketpairs (hackbench's -p; for\n"
		  "cyclictest's -p PRIO use --priority PRIO)",
	  .offset = LB_OPT_AT(T, cfg.pipe, bool) },
	{ .name = "load-threads", .short_name = 'T', .kind = LB_OPT_FLAG,
	  .help = "the load as threads of this process (the default;\n"
		  "hackbench -T; --threads is bench's and ab's counts)",
	  .offset = LB_OPT_AT(T, threads_mode, bool) },
	{ .name = "process", .short_name = 'P', .kind = LB_OPT_FLAG,
	  .help = "the load as processes (hackbench without -T): the\n"
		  "allocator lives in a shared mapping; only locks that\n"
		  "work across processes (`pshared` in `lockbench list`;\n"
		  "default list_lock then " RT_PROCESS_DEFAULT_LOCK ")",
	  .offset = LB_OPT_AT(T, process_mode, bool) },
	{ .name = "preset", .kind = LB_OPT_CUSTOM, .arg = "NAME",
	  .help = "rt-list-lock: the kernel experiment, hackbench\n"
		  "-g 10 -f 20 -s 4096 -l 500 under perf stat -r 10\n"
		  "(options after it override it)",
	  .parse = parse_preset, .accepted = "rt-list-lock" },
	{ .name = "cpu-partial", .kind = LB_OPT_UINT, .arg = "N",
	  .help = "objects' worth of cpu partial pages per thread\n(default 0: off; 0..65536)",
	  .min = 0, .max = 65536, .offset = LB_OPT_AT(T, cfg.cpu_partial, unsigned int) },
	{ .name = "slub-cpu-partial", .kind = LB_OPT_CUSTOM, .arg = "MODE",
	  .help = "the kernel's cpu partial slabs: off (default: a\n"
		  "kernel built with CONFIG_SLUB_CPU_PARTIAL=n),\n"
		  "sysfs-0 (built with it, /sys/kernel/slab/*/cpu_partial\n"
		  "set to 0, as scripts/rt-calibrate counts the kernel:\n"
		  "one frozen partial slab per CPU, v6.1 mm/slub.c)",
	  .parse = parse_slub_cpu_partial, .accepted = "off,sysfs-0" },
	{ .name = "slab-caches", .kind = LB_OPT_CUSTOM, .arg = "KERNEL",
	  .help = "whose caches a message's data head comes from:\n"
		  "6.18 (default: skbuff_small_head up to 576 B),\n"
		  "6.1 (kmalloc-cg-512 and up, Debian 12's kernel)",
	  .parse = parse_slab_caches, .accepted = "6.1,6.18" },
	{ .name = "cpu-slab", .kind = LB_OPT_CUSTOM, .arg = "MODE",
	  .help = "whose cpu slab a task allocates from: percpu\n"
		  "(default: one per CPU, lockless rseq commit, slow\n"
		  "path under a per-CPU mutex: the kernel's fast path),\n"
		  "local-lock (one per CPU, every operation under a PI\n"
		  "mutex: PREEMPT_RT's local_lock), thread (one per\n"
		  "thread, the old work-alike)",
	  .parse = parse_cpu_slab, .accepted = "local-lock,percpu,thread" },
	{ .name = "min-partial", .kind = LB_OPT_UINT, .arg = "N",
	  .help = "empty pages kept on the partial list (default 5;\n0..1024)", .def = "5",
	  .min = 0, .max = 1024, .offset = LB_OPT_AT(T, cfg.min_partial, unsigned int) },
	LB_OPT_ROW_REPEAT(T, cfg.repeat, LB_RT_MAX_REPEAT, "5",
			  "runs per lock, like perf stat -r (default 5, or 1\n"
			  "with --groups 0; 1.." LB_OPT_STR(LB_RT_MAX_REPEAT) ")"),
	{ .name = "rt-threads", .short_name = 't', .kind = LB_OPT_UINT, .arg = "N",
	  .help = "cyclictest-alike threads, one per CPU in turn\n"
		  "(default: one per CPU; 0.." LB_OPT_STR(LB_RT_MAX_RT_THREADS) ")",
	  .min = 0, .max = LB_RT_MAX_RT_THREADS, .offset = LB_OPT_AT(T, cfg.rt_threads, unsigned int) },
	{ .name = "priority", .kind = LB_OPT_INT, .arg = "PRIO",
	  .help = "their SCHED_FIFO priority (default 99; 1..99)", .def = "99", .min = 1, .max = 99,
	  .offset = LB_OPT_AT(T, cfg.priority, int) },
	{ .name = "interval", .short_name = 'i', .kind = LB_OPT_UINT, .arg = "US",
	  .help = "wake-up interval of thread 0 (default 1000; 100..1000000)", .def = "1000",
	  .min = 100, .max = 1000000, .offset = LB_OPT_AT(T, cfg.interval_us, unsigned int) },
	{ .name = "distance", .short_name = 'd', .kind = LB_OPT_UINT, .arg = "US",
	  .help = "interval increment per thread (default 500; 0..1000000)", .def = "500",
	  .min = 0, .max = 1000000, .offset = LB_OPT_AT(T, cfg.distance_us, unsigned int) },
	{ .name = "mlockall", .short_name = 'm', .kind = LB_OPT_FLAG,
	  .help = "lock memory (mlockall, as it is touched)",
	  .offset = LB_OPT_AT(T, cfg.mlockall, bool) },
	{ .name = "rt-alloc", .kind = LB_OPT_FLAG,
	  .help = "each RT wake-up also allocates and frees one object\n"
		  "through list_lock, timed (RT alloc latency)",
	  .offset = LB_OPT_AT(T, cfg.rt_alloc, bool) },
	{ .name = "histogram", .kind = LB_OPT_UINT, .arg = "US",
	  .help = "cyclictest's wake-up latency histogram, buckets of\n"
		  "1 us up to US (1..100000); forces distance 0",
	  .min = 1, .max = 100000, .offset = LB_OPT_AT(T, cfg.histogram_us, unsigned int) },
	{ .name = "duration", .short_name = 'D', .kind = LB_OPT_DURATION, .arg = "TIME",
	  .help = "with --groups 0: how long the RT threads run\n(default 5s; 100ms..1h)",
	  .def = "5s", .unit_ns = LB_NS_PER_S, .min = 100 * LB_NS_PER_MS, .max = 3600 * LB_NS_PER_S,
	  .invalid = "a valid time", .accepted = RT_TIME_ACCEPTED("100ms..1h"),
	  .offset = LB_OPT_AT(T, cfg.duration_ns, uint64_t) },
	{ .name = "sched-other", .kind = LB_OPT_FLAG,
	  .help = "run the RT threads at normal priority on purpose",
	  .offset = LB_OPT_AT(T, cfg.sched_other, bool) },
	{ .name = "rt-spin-budget", .kind = LB_OPT_DURATION, .arg = "TIME",
	  .help = "safety net: an RT thread spinning longer than\n"
		  "this for a raw list_lock sleeps 50 us between tries\n"
		  "(flagged in the report; default 1ms; 10us..1s)",
	  .def = "1ms", .unit_ns = LB_NS_PER_S, .min = 10 * LB_NS_PER_US, .max = LB_NS_PER_S,
	  .invalid = "a valid time", .accepted = RT_TIME_ACCEPTED("10us..1s"),
	  .offset = LB_OPT_AT(T, cfg.spin_budget_ns, uint64_t) },
	{ .name = "watchdog", .kind = LB_OPT_DURATION, .arg = "TIME",
	  .help = "end the run (thread dump, exit 1) after this long\n"
		  "without progress (default 5s; 1s..1h)",
	  .def = "5s", .unit_ns = LB_NS_PER_S, .min = LB_RT_WATCHDOG_MIN_NS, .max = 3600 * LB_NS_PER_S,
	  .invalid = "a valid time", .accepted = RT_TIME_ACCEPTED("1s..1h"),
	  .offset = LB_OPT_AT(T, cfg.watchdog_ns, uint64_t) },
	{ .name = "run-timeout", .kind = LB_OPT_DURATION, .arg = "TIME",
	  .help = "end any single run that takes longer (default 60s;\n1s..1h)",
	  .def = "60s", .unit_ns = LB_NS_PER_S, .min = LB_NS_PER_S, .max = 3600 * LB_NS_PER_S,
	  .invalid = "a valid time", .accepted = RT_TIME_ACCEPTED("1s..1h"),
	  .offset = LB_OPT_AT(T, cfg.run_timeout_ns, uint64_t) },
	{ .name = "inject-hang", .kind = LB_OPT_FLAG,
	  .help = "testing: a receiver takes list_lock and never gives\n"
		  "it back (the watchdog must end the run)",
	  .offset = LB_OPT_AT(T, cfg.inject_hang, bool) },
	LB_OPT_ROW_JSON(T, cfg.json_path, "write every result as JSON (atomically)"),
	LB_OPT_ROW_CSV(T, cfg.csv_path, "write one CSV row per run (atomically)"),
	LB_OPT_ROW_WIDE(T, cfg.wide),
	LB_OPT_ROW_QUIET(T, cfg.quiet),
	{ .name = "help", .short_name = 'h', .kind = LB_OPT_HELP,
	  .help = "this text (cyclictest's -h histogram is --histogram)" },
	LB_OPT_ROW_END,
};
#undef T

const struct lb_opt_cmd lb_rt_cmd = {
	.name = "lockbench rt",
	.usage = "usage: lockbench rt [options]\n"
		 "\n"
		 "A hackbench-alike (threads, or processes with -P) whose every message is\n"
		 "allocated by the sender and freed by the receiver from a SLUB-like allocator\n"
		 "with the lock under test as its list_lock, cyclictest-alike SCHED_FIFO\n"
		 "threads measuring wake-up (and, with --rt-alloc, allocation) latency\n"
		 "alongside, and perf-stat counters.  At the defaults (5 runs) it takes about\n"
		 "25 s, and --compare of two locks about 40 s (5 runs each), measured on\n"
		 "the 2-CPU guest at load 76-127; each run's Time grows with the load.\n"
		 "\n",
	.epilogue = "\nExit status: 0 ok, 1 allocator invariants failed or watchdog, 2 bad usage.\n",
	.opts = rt_opts,
};

/* --compare LIST: 2..LB_RT_MAX_LOCKS distinct exclusive locks, RT allocation on. */
static void resolve_compare(struct lb_rt_config *cfg, const char *compare_list, bool explicit_lock)
{
	char *names[LB_RT_MAX_LOCKS + 1], buf[1024];
	size_t n = 0;
	if (explicit_lock)
		lb_usage_error("--compare: give either --list-lock or --compare, not both");
	if (strlen(compare_list) >= sizeof(buf))
		lb_usage_error("--compare: list too long");
	strcpy(buf, compare_list);
	if (lb_split_names(buf, names, LB_RT_MAX_LOCKS + 1, &n) || n < 2 || n > LB_RT_MAX_LOCKS)
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

/* cyclictest's -p PRIO where hackbench's -p (--pipe) takes no value: name
 * the spelling that does what was meant, before the generic stray-argument
 * error would. */
static void refuse_cyclictest_p(int argc, char **argv)
{
	unsigned int prio;
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-p") && !lb_parse_uint(argv[i + 1], 1, 99, &prio))
			lb_usage_error("-p: is hackbench's --pipe and takes no value (cyclictest's -p "
				       "PRIO clashes); accepted: --priority %s", argv[i + 1]);
}

/* Combinations no single row can judge. */
static void check_combinations(struct lb_rt_config *cfg, bool explicit_repeat,
			       bool explicit_loops)
{
	if (!cfg->nlocks)
		lb_usage_error("--list-lock: no lock can run here");
	if (cfg->slub_cpu_partial && cfg->cpu_partial)
		lb_usage_error("--slub-cpu-partial: sysfs-0 is the kernel's own cpu partial list, "
			       "--cpu-partial %u the work-alike's; accepted: --cpu-partial 0 with "
			       "--slub-cpu-partial sysfs-0", cfg->cpu_partial);
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

/* -P: every list_lock must work across processes. */
static void check_process_locks(const struct lb_rt_config *cfg, const char *opt)
{
	char names[1024];
	for (size_t i = 0; i < cfg->nlocks; i++)
		if (!cfg->locks[i]->init_shared)
			lb_usage_error("--process: %s '%s' cannot be shared by processes (its queue "
				       "nodes, waiter records or futexes are process-private); "
				       "accepted with -P: %s", opt, cfg->locks[i]->name,
				       list_lock_names(names, sizeof(names), true));
}

void lb_rt_parse(int argc, char **argv, struct lb_rt_config *cfg)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct rt_args a = { 0 };
	struct lb_opt_seen seen;

	a.cfg.locks[0] = lb_lock_find("qspinlock");
	a.cfg.nlocks = a.cfg.locks[0] ? 1 : 0;
	a.cfg.cpu_slab = 1; /* --cpu-slab percpu: LB_SLUB_PER_CPU */
	a.cfg.rt_threads = ncpu < 1 ? 1 : ncpu > LB_RT_MAX_RT_THREADS ? LB_RT_MAX_RT_THREADS
								    : (unsigned int)ncpu;
	refuse_cyclictest_p(argc, argv);
	lb_opt_parse(&lb_rt_cmd, argc, argv, &a, &seen);
	bool explicit_lock = lb_opt_given(&lb_rt_cmd, &seen, "list-lock");
	if (a.process_mode && a.threads_mode)
		lb_usage_error("--process: --threads (-T) excludes it; accepted: one of -P, -T");
	if (a.compare_list)
		resolve_compare(&a.cfg, a.compare_list, explicit_lock);
	if (a.process_mode) {
		a.cfg.process_mode = true;
		if (!a.compare_list && !explicit_lock) {
			a.cfg.locks[0] = lb_lock_find(RT_PROCESS_DEFAULT_LOCK);
			a.cfg.nlocks = a.cfg.locks[0] ? 1 : 0;
		}
		check_process_locks(&a.cfg, a.compare_list ? "--compare" : "-L");
	}
	bool preset = a.cfg.preset != NULL;
	check_combinations(&a.cfg, preset || lb_opt_given(&lb_rt_cmd, &seen, "repeat"),
			   preset || lb_opt_given(&lb_rt_cmd, &seen, "loops"));
	*cfg = a.cfg;
}
