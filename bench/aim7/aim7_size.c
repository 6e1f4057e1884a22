/* SPDX-License-Identifier: MIT */
/*
 * aim7_size.c - before the load points: size the simulated kernel's work
 * from the cost table (sizing.h), check the result on one child, and say
 * which table was used and how close the per-test shares came.
 */
#include "aim7.h"
#include "lb_wrap.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SIZE_TRIES 5
/* The check's passes: a sized test is 89-100 % burn, which the thread's
 * CPU clock measures without the other load, so two tries report what
 * five did (high_systime at load 10: worst share within 5-6 %, >= 1 %
 * tests within 2-4 % with two; 5-6 % and 2-6 % with five) for 1.1 s of
 * CPU instead of 2.6 s before every run. */
#define CHECK_TRIES 2

/* One child runs every test of the workfile (at least once) per try; per
 * slot the cheapest try's ns per run is kept (a loaded machine only ever
 * adds time). */
static int per_run_ns(struct aim_config *cfg, const struct lb_lock_ops *const *ops,
		      const struct aim_sizing *sz, unsigned int jobs, int tries, double *ns,
		      double *kops)
{
	size_t n = cfg->wf.ntests;
	for (size_t s = 0; s < n; s++)
		ns[s] = -1;
	for (int tr = 0; tr < tries; tr++) {
		struct aim_point *p = calloc(1, sizeof(*p));
		double *cnt = kops ? calloc((size_t)AIM_MAX_WORKFILE_TESTS * AIM_NKOPS, sizeof(double))
				   : NULL;
		int rc = !p || (kops && !cnt) ? ENOMEM
			 : aim_run_point_sized(cfg, ops, 1, jobs, cfg->seed + 31u * (unsigned)tr, sz,
					       cnt, p);
		for (size_t s = 0; rc == 0 && s < n; s++) {
			double runs = p->test_runs[s];
			if (runs <= 0)
				continue;
			double v = p->test_ns[s] / runs;
			if (ns[s] < 0 || v < ns[s])
				ns[s] = v;
			if (kops && tr == 0) /* counts do not depend on timing */
				for (int op = 0; op < AIM_NKOPS; op++)
					kops[s * AIM_NKOPS + op] = cnt[s * AIM_NKOPS + op] / runs;
		}
		free(cnt);
		free(p);
		if (rc)
			return rc;
	}
	for (size_t s = 0; s < n; s++)
		ns[s] = ns[s] < 0 ? 0 : ns[s];
	return 0;
}

int aim_size_kernel(struct aim_config *cfg)
{
	memset(&cfg->sizing, 0, sizeof(cfg->sizing));
	cfg->sizing_share_worst = -1;
	if (!cfg->costs_on)
		return 0;
	const struct lb_lock_ops *ops[AIM_NROLES];
	memcpy(ops, cfg->role_ops, sizeof(ops));
	if (cfg->ab) /* PRE's lock: one child never contends, either would do */
		ops[cfg->ab_role] = cfg->ab_ops[0];
	size_t n = cfg->wf.ntests;
	double *native = calloc(AIM_MAX_WORKFILE_TESTS, sizeof(double));
	double *sized = calloc(AIM_MAX_WORKFILE_TESTS, sizeof(double));
	double *kops = calloc((size_t)AIM_MAX_WORKFILE_TESTS * AIM_NKOPS, sizeof(double));
	int rc = ENOMEM;
	if (!native || !sized || !kops)
		goto out;
	unsigned int jobs = (unsigned int)n;
	if ((rc = per_run_ns(cfg, ops, NULL, jobs, SIZE_TRIES, native, kops)))
		goto out;
	struct aim_sizing *sz = &cfg->sizing;
	sz->loops_per_ns = aim_kwork_calibrate();
	if (aim_sizing_compute(&cfg->wf, &cfg->costs, native, kops, AIM_SIZING_MIN_SHARE, sz)) {
		rc = 0; /* nothing in the workfile passes a kernel op: unsized */
		goto out;
	}
	/* The check: the sized kernel on one child, shares against the table. */
	if ((rc = per_run_ns(cfg, ops, sz, jobs, CHECK_TRIES, sized, NULL)))
		goto out;
	aim_sizing_shares(&cfg->wf, sz, NULL, cfg->sizing_table_share);
	aim_sizing_shares(&cfg->wf, sz, sized, cfg->sizing_sim_share);
	cfg->sizing_share_worst = cfg->sizing_share_worst_big = 0;
	for (size_t s = 0; s < n && s < AIM_SIZING_MAX_TESTS; s++) {
		double t = cfg->sizing_table_share[s];
		double dev = t > 0 ? fabs(cfg->sizing_sim_share[s] / t - 1) : 0;
		if (dev > cfg->sizing_share_worst)
			cfg->sizing_share_worst = dev;
		if (t >= AIM_SIZING_BIG_SHARE && dev > cfg->sizing_share_worst_big)
			cfg->sizing_share_worst_big = dev;
	}
out:
	free(native);
	free(sized);
	free(kops);
	return rc;
}

void aim_print_sizing(FILE *out, const struct aim_config *cfg, bool detail)
{
	const struct aim_costs *c = &cfg->costs;
	char line[2048];
	size_t used;
	if (!cfg->costs_on) {
		lb_wrap(out, "    ", "cost table: none (--costs none or no table found): the kernel's "
			"work is not sized");
		return;
	}
	used = (size_t)snprintf(line, sizeof(line), "cost table: %s (%s %d; kernel %s, %s CPUs, "
				"measured %s, load %s%s%s)", c->path, AIM_COSTS_SCHEMA,
				AIM_COSTS_VERSION, c->host.kernel, c->host.cpus, c->host.date,
				c->host_load, c->host_fs[0] ? ", fs " : "", c->host_fs);
	if (used >= sizeof(line))
		used = sizeof(line) - 1;
	if (!cfg->sizing.on) {
		snprintf(line + used, sizeof(line) - used, "; no test of the workfile has a kernel op: "
			 "not sized");
		lb_wrap(out, "    ", line);
		return;
	}
	snprintf(line + used, sizeof(line) - used, "; scale %.3f of the table's time; per-test "
		 "shares of child time within %.0f%% of the table's (tests with >= %.0f%% of it: "
		 "within %.0f%%; 1 child)", cfg->sizing.scale, 100 * cfg->sizing_share_worst,
		 100 * AIM_SIZING_BIG_SHARE, 100 * cfg->sizing_share_worst_big);
	lb_wrap(out, "    ", line);
	const struct aim_sizing *sz = &cfg->sizing;
	if (sz->orphan_sleep_p > 0)
		snprintf(line, sizeof(line), "sized from %s times; s_orphan_lock section %.0f ns of "
			 "CPU, its owner sleeping %.0f us in %.2f%% of them (the table's journal waits)",
			 sz->from_cpu ? "CPU" : "wall", sz->kwork_ns[AIM_K_ORPHAN],
			 sz->orphan_sleep_ns / 1e3, 100 * sz->orphan_sleep_p);
	else
		snprintf(line, sizeof(line), "sized from %s times%s; s_orphan_lock section %.0f ns, "
			 "its owner never sleeping (%s)", sz->from_cpu ? "CPU" : "wall",
			 sz->from_cpu ? "" : " (the table has no cpu.* lines: recalibrate)",
			 sz->kwork_ns[AIM_K_ORPHAN],
			 c->have_sleep ? "no truncating creat slept when the table was measured"
				       : "the table has no off-CPU figures");
	lb_wrap(out, "    ", line);
	if (!detail)
		return;
	fprintf(out, "  %-14s %10s %10s %8s %11s %11s\n", "test", "native_us", "target_us", "pad",
		"share_sim", "share_table");
	for (size_t s = 0; s < cfg->wf.ntests && s < AIM_SIZING_MAX_TESTS; s++)
		fprintf(out, "  %-14s %10.1f %10.1f %7.0f%% %10.1f%% %10.1f%%\n",
			aim_test_at((size_t)cfg->wf.test[s])->name, cfg->sizing.native_ns[s] / 1e3,
			cfg->sizing.target_ns[s] / 1e3, 100 * cfg->sizing.pad_frac[s],
			100 * cfg->sizing_sim_share[s], 100 * cfg->sizing_table_share[s]);
}
