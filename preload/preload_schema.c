/* SPDX-License-Identifier: MIT */
/*
 * preload_schema.c - the lockbench-preload result-file schema: one cell per
 * lock class, as lockstat groups them.  A class is the call site of the
 * first lock call made on a heap mutex ("symbol+0xoff (object)", or
 * "object+0xoff" where the object has no symbol there), or a static mutex
 * itself ("&" and the same form of its own address), which stays the
 * same from run to run while heap addresses do not; so `lockbench compare`
 * matches the classes of two runs (glibc's mutex via pthread-mutex against
 * another lock, say) on params {class}.  The lock is in "config".  Also
 * linked into lockbench (bench/workloads.c) so compare/plot know its metrics.
 *
 * Version 2: cells are classes (version 1 had one cell per mutex, keyed by
 * its address, which matched nothing across runs).
 */
#include "preload_schema.h"

static const char *const lbp_params[] = { "class", NULL };

static const struct lb_metric_desc lbp_metrics[LBP_NMETRICS] = {
	{ "contended", "", LB_BETTER_LOWER, "contended acquisitions" },
	{ "contended_pct", "%", LB_BETTER_LOWER, "contended share" },
	{ "acquisitions", "", LB_BETTER_NONE, "acquisitions" },
	{ "trylock_failed", "", LB_BETTER_NONE, "failed trylocks and timed-out timed locks" },
	{ "wait_ns", "ns", LB_BETTER_LOWER, "total wait" },
	{ "max_wait_ns", "ns", LB_BETTER_LOWER, "longest wait" },
	{ "avg_wait_ns", "ns", LB_BETTER_LOWER, "mean wait per contended acquisition" },
	{ "hold_ns", "ns", LB_BETTER_NONE, "total hold" },
	{ "max_hold_ns", "ns", LB_BETTER_NONE, "longest hold" },
	{ "avg_hold_ns", "ns", LB_BETTER_NONE, "mean hold" },
	{ "mutexes", "", LB_BETTER_NONE, "mutexes in the class" },
};

const struct lb_workload_schema lb_schema_preload = {
	LB_SCHEMA_TABLES("lockbench-preload", 2, lbp_params, lbp_metrics),
};
