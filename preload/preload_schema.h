/* SPDX-License-Identifier: MIT */
/* preload_schema.h - the lockbench-preload JSON schema (preload_schema.c). */
#ifndef LB_PRELOAD_SCHEMA_H
#define LB_PRELOAD_SCHEMA_H

#include "lb_schema.h"

/* contended, contended_pct, acquisitions, trylock_failed, wait_ns,
 * max_wait_ns, avg_wait_ns, hold_ns, max_hold_ns, avg_hold_ns, mutexes: in
 * this order (preload_stats.c indexes them). */
#define LBP_NMETRICS 11

extern const struct lb_workload_schema lb_schema_preload;

#endif /* LB_PRELOAD_SCHEMA_H */
