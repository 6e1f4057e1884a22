/* SPDX-License-Identifier: MIT */
/* options.c - option table, strict value parsing, --help and --list. */
#include "options.h"
#include "deadlock.h"
#include "delay.h"
#include "lb_cli.h"
#include "lb_cpulist.h"
#include "lb_opt.h"
#include "lb_registry.h"
#include "lb_time.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The configuration and what the command line holds until it is resolved. */
struct torture_args {
	struct lb_torture_config cfg;
	const char *type;
	int nwriters, nreaders;  /* -1: the kernel's "choose for me" */
	bool list;               /* acted on after parsing, so stray arguments are refused */
};

/* --perturb[=RATE]: a percentage, 0.0001..100, as points per million. */
static int parse_perturb_rate(const struct lb_opt *o, const char *arg, void *base)
{
	char *end;
	double pct = strtod(arg, &end);
	if (end == arg || (*end && strcmp(end, "%")) || !(pct >= 0.0001 && pct <= 100))
		return -1;
	*(uint32_t *)lb_opt_field(o, base) = (uint32_t)(pct * 10000 + 0.5);
	return 0;
}

/* A fresh seed when none is given: the clock and the pid, mixed. */
static uint64_t draw_seed(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t x = (uint64_t)ts.tv_sec * LB_NS_PER_S + (uint64_t)ts.tv_nsec;
	x ^= (uint64_t)getpid() << 40;
	x *= 0x9e3779b97f4a7c15ull;
	return (x ^ (x >> 29)) % 1000000000000ull; /* 12 digits: easy to retype */
}

/* Whole seconds, optionally with a unit (s, m, h), into an int, in [0, o->max]. */
static int parse_seconds(const struct lb_opt *o, const char *arg, void *base)
{
	uint64_t ns;
	char accepted[96];
	if (lb_parse_duration_ns(arg, LB_NS_PER_S, 0, o->max * LB_NS_PER_S, &ns) == 0 &&
	    ns % LB_NS_PER_S == 0) {
		*(int *)lb_opt_field(o, base) = (int)(ns / LB_NS_PER_S);
		return 0;
	}
	snprintf(accepted, sizeof(accepted), "whole seconds 0..%llu, units s, m, h allowed",
		 (unsigned long long)o->max);
	lb_opt_bad_value(o, arg, accepted);
}

/* Thread counts: -1 (the kernel's "choose for me") or 0..LB_TORTURE_MAX_STRESS. */
static int parse_stress(const struct lb_opt *o, const char *arg, void *base)
{
	unsigned int v;
	int *field = lb_opt_field(o, base);
	if (strcmp(arg, "-1") == 0) {
		*field = -1;
		return 0;
	}
	if (lb_parse_uint(arg, 0, LB_TORTURE_MAX_STRESS, &v))
		return -1;
	*field = (int)v;
	return 0;
}

/* The kernel's bool parameters: 1/y/Y or 0/n/N; -1 for anything else. */
static int yes_no(const char *arg)
{
	if (!strcmp(arg, "1") || !strcmp(arg, "y") || !strcmp(arg, "Y"))
		return 1;
	if (!strcmp(arg, "0") || !strcmp(arg, "n") || !strcmp(arg, "N"))
		return 0;
	return -1;
}

static int parse_yes_no_int(const struct lb_opt *o, const char *arg, void *base)
{
	int v = yes_no(arg);
	*(int *)lb_opt_field(o, base) = v;
	return v < 0 ? -1 : 0;
}

static int parse_yes_no_bool(const struct lb_opt *o, const char *arg, void *base)
{
	int v = yes_no(arg);
	*(bool *)lb_opt_field(o, base) = v > 0;
	return v < 0 ? -1 : 0;
}

/* The kernel's "Bad CPU range" case, reported as a usage error. */
static int parse_cpulist(const struct lb_opt *o, const char *arg, void *base)
{
	const struct lb_torture_config *cfg = &((struct torture_args *)base)->cfg;
	cpu_set_t *out = lb_opt_field(o, base), usable;
	char allowed[256];
	lb_cpulist_format(&cfg->allowed, allowed, sizeof(allowed));
	if (lb_cpulist_parse(arg, out) == 0) {
		CPU_AND(&usable, out, &cfg->allowed);
		if (CPU_COUNT(&usable) > 0)
			return 0;
	}
	lb_usage_error("--%s: Bad CPU range '%s' (accepted: a CPU list within the allowed CPUs %s)",
		       o->name, arg, allowed);
}

/* --deadlock MODE: none, aa, abba, abbcca. */
static int parse_deadlock(const struct lb_opt *o, const char *arg, void *base)
{
	int mode = lb_torture_deadlock_mode_parse(arg);
	*(int *)lb_opt_field(o, base) = mode;
	return mode < 0 ? -1 : 0;
}

static int parse_inject_hang(const struct lb_opt *o, const char *arg, void *base)
{
	uint64_t v;
	if (lb_parse_u64(arg, o->min, o->max, &v))
		return -1;
	*(long long *)lb_opt_field(o, base) = (long long)v;
	return 0;
}

#define T struct torture_args
#define INT_ROW(n, a, h, d, lo, hi, u, f)                                                   \
	{ .name = n, .kind = LB_OPT_INT, .arg = a, .help = h, .def = d, .min = lo, .max = hi,  \
	  .unit = u, .offset = LB_OPT_AT(T, cfg.f, int) }
#define SECONDS_ROW(n, al, h, d, hi, f)                                                     \
	{ .name = n, .alias = al, .kind = LB_OPT_CUSTOM, .arg = "S", .help = h, .def = d,       \
	  .max = hi, .parse = parse_seconds, .offset = LB_OPT_AT(T, cfg.f, int) }
static const struct lb_opt torture_opts[] = {
	{ .name = "type", .alias = "torture_type", .kind = LB_OPT_STRING, .arg = "LOCK",
	  .help = "the lock to torture (see --list); required",
	  .offset = LB_OPT_AT(T, type, const char *) },
	{ .name = "nwriters_stress", .kind = LB_OPT_CUSTOM, .arg = "N",
	  .help = "writer threads; -1: 4 x CPUs, or 2 x CPUs + 1 for locks with a read side (-1)",
	  .def = "-1", .parse = parse_stress,
	  .accepted = "0.." LB_OPT_STR(LB_TORTURE_MAX_STRESS) " threads, or -1 for the default",
	  .offset = LB_OPT_AT(T, nwriters, int) },
	{ .name = "nreaders_stress", .kind = LB_OPT_CUSTOM, .arg = "N",
	  .help = "reader threads, read/write locks only; -1: 2 x CPUs + 1, or as many as the "
		  "writers given (-1)",
	  .def = "-1", .parse = parse_stress,
	  .accepted = "0.." LB_OPT_STR(LB_TORTURE_MAX_STRESS) " threads, or -1 for the default",
	  .offset = LB_OPT_AT(T, nreaders, int) },
	{ .name = "kernel_defaults", .kind = LB_OPT_FLAG,
	  .help = "-1 thread counts as the kernel's: 2 x CPUs writers, or CPUs writers + CPUs readers",
	  .offset = LB_OPT_AT(T, cfg.kernel_defaults, bool) },
	{ .name = "perturb", .kind = LB_OPT_CUSTOM, .arg = "RATE", .bare = "1",
	  .help = "random spins, yields and µs sleeps around the lock's atomics and futex calls, at "
		  "RATE % of them (0.0001..100; --perturb alone: 1)",
	  .parse = parse_perturb_rate, .accepted = "a percentage 0.0001..100",
	  .offset = LB_OPT_AT(T, cfg.perturb_ppm, uint32_t) },
	{ .name = "seed", .kind = LB_OPT_U64, .arg = "N",
	  .help = "seed of the --perturb decisions (replay); default: drawn", .min = 0,
	  .max = UINT64_MAX, .offset = LB_OPT_AT(T, cfg.seed, uint64_t) },
	SECONDS_ROW("duration", "shutdown_secs",
		    "length of the test in s (units s/m/h accepted); 0 = until SIGINT/SIGTERM (30)",
		    "30", 7 * 86400, duration),
	SECONDS_ROW("stat_interval", NULL,
		    "seconds between statistics lines; 0 = only at the end (60)", "60", 86400,
		    stat_interval),
	INT_ROW("long_hold", "MS", "occasional long hold in ms (also sets its rarity); 0 = none (100)",
		"100", 0, 60000, "ms", long_hold),
	INT_ROW("stutter", "J", "run/pause cycle in jiffies; 0 = off (5)", "5", 0, 1000000,
		"jiffies", stutter),
	INT_ROW("shuffle_interval", "J", "CPU-affinity reshuffle period in jiffies; 0 = off (3)", "3",
		0, 1000000, "jiffies", shuffle_interval),
	SECONDS_ROW("onoff_interval", NULL,
		    "s between simulated CPU offline/online steps (affinity); 0 = off (0)", NULL,
		    86400, onoff_interval),
	SECONDS_ROW("onoff_holdoff", NULL, "s before the first onoff step (0)", NULL, 86400,
		    onoff_holdoff),
	INT_ROW("rt_boost", "0|1|2", "SCHED_FIFO boosting of writers: off, PI locks only, all locks (2)",
		"2", 0, 2, "(off, PI locks, all)", rt_boost),
	INT_ROW("rt_boost_factor", "N", "boost with probability 1/(writers x N) per acquisition (50)",
		"50", 1, 1000000, NULL, rt_boost_factor),
	{ .name = "writer_fifo", .kind = LB_OPT_CUSTOM, .arg = "0|1",
	  .help = "writers run at SCHED_FIFO 50 (0)", .parse = parse_yes_no_int,
	  .accepted = "0, 1, y, n", .offset = LB_OPT_AT(T, cfg.writer_fifo, int) },
	{ .name = "rt_spinners", .kind = LB_OPT_CUSTOM, .arg = "0|1",
	  .help = "allow rt_boost/writer_fifo with spinning locks (may livelock) (0)",
	  .parse = parse_yes_no_bool, .accepted = "0, 1, y, n",
	  .offset = LB_OPT_AT(T, cfg.rt_spinners, bool) },
	INT_ROW("nested_locks", "N",
		"0..8 extra lock instances taken before the main one (exclusive locks) (0)", NULL, 0,
		LB_TORTURE_MAX_NESTED, "locks", nested_locks),
	INT_ROW("call_rcu_chains", "N", "liburcu call_rcu chains kept in flight (0)", NULL, 0, 100000,
		"chains", call_rcu_chains),
	{ .name = "bind_readers", .alias = "readers_bind", .kind = LB_OPT_CUSTOM, .arg = "CPULIST",
	  .help = "CPUs for the readers (all)", .parse = parse_cpulist,
	  .offset = LB_OPT_AT(T, cfg.bind_readers, cpu_set_t) },
	{ .name = "bind_writers", .alias = "writers_bind", .kind = LB_OPT_CUSTOM, .arg = "CPULIST",
	  .help = "CPUs for the writers (all)", .parse = parse_cpulist,
	  .offset = LB_OPT_AT(T, cfg.bind_writers, cpu_set_t) },
	INT_ROW("verbose", "N", "0 quiet; 1 task lines and alerts; 2 also onoff steps and backtraces (1)",
		"1", 0, 2, NULL, verbose),
	INT_ROW("acq_writer_lim", "J",
		"report write acquisitions taking this many jiffies or more; 0 = off (0)", NULL, 0,
		1000000, "jiffies", acq_writer_lim),
	{ .name = "jiffy", .kind = LB_OPT_DURATION, .arg = "DUR",
	  .help = "length of a port jiffy, e.g. 1ms, 250us (1ms)", .def = "1ms",
	  .unit_ns = LB_NS_PER_MS, .min = LB_NS_PER_US, .max = LB_NS_PER_S,
	  .accepted = "1us..1s, a bare number is ms", .offset = LB_OPT_AT(T, cfg.jiffy_ns, uint64_t) },
	SECONDS_ROW("watchdog", NULL,
		    "FAILURE after S s without progress (sooner if all asleep); 0 = off (10)",
		    "10", 3600, watchdog),
	SECONDS_ROW("stall_secs", NULL,
		    "FAILURE when one waiter is stuck S s while the writers progress; 0 = off (10)",
		    "10", 3600, stall_secs),
	INT_ROW("trylock_pct", "P",
		"% of acquisitions made by trylock-and-retry, where the lock has one (10)", "10", 0,
		100, "%", trylock_pct),
	{ .name = "holders_check", .kind = LB_OPT_FLAG,
	  .help = "the fetch_add holders counter check (always on; accepted for old command lines)",
	  .offset = LB_OPT_AT(T, cfg.holders_check, bool) },
	{ .name = "fail_fast", .kind = LB_OPT_FLAG, .help = "end the test as soon as a failure is seen",
	  .offset = LB_OPT_AT(T, cfg.fail_fast, bool) },
	{ .name = "deadlock", .kind = LB_OPT_CUSTOM, .arg = "MODE",
	  .help = "inject deadlocks: aa, abba, abbcca (locks that detect them, e.g. rqspinlock; "
		  "others are skipped, exit 77); none = the usual torture (none)",
	  .def = "none", .parse = parse_deadlock, .accepted = "none, aa, abba, abbcca",
	  .offset = LB_OPT_AT(T, cfg.deadlock, int) },
	{ .name = "deadlock_nmi", .kind = LB_OPT_CUSTOM, .arg = "0|1",
	  .help = "with --deadlock: \"NMI\" contenders, signal handlers that retake the lock their "
		  "thread holds (1)", .def = "1", .parse = parse_yes_no_bool,
	  .accepted = "0, 1, y, n", .offset = LB_OPT_AT(T, cfg.deadlock_nmi, bool) },
	{ .name = "inject_hang", .kind = LB_OPT_CUSTOM, .arg = "N",
	  .help = "test only: writer 0 keeps the lock forever after N acquisitions",
	  .parse = parse_inject_hang, .min = 0, .max = LONG_MAX, .unit = "acquisitions",
	  .offset = LB_OPT_AT(T, cfg.inject_hang, long long) },
	{ .name = "processes", .short_name = 'P', .kind = LB_OPT_FLAG,
	  .help = "workers are forked processes on one MAP_SHARED lock (locks with init_shared)",
	  .offset = LB_OPT_AT(T, cfg.processes, bool) },
	{ .name = "list", .kind = LB_OPT_FLAG, .help = "list the lock types (name, kind, sides, summary)",
	  .offset = LB_OPT_AT(T, list, bool) },
	{ .name = "help", .short_name = 'h', .kind = LB_OPT_HELP, .help = "this help" },
	LB_OPT_ROW_END,
};
#undef T

static const struct lb_opt_cmd torture_cmd = {
	.name = "locktorture",
	.usage = "usage: locktorture --type LOCK [options]\n"
		 "Userspace port of the kernel's locktorture: stress one lock from the\n"
		 "registry and check mutual exclusion; exit 0 SUCCESS, 1 FAILURE, 2 bad usage.\n"
		 "It runs for --duration (30 s by default: 30.2 s measured) and shows a status\n"
		 "line with an ETA on a terminal.\n"
		 "Every option also accepts dashes (--nwriters-stress) and --opt=value.\n\n",
	.epilogue = "\nJ = port jiffies (--jiffy), S = whole seconds, MS = milliseconds.\n",
	.opts = torture_opts,
	.dashed_twins = true,
	.help_column = 31,
};

static const char *lock_kind(const struct lb_lock_ops *o)
{
	if (o->unsupported)
		return "unsupported";
	if (o->flags & LB_LOCK_F_BUSTED)
		return "busted";
	if (o->flags & LB_LOCK_F_NOLOCK)
		return "nolock";
	return "real";
}

static void print_list(void)
{
	const struct lb_lock_ops *const *tab = lb_lock_table();
	for (size_t i = 0; i < lb_lock_count(); i++) {
		const struct lb_lock_ops *o = tab[i];
		printf("%-20s %-12s %-5s %s\n", o->name, lock_kind(o),
		       (o->flags & LB_LOCK_F_RW) ? "rw" : "excl",
		       o->unsupported ? o->unsupported : o->summary);
	}
}

static void resolve_type(struct lb_torture_config *cfg, const char *type,
			 const struct lb_lock_ops *const *extra)
{
	char names[2048];
	lb_lock_names(names, sizeof(names), false);
	if (!type)
		lb_usage_error("--type is required (accepted: %s)", names);
	const struct lb_lock_ops *ops = NULL;
	for (size_t i = 0; extra && extra[i] && !ops; i++)
		if (strcmp(extra[i]->name, type) == 0)
			ops = extra[i];
	if (!ops)
		ops = lb_lock_find(type);
	if (!ops)
		lb_usage_error("invalid torture type: \"%s\" (--type accepts: %s)", type, names);
	if (ops->unsupported)
		lb_usage_error("--type %s: not available here: %s (accepted: %s)", type,
			       ops->unsupported, names);
	cfg->ops = ops;
	cfg->type = ops->name;
}

/* The thread counts: oversubscribed by default, or the kernel's lock_torture_init() rules. */
static void resolve_threads(struct lb_torture_config *cfg, int nwriters, int nreaders)
{
	int nw, nr = 0;
	bool rw = cfg->ops->read_lock != NULL;
	if (cfg->kernel_defaults) {
		nw = nwriters >= 0 ? nwriters : 2 * cfg->ncpus;
		if (rw) {
			if (nreaders >= 0) {
				nr = nreaders;
			} else {
				if (nwriters < 0)
					nw = cfg->ncpus; /* split evenly, same total as exclusive locks */
				nr = nw;
			}
		}
	} else {
		/*
		 * Oversubscribed: more threads of each side than CPUs, so that
		 * holders and waiters are preempted inside the lock's windows
		 * (a wake-up racing a sleep, a hand-over racing a steal).
		 */
		int side = 2 * cfg->ncpus + 1;
		nw = nwriters >= 0 ? nwriters : rw ? side : 4 * cfg->ncpus;
		/* Readers -1 with the writers given: as many as them (the kernel's rule). */
		if (rw)
			nr = nreaders >= 0 ? nreaders : nwriters >= 0 ? nw : side;
		if (nw > LB_TORTURE_MAX_STRESS)
			nw = LB_TORTURE_MAX_STRESS;
		if (nr > LB_TORTURE_MAX_STRESS)
			nr = LB_TORTURE_MAX_STRESS;
	}
	if (nw + nr == 0)
		lb_usage_error("must run at least one locking thread (--nwriters_stress and "
			       "--nreaders_stress: accepted totals 1..%d)", 2 * LB_TORTURE_MAX_STRESS);
	cfg->nwriters_stress = nw;
	cfg->nreaders_stress = nr;
}

/* -P: a lock processes can share, and nothing that needs a thread of main. */
static void check_processes(const struct lb_torture_config *cfg)
{
	if (!cfg->processes)
		return;
	if (!cfg->ops->init_shared) {
		char names[2048];
		size_t len = 0;
		names[0] = '\0';
		const struct lb_lock_ops *const *tab = lb_lock_table();
		for (size_t i = 0; i < lb_lock_count() && len < sizeof(names) - 64; i++)
			if (tab[i]->init_shared && !tab[i]->unsupported)
				len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
							len ? ", " : "", tab[i]->name);
		lb_usage_error("-P: %s cannot be shared by processes (accepted: a lock with "
			       "init_shared: %s)", cfg->type, names);
	}
	if (cfg->deadlock)
		lb_usage_error("-P: --deadlock needs threads (its contenders are signal handlers of "
			       "the workers; accepted with -P: --deadlock none)");
	if (cfg->call_rcu_chains)
		lb_usage_error("-P: --call_rcu_chains needs threads (accepted with -P: 0)");
}

static void check_combinations(struct lb_torture_config *cfg)
{
	const struct lb_lock_ops *ops = cfg->ops;
	int nthreads = cfg->nwriters_stress + cfg->nreaders_stress;

	if (cfg->nested_locks &&
	    (!(ops->flags & LB_LOCK_F_EXCLUSIVE) || (ops->flags & LB_LOCK_F_RW)))
		lb_usage_error("--nested_locks: %s cannot nest (accepted: 0 for this lock; 1..%d "
			       "only for exclusive locks without a read side)", cfg->type,
			       LB_TORTURE_MAX_NESTED);
	long nctx = (long)nthreads * (1 + (ops->thread_ctx_size ? cfg->nested_locks : 0));
	if (nctx > LB_MAX_THREADS)
		lb_usage_error("--nested_locks/--nwriters_stress: %ld lock contexts (accepted: "
			       "threads x (1 + nested_locks) <= %d)", nctx, LB_MAX_THREADS);
	lb_torture_deadlock_check_options(cfg);
	check_processes(cfg);
	if (cfg->inject_hang >= 0 && cfg->nwriters_stress == 0)
		lb_usage_error("--inject_hang: needs a writer (accepted with --nwriters_stress >= 1)");

	unsigned int hold_ms =
		lb_torture_delay_max_hold_ms(lb_torture_delay_model_for(ops), cfg->long_hold);
	unsigned int min_wd = (2 * hold_ms + 999) / 1000 + 1;
	if (cfg->watchdog && (unsigned int)cfg->watchdog < min_wd)
		lb_usage_error("--watchdog: %d s is too short for %u ms holds (accepted: 0, or %u..3600)",
			       cfg->watchdog, hold_ms, min_wd);
	if (cfg->stall_secs && (unsigned int)cfg->stall_secs < min_wd)
		lb_usage_error("--stall_secs: %d s is too short for %u ms holds (accepted: 0, or "
			       "%u..3600)", cfg->stall_secs, hold_ms, min_wd);
}

void lb_torture_parse_options(int argc, char **argv, struct lb_torture_config *cfg)
{
	lb_torture_parse_options_extra(argc, argv, cfg, NULL);
}

void lb_torture_parse_options_extra(int argc, char **argv, struct lb_torture_config *cfg,
				    const struct lb_lock_ops *const *extra)
{
	struct torture_args a;
	struct lb_opt_seen seen;

	memset(&a, 0, sizeof(a));
	lb_cpulist_allowed(&a.cfg.allowed);
	a.cfg.ncpus = CPU_COUNT(&a.cfg.allowed);
	a.cfg.bind_readers = a.cfg.allowed;
	a.cfg.bind_writers = a.cfg.allowed;
	a.cfg.inject_hang = -1;
	/* The exclusion counter runs on every run: it sees two owners whatever
	 * the flags and whether or not the lock's own misuse checks fire. */
	a.cfg.holders_check = true;
	lb_opt_parse(&torture_cmd, argc, argv, &a, &seen);
	*cfg = a.cfg;
	if (a.list) {
		print_list();
		exit(0);
	}
	cfg->argc = argc;
	cfg->argv = argv;
	if (!lb_opt_given(&torture_cmd, &seen, "seed"))
		cfg->seed = draw_seed();
	resolve_type(cfg, a.type, extra);
	resolve_threads(cfg, a.nwriters, a.nreaders);
	check_combinations(cfg);
}
