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

#include <string.h>

#define X(sym) extern const struct lb_workload lb_workload_##sym;
LB_WORKLOADS_XLIST
#undef X

#define X(sym) &lb_workload_##sym,
const struct lb_workload *const lb_workloads[] = { LB_WORKLOADS_XLIST };
#undef X
const size_t lb_nworkloads = sizeof(lb_workloads) / sizeof(lb_workloads[0]);

/* Every workload's schema, then the preload's (preload/preload_schema.c). */
#define X(sym) &lb_schema_##sym,
const struct lb_workload_schema *const lb_workload_schemas[] = {
	LB_SCHEMAS_XLIST &lb_schema_preload, NULL,
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

static bool schema_listed(const struct lb_workload_schema *s)
{
	for (size_t i = 0; lb_workload_schemas[i]; i++)
		if (lb_workload_schemas[i] == s)
			return true;
	return false;
}

/* The faults of one descriptor, one line each; how many. */
static int check_one(FILE *err, const struct lb_workload *w)
{
	const char *name = w->name && *w->name ? w->name : "(unnamed)";
	const char *missing[8];
	int n = 0;
	if (!w->name || !*w->name)
		missing[n++] = "name";
	if (!w->summary || !*w->summary)
		missing[n++] = "summary";
	if (!w->main) {
		if (!w->parse)
			missing[n++] = "parse";
		if (!w->run)
			missing[n++] = "run";
		if (!w->report)
			missing[n++] = "report";
		if (!w->config_size)
			missing[n++] = "config_size";
		if (!w->options)
			missing[n++] = "options";
	}
	for (int i = 0; i < n; i++)
		fprintf(err, "workload '%s': descriptor has no %s\n", name, missing[i]);
	int faults = n;
	if (w->schema && (!w->schema->name || !w->schema->nmetrics || !schema_listed(w->schema))) {
		fprintf(err, "workload '%s': schema %s is not in the manifest's schema list or has "
			"no name or metrics\n", name, w->schema->name ? w->schema->name : "(unnamed)");
		faults++;
	}
	if (!w->main && w->schema && !w->outputs) {
		fprintf(err, "workload '%s': writes schema %s but names no outputs\n", name,
			w->schema->name);
		faults++;
	}
	return faults;
}

int lb_workload_check(FILE *err)
{
	int faults = 0;
	for (size_t i = 0; i < lb_nworkloads; i++) {
		faults += check_one(err, lb_workloads[i]);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(lb_workloads[i]->name, lb_workloads[k]->name)) {
				fprintf(err, "workload '%s': two descriptors share the name\n",
					lb_workloads[i]->name);
				faults++;
			}
	}
	faults += check_one(err, &lb_workload_default);
	return faults ? -1 : 0;
}
