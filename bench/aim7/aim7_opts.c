/* SPDX-License-Identifier: MIT */
/* aim7_opts.c - `lockbench aim7` options: the option table, parsing, range checks. */
#include "aim7.h"
#include "lb_cli.h"
#include "lb_opt.h"
#include "lb_registry.h"
#include "lb_time.h"

#include <stdlib.h>
#include <string.h>

#define HELP "lockbench aim7 --help"
#define AIM_DEFAULT_SPINLOCK "qspinlock-pv"
#define AIM_DEFAULT_RWLOCK "qrwlock"

/* The configuration and what the command line holds until it is resolved. */
struct aim_args {
	struct aim_config cfg;
	const char *workfile, *ab, *costs;
	unsigned int start, end, incr; /* re-aim's -s/-e/-i sweep */
	bool complete;                 /* --complete */
};

static const struct lb_lock_ops *lock_or_die(const char *opt, const char *name)
{
	char names[2048];
	lb_lock_names(names, sizeof(names), false);
	const struct lb_lock_ops *ops = lb_lock_find(name);
	if (!ops)
		lb_usage_error("--%s: unknown lock '%s'; accepted: %s", opt, name, names);
	if (ops->unsupported)
		lb_usage_error("--%s: lock '%s' cannot run here (%s); accepted: %s", opt, name,
			       ops->unsupported, names);
	if (!(ops->flags & LB_LOCK_F_EXCLUSIVE) || (ops->flags & LB_LOCK_F_RCU))
		lb_usage_error("--%s: lock '%s' does not exclude %s; accepted: an exclusive lock "
			       "(see `lockbench list`)", opt, name,
			       ops->flags & LB_LOCK_F_RCU ? "readers from writers" : "writers");
	/* The kernel paths aim7 models take their locks unconditionally. */
	if (ops->flags & LB_LOCK_F_FALLIBLE) {
		lb_lock_names_without(names, sizeof(names), LB_LOCK_F_FALLIBLE);
		lb_usage_error("--%s: lock '%s' can fail to lock, which aim7 does not handle; "
			       "accepted: %s", opt, name, names);
	}
	return ops;
}

/* --mutex, --spinlock, --rwlock: the row's field is that role's role_ops[] slot. */
static int parse_role_lock(const struct lb_opt *o, const char *arg, void *base)
{
	*(const struct lb_lock_ops **)lb_opt_field(o, base) = lock_or_die(o->name, arg);
	return 0;
}

static int parse_role(const struct lb_opt *o, const char *arg, void *base)
{
	for (int r = 0; r < AIM_NROLES; r++)
		if (!strcmp(arg, aim_role_name(r))) {
			((struct aim_args *)base)->cfg.ab_role = r;
			return 0;
		}
	lb_usage_error("--%s: unknown role '%s'; accepted: %s", o->name, arg, o->accepted);
}

static const char *workfile_help(void)
{
	static char text[512]; /* built once per --help, single-threaded */
	snprintf(text, sizeof(text), "the job mix (default high_systime); shipped: %s",
		 aim_workfile_shipped());
	return text;
}

#define ROLE_AT(role) (offsetof(struct aim_args, cfg.role_ops) + (role) * sizeof(void *))

static const struct lb_opt aim_opts[] = {
	{ .name = "workfile", .short_name = 'f', .kind = LB_OPT_STRING, .arg = "NAME|PATH",
	  .help_fn = workfile_help, .def = "high_systime",
	  .offset = LB_OPT_AT(struct aim_args, workfile, const char *) },
	{ .name = "users", .short_name = 'u', .kind = LB_OPT_UINT_LIST, .arg = "LIST",
	  .help = "children per load point: N, A-B, A-B:STEP, comma\n"
		  "separated (default 1,10,50,100; 1.." LB_OPT_STR(AIM_MAX_USERS) ")",
	  .def = "1,10,50,100", .min = 1, .max = AIM_MAX_USERS, .cap = AIM_MAX_USER_POINTS,
	  .invalid = "a valid list",
	  .accepted = "child counts 1.." LB_OPT_STR(AIM_MAX_USERS) " as N, A-B or A-B:STEP, "
		      "comma separated, at most " LB_OPT_STR(AIM_MAX_USER_POINTS),
	  .offset = LB_OPT_AT(struct aim_args, cfg.users, unsigned int *),
	  .count_offset = LB_OPT_AT(struct aim_args, cfg.npoints, size_t) },
	{ .name = "startusers", .short_name = 's', .kind = LB_OPT_UINT, .arg = "N",
	  .help = "re-aim's sweep: first child count (with -e, -i)", .min = 1,
	  .max = AIM_MAX_USERS, .invalid = "a valid count",
	  .offset = LB_OPT_AT(struct aim_args, start, unsigned int) },
	{ .name = "endusers", .short_name = 'e', .kind = LB_OPT_UINT, .arg = "N",
	  .help = "last child count (default: the start)", .min = 1, .max = AIM_MAX_USERS,
	  .invalid = "a valid count", .offset = LB_OPT_AT(struct aim_args, end, unsigned int) },
	{ .name = "increment", .short_name = 'i', .kind = LB_OPT_UINT, .arg = "N",
	  .help = "step (default 1)", .def = "1", .min = 1, .max = AIM_MAX_USERS,
	  .invalid = "a valid count", .offset = LB_OPT_AT(struct aim_args, incr, unsigned int) },
	{ .name = "window", .short_name = 'w', .kind = LB_OPT_DURATION, .arg = "TIME",
	  .help = "re-aim's fixed window, the default mode: each\n"
		  "child cycles through its jobs (--jobs, default 100)\n"
		  "until its alarm TIME after its start, which cuts\n"
		  "the job in flight; reports jobs completed, child\n"
		  "CPU, CPUs busy and progress per second (default\n"
		  "3s; 100ms..10m)",
	  .def = "3s", .unit_ns = LB_NS_PER_S, .min = LB_NS_PER_S / 10, .max = 600 * LB_NS_PER_S,
	  .invalid = "a valid duration", .accepted = "100ms..10m, e.g. 2s, 500ms",
	  .offset = LB_OPT_AT(struct aim_args, cfg.window_ns, uint64_t) },
	{ .name = "complete", .kind = LB_OPT_FLAG,
	  .help = "re-aim's completion mode instead: each child runs\n"
		  "its job list (--jobs, or sized from --time) to its\n"
		  "end; every child runs every test at least once",
	  .offset = LB_OPT_AT(struct aim_args, complete, bool) },
	{ .name = "jobs", .short_name = 'j', .kind = LB_OPT_UINT, .arg = "N",
	  .help = "jobs per child: the list a child cycles in the\n"
		  "window or runs to its end (without --window it\n"
		  "implies --complete)",
	  .min = 1, .max = 1000000, .invalid = "a valid count",
	  .offset = LB_OPT_AT(struct aim_args, cfg.jobs, unsigned int) },
	{ .name = "time", .short_name = 't', .kind = LB_OPT_DURATION, .arg = "TIME",
	  .help = "completion mode's target length of a load point,\n"
		  "the jobs sized from a short calibration (implies\n"
		  "--complete; default 3s; 100ms..10m)",
	  .def = "3s", .unit_ns = LB_NS_PER_S, .min = LB_NS_PER_S / 10, .max = 600 * LB_NS_PER_S,
	  .invalid = "a valid duration", .accepted = "100ms..10m, e.g. 500ms, 2s, 1.5 (seconds)",
	  .offset = LB_OPT_AT(struct aim_args, cfg.time_ns, uint64_t) },
	LB_OPT_ROW_REPEAT(struct aim_args, cfg.repeat, AIM_MAX_REPEAT, "1",
			  "runs per load point, interleaved (default 1; 1.."
			  LB_OPT_STR(AIM_MAX_REPEAT) ")"),
	{ .name = "mutex", .kind = LB_OPT_CUSTOM, .arg = "LOCK",
	  .help = "the sleeping-lock role: directory i_mutex, pipe\n"
		  "mutex, the shm semaphore (default mutex)",
	  .parse = parse_role_lock, .offset = ROLE_AT(AIM_ROLE_MUTEX) },
	{ .name = "spinlock", .kind = LB_OPT_CUSTOM, .arg = "LOCK",
	  .help = "the spin role: zone, LRU, inode, file table,\n"
		  "siglock, page table, port table, dcache updates\n"
		  "(default " AIM_DEFAULT_SPINLOCK ")",
	  .parse = parse_role_lock, .offset = ROLE_AT(AIM_ROLE_SPIN) },
	{ .name = "rwlock", .kind = LB_OPT_CUSTOM, .arg = "LOCK",
	  .help = "the rw role: task list, mmap lock\n"
		  "(default " AIM_DEFAULT_RWLOCK "); a lock without a read side takes\n"
		  "its write side",
	  .parse = parse_role_lock, .offset = ROLE_AT(AIM_ROLE_RW) },
	{ .name = "ab", .kind = LB_OPT_STRING, .arg = "A,B",
	  .help = "A/B in one run: PRE = A, POST = B on --ab-role;\nrepeats run ABBA: A B, B A, ...",
	  .offset = LB_OPT_AT(struct aim_args, ab, const char *) },
	{ .name = "ab-role", .kind = LB_OPT_CUSTOM, .arg = "ROLE",
	  .help = "mutex, spinlock or rwlock (default mutex)", .parse = parse_role,
	  .accepted = "mutex, spinlock, rwlock" },
	{ .name = "check", .kind = LB_OPT_DURATION, .arg = "TIME",
	  .help = "also check the invariants every TIME while the\n"
		  "children run (they pause between jobs)",
	  .unit_ns = LB_NS_PER_S, .min = LB_NS_PER_S / 100, .max = 600 * LB_NS_PER_S,
	  .invalid = "a valid period", .accepted = "10ms..10m, e.g. 100ms, 1s",
	  .offset = LB_OPT_AT(struct aim_args, cfg.check_ns, uint64_t) },
	{ .name = "explain", .kind = LB_OPT_FLAG,
	  .help = "per role: acquisitions, share of time waiting,\n"
		  "and the lock's counters (spins, sleeps, wakes...)",
	  .offset = LB_OPT_AT(struct aim_args, cfg.explain, bool) },
	{ .name = "seed", .kind = LB_OPT_U64, .arg = "N",
	  .help = "seed of the children's job orders (default 1)", .def = "1", .min = 0,
	  .max = UINT64_MAX, .invalid = "a valid number",
	  .offset = LB_OPT_AT(struct aim_args, cfg.seed, uint64_t) },
	{ .name = "costs", .kind = LB_OPT_STRING, .arg = "FILE|none",
	  .help = "the cost table the simulated kernel's work is\n"
		  "sized from (default: the table shipped in\n"
		  "bench/aim7/costs/); none: the unsized kernel",
	  .needs = "a file or none",
	  .offset = LB_OPT_AT(struct aim_args, costs, const char *) },
	{ .name = "calibrate", .kind = LB_OPT_STRING, .arg = "FILE",
	  .help = "time the real system calls behind the tests on\n"
		  "this kernel (about 4 s; wall and CPU times and\n"
		  "the filesystem of $TMPDIR), write the cost table\n"
		  "to FILE (- for stdout) and exit",
	  .needs = "a file name or -",
	  .offset = LB_OPT_AT(struct aim_args, cfg.calibrate_path, const char *) },
	LB_OPT_ROW_JSON(struct aim_args, cfg.json_path, "write the results as JSON (atomically)"),
	LB_OPT_ROW_CSV(struct aim_args, cfg.csv_path, "write re-aim's CSV (atomically)"),
	LB_OPT_ROW_QUIET(struct aim_args, cfg.quiet),
	LB_OPT_ROW_HELP,
	LB_OPT_ROW_END,
};

const struct lb_opt_cmd lb_aim7_cmd = {
	.name = "lockbench aim7",
	.usage = "usage: lockbench aim7 [options]\n"
		 "\n"
		 "An AIM7/re-aim work-alike: N children (threads) run a workfile's mix of\n"
		 "tests; the system tests run on a simulated kernel whose objects are guarded\n"
		 "by the locks under test, ext4's s_orphan_lock among them (taken twice per\n"
		 "truncating creat and per last unlink, as v3.14 does).  Prints re-aim's log\n"
		 "table and its console table (Num Forked, Parent Time, Child SysTime, Child\n"
		 "UTime, Jobs per Minute, Jobs/min/Child, Std_dev Time, Std_dev Percent, JTI):\n"
		 "the shape of the 2014 thread's PRE/POST lines, 311.99 Jobs/min on both\n"
		 "sides in re-aim's 2000-s alarm window while the children's system CPU went\n"
		 "x1.98 (8-socket completed runs: +49.2% at 100-900 users; 2-socket: +0.4%).\n"
		 "A load point is that window by default (--window, 3 s): each child\n"
		 "cycles through its jobs until its alarm, which cuts the job in flight;\n"
		 "Jobs/min counts the jobs completed in it.  --complete runs every child's\n"
		 "list to its end instead (re-aim's completion mode: every test at least\n"
		 "once per child, ~0.5 s of CPU a child here).  --ab gauges s_orphan_lock\n"
		 "and gives a verdict, or a ratio of CPUs busy or progress, only when the\n"
		 "mechanism is there (doc/aim7.md).  At the defaults (high_systime at 1,\n"
		 "10, 50 and 100 users) it takes about 15-25 s on the 2-CPU guest: 4\n"
		 "windows and the cost table's check.\n"
		 "\n",
	.epilogue = "\n"
		    "Locks: see `lockbench list`.  Exit status: 0, 1 when an invariant of the\n"
		    "simulated kernel failed or the watchdog fired, 2 on bad input.\n",
	.opts = aim_opts,
};

/* re-aim's -s/-e/-i: the load points from start to end by incr. */
static void resolve_sweep(struct aim_args *a, const struct lb_opt_seen *seen)
{
	bool have_users = lb_opt_given(&lb_aim7_cmd, seen, "users");
	bool have_end = lb_opt_given(&lb_aim7_cmd, seen, "endusers");
	struct aim_config *cfg = &a->cfg;
	if (!lb_opt_given(&lb_aim7_cmd, seen, "startusers") && !have_end &&
	    !lb_opt_given(&lb_aim7_cmd, seen, "increment"))
		return;
	if (have_users)
		lb_usage_error("--users and -s/-e/-i: give one or the other; see '" HELP "'");
	if (!a->start)
		a->start = 1;
	if (!have_end)
		a->end = a->start;
	if (a->end < a->start)
		lb_usage_error("--endusers: %u is below --startusers %u; accepted: >= the start",
			       a->end, a->start);
	cfg->npoints = 0;
	for (unsigned int u = a->start; u <= a->end; u += a->incr) {
		if (cfg->npoints == AIM_MAX_USER_POINTS)
			lb_usage_error("-s/-e/-i: more than %d load points; accepted: a sweep of at "
				       "most %d", AIM_MAX_USER_POINTS, AIM_MAX_USER_POINTS);
		cfg->users[cfg->npoints++] = u;
		if (u > UINT32_MAX - a->incr)
			break;
	}
}

/* The fixed window (default) or completion mode: --complete, or --jobs or
 * --time without --window, selects completion (window_ns 0). */
static void resolve_mode(struct aim_args *a, const struct lb_opt_seen *seen)
{
	bool window = lb_opt_given(&lb_aim7_cmd, seen, "window");
	bool time = lb_opt_given(&lb_aim7_cmd, seen, "time");
	if (window && time)
		lb_usage_error("--window and --time: give one or the other (--time sizes the jobs; "
			       "--window runs them until the alarm); see '" HELP "'");
	if (window && a->complete)
		lb_usage_error("--window and --complete: give one or the other (--window runs the "
			       "jobs until the alarm, --complete to their end); see '" HELP "'");
	if (a->complete || (!window && (time || lb_opt_given(&lb_aim7_cmd, seen, "jobs"))))
		a->cfg.window_ns = 0;
}

static void resolve_ab(struct aim_config *cfg, const char *ab)
{
	char *copy = strdup(ab), *names[3];
	size_t n;
	if (!copy || lb_split_names(copy, names, 3, &n) || n != 2)
		lb_usage_error("--ab: '%s' is not two lock names; accepted: A,B e.g. "
			       "mutex-nospin,mutex", ab);
	cfg->ab = true;
	cfg->ab_ops[0] = lock_or_die("ab", names[0]);
	cfg->ab_ops[1] = lock_or_die("ab", names[1]);
	free(copy);
}

/* --costs FILE|none, or the shipped table (none shipped: unsized). */
static void resolve_costs(struct aim_config *cfg, const char *spec)
{
	char err[5000];
	if (spec && !strcmp(spec, "none"))
		return;
	const char *path = spec ? spec : aim_costs_default_path();
	if (!path)
		return;
	if (aim_costs_load(path, &cfg->costs, err, sizeof(err)))
		lb_usage_error("--costs: %s; accepted: a table written by --calibrate (doc/aim7.md) "
			       "or none", err);
	cfg->costs_on = true;
}

void aim_parse(int argc, char **argv, struct aim_config *cfg)
{
	struct aim_args a;
	struct lb_opt_seen seen;
	char err[8192];

	memset(&a, 0, sizeof(a));
	a.cfg.role_ops[AIM_ROLE_MUTEX] = lb_lock_find("mutex");
	/* qspinlock-pv, not the native qspinlock: FIFO hand-over to waiters
	 * that are not running collapses with more children than CPUs, which
	 * the paravirt-style parking answers, as in a guest kernel (doc/aim7.md). */
	a.cfg.role_ops[AIM_ROLE_SPIN] = lb_lock_find(AIM_DEFAULT_SPINLOCK);
	a.cfg.role_ops[AIM_ROLE_RW] = lb_lock_find(AIM_DEFAULT_RWLOCK);
	lb_opt_parse(&lb_aim7_cmd, argc, argv, &a, &seen);
	resolve_sweep(&a, &seen);
	resolve_mode(&a, &seen);
	if (a.ab)
		resolve_ab(&a.cfg, a.ab);
	else if (lb_opt_given(&lb_aim7_cmd, &seen, "ab-role"))
		lb_usage_error("--ab-role: only for an A/B run; accepted: with --ab A,B");
	if (aim_workfile_load(a.workfile, &a.cfg.wf, err, sizeof(err)))
		lb_usage_error("--workfile: %s", err);
	if (!a.cfg.calibrate_path)
		resolve_costs(&a.cfg, a.costs);
	*cfg = a.cfg;
}
