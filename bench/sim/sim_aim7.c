/* SPDX-License-Identifier: MIT */
/*
 * sim_aim7.c - `lockbench sim --workload aim7` (doc/sim.md, "aim7 on the
 * simulator"), the native side: the workfile, the cost table and the
 * sizing it gives, one world per load point (sim_aim7_world.c), the table
 * (every line of it a model prediction, virtual time only, so the same
 * seed prints the same bytes) and the JSON (schema lockbench-sim-aim7).
 */
#include "sim_cell.h"
#include "sim_aim7.h"
#include "workload.h"
#include "lb_cli.h"
#include "lb_json.h"
#include "lb_schema.h"
#include "lb_stop.h"
#include "lb_wrap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { M_JPM, M_CPUS_BUSY, M_RUNNING2, M_COUNT };
static const struct lb_metric_desc simaim_metrics[M_COUNT] = {
	[M_JPM] = { "jobs_per_min", "jobs/min", LB_BETTER_HIGHER,
		    "re-aim's Jobs/min in the fixed window, virtual (model prediction)" },
	[M_CPUS_BUSY] = { "cpus_busy", "CPUs", LB_BETTER_HIGHER,
			  "mean running virtual threads (model prediction)" },
	[M_RUNNING2] = { "orphan_running2_share", "ratio", LB_BETTER_HIGHER,
			 "s_orphan_lock slow-path acquisitions with >= 2 running contenders" },
};
static const char *const simaim_params[] = { "workfile", "users", "mutex", NULL };
const struct lb_workload_schema lb_schema_sim_aim7 = {
	LB_SCHEMA_TABLES("lockbench-sim-aim7", 1, simaim_params, simaim_metrics),
};

struct simaim_results {
	struct lb_simaim_config acfg;
	struct aim_costs costs;
	size_t n;
	bool failed;
	struct lb_simaim_point pts[LB_SIMAIM_MAX_POINTS];
	struct aim_figures fig[LB_SIMAIM_MAX_POINTS];
	double host_s[LB_SIMAIM_MAX_POINTS], host_cpu_s[LB_SIMAIM_MAX_POINTS];
};

static double host_clock(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The table's time for each kernel op as virtual CPU: scale 1 and every
 * system test fully "padded" (its model's own bookkeeping costs only its
 * atomics in virtual time, so the table's time is all of it). */
static void size_from_table(const struct aim_costs *c, const struct aim_workfile *wf,
			    struct aim_sizing *sz)
{
	memset(sz, 0, sizeof(*sz));
	aim_sizing_real_ns(c, sz->kwork_ns);
	sz->on = true;
	sz->scale = 1;
	sz->from_cpu = c->have_cpu;
	for (size_t t = 0; t < wf->ntests && t < AIM_SIZING_MAX_TESTS; t++)
		sz->pad_frac[t] = 1;
	/* Two orphan sections per truncating creat: one of them slept. */
	if (c->have_sleep) {
		sz->orphan_sleep_p = c->creat_sleep_frac / 2;
		sz->orphan_sleep_ns = c->creat_offcpu_ns;
	}
}

/* The workfile, the table, the roles' locks; exit 2 naming the option. */
static void setup(const struct lb_simb_config *cfg, struct simaim_results *r)
{
	struct lb_simaim_config *a = &r->acfg;
	char err[512];
	a->machine = cfg->machine;
	a->seed = cfg->seed;
	a->window_ns = cfg->window_ns;
	a->jobs = 100; /* re-aim's list per child */
	if (aim_workfile_load(cfg->workfile, &a->wf, err, sizeof(err)))
		lb_usage_error("--workfile: %s", err);
	for (size_t t = 0; t < a->wf.ntests; t++)
		if ((size_t)a->wf.test[t] >= aim_nsys_tests)
			lb_usage_error("--workfile: '%s' has the user-time test %s, whose CPU the "
				       "simulator does not model; accepted: a workfile of system "
				       "tests only, e.g. high_systime", cfg->workfile,
				       aim_test_at((size_t)a->wf.test[t])->name);
	const char *costs = cfg->costs ? cfg->costs : aim_costs_default_path();
	if (!strcmp(costs, "none")) /* aim7's unsized model: no kernel time at all here */
		lb_usage_error("--costs: 'none' leaves the kernel's work at zero virtual time; "
			       "accepted: a cost table file (lockbench aim7 --calibrate writes one)");
	if (aim_costs_load(costs, &r->costs, err, sizeof(err)))
		lb_usage_error("--costs: %s", err);
	size_from_table(&r->costs, &a->wf, &a->sizing);
	a->ops[AIM_ROLE_MUTEX] = cfg->aim_mutex;
	/* --spinlock, --rwlock; aim7's own defaults (aim7_opts.c) when not given. */
	a->ops[AIM_ROLE_SPIN] = cfg->aim_spin;
	a->ops[AIM_ROLE_RW] = cfg->aim_rw;
}

static uint64_t counter(const struct lb_simaim_point *p, const char *name)
{
	for (size_t i = 0; i < p->ncounters; i++)
		if (!strcmp(p->counters[i].name, name))
			return p->counters[i].value;
	return 0;
}

static void print_header(FILE *out, const struct lb_simb_config *cfg,
			 const struct simaim_results *r)
{
	const struct lb_sim_machine *m = &cfg->machine;
	const struct lb_simaim_config *a = &r->acfg;
	lb_wrapf(out, "#   ", "# MODEL PREDICTION (lockbench sim --workload aim7, doc/sim.md): "
		 "machine '%s' from %s, %u sockets x %u cores x %u SMT; seed %llu", m->name,
		 cfg->machine_path, m->sockets, m->cores_per_socket, m->smt,
		 (unsigned long long)cfg->seed);
	lb_wrapf(out, "#   ", "# aim7 %s, re-aim's fixed window %.3f s (virtual), %u jobs per "
		 "child's list; mutex=%s spinlock=%s rwlock=%s; kernel work from the cost table "
		 "(%s, %s times; s_orphan_lock sleeps p=%.3f for %.0f us)", a->wf.name,
		 (double)a->window_ns / 1e9, a->jobs, a->ops[0]->name, a->ops[1]->name,
		 a->ops[2]->name, r->costs.host.kernel, a->sizing.from_cpu ? "CPU" : "wall",
		 a->sizing.orphan_sleep_p, a->sizing.orphan_sleep_ns / 1e3);
	fprintf(out, "# units: Jobs/min re-aim's (virtual); busy = mean running virtual "
		"threads; idle = CPU share idle;\n#   s_orphan_lock: acq, rho (held share), "
		"hold p50 (ns, log2 edge), slow-path\n#   acquisitions by running contenders "
		"1/2/3+, spin wins, sleeps\n");
	fprintf(out, "%5s %9s %5s %4s %7s %6s %5s %7s %5s %6s %6s %6s %6s %7s %6s %s\n", "users",
		"Jobs/min", "jobs", "cut", "parent", "busy", "idle", "acq", "rho", "hold", "run1",
		"run2", "run3+", "spinwon", "sleeps", "check");
}

static void print_point(FILE *out, const struct lb_simaim_point *p, const struct aim_figures *f)
{
	fprintf(out, "%5u %9.2f %5llu %4llu %7.3f %6.2f %5.3f %7llu %5.3f %6.0f %6llu %6llu %6llu "
		"%7llu %6llu %s\n", p->users, f->jobs_per_min, (unsigned long long)p->jobs_done,
		(unsigned long long)p->jobs_cut, p->parent_s, p->cpus_busy, p->idle_frac,
		(unsigned long long)p->orphan_acquires, p->orphan_rho, p->orphan_hold_p50_ns,
		(unsigned long long)counter(p, "acq_running_1"),
		(unsigned long long)counter(p, "acq_running_2"),
		(unsigned long long)counter(p, "acq_running_3plus"),
		(unsigned long long)counter(p, "spin_won"), (unsigned long long)counter(p, "sleeps"),
		p->stuck ? "STUCK" : p->violations ? "FAILED" : "ok");
}

/* Progress on the host, for long points: at most every 5 host seconds. */
struct simaim_tick {
	unsigned int users;
	double t0, last;
	bool quiet;
};

static void tick(void *arg, uint64_t now_ns, uint64_t end_ns)
{
	struct simaim_tick *t = arg;
	double now = host_clock(CLOCK_MONOTONIC);
	if (t->quiet || now - t->last < 5)
		return;
	t->last = now;
	fprintf(stderr, "# sim aim7: %u users: virtual time %.3f s, the window ends at %.3f s; "
		"host %.0f s\n", t->users, now_ns / 1e9, end_ns / 1e9, now - t->t0);
}

static int one_point(struct lb_run *run, struct simaim_results *r, unsigned int users)
{
	const struct lb_simb_config *cfg = run->cfg;
	struct lb_simaim_point *p = &r->pts[r->n];
	struct simaim_tick tk = { users, host_clock(CLOCK_MONOTONIC), tk.t0, cfg->quiet };
	r->acfg.tick = tick;
	r->acfg.tick_arg = &tk;
	double c0 = host_clock(CLOCK_PROCESS_CPUTIME_ID);
	int err = lb_simaim_run_point(&r->acfg, users, p);
	if (err == EINTR)
		return 0;
	if (err) {
		fprintf(stderr, "lockbench: sim: aim7 at %u users: %s\n", users, strerror(err));
		return 1;
	}
	r->host_s[r->n] = host_clock(CLOCK_MONOTONIC) - tk.t0;
	r->host_cpu_s[r->n] = host_clock(CLOCK_PROCESS_CPUTIME_ID) - c0;
	struct aim_figures *f = &r->fig[r->n];
	aim_figures_compute(users, (double)p->jobs_done / users, p->parent_s, p->child_s, 0,
			    p->sys_cpu_s, f);
	print_point(run->out, p, f);
	fflush(run->out);
	if (!cfg->quiet)
		lb_wrapf(stderr, "#   ", "# host: aim7 %u users: %.3f s wall, %.3f s CPU for %.3f s "
			 "simulated (%llu events, %.3g events per host CPU second)", users,
			 r->host_s[r->n], r->host_cpu_s[r->n], p->sim_ns / 1e9,
			 (unsigned long long)p->events,
			 r->host_cpu_s[r->n] > 0 ? (double)p->events / r->host_cpu_s[r->n] : 0);
	r->n++;
	if (p->stuck)
		fprintf(stderr, "lockbench: sim: aim7 at %u users: threads still alive long after "
			"the window (a lost wake-up or a lock never granted)\n", users);
	if (p->violations)
		fprintf(stderr, "aim7: invariant check FAILED at %u users (%lu violation(s)); "
			"locks: mutex=%s spinlock=%s rwlock=%s (model run)\n", users, p->violations,
			r->acfg.ops[0]->name, r->acfg.ops[1]->name, r->acfg.ops[2]->name);
	return p->stuck || p->violations;
}

int lb_simaim_run(struct lb_run *run)
{
	const struct lb_simb_config *cfg = run->cfg;
	struct simaim_results *r = calloc(1, sizeof(*r));
	run->results = r;
	if (!r) {
		fprintf(stderr, "lockbench: sim: out of memory\n");
		return 1;
	}
	setup(cfg, r);
	print_header(run->out, cfg, r);
	fflush(run->out);
	for (size_t u = 0; u < cfg->nusers && !lb_stop_signal(); u++)
		if (one_point(run, r, cfg->users[u]))
			r->failed = true;
	return 0;
}

static void point_json(struct lb_json *j, const struct simaim_results *r, size_t i)
{
	const struct lb_simaim_point *p = &r->pts[i];
	const struct aim_figures *f = &r->fig[i];
	uint64_t run1 = counter(p, "acq_running_1"), run2 = counter(p, "acq_running_2"),
		 run3 = counter(p, "acq_running_3plus");
	lb_json_object_begin(j);
	lb_json_key(j, "params");
	lb_json_object_begin(j);
	lb_json_kv_string(j, "workfile", r->acfg.wf.name);
	lb_json_kv_uint(j, "users", p->users);
	lb_json_kv_string(j, "mutex", r->acfg.ops[0]->name);
	lb_json_object_end(j);
	double v[M_COUNT] = { f->jobs_per_min, p->cpus_busy,
			      run1 + run2 + run3 ? (double)(run2 + run3) / (double)(run1 + run2 + run3)
						 : 0 };
	lb_simb_json_one_run_begin(j, simaim_metrics, v, M_COUNT); /* one run per point */
	lb_json_kv_uint(j, "jobs_completed", p->jobs_done);
	lb_json_kv_uint(j, "jobs_cut", p->jobs_cut);
	lb_json_kv_uint(j, "job_list_per_child", p->job_list);
	lb_json_kv_double(j, "parent_s", p->parent_s);
	lb_json_kv_double(j, "jti", f->jti);
	lb_json_kv_double(j, "child_cpu_s", p->sys_cpu_s);
	lb_json_kv_double(j, "idle_cpu_fraction", p->idle_frac);
	lb_json_key(j, "s_orphan_lock");
	lb_json_object_begin(j);
	lb_json_kv_uint(j, "acquisitions", p->orphan_acquires);
	lb_json_kv_double(j, "rho", p->orphan_rho);
	lb_json_kv_double(j, "hold_p50_ns", p->orphan_hold_p50_ns);
	lb_json_kv_uint(j, "owner_sleeps", p->orphan_sleeps);
	lb_json_key(j, "counters");
	lb_json_object_begin(j);
	for (size_t c = 0; c < p->ncounters; c++)
		lb_json_kv_uint(j, p->counters[c].name, p->counters[c].value);
	lb_json_object_end(j);
	lb_json_object_end(j);
	lb_json_kv_uint(j, "invariant_errors", p->violations);
	lb_json_kv_bool(j, "stuck", p->stuck);
	lb_json_kv_uint(j, "events", p->events);
	lb_json_kv_uint(j, "sim_ns", p->sim_ns);
	char digest[24];
	snprintf(digest, sizeof(digest), "%016llx", (unsigned long long)p->digest);
	lb_json_kv_string(j, "digest", digest);
	lb_json_key(j, "host_cost");
	lb_json_object_begin(j);
	lb_json_kv_double(j, "wall_s", r->host_s[i]);
	lb_json_kv_double(j, "cpu_s", r->host_cpu_s[i]);
	lb_json_object_end(j);
	lb_json_object_end(j);
	lb_json_array_end(j);
	lb_json_object_end(j);
}

int lb_simaim_report(struct lb_run *run)
{
	const struct lb_simb_config *cfg = run->cfg;
	const struct simaim_results *r = run->results;
	FILE *fp = run->file[0].fp;
	if (fp) {
		struct lb_json j;
		lb_schema_begin_file(&j, fp, &lb_schema_sim_aim7, &run->rec.host, run->rec.command);
		lb_json_kv_string(&j, "model", "sim");
		lb_json_kv_string(&j, "label", "model prediction");
		lb_simb_machine_json(&j, cfg);
		lb_json_kv_uint(&j, "seed", cfg->seed);
		lb_json_kv_string(&j, "workfile", r->acfg.wf.name);
		lb_json_kv_uint(&j, "window_ns", cfg->window_ns);
		lb_json_kv_uint(&j, "jobs_per_list", r->acfg.jobs);
		lb_json_kv_string(&j, "mutex", r->acfg.ops[0]->name);
		lb_json_kv_string(&j, "spinlock", r->acfg.ops[1]->name);
		lb_json_kv_string(&j, "rwlock", r->acfg.ops[2]->name);
		lb_json_kv_string(&j, "costs", cfg->costs ? cfg->costs : aim_costs_default_path());
		lb_json_kv_string(&j, "costs_kernel", r->costs.host.kernel);
		lb_json_kv_double(&j, "orphan_sleep_p", r->acfg.sizing.orphan_sleep_p);
		lb_json_kv_double(&j, "orphan_sleep_ns", r->acfg.sizing.orphan_sleep_ns);
		lb_json_object_end(&j);
		lb_json_kv_string(&j, "model", "sim");
		lb_json_key(&j, "results");
		lb_json_array_begin(&j);
		for (size_t i = 0; i < r->n; i++)
			point_json(&j, r, i);
		lb_json_array_end(&j);
		lb_schema_write_interrupted(&j, run->rec.interrupted_by);
		lb_json_object_end(&j);
		fputc('\n', fp);
	}
	return r->failed ? 1 : 0;
}
