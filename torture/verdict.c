/* SPDX-License-Identifier: MIT */
/* verdict.c - a stall's verdict from its evidence (pure; see verdict.h). */
#include "verdict.h"

#include <stdio.h>

/* The hypervisor took a share of the CPUs over the window worth noticing. */
static bool steal_significant(const struct lb_verdict_evidence *e)
{
	if (e->steal_s <= 0 || !e->window_ns || e->ncpus <= 0)
		return false;
	double cpu_s = (double)e->window_ns / 1e9 * e->ncpus;
	return e->steal_s * 1000.0 > cpu_s * LB_VERDICT_STEAL_PERMILLE;
}

/* The CPU time at the normal spin rate that the thread's spins stand for. */
static double spin_ns(const struct lb_verdict_evidence *e, const struct lb_verdict_thread *t)
{
	return e->normal_spins_per_s > 0 ? (double)t->spins / e->normal_spins_per_s * 1e9 : 0.0;
}

/* The spin rate over the window in % of normal; -1 when it cannot be told. */
static double spin_pct(const struct lb_verdict_evidence *e, const struct lb_verdict_thread *t)
{
	if (!t->spins || e->normal_spins_per_s <= 0 || !t->sched_known || !t->cpu_ns)
		return -1.0;
	return spin_ns(e, t) / (double)t->cpu_ns * 100.0;
}

static bool runnable(char s)
{
	return s == 'R' || s == 'D';
}

enum lb_verdict_ran lb_verdict_thread_ran(const struct lb_verdict_evidence *e,
					  const struct lb_verdict_thread *t)
{
	bool counted = t->spins > 0 && e->normal_spins_per_s > 0;
	bool still = t->still_ns * 4 <= e->window_ns; /* spinning in the last quarter */
	if (counted && still && spin_ns(e, t) >= (double)LB_VERDICT_PROOF_NS)
		return LB_RAN_ENOUGH;
	if (counted && !still) {
		/* It stopped spinning: asleep, or it left the counted loop
		 * (took the lock word, say) and then ran on, or did not run. */
		if (t->run_state == 'S')
			return LB_RAN_ASLEEP;
		if (t->sched_known && t->cpu_ns >= t->delay_ns && t->cpu_ns >= LB_VERDICT_PROOF_NS)
			return steal_significant(e) ? LB_RAN_STOLEN : LB_RAN_ENOUGH;
		return LB_RAN_WAITING;
	}
	/* Without a spin count (a wait loop without lb_cpu_relax, a holder)
	 * CPU time is the proof, unless the hypervisor took time meanwhile. */
	if (!counted && t->sched_known && t->cpu_ns >= LB_VERDICT_PROOF_NS)
		return steal_significant(e) ? LB_RAN_STOLEN : LB_RAN_ENOUGH;
	if (t->run_state == 'S')
		return LB_RAN_ASLEEP;
	double pct = spin_pct(e, t);
	if (pct >= 0 && pct < LB_VERDICT_SLOW_PCT)
		return LB_RAN_SLOW;
	if (t->sched_known && t->delay_ns > t->cpu_ns)
		return LB_RAN_WAITING;
	if (steal_significant(e))
		return LB_RAN_STOLEN;
	/* Runnable all along and still little CPU: it waited for one. */
	if (runnable(t->run_state) && t->sched_known)
		return LB_RAN_WAITING;
	return LB_RAN_UNKNOWN;
}

static bool preempted(enum lb_verdict_ran r)
{
	return r == LB_RAN_WAITING || r == LB_RAN_SLOW || r == LB_RAN_STOLEN;
}

/* The holders' part: one that hung, or ran (or slept) and kept the lock. */
static bool judge_holders(const struct lb_verdict_evidence *e, struct lb_verdict *v)
{
	for (int i = 0; i < e->nthreads; i++) {
		const struct lb_verdict_thread *t = &e->threads[i];
		if (!t->holding)
			continue;
		enum lb_verdict_ran r = lb_verdict_thread_ran(e, t);
		if (t->hung || r == LB_RAN_ENOUGH || r == LB_RAN_ASLEEP) {
			*v = (struct lb_verdict){ LB_VERDICT_NOT_RELEASED, i, r, true };
			return true;
		}
		if (preempted(r)) {
			*v = (struct lb_verdict){ LB_VERDICT_PREEMPTED, i, r, false };
			return true;
		}
	}
	return false;
}

struct lb_verdict lb_verdict_judge(const struct lb_verdict_evidence *e)
{
	struct lb_verdict v = { LB_VERDICT_UNKNOWN, -1, LB_RAN_UNKNOWN, true };
	if (e->acquisitions > 0) {
		v.kind = LB_VERDICT_PROGRESS;
		v.failure = false;
		return v;
	}
	if (e->released > 0) {
		v.kind = LB_VERDICT_RELEASED;
		v.failure = false;
		return v;
	}
	if (judge_holders(e, &v))
		return v;
	int asleep = -1, unknown = -1, least = -1, slowest = -1;
	double least_ns = 0, slowest_ns = 0;
	for (int i = 0; i < e->nthreads; i++) {
		const struct lb_verdict_thread *t = &e->threads[i];
		enum lb_verdict_ran r = lb_verdict_thread_ran(e, t);
		/* The execution it showed: spins, or else CPU time. */
		double ran_ns = t->spins ? spin_ns(e, t) : (double)t->cpu_ns;
		if (t->holding)
			unknown = r == LB_RAN_UNKNOWN && unknown < 0 ? i : unknown;
		else if (preempted(r) && (slowest < 0 || ran_ns < slowest_ns))
			slowest = i, slowest_ns = ran_ns;
		else if (r == LB_RAN_ASLEEP && asleep < 0)
			asleep = i;
		else if (r == LB_RAN_UNKNOWN && unknown < 0)
			unknown = i;
		else if (r == LB_RAN_ENOUGH && (least < 0 || ran_ns < least_ns))
			least = i, least_ns = ran_ns;
	}
	if (slowest >= 0)
		return (struct lb_verdict){ LB_VERDICT_PREEMPTED, slowest,
					    lb_verdict_thread_ran(e, &e->threads[slowest]), false };
	if (unknown >= 0)
		return (struct lb_verdict){ LB_VERDICT_UNKNOWN, unknown, LB_RAN_UNKNOWN, true };
	if (asleep >= 0)
		return (struct lb_verdict){ LB_VERDICT_LOST_WAKEUP, asleep, LB_RAN_ASLEEP, true };
	if (least >= 0)
		return (struct lb_verdict){ LB_VERDICT_LOST_HANDOVER, least, LB_RAN_ENOUGH, true };
	return v; /* nobody waiting or holding: nothing to judge */
}

bool lb_verdict_all_asleep(const struct lb_verdict_evidence *e, int workers)
{
	if (e->acquisitions > 0 || e->released > 0 || e->window_ns < LB_VERDICT_ASLEEP_WINDOW_NS ||
	    workers <= 0 || e->nthreads != workers)
		return false;
	for (int i = 0; i < e->nthreads; i++) {
		const struct lb_verdict_thread *t = &e->threads[i];
		bool asleep = t->run_state == 'S' && t->run_state0 == 'S';
		if (t->holding || !t->sched_known || !asleep || t->spins ||
		    t->cpu_ns + t->delay_ns > LB_VERDICT_ASLEEP_RAN_NS)
			return false;
	}
	return true;
}

const char *lb_verdict_name(enum lb_verdict_kind kind)
{
	switch (kind) {
	case LB_VERDICT_PROGRESS: return "progress";
	case LB_VERDICT_RELEASED: return "released";
	case LB_VERDICT_PREEMPTED: return "preempted";
	case LB_VERDICT_LOST_HANDOVER: return "lost hand-over";
	case LB_VERDICT_LOST_WAKEUP: return "lost wake-up";
	case LB_VERDICT_NOT_RELEASED: return "never released";
	case LB_VERDICT_UNKNOWN: return "unknown";
	}
	return "?";
}

static const char *ran_words(enum lb_verdict_ran r)
{
	switch (r) {
	case LB_RAN_ENOUGH: return "ran";
	case LB_RAN_ASLEEP: return "asleep";
	case LB_RAN_WAITING: return "waiting for a CPU";
	case LB_RAN_SLOW: return "charged CPU time the CPU did not really give it";
	case LB_RAN_STOLEN: return "on CPUs the hypervisor took time from";
	case LB_RAN_UNKNOWN: return "not readable";
	}
	return "?";
}

/* "writer 3 (waiting, state R): 0.61 s on a CPU, 4.20 s run delay, 31234
 * spins at 6 % of the normal rate" */
static int describe(char *buf, size_t len, const struct lb_verdict_evidence *e,
		    const struct lb_verdict_thread *t)
{
	int n = snprintf(buf, len, "%s %d (%s, state %c)", t->writer ? "writer" : "reader", t->id,
			 t->hung ? "holding, inject_hang" : t->holding ? "holding" : "waiting",
			 t->run_state ? t->run_state : '?');
	if (t->sched_known && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ": %.2f s on a CPU, %.2f s run delay",
			      (double)t->cpu_ns / 1e9, (double)t->delay_ns / 1e9);
	double pct = spin_pct(e, t);
	if (n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ", %llu spins", (unsigned long long)t->spins);
	if (pct >= 0 && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " at %.0f %% of the normal rate", pct);
	if (t->spins && t->still_ns * 4 > e->window_ns && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ", none in the last %.2f s",
			      (double)t->still_ns / 1e9);
	return n;
}

int lb_verdict_format(char *buf, size_t len, const struct lb_verdict_evidence *e,
		      const struct lb_verdict *v)
{
	char who[256] = "", steal[64] = "";
	const struct lb_verdict_thread *t = v->culprit >= 0 ? &e->threads[v->culprit] : NULL;
	if (t)
		describe(who, sizeof(who), e, t);
	if (e->steal_s >= 0)
		snprintf(steal, sizeof(steal), "; steal %.2f s", e->steal_s);
	double w = (double)e->window_ns / 1e9;
	switch (v->kind) {
	case LB_VERDICT_PROGRESS:
		return snprintf(buf, len, "slow, not stuck: the lock changed hands %lld times in %.1f s",
				e->acquisitions, w);
	case LB_VERDICT_RELEASED:
		return snprintf(buf, len, "slow, not stuck: %d holder(s) let go of the lock in the "
				"last %.1f s, judging again after it", e->released, w);
	case LB_VERDICT_PREEMPTED:
		return snprintf(buf, len, "preempted, not a lock failure: %s was %s over the last "
				"%.1f s: %s%s", t->holding ? "the holder" : "a waiter",
				ran_words(v->culprit_ran), w, who, steal);
	case LB_VERDICT_LOST_HANDOVER:
		return snprintf(buf, len, "a lost hand-over: no holder, and each of the %d waiters "
				"ran over the last %.1f s without getting the lock (the least: %s)%s",
				e->nthreads, w, who, steal);
	case LB_VERDICT_LOST_WAKEUP:
		return snprintf(buf, len, "a lost wake-up: no holder, and %s asleep over the last "
				"%.1f s (%s)%s", t->writer ? "a writer" : "a reader", w, who, steal);
	case LB_VERDICT_NOT_RELEASED:
		return snprintf(buf, len, "a lock never released: %s %s over the last %.1f s and "
				"kept it (%s)%s", t->hung ? "the holder hung on purpose," : "the holder",
				ran_words(v->culprit_ran), w, who, steal);
	case LB_VERDICT_UNKNOWN:
		break;
	}
	return snprintf(buf, len, "a lost hand-over or a livelock (no scheduler evidence%s%s)",
			t ? " for " : "", t ? who : "");
}
