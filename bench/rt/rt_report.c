/* SPDX-License-Identifier: MIT */
/*
 * rt_report.c - what `lockbench rt` prints and writes: the header, the
 * hackbench, cyclictest and perf-stat lines in those tools' formats, the
 * --compare table with its verdicts, and the JSON (lib/lb_schema.h) and CSV
 * files.
 */
#include "rt.h"
#include "lb_time.h"
#include "lb_hostinfo.h"
#include "lb_json.h"
#include "lb_schema.h"
#include "lb_steal.h"
#include "lb_wrap.h"
#include "lb_sched_hooks.h" /* LB_SCHED_PREEMPT_GAP_NS: the running gauge's hold age */
#include "rt_skb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum rt_metric {
	M_ELAPSED, M_TASK_CLOCK, M_CTX, M_MIGR, M_FAULTS, M_WAKE_MIN, M_WAKE_AVG, M_WAKE_MAX,
	M_ALLOC_AVG, M_ALLOC_P99, M_ALLOC_MAX, M_HOLD_MAX, M_LOCK_ACQ, M_BUDGET, M_WAKE_P99,
	M_WAKE_P999, M_LOCK_PER_1K, M_RAW_COST, M_RAW_WAIT_MAX, M_LL_UTIL, M_LL_CONTENDED,
	M_LL_WAIT, M_LL_PER_MSG, M_LL_CONTENDERS, M_LL_RUN2, M_LL_RUN2_HI, M_LL_OWNER_OFF, M_COUNT
};

static const struct lb_metric_desc rt_metrics[M_COUNT] = {
	[M_ELAPSED] = { "elapsed_s", "s", LB_BETTER_LOWER, "hackbench time" },
	[M_TASK_CLOCK] = { "task_clock_ms", "ms", LB_BETTER_LOWER, "task-clock" },
	[M_CTX] = { "context_switches", "", LB_BETTER_NONE, "context-switches" },
	[M_MIGR] = { "cpu_migrations", "", LB_BETTER_NONE, "cpu-migrations" },
	[M_FAULTS] = { "page_faults", "", LB_BETTER_NONE, "page-faults" },
	[M_WAKE_MIN] = { "rt_wake_min_us", "us", LB_BETTER_LOWER, "RT wake-up latency min" },
	[M_WAKE_AVG] = { "rt_wake_avg_us", "us", LB_BETTER_LOWER, "RT wake-up latency avg" },
	[M_WAKE_MAX] = { "rt_wake_max_us", "us", LB_BETTER_LOWER, "RT wake-up latency max" },
	[M_ALLOC_AVG] = { "rt_alloc_avg_us", "us", LB_BETTER_LOWER, "RT alloc+free latency avg" },
	[M_ALLOC_P99] = { "rt_alloc_p99_us", "us", LB_BETTER_LOWER, "RT alloc+free latency p99" },
	[M_ALLOC_MAX] = { "rt_alloc_max_us", "us", LB_BETTER_LOWER, "RT alloc+free latency max" },
	[M_HOLD_MAX] = { "list_lock_hold_max_us", "us", LB_BETTER_LOWER, "longest list_lock hold" },
	[M_LOCK_ACQ] = { "list_lock_acquires", "", LB_BETTER_NONE, "list_lock acquisitions" },
	[M_BUDGET] = { "rt_spin_budget_exhausted", "", LB_BETTER_NONE,
		       "RT waits that outlived the spin budget" },
	[M_WAKE_P99] = { "rt_wake_p99_us", "us", LB_BETTER_LOWER, "RT wake-up latency p99" },
	[M_WAKE_P999] = { "rt_wake_p999_us", "us", LB_BETTER_LOWER, "RT wake-up latency p99.9" },
	[M_LOCK_PER_1K] = { "list_lock_per_1000_allocs", "", LB_BETTER_NONE,
			    "list_lock acquisitions per 1000 allocations" },
	[M_RAW_COST] = { "raw_emulation_ns_per_section", "ns", LB_BETTER_NONE,
			 "raw-section emulation cost per section (alone, median)" },
	[M_RAW_WAIT_MAX] = { "rt_raw_wait_max_us", "us", LB_BETTER_LOWER,
			     "longest RT start delayed by a raw section" },
	[M_LL_UTIL] = { "list_lock_utilisation", "", LB_BETTER_NONE,
			"list_lock utilisation (time held / hackbench time)" },
	[M_LL_CONTENDED] = { "list_lock_contended_pct", "%", LB_BETTER_NONE,
			     "list_lock acquisitions that found it taken" },
	[M_LL_WAIT] = { "list_lock_contended_wait_us", "us", LB_BETTER_LOWER,
			"list_lock mean wait of a contended acquisition" },
	[M_LL_PER_MSG] = { "list_lock_per_message", "", LB_BETTER_NONE,
			   "list_lock acquisitions per message (both caches)" },
	[M_LL_CONTENDERS] = { "list_lock_contenders_mean", "", LB_BETTER_NONE,
			      "contenders at a list_lock acquisition (holder + waiters)" },
	[M_LL_RUN2] = { "list_lock_running2plus_pct", "%", LB_BETTER_NONE,
			"attempts that found list_lock taken with >= 2 running contenders "
			"(waiters that may sleep counted asleep)" },
	[M_LL_RUN2_HI] = { "list_lock_running2plus_hi_pct", "%", LB_BETTER_NONE,
			   "the same with waiters that may sleep counted running" },
	[M_LL_OWNER_OFF] = { "list_lock_owner_offcpu_pct", "%", LB_BETTER_NONE,
			     "attempts that found list_lock taken by an owner off its CPU" },
};

static const char *const rt_params[] = { "list_lock", "groups", "fds", "loops", "size", "ipc",
					 "rt_threads", "rt_prio", "interval_us", "rt_alloc",
					 NULL };

static const char *const rt_plot_curves[] = { "rt_wake_max_us", "rt_wake_avg_us",
					      "rt_alloc_p99_us", "elapsed_s", NULL };
/* One cell per list lock: bars, and cyclictest-like histograms (--histogram). */
static const struct lb_plot_hints rt_plot = {
	.x_param = "groups",
	.curves = rt_plot_curves,
	.hist_key = "rt_threads",
	.hist_unit = "us",
};

const struct lb_workload_schema lb_schema_rt = {
	LB_SCHEMA_TABLES("lockbench-rt", 1, rt_params, rt_metrics),
	.plot = &rt_plot,
};

/* ---- per-run figures ------------------------------------------------- */

/* Over every RT thread of one run (or merged set): NAN when there are none. */
static double rt_agg(const struct lb_rt_thread_stats *rt, unsigned int nrt, enum rt_metric m)
{
	double v = NAN, sum = 0;
	uint64_t n = 0;
	struct lb_hist all;
	if (m == M_ALLOC_P99 || m == M_WAKE_P99 || m == M_WAKE_P999)
		lb_hist_init(&all);
	for (unsigned int i = 0; i < nrt; i++) {
		const struct lb_rt_thread_stats *s = &rt[i];
		switch (m) {
		case M_WAKE_MIN:
			if (s->cycles && (isnan(v) || s->wake_min_us < v))
				v = (double)s->wake_min_us;
			break;
		case M_WAKE_MAX:
			if (s->cycles && (isnan(v) || s->wake_max_us > v))
				v = (double)s->wake_max_us;
			break;
		case M_WAKE_AVG:
			sum += s->wake_sum_us;
			n += s->cycles;
			break;
		case M_ALLOC_AVG:
			sum += s->alloc_sum_us;
			n += s->alloc_n;
			break;
		case M_ALLOC_MAX:
			if (s->alloc_n && (isnan(v) || s->alloc_max_us > v))
				v = s->alloc_max_us;
			break;
		case M_ALLOC_P99:
			if (s->alloc_hist)
				lb_hist_merge(&all, s->alloc_hist);
			break;
		case M_WAKE_P99:
		case M_WAKE_P999:
			if (s->wake_hist)
				lb_hist_merge(&all, s->wake_hist);
			break;
		default:
			break;
		}
	}
	if (m == M_WAKE_AVG || m == M_ALLOC_AVG)
		v = n ? sum / (double)n : NAN;
	if (m == M_ALLOC_P99 || m == M_WAKE_P99 || m == M_WAKE_P999)
		v = all.count ? (double)lb_hist_quantile(&all, m == M_WAKE_P999 ? 0.999 : 0.99) / 1e3
			      : NAN;
	return v;
}

/* Attempts that found list_lock taken, as the running gauge binned them. */
static uint64_t running_attempts(const struct lb_rt_run *r)
{
	return r->running_lo[0] + r->running_lo[1] + r->running_lo[2];
}

/* Percent of those with >= 2 running contenders (hi: may-sleep waiters
 * counted running); NAN when none was gauged. */
static double running_two_plus_pct(const struct lb_rt_run *r, bool hi)
{
	const uint64_t *b = hi ? r->running_hi : r->running_lo;
	uint64_t n = running_attempts(r);
	return r->lock_gauged && n ? 100.0 * (double)(b[1] + b[2]) / (double)n : NAN;
}

static double metric(const struct lb_rt_run *r, enum rt_metric m)
{
	switch (m) {
	case M_ELAPSED: return r->elapsed_s;
	case M_TASK_CLOCK: return r->task_clock_ms >= 0 ? r->task_clock_ms : NAN;
	case M_CTX: return r->context_switches >= 0 ? (double)r->context_switches : NAN;
	case M_MIGR: return r->cpu_migrations >= 0 ? (double)r->cpu_migrations : NAN;
	case M_FAULTS: return r->page_faults >= 0 ? (double)r->page_faults : NAN;
	case M_HOLD_MAX: return r->max_hold_us;
	case M_LOCK_ACQ: return (double)r->lock_acquires;
	case M_BUDGET: return (double)r->budget_exhausted;
	case M_LOCK_PER_1K:
		return r->allocs ? 1000.0 * (double)r->lock_acquires / (double)r->allocs : NAN;
	case M_RAW_COST: return r->raw_on ? r->raw_cost_alone_ns : NAN;
	case M_RAW_WAIT_MAX: return r->raw_on ? r->raw_rt_wait_max_us : NAN;
	case M_LL_UTIL: return r->elapsed_s > 0 ? r->hold_sum_s / r->elapsed_s : NAN;
	case M_LL_CONTENDED:
		return r->lock_gauged && r->lock_acquires
			       ? 100.0 * (double)r->lock_contended / (double)r->lock_acquires
			       : NAN;
	case M_LL_WAIT: return r->lock_gauged && r->lock_contended ? r->contended_wait_us : NAN;
	case M_LL_PER_MSG: return r->messages ? (double)r->lock_acquires / (double)r->messages : NAN;
	case M_LL_CONTENDERS: return r->lock_acquires ? r->contenders_mean : NAN;
	case M_LL_RUN2: return running_two_plus_pct(r, false);
	case M_LL_RUN2_HI: return running_two_plus_pct(r, true);
	case M_LL_OWNER_OFF:
		return r->lock_gauged && running_attempts(r)
			       ? 100.0 * (double)(r->owner_off_announced + r->owner_off_held) /
					 (double)running_attempts(r)
			       : NAN;
	default: return rt_agg(r->rt, r->nrt, m);
	}
}

/*
 * The samples of lock l with every lock given the same count: for each
 * repeat and RT thread, the first k samples, k the smallest count any lock
 * kept there.  Into h (ns); returns the number of samples.
 */
static uint64_t equal_hist(struct lb_rt_run *const *runs_by_lock, size_t nlocks, size_t nrepeat,
			   unsigned int nrt, size_t l, bool wake, struct lb_hist *h)
{
	uint64_t total = 0;
	lb_hist_init(h);
	for (size_t r = 0; r < nrepeat; r++) {
		for (unsigned int i = 0; i < nrt; i++) {
			uint32_t k = UINT32_MAX;
			for (size_t o = 0; o < nlocks; o++) {
				const struct lb_rt_thread_stats *s = &runs_by_lock[o][r].rt[i];
				uint32_t n = wake ? s->nwake_kept : s->nalloc_kept;
				if (runs_by_lock[o][r].nrt <= i)
					n = 0;
				k = n < k ? n : k;
			}
			if (k == UINT32_MAX || runs_by_lock[l][r].nrt <= i)
				continue;
			const struct lb_rt_thread_stats *s = &runs_by_lock[l][r].rt[i];
			const uint32_t *v = wake ? s->wake_samples : s->alloc_samples;
			for (uint32_t j = 0; v && j < k; j++)
				lb_hist_record(h, v[j]);
			total += v ? k : 0;
		}
	}
	return total;
}

/* ---- is the kernel's mechanism there (doc/rt.md) ---------------------- */

static double mean_sem(const struct lb_rt_run *runs, size_t n, enum rt_metric m, double *sem);

/*
 * The kernel experiment's elapsed gap came from CPUs left idle: with the PI
 * list_lock hackbench did less CPU work (task-clock x0.93) but kept 5.88 of 8
 * CPUs busy against 7.58, since its waiters slept.  elapsed ~ work / CPUs
 * utilized, so a gap splits into a CPU-work factor and an idle factor; the
 * mechanism is present when the idle factor carries at least this share of
 * the gap (on a log scale, so the split adds up).
 */
#define RT_IDLE_SHARE_MIN 0.5

struct elapsed_split {
	bool gauged;           /* task-clock counted on both sides */
	double ratio;          /* elapsed, this lock over the first */
	double work, idle;     /* task-clock ratio; CPUs utilized, first over this */
	double util_first, util_this;
	double idle_share;     /* ln(idle) / ln(ratio) */
};

/* perf's "CPUs utilized": mean task-clock over the counters' mean window
 * (the perf block prints this, and the split uses the same figure). */
static double cpus_utilized(const struct lb_rt_run *runs, size_t n)
{
	double tc = mean_sem(runs, n, M_TASK_CLOCK, NULL), win = 0;
	for (size_t i = 0; i < n; i++)
		win += runs[i].perf_window_s / (double)n;
	return !isnan(tc) && win > 0 ? tc / 1e3 / win : NAN;
}

static void split_elapsed(const struct lb_rt_run *first, const struct lb_rt_run *runs, size_t n,
			  struct elapsed_split *sp)
{
	double el0 = mean_sem(first, n, M_ELAPSED, NULL), el = mean_sem(runs, n, M_ELAPSED, NULL);
	double tc0 = mean_sem(first, n, M_TASK_CLOCK, NULL), tc = mean_sem(runs, n, M_TASK_CLOCK, NULL);
	sp->util_first = cpus_utilized(first, n);
	sp->util_this = cpus_utilized(runs, n);
	sp->ratio = el0 > 0 ? el / el0 : NAN;
	sp->gauged = !isnan(tc0) && !isnan(tc) && tc0 > 0 && !isnan(sp->util_first) &&
		     !isnan(sp->util_this) && sp->util_this > 0;
	sp->work = sp->gauged ? tc / tc0 : NAN;
	sp->idle = sp->gauged ? sp->util_first / sp->util_this : NAN;
	sp->idle_share = sp->gauged && sp->ratio > 0 && sp->ratio != 1
				 ? log(sp->idle) / log(sp->ratio) : NAN;
}

static bool elapsed_mechanism(const struct elapsed_split *sp)
{
	return sp->gauged && !isnan(sp->idle_share) && sp->idle_share >= RT_IDLE_SHARE_MIN;
}

/*
 * The kernel's mechanism also needs list_lock contention that meets
 * running contenders: a waiter that spins (raw) or would spin (PI) beside
 * an owner on its CPU, i.e. >= 2 running contenders at an attempt that
 * found the lock taken.  As aim7's gate: the median such attempt has >= 2
 * (this share of them), on the side with more.
 */
#define RT_RUNNING_SHARE_MIN 0.5

enum running_gate { RUN_NOT_GAUGED, RUN_ABSENT, RUN_UNKNOWN, RUN_PRESENT };

struct running_split {
	double lo[2], hi[2]; /* share with >= 2: the first lock, this one */
	enum running_gate gate;
	int side;            /* 0 the first lock, 1 this one: the side with more */
};

/* Over a lock's runs: the share of the attempts that found list_lock
 * taken with >= 2 running contenders (hi: may-sleep waiters running). */
static void running_share(const struct lb_rt_run *runs, size_t n, double *lo, double *hi)
{
	uint64_t all = 0, two = 0, two_hi = 0;
	for (size_t r = 0; r < n; r++) {
		if (!runs[r].lock_gauged) {
			*lo = *hi = NAN;
			return;
		}
		all += running_attempts(&runs[r]);
		two += runs[r].running_lo[1] + runs[r].running_lo[2];
		two_hi += runs[r].running_hi[1] + runs[r].running_hi[2];
	}
	*lo = all ? (double)two / (double)all : NAN;
	*hi = all ? (double)two_hi / (double)all : NAN;
}

static void split_running(const struct lb_rt_run *first, const struct lb_rt_run *runs, size_t n,
			  struct running_split *rs)
{
	running_share(first, n, &rs->lo[0], &rs->hi[0]);
	running_share(runs, n, &rs->lo[1], &rs->hi[1]);
	bool have0 = !isnan(rs->lo[0]), have1 = !isnan(rs->lo[1]);
	rs->side = have1 && (!have0 || rs->lo[1] > rs->lo[0]) ? 1 : 0;
	double lo = rs->lo[rs->side];
	double hi = have0 && have1 ? fmax(rs->hi[0], rs->hi[1]) : rs->hi[rs->side];
	rs->gate = !have0 && !have1		  ? RUN_NOT_GAUGED
		   : lo >= RT_RUNNING_SHARE_MIN ? RUN_PRESENT
		   : hi >= RT_RUNNING_SHARE_MIN ? RUN_UNKNOWN
						: RUN_ABSENT;
}

static const char *running_gate_name(enum running_gate g)
{
	return g == RUN_PRESENT ? "present" : g == RUN_ABSENT ? "absent"
					: g == RUN_UNKNOWN ? "not known" : "not gauged";
}

/* Share of the RT wake-ups a raw section delayed, over a lock's runs. */
static double raw_delayed_share(const struct lb_rt_run *runs, size_t n)
{
	uint64_t waits = 0, wakes = 0;
	for (size_t r = 0; r < n; r++) {
		waits += runs[r].raw_rt_waits;
		for (unsigned int i = 0; i < runs[r].nrt; i++)
			wakes += runs[r].rt[i].cycles;
	}
	return wakes ? (double)waits / (double)wakes : NAN;
}

/* Share of the RT allocations that found list_lock taken. */
static double rt_contended_share(const struct lb_rt_run *runs, size_t n)
{
	uint64_t cont = 0, allocs = 0;
	for (size_t r = 0; r < n; r++) {
		if (!runs[r].lock_gauged)
			return NAN;
		cont += runs[r].rt_lock_contended;
		for (unsigned int i = 0; i < runs[r].nrt; i++)
			allocs += runs[r].rt[i].alloc_n;
	}
	return allocs ? (double)cont / (double)allocs : NAN;
}

/*
 * Whether quantile q of an RT latency can show the kernel's mechanism: it
 * can only be moved by it when at least the 1 - q of samples above it were
 * touched.  Wake-ups: the raw side's wake-ups a raw section delayed (only
 * when exactly one side is raw: that is the trade-off).  Allocations: those
 * that found list_lock taken, on the side with more.  Returns false with
 * why[] filled when absent; true when present or when there is no such
 * gauge for the pair.
 */
static bool latency_mechanism(const struct lb_rt_config *cfg, bool wake, double q,
			      struct lb_rt_run *const *runs_by_lock, size_t nrepeat, size_t l,
			      char *why, size_t len)
{
	const struct lb_rt_run *a = runs_by_lock[0], *b = runs_by_lock[l];
	if (wake) {
		if (!nrepeat || a[0].raw_on == b[0].raw_on)
			return true;
		const struct lb_rt_run *raw = a[0].raw_on ? a : b;
		double f = raw_delayed_share(raw, nrepeat);
		if (isnan(f) || f >= 1 - q)
			return true;
		snprintf(why, len, "%.2f%% of %s's RT wake-ups waited for a raw section, fewer than "
			 "the %g%% above p%g", 100 * f, raw[0].ops->name, 100 * (1 - q), 100 * q);
		return false;
	}
	double fa = rt_contended_share(a, nrepeat), fb = rt_contended_share(b, nrepeat);
	if (isnan(fa) || isnan(fb))
		return true;
	if ((fa > fb ? fa : fb) >= 1 - q)
		return true;
	snprintf(why, len, "RT allocations found list_lock taken %.2f%% (%s) and %.2f%% (%s) of "
		 "the time, fewer than the %g%% above p%g", 100 * fa, cfg->locks[0]->name, 100 * fb,
		 cfg->locks[l]->name, 100 * (1 - q), 100 * q);
	return false;
}

/* One verdict on quantile q of lock l against lock 0, by their intervals,
 * over equal sample counts. */
static void print_quantile_verdict(FILE *out, const struct lb_rt_config *cfg, const char *what,
				   bool wake, double q, struct lb_rt_run *const *runs_by_lock,
				   size_t nrepeat, unsigned int nrt, size_t l)
{
	struct lb_hist ha, hb;
	uint64_t a[3], b[3]; /* quantile q and its 95 % interval (lb_hist_quantile_ci), ns */
	uint64_t n = equal_hist(runs_by_lock, cfg->nlocks, nrepeat, nrt, l, wake, &ha);
	equal_hist(runs_by_lock, cfg->nlocks, nrepeat, nrt, 0, wake, &hb);
	if (!ha.count || !hb.count)
		return;
	a[0] = lb_hist_quantile_ci(&ha, q, 1.96, &a[1], &a[2]);
	b[0] = lb_hist_quantile_ci(&hb, q, 1.96, &b[1], &b[2]);
	/* Fewer than 5 expected samples above the quantile: no interval. */
	double need = ceil(5.0 / (1.0 - q));
	struct lb_line L = { .len = 0 };
	if ((double)n < need) {
		lb_line_add(&L, "  %s p%g: too few samples (%llu each; need %.0f)", what, q * 100,
			    (unsigned long long)n, need);
		lb_line_put(out, cfg->wide, "    ", &L);
		return;
	}
	char why[200];
	bool present = latency_mechanism(cfg, wake, q, runs_by_lock, nrepeat, l, why, sizeof(why));
	lb_line_add(&L, "  %s p%g %.1f us [%.1f, %.1f] vs %.1f us [%.1f, %.1f] (%llu samples "
		    "each): ", what, q * 100, a[0] / 1e3, a[1] / 1e3, a[2] / 1e3, b[0] / 1e3,
		    b[1] / 1e3, b[2] / 1e3, (unsigned long long)n);
	if (!present)
		lb_line_add(&L, "kernel mechanism absent (%s): no verdict", why);
	else
		lb_line_add(&L, "%s", a[1] > b[2]   ? "higher"
				      : a[2] < b[1] ? "lower"
						    : "intervals overlap (no verdict)");
	lb_line_put(out, cfg->wide, "    ", &L);
}

double lb_rt_sem(const double *v, size_t n, double *mean)
{
	double m = 0, m2 = 0;
	for (size_t i = 0; i < n; i++)
		m += v[i];
	m = n ? m / (double)n : 0;
	for (size_t i = 0; i < n; i++)
		m2 += (v[i] - m) * (v[i] - m);
	if (mean)
		*mean = m;
	/* perf's stddev_stats(): sqrt((M2 / (n - 1)) / n), the standard error. */
	return n > 1 ? sqrt(m2 / (double)(n - 1) / (double)n) : 0;
}

/* Mean and SEM of metric m over the runs of one lock (NAN-free values only). */
static double mean_sem(const struct lb_rt_run *runs, size_t n, enum rt_metric m, double *sem)
{
	double *v = malloc(sizeof(double) * (n ? n : 1)), mean = NAN;
	size_t k = 0;
	for (size_t i = 0; v && i < n; i++) {
		double x = metric(&runs[i], m);
		if (!isnan(x))
			v[k++] = x;
	}
	double s = k ? lb_rt_sem(v, k, &mean) : NAN;
	if (sem)
		*sem = s;
	free(v);
	return k ? mean : NAN;
}

/* ---- text ------------------------------------------------------------ */

/* The notes above the runs.  Every '#' line goes through lb_line_put: broken
 * at spaces to fit 100 columns, or as it is with --wide. */
static void print_load(FILE *out, const struct lb_rt_config *cfg, const struct lb_rt_facts *f)
{
	struct lb_line L = { .len = 0 };
	if (cfg->groups) {
		lb_line_add(&L, "# load: %u groups x %u senders + %u receivers, %u loops, %u bytes, "
			    "%s, ", cfg->groups, cfg->fds, cfg->fds, cfg->loops, cfg->datasize,
			    cfg->pipe ? "pipes" : "socketpairs");
		if (cfg->load_prio && f->fifo_permitted)
			lb_line_add(&L, "SCHED_FIFO %d (only the RT threads preempt a list_lock "
				    "holder)", cfg->load_prio);
		else
			lb_line_add(&L, "normal priority%s",
				    cfg->load_prio ? " (SCHED_FIFO not permitted)" : " (as hackbench)");
	} else {
		lb_line_add(&L, "# load: none (RT threads alone for %.1f s)",
			    (double)cfg->duration_ns / LB_NS_PER_S);
	}
	lb_line_put(out, cfg->wide, "#   ", &L);
	static const char *const slab_modes[] = { "per thread", "per CPU, lockless rseq commit",
						  "per CPU, PI local lock" };
	lb_line_add(&L, "# allocator knobs: cpu slabs %s, cpu_partial %u, min_partial %u, "
		    "cpu partial slabs %s, %s's caches%s",
		    slab_modes[cfg->cpu_slab < 3 ? cfg->cpu_slab : 0], cfg->cpu_partial,
		    cfg->min_partial,
		    cfg->slub_cpu_partial ? "sysfs-0 (CONFIG_SLUB_CPU_PARTIAL=y, cpu_partial 0)"
					  : "off (CONFIG_SLUB_CPU_PARTIAL=n)",
		    lb_rt_skb_kernel_name((enum lb_rt_skb_kernel)cfg->slab_caches),
		    cfg->preset ? "; preset rt-list-lock (hackbench -g 10 -f 20 -s 4096 -l 500, "
				  "perf stat -r 10)"
				: "");
	lb_line_put(out, cfg->wide, "#   ", &L);
}

static void print_rt_threads(FILE *out, const struct lb_rt_config *cfg,
			     const struct lb_rt_facts *f)
{
	struct lb_line L = { .len = 0 };
	bool fifo = f->fifo_permitted && !cfg->sched_other;
	lb_line_add(&L, "# RT threads: %u, %s, interval %u us, distance %u us%s%s",
		    cfg->rt_threads, fifo ? "SCHED_FIFO" : "SCHED_OTHER (normal priority)",
		    cfg->interval_us, cfg->histogram_us ? 0 : cfg->distance_us,
		    cfg->rt_alloc ? ", alloc+free through list_lock each wake-up" : "",
		    cfg->mlockall ? (f->mlocked ? ", memory locked" : ", mlockall FAILED") : "");
	lb_line_put(out, cfg->wide, "#   ", &L);
	if (fifo)
		lb_line_add(&L, "# RT priority: SCHED_FIFO %d (permitted); a raw (spin-only) "
			    "list_lock section runs non-preemptible (at SCHED_FIFO %d while spun on "
			    "or held), and an RT thread woken on its CPU starts after it ends; "
			    "PI and sleeping locks stay preemptible", cfg->priority, cfg->priority - 1);
	else if (cfg->sched_other)
		lb_line_add(&L, "# RT priority: NONE - the RT threads run at normal priority "
			    "(--sched-other): their latencies are not real-time latencies");
	else
		lb_line_add(&L, "# RT priority: NONE - SCHED_FIFO is not permitted here (%s): the "
			    "RT threads run at normal priority and their latencies are not "
			    "real-time latencies", strerror(f->fifo_errno));
	lb_line_put(out, cfg->wide, "#   ", &L);
}

static void print_kernel_facts(FILE *out, const struct lb_rt_config *cfg,
			       const struct lb_rt_facts *f)
{
	struct lb_line L = { .len = 0 };
	lb_line_add(&L, "# kernel preemption: %s; clocksource: %s", f->preempt_model,
		    f->clocksource);
	lb_line_put(out, cfg->wide, "#   ", &L);
	if (cfg->rt_threads) {
		lb_line_add(&L, "# /dev/cpu_dma_latency %s",
			    f->dma_latency_fd >= 0 ? "set to 0us (as cyclictest)"
						   : "not writable: idle states unrestricted");
		lb_line_put(out, cfg->wide, "#   ", &L);
	}
	if (f->rt_runtime_us == -1)
		lb_line_add(&L, "# RT throttling: OFF (sched_rt_runtime_us = -1): a spinning RT "
			    "thread can starve everything else");
	else if (f->rt_runtime_us >= 0)
		lb_line_add(&L, "# RT throttling: on, sched_rt_runtime_us = %ld of "
			    "sched_rt_period_us = %ld", f->rt_runtime_us, f->rt_period_us);
	else
		lb_line_add(&L, "# RT throttling: unknown (/proc/sys/kernel/sched_rt_runtime_us "
			    "not readable)");
	lb_line_put(out, cfg->wide, "#   ", &L);
}

void lb_rt_print_header(FILE *out, const struct lb_rt_config *cfg, const struct lb_rt_facts *f)
{
	struct lb_line L = { .len = 0 };
	lb_line_add(&L, "# lockbench rt: list_lock %s", cfg->locks[0]->name);
	for (size_t i = 1; i < cfg->nlocks; i++)
		lb_line_add(&L, " vs %s", cfg->locks[i]->name);
	lb_line_add(&L, "; %u run(s) each%s", cfg->repeat, cfg->nlocks > 1 ? ", interleaved" : "");
	lb_line_put(out, cfg->wide, "#   ", &L);
	print_load(out, cfg, f);
	if (cfg->rt_threads)
		print_rt_threads(out, cfg, f);
	print_kernel_facts(out, cfg, f);
	for (size_t i = 0; i < cfg->nlocks; i++) {
		const struct lb_lock_ops *ops = cfg->locks[i];
		const char *pi;
		if (!(ops->flags & LB_LOCK_F_PI))
			pi = "no priority inheritance";
		else if (ops->thread_set_prio)
			pi = "PI in userspace (see its line below)";
		else
			pi = f->fifo_permitted && !cfg->sched_other
				     ? "kernel PI (FUTEX_LOCK_PI): real boosting on"
				     : "kernel PI (FUTEX_LOCK_PI): nothing to boost (no RT threads)";
		lb_line_add(&L, "# %-10s %s, %s%s", ops->name, ops->family, pi,
			    (ops->flags & LB_LOCK_F_SLEEPS) ? "" : "; waiters only spin");
		lb_line_put(out, cfg->wide, "#   ", &L);
	}
}

void lb_rt_format_t_line(char *buf, size_t len, unsigned int index,
			 const struct lb_rt_thread_stats *s)
{
	long avg = s->cycles ? (long)(s->wake_sum_us / (double)s->cycles) : 0;
	snprintf(buf, len, "T:%2u (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld",
		 index, s->tid, s->prio, (long)s->interval_us, (unsigned long)s->cycles,
		 s->wake_min_us, s->wake_act_us, avg, s->wake_max_us);
}

static void print_a_line(FILE *out, unsigned int index, const struct lb_rt_thread_stats *s)
{
	double avg = s->alloc_n ? s->alloc_sum_us / (double)s->alloc_n : 0;
	double p99 = s->alloc_hist && s->alloc_hist->count
			     ? (double)lb_hist_quantile(s->alloc_hist, 0.99) / 1e3 : 0;
	fprintf(out, "A:%2u (%5d) P:%2d I:%ld C:%7lu Min:%7.1f Act:%5.1f Avg:%5.1f Max:%8.1f "
		"P99:%7.1f\n", index, s->tid, s->prio, (long)s->interval_us,
		(unsigned long)s->alloc_n, s->alloc_min_us, s->alloc_act_us, avg, s->alloc_max_us,
		p99);
}

void lb_rt_print_histogram(FILE *out, const struct lb_rt_thread_stats *rt, unsigned int nrt,
			   unsigned int histogram_us)
{
	fprintf(out, "# Histogram\n");
	for (unsigned int b = 0; b < histogram_us; b++) {
		fprintf(out, "%06u ", b);
		for (unsigned int j = 0; j < nrt; j++)
			fprintf(out, "%06llu%s", (unsigned long long)rt[j].hist[b],
				j + 1 < nrt ? "\t" : "");
		fputc('\n', out);
	}
	fprintf(out, "# Total:");
	for (unsigned int j = 0; j < nrt; j++)
		fprintf(out, " %09llu", (unsigned long long)(rt[j].cycles - rt[j].overflows));
	fprintf(out, "\n# Min Latencies:");
	for (unsigned int j = 0; j < nrt; j++)
		fprintf(out, " %05ld", rt[j].wake_min_us);
	fprintf(out, "\n# Avg Latencies:");
	for (unsigned int j = 0; j < nrt; j++)
		fprintf(out, " %05ld",
			rt[j].cycles ? (long)(rt[j].wake_sum_us / (double)rt[j].cycles) : 0);
	fprintf(out, "\n# Max Latencies:");
	for (unsigned int j = 0; j < nrt; j++)
		fprintf(out, " %05ld", rt[j].wake_max_us);
	fprintf(out, "\n# Histogram Overflows:");
	for (unsigned int j = 0; j < nrt; j++)
		fprintf(out, " %05llu", (unsigned long long)rt[j].overflows);
	fprintf(out, "\n# Histogram Overflow at cycle number:\n");
	for (unsigned int j = 0; j < nrt; j++) {
		fprintf(out, "# Thread %u:", j);
		for (uint64_t k = 0; k < rt[j].noverflow_kept; k++)
			fprintf(out, " %05llu", (unsigned long long)rt[j].overflow_cycles[k]);
		if (rt[j].overflows > rt[j].noverflow_kept)
			fprintf(out, " # %05llu others",
				(unsigned long long)(rt[j].overflows - rt[j].noverflow_kept));
		fputc('\n', out);
	}
}

/* perf's rate column: "93.505 K/sec". */
static void rate(char *buf, size_t len, double per_sec)
{
	const char *unit = "";
	if (per_sec >= 1e9) {
		per_sec /= 1e9;
		unit = "G";
	} else if (per_sec >= 1e6) {
		per_sec /= 1e6;
		unit = "M";
	} else if (per_sec >= 1e3) {
		per_sec /= 1e3;
		unit = "K";
	}
	snprintf(buf, len, "%8.3f %s/sec", per_sec, unit);
}

static void print_noise(FILE *out, double mean, double sem, size_t n)
{
	if (n > 1 && mean != 0 && sem != 0)
		fprintf(out, "  ( +-%6.2f%% )", 100.0 * sem / mean);
	fputc('\n', out);
}

static void print_perf_block(FILE *out, const struct lb_rt_config *cfg, const char *command,
			     const char *lock,
			     const struct lb_rt_run *runs, size_t n)
{
	double sem, tc = mean_sem(runs, n, M_TASK_CLOCK, &sem), el_sem;
	double el = mean_sem(runs, n, M_ELAPSED, &el_sem);
	char r[48];
	/* The command as it was run; with several locks, which one's block. */
	fprintf(out, "\n Performance counter stats for '%s'", command);
	if (n > 1)
		fprintf(out, " (%zu runs)", n);
	if (cfg->nlocks > 1)
		fprintf(out, ", list_lock %s", lock);
	fprintf(out, ":\n\n");
	/* CPUs utilized over the counters' own window (thread creation to the
	 * last join), not over hackbench's Time, which is shorter. */
	double win = 0, util = cpus_utilized(runs, n);
	for (size_t i = 0; i < n; i++)
		win += runs[i].perf_window_s / (double)n;
	if (isnan(tc))
		fprintf(out, "%18s      %-32s\n", "<not counted>", "task-clock");
	else {
		fprintf(out, "%18.2f msec %-32s #  %8.3f CPUs utilized         ", tc, "task-clock",
			isnan(util) ? 0 : util);
		print_noise(out, tc, sem, n);
	}
	static const struct {
		enum rt_metric m;
		const char *name;
	} counts[] = { { M_CTX, "context-switches" }, { M_MIGR, "cpu-migrations" },
		       { M_FAULTS, "page-faults" } };
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		double v = mean_sem(runs, n, counts[i].m, &sem);
		if (isnan(v)) {
			fprintf(out, "%18s      %-32s\n", "<not counted>", counts[i].name);
			continue;
		}
		rate(r, sizeof(r), !isnan(tc) && tc > 0 ? v / (tc / 1e3) : 0);
		fprintf(out, "%18.0f      %-32s #  %-28s", v, counts[i].name, r);
		print_noise(out, v, sem, n);
	}
	bool hw = n && runs[0].hw_supported;
	fprintf(out, "%18s      %s\n", hw ? "<not counted>" : "<not supported>", "cycles");
	fprintf(out, "%18s      %s\n", hw ? "<not counted>" : "<not supported>", "instructions");
	/* perf's precision: enough decimals to show the error to ~3 digits. */
	int prec = el_sem > 0 && el_sem < 1 ? (int)floor(-log10(el_sem)) + 3 : 3;
	prec = prec < 1 ? 1 : prec > 9 ? 9 : prec;
	fprintf(out, "\n%18.*f +- %.*f seconds time elapsed", prec, el, prec, el_sem);
	if (n > 1 && el != 0)
		fprintf(out, "  ( +-%6.2f%% )", 100.0 * el_sem / el);
	fputc('\n', out);
	struct lb_line L = { .len = 0 };
	lb_line_add(&L, "# (time elapsed: hackbench's Time; the counters' window, %.3f s mean, "
		    "includes %s)", win,
		    cfg->process_mode ? "the forks, the RT threads' creation and joins, and reaping "
					"the task processes (their counts join at exit)"
				      : "thread creation and the joins");
	lb_line_put(out, cfg->wide, "#   ", &L);
	fputc('\n', out);
}

void lb_rt_print_run_line(FILE *out, const struct lb_rt_run *r)
{
	/* hackbench's "Time: %lu.%03lu": seconds, milliseconds truncated. */
	unsigned long ms = (unsigned long)(r->elapsed_s * 1000.0);
	fprintf(out, "Time: %lu.%03lu\n", ms / 1000, ms % 1000);
}

/*
 * Running contenders at the attempts that found list_lock taken (doc/rt.md,
 * "Running contenders"): the bins, the owners seen off their CPU, and the
 * bins with may-sleep waiters counted running when any were seen.
 */
static void print_running(FILE *out, bool wide, const struct lb_rt_run *runs, size_t nruns)
{
	uint64_t lo[3] = { 0 }, hi[3] = { 0 }, ann = 0, held = 0;
	struct lb_line L = { .len = 0 };
	for (size_t i = 0; i < nruns; i++) {
		if (!runs[i].lock_gauged) {
			lb_line_add(&L, "# list_lock running contenders: not gauged (the lock has no "
				    "trylock)");
			lb_line_put(out, wide, "#   ", &L);
			return;
		}
		for (int b = 0; b < 3; b++) {
			lo[b] += runs[i].running_lo[b];
			hi[b] += runs[i].running_hi[b];
		}
		ann += runs[i].owner_off_announced;
		held += runs[i].owner_off_held;
	}
	double n = (double)(lo[0] + lo[1] + lo[2]);
	lb_line_add(&L, "# list_lock running contenders at attempts that found it taken (the "
		    "attempter + the owner if on its CPU + waiters spinning): ");
	if (n == 0) {
		lb_line_add(&L, "none found it taken");
		lb_line_put(out, wide, "#   ", &L);
		return;
	}
	lb_line_add(&L, "1/2/3+ %.0f/%.0f/%.0f%% of %.0f; owner off its CPU %.1f%% (announced "
		    "%.1f%%, held past %u us %.1f%%)", 100 * lo[0] / n, 100 * lo[1] / n,
		    100 * lo[2] / n, n, 100 * (ann + held) / n, 100 * ann / n,
		    LB_SCHED_PREEMPT_GAP_NS / 1000, 100 * held / n);
	if (memcmp(lo, hi, sizeof(lo)) != 0)
		lb_line_add(&L, "; waiters inside a lock() that may sleep, counted running: "
			    "1/2/3+ %.0f/%.0f/%.0f%%", 100 * hi[0] / n, 100 * hi[1] / n,
			    100 * hi[2] / n);
	lb_line_put(out, wide, "#   ", &L);
}

/*
 * Where the acquisitions per message come from (doc/rt.md, "Where the
 * acquisitions come from"): the documented path's three sites, whose sum
 * is what 3/N models, and the sites it leaves out.
 */
static void print_sites(FILE *out, const struct lb_rt_run *runs, size_t nruns, uint64_t msgs,
			double kernel)
{
	double per[LB_SLUB_SITES] = { 0 };
	for (size_t i = 0; i < nruns; i++)
		for (int k = 0; k < LB_SLUB_SITES; k++)
			per[k] += (double)runs[i].site_acquires[k] / (double)msgs;
	double path = per[LB_SLUB_SITE_PARTIAL_TAKE] + per[LB_SLUB_SITE_FREE_FULL] +
		      per[LB_SLUB_SITE_FREE_EMPTY];
	fprintf(out, "# list_lock by site, per message: took a partial slab %.3f, freed to a full "
		"slab %.3f,\n#   emptied a slab %.3f: the documented path's sites %.3f (x%.2f of 3/N)\n",
		per[LB_SLUB_SITE_PARTIAL_TAKE], per[LB_SLUB_SITE_FREE_FULL],
		per[LB_SLUB_SITE_FREE_EMPTY], path, kernel > 0 ? path / kernel : 0);
	fprintf(out, "#   beyond it: found no partial slab %.3f, free that no longer moved %.3f, "
		"flush %.3f,\n#   cpu partial slab put back %.3f, other %.3f\n",
		per[LB_SLUB_SITE_PARTIAL_NONE], per[LB_SLUB_SITE_FREE_NOMOVE],
		per[LB_SLUB_SITE_FLUSH], per[LB_SLUB_SITE_UNFREEZE], per[LB_SLUB_SITE_OTHER]);
	/* 3/N assumes a slab taken off the partial list brings all N objects
	 * (it went full -> partial -> empty in one pass); one taken back with
	 * k < N free makes N/k takes (and as many full-slab frees) per N. */
	uint64_t objs[2] = { 0, 0 }, takes[2] = { 0, 0 };
	for (size_t i = 0; i < nruns; i++)
		for (int c = 0; c < 2; c++) {
			objs[c] += runs[i].partial_take_objs[c];
			takes[c] += runs[i].partial_takes[c];
		}
	const uint32_t *n = runs[0].objs_per_slab;
	fprintf(out, "#   free objects a partial slab brought when taken: head cache %.1f of %u, "
		"data cache %.1f of %u\n", takes[0] ? (double)objs[0] / (double)takes[0] : 0, n[0],
		takes[1] ? (double)objs[1] / (double)takes[1] : 0, n[1]);
	/* The kernel's ___slab_alloc, put_cpu_partial and slub_percpu_partial
	 * counts (rt-calibrate kprobe's "slow" and "put_cpu_partial"). */
	double rf[2] = { 0, 0 }, sf[2] = { 0, 0 }, puts = 0, prf = 0;
	for (size_t i = 0; i < nruns; i++)
		for (int c = 0; c < 2; c++) {
			rf[c] += (double)runs[i].refills[c] / (double)msgs;
			sf[c] += (double)runs[i].slow_frees[c] / (double)msgs;
			puts += (double)runs[i].cpu_partial_puts[c] / (double)msgs;
			prf += (double)runs[i].cpu_partial_refills[c] / (double)msgs;
		}
	fprintf(out, "#   slow-path refills per message: head cache %.3f, data cache %.3f;\n"
		"#   slow-path frees (off the cpu slab) per message: head cache %.3f, data cache %.3f;\n"
		"#   pages put on a cpu partial list %.3f, refills from one %.3f\n", rf[0], rf[1],
		sf[0], sf[1], puts, prf);
}

/*
 * The load's own gauges (doc/rt.md, "On a quiet host"): sends that found
 * the receiver's socket full (where the kernel would wait before it
 * allocates), the messages in flight (the socket queues' depth, the
 * watchdog's samples pooled over the runs) and each side's CPU time.
 */
static void print_load_gauges(FILE *out, const struct lb_rt_run *runs, size_t nruns,
			      uint64_t msgs)
{
	double full = 0, fl_sum = 0, cpu_snd = 0, cpu_rcv = 0;
	uint64_t fl_n = 0, fl_max = 0;
	for (size_t i = 0; i < nruns; i++) {
		const struct lb_rt_inflight *f = &runs[i].inflight;
		full += (double)runs[i].sends_full / (double)msgs;
		fl_sum += f->mean * (double)f->samples;
		fl_n += f->samples;
		fl_max = f->max > fl_max ? f->max : fl_max;
		cpu_snd += (double)runs[i].sender_cpu_ns / 1e3 / (double)msgs;
		cpu_rcv += (double)runs[i].receiver_cpu_ns / 1e3 / (double)msgs;
	}
	fprintf(out, "# load: sends that found the socket full %.3f per message\n", full);
	if (fl_n)
		fprintf(out, "#   messages in flight (sent, not yet received; %llu samples, 50 ms "
			"apart): mean %.0f, max %llu\n", (unsigned long long)fl_n,
			fl_sum / (double)fl_n, (unsigned long long)fl_max);
	else
		fprintf(out, "#   messages in flight: not sampled (no 50 ms watchdog tick while "
			"the load ran)\n");
	fprintf(out, "#   CPU time a message: senders %.2f us, receivers %.2f us\n", cpu_snd, cpu_rcv);
}

/*
 * list_lock acquisitions per message, each cache's and in all, beside the
 * kernel's documented path with cpu partials off (doc/rt.md, "Calibration"):
 * a slab of N objects costs its cache three list_lock acquisitions per pass
 * (get_partial_node takes it off the partial list, the first free to it
 * once full puts it back, the free that empties it), 3/N per message.  And
 * the contenders at an acquisition (holder + waiters).
 */
static void print_per_message(FILE *out, bool wide, const struct lb_rt_run *runs, size_t nruns)
{
	struct lb_line L = { .len = 0 };
	uint64_t acq[2] = { 0, 0 }, msgs = 0, cmax = 0, commits = 0, restarts = 0;
	double csum = 0, allacq = 0;
	for (size_t i = 0; i < nruns; i++) {
		acq[0] += runs[i].cache_acquires[0];
		acq[1] += runs[i].cache_acquires[1];
		msgs += runs[i].messages;
		csum += runs[i].contenders_mean * (double)runs[i].lock_acquires;
		allacq += (double)runs[i].lock_acquires;
		cmax = runs[i].contenders_max > cmax ? runs[i].contenders_max : cmax;
		commits += runs[i].fast_commits;
		restarts += runs[i].fast_restarts;
	}
	if (!msgs || !nruns)
		return;
	const uint32_t *n = runs[0].objs_per_slab;
	double h = (double)acq[0] / (double)msgs, d = (double)acq[1] / (double)msgs;
	double kernel = (n[0] ? 3.0 / n[0] : 0) + (n[1] ? 3.0 / n[1] : 0);
	lb_line_add(&L, "# list_lock acquisitions per message: %.3f (head cache %.3f at %u per "
		    "slab, data cache %.3f at %u per slab); kernel's documented path 3/N per "
		    "cache: %.3f (work-alike/kernel %.2f)", h + d, h, n[0], d, n[1], kernel,
		    kernel > 0 ? (h + d) / kernel : 0);
	lb_line_put(out, wide, "#   ", &L);
	bool sleeps = runs[0].ops && (runs[0].ops->flags & LB_LOCK_F_SLEEPS);
	lb_line_add(&L, "# list_lock contenders at an acquisition (holder on its CPU + waiters, "
		    "%s): mean %.3f, max %llu", sleeps ? "who may sleep" : "who spin",
		    allacq > 0 ? csum / allacq : 0, (unsigned long long)cmax);
	if (commits + restarts)
		lb_line_add(&L, "; lockless cpu slab commits %llu, restarts %llu",
			    (unsigned long long)commits, (unsigned long long)restarts);
	lb_line_put(out, wide, "#   ", &L);
	print_sites(out, runs, nruns, msgs, kernel);
	print_load_gauges(out, runs, nruns, msgs);
	print_running(out, wide, runs, nruns);
}

/* The list_lock's gauges, the kernel mechanism's evidence (doc/rt.md, "Is
 * the mechanism there"): how busy the lock was and how often it was found
 * taken. */
static void print_list_lock_gauges(FILE *out, bool wide, const struct lb_rt_run *runs,
				   size_t nruns)
{
	double util = mean_sem(runs, nruns, M_LL_UTIL, NULL);
	double cont = mean_sem(runs, nruns, M_LL_CONTENDED, NULL);
	double wait = mean_sem(runs, nruns, M_LL_WAIT, NULL);
	struct lb_line L = { .len = 0 };
	lb_line_add(&L, "# list_lock gauges: utilisation %.3f (held %.1f%% of hackbench's time)",
		    util, 100 * util);
	if (isnan(cont))
		lb_line_add(&L, "; contention not gauged (the lock has no trylock)");
	else
		lb_line_add(&L, ", %.2f%% of acquisitions found it taken, mean wait %.1f us", cont,
			    isnan(wait) ? 0 : wait);
	lb_line_put(out, wide, "#   ", &L);
	print_per_message(out, wide, runs, nruns);
}

void lb_rt_print_lock_block(FILE *out, const struct lb_rt_config *cfg, const struct lb_rt_facts *f,
			    const struct lb_rt_run *runs, size_t nruns,
			    const struct lb_rt_thread_stats *merged, unsigned int nrt)
{
	char line[160];
	struct lb_line L = { .len = 0 };
	const char *lock = runs[0].ops->name;
	if (cfg->nlocks > 1)
		fprintf(out, "\n## list_lock %s\n", lock);
	if (runs[0].describe[0]) {
		lb_line_add(&L, "# %s: %s", lock, runs[0].describe);
		lb_line_put(out, cfg->wide, "#   ", &L);
	}
	for (unsigned int i = 0; i < nrt; i++) {
		lb_rt_format_t_line(line, sizeof(line), i, &merged[i]);
		fprintf(out, "%s\n", line);
	}
	if (cfg->rt_alloc)
		for (unsigned int i = 0; i < nrt; i++)
			print_a_line(out, i, &merged[i]);
	if (cfg->histogram_us && nrt)
		lb_rt_print_histogram(out, merged, nrt, cfg->histogram_us);
	double hold = 0;
	uint64_t budget = 0, acq = 0;
	for (size_t i = 0; i < nruns; i++) {
		hold = runs[i].max_hold_us > hold ? runs[i].max_hold_us : hold;
		budget += runs[i].budget_exhausted;
		acq += runs[i].lock_acquires;
	}
	uint64_t allocs = 0, sections = 0, waits = 0, boost_fail = 0, yields = 0, contended = 0;
	uint64_t boost_calls = 0;
	double cost = 0, wait_max = 0, alone = 0, waited = 0;
	for (size_t i = 0; i < nruns; i++) {
		allocs += runs[i].allocs;
		sections += runs[i].raw_sections;
		cost += runs[i].raw_cost_ns * (double)runs[i].raw_sections;
		waited += runs[i].raw_wait_ns * (double)runs[i].raw_sections;
		waits += runs[i].raw_rt_waits;
		alone += runs[i].raw_cost_alone_ns / (double)nruns;
		boost_fail += runs[i].raw_boost_failures;
		yields += runs[i].raw_entry_yields;
		contended += runs[i].raw_contended;
		boost_calls += runs[i].raw_boost_calls;
		wait_max = runs[i].raw_rt_wait_max_us > wait_max ? runs[i].raw_rt_wait_max_us
								  : wait_max;
	}
	lb_line_add(&L, "# allocator: %.0f list_lock acquisitions per run (%.1f per 1000 "
		    "allocations), longest hold %.1f us",
		    nruns ? (double)acq / (double)nruns : 0,
		    allocs ? 1000.0 * (double)acq / (double)allocs : 0, hold);
	if (budget)
		lb_line_add(&L, "; WARNING: %llu RT wait(s) outlived the %.0f us safety spin budget "
			    "(those A: figures are set by it)",
			    (unsigned long long)budget, (double)cfg->spin_budget_ns / 1e3);
	lb_line_put(out, cfg->wide, "#   ", &L);
	print_list_lock_gauges(out, cfg->wide, runs, nruns);
	if (nruns && runs[0].raw_on) {
		lb_line_add(&L, "# raw sections: %llu, %.1f%% contended; emulation cost per section "
			    "%.0f ns alone (median: mark, trylock path, unmark; no system call), %.0f ns "
			    "in the run (mean wall, with the boosts of contended sections) + %.0f ns "
			    "waiting (entries for another section on the CPU, unboosts with the "
			    "preemption they let happen); %.1f sched_setscheduler calls per 1000 "
			    "sections; %llu RT wake-up(s) waited for a section, longest %.1f us; %llu "
			    "entr%s found the CPU's mark taken; %llu boost call(s) failed",
			    (unsigned long long)sections,
			    sections ? 100.0 * (double)contended / (double)sections : 0, alone,
			    sections ? (cost - waited) / (double)sections : 0,
			    sections ? waited / (double)sections : 0,
			    sections ? 1000.0 * (double)boost_calls / (double)sections : 0,
			    (unsigned long long)waits, wait_max, (unsigned long long)yields,
			    yields == 1 ? "y" : "ies", (unsigned long long)boost_fail);
		lb_line_put(out, cfg->wide, "#   ", &L);
	}
	if (cfg->groups)
		print_perf_block(out, cfg, f->command, lock, runs, nruns);
}

/* The running-contenders gate in words, for the verdict line. */
static void running_why(const struct running_split *rs, const char *first, const char *this,
			char *why, size_t len)
{
	const char *side = rs->side ? this : first;
	if (rs->gate == RUN_NOT_GAUGED)
		snprintf(why, len, "running contenders not gauged: no attempt found list_lock "
			 "taken, or no trylock");
	else if (rs->gate == RUN_UNKNOWN)
		snprintf(why, len, "%.0f %% of the attempts that found list_lock taken had >= 2 "
			 "running contenders (%s), %.0f %% if waiters that may sleep ran; need "
			 ">= %.0f %%: verdict withheld", 100 * rs->lo[rs->side], side,
			 100 * fmax(isnan(rs->hi[0]) ? 0 : rs->hi[0], isnan(rs->hi[1]) ? 0 : rs->hi[1]),
			 100 * RT_RUNNING_SHARE_MIN);
	else
		snprintf(why, len, "%.0f %% of the attempts that found list_lock taken had >= 2 "
			 "running contenders (%s)%s", 100 * rs->lo[rs->side], side,
			 rs->gate == RUN_ABSENT ? ", need >= 50 %" : "");
}

void lb_rt_print_compare(FILE *out, const struct lb_rt_config *cfg,
			 struct lb_rt_run *const *runs_by_lock, size_t nrepeat,
			 struct lb_rt_thread_stats *const *merged_by_lock, unsigned int nrt)
{
	/* Without --wide: no cpu-migr column, and a line with the units. */
	if (cfg->wide)
		fprintf(out, "\n%-18s %-22s %12s %10s %18s %20s\n", "list_lock",
			"hackbench elapsed", "ctx-switches", "cpu-migr", "RT wake p99/max us",
			"RT alloc p99/max us");
	else
		fprintf(out, "\n# units: hackbench elapsed s (mean +- SEM), lower is better; "
			"ctx-switches per run;\n#   RT wake-up and RT alloc latency p99 / max in us, "
			"lower is better\n%-18s %-22s %12s %18s %20s\n", "list_lock",
			"hackbench elapsed", "ctx-switches", "RT wake p99/max us",
			"RT alloc p99/max us");
	double base_el = 0;
	for (size_t l = 0; l < cfg->nlocks; l++) {
		const struct lb_rt_run *runs = runs_by_lock[l];
		double sem, el = mean_sem(runs, nrepeat, M_ELAPSED, &sem);
		char elbuf[40];
		snprintf(elbuf, sizeof(elbuf), "%.4f s +- %.2f%%", el, el ? 100 * sem / el : 0);
		double wavg = rt_agg(merged_by_lock[l], nrt, M_WAKE_P99);
		double wmax = rt_agg(merged_by_lock[l], nrt, M_WAKE_MAX);
		double ap99 = rt_agg(merged_by_lock[l], nrt, M_ALLOC_P99);
		double amax = rt_agg(merged_by_lock[l], nrt, M_ALLOC_MAX);
		char wb[40], ab[40];
		snprintf(wb, sizeof(wb), "%.0f / %.0f", wavg, wmax);
		snprintf(ab, sizeof(ab), "%.1f / %.1f", ap99, amax);
		if (cfg->wide)
			fprintf(out, "%-18s %-22s %12.0f %10.0f %18s %20s\n", cfg->locks[l]->name,
				elbuf, mean_sem(runs, nrepeat, M_CTX, NULL),
				mean_sem(runs, nrepeat, M_MIGR, NULL), nrt ? wb : "-", nrt ? ab : "-");
		else
			fprintf(out, "%-18s %-22s %12.0f %18s %20s\n", cfg->locks[l]->name, elbuf,
				mean_sem(runs, nrepeat, M_CTX, NULL), nrt ? wb : "-",
				nrt ? ab : "-");
		if (l == 0)
			base_el = el;
	}
	fputc('\n', out);
	for (size_t l = 1; l < cfg->nlocks; l++) {
		const struct lb_rt_run *runs = runs_by_lock[l];
		double sem0, sem, el0 = mean_sem(runs_by_lock[0], nrepeat, M_ELAPSED, &sem0);
		double el = mean_sem(runs, nrepeat, M_ELAPSED, &sem);
		struct lb_line L = { .len = 0 };
		lb_line_add(&L, "%s:", cfg->locks[l]->name);
		double d = base_el > 0 ? 100.0 * (el - base_el) / base_el : 0;
		/* Two standard errors of the difference: below that it is noise. */
		double noise = base_el > 0 ? 200.0 * sqrt(sem0 * sem0 + sem * sem) / base_el : 0;
		struct elapsed_split sp;
		split_elapsed(runs_by_lock[0], runs, nrepeat, &sp);
		struct running_split rsp;
		char rwhy[200];
		split_running(runs_by_lock[0], runs, nrepeat, &rsp);
		running_why(&rsp, cfg->locks[0]->name, cfg->locks[l]->name, rwhy, sizeof(rwhy));
		bool within = fabs(d) <= noise;
		if (within)
			lb_line_add(&L, " elapsed %+.0f %% (within noise) (vs %s)", d,
				    cfg->locks[0]->name);
		else if (!sp.gauged)
			lb_line_add(&L, " kernel mechanism not gauged (no task-clock: CPUs left idle "
				    "unknown); measured elapsed %+.0f %% (vs %s)", d,
				    cfg->locks[0]->name);
		else if (!elapsed_mechanism(&sp))
			lb_line_add(&L, " kernel mechanism absent from the gap (CPUs left idle carry "
				    "%.0f %%, need >= %.0f %%; CPU work x%.3f carries the rest): "
				    "elapsed not comparable to the kernel's; measured %+.0f %% (vs %s)",
				    100 * sp.idle_share, 100 * RT_IDLE_SHARE_MIN, sp.work, d,
				    cfg->locks[0]->name);
		else if (rsp.gate != RUN_PRESENT)
			lb_line_add(&L, " kernel mechanism %s (%s): elapsed not comparable to the "
				    "kernel's; measured %+.0f %% (vs %s)",
				    rsp.gate == RUN_UNKNOWN ? "not known" : "absent from the gap", rwhy,
				    d, cfg->locks[0]->name);
		else
			lb_line_add(&L, " elapsed %+.0f %% (vs %s); kernel mechanism present: CPUs "
				    "left idle carry %.0f %% of the gap, %s", d, cfg->locks[0]->name,
				    100 * sp.idle_share, rwhy);
		lb_line_put(out, cfg->wide, "    ", &L);
		if (sp.gauged) {
			lb_line_add(&L, "  split: CPUs utilized %.3f vs %.3f (idle factor x%.3f), "
				    "CPU work (task-clock) x%.3f", sp.util_this, sp.util_first,
				    sp.idle, sp.work);
			lb_line_put(out, cfg->wide, "    ", &L);
		}
		double c0 = mean_sem(runs_by_lock[0], nrepeat, M_LL_CONTENDED, NULL);
		double c1 = mean_sem(runs, nrepeat, M_LL_CONTENDED, NULL);
		double w0 = mean_sem(runs_by_lock[0], nrepeat, M_LL_WAIT, NULL);
		double w1 = mean_sem(runs, nrepeat, M_LL_WAIT, NULL);
		if (!isnan(c0) && !isnan(c1)) {
			lb_line_add(&L, "  list_lock found taken %.2f%% vs %.2f%% of acquisitions, "
				    "mean wait %.1f vs %.1f us, utilisation %.3f vs %.3f", c1, c0,
				    isnan(w1) ? 0 : w1, isnan(w0) ? 0 : w0,
				    mean_sem(runs, nrepeat, M_LL_UTIL, NULL),
				    mean_sem(runs_by_lock[0], nrepeat, M_LL_UTIL, NULL));
			lb_line_put(out, cfg->wide, "    ", &L);
		}
		if (rsp.gate != RUN_NOT_GAUGED) {
			char p[4][16]; /* "-" for a side with no attempt that found it taken */
			const double v[4] = { rsp.lo[1], rsp.lo[0], rsp.hi[1], rsp.hi[0] };
			for (int k = 0; k < 4; k++) {
				if (isnan(v[k]))
					snprintf(p[k], sizeof(p[k]), "-");
				else
					snprintf(p[k], sizeof(p[k]), "%.1f%%", 100 * v[k]);
			}
			lb_line_add(&L, "  list_lock running contenders >= 2 at %s vs %s of the "
				    "attempts that found it taken (%s vs %s with waiters that may "
				    "sleep counted running): %s", p[0], p[1], p[2], p[3],
				    running_gate_name(rsp.gate));
			lb_line_put(out, cfg->wide, "    ", &L);
		}
		/* The latency verdicts: quantiles with 95 % intervals, not maxima. */
		for (int k = 0; k < 4 && nrt; k++)
			if (k < 2 || cfg->rt_alloc)
				print_quantile_verdict(out, cfg, k < 2 ? "RT wake-up" : "RT alloc",
						       k < 2, k % 2 ? 0.999 : 0.99, runs_by_lock,
						       nrepeat, nrt, l);
		(void)el0;
	}
}

/* ---- files ----------------------------------------------------------- */

static void json_rt_thread(struct lb_json *j, unsigned int i, const struct lb_rt_thread_stats *s,
			   unsigned int histogram_us)
{
	lb_json_object_begin(j);
	lb_json_kv_uint(j, "index", i);
	lb_json_kv_int(j, "tid", s->tid);
	lb_json_kv_int(j, "prio", s->prio);
	lb_json_kv_int(j, "cpu", s->cpu);
	lb_json_kv_uint(j, "interval_us", s->interval_us);
	lb_json_kv_uint(j, "cycles", s->cycles);
	lb_json_kv_int(j, "wake_min_us", s->wake_min_us);
	lb_json_kv_int(j, "wake_act_us", s->wake_act_us);
	lb_json_kv_double(j, "wake_avg_us", s->cycles ? s->wake_sum_us / (double)s->cycles : NAN);
	lb_json_kv_int(j, "wake_max_us", s->wake_max_us);
	lb_json_kv_uint(j, "alloc_n", s->alloc_n);
	if (s->alloc_n) {
		lb_json_kv_double(j, "alloc_min_us", s->alloc_min_us);
		lb_json_kv_double(j, "alloc_avg_us", s->alloc_sum_us / (double)s->alloc_n);
		lb_json_kv_double(j, "alloc_p99_us",
				  (double)lb_hist_quantile(s->alloc_hist, 0.99) / 1e3);
		lb_json_kv_double(j, "alloc_max_us", s->alloc_max_us);
	}
	if (histogram_us && s->hist) {
		lb_json_key(j, "histogram");
		lb_json_object_begin(j);
		for (unsigned int b = 0; b < histogram_us; b++)
			if (s->hist[b]) {
				char k[16];
				snprintf(k, sizeof(k), "%u", b);
				lb_json_kv_uint(j, k, s->hist[b]);
			}
		lb_json_object_end(j);
		lb_json_kv_uint(j, "histogram_overflows", s->overflows);
	}
	lb_json_object_end(j);
}

/* A run's running-contender counts (doc/rt.md, "Running contenders"). */
static void json_running(struct lb_json *j, const struct lb_rt_run *r)
{
	if (!r->lock_gauged)
		return;
	lb_json_key(j, "list_lock_running");
	lb_json_object_begin(j);
	const char *keys[2] = { "asleep_1_2_3plus", "running_1_2_3plus" };
	for (int k = 0; k < 2; k++) {
		const uint64_t *b = k ? r->running_hi : r->running_lo;
		lb_json_key(j, keys[k]);
		lb_json_array_begin(j);
		for (int i = 0; i < 3; i++)
			lb_json_uint(j, b[i]);
		lb_json_array_end(j);
	}
	lb_json_kv_uint(j, "owner_offcpu_announced", r->owner_off_announced);
	lb_json_kv_uint(j, "owner_offcpu_held", r->owner_off_held);
	lb_json_object_end(j);
}

/* A run's list_lock acquisitions by site (enum lb_slub_site). */
static void json_sites(struct lb_json *j, const struct lb_rt_run *r)
{
	lb_json_key(j, "list_lock_sites");
	lb_json_object_begin(j);
	for (int k = 0; k < LB_SLUB_SITES; k++)
		lb_json_kv_uint(j, lb_slub_site_name(k), r->site_acquires[k]);
	lb_json_key(j, "partial_take_objects_head_data");
	lb_json_array_begin(j);
	lb_json_uint(j, r->partial_take_objs[0]);
	lb_json_uint(j, r->partial_take_objs[1]);
	lb_json_array_end(j);
	const uint64_t *arr[4] = { r->refills, r->cpu_partial_puts, r->cpu_partial_refills,
				   r->slow_frees };
	static const char *const keys[4] = { "refills_head_data", "cpu_partial_puts_head_data",
					     "cpu_partial_refills_head_data",
					     "slow_frees_head_data" };
	for (int k = 0; k < 4; k++) {
		lb_json_key(j, keys[k]);
		lb_json_array_begin(j);
		lb_json_uint(j, arr[k][0]);
		lb_json_uint(j, arr[k][1]);
		lb_json_array_end(j);
	}
	lb_json_object_end(j);
}

/* The load's gauges (print_load_gauges), into a run's object. */
static void json_load(struct lb_json *j, const struct lb_rt_run *r)
{
	lb_json_key(j, "messages_in_flight");
	lb_json_object_begin(j);
	lb_json_kv_double(j, "mean", r->inflight.mean);
	lb_json_kv_uint(j, "max", r->inflight.max);
	lb_json_kv_uint(j, "samples", r->inflight.samples);
	lb_json_object_end(j);
	lb_json_kv_uint(j, "sends_full", r->sends_full);
	lb_json_kv_uint(j, "sender_cpu_ns", r->sender_cpu_ns);
	lb_json_kv_uint(j, "receiver_cpu_ns", r->receiver_cpu_ns);
}

void lb_rt_write_json(FILE *out, const struct lb_rt_config *cfg, const struct lb_rt_facts *f,
		      struct lb_rt_run *const *runs_by_lock, size_t nrepeat,
		      struct lb_rt_thread_stats *const *merged_by_lock, unsigned int nrt,
		      bool interrupted)
{
	struct lb_hostinfo host;
	struct lb_json j;
	lb_hostinfo_get(&host);
	lb_schema_begin_file(&j, out, &lb_schema_rt, &host, f->command);
	lb_json_key(&j, "list_locks");
	lb_json_array_begin(&j);
	for (size_t i = 0; i < cfg->nlocks; i++)
		lb_json_string(&j, cfg->locks[i]->name);
	lb_json_array_end(&j);
	lb_json_kv_bool(&j, "compare", cfg->compare);
	lb_json_kv_string(&j, "load_mode", cfg->process_mode ? "process" : "threads");
	lb_json_kv_uint(&j, "repeat", cfg->repeat);
	lb_json_kv_uint(&j, "histogram_us", cfg->histogram_us);
	lb_json_kv_bool(&j, "mlockall", cfg->mlockall);
	lb_json_kv_double(&j, "rt_spin_budget_us", (double)cfg->spin_budget_ns / 1e3);
	lb_json_kv_double(&j, "duration_s", cfg->groups ? 0 : (double)cfg->duration_ns / LB_NS_PER_S);
	lb_json_kv_bool(&j, "sched_fifo_permitted", f->fifo_permitted);
	lb_json_kv_bool(&j, "rt_threads_fifo", f->fifo_permitted && !cfg->sched_other);
	lb_json_kv_int(&j, "load_fifo_prio", f->fifo_permitted ? cfg->load_prio : 0);
	lb_json_kv_uint(&j, "cpu_partial", cfg->cpu_partial);
	lb_json_kv_string(&j, "cpu_slab",
			  cfg->cpu_slab == 0 ? "thread" : cfg->cpu_slab == 1 ? "percpu" : "local-lock");
	lb_json_kv_uint(&j, "min_partial", cfg->min_partial);
	lb_json_kv_string(&j, "slub_cpu_partial", cfg->slub_cpu_partial ? "sysfs-0" : "off");
	lb_json_kv_string(&j, "slab_caches",
			  lb_rt_skb_kernel_name((enum lb_rt_skb_kernel)cfg->slab_caches));
	lb_json_kv_string(&j, "preset", cfg->preset ? cfg->preset : "");
	lb_json_kv_string(&j, "preemption", f->preempt_model);
	if (lb_load_average_at_start() >= 0)
		lb_json_kv_double(&j, "load_average_before", lb_load_average_at_start());
	lb_steal_json(&j, f->steal_s);
	lb_json_kv_int(&j, "sched_rt_runtime_us", f->rt_runtime_us);
	lb_json_kv_int(&j, "sched_rt_period_us", f->rt_period_us);
	lb_json_kv_string(&j, "clocksource", f->clocksource);
	lb_json_kv_bool(&j, "memory_locked", f->mlocked);
	lb_json_kv_bool(&j, "cpu_dma_latency_zero", f->dma_latency_fd >= 0);
	lb_json_object_end(&j);

	lb_json_key(&j, "results");
	lb_json_array_begin(&j);
	for (size_t l = 0; l < cfg->nlocks; l++) {
		const struct lb_rt_run *runs = runs_by_lock[l];
		lb_json_object_begin(&j);
		lb_json_key(&j, "params");
		lb_json_object_begin(&j);
		lb_json_kv_string(&j, "list_lock", cfg->locks[l]->name);
		lb_json_kv_uint(&j, "groups", cfg->groups);
		lb_json_kv_uint(&j, "fds", cfg->fds);
		lb_json_kv_uint(&j, "loops", cfg->loops);
		lb_json_kv_uint(&j, "size", cfg->datasize);
		lb_json_kv_string(&j, "ipc", cfg->pipe ? "pipe" : "socket");
		lb_json_kv_uint(&j, "rt_threads", cfg->rt_threads);
		lb_json_kv_int(&j, "rt_prio", f->fifo_permitted && !cfg->sched_other ? cfg->priority
										   : 0);
		lb_json_kv_uint(&j, "interval_us", cfg->interval_us);
		lb_json_kv_bool(&j, "rt_alloc", cfg->rt_alloc);
		lb_json_object_end(&j);
		if (nrepeat && runs[0].describe[0])
			lb_json_kv_string(&j, "list_lock_describe", runs[0].describe);
		if (l > 0 && nrepeat) {
			/* The elapsed gap against the first lock and whether the
			 * kernel's mechanism (CPUs left idle) carries it. */
			struct elapsed_split sp;
			split_elapsed(runs_by_lock[0], runs, nrepeat, &sp);
			lb_json_key(&j, "vs_first");
			lb_json_object_begin(&j);
			lb_json_kv_string(&j, "list_lock", cfg->locks[0]->name);
			lb_json_kv_double(&j, "elapsed_ratio", sp.ratio);
			lb_json_kv_double(&j, "cpu_work_ratio", sp.work);
			lb_json_kv_double(&j, "idle_factor", sp.idle);
			lb_json_kv_double(&j, "idle_share", sp.idle_share);
			struct running_split rsp;
			split_running(runs_by_lock[0], runs, nrepeat, &rsp);
			lb_json_kv_double(&j, "running2plus_share_first", rsp.lo[0]);
			lb_json_kv_double(&j, "running2plus_share", rsp.lo[1]);
			lb_json_kv_string(&j, "running_mechanism", running_gate_name(rsp.gate));
			lb_json_kv_string(&j, "elapsed_mechanism",
					  !sp.gauged		     ? "not gauged"
					  : !elapsed_mechanism(&sp) ? "absent"
					  : rsp.gate == RUN_PRESENT ? "present"
					  : rsp.gate == RUN_UNKNOWN ? "not known"
								    : "absent");
			lb_json_object_end(&j);
		}
		lb_json_key(&j, "summary");
		lb_json_object_begin(&j);
		for (int m = 0; m < M_COUNT; m++) {
			double *v = malloc(sizeof(double) * (nrepeat ? nrepeat : 1));
			size_t k = 0;
			for (size_t r = 0; v && r < nrepeat; r++) {
				double x = metric(&runs[r], (enum rt_metric)m);
				if (!isnan(x))
					v[k++] = x;
			}
			struct lb_summary s;
			double mean;
			double sem = k ? lb_rt_sem(v, k, &mean) : 0;
			lb_summarize(v, k, &s);
			lb_json_key(&j, rt_metrics[m].key);
			lb_json_object_begin(&j);
			lb_schema_summary_fields(&j, &s);
			lb_json_kv_double(&j, "sem", sem);
			lb_json_kv_double(&j, "sem_pct", s.mean != 0 ? 100.0 * sem / fabs(s.mean) : 0);
			lb_json_object_end(&j);
			free(v);
		}
		lb_json_object_end(&j);
		lb_json_key(&j, "runs");
		lb_json_array_begin(&j);
		for (size_t r = 0; r < nrepeat; r++) {
			lb_json_object_begin(&j);
			lb_json_kv_uint(&j, "repeat_index", runs[r].repeat_index);
			for (int m = 0; m < M_COUNT; m++)
				lb_json_kv_double(&j, rt_metrics[m].key, metric(&runs[r], (enum rt_metric)m));
			json_running(&j, &runs[r]);
			json_sites(&j, &runs[r]);
			json_load(&j, &runs[r]);
			lb_json_key(&j, "rt");
			lb_json_array_begin(&j);
			for (unsigned int i = 0; i < runs[r].nrt; i++)
				json_rt_thread(&j, i, &runs[r].rt[i], 0);
			lb_json_array_end(&j);
			lb_json_object_end(&j);
		}
		lb_json_array_end(&j);
		lb_json_key(&j, "rt_threads");
		lb_json_array_begin(&j);
		for (unsigned int i = 0; i < nrt; i++)
			json_rt_thread(&j, i, &merged_by_lock[l][i], cfg->histogram_us);
		lb_json_array_end(&j);
		lb_json_object_end(&j);
	}
	lb_json_array_end(&j);
	if (interrupted)
		lb_json_kv_bool(&j, "interrupted", true);
	lb_json_object_end(&j);
	fputc('\n', out);
}

void lb_rt_write_csv(FILE *out, const struct lb_rt_config *cfg,
		     struct lb_rt_run *const *runs_by_lock, size_t nrepeat)
{
	fprintf(out, "list_lock,groups,fds,loops,size,ipc,rt_threads,rt_alloc,repeat_index");
	for (int m = 0; m < M_COUNT; m++)
		fprintf(out, ",%s", rt_metrics[m].key);
	fputc('\n', out);
	for (size_t l = 0; l < cfg->nlocks; l++)
		for (size_t r = 0; r < nrepeat; r++) {
			const struct lb_rt_run *run = &runs_by_lock[l][r];
			fprintf(out, "%s,%u,%u,%u,%u,%s,%u,%d,%u", cfg->locks[l]->name, cfg->groups,
				cfg->fds, cfg->loops, cfg->datasize, cfg->pipe ? "pipe" : "socket",
				cfg->rt_threads, cfg->rt_alloc ? 1 : 0, run->repeat_index);
			for (int m = 0; m < M_COUNT; m++) {
				double v = metric(run, (enum rt_metric)m);
				if (isnan(v))
					fprintf(out, ",");
				else
					fprintf(out, ",%.9g", v);
			}
			fputc('\n', out);
		}
}
