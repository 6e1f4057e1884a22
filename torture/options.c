/* SPDX-License-Identifier: MIT */
/* options.c - option table, strict value parsing, --help and --list. */
#include "options.h"
#include "delay.h"
#include "lb_cli.h"
#include "lb_cpulist.h"
#include "lb_registry.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_S 1000000000ull

enum opt_id {
	OPT_TYPE = 256, OPT_LIST, OPT_HELP, OPT_NWRITERS, OPT_NREADERS, OPT_STAT_INTERVAL,
	OPT_DURATION, OPT_LONG_HOLD, OPT_STUTTER, OPT_SHUFFLE, OPT_ONOFF_INTERVAL,
	OPT_ONOFF_HOLDOFF, OPT_RT_BOOST, OPT_RT_BOOST_FACTOR, OPT_WRITER_FIFO, OPT_NESTED,
	OPT_CHAINS, OPT_BIND_READERS, OPT_BIND_WRITERS, OPT_VERBOSE, OPT_ACQ_LIM, OPT_JIFFY,
	OPT_WATCHDOG, OPT_INJECT_HANG, OPT_HOLDERS, OPT_FAIL_FAST, OPT_RT_SPINNERS,
	OPT_TRYLOCK_PCT, OPT_STALL_SECS, OPT_PERTURB, OPT_SEED, OPT_KERNEL_DEFAULTS,
};

struct opt_def {
	const char *name;   /* kernel spelling (underscores) */
	const char *alias;  /* an older or kernel-side name, or NULL */
	int id;
	const char *arg;    /* NULL: takes no value */
	const char *help;
	bool optional;      /* the value is optional: --name or --name=VALUE */
};

static const struct opt_def opt_defs[] = {
	{ "type", "torture_type", OPT_TYPE, "LOCK", "the lock to torture (see --list); required" },
	{ "nwriters_stress", NULL, OPT_NWRITERS, "N",
	  "writer threads; -1: 4 x CPUs, or 2 x CPUs + 1 for locks with a read side (-1)" },
	{ "nreaders_stress", NULL, OPT_NREADERS, "N",
	  "reader threads, read/write locks only; -1: 2 x CPUs + 1, or as many as the "
	  "writers given (-1)" },
	{ "kernel_defaults", NULL, OPT_KERNEL_DEFAULTS, NULL,
	  "-1 thread counts as the kernel's: 2 x CPUs writers, or CPUs writers + CPUs readers" },
	{ "perturb", NULL, OPT_PERTURB, "RATE",
	  "random spins, yields and µs sleeps around the lock's atomics and futex calls, at "
	  "RATE % of them (0.0001..100; --perturb alone: 1)", true },
	{ "seed", NULL, OPT_SEED, "N", "seed of the --perturb decisions (replay); default: drawn" },
	{ "duration", "shutdown_secs", OPT_DURATION, "S",
	  "length of the test in s (units s/m/h accepted); 0 = until SIGINT/SIGTERM (30)" },
	{ "stat_interval", NULL, OPT_STAT_INTERVAL, "S",
	  "seconds between statistics lines; 0 = only at the end (60)" },
	{ "long_hold", NULL, OPT_LONG_HOLD, "MS",
	  "occasional long hold in ms (also sets its rarity); 0 = none (100)" },
	{ "stutter", NULL, OPT_STUTTER, "J", "run/pause cycle in jiffies; 0 = off (5)" },
	{ "shuffle_interval", NULL, OPT_SHUFFLE, "J",
	  "CPU-affinity reshuffle period in jiffies; 0 = off (3)" },
	{ "onoff_interval", NULL, OPT_ONOFF_INTERVAL, "S",
	  "s between simulated CPU offline/online steps (affinity); 0 = off (0)" },
	{ "onoff_holdoff", NULL, OPT_ONOFF_HOLDOFF, "S", "s before the first onoff step (0)" },
	{ "rt_boost", NULL, OPT_RT_BOOST, "0|1|2",
	  "SCHED_FIFO boosting of writers: off, PI locks only, all locks (2)" },
	{ "rt_boost_factor", NULL, OPT_RT_BOOST_FACTOR, "N",
	  "boost with probability 1/(writers x N) per acquisition (50)" },
	{ "writer_fifo", NULL, OPT_WRITER_FIFO, "0|1", "writers run at SCHED_FIFO 50 (0)" },
	{ "rt_spinners", NULL, OPT_RT_SPINNERS, "0|1",
	  "allow rt_boost/writer_fifo with spinning locks (may livelock) (0)" },
	{ "nested_locks", NULL, OPT_NESTED, "N",
	  "0..8 extra lock instances taken before the main one (exclusive locks) (0)" },
	{ "call_rcu_chains", NULL, OPT_CHAINS, "N", "liburcu call_rcu chains kept in flight (0)" },
	{ "bind_readers", "readers_bind", OPT_BIND_READERS, "CPULIST", "CPUs for the readers (all)" },
	{ "bind_writers", "writers_bind", OPT_BIND_WRITERS, "CPULIST", "CPUs for the writers (all)" },
	{ "verbose", NULL, OPT_VERBOSE, "N",
	  "0 quiet; 1 task lines and alerts; 2 also onoff steps and backtraces (1)" },
	{ "acq_writer_lim", NULL, OPT_ACQ_LIM, "J",
	  "report write acquisitions taking this many jiffies or more; 0 = off (0)" },
	{ "jiffy", NULL, OPT_JIFFY, "DUR", "length of a port jiffy, e.g. 1ms, 250us (1ms)" },
	{ "watchdog", NULL, OPT_WATCHDOG, "S", "FAILURE after S s without progress; 0 = off (10)" },
	{ "stall_secs", NULL, OPT_STALL_SECS, "S",
	  "FAILURE when one waiter is stuck S s while the writers progress; 0 = off (10)" },
	{ "trylock_pct", NULL, OPT_TRYLOCK_PCT, "P",
	  "% of acquisitions made by trylock-and-retry, where the lock has one (10)" },
	{ "holders_check", NULL, OPT_HOLDERS, NULL,
	  "the fetch_add holders counter check (always on; accepted for old command lines)" },
	{ "fail_fast", NULL, OPT_FAIL_FAST, NULL, "end the test as soon as a failure is seen" },
	{ "inject_hang", NULL, OPT_INJECT_HANG, "N",
	  "test only: writer 0 keeps the lock forever after N acquisitions" },
	{ "list", NULL, OPT_LIST, NULL, "list the lock types (name, kind, sides, summary)" },
	{ "help", NULL, OPT_HELP, NULL, "this help" },
};
#define N_OPTS (sizeof(opt_defs) / sizeof(opt_defs[0]))

/* Everything as given, before defaults are resolved. */
struct raw_options {
	const char *type;
	int nwriters, nreaders;
	bool bind_readers_given, bind_writers_given;
	bool help, list;     /* acted on after parsing, so stray arguments are refused */
	bool seed_given;
};

static void print_help(void)
{
	printf("usage: locktorture --type LOCK [options]\n"
	       "Userspace port of the kernel's locktorture: stress one lock from the\n"
	       "registry and check mutual exclusion; exit 0 SUCCESS, 1 FAILURE, 2 bad usage.\n"
	       "Every option also accepts dashes (--nwriters-stress) and --opt=value.\n\n");
	for (size_t i = 0; i < N_OPTS; i++) {
		const struct opt_def *d = &opt_defs[i];
		char left[64];
		snprintf(left, sizeof(left), "--%s%s%s%s", d->name,
			 d->arg ? (d->optional ? "[=" : " ") : "", d->arg ? d->arg : "",
			 d->optional ? "]" : "");
		printf("  %-28s %s\n", left, d->help);
		if (d->alias)
			printf("  %-28s (also --%s)\n", "", d->alias);
	}
	printf("\nJ = port jiffies (--jiffy), S = whole seconds, MS = milliseconds.\n");
}

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

/* "N" in [min, max]. */
static int int_value(const char *opt, const char *val, int min, int max, const char *unit)
{
	unsigned int v;
	if (lb_parse_uint(val, (unsigned int)min, (unsigned int)max, &v))
		lb_usage_error("--%s: invalid value '%s' (accepted: %d..%d%s%s)", opt, val, min,
			       max, *unit ? " " : "", unit);
	return (int)v;
}

/* Whole seconds, optionally with a unit (s, m, h), in [0, max_s]. */
static int seconds_value(const char *opt, const char *val, int max_s)
{
	uint64_t ns;
	if (lb_parse_duration_ns(val, NS_PER_S, 0, (uint64_t)max_s * NS_PER_S, &ns) ||
	    ns % NS_PER_S)
		lb_usage_error("--%s: invalid value '%s' (accepted: whole seconds 0..%d, "
			       "units s, m, h allowed)", opt, val, max_s);
	return (int)(ns / NS_PER_S);
}

/* Thread counts: -1 (the kernel's "choose for me") or 0..LB_TORTURE_MAX_STRESS. */
static int stress_value(const char *opt, const char *val)
{
	if (strcmp(val, "-1") == 0)
		return -1;
	return int_value(opt, val, 0, LB_TORTURE_MAX_STRESS, "threads, or -1 for the default");
}

static int bool_value(const char *opt, const char *val)
{
	if (!strcmp(val, "1") || !strcmp(val, "y") || !strcmp(val, "Y"))
		return 1;
	if (!strcmp(val, "0") || !strcmp(val, "n") || !strcmp(val, "N"))
		return 0;
	lb_usage_error("--%s: invalid value '%s' (accepted: 0, 1, y, n)", opt, val);
}

/* The kernel's "Bad CPU range" case, reported as a usage error. */
static void cpulist_value(const char *opt, const char *val, const struct lb_torture_config *cfg,
			  cpu_set_t *out)
{
	char allowed[256];
	cpu_set_t usable;
	lb_cpulist_format(&cfg->allowed, allowed, sizeof(allowed));
	if (lb_cpulist_parse(val, out) == 0) {
		CPU_AND(&usable, out, &cfg->allowed);
		if (CPU_COUNT(&usable) > 0)
			return;
	}
	lb_usage_error("--%s: Bad CPU range '%s' (accepted: a CPU list within the allowed CPUs %s)",
		       opt, val, allowed);
}

/* --perturb=RATE: a percentage, 0.0001..100, as points per million. */
static uint32_t perturb_rate_value(const char *opt, const char *val)
{
	char *end;
	double pct = strtod(val, &end);
	if (end == val || (*end && strcmp(end, "%")) || !(pct >= 0.0001 && pct <= 100))
		lb_usage_error("--%s: invalid value '%s' (accepted: a percentage 0.0001..100)",
			       opt, val);
	return (uint32_t)(pct * 10000 + 0.5);
}

/* A fresh seed when none is given: the clock and the pid, mixed. */
static uint64_t draw_seed(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	x ^= (uint64_t)getpid() << 40;
	x *= 0x9e3779b97f4a7c15ull;
	return (x ^ (x >> 29)) % 1000000000000ull; /* 12 digits: easy to retype */
}

static void set_defaults(struct lb_torture_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	lb_cpulist_allowed(&cfg->allowed);
	cfg->ncpus = CPU_COUNT(&cfg->allowed);
	cfg->bind_readers = cfg->allowed;
	cfg->bind_writers = cfg->allowed;
	cfg->stat_interval = 60;
	cfg->duration = 30;
	cfg->long_hold = 100;
	cfg->stutter = 5;
	cfg->shuffle_interval = 3;
	cfg->rt_boost = 2;
	cfg->rt_boost_factor = 50;
	cfg->verbose = 1;
	cfg->jiffy_ns = 1000000;
	cfg->watchdog = 10;
	cfg->stall_secs = 10;
	cfg->trylock_pct = 10;
	cfg->inject_hang = -1;
	/* The exclusion counter runs on every run: it sees two owners whatever
	 * the flags and whether or not the lock's own misuse checks fire. */
	cfg->holders_check = true;
}

/* The canonical name of an option id, for messages. */
static const char *opt_name(int id)
{
	for (size_t i = 0; i < N_OPTS; i++)
		if (opt_defs[i].id == id)
			return opt_defs[i].name;
	return "?";
}

/*
 * `name` is the option as the user spelled it (an alias such as
 * readers_bind, or a dashed twin), so messages name what was typed.
 */
static void apply_option(int id, const char *name, const char *val,
			 struct lb_torture_config *cfg, struct raw_options *raw)
{
	uint64_t u;

	switch (id) {
	case OPT_TYPE: raw->type = val; break;
	case OPT_LIST: raw->list = true; break;
	case OPT_HELP: raw->help = true; break;
	case OPT_NWRITERS: raw->nwriters = stress_value(name, val); break;
	case OPT_NREADERS: raw->nreaders = stress_value(name, val); break;
	case OPT_STAT_INTERVAL: cfg->stat_interval = seconds_value(name, val, 86400); break;
	case OPT_DURATION: cfg->duration = seconds_value(name, val, 7 * 86400); break;
	case OPT_LONG_HOLD: cfg->long_hold = int_value(name, val, 0, 60000, "ms"); break;
	case OPT_STUTTER: cfg->stutter = int_value(name, val, 0, 1000000, "jiffies"); break;
	case OPT_SHUFFLE: cfg->shuffle_interval = int_value(name, val, 0, 1000000, "jiffies"); break;
	case OPT_ONOFF_INTERVAL: cfg->onoff_interval = seconds_value(name, val, 86400); break;
	case OPT_ONOFF_HOLDOFF: cfg->onoff_holdoff = seconds_value(name, val, 86400); break;
	case OPT_RT_BOOST: cfg->rt_boost = int_value(name, val, 0, 2, "(off, PI locks, all)"); break;
	case OPT_RT_BOOST_FACTOR:
		cfg->rt_boost_factor = int_value(name, val, 1, 1000000, "");
		break;
	case OPT_WRITER_FIFO: cfg->writer_fifo = bool_value(name, val); break;
	case OPT_RT_SPINNERS: cfg->rt_spinners = bool_value(name, val); break;
	case OPT_NESTED:
		cfg->nested_locks = int_value(name, val, 0, LB_TORTURE_MAX_NESTED, "locks");
		break;
	case OPT_CHAINS: cfg->call_rcu_chains = int_value(name, val, 0, 100000, "chains"); break;
	case OPT_BIND_READERS:
		cpulist_value(name, val, cfg, &cfg->bind_readers);
		raw->bind_readers_given = true;
		break;
	case OPT_BIND_WRITERS:
		cpulist_value(name, val, cfg, &cfg->bind_writers);
		raw->bind_writers_given = true;
		break;
	case OPT_VERBOSE: cfg->verbose = int_value(name, val, 0, 2, ""); break;
	case OPT_ACQ_LIM: cfg->acq_writer_lim = int_value(name, val, 0, 1000000, "jiffies"); break;
	case OPT_JIFFY:
		if (lb_parse_duration_ns(val, 1000000, 1000, NS_PER_S, &cfg->jiffy_ns))
			lb_usage_error("--%s: invalid value '%s' (accepted: 1us..1s, a bare "
				       "number is ms)", name, val);
		break;
	case OPT_WATCHDOG: cfg->watchdog = seconds_value(name, val, 3600); break;
	case OPT_STALL_SECS: cfg->stall_secs = seconds_value(name, val, 3600); break;
	case OPT_TRYLOCK_PCT: cfg->trylock_pct = int_value(name, val, 0, 100, "%"); break;
	case OPT_INJECT_HANG:
		if (lb_parse_u64(val, 0, LONG_MAX, &u))
			lb_usage_error("--%s: invalid value '%s' (accepted: 0..%ld acquisitions)",
				       name, val, LONG_MAX);
		cfg->inject_hang = (long long)u;
		break;
	case OPT_HOLDERS: cfg->holders_check = true; break;
	case OPT_KERNEL_DEFAULTS: cfg->kernel_defaults = true; break;
	case OPT_PERTURB: cfg->perturb_ppm = val ? perturb_rate_value(name, val) : 10000; break;
	case OPT_SEED:
		if (lb_parse_u64(val, 0, UINT64_MAX, &cfg->seed))
			lb_usage_error("--%s: invalid value '%s' (accepted: 0..%llu)", name, val,
				       (unsigned long long)UINT64_MAX);
		raw->seed_given = true;
		break;
	case OPT_FAIL_FAST: cfg->fail_fast = true; break;
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

/* The kernel's lock_torture_init() rules for the thread counts. */
static void resolve_threads(struct lb_torture_config *cfg, const struct raw_options *raw)
{
	int nw, nr = 0;
	bool rw = cfg->ops->read_lock != NULL;
	if (cfg->kernel_defaults) {
		nw = raw->nwriters >= 0 ? raw->nwriters : 2 * cfg->ncpus;
		if (rw) {
			if (raw->nreaders >= 0) {
				nr = raw->nreaders;
			} else {
				if (raw->nwriters < 0)
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
		nw = raw->nwriters >= 0 ? raw->nwriters : rw ? side : 4 * cfg->ncpus;
		/* Readers -1 with the writers given: as many as them (the kernel's rule). */
		if (rw)
			nr = raw->nreaders >= 0 ? raw->nreaders : raw->nwriters >= 0 ? nw : side;
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

/* getopt_long table: every name, its dashed twin, and the aliases. */
static struct option *build_longopts(void)
{
	static struct option longopts[4 * N_OPTS + 1];
	static char spelled[4 * N_OPTS][40];
	size_t n = 0;

	for (size_t i = 0; i < N_OPTS; i++) {
		const char *names[2] = { opt_defs[i].name, opt_defs[i].alias };
		for (int k = 0; k < 2 && names[k]; k++) {
			int has_arg = !opt_defs[i].arg	     ? no_argument
				      : opt_defs[i].optional ? optional_argument
							     : required_argument;
			longopts[n++] = (struct option){ names[k], has_arg, NULL, opt_defs[i].id };
			if (!strchr(names[k], '_'))
				continue;
			char *dashed = spelled[n];
			snprintf(dashed, sizeof(spelled[n]), "%s", names[k]);
			for (char *p = dashed; *p; p++)
				if (*p == '_')
					*p = '-';
			longopts[n] = longopts[n - 1];
			longopts[n++].name = dashed;
		}
	}
	longopts[n] = (struct option){ 0 };
	return longopts;
}

void lb_torture_parse_options(int argc, char **argv, struct lb_torture_config *cfg)
{
	lb_torture_parse_options_extra(argc, argv, cfg, NULL);
}

void lb_torture_parse_options_extra(int argc, char **argv, struct lb_torture_config *cfg,
				    const struct lb_lock_ops *const *extra)
{
	struct raw_options raw = { .nwriters = -1, .nreaders = -1 };
	struct option *longopts = build_longopts();
	int c, idx;

	set_defaults(cfg);
	opterr = 0; /* we print our own one-line errors */
	while ((idx = -1, c = getopt_long(argc, argv, ":h", longopts, &idx)) != -1) {
		const char *name = idx >= 0 ? longopts[idx].name : opt_name(c);
		if (c == 'h') {
			c = OPT_HELP;
			name = "h";
		}
		if (c == '?' || c == ':')
			lb_cli_getopt_fail(c, argc, argv, "h", longopts, "locktorture --help");
		apply_option(c, name, optarg, cfg, &raw);
	}
	if (optind < argc)
		lb_usage_error("unexpected argument '%s' (accepted: options only, see --help)",
			       argv[optind]);
	if (raw.help) {
		print_help();
		exit(0);
	}
	if (raw.list) {
		print_list();
		exit(0);
	}
	cfg->argc = argc;
	cfg->argv = argv;
	if (!raw.seed_given)
		cfg->seed = draw_seed();
	resolve_type(cfg, raw.type, extra);
	resolve_threads(cfg, &raw);
	check_combinations(cfg);
}
