/* SPDX-License-Identifier: MIT */
/*
 * sim_report.c - `lockbench sim`'s table and JSON (schema lockbench-sim).
 * Every table says "model prediction" and names the machine file; the JSON
 * carries "model": "sim" and the machine's figures.  The table holds only
 * virtual-time figures, so the same seed prints the same bytes; what the
 * host paid goes to a separate "# host:" line (sim_main.c sends it to
 * stderr) and to the JSON's "host_cost".
 */
#include "sim_cell.h"
#include "workload.h"
#include "lb_json.h"
#include "lb_schema.h"
#include "lb_stats.h"
#include "lb_wrap.h"

enum { M_ACQ, M_HANDOVER, M_FAIRNESS, M_EVENTS_PER_ACQ, M_COUNT };

static const struct lb_metric_desc sim_metrics[M_COUNT] = {
	[M_ACQ] = { "acquires_per_s", "ops/s", LB_BETTER_HIGHER,
		    "acquisitions per simulated second (model prediction)" },
	[M_HANDOVER] = { "handover_ns", "ns", LB_BETTER_LOWER,
			 "release to next acquisition, simulated (model prediction)" },
	[M_FAIRNESS] = { "fairness", "ratio", LB_BETTER_HIGHER,
			 "min/max acquisitions per thread (model prediction)" },
	[M_EVENTS_PER_ACQ] = { "events_per_acquire", "events", LB_BETTER_LOWER,
			       "simulator events per acquisition (the simulator's cost)" },
};

static const char *const sim_params[] = { "lock", "threads", "cpus", NULL };

const struct lb_workload_schema lb_schema_sim = {
	LB_SCHEMA_TABLES("lockbench-sim", 1, sim_params, sim_metrics),
};

void lb_simb_print_header(FILE *out, const struct lb_simb_config *cfg)
{
	const struct lb_sim_machine *m = &cfg->machine;
	lb_wrapf(out, "#   ", "# MODEL PREDICTION (lockbench sim, doc/sim.md): machine '%s' from %s, "
		 "%u sockets x %u cores x %u SMT; seed %llu", m->name, cfg->machine_path,
		 m->sockets, m->cores_per_socket, m->smt, (unsigned long long)cfg->seed);
	fprintf(out, "# cs %llu ns, par %llu ns, %llu ns simulated per cell\n",
		(unsigned long long)cfg->cs_ns, (unsigned long long)cfg->par_ns,
		(unsigned long long)cfg->duration_ns);
	fprintf(out, "# units: acq/s acquisitions per simulated second (higher is better), "
		"handover_ns\n#   release to next acquisition (lower), fairness min/max per "
		"thread (higher);\n#   ev/acq and ev/sim-s the simulator's own events\n");
	fprintf(out, "%-12s %7s %4s %12s %11s %8s %7s %9s %10s %s\n", "lock", "threads", "cpus",
		"acq/s", "handover_ns", "fairness", "ev/acq", "ev/sim-s", "transfers", "check");
}

void lb_simb_print_cell(FILE *out, const struct lb_simb_cell *c)
{
	double sim_s = c->sim_ns / 1e9;
	fprintf(out, "%-12s %7u %4u %12.0f %11.1f %8.3f %7.1f %9.3g %10llu %s\n", c->lock,
		c->threads, c->cpus, c->acquires_per_s, c->handover_ns, c->fairness,
		c->acquires ? (double)c->events / (double)c->acquires : 0,
		sim_s > 0 ? (double)c->events / sim_s : 0, (unsigned long long)c->transfers,
		c->nolock ? "n/a" : c->counter_ok ? "ok" : "FAILED");
}

void lb_simb_print_host(FILE *out, const struct lb_simb_cell *c)
{
	lb_wrapf(out, "#   ", "# host: %s %u threads %u cpus: %.3f s wall, %.3f s CPU for %.6f s "
		 "simulated (%llu events, %.3g events per host CPU second)", c->lock, c->threads,
		 c->cpus, c->host_s, c->host_cpu_s, c->sim_ns / 1e9, (unsigned long long)c->events,
		 c->host_cpu_s > 0 ? (double)c->events / c->host_cpu_s : 0);
}

void lb_simb_print_analytic(FILE *out, const struct lb_simb_cell *cells, size_t ncells)
{
	if (!ncells)
		return;
	fprintf(out, "# ANALYTIC MODEL PREDICTION beside the simulation's (doc/sim.md, \"Analytic "
		"cross-check\"):\n#   the closed queue of Boyd-Wickizer et al. 2012 from the inputs "
		"alone: a = --par,\n#   s = --cs, t = mean line transfer among the cell's CPUs "
		"(machine file);\n#   markov: hand-over s + t k with k cores at the lock; queue: "
		"s + t\n");
	fprintf(out, "# %-12s %7s %4s %-6s %7s %13s %13s %9s\n", "lock", "threads", "cpus", "model",
		"t_ns", "model acq/s", "sim acq/s", "sim/model");
	for (size_t i = 0; i < ncells; i++) {
		const struct lb_simb_cell *c = &cells[i];
		const struct lb_simb_analytic *an = &c->analytic;
		if (an->kind == LB_SIMB_AN_NONE) {
			fprintf(out, "# %-12s %7u %4u n/a: %s\n", c->lock, c->threads, c->cpus,
				an->why_not);
			continue;
		}
		fprintf(out, "# %-12s %7u %4u %-6s %7.1f %13.0f %13.0f %9.3f\n", c->lock,
			c->threads, c->cpus, lb_simb_analytic_name(an->kind), an->t_ns,
			an->acquires_per_s, c->acquires_per_s,
			an->acquires_per_s > 0 ? c->acquires_per_s / an->acquires_per_s : 0);
	}
}

void lb_simb_json_one_run_begin(struct lb_json *j, const struct lb_metric_desc *metrics,
				const double *v, size_t n)
{
	lb_json_key(j, "summary"); /* one run: each metric over its single value */
	lb_json_object_begin(j);
	for (size_t m = 0; m < n; m++)
		lb_schema_summary_of(j, metrics[m].key, &v[m], 1);
	lb_json_object_end(j);
	lb_json_key(j, "runs");
	lb_json_array_begin(j);
	lb_json_object_begin(j);
	lb_json_kv_uint(j, "repeat_index", 0);
	for (size_t m = 0; m < n; m++)
		lb_json_kv_double(j, metrics[m].key, v[m]);
}

/* The analytic cross-check's prediction for the cell (sim_analytic.c):
 * a second model prediction, labelled as one, its inputs beside it. */
static void analytic_json(struct lb_json *j, const struct lb_simb_analytic *an)
{
	lb_json_key(j, "analytic");
	lb_json_object_begin(j);
	lb_json_kv_string(j, "label", "model prediction");
	lb_json_kv_string(j, "source", "Boyd-Wickizer, Kaashoek, Morris, Zeldovich, \"Non-scalable "
			  "locks are dangerous\", Linux Symposium 2012 (doc/sim.md)");
	lb_json_kv_bool(j, "applies", an->kind != LB_SIMB_AN_NONE);
	if (an->kind == LB_SIMB_AN_NONE) {
		lb_json_kv_string(j, "why_not", an->why_not);
		lb_json_object_end(j);
		return;
	}
	lb_json_kv_string(j, "model", an->kind == LB_SIMB_AN_TICKET ? "markov-ticket" :
				      "closed-queue-constant");
	lb_json_kv_string(j, "service", an->kind == LB_SIMB_AN_TICKET ? "s + t*k" : "s + t");
	lb_json_kv_uint(j, "n", an->n);
	lb_json_kv_double(j, "a_ns", an->a_ns);
	lb_json_kv_double(j, "s_ns", an->s_ns);
	lb_json_kv_double(j, "t_ns", an->t_ns);
	lb_json_kv_double(j, "acquires_per_s", an->acquires_per_s);
	lb_json_object_end(j);
}

static void cell_json(struct lb_json *j, const struct lb_simb_cell *c)
{
	double per_acq = c->acquires ? (double)c->events / (double)c->acquires : 0;
	double v[M_COUNT] = { c->acquires_per_s, c->handover_ns, c->fairness, per_acq };
	lb_json_object_begin(j);
	lb_json_key(j, "params");
	lb_json_object_begin(j);
	lb_json_kv_string(j, "lock", c->lock);
	lb_json_kv_uint(j, "threads", c->threads);
	lb_json_kv_uint(j, "cpus", c->cpus);
	lb_json_object_end(j);
	analytic_json(j, &c->analytic);
	lb_simb_json_one_run_begin(j, sim_metrics, v, M_COUNT);
	lb_json_kv_uint(j, "acquires", c->acquires);
	lb_json_kv_uint(j, "handovers", c->handovers);
	lb_json_kv_uint(j, "events", c->events);
	lb_json_kv_uint(j, "simulated_ns", c->sim_ns);
	lb_json_kv_uint(j, "transfers", c->transfers);
	lb_json_kv_uint(j, "switches", c->switches);
	lb_json_kv_uint(j, "wakeups", c->wakeups);
	lb_json_kv_uint(j, "violations", c->violations);
	lb_json_kv_bool(j, "check_ok", c->counter_ok);
	if (c->ncounters) {
		/* the lock's own counters, as bench --explain writes them */
		lb_json_key(j, "counters");
		lb_json_object_begin(j);
		for (size_t i = 0; i < c->ncounters; i++)
			lb_json_kv_uint(j, c->counters[i].name, c->counters[i].value);
		lb_json_object_end(j);
	}
	char digest[32];
	snprintf(digest, sizeof(digest), "%016llx", (unsigned long long)c->digest);
	lb_json_kv_string(j, "event_digest", digest);
	lb_json_key(j, "host_cost");
	lb_json_object_begin(j);
	lb_json_kv_double(j, "wall_s", c->host_s);
	lb_json_kv_double(j, "cpu_s", c->host_cpu_s);
	lb_json_object_end(j);
	lb_json_object_end(j);
	lb_json_array_end(j);
	lb_json_object_end(j);
}

void lb_simb_machine_json(struct lb_json *j, const struct lb_simb_config *cfg)
{
	lb_simb_machine_json_of(j, cfg->machine_path, &cfg->machine);
}

void lb_simb_machine_json_of(struct lb_json *j, const char *path, const struct lb_sim_machine *m)
{
	lb_json_key(j, "machine");
	lb_json_object_begin(j);
	lb_json_kv_string(j, "file", path);
	lb_json_kv_string(j, "name", m->name);
	lb_json_kv_uint(j, "sockets", m->sockets);
	lb_json_kv_uint(j, "cores_per_socket", m->cores_per_socket);
	lb_json_kv_uint(j, "smt", m->smt);
	const struct { const char *k; uint64_t v; } ns[] = {
		{ "l1_hit", m->l1_hit }, { "same_core", m->same_core },
		{ "same_socket", m->same_socket }, { "cross_socket", m->cross_socket },
		{ "memory", m->memory }, { "rmw", m->rmw }, { "context_switch", m->context_switch },
		{ "wakeup", m->wakeup }, { "syscall", m->syscall }, { "tick", m->tick },
		{ "min_granularity", m->min_granularity },
		{ "wakeup_granularity", m->wakeup_granularity }, { "sched_latency", m->sched_latency },
	};
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		lb_json_kv_uint(j, ns[i].k, ns[i].v);
	lb_json_object_end(j);
}

void lb_simb_write_json(FILE *fp, const struct lb_simb_config *cfg,
			const struct lb_run_record *rec, const struct lb_simb_cell *cells,
			size_t ncells)
{
	struct lb_json j;
	lb_schema_begin_file(&j, fp, &lb_schema_sim, &rec->host, rec->command);
	lb_json_kv_string(&j, "model", "sim");
	lb_json_kv_string(&j, "label", "model prediction");
	lb_simb_machine_json(&j, cfg);
	lb_json_kv_uint(&j, "seed", cfg->seed);
	lb_json_kv_uint(&j, "cs_ns", cfg->cs_ns);
	lb_json_kv_uint(&j, "par_ns", cfg->par_ns);
	lb_json_kv_uint(&j, "duration_ns", cfg->duration_ns);
	lb_json_object_end(&j);
	lb_json_kv_string(&j, "model", "sim");
	lb_json_key(&j, "results");
	lb_json_array_begin(&j);
	for (size_t i = 0; i < ncells; i++)
		cell_json(&j, &cells[i]);
	lb_json_array_end(&j);
	lb_schema_write_interrupted(&j, rec->interrupted_by);
	lb_json_object_end(&j);
	fputc('\n', fp);
}
