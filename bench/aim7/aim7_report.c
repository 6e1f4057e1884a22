/* SPDX-License-Identifier: MIT */
/*
 * aim7_report.c - aim7 output: re-aim's log table on stdout, re-aim's CSV, and
 * the lockbench JSON (lib/lb_schema.h) with the aim7 metric table.
 */
#include "aim7.h"
#include "workload.h"
#include "lb_time.h"
#include "lb_hostinfo.h"
#include "lb_json.h"
#include "lb_schema.h"
#include "lb_stats.h"
#include "lb_steal.h"

#include <stdlib.h>
#include <string.h>

enum {
	M_JPM, M_JPM_C, M_JPS_C, M_PARENT, M_USER, M_SYS, M_SD, M_JTI, M_MAX, M_MIN,
	M_WAIT_MUTEX, M_WAIT_SPIN, M_WAIT_RW, M_JOBS, M_COUNT
};

static const struct lb_metric_desc aim7_metrics[M_COUNT] = {
	[M_JPM] = { "jobs_per_min", "jobs/min", LB_BETTER_HIGHER, "Jobs/min" },
	[M_JPM_C] = { "jobs_per_min_child", "jobs/min", LB_BETTER_HIGHER, "Jobs/min per child" },
	[M_JPS_C] = { "jobs_per_sec_child", "jobs/s", LB_BETTER_HIGHER, "Jobs/s per child" },
	[M_PARENT] = { "parent_time_s", "s", LB_BETTER_LOWER, "parent (wall) time" },
	[M_USER] = { "child_user_s", "s", LB_BETTER_LOWER, "children's user time" },
	[M_SYS] = { "child_sys_s", "s", LB_BETTER_LOWER, "children's system time" },
	[M_SD] = { "std_dev", "s", LB_BETTER_LOWER, "std dev of child times" },
	[M_JTI] = { "jti", "%", LB_BETTER_HIGHER, "Jain-like fairness index (JTI)" },
	[M_MAX] = { "max_child_s", "s", LB_BETTER_LOWER, "slowest child" },
	[M_MIN] = { "min_child_s", "s", LB_BETTER_LOWER, "fastest child" },
	[M_WAIT_MUTEX] = { "wait_mutex_pct", "%", LB_BETTER_LOWER, "time in lock(), mutex role" },
	[M_WAIT_SPIN] = { "wait_spinlock_pct", "%", LB_BETTER_LOWER,
			  "time in lock(), spinlock role" },
	[M_WAIT_RW] = { "wait_rwlock_pct", "%", LB_BETTER_LOWER, "time in lock(), rwlock role" },
	[M_JOBS] = { "jobs_per_child", "jobs", LB_BETTER_NONE,
		     "jobs per child (in a window: completed, mean)" },
};

static const char *const aim7_params[] = { "workfile", "users", "mutex", "spinlock", "rwlock",
					   "side", NULL };

static const char *const aim7_plot_curves[] = { "jobs_per_min", NULL };
/* re-aim's picture: Jobs/min against users. */
static const struct lb_plot_hints aim7_plot = {
	.x_param = "users",
	.curves = aim7_plot_curves,
};

/* --ab: the cells are PRE and POST, the lock of the role --ab-role names. */
static const struct lb_sides_hints aim7_sides = {
	.side_param = "side",
	.values = { "PRE", "POST" },
	.when_config = "ab_role",
	.lock_param_config = "ab_role",
	.name_config = { "pre", "post" },
	.label_value = 1,
};

const struct lb_workload_schema lb_schema_aim7 = {
	LB_SCHEMA_TABLES("lockbench-aim7", 1, aim7_params, aim7_metrics),
	.plot = &aim7_plot,
	.sides = &aim7_sides,
};

const char *aim_role_name(int role)
{
	static const char *const names[AIM_NROLES] = { "mutex", "spinlock", "rwlock" };
	return role >= 0 && role < AIM_NROLES ? names[role] : "?";
}

double aim_wait_pct(const struct aim_point *p, int role)
{
	/* Waiting time over the children's total elapsed time (a sleeping
	 * waiter uses no CPU, so CPU time alone would hide it). */
	double total_s = 0;
	total_s = p->fig.parent_s * (double)p->users;
	if (total_s <= 0)
		return 0;
	return 100.0 * ((double)p->role[role].wait_ns / LB_NS_PER_S) / total_s;
}

static double metric(const struct aim_point *p, int m)
{
	const struct aim_figures *f = &p->fig;
	switch (m) {
	case M_JPM: return f->jobs_per_min;
	case M_JPM_C: return f->jobs_per_min_child;
	case M_JPS_C: return f->jobs_per_sec_child;
	case M_PARENT: return f->parent_s;
	case M_USER: return f->child_user_s;
	case M_SYS: return f->child_sys_s;
	case M_SD: return f->std_dev;
	case M_JTI: return f->jti;
	case M_MAX: return f->max_child_s;
	case M_MIN: return f->min_child_s;
	case M_WAIT_MUTEX: return aim_wait_pct(p, AIM_ROLE_MUTEX);
	case M_WAIT_SPIN: return aim_wait_pct(p, AIM_ROLE_SPIN);
	case M_WAIT_RW: return aim_wait_pct(p, AIM_ROLE_RW);
	case M_JOBS: return f->jobs_per_child;
	}
	return 0;
}

void aim_print_header(FILE *out)
{
	fprintf(out, "Forks  Jobs/min   child     child parent  childU childS  std_dev   JTI"
		     "   :max  :min\n");
}

void aim_print_row(FILE *out, const char *prefix, const struct aim_figures *f)
{
	fprintf(out, "%s%-5u %8.2f %9.2f %9.2f %8.2f  %6.2f %6.2f%8.2f  %6.2f %5.2f %5.2f\n",
		prefix, f->children, f->jobs_per_min, f->jobs_per_min_child, f->jobs_per_sec_child,
		f->parent_s, f->child_user_s, f->child_sys_s, f->std_dev, f->jti, f->max_child_s,
		f->min_child_s);
}

void aim_console_header(FILE *out)
{
	/* re-aim 7.0.1.13 driver.c print_header_line(), its column heads. */
	fprintf(out, "REAIM Workload\n"
		     "Times are in seconds - Child times from tms.cstime and tms.cutime\n\n"
		     "Num     Parent   Child   Child  Jobs per   Jobs/min/  Std_dev  Std_dev  JTI\n"
		     "Forked  Time     SysTime UTime   Minute     Child      Time     Percent \n");
}

int aim_console_row(char *buf, size_t len, const struct aim_figures *f)
{
	/* re-aim's row format; its JTI is an int (truncated, not rounded). */
	return snprintf(buf, len, "%-8u%-8.2f %-7.2f %-7.2f %-10.2f %-10.2f %-8.2f %-8.2f %-4d \n",
			f->children, f->parent_s, f->child_sys_s, f->child_user_s,
			f->jobs_per_min, f->jobs_per_min_child, f->std_dev, f->cov_pct,
			(int)f->jti);
}

void aim_csv_header(FILE *out)
{
	fprintf(out, "Forks,JPM,JPM_C,JPS_C,parent_tm,childU_tm,childS_tm,std_dev,JTI,max_c,min_c\n");
}

void aim_csv_row(FILE *out, const struct aim_figures *f)
{
	fprintf(out, "%u,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f\n", f->children,
		f->jobs_per_min, f->jobs_per_min_child, f->jobs_per_sec_child, f->parent_s,
		f->child_user_s, f->child_sys_s, f->std_dev, f->jti, f->max_child_s,
		f->min_child_s);
}

static void json_summary(struct lb_json *j, const double *v, size_t n)
{
	lb_schema_summary_of(j, NULL, v, n);
}

static void json_roles(struct lb_json *j, const struct aim_point *p)
{
	lb_json_key(j, "roles");
	lb_json_object_begin(j);
	for (int r = 0; r < AIM_NROLES; r++) {
		lb_json_key(j, aim_role_name(r));
		lb_json_object_begin(j);
		lb_json_kv_uint(j, "acquires", p->role[r].acquires);
		lb_json_kv_uint(j, "wait_ns", p->role[r].wait_ns);
		lb_json_key(j, "counters");
		lb_json_object_begin(j);
		for (size_t c = 0; c < p->role[r].ncounters; c++)
			lb_json_kv_uint(j, p->role[r].counters[c].name, p->role[r].counters[c].value);
		lb_json_object_end(j);
		lb_json_object_end(j);
	}
	lb_json_object_end(j);
	lb_json_key(j, "classes");
	lb_json_object_begin(j);
	for (int k = 0; k < AIM_NCLASSES; k++) {
		struct aim_gauges g;
		aim_gauges_compute(&p->cls[k], p->fig.parent_s, &g);
		lb_json_key(j, aim_class_name(k));
		lb_json_object_begin(j);
		lb_json_kv_uint(j, "acquires", p->cls[k].acquires);
		lb_json_kv_uint(j, "held_ns", p->cls[k].held_ns);
		lb_json_kv_uint(j, "wait_ns", p->cls[k].wait_ns);
		lb_json_kv_double(j, "rho", g.rho);
		lb_json_kv_double(j, "slow_fraction", g.slow_frac);
		lb_json_kv_double(j, "sleep_fraction", g.sleep_frac);
		lb_json_kv_double(j, "spin_won_fraction", g.spin_won);
		lb_json_kv_double(j, "wait_mean_ns", g.wait_mean_ns);
		lb_json_kv_double(j, "wait_p99_ns", g.wait_p99_ns);
		lb_json_kv_double(j, "hold_p50_ns", g.hold_p50_ns);
		lb_json_key(j, "hold_hist_log2_ns");
		lb_json_array_begin(j);
		for (int b = 0; b < AIM_WAIT_BUCKETS; b++)
			lb_json_uint(j, p->cls[k].hold_hist[b]);
		lb_json_array_end(j);
		lb_json_key(j, "waiters_at_acquisition");
		lb_json_array_begin(j);
		for (int b = 0; b < AIM_WAITERS_BINS; b++)
			lb_json_uint(j, p->cls[k].waiters_hist[b]);
		lb_json_array_end(j);
		lb_json_key(j, "running_contenders_share");
		if (g.have_running) {
			lb_json_array_begin(j);
			for (int b = 0; b < 3; b++)
				lb_json_double(j, g.running_share[b]);
			lb_json_array_end(j);
		} else {
			lb_json_null(j);
		}
		struct aim_gate gate;
		aim_gate_eval(&p->cls[k], p->fig.parent_s, aim_spin_horizon_ns(), &gate);
		lb_json_kv_string(j, "mechanism", !gate.known ? "unknown" : gate.present ? "present"
											   : "absent");
		lb_json_kv_string(j, "mechanism_why", gate.why);
		lb_json_object_end(j);
	}
	lb_json_object_end(j);
	lb_json_kv_double(j, "idle_cpu_fraction", p->idle_frac);
}

/* config.costs: the table used (null: none) and the sizing's check. */
static void json_costs(struct lb_json *j, const struct aim_config *cfg)
{
	lb_json_key(j, "costs");
	if (!cfg->costs_on) {
		lb_json_null(j);
		return;
	}
	const struct aim_costs *c = &cfg->costs;
	lb_json_object_begin(j);
	lb_json_kv_string(j, "path", c->path);
	lb_json_kv_string(j, "schema", AIM_COSTS_SCHEMA);
	lb_json_kv_uint(j, "version", AIM_COSTS_VERSION);
	lb_json_kv_string(j, "host_kernel", c->host.kernel);
	lb_json_kv_string(j, "host_cpus", c->host.cpus);
	lb_json_kv_string(j, "host_date", c->host.date);
	lb_json_kv_string(j, "host_fs", c->host_fs);
	lb_json_kv_bool(j, "sized", cfg->sizing.on);
	if (cfg->sizing.on) {
		lb_json_kv_double(j, "scale", cfg->sizing.scale);
		lb_json_kv_double(j, "share_worst_deviation", cfg->sizing_share_worst);
		lb_json_kv_double(j, "share_worst_deviation_1pct", cfg->sizing_share_worst_big);
		lb_json_key(j, "tests");
		lb_json_array_begin(j);
		for (size_t s = 0; s < cfg->wf.ntests && s < AIM_SIZING_MAX_TESTS; s++) {
			lb_json_object_begin(j);
			lb_json_kv_string(j, "test", aim_test_at((size_t)cfg->wf.test[s])->name);
			lb_json_kv_double(j, "native_ns", cfg->sizing.native_ns[s]);
			lb_json_kv_double(j, "target_ns", cfg->sizing.target_ns[s]);
			lb_json_kv_double(j, "pad_fraction", cfg->sizing.pad_frac[s]);
			lb_json_kv_double(j, "share_sim", cfg->sizing_sim_share[s]);
			lb_json_kv_double(j, "share_table", cfg->sizing_table_share[s]);
			lb_json_object_end(j);
		}
		lb_json_array_end(j);
	}
	lb_json_object_end(j);
}

void aim_write_json(FILE *out, const struct aim_config *cfg, const struct lb_run_record *rec,
		    const struct aim_cell *cells, size_t ncells)
{
	const struct lb_hostinfo *host = &rec->host;
	struct lb_json j;
	lb_schema_begin_file(&j, out, &lb_schema_aim7, host, rec->command);
	lb_json_kv_string(&j, "workfile", cfg->wf.name);
	lb_json_kv_string(&j, "workfile_path", cfg->wf.path);
	lb_json_kv_uint(&j, "total_hits", cfg->wf.total_hits);
	for (int r = 0; r < AIM_NROLES; r++)
		lb_json_kv_string(&j, aim_role_name(r), cfg->role_ops[r]->name);
	if (cfg->ab) {
		lb_json_kv_string(&j, "ab_role", aim_role_name(cfg->ab_role));
		lb_json_kv_string(&j, "pre", cfg->ab_ops[0]->name);
		lb_json_kv_string(&j, "post", cfg->ab_ops[1]->name);
	}
	lb_json_kv_uint(&j, "repeat", cfg->repeat);
	lb_json_kv_double(&j, "time_s", (double)cfg->time_ns / LB_NS_PER_S);
	lb_json_kv_uint(&j, "jobs", cfg->jobs);
	lb_json_kv_double(&j, "window_s", (double)cfg->window_ns / LB_NS_PER_S);
	lb_json_kv_uint(&j, "seed", cfg->seed);
	json_costs(&j, cfg);
	if (lb_load_average_at_start() >= 0)
		lb_json_kv_double(&j, "load_average_before", lb_load_average_at_start());
	lb_steal_json(&j, rec->steal_s);
	lb_json_object_end(&j);

	lb_json_key(&j, "results");
	lb_json_array_begin(&j);
	double *v = calloc(AIM_MAX_REPEAT, sizeof(double));
	for (size_t i = 0; i < ncells && v; i++) {
		const struct aim_cell *c = &cells[i];
		lb_json_object_begin(&j);
		lb_json_key(&j, "params");
		lb_json_object_begin(&j);
		lb_json_kv_string(&j, "workfile", cfg->wf.name);
		lb_json_kv_uint(&j, "users", c->users);
		for (int r = 0; r < AIM_NROLES; r++)
			lb_json_kv_string(&j, aim_role_name(r), c->role_ops[r]->name);
		if (c->side >= 0)
			lb_json_kv_string(&j, "side", c->side ? "POST" : "PRE");
		lb_json_object_end(&j);
		lb_json_key(&j, "summary");
		lb_json_object_begin(&j);
		for (int m = 0; m < M_COUNT; m++) {
			for (size_t r = 0; r < c->nruns; r++)
				v[r] = metric(&c->run[r], m);
			lb_json_key(&j, aim7_metrics[m].key);
			json_summary(&j, v, c->nruns);
		}
		lb_json_object_end(&j);
		lb_json_key(&j, "runs");
		lb_json_array_begin(&j);
		for (size_t r = 0; r < c->nruns; r++) {
			lb_json_object_begin(&j);
			lb_json_kv_uint(&j, "repeat_index", c->run[r].repeat_index);
			for (int m = 0; m < M_COUNT; m++)
				lb_json_kv_double(&j, aim7_metrics[m].key, metric(&c->run[r], m));
			lb_json_kv_uint(&j, "invariant_errors", c->run[r].invariant_errors);
			lb_json_kv_uint(&j, "voluntary_switches", c->run[r].vol_csw);
			lb_json_kv_uint(&j, "involuntary_switches", c->run[r].invol_csw);
			lb_json_kv_uint(&j, "jobs_completed", c->run[r].jobs_done);
			lb_json_kv_uint(&j, "s_orphan_lock_owner_sleeps", c->run[r].orphan_sleeps);
			if (c->run[r].window_s > 0) {
				lb_json_kv_double(&j, "window_s", c->run[r].window_s);
				lb_json_kv_uint(&j, "jobs_cut", c->run[r].jobs_cut);
				lb_json_kv_uint(&j, "job_list_per_child", c->run[r].jobs_per_child);
				lb_json_kv_double(&j, "cpus_busy", aim_cpus_busy(&c->run[r]));
				lb_json_kv_double(&j, "progress_per_s", aim_progress_per_s(&c->run[r]));
				lb_json_kv_double(&j, "sys_tests_cpu_s", c->run[r].sys_tests_cpu_s);
				lb_json_kv_double(&j, "user_tests_cpu_s", c->run[r].user_tests_cpu_s);
			}
			json_roles(&j, &c->run[r]);
			lb_json_object_end(&j);
		}
		lb_json_array_end(&j);
		lb_json_object_end(&j);
	}
	free(v);
	lb_json_array_end(&j);
	lb_json_object_end(&j);
	fputc('\n', out);
}
