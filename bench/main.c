/* SPDX-License-Identifier: MIT */
/*
 * main.c - `lockbench <command> [options]`, dispatched from the command
 * table the manifest generates (workloads.c); --help walks the same table.
 * The registry is checked before anything
 * else so a malformed lock entry can never produce figures.
 */
#include "workload.h"
#include "lb_cli.h"
#include "lb_registry.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: lockbench [COMMAND [options]]\n\n"
		     "With no command: the default comparison, a few common locks at 1 and\n"
		     "NCPU threads, medians of 3 short runs (8 s measured on the 2-CPU guest\n"
		     "at load 47); its header names\n"
		     "what it leaves out and the command for the full comparison.\n\nCommands:\n");
	for (size_t i = 0; i < lb_nworkloads; i++)
		fprintf(out, "  %-8s %s\n", lb_workloads[i]->name, lb_workloads[i]->summary);
	fprintf(out, "\n'lockbench COMMAND --help' describes each command's options.\n"
		     "locktorture is the separate stress/torture driver.\n");
}

int main(int argc, char **argv)
{
	lb_cli_set_prog("lockbench");
	if (lb_registry_check(stderr)) {
		fprintf(stderr, "lockbench: the lock registry is inconsistent (see above)\n");
		return 1;
	}
	if (lb_workload_check(stderr)) {
		fprintf(stderr, "lockbench: the command table is inconsistent (see above)\n");
		return 1;
	}
	if (argc < 2)
		return lb_driver_run(&lb_workload_default, 0, argv);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc > 2)
			lb_usage_error("%s: unexpected argument '%s'; accepted: '%s' alone, or "
				       "'lockbench COMMAND --help'", argv[1], argv[2], argv[1]);
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		if (argc > 2)
			lb_usage_error("%s: unexpected argument '%s'; accepted: '%s' alone", argv[1],
				       argv[2], argv[1]);
		printf("lockbench %s\n", LB_VERSION);
		return 0;
	}
	const struct lb_workload *w = lb_workload_find(argv[1]);
	if (w)
		return lb_driver_run(w, argc - 1, argv + 1);
	/* The accepted list is the table itself, so it can never go stale. */
	char accepted[256] = "";
	for (size_t i = 0; i < lb_nworkloads; i++) {
		strncat(accepted, lb_workloads[i]->name, sizeof(accepted) - strlen(accepted) - 1);
		strncat(accepted, ", ", sizeof(accepted) - strlen(accepted) - 1);
	}
	lb_usage_error("unknown command '%s'; accepted: %s--help, --version", argv[1], accepted);
}
