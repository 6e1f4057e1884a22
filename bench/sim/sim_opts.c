/* SPDX-License-Identifier: MIT */
/* sim_opts.c - `lockbench sim` options: the option table and the checks across options. */
#include "sim_cell.h"
#include "sim_aim7.h"
#include "lb_cli.h"
#include "lb_opt.h"
#include "lb_registry.h"

#include <stdio.h>
#include <string.h>

/* The configuration and what the command line holds until it is resolved. */
struct simb_args {
	struct lb_simb_config cfg;
	const char *machine;
	const char *measure;
	const char *workload;
	const char *mutex, *spinlock, *rwlock;
};

static void sim_lock_names(char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < lb_simb_lock_count() && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "",
				      lb_simb_lock_at(i)->name);
}

/* A lock the simulator runs, or exit 2 naming it. */
static const struct lb_lock_ops *sim_lock(const char *name, const char *accepted)
{
	const struct lb_lock_ops *ops = lb_simb_lock_find(name);
	if (!ops)
		lb_usage_error("--lock: '%s' does not run on the simulator yet; accepted: %s", name,
			       accepted);
	return ops;
}

static int parse_locks(const struct lb_opt *o, const char *arg, void *base)
{
	struct lb_simb_config *cfg = &((struct simb_args *)base)->cfg;
	char accepted[1024];
	(void)o;
	sim_lock_names(accepted, sizeof(accepted));
	if (strlen(arg) >= LB_LOCK_LIST_CHARS)
		lb_usage_error("--lock: list too long; accepted: %s", accepted);
	cfg->nlocks = lb_lock_list_parse(arg, cfg->locks, LB_SIMB_MAX_LOCKS, sim_lock, accepted);
	return 0;
}

/*
 * --cs and --par: a time with its unit.  bench and ab read a bare number as
 * loop iterations of this host's work loop (the shared vocabulary), which
 * mean nothing on a simulated machine; so a bare number is refused here
 * rather than read as nanoseconds.
 */
static int parse_work_time(const struct lb_opt *o, const char *arg, void *base)
{
	size_t digits = strspn(arg, "0123456789.");
	if (arg[0] && !arg[digits])
		lb_usage_error("--%s: '%s' needs a unit: on the simulated machine work is a "
			       "time, not this host's loop iterations; accepted: %s", o->name, arg,
			       o->accepted);
	if (lb_parse_duration_ns(arg, 1, o->min, o->max, (uint64_t *)((char *)base + o->offset)))
		lb_usage_error("--%s: '%s' is not a valid time; accepted: %s", o->name, arg,
			       o->accepted);
	return 0;
}

#define T struct simb_args
static const struct lb_opt sim_opts[] = {
	{ .name = "machine", .short_name = 'm', .kind = LB_OPT_STRING, .arg = "FILE",
	  .help = "the machine file (engines/sim/machines/*.machine)", .needs = "a machine file",
	  .offset = LB_OPT_AT(T, machine, const char *) },
	{ .name = "measure-machine", .kind = LB_OPT_STRING, .arg = "FILE",
	  .help = "measure this machine (a few seconds of probes) and write\n"
		  "its machine file to FILE; runs no cell (doc/sim.md)",
	  .needs = "a file to write", .offset = LB_OPT_AT(T, measure, const char *) },
	{ .name = "lock", .short_name = 'l', .kind = LB_OPT_CUSTOM, .arg = "LIST",
	  .help = "locks to simulate, comma separated (default ticket,qspinlock)",
	  .def = "ticket,qspinlock", .parse = parse_locks },
	{ .name = "threads", .short_name = 't', .kind = LB_OPT_UINT_LIST, .arg = "LIST",
	  .help = "virtual thread counts (default 2; 1.." LB_OPT_STR(LB_SIMB_MAX_THREADS) ")",
	  .def = "2", .min = 1, .max = LB_SIMB_MAX_THREADS, .cap = LB_SIMB_MAX_POINTS,
	  .accepted = "up to " LB_OPT_STR(LB_SIMB_MAX_POINTS) " counts 1.." LB_OPT_STR(
		  LB_SIMB_MAX_THREADS) ", comma separated (N, A-B, A-B:S)",
	  .offset = LB_OPT_AT(T, cfg.threads, unsigned int *),
	  .count_offset = LB_OPT_AT(T, cfg.nthreads, size_t) },
	{ .name = "cpus", .short_name = 'c', .kind = LB_OPT_UINT_LIST, .arg = "LIST",
	  .help = "use the machine's first N CPUs, a cell per N (default:\nall of them)",
	  .min = 1, .max = LB_SIM_MAX_CPUS, .cap = LB_SIMB_MAX_POINTS,
	  .accepted = "up to " LB_OPT_STR(LB_SIMB_MAX_POINTS) " counts 1.." LB_OPT_STR(
		  LB_SIM_MAX_CPUS) ", comma separated (N, A-B, A-B:S)",
	  .offset = LB_OPT_AT(T, cfg.cpus, unsigned int *),
	  .count_offset = LB_OPT_AT(T, cfg.ncpus, size_t) },
	{ .name = "cs", .kind = LB_OPT_CUSTOM, .parse = parse_work_time, .arg = "TIME",
	  .help = "work inside the lock per acquisition (default 100ns)", .def = "100ns",
	  .min = 0, .max = 1000000000, .unit_ns = 1, .accepted = "0..1s with a unit, e.g. 100ns, 2us",
	  .offset = LB_OPT_AT(T, cfg.cs_ns, uint64_t) },
	{ .name = "par", .kind = LB_OPT_CUSTOM, .parse = parse_work_time, .arg = "TIME",
	  .help = "work outside the lock per acquisition (default 200ns)", .def = "200ns",
	  .min = 0, .max = 1000000000, .unit_ns = 1, .accepted = "0..1s with a unit, e.g. 200ns, 2us",
	  .offset = LB_OPT_AT(T, cfg.par_ns, uint64_t) },
	{ .name = "duration", .short_name = 'd', .kind = LB_OPT_DURATION, .arg = "TIME",
	  .help = "simulated time per cell (default 10ms; 1us..60s)", .def = "10ms", .min = 1000,
	  .max = 60000000000ull, .unit_ns = 1000000000,
	  .accepted = "1us..60s, e.g. 500us, 10ms, 1 (seconds)",
	  .offset = LB_OPT_AT(T, cfg.duration_ns, uint64_t) },
	{ .name = "seed", .short_name = 's', .kind = LB_OPT_U64, .arg = "N",
	  .help = "the simulator's seed: same seed, same output (default 1)", .def = "1",
	  .min = 0, .max = UINT64_MAX, .offset = LB_OPT_AT(T, cfg.seed, uint64_t) },
	{ .name = "workload", .kind = LB_OPT_STRING, .arg = "NAME",
	  .help = "micro (default: the bench-style cells), aim7 (aim7's\n"
		  "load points: doc/sim.md, \"aim7 on the simulator\") or rt\n"
		  "(lockbench rt's experiment, options of its own: --workload rt --help)",
	  .needs = "micro, aim7 or rt", .offset = LB_OPT_AT(T, workload, const char *) },
	{ .name = "users", .short_name = 'u', .kind = LB_OPT_UINT_LIST, .arg = "LIST",
	  .help = "aim7: children per load point (default 10; 1.." LB_OPT_STR(
		  LB_SIMAIM_MAX_USERS) ")",
	  .min = 1, .max = LB_SIMAIM_MAX_USERS, .cap = LB_SIMAIM_MAX_POINTS,
	  .accepted = "up to " LB_OPT_STR(LB_SIMAIM_MAX_POINTS) " counts 1.." LB_OPT_STR(
		  LB_SIMAIM_MAX_USERS) ", comma separated (N, A-B, A-B:S)",
	  .offset = LB_OPT_AT(T, cfg.users, unsigned int *),
	  .count_offset = LB_OPT_AT(T, cfg.nusers, size_t) },
	{ .name = "workfile", .short_name = 'f', .kind = LB_OPT_STRING, .arg = "NAME",
	  .help = "aim7: the job mix, system tests only (default high_systime)",
	  .needs = "a workfile name or path", .offset = LB_OPT_AT(T, cfg.workfile, const char *) },
	{ .name = "mutex", .kind = LB_OPT_STRING, .arg = "LOCK",
	  .help = "aim7: the mutex role's lock (s_orphan_lock, i_mutex, ...;\n"
		  "default mutex-v3.14)",
	  .needs = "a lock that runs on the simulator", .offset = LB_OPT_AT(T, mutex, const char *) },
	{ .name = "spinlock", .kind = LB_OPT_STRING, .arg = "LOCK",
	  .help = "aim7: the spin role's lock (d_lock, zone lock, ...; default\n"
		  "qspinlock-pv, as lockbench aim7; a 2014 x86 kernel's was ticket)",
	  .needs = "a lock that runs on the simulator",
	  .offset = LB_OPT_AT(T, spinlock, const char *) },
	{ .name = "rwlock", .kind = LB_OPT_STRING, .arg = "LOCK",
	  .help = "aim7: the rw role's lock (tasklist_lock, mmap lock; default\n"
		  "qrwlock)",
	  .needs = "a lock that runs on the simulator",
	  .offset = LB_OPT_AT(T, rwlock, const char *) },
	{ .name = "window", .short_name = 'w', .kind = LB_OPT_DURATION, .arg = "TIME",
	  .help = "aim7: re-aim's fixed window, virtual (default 1s; 1ms..60s)",
	  .unit_ns = 1000000000, .min = 1000000, .max = 60000000000ull,
	  .accepted = "1ms..60s, e.g. 500ms, 2s", .offset = LB_OPT_AT(T, cfg.window_ns, uint64_t) },
	{ .name = "costs", .kind = LB_OPT_STRING, .arg = "FILE",
	  .help = "aim7: the cost table the kernel work is sized from\n(default: the shipped one)",
	  .needs = "a cost table", .offset = LB_OPT_AT(T, cfg.costs, const char *) },
	LB_OPT_ROW_JSON(T, cfg.json_path, "write the predictions as JSON (atomically; '-': stdout)"),
	LB_OPT_ROW_QUIET(T, cfg.quiet),
	LB_OPT_ROW_HELP,
	LB_OPT_ROW_END,
};
#undef T

const struct lb_opt_cmd lb_sim_cmd = {
	.name = "lockbench sim",
	.usage = "usage: lockbench sim --machine FILE [options]\n"
		 "       lockbench sim --measure-machine FILE [--quiet]\n"
		 "       lockbench sim --workload rt --machine FILE [options] (its --help)\n"
		 "\n"
		 "Bench-style cells (locks x threads x CPUs, critical-section and parallel\n"
		 "work) on a simulated machine: N virtual CPUs in S sockets in virtual time,\n"
		 "running the locks' own code (doc/sim.md).  Every figure is a MODEL\n"
		 "PREDICTION of the machine file's machine, not a measurement.  Under\n"
		 "the table, the closed Markov queue of Boyd-Wickizer et al. 2012 (an\n"
		 "analytic model of the same inputs) beside each cell where it applies.\n"
		 "--workload aim7 runs aim7's load points (re-aim's fixed window, in\n"
		 "virtual time) on the same machine with the registry's locks.\n"
		 "\n",
	.epilogue = "\nExit status: 0 ok, 1 a cell failed (a lock let two threads in, or a\n"
		    "thread never got it) or an aim7 point failed aim7's invariant check,\n"
		    "2 bad usage.\n",
	.opts = sim_opts,
};

/*
 * --measure-machine writes a file and runs no cell: an option of a cell is
 * refused rather than ignored.  The file is the driver's second output
 * (sim_main.c): opened, so checked, before the probes, written whole.
 */
static void check_measure(struct simb_args *a, const struct lb_opt_seen *seen)
{
	static const char *const cell_opts[] = { "machine", "lock", "threads", "cpus", "cs",
						 "par", "duration", "seed", "json", "workload",
						 "users", "workfile", "mutex", "spinlock", "rwlock",
						 "window", "costs" };
	for (size_t i = 0; i < sizeof(cell_opts) / sizeof(cell_opts[0]); i++)
		if (lb_opt_given(&lb_sim_cmd, seen, cell_opts[i]))
			lb_usage_error("--measure-machine: runs no cell, so --%s does not apply; "
				       "accepted: --measure-machine FILE [--quiet]", cell_opts[i]);
	a->cfg.measure_path = a->measure;
}

/* An aim7 role's lock by name: one the simulator runs, or a usage error. */
static const struct lb_lock_ops *role_lock(const char *opt, const char *name, const char *accepted)
{
	const struct lb_lock_ops *ops = lb_simb_lock_find(name);
	if (!ops)
		lb_usage_error("--%s: '%s' does not run on the simulator yet; accepted: %s", opt, name,
			       accepted);
	return ops;
}

/* --workload: which options belong to which workload; the aim7 defaults. */
static void check_workload(struct simb_args *a, const struct lb_opt_seen *seen)
{
	static const char *const micro_opts[] = { "lock", "threads", "cpus", "cs", "par",
						  "duration" };
	static const char *const aim7_opts[] = { "users", "workfile", "mutex", "spinlock", "rwlock",
						 "window", "costs" };
	const char *w = a->workload ? a->workload : "micro";
	a->cfg.aim7 = !strcmp(w, "aim7");
	if (!a->cfg.aim7 && strcmp(w, "micro"))
		lb_usage_error("--workload: '%s' is not a workload of sim; accepted: micro, aim7, rt", w);
	const char *const *other = a->cfg.aim7 ? micro_opts : aim7_opts;
	size_t n = a->cfg.aim7 ? sizeof(micro_opts) / sizeof(micro_opts[0])
			       : sizeof(aim7_opts) / sizeof(aim7_opts[0]);
	for (size_t i = 0; i < n; i++)
		if (lb_opt_given(&lb_sim_cmd, seen, other[i]))
			lb_usage_error("--%s: not an option of --workload %s; accepted: %s", other[i],
				       w, a->cfg.aim7 ? "--users, --workfile, --mutex, --spinlock, "
						      "--rwlock, --window, --costs"
						    : "--lock, --threads, --cpus, --cs, "
						      "--par, --duration");
	if (!a->cfg.aim7)
		return;
	if (!a->cfg.nusers) {
		a->cfg.users[0] = 10;
		a->cfg.nusers = 1;
	}
	if (!a->cfg.window_ns)
		a->cfg.window_ns = 1000000000u;
	if (!a->cfg.workfile)
		a->cfg.workfile = "high_systime";
	char accepted[1024];
	sim_lock_names(accepted, sizeof(accepted));
	const char *m = a->mutex ? a->mutex : "mutex-v3.14";
	a->cfg.aim_mutex = role_lock("mutex", m, accepted);
	a->cfg.aim_spin = role_lock("spinlock", a->spinlock ? a->spinlock : "qspinlock-pv",
				    accepted);
	a->cfg.aim_rw = role_lock("rwlock", a->rwlock ? a->rwlock : "qrwlock", accepted);
}

void lb_simb_parse(int argc, char **argv, struct lb_simb_config *cfg)
{
	struct simb_args a = { 0 };
	struct lb_opt_seen seen;
	char err[512];

	lb_opt_parse(&lb_sim_cmd, argc, argv, &a, &seen);
	if (a.measure) {
		check_measure(&a, &seen);
		*cfg = a.cfg;
		return;
	}
	if (!a.machine)
		lb_usage_error("--machine: needs a machine file; accepted: a file such as "
			       "engines/sim/machines/opteron-48.machine");
	if (lb_sim_machine_load(a.machine, &a.cfg.machine, err, sizeof(err)))
		lb_usage_error("--machine: %s", err);
	a.cfg.machine_path = a.machine;
	check_workload(&a, &seen);
	unsigned int all = lb_sim_machine_cpus(&a.cfg.machine);
	if (a.cfg.ncpus == 0) {
		a.cfg.cpus[0] = all;
		a.cfg.ncpus = 1;
	}
	for (size_t i = 0; i < a.cfg.ncpus; i++)
		if (a.cfg.cpus[i] > all)
			lb_usage_error("--cpus: '%u' is more than the machine's %u CPUs; accepted: "
				       "1..%u", a.cfg.cpus[i], all, all);
	*cfg = a.cfg;
}
