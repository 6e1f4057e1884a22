/* SPDX-License-Identifier: MIT */
/*
 * sim_rt_main.c - `lockbench sim --workload rt`: its options (a table of
 * its own: the bench cells' --lock/--threads/--cs mean nothing here), the
 * run (sim_rt.c) and its report, labelled MODEL PREDICTION.
 */
#include "sim_rt_main.h"
#include "sim_cell.h"
#include "sim_rt.h"
#include "sim_rt_calibrate.h"
#include "sim_rt_costs.h"
#include "workload.h"
#include "lb_cli.h"
#include "lb_json.h"
#include "lb_schema.h"
#include "lb_opt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The seed experiment's socket path, per message and side (doc/sim.md,
 * "The rt workload": set from its raw row, so its elapsed is an input). */
#define SIMR_DEF_SEND "2us"
#define SIMR_DEF_RECV "2us"

struct simr_args {
	struct lb_simr_config cfg;
	const char *machine, *workload, *json, *costs_path;
	unsigned int cpus;
	bool quiet;
	struct lb_sim_machine m;
	struct lb_simr_costs costs; /* --costs FILE's tables, or --calibrate's */
};

static struct simr_args A;
static struct lb_simr_result R; /* the last run's, for the JSON */

enum { M_ELAPSED, M_SWITCHES, M_MIGRATIONS, M_IDLE, M_RT_P99, M_LIST_LOCK, M_COUNT };
static const struct lb_metric_desc simr_metrics[M_COUNT] = {
	[M_ELAPSED] = { "elapsed_s", "s", LB_BETTER_LOWER,
			"hackbench's elapsed time, virtual (model prediction)" },
	[M_SWITCHES] = { "context_switches", "switches", LB_BETTER_LOWER,
			 "context switches during hackbench (model prediction)" },
	[M_MIGRATIONS] = { "migrations", "migrations", LB_BETTER_LOWER,
			   "wake-ups onto another CPU during hackbench (model prediction)" },
	[M_IDLE] = { "idle_cpu_share", "ratio", LB_BETTER_LOWER,
		     "1 - busy / (CPUs x elapsed) (model prediction)" },
	[M_RT_P99] = { "rt_wakeup_p99_us", "us", LB_BETTER_LOWER,
		       "the RT threads' wake-up lateness, p99 (model prediction)" },
	[M_LIST_LOCK] = { "list_lock_per_msg", "acquisitions", LB_BETTER_LOWER,
			  "list_lock acquisitions per message, both caches (model prediction)" },
};
static const char *const simr_params[] = { "list_lock", "cpus", NULL };
static const struct lb_workload_schema lb_schema_sim_rt = {
	LB_SCHEMA_TABLES("lockbench-sim-rt", 2, simr_params, simr_metrics),
};

static const char *const workloads[] = { "rt", NULL };

#define T struct simr_args
static const struct lb_opt simr_opts[] = {
	{ .name = "workload", .kind = LB_OPT_STRING, .arg = "NAME",
	  .help = "rt: lockbench rt's experiment on the simulator", .needs = "a workload",
	  .offset = LB_OPT_AT(T, workload, const char *) },
	{ .name = "machine", .short_name = 'm', .kind = LB_OPT_STRING, .arg = "FILE",
	  .help = "the machine file (engines/sim/machines/*.machine)", .needs = "a machine file",
	  .offset = LB_OPT_AT(T, machine, const char *) },
	{ .name = "list-lock", .alias = "lock", .short_name = 'l', .kind = LB_OPT_STRING,
	  .arg = "LOCK",
	  .help = "raw (qspinlock, preemption off around each section),\n"
		  "pi (rtmutex, sleeping), or a lock the simulator runs\n(default raw)",
	  .def = "raw", .needs = "a lock", .offset = LB_OPT_AT(T, cfg.list_lock, const char *) },
	{ .name = "cpus", .short_name = 'c', .kind = LB_OPT_UINT, .arg = "N",
	  .help = "use the machine's first N CPUs (default: all)", .min = 1,
	  .max = LB_SIM_MAX_CPUS, .offset = LB_OPT_AT(T, cpus, unsigned int) },
	{ .name = "groups", .kind = LB_OPT_UINT, .arg = "N",
	  .help = "hackbench groups (default 10; 1..200)", .def = "10", .min = 1, .max = 200,
	  .offset = LB_OPT_AT(T, cfg.groups, unsigned int) },
	{ .name = "fds", .kind = LB_OPT_UINT, .arg = "N",
	  .help = "senders and receivers per group (default 20; 1..100)", .def = "20", .min = 1,
	  .max = 100, .offset = LB_OPT_AT(T, cfg.fds, unsigned int) },
	{ .name = "loops", .kind = LB_OPT_UINT, .arg = "N",
	  .help = "messages each sender sends each receiver (default 500;\n1..1000000)",
	  .def = "500", .min = 1, .max = 1000000, .offset = LB_OPT_AT(T, cfg.loops, unsigned int) },
	{ .name = "datasize", .kind = LB_OPT_UINT, .arg = "BYTES",
	  .help = "message size (default 4096; 16..65536)", .def = "4096", .min = 16,
	  .max = 65536, .offset = LB_OPT_AT(T, cfg.datasize, unsigned int) },
	{ .name = "send", .kind = LB_OPT_DURATION, .arg = "TIME",
	  .help = "the socket path's work per message sent (default " SIMR_DEF_SEND ";\n"
		  "0..1ms; a bare number: us)", .def = SIMR_DEF_SEND, .min = 0, .max = 1000000,
	  .unit_ns = 1000, .offset = LB_OPT_AT(T, cfg.send_ns, uint64_t) },
	{ .name = "recv", .kind = LB_OPT_DURATION, .arg = "TIME",
	  .help = "the same per message received (default " SIMR_DEF_RECV ")",
	  .def = SIMR_DEF_RECV, .min = 0, .max = 1000000, .unit_ns = 1000,
	  .offset = LB_OPT_AT(T, cfg.recv_ns, uint64_t) },
	{ .name = "costs", .kind = LB_OPT_STRING, .arg = "FILE",
	  .help = "draw each send's and receive's work from this cost file's\n"
		  "tables (--calibrate's; bench/sim/costs/rt-socket.txt is\n"
		  "this host's) instead of --send/--recv (not with them)",
	  .needs = "a cost file", .offset = LB_OPT_AT(T, costs_path, const char *) },
	{ .name = "calibrate", .kind = LB_OPT_STRING, .arg = "FILE",
	  .help = "simulate nothing: measure each send's and receive's CPU\n"
		  "time in --groups/--fds/--loops/--datasize's hackbench on\n"
		  "this kernel, and write the cost file",
	  .needs = "a file name", .offset = LB_OPT_AT(T, cfg.calibrate_path, const char *) },
	{ .name = "interval", .short_name = 'i', .kind = LB_OPT_DURATION, .arg = "TIME",
	  .help = "the RT threads' period (default 1ms, cyclictest's;\n10us..1s; a bare number: us)",
	  .def = "1ms", .min = 10000, .max = 1000000000, .unit_ns = 1000,
	  .offset = LB_OPT_AT(T, cfg.interval_ns, uint64_t) },
	{ .name = "seed", .short_name = 's', .kind = LB_OPT_U64, .arg = "N",
	  .help = "the simulator's seed: same seed, same output (default 1)", .def = "1",
	  .min = 0, .max = UINT64_MAX, .offset = LB_OPT_AT(T, cfg.seed, uint64_t) },
	LB_OPT_ROW_JSON(T, json, "write the prediction as JSON (atomically; '-': stdout)"),
	LB_OPT_ROW_QUIET(T, quiet),
	LB_OPT_ROW_HELP,
	LB_OPT_ROW_END,
};
#undef T

static const struct lb_opt_cmd simr_cmd = {
	.name = "lockbench sim --workload rt",
	.usage = "usage: lockbench sim --workload rt --machine FILE [options]\n"
		 "\n"
		 "lockbench rt's experiment on a simulated machine (doc/sim.md, \"The rt\n"
		 "workload\"): hackbench-like senders and receivers whose messages come\n"
		 "from a SLUB-like allocator with a raw or a PI list_lock, and one\n"
		 "cyclictest-like SCHED_FIFO thread per CPU.  Every figure is a MODEL\n"
		 "PREDICTION of the machine file's machine, not a measurement.\n"
		 "\n",
	.epilogue = "\nExit status: 0 ok, 1 the allocator's invariants failed or a task never\n"
		    "finished, 2 bad usage.\n",
	.opts = simr_opts,
};

bool lb_simr_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if ((!strcmp(argv[i], "--workload") && i + 1 < argc && !strcmp(argv[i + 1], "rt")) ||
		    !strcmp(argv[i], "--workload=rt"))
			return true;
	return false;
}

/* The names --list-lock accepts, for its error line. */
static void accepted_locks(char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "raw, pi");
	for (size_t i = 0; i < lb_simb_lock_count() && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, ", %s", lb_simb_lock_at(i)->name);
}

const struct lb_simr_config *lb_simr_parse(int argc, char **argv, bool *quiet,
					   const char **json)
{
	struct lb_opt_seen seen;
	char err[1024], accepted[1024];
	memset(&A, 0, sizeof(A));
	lb_opt_parse(&simr_cmd, argc, argv, &A, &seen);
	if (!A.workload || strcmp(A.workload, workloads[0])) /* lb_simr_wanted saw rt */
		lb_usage_error("--workload: '%s' is not a workload of lockbench sim; accepted: rt",
			       A.workload ? A.workload : "");
	if (A.cfg.calibrate_path) {
		if (A.costs_path || lb_opt_given(&simr_cmd, &seen, "send") ||
		    lb_opt_given(&simr_cmd, &seen, "recv"))
			lb_usage_error("--calibrate: measures the costs, so not with --costs, --send "
				       "or --recv; accepted: --calibrate FILE with the hackbench shape");
		*quiet = A.quiet;
		*json = NULL;
		return &A.cfg;
	}
	if (A.costs_path && (lb_opt_given(&simr_cmd, &seen, "send") ||
			     lb_opt_given(&simr_cmd, &seen, "recv")))
		lb_usage_error("--costs: not with --send/--recv (the file sets both); accepted: "
			       "a cost file, or the constants");
	if (A.costs_path) {
		if (lb_simr_costs_load(A.costs_path, &A.costs, err, sizeof(err)))
			lb_usage_error("--costs: %s; accepted: a file written by --calibrate", err);
		A.cfg.costs = &A.costs;
	}
	if (!A.machine)
		lb_usage_error("--machine: needs a machine file; accepted: a file such as "
			       "engines/sim/machines/opteron-48.machine");
	if (lb_sim_machine_load(A.machine, &A.m, err, sizeof(err)))
		lb_usage_error("--machine: %s", err);
	unsigned int all = lb_sim_machine_cpus(&A.m);
	if (A.cpus > all)
		lb_usage_error("--cpus: '%u' is more than the machine's %u CPUs; accepted: 1..%u",
			       A.cpus, all, all);
	A.cfg.cpus = A.cpus ? A.cpus : all;
	if (!lb_simr_list_lock(A.cfg.list_lock)) {
		accepted_locks(accepted, sizeof(accepted));
		lb_usage_error("--list-lock: '%s' does not run on the simulator; accepted: %s",
			       A.cfg.list_lock, accepted);
	}
	A.cfg.rt_prio = 99; /* cyclictest -p99 */
	*quiet = A.quiet;
	*json = A.json;
	return &A.cfg;
}

/* A counter of the list_lock's own (rtmutex's spins and sleeps), or -1. */
static double lock_counter(const struct lb_simr_result *r, const char *name)
{
	for (size_t i = 0; i < r->ncounters; i++)
		if (!strcmp(r->counters[i].name, name))
			return (double)r->counters[i].value;
	return -1;
}

/* The gauges that say whether the kernel's mechanism is there: how busy
 * list_lock is, how often an attempt found it taken, by how many running
 * contenders, and how its waiters waited (doc/sim.md, "The rt workload"). */
static void print_list_lock_gauges(FILE *out, const struct lb_simr_result *r, double el)
{
	uint64_t bins = r->ll_running[0] + r->ll_running[1] + r->ll_running[2];
	fprintf(out, "list_lock_rho      %.4f\n",
		el > 0 ? (double)r->ll_hold_ns / 1e9 / el / 2 : 0);
	fprintf(out, "list_lock_taken_pct %.3f\n", r->list_lock_acquires
		? 100.0 * (double)r->ll_found_taken / (double)r->list_lock_acquires : 0);
	fprintf(out, "list_lock_running2 %.4f\n",
		bins ? (double)(r->ll_running[1] + r->ll_running[2]) / (double)bins : 0);
	fprintf(out, "list_lock_owner_off %.4f\n",
		r->ll_found_taken ? (double)r->ll_owner_off / (double)r->ll_found_taken : 0);
	double spins = lock_counter(r, "spins"), sleeps = lock_counter(r, "sleeps");
	if (spins >= 0)
		fprintf(out, "list_lock_spins    %.0f\n", spins);
	if (sleeps >= 0)
		fprintf(out, "list_lock_sleeps   %.0f\n", sleeps);
	fprintf(out, "#   list_lock_rho: both caches' locks' held time over elapsed, averaged;"
		" taken_pct: acquisitions\n#   that found it taken; running2: of those, the share"
		" that met >= 2 running contenders\n#   (the attempter, the owner on its CPU, spinning"
		" waiters); owner_off: the owner was off its CPU\n");
}

/* The header's socket-path lines for --costs: the file, its tables'
 * figures, and what the run's draws charged. */
static void print_costs(FILE *out, const struct lb_simr_config *cfg,
			const struct lb_simr_result *r)
{
	const struct lb_simr_costs *c = cfg->costs;
	uint64_t n = r->messages ? r->messages : 1;
	fprintf(out, "# hackbench: %u groups x %u senders x %u receivers, %u loops, %u bytes: %llu "
		"messages;\n#   socket path drawn per message from %s\n", cfg->groups, cfg->fds,
		cfg->fds, cfg->loops, cfg->datasize, (unsigned long long)r->messages, c->path);
	fprintf(out, "#   measured %s, %s CPUs; load %s\n", c->host.date, c->host.cpus,
		c->host_load);
	const struct lb_simr_dist *d[2] = { &c->send, &c->recv };
	const uint64_t total[2] = { r->send_total_ns, r->recv_total_ns };
	for (int i = 0; i < 2; i++)
		fprintf(out, "#   %s: table mean %.0f p50 %.0f p99 %.0f max %.0f ns; drawn here mean "
			"%.0f ns\n", i ? "recv" : "send", d[i]->mean, lb_simr_dist_at(d[i], 0.5),
			lb_simr_dist_at(d[i], 0.99), d[i]->ns[d[i]->n - 1], (double)total[i] / (double)n);
	fprintf(out, "# cyclictest: FIFO %d, one thread per CPU, every %llu us\n", cfg->rt_prio,
		(unsigned long long)(cfg->interval_ns / 1000));
}

static void print_result(FILE *out, const struct lb_simr_config *cfg,
			 const struct lb_simr_result *r)
{
	double el = (double)r->elapsed_ns / 1e9;
	fprintf(out, "# MODEL PREDICTION (lockbench sim --workload rt, doc/sim.md): machine '%s'"
		" from\n#   %s, %u of its CPUs; seed %llu\n", A.m.name, A.machine, cfg->cpus,
		(unsigned long long)cfg->seed);
	if (!cfg->costs) {
		fprintf(out, "# hackbench: %u groups x %u senders x %u receivers, %u loops, %u bytes: "
			"%llu messages;\n#   socket path %llu ns sent + %llu ns received per message; "
			"cyclictest: FIFO %d, one\n#   thread per CPU, every %llu us\n", cfg->groups,
			cfg->fds, cfg->fds, cfg->loops, cfg->datasize,
			(unsigned long long)r->messages, (unsigned long long)cfg->send_ns,
			(unsigned long long)cfg->recv_ns, cfg->rt_prio,
			(unsigned long long)(cfg->interval_ns / 1000));
	} else {
		print_costs(out, cfg, r);
	}
	fprintf(out, "# list_lock: %s\n", !strcmp(cfg->list_lock, "raw")
		? "raw (qspinlock, preemption off from lock to unlock)"
		: !strcmp(cfg->list_lock, "pi") ? "pi (rtmutex: PI, waiters spin then sleep)"
		: cfg->list_lock);
	fprintf(out, "elapsed_s          %.6f\n", el);
	fprintf(out, "context_switches   %llu\n", (unsigned long long)r->stats.switches);
	fprintf(out, "migrations         %llu\n", (unsigned long long)r->stats.migrations);
	fprintf(out, "cpus_utilized      %.2f\n", el > 0 ? (double)r->stats.busy_ns / 1e9 / el : 0);
	fprintf(out, "idle_cpu_share     %.4f\n", r->idle_share);
	fprintf(out, "rt_wakeups         %llu\n", (unsigned long long)r->rt_wakes);
	fprintf(out, "rt_wakeup_p50_us   %.3f\n", (double)r->rt_p50_ns / 1e3);
	fprintf(out, "rt_wakeup_p99_us   %.3f\n", (double)r->rt_p99_ns / 1e3);
	fprintf(out, "rt_wakeup_max_us   %.3f\n", (double)r->rt_max_ns / 1e3);
	fprintf(out, "list_lock_per_msg  %.4f\n",
		r->messages ? (double)r->list_lock_acquires / (double)r->messages : 0);
	print_list_lock_gauges(out, r, el);
	fprintf(out, "events             %llu\n", (unsigned long long)r->stats.events);
	fprintf(out, "invariants         %s\n", r->ok ? "ok" : "FAILED");
	if (r->ncounters) {
		fprintf(out, "# list_lock's own counters (both caches, the whole run):");
		for (size_t i = 0; i < r->ncounters; i++)
			fprintf(out, "%s %s %llu", i % 4 ? "," : "\n#  ", r->counters[i].name,
				(unsigned long long)r->counters[i].value);
		fprintf(out, "\n");
	}
}

/* --calibrate: measure, print the two tables' headline figures. */
static int calibrate(FILE *out, const struct lb_simr_config *cfg, bool quiet)
{
	char err[512];
	if (!quiet)
		fprintf(stderr, "# calibrating: %u groups x %u x %u threads, %u loops of %u bytes\n",
			cfg->groups, cfg->fds, cfg->fds, cfg->loops, cfg->datasize);
	if (lb_simr_calibrate(cfg, &A.costs, err, sizeof(err))) {
		fprintf(stderr, "lockbench: sim: rt: --calibrate: %s\n", err);
		return 1;
	}
	const struct lb_simr_dist *d[2] = { &A.costs.send, &A.costs.recv };
	fprintf(out, "# rt socket-path costs MEASURED on this host (not a model prediction):\n"
		     "#   %s\n#   %s; load %s\n", A.costs.shape, A.costs.host.cpu,
		A.costs.host_load);
	fprintf(out, "#   the clock pair's own cost: median %.0f ns, mean %.0f ns (subtracted)\n",
		A.costs.clock_p50_ns, A.costs.clock_mean_ns);
	for (int i = 0; i < 2; i++)
		fprintf(out, "%s calls %llu mean %.0f (the table's draws: %.0f) p50 %.0f p90 %.0f "
			"p99 %.0f max %.0f ns\n", i ? "recv" : "send",
			(unsigned long long)d[i]->count, d[i]->mean, lb_simr_dist_table_mean(d[i]),
			lb_simr_dist_at(d[i], 0.5), lb_simr_dist_at(d[i], 0.9),
			lb_simr_dist_at(d[i], 0.99), d[i]->ns[d[i]->n - 1]);
	return 0;
}

void lb_simr_write_costs(FILE *fp)
{
	fprintf(fp, "# SPDX-License-Identifier: MIT\n"
		    "# lockbench sim --workload rt: the socket path's CPU time per call, measured\n"
		    "# by `lockbench sim --workload rt --calibrate FILE` (doc/sim.md, \"The rt\n"
		    "# workload\"); quantiles in ns, drawn from by --costs FILE.\n");
	lb_simr_costs_write(fp, &A.costs);
}

int lb_simr_main(FILE *out, const struct lb_simr_config *cfg, bool quiet)
{
	if (cfg->calibrate_path)
		return calibrate(out, cfg, quiet);
	struct lb_simr_result r;
	int err = lb_simr_run(cfg, &A.m, &r);
	R = r;
	if (err) {
		fprintf(stderr, "lockbench: sim: rt: %s\n", strerror(err));
		return 1;
	}
	print_result(out, cfg, &r);
	if (!quiet)
		fprintf(stderr, "# host: %.3f s CPU for %.6f s simulated (%llu events)\n", r.host_cpu_s,
			(double)r.elapsed_ns / 1e9, (unsigned long long)r.stats.events);
	if (!r.ok)
		fprintf(stderr, "lockbench: sim: rt: %s (%lu allocator problems)\n",
			r.problems ? "the allocator's invariants failed"
				   : "a task never finished, or a message went wrong",
			r.problems);
	return r.ok ? 0 : 1;
}

/* Where the socket path's work came from (version 2: this object in place
 * of version 1's send_ns and recv_ns). */
static void costs_json(struct lb_json *j, const struct lb_simr_config *cfg)
{
	const struct lb_simr_costs *c = cfg->costs;
	lb_json_key(j, "socket_costs");
	lb_json_object_begin(j);
	lb_json_kv_string(j, "source", c ? "file" : "constants");
	if (!c) {
		lb_json_kv_uint(j, "send_ns", cfg->send_ns);
		lb_json_kv_uint(j, "recv_ns", cfg->recv_ns);
		lb_json_object_end(j);
		return;
	}
	lb_json_kv_string(j, "file", c->path);
	lb_json_kv_string(j, "measured", c->host.date);
	lb_json_kv_string(j, "host_cpu", c->host.cpu);
	lb_json_kv_string(j, "host_load", c->host_load);
	const struct lb_simr_dist *d[2] = { &c->send, &c->recv };
	for (int i = 0; i < 2; i++) {
		lb_json_key(j, i ? "recv" : "send");
		lb_json_object_begin(j);
		lb_json_kv_uint(j, "count", d[i]->count);
		lb_json_kv_double(j, "mean_ns", d[i]->mean);
		lb_json_kv_double(j, "p50_ns", lb_simr_dist_at(d[i], 0.5));
		lb_json_kv_double(j, "p99_ns", lb_simr_dist_at(d[i], 0.99));
		lb_json_kv_double(j, "max_ns", d[i]->ns[d[i]->n - 1]);
		lb_json_object_end(j);
	}
	lb_json_object_end(j);
}

static void config_json(struct lb_json *j, const struct lb_simr_config *cfg)
{
	lb_json_kv_string(j, "model", "sim");
	lb_json_kv_string(j, "label", "model prediction");
	lb_json_kv_string(j, "workload", "rt");
	lb_simb_machine_json_of(j, A.machine, &A.m);
	lb_json_kv_uint(j, "seed", cfg->seed);
	lb_json_kv_string(j, "list_lock", cfg->list_lock);
	lb_json_kv_uint(j, "cpus", cfg->cpus);
	lb_json_kv_uint(j, "groups", cfg->groups);
	lb_json_kv_uint(j, "fds", cfg->fds);
	lb_json_kv_uint(j, "loops", cfg->loops);
	lb_json_kv_uint(j, "datasize", cfg->datasize);
	costs_json(j, cfg);
	lb_json_kv_uint(j, "interval_ns", cfg->interval_ns);
	lb_json_kv_int(j, "rt_prio", cfg->rt_prio);
}

static void result_json(struct lb_json *j, const struct lb_simr_config *cfg,
			const struct lb_simr_result *r)
{
	double el = (double)r->elapsed_ns / 1e9;
	double v[M_COUNT] = { el, (double)r->stats.switches, (double)r->stats.migrations,
			      r->idle_share, (double)r->rt_p99_ns / 1e3,
			      r->messages ? (double)r->list_lock_acquires / (double)r->messages : 0 };
	lb_json_object_begin(j);
	lb_json_key(j, "params");
	lb_json_object_begin(j);
	lb_json_kv_string(j, "list_lock", cfg->list_lock);
	lb_json_kv_uint(j, "cpus", cfg->cpus);
	lb_json_object_end(j);
	lb_simb_json_one_run_begin(j, simr_metrics, v, M_COUNT);
	lb_json_kv_uint(j, "messages", r->messages);
	lb_json_kv_double(j, "send_charged_mean_ns",
			  r->messages ? (double)r->send_total_ns / (double)r->messages : 0);
	lb_json_kv_double(j, "recv_charged_mean_ns",
			  r->messages ? (double)r->recv_total_ns / (double)r->messages : 0);
	lb_json_kv_double(j, "cpus_utilized", el > 0 ? (double)r->stats.busy_ns / 1e9 / el : 0);
	lb_json_kv_uint(j, "rt_wakeups", r->rt_wakes);
	lb_json_kv_double(j, "rt_wakeup_p50_us", (double)r->rt_p50_ns / 1e3);
	lb_json_kv_double(j, "rt_wakeup_max_us", (double)r->rt_max_ns / 1e3);
	lb_json_kv_uint(j, "events", r->stats.events);
	lb_json_key(j, "list_lock_gauges");
	lb_json_object_begin(j);
	lb_json_kv_uint(j, "held_ns", r->ll_hold_ns);
	lb_json_kv_uint(j, "found_taken", r->ll_found_taken);
	lb_json_kv_uint(j, "running_1", r->ll_running[0]);
	lb_json_kv_uint(j, "running_2", r->ll_running[1]);
	lb_json_kv_uint(j, "running_3plus", r->ll_running[2]);
	lb_json_kv_uint(j, "owner_offcpu", r->ll_owner_off);
	lb_json_object_end(j);
	lb_json_kv_bool(j, "invariants_ok", r->ok);
	lb_json_key(j, "counters");
	lb_json_object_begin(j);
	for (size_t c = 0; c < r->ncounters; c++)
		lb_json_kv_uint(j, r->counters[c].name, r->counters[c].value);
	lb_json_object_end(j);
	lb_json_key(j, "host_cost");
	lb_json_object_begin(j);
	lb_json_kv_double(j, "cpu_s", r->host_cpu_s);
	lb_json_object_end(j);
	lb_json_object_end(j);
	lb_json_array_end(j);
	lb_json_object_end(j);
}

void lb_simr_write_json(FILE *fp, const struct lb_run_record *rec)
{
	struct lb_json j;
	lb_schema_begin_file(&j, fp, &lb_schema_sim_rt, &rec->host, rec->command);
	config_json(&j, &A.cfg);
	lb_json_object_end(&j);
	lb_json_kv_string(&j, "model", "sim");
	lb_json_key(&j, "results");
	lb_json_array_begin(&j);
	result_json(&j, &A.cfg, &R);
	lb_json_array_end(&j);
	lb_schema_write_interrupted(&j, rec->interrupted_by);
	lb_json_object_end(&j);
	fputc('\n', fp);
}
