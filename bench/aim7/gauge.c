/* SPDX-License-Identifier: MIT */
/*
 * gauge.c - mechanism gauges of a lock class over one load point: does the
 * lock that the kernel's result is about behave here as it did there?
 *
 *   rho         held time / wall time (exclusive holds; for a class of many
 *               locks the sum of their utilisations).  Below
 *               AIM_RHO_CONTENDED the lockers mostly find the lock free:
 *               no spinner meets a running owner, no queue forms, and a
 *               PRE/POST of the lock cannot show the kernel's mechanism.
 *   slow_frac   acquisitions that waited over AIM_SLOW_WAIT_NS in lock()
 *   sleep_frac  the lock's sleeps per acquisition (its own counters)
 *   spin_won    the lock's spin wins per acquisition (its own counters)
 *   wait mean and p99 (log2 histogram: p99 is its bucket's upper edge)
 *   hold p50    median exclusive hold in wall ns (aim7's wrapper times
 *               each hold from acquisition to unlock with the cycle
 *               counter: wall time, preemption and sleeps included, which
 *               is what a spinner waits through), its bucket's upper edge
 *   waiters     others inside lock() at each acquisition: 0, 1, 2, 3+
 *   running     the lock's own acq_running_1/2/3plus counters, when it
 *               reports them: contended acquisitions by running contenders
 *               (the acquirer plus the threads spinning then)
 *   idle        the machine's idle CPU fraction during the point
 *               (/proc/stat: idle + iowait over all jiffies)
 *
 * And the A/B of `--ab` as a paired experiment.  Repeat r runs PRE then
 * POST when r is even and POST then PRE when it is odd (ABBA), so a drift
 * of the machine (load, frequency, caches warming) falls on both sides
 * alike.  Each repeat is one pair; the figure is lb_paired_ratio's
 * geometric mean of the pair ratios POST/PRE with its 95 % t interval on
 * the log ratios (lib/lb_paired.h).  Verdict: the interval above 1, POST is
 * faster; below 1, slower; across 1, no difference shown.  One pair gives
 * the ratio and no interval.
 */
#include "aim7.h"
#include "lb_paired.h"
#include "lb_stats.h"

#include <lockbench/mutex.h> /* LB_MUTEX_SPIN_NS: the spin horizon */

#include <stdio.h>
#include <string.h>

double aim_rho(uint64_t held_ns, double wall_s)
{
	return wall_s > 0 ? ((double)held_ns / 1e9) / wall_s : 0;
}

bool aim_mechanism_present(double rho)
{
	return rho >= AIM_RHO_CONTENDED;
}

int aim_contended_class(int role)
{
	/* The mutex role: ext4's s_orphan_lock, the lock the seed thread's
	 * second tester names as the contended one. */
	return role == AIM_ROLE_SPIN ? AIM_CLASS_SPIN : role == AIM_ROLE_RW ? AIM_CLASS_RW
									     : AIM_CLASS_ORPHAN;
}

const char *aim_paired_verdict(const struct lb_paired_ratio *r)
{
	if (r->n < 2)
		return "one pair: no interval";
	return r->lo > 1 ? "POST faster" : r->hi < 1 ? "POST slower" : "no difference shown";
}

int aim_ab_first_side(unsigned int repeat_index)
{
	return (int)(repeat_index & 1u); /* even: PRE first; odd: POST first */
}

static uint64_t counter(const struct aim_class_stats *s, const char *name)
{
	for (size_t i = 0; i < s->ncounters; i++)
		if (strcmp(s->counters[i].name, name) == 0)
			return s->counters[i].value;
	return 0;
}

static bool has_counter(const struct aim_class_stats *s, const char *name)
{
	for (size_t i = 0; i < s->ncounters; i++)
		if (strcmp(s->counters[i].name, name) == 0)
			return true;
	return false;
}

/* Upper edge of the log2 bucket holding quantile q; 0 when empty. */
static double bucket_quantile(const uint64_t *hist, double q)
{
	long b = lb_bins_quantile(hist, AIM_WAIT_BUCKETS, q);
	return b < 0 ? 0 : (double)(2ull << b);
}

static void running_gauge(const struct aim_class_stats *s, struct aim_gauges *g)
{
	static const char *const names[3] = { "acq_running_1", "acq_running_2",
					      "acq_running_3plus" };
	g->have_running = true;
	for (int i = 0; i < 3; i++)
		g->have_running &= has_counter(s, names[i]);
	if (!g->have_running)
		return;
	double n = 0, v[3];
	for (int i = 0; i < 3; i++)
		n += v[i] = (double)counter(s, names[i]);
	for (int i = 0; i < 3; i++)
		g->running_share[i] = n > 0 ? v[i] / n : 0;
}

void aim_gauges_compute(const struct aim_class_stats *s, double wall_s, struct aim_gauges *g)
{
	memset(g, 0, sizeof(*g));
	g->rho = aim_rho(s->held_ns, wall_s);
	running_gauge(s, g);
	if (s->acquires == 0)
		return;
	g->hold_p50_ns = bucket_quantile(s->hold_hist, 0.5);
	uint64_t nw = 0;
	for (int b = 0; b < AIM_WAITERS_BINS; b++)
		nw += s->waiters_hist[b];
	for (int b = 0; b < AIM_WAITERS_BINS; b++)
		g->waiters_share[b] = nw ? (double)s->waiters_hist[b] / (double)nw : 0;
	double n = (double)s->acquires;
	g->slow_frac = (double)s->slow / n;
	g->sleep_frac = (double)counter(s, "sleeps") / n;
	g->spin_won = (double)counter(s, "spin_won") / n;
	g->wait_mean_ns = (double)s->wait_ns / n;
	long b = lb_bins_quantile(s->wait_hist, AIM_WAIT_BUCKETS, 0.99);
	g->wait_p99_ns = b < 0 ? 0 : (double)(2ull << b); /* upper edge of [2^b, 2^(b+1)) */
}

void aim_cpu_sample(struct aim_cpu_sample *s)
{
	memset(s, 0, sizeof(*s));
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return;
	unsigned long long v[8] = { 0 };
	/* "cpu  user nice system idle iowait irq softirq steal ..." */
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) == 8) {
		s->idle = v[3] + v[4];
		for (int i = 0; i < 8; i++)
			s->total += v[i];
		s->ok = true;
	}
	fclose(f);
}

double aim_idle_fraction(const struct aim_cpu_sample *a, const struct aim_cpu_sample *b)
{
	if (!a->ok || !b->ok || b->total <= a->total || b->idle < a->idle)
		return -1;
	return (double)(b->idle - a->idle) / (double)(b->total - a->total);
}

double aim_spin_horizon_ns(void)
{
	return (double)LB_MUTEX_SPIN_NS;
}

void aim_gate_eval(const struct aim_class_stats *s, double wall_s, double horizon_ns,
		   struct aim_gate *g)
{
	struct aim_gauges ga;
	aim_gauges_compute(s, wall_s, &ga);
	memset(g, 0, sizeof(*g));
	g->known = true;
	if (ga.rho < AIM_RHO_CONTENDED) {
		snprintf(g->why, sizeof(g->why), "rho %.2f < %.1f", ga.rho, AIM_RHO_CONTENDED);
		return;
	}
	if (ga.hold_p50_ns > horizon_ns) {
		snprintf(g->why, sizeof(g->why), "median hold <= %.0f us > spin horizon %.0f us: a "
			 "spinner waits longer than a sleep costs", ga.hold_p50_ns / 1e3,
			 horizon_ns / 1e3);
		return;
	}
	if (!ga.have_running) {
		g->known = false;
		snprintf(g->why, sizeof(g->why), "running contenders n/a: the lock does not report "
			 "acq_running_*; verdict withheld");
		return;
	}
	double two_plus = ga.running_share[1] + ga.running_share[2];
	if (two_plus < 0.5) {
		snprintf(g->why, sizeof(g->why), "median running contenders < 2 (%.0f%% of contended "
			 "acquisitions had >= 2)", 100 * two_plus);
		return;
	}
	g->present = true;
	snprintf(g->why, sizeof(g->why), "rho %.2f, median hold <= %.1f us < %.0f us, %.0f%% "
		 "with >= 2 running", ga.rho, ga.hold_p50_ns / 1e3, horizon_ns / 1e3, 100 * two_plus);
}
