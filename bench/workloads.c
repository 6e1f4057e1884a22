/* SPDX-License-Identifier: MIT */
/*
 * workloads.c - the command table and the schema list, both generated from
 * the command manifest (bench/meson.build -> workloads_xlist.h), and the checks
 * of the descriptors.
 */
#include "workload.h"
#include "schemas.h"
#include "workloads_xlist.h"
#include "lb_schema.h"
#include "../preload/preload_schema.h"

#include <string.h>

#define X(sym) extern const struct lb_workload lb_workload_##sym;
LB_WORKLOADS_XLIST
#undef X

#define X(sym) &lb_workload_##sym,
const struct lb_workload *const lb_workloads[] = { LB_WORKLOADS_XLIST };
#undef X
const size_t lb_nworkloads = sizeof(lb_workloads) / sizeof(lb_workloads[0]);

/* Every workload's schema, sim's second one (`sim --workload aim7`,
 * bench/sim/sim_aim7.c), then the preload's (preload/preload_schema.c). */
#define X(sym) extern const struct lb_workload_schema lb_schema_##sym;
LB_SCHEMAS_XLIST
#undef X
extern const struct lb_workload_schema lb_schema_sim_aim7;
#define X(sym) &lb_schema_##sym,
const struct lb_workload_schema *const lb_workload_schemas[] = {
	LB_SCHEMAS_XLIST &lb_schema_sim_aim7, &lb_schema_preload, NULL,
};
#undef X

const struct lb_workload *lb_workload_find(const char *name)
{
	for (size_t i = 0; i < lb_nworkloads; i++)
		if (!strcmp(lb_workloads[i]->name, name))
			return lb_workloads[i];
	return NULL;
}

const struct lb_workload_schema *lb_schema_find(const char *name)
{
	for (size_t i = 0; lb_workload_schemas[i]; i++)
		if (!strcmp(lb_workload_schemas[i]->name, name))
			return lb_workload_schemas[i];
	return NULL;
}

int lb_workload_check(FILE *err)
{
	int faults = lb_workload_check_table(lb_workloads, lb_nworkloads, lb_workload_schemas, err);
	const struct lb_workload *const bare[] = { &lb_workload_default };
	faults |= lb_workload_check_table(bare, 1, lb_workload_schemas, err);
	return faults;
}
