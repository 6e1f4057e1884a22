/* SPDX-License-Identifier: MIT */
/*
 * test_workloads.c - lb_workload_check_table() (bench/workload_check.c)
 * refuses a command descriptor with any required field left out, two
 * descriptors of one name, and a schema missing from the schema list; a
 * complete workload and a complete tool pass.  TAP.
 */
#include "workload.h"
#include "lb_opt.h"
#include "lb_schema.h"

#include <stdio.h>
#include <string.h>

static const struct lb_metric_desc metrics[] = { { "x", "ns", LB_BETTER_LOWER, "x" } };
static const struct lb_workload_schema schema = { .name = "lockbench-t", .version = 1,
						  .metrics = metrics, .nmetrics = 1 };
static const struct lb_workload_schema unlisted = { .name = "lockbench-u", .version = 1,
						    .metrics = metrics, .nmetrics = 1 };
static const struct lb_workload_schema *const schemas[] = { &schema, NULL };
static const struct lb_opt_cmd options = { .name = "lockbench t" };

static void parse(int argc, char **argv, void *cfg)
{
	(void)argc, (void)argv, (void)cfg;
}
static void outputs(const void *cfg, struct lb_output_request req[LB_WORKLOAD_MAX_OUTPUTS])
{
	(void)cfg, (void)req;
}
static int stage(struct lb_run *run)
{
	(void)run;
	return 0;
}
static int tool(int argc, char **argv)
{
	(void)argc, (void)argv;
	return 0;
}

static const struct lb_workload complete = {
	.name = "t", .summary = "a test workload", .options = &options, .schema = &schema,
	.config_size = 8, .parse = parse, .outputs = outputs, .run = stage, .report = stage,
};
static const struct lb_workload a_tool = { .name = "u", .summary = "a tool", .main = tool };

static int tests;
static int failures;

/* Checks `w` alone; `expect` is the fault text that must appear, or NULL
 * for "passes". */
static void expect_check(const char *what, const struct lb_workload *w, const char *expect)
{
	char buf[1024] = "";
	FILE *err = fmemopen(buf, sizeof(buf) - 1, "w");
	const struct lb_workload *const table[] = { w };
	int rc = lb_workload_check_table(table, 1, schemas, err);
	fclose(err);
	bool ok = expect ? rc == -1 && strstr(buf, expect) : rc == 0 && !*buf;
	printf("%s %d - %s%s%s\n", ok ? "ok" : "not ok", ++tests, what, ok ? "" : ": got ",
	       ok ? "" : (*buf ? buf : "nothing\n"));
	failures += !ok;
}

int main(void)
{
	printf("TAP version 13\n");
	expect_check("a complete workload passes", &complete, NULL);
	expect_check("a complete tool passes", &a_tool, NULL);
	struct lb_workload w;
	static const char *const fields[] = { "name", "summary", "parse", "run",
					      "report", "config_size", "options" };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		w = complete;
		const char *f = fields[i];
		if (!strcmp(f, "name")) w.name = NULL;
		else if (!strcmp(f, "summary")) w.summary = "";
		else if (!strcmp(f, "parse")) w.parse = NULL;
		else if (!strcmp(f, "run")) w.run = NULL;
		else if (!strcmp(f, "report")) w.report = NULL;
		else if (!strcmp(f, "config_size")) w.config_size = 0;
		else w.options = NULL;
		char what[64], expect[64];
		snprintf(what, sizeof(what), "a workload without %s is refused", f);
		snprintf(expect, sizeof(expect), "descriptor has no %s", f);
		expect_check(what, &w, expect);
	}
	w = complete;
	w.outputs = NULL;
	expect_check("a workload with a schema and no outputs is refused", &w, "names no outputs");
	w = complete;
	w.schema = &unlisted;
	expect_check("a schema not in the list is refused", &w, "not in the manifest's schema list");

	char buf[512] = "";
	FILE *err = fmemopen(buf, sizeof(buf) - 1, "w");
	const struct lb_workload *const twice[] = { &complete, &a_tool, &complete };
	int rc = lb_workload_check_table(twice, 3, schemas, err);
	fclose(err);
	bool ok = rc == -1 && strstr(buf, "two descriptors share the name");
	printf("%s %d - two descriptors of one name are refused\n", ok ? "ok" : "not ok", ++tests);
	failures += !ok;
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
