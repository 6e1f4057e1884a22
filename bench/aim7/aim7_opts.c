/* SPDX-License-Identifier: MIT */
/* aim7_opts.c - `lockbench aim7` options: usage, parsing, range checks. */
#include "aim7.h"
#include "lb_cli.h"
#include "lb_registry.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S UINT64_C(1000000000)
#define HELP "lockbench aim7 --help"
#define AIM_DEFAULT_SPINLOCK "qspinlock-pv"
#define AIM_DEFAULT_RWLOCK "qrwlock"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: lockbench aim7 [options]\n"
		"\n"
		"An AIM7/re-aim work-alike: N children (threads) run a workfile's mix of\n"
		"tests; the system tests run on a simulated kernel whose objects are guarded\n"
		"by the locks under test.  Prints re-aim's table (Jobs/min, JTI...).\n"
		"\n"
		"  -f, --workfile NAME|PATH  the job mix (default high_systime); shipped: %s\n"
		"  -u, --users LIST       children per load point: N, A-B, A-B:STEP, comma\n"
		"                         separated (default 1,10,50,100; 1..%d)\n"
		"  -s, --startusers N     re-aim's sweep: first child count (with -e, -i)\n"
		"  -e, --endusers N       last child count (default: the start)\n"
		"  -i, --increment N      step (default 1)\n"
		"  -j, --jobs N           jobs per child (default: sized from a short\n"
		"                         calibration so a load point takes about --time)\n"
		"  -t, --time TIME        target length of a load point: 500ms, 2s, 1.5 (s)\n"
		"                         (default 3s; 100ms..10m)\n"
		"  -r, --repeat N         runs per load point, interleaved (default 1; 1..%d)\n"
		"      --mutex LOCK       the sleeping-lock role: directory i_mutex, pipe\n"
		"                         mutex, the shm semaphore (default mutex)\n"
		"      --spinlock LOCK    the spin role: zone, LRU, inode, file table,\n"
		"                         siglock, page table, port table (default %s)\n"
		"      --rwlock LOCK      the rw role: task list, dentry cache, mmap lock\n"
		"                         (default %s); a lock without a read side takes\n"
		"                         its write side\n"
		"      --ab A,B           A/B in one run: PRE = A, POST = B on --ab-role;\n"
		"                         repeats run ABBA: A B, B A, ...\n"
		"      --ab-role ROLE     mutex, spinlock or rwlock (default mutex)\n"
		"      --check TIME       also check the invariants every TIME while the\n"
		"                         children run (they pause between jobs)\n"
		"      --explain          per role: acquisitions, share of time waiting,\n"
		"                         and the lock's counters (spins, sleeps, wakes...)\n"
		"      --seed N           seed of the children's job orders (default 1)\n"
		"      --json FILE        write the results as JSON (atomically)\n"
		"      --csv FILE         write re-aim's CSV (atomically)\n"
		"  -q, --quiet            no progress on stderr\n"
		"  -h, --help             this text\n"
		"\n"
		"Locks: see `lockbench list`.  Exit status: 0, 1 when an invariant of the\n"
		"simulated kernel failed or the watchdog fired, 2 on bad input.\n",
		aim_workfile_shipped(), AIM_MAX_USERS, AIM_MAX_REPEAT, AIM_DEFAULT_SPINLOCK,
		AIM_DEFAULT_RWLOCK);
}

enum {
	OPT_MUTEX = 256, OPT_SPIN, OPT_RW, OPT_AB, OPT_AB_ROLE, OPT_CHECK, OPT_EXPLAIN, OPT_SEED,
	OPT_JSON, OPT_CSV,
};

static const struct option long_opts[] = {
	{ "workfile", required_argument, NULL, 'f' },
	{ "users", required_argument, NULL, 'u' },
	{ "startusers", required_argument, NULL, 's' },
	{ "endusers", required_argument, NULL, 'e' },
	{ "increment", required_argument, NULL, 'i' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "time", required_argument, NULL, 't' },
	{ "repeat", required_argument, NULL, 'r' },
	{ "mutex", required_argument, NULL, OPT_MUTEX },
	{ "spinlock", required_argument, NULL, OPT_SPIN },
	{ "rwlock", required_argument, NULL, OPT_RW },
	{ "ab", required_argument, NULL, OPT_AB },
	{ "ab-role", required_argument, NULL, OPT_AB_ROLE },
	{ "check", required_argument, NULL, OPT_CHECK },
	{ "explain", no_argument, NULL, OPT_EXPLAIN },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const struct lb_lock_ops *parse_lock(const char *opt, const char *name)
{
	char names[2048];
	lb_lock_names(names, sizeof(names), false);
	const struct lb_lock_ops *ops = lb_lock_find(name);
	if (!ops)
		lb_usage_error("%s: unknown lock '%s'; accepted: %s", opt, name, names);
	if (ops->unsupported)
		lb_usage_error("%s: lock '%s' cannot run here (%s); accepted: %s", opt, name,
			       ops->unsupported, names);
	if (!(ops->flags & LB_LOCK_F_EXCLUSIVE) || (ops->flags & LB_LOCK_F_RCU))
		lb_usage_error("%s: lock '%s' does not exclude %s; accepted: an exclusive lock "
			       "(see `lockbench list`)", opt, name,
			       ops->flags & LB_LOCK_F_RCU ? "readers from writers" : "writers");
	return ops;
}

static int parse_role(const char *s)
{
	for (int r = 0; r < AIM_NROLES; r++)
		if (!strcmp(s, aim_role_name(r)))
			return r;
	lb_usage_error("--ab-role: unknown role '%s'; accepted: mutex, spinlock, rwlock", s);
}

void aim_parse(int argc, char **argv, struct aim_config *cfg)
{
	const char *workfile = "high_systime", *ab = NULL;
	unsigned int start = 0, end = 0, incr = 1;
	bool have_users = false, have_sweep = false, have_end = false;
	const char *shortopts = ":f:u:s:e:i:j:t:r:qh";
	char err[8192];
	size_t n;

	memset(cfg, 0, sizeof(*cfg));
	cfg->role_ops[AIM_ROLE_MUTEX] = lb_lock_find("mutex");
	/* qspinlock-pv, not the native qspinlock: FIFO hand-over to waiters
	 * that are not running collapses with more children than CPUs, which
	 * the paravirt-style parking answers, as in a guest kernel (doc/aim7.md). */
	cfg->role_ops[AIM_ROLE_SPIN] = lb_lock_find(AIM_DEFAULT_SPINLOCK);
	cfg->role_ops[AIM_ROLE_RW] = lb_lock_find(AIM_DEFAULT_RWLOCK);
	cfg->time_ns = 3 * NS_PER_S;
	cfg->repeat = 1;
	cfg->seed = 1;
	static const unsigned int default_users[] = { 1, 10, 50, 100 };
	memcpy(cfg->users, default_users, sizeof(default_users));
	cfg->npoints = 4;

	opterr = 0;
	optind = 1;
	for (;;) {
		int c = getopt_long(argc, argv, shortopts, long_opts, NULL);
		if (c == -1)
			break;
		switch (c) {
		case 'f':
			workfile = optarg;
			break;
		case 'u':
			if (lb_parse_uint_list(optarg, 1, AIM_MAX_USERS, cfg->users, AIM_MAX_USER_POINTS,
					       &n))
				lb_usage_error("--users: '%s' is not a valid list; accepted: child counts "
					       "1..%d as N, A-B or A-B:STEP, comma separated, at most %d",
					       optarg, AIM_MAX_USERS, AIM_MAX_USER_POINTS);
			cfg->npoints = n;
			have_users = true;
			break;
		case 's':
		case 'e':
		case 'i': {
			unsigned int v;
			const char *name = c == 's' ? "--startusers" : c == 'e' ? "--endusers" : "--increment";
			if (lb_parse_uint(optarg, 1, AIM_MAX_USERS, &v))
				lb_usage_error("%s: '%s' is not a valid count; accepted: 1..%d", name, optarg,
					       AIM_MAX_USERS);
			if (c == 's')
				start = v;
			else if (c == 'e')
				end = v, have_end = true;
			else
				incr = v;
			have_sweep = true;
			break;
		}
		case 'j':
			if (lb_parse_uint(optarg, 1, 1000000, &cfg->jobs))
				lb_usage_error("--jobs: '%s' is not a valid count; accepted: 1..1000000",
					       optarg);
			break;
		case 't':
			if (lb_parse_duration_ns(optarg, NS_PER_S, NS_PER_S / 10, 600 * NS_PER_S,
						 &cfg->time_ns))
				lb_usage_error("--time: '%s' is not a valid duration; accepted: 100ms..10m, "
					       "e.g. 500ms, 2s, 1.5 (seconds)", optarg);
			break;
		case 'r':
			if (lb_parse_uint(optarg, 1, AIM_MAX_REPEAT, &cfg->repeat))
				lb_usage_error("--repeat: '%s' is not a valid count; accepted: 1..%d", optarg,
					       AIM_MAX_REPEAT);
			break;
		case OPT_MUTEX:
			cfg->role_ops[AIM_ROLE_MUTEX] = parse_lock("--mutex", optarg);
			break;
		case OPT_SPIN:
			cfg->role_ops[AIM_ROLE_SPIN] = parse_lock("--spinlock", optarg);
			break;
		case OPT_RW:
			cfg->role_ops[AIM_ROLE_RW] = parse_lock("--rwlock", optarg);
			break;
		case OPT_AB:
			ab = optarg;
			break;
		case OPT_AB_ROLE:
			cfg->ab_role = parse_role(optarg);
			break;
		case OPT_CHECK:
			if (lb_parse_duration_ns(optarg, NS_PER_S, NS_PER_S / 100, 600 * NS_PER_S,
						 &cfg->check_ns))
				lb_usage_error("--check: '%s' is not a valid period; accepted: 10ms..10m, "
					       "e.g. 100ms, 1s", optarg);
			break;
		case OPT_EXPLAIN:
			cfg->explain = true;
			break;
		case OPT_SEED:
			if (lb_parse_u64(optarg, 0, UINT64_MAX, &cfg->seed))
				lb_usage_error("--seed: '%s' is not a valid number; accepted: 0..%llu", optarg,
					       (unsigned long long)UINT64_MAX);
			break;
		case OPT_JSON:
			cfg->json_path = optarg;
			break;
		case OPT_CSV:
			cfg->csv_path = optarg;
			break;
		case 'q':
			cfg->quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			lb_cli_getopt_fail(c, argc, argv, shortopts + 1, long_opts, HELP);
		}
	}
	if (optind < argc)
		lb_usage_error("unexpected argument '%s'; see '" HELP "'", argv[optind]);
	if (have_sweep) {
		if (have_users)
			lb_usage_error("--users and -s/-e/-i: give one or the other; see '" HELP "'");
		if (!start)
			start = 1;
		if (!have_end)
			end = start;
		if (end < start)
			lb_usage_error("--endusers: %u is below --startusers %u; accepted: >= the start",
				       end, start);
		cfg->npoints = 0;
		for (unsigned int u = start; u <= end; u += incr) {
			if (cfg->npoints == AIM_MAX_USER_POINTS)
				lb_usage_error("-s/-e/-i: more than %d load points; accepted: a sweep of at "
					       "most %d", AIM_MAX_USER_POINTS, AIM_MAX_USER_POINTS);
			cfg->users[cfg->npoints++] = u;
			if (u > UINT32_MAX - incr)
				break;
		}
	}
	if (ab) {
		char *copy = strdup(ab), *names[3];
		if (!copy || lb_split_names(copy, names, 3, &n) || n != 2)
			lb_usage_error("--ab: '%s' is not two lock names; accepted: A,B e.g. "
				       "mutex-nospin,mutex", ab);
		cfg->ab = true;
		cfg->ab_ops[0] = parse_lock("--ab", names[0]);
		cfg->ab_ops[1] = parse_lock("--ab", names[1]);
		free(copy);
	}
	if (aim_workfile_load(workfile, &cfg->wf, err, sizeof(err)))
		lb_usage_error("--workfile: %s", err);
}
