/* SPDX-License-Identifier: MIT */
/* schemas.c - the list of workload schemas (see schemas.h). */
#include "schemas.h"

#include <string.h>

const struct lb_workload_schema *const lb_workload_schemas[] = {
	&lb_schema_bench,
	&lb_schema_rt,
	&lb_schema_slab,
	&lb_schema_aim7,
	&lb_schema_preload,
	&lb_schema_ab,
	NULL,
};

const struct lb_workload_schema *lb_schema_find(const char *name)
{
	for (size_t i = 0; lb_workload_schemas[i]; i++)
		if (!strcmp(lb_workload_schemas[i]->name, name))
			return lb_workload_schemas[i];
	return NULL;
}
