/* SPDX-License-Identifier: MIT */
/*
 * aim7_main.c - `lockbench aim7`: job sizing, the users sweep with
 * interleaved repeats (and PRE/POST sides with --ab), the table, --explain
 * and the output files.
 */
#include "aim7.h"
#include "lb_wrap.h"
#include "lb_time.h"
#include "workload.h"
#include "lb_progress.h"
#include "lb_paired.h"
#include "lb_stats.h"
#include "lb_steal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* Wall seconds one child spends per job per child running, from a short
 * load point of each side: a load point of U users x J jobs takes about
 * U * J * cost on this machine. */
static int calibrate(const struct aim_config *cfg, unsigned int users, double *cost)
{
	unsigned int cal_users = users < 16 ? users : 16;
	unsigned int jobs = (unsigned int)cfg->wf.ntests;
	*cost = 0;
	for (int side = 0; side < (cfg->ab ? 2 : 1); side++) {
		const struct lb_lock_ops *ops[AIM_NROLES];
		memcpy(ops, cfg->role_ops, sizeof(ops));
		if (cfg->ab)
			ops[cfg->ab_role] = cfg->ab_ops[side];
		struct aim_point p;
		int rc = aim_run_point(cfg, ops, cal_users, jobs, cfg->seed + 977, &p);
		if (rc)
			return rc;
		double c = p.fig.parent_s / ((double)cal_users * p.jobs_per_child);
		*cost = c > *cost ? c : *cost;
	}
	if (*cost < 1e-7) { /* a clock that did not move: never size from 0 */
		*cost = 1e-7;
	}
	return 0;
}

static void explain(FILE *out, const struct aim_point *p, const char *prefix,
		    const struct lb_lock_ops *const *ops)
{
	for (int r = 0; r < AIM_NROLES; r++) {
		const struct aim_role_stats *s = &p->role[r];
		fprintf(out, "%s  %-8s %-16s %12llu acquisitions, %5.1f%% of child time in lock() "
		       "(%.0f ns/acquisition)",
		       prefix, aim_role_name(r), ops[r]->name, (unsigned long long)s->acquires,
		       aim_wait_pct(p, r), s->acquires ? (double)s->wait_ns / (double)s->acquires : 0);
		for (size_t c = 0; c < s->ncounters; c++)
			fprintf(out, "%s %s=%llu", c ? "" : ";", s->counters[c].name,
			       (unsigned long long)s->counters[c].value);
		if (!s->ncounters && !ops[r]->counters)
			fprintf(out, "; no counters");
		fputc('\n', out);
	}
	fprintf(out, "%s  dcache: lock-free lookups, %llu retried (an update ran meanwhile), %llu "
		"done under the update lock\n", prefix, (unsigned long long)p->dcache_retries,
		(unsigned long long)p->dcache_locked);
	fprintf(out, "%s  CPU: children used %.2f s of %.2f s wall x %u children, i.e. %.2f CPUs "
	       "(%.0f jobs per CPU-second); %llu sleeps (voluntary switches), %llu preemptions; "
	       "time in lock() includes being preempted there\n",
	       prefix, p->child_cpu_s, p->fig.parent_s, p->users,
	       p->fig.parent_s > 0 ? p->child_cpu_s / p->fig.parent_s : 0,
	       p->child_cpu_s > 0 ? p->fig.jobs_per_child * p->users / p->child_cpu_s : 0,
	       (unsigned long long)p->vol_csw, (unsigned long long)p->invol_csw);
}

/* One class's gauges, e.g. "s_orphan_lock rho 0.04, hold p50 <= 2 us, ...". */
static void print_class_gauges(FILE *out, const struct aim_point *p, int k)
{
	struct aim_gauges g;
	aim_gauges_compute(&p->cls[k], p->fig.parent_s, &g);
	fprintf(out, "%s rho %.2f, %llu acq, hold p50 <= %.1f us, waiters 0/1/2/3+ "
		"%.0f/%.0f/%.0f/%.0f%%, running 1/2/3+ ", aim_class_name(k), g.rho,
		(unsigned long long)p->cls[k].acquires, g.hold_p50_ns / 1e3,
		100 * g.waiters_share[0], 100 * g.waiters_share[1], 100 * g.waiters_share[2],
		100 * g.waiters_share[3]);
	if (g.have_running)
		fprintf(out, "%.0f/%.0f/%.0f%%", 100 * g.running_share[0], 100 * g.running_share[1],
			100 * g.running_share[2]);
	else
		fprintf(out, "n/a (the lock cannot tell)");
	fprintf(out, ", sleep %.2f%%, spin_won %.2f%%, slow %.1f%%, wait mean %.0f ns p99 %.0f ns",
		100 * g.sleep_frac, 100 * g.spin_won, 100 * g.slow_frac, g.wait_mean_ns,
		g.wait_p99_ns);
}

/* Next to each PRE/POST row: the contended class, the gate and the idle CPUs. */
static void gauge_line(FILE *out, const struct aim_point *p, const char *prefix, int role)
{
	int k = aim_contended_class(role);
	struct aim_gate gate;
	aim_gate_eval(&p->cls[k], p->fig.parent_s, aim_spin_horizon_ns(), &gate);
	fprintf(out, "%s  gauges: ", prefix);
	print_class_gauges(out, p, k);
	if (p->idle_frac >= 0)
		fprintf(out, "; idle CPU %.0f%%", 100 * p->idle_frac);
	fprintf(out, " [mechanism %s: %s]\n",
		!gate.known ? "unknown" : gate.present ? "present" : "absent", gate.why);
}

static void explain_classes(FILE *out, const struct aim_point *p, const char *prefix)
{
	for (int k = 0; k < AIM_NCLASSES; k++) {
		fprintf(out, "%s  class ", prefix);
		print_class_gauges(out, p, k);
		fputc('\n', out);
	}
	if (p->idle_frac >= 0)
		fprintf(out, "%s  machine: %.0f%% of all CPUs idle during the point (/proc/stat)\n",
			prefix, 100 * p->idle_frac);
}

static void summarize_cell(FILE *out, const struct aim_cell *c, const char *prefix)
{
	double v[AIM_MAX_REPEAT], j[AIM_MAX_REPEAT];
	struct lb_summary s, sj;
	for (size_t r = 0; r < c->nruns; r++) {
		v[r] = c->run[r].fig.jobs_per_min;
		j[r] = c->run[r].fig.jti;
	}
	lb_summarize(v, c->nruns, &s);
	lb_summarize(j, c->nruns, &sj);
	fprintf(out, "%s%-5u mean Jobs/min %.2f +- %.2f (CoV %.1f%%, n=%zu), JTI %.1f +- %.1f\n", prefix,
	       c->users, s.mean, s.sd, 100 * s.cov, s.n, sj.mean, sj.sd);
}

static void summarize_ab(FILE *out, const struct aim_cell *pre, const struct aim_cell *post,
			 int role)
{
	double a[AIM_MAX_REPEAT], b[AIM_MAX_REPEAT];
	size_t n = pre->nruns < post->nruns ? pre->nruns : post->nruns;
	for (size_t r = 0; r < n; r++) {
		a[r] = pre->run[r].fig.jobs_per_min;
		b[r] = post->run[r].fig.jobs_per_min;
	}
	struct lb_paired_ratio pr;
	/* The ratio says something about the kernel's mechanism only when the
	 * gate passed in every run of both sides (gauge.c, aim_gate_eval). */
	int k = aim_contended_class(role);
	struct aim_gate gate;
	aim_ab_gate(pre, post, role, &gate);
	fprintf(out, "POST/PRE Jobs/min at %u users: ", pre->users);
	if (n > 0 && !gate.known)
		fprintf(out, "kernel mechanism unknown (%s: %s): no verdict; measured ",
			aim_class_name(k), gate.why);
	else if (n > 0 && !gate.present)
		fprintf(out, "kernel mechanism absent (%s: %s): ratio not comparable to the kernel's; "
			"measured ", aim_class_name(k), gate.why);
	bool verdict = n > 0 && gate.known && gate.present;
	if (lb_paired_ratio(a, b, n, 0.95, &pr) != 0)
		fprintf(out, "no ratio (a side did no work)");
	else if (pr.n < 2)
		fprintf(out, "%.2fx (%s)", pr.geomean, verdict ? aim_paired_verdict(&pr) : "no verdict");
	else
		fprintf(out, "%.2fx, 95%% interval %.2f-%.2fx, pair-ratio CoV %.1f%%, n=%zu ABBA pairs: %s",
			pr.geomean, pr.lo, pr.hi, pr.cov_pct, pr.n,
			verdict ? aim_paired_verdict(&pr) : "no verdict");
	fprintf(out, "  [PRE %s, POST %s]\n", pre->role_ops[role]->name, post->role_ops[role]->name);
}

/* A fixed-window point: what re-aim's console line holds, and what it
 * does not (jobs completed, CPUs busy, progress per second). */
static void window_line(FILE *out, const struct aim_point *p, const char *prefix)
{
	fprintf(out, "%s  window: %u children x %.2f s alarm: child CPU sys %.2f s user %.2f s "
		"(getrusage per thread); in system tests %.2f s, in user tests %.2f s; CPUs busy "
		"%.2f; jobs completed %llu (list of %u per child), cut by the alarm %llu (last "
		"child out %.3f s after its alarm); progress %.1f jobs/s\n", prefix,
		p->users, p->window_s, p->fig.child_sys_s, p->fig.child_user_s, p->sys_tests_cpu_s,
		p->user_tests_cpu_s, aim_cpus_busy(p), (unsigned long long)p->jobs_done,
		p->jobs_per_child, (unsigned long long)p->jobs_cut,
		p->fig.max_child_s - p->window_s, aim_progress_per_s(p));
}

/* POST/PRE of a fixed-window figure, through the gate (ab_gate.c). */
static void window_ratio(FILE *out, const struct aim_cell *pre, const struct aim_cell *post,
			 int role, const char *what, double (*fig)(const struct aim_point *))
{
	char line[1024];
	aim_window_ratio_line(line, sizeof(line), pre, post, role, what, fig);
	fputs(line, out);
}

/* re-aim's console table for every run of the sweep, beside the log table
 * above: the shape of the seed thread's PRE/POST lines. */
static void print_console(FILE *out, const struct aim_config *cfg, const struct aim_cell *cells)
{
	int nsides = cfg->ab ? 2 : 1;
	fputc('\n', out);
	aim_console_header(out);
	for (size_t pi = 0; pi < cfg->npoints; pi++)
		for (int side = 0; side < nsides; side++) {
			const struct aim_cell *c = &cells[pi * (size_t)nsides + (size_t)side];
			for (size_t r = 0; r < c->nruns; r++) {
				char row[256];
				aim_console_row(row, sizeof(row), &c->run[r].fig);
				fprintf(out, "%s%s", !cfg->ab ? "" : side ? "POST: " : "PRE: ", row);
			}
		}
}

/* What the run stage hands the report stage: the cells, and the sized
 * copy of the config the run used (the kernel's sizing is found while
 * running; the config itself stays as asked). */
struct aim7_results {
	struct aim_config sized;
	struct aim_cell *cells;
	size_t ncells;
	struct aim_costs *costs; /* --calibrate: the measured table */
};

/* The sweep: every load point, its repeats (and sides), the table rows as
 * they finish.  0, 1 for a failed invariant, or an errno value. */
static int run_points(struct aim_config *cfg, FILE *out, FILE *csv, struct aim_cell *cells,
		      struct lb_progress *pg)
{
	int rc = 0;
	int nsides = cfg->ab ? 2 : 1;
	double max_jpm[2] = { 0, 0 };
	for (size_t pi = 0; pi < cfg->npoints && rc == 0; pi++) {
		unsigned int users = cfg->users[pi];
		unsigned int jobs = cfg->jobs;
		if (!jobs && cfg->window_ns)
			jobs = AIM_WINDOW_DEFAULT_JOBS;
		if (!jobs) {
			double cost;
			lb_progress_step(pg, "%u users: calibrating", users);
			rc = calibrate(cfg, users, &cost);
			if (rc)
				break;
			/* 0.7: leave room for contention beyond the calibration's. */
			double j = 0.7 * ((double)cfg->time_ns / LB_NS_PER_S) / (cost * users);
			jobs = j < 1 ? 1 : j > 1e6 ? 1000000 : (unsigned int)j;
		}
		for (unsigned int r = 0; r < cfg->repeat && rc == 0; r++)
			for (int k = 0; k < nsides && rc == 0; k++) {
				/* ABBA: odd repeats run POST first (gauge.c). */
				int side = nsides > 1 ? (k + aim_ab_first_side(r)) % 2 : k;
				struct aim_cell *c = &cells[pi * (size_t)nsides + (size_t)side];
				c->users = users;
				c->side = cfg->ab ? side : -1;
				memcpy(c->role_ops, cfg->role_ops, sizeof(c->role_ops));
				if (cfg->ab)
					c->role_ops[cfg->ab_role] = cfg->ab_ops[side];
				lb_progress_step(pg, "%u users%s, run %u/%u", users,
						 cfg->ab ? (side ? " POST" : " PRE") : "", r + 1,
						 cfg->repeat);
				struct aim_point *p = &c->run[c->nruns];
				rc = cfg->window_ns
					     ? aim_run_point_window(cfg, c->role_ops, users, jobs,
								    cfg->seed + 7919u * r,
								    cfg->window_ns, p)
					     : aim_run_point(cfg, c->role_ops, users, jobs,
							     cfg->seed + 7919u * r, p);
				if (rc)
					break;
				p->side = c->side;
				p->repeat_index = r;
				c->nruns++;
				lb_progress_clear(pg);
				const char *prefix = !cfg->ab ? "" : side ? "POST: " : "PRE:  ";
				aim_print_row(out, prefix, &p->fig);
				if (cfg->window_ns)
					window_line(out, p, prefix);
				if (cfg->ab)
					gauge_line(out, p, prefix, cfg->ab_role);
				if (cfg->explain) {
					explain(out, p, prefix, c->role_ops);
					explain_classes(out, p, prefix);
				}
				if (csv)
					aim_csv_row(csv, &p->fig);
				int m = side > 0;
				max_jpm[m] = p->fig.jobs_per_min > max_jpm[m] ? p->fig.jobs_per_min
									      : max_jpm[m];
				fflush(out);
				lb_progress_step_done(pg);
			}
		if (rc)
			break;
		struct aim_cell *c0 = &cells[pi * (size_t)nsides];
		if (cfg->repeat > 1)
			for (int side = 0; side < nsides; side++)
				summarize_cell(out, &c0[side], !cfg->ab ? "" : side ? "POST: " : "PRE:  ");
		if (cfg->ab) {
			summarize_ab(out, &c0[0], &c0[1], cfg->ab_role);
			if (cfg->window_ns) {
				window_ratio(out, &c0[0], &c0[1], cfg->ab_role, "CPUs busy",
					     aim_cpus_busy);
				window_ratio(out, &c0[0], &c0[1], cfg->ab_role, "progress/s",
					     aim_progress_per_s);
			}
		}
	}
	if (rc == 0) {
		if (cfg->ab) {
			fprintf(out, "PRE:  Max Jobs per Minute %.2f\n", max_jpm[0]);
			fprintf(out, "POST: Max Jobs per Minute %.2f\n", max_jpm[1]);
		} else {
			fprintf(out, "Max Jobs per Minute %.2f\n", max_jpm[0]);
		}
		print_console(out, cfg, cells);
	}
	return rc;
}

static void aim7_parse(int argc, char **argv, void *cfg)
{
	aim_parse(argc, argv, cfg);
}

static void aim7_outputs(const void *cfg_, struct lb_output_request req[LB_WORKLOAD_MAX_OUTPUTS])
{
	const struct aim_config *cfg = cfg_;
	if (cfg->calibrate_path) {
		req[0] = (struct lb_output_request){ "--calibrate", cfg->calibrate_path };
		return;
	}
	req[0] = (struct lb_output_request){ "--json", cfg->json_path };
	req[1] = (struct lb_output_request){ "--csv", cfg->csv_path };
}

/* --calibrate FILE: measure the real system calls behind the tests. */
static int calibrate_costs(struct aim7_results *res)
{
	char err[512];
	res->costs = calloc(1, sizeof(*res->costs));
	if (!res->costs)
		return 1;
	const char *tmp = getenv("TMPDIR");
	if (aim_costs_measure(res->costs, tmp && *tmp ? tmp : "/tmp", 2.5, err, sizeof(err))) {
		fprintf(stderr, "lockbench aim7: --calibrate: %s\n", err);
		return 1;
	}
	return 0;
}

static void print_start(FILE *out, const struct aim_config *cfg)
{
	char ab[256] = "";
	if (cfg->ab)
		snprintf(ab, sizeof(ab), "; A/B on %s: PRE=%s POST=%s", aim_role_name(cfg->ab_role),
			 cfg->ab_ops[0]->name, cfg->ab_ops[1]->name);
	lb_wrapf(out, "    ", "lockbench aim7: workfile %s (%zu tests, %lu hits), locks: mutex=%s "
		 "spinlock=%s rwlock=%s%s", cfg->wf.name, cfg->wf.ntests, cfg->wf.total_hits,
		 cfg->role_ops[0]->name, cfg->role_ops[1]->name, cfg->role_ops[2]->name, ab);
	aim_print_sizing(out, cfg, cfg->explain);
	aim_print_header(out);
}

static int aim7_run(struct lb_run *run)
{
	const struct aim_config *cfg = run->cfg;
	struct aim7_results *res = calloc(1, sizeof(*res));
	run->results = res;
	if (!res)
		return 1;
	if (cfg->calibrate_path)
		return calibrate_costs(res);
	res->sized = *cfg;
	struct aim_config *sized = &res->sized;
	res->ncells = sized->npoints * (size_t)(sized->ab ? 2 : 1);
	res->cells = calloc(res->ncells, sizeof(*res->cells));
	if (!res->cells) {
		fprintf(stderr, "lockbench aim7: out of memory\n");
		return 1;
	}
	if (aim_size_kernel(sized)) {
		fprintf(stderr, "lockbench aim7: sizing the kernel from the cost table failed\n");
		return 1;
	}
	print_start(run->out, sized);
	FILE *csv = run->file[1].fp;
	if (csv)
		aim_csv_header(csv);
	fflush(run->out);
	struct lb_progress pg;
	/* Each run takes about the window, or is sized to take about --time
	 * (when the jobs come from it). */
	unsigned int nrun = (unsigned int)(sized->npoints * sized->repeat * (sized->ab ? 2u : 1u));
	uint64_t each_ns = sized->window_ns ? sized->window_ns : sized->jobs ? 0 : sized->time_ns;
	lb_progress_begin(&pg, stderr, sized->quiet, nrun, nrun * each_ns, -1);
	int rc = run_points(sized, run->out, csv, res->cells, &pg);
	lb_progress_end(&pg);
	if (rc > 1) /* a setup failure (errno value) */
		fprintf(stderr, "lockbench aim7: cannot run: %s\n", strerror(rc));
	return rc ? 1 : 0;
}

static int aim7_report(struct lb_run *run)
{
	const struct aim_config *cfg = run->cfg;
	struct aim7_results *res = run->results;
	if (cfg->calibrate_path) {
		aim_costs_write(run->file[0].fp, res->costs);
		return 0;
	}
	lb_steal_note(run->out, "# ", run->rec.steal_s);
	if (run->file[0].fp)
		aim_write_json(run->file[0].fp, &res->sized, &run->rec, res->cells, res->ncells);
	return 0;
}

static void aim7_release(struct lb_run *run)
{
	struct aim7_results *res = run->results;
	free(res->cells);
	free(res->costs);
}

const struct lb_workload lb_workload_aim7 = {
	.name = "aim7",
	.summary = "AIM7/re-aim work-alike: jobs/min of a simulated kernel on the locks",
	.signals = LB_SIGNALS_END, /* a cut load point is worth nothing: temporaries removed */
	LB_WORKLOAD_PARTS(aim7, struct aim_config),
	.release = aim7_release,
};
