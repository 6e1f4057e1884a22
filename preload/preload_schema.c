/* SPDX-License-Identifier: MIT */
/*
 * preload_schema.c - the lockbench-preload result-file schema: one cell per
 * taken-over mutex (params: lock, mutex address, rank by contention).  Also
 * linked into lockbench (bench/schemas.c) so compare/plot know its metrics.
 */
#include "preload_schema.h"

static const char *const lbp_params[] = { "lock", "mutex", "rank", NULL };

static const struct lb_metric_desc lbp_metrics[LBP_NMETRICS] = {
	{ "acquisitions", "", LB_BETTER_NONE, "acquisitions" },
	{ "contended", "", LB_BETTER_LOWER, "contended acquisitions" },
	{ "contended_pct", "%", LB_BETTER_LOWER, "contended share" },
	{ "trylock_failed", "", LB_BETTER_NONE, "failed trylocks" },
	{ "wait_ns", "ns", LB_BETTER_LOWER, "total wait" },
	{ "max_wait_ns", "ns", LB_BETTER_LOWER, "longest wait" },
	{ "hold_ns", "ns", LB_BETTER_NONE, "total hold" },
	{ "max_hold_ns", "ns", LB_BETTER_NONE, "longest hold" },
};

const struct lb_workload_schema lb_schema_preload = {
	.name = "lockbench-preload",
	.version = 1,
	.params = lbp_params,
	.metrics = lbp_metrics,
	.nmetrics = sizeof(lbp_metrics) / sizeof(lbp_metrics[0]),
};

