/* SPDX-License-Identifier: MIT */
/*
 * workload_check.c - what a command descriptor must have (workload.h),
 * checked at start-up over the generated table and by
 * tests/test_workloads.c over descriptors with a field left out.
 */
#include "workload.h"
#include "lb_schema.h"

#include <stdbool.h>
#include <string.h>

static bool schema_listed(const struct lb_workload_schema *s,
			  const struct lb_workload_schema *const *schemas)
{
	for (size_t i = 0; schemas[i]; i++)
		if (schemas[i] == s)
			return true;
	return false;
}

/* The faults of one descriptor, one line each; how many. */
static int check_one(FILE *err, const struct lb_workload *w,
		     const struct lb_workload_schema *const *schemas)
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
	if (!w->schema)
		return faults;
	const char *schema = w->schema->name ? w->schema->name : "(unnamed)";
	if (!w->schema->name || !w->schema->nmetrics || !schema_listed(w->schema, schemas)) {
		fprintf(err, "workload '%s': schema %s is not in the manifest's schema list or has "
			"no name or metrics\n", name, schema);
		faults++;
	}
	if (!w->main && !w->outputs) {
		fprintf(err, "workload '%s': writes schema %s but names no outputs\n", name, schema);
		faults++;
	}
	return faults;
}

int lb_workload_check_table(const struct lb_workload *const *table, size_t n,
			    const struct lb_workload_schema *const *schemas, FILE *err)
{
	int faults = 0;
	for (size_t i = 0; i < n; i++) {
		faults += check_one(err, table[i], schemas);
		for (size_t k = 0; k < i; k++)
			if (table[i]->name && table[k]->name && !strcmp(table[i]->name, table[k]->name)) {
				fprintf(err, "workload '%s': two descriptors share the name\n",
					table[i]->name);
				faults++;
			}
	}
	return faults ? -1 : 0;
}
