/* SPDX-License-Identifier: MIT */
/*
 * main.c - `lockbench <workload> [options]`, dispatched from one table;
 * --help walks the same table.  The registry is checked before anything
 * else so a malformed lock entry can never produce figures.
 */
#include "micro/micro.h"
#include "compare/compare.h"
#include "plot/plot.h"
#include "lb_cli.h"
#include "lb_registry.h"
#include "rt/rt.h"

#include <stdio.h>
#include <string.h>

struct lb_command {
	const char *name;
	const char *summary;
	int (*fn)(int argc, char **argv);
};

static const struct lb_command commands[] = {
	{ "bench", "fixed-time throughput, fairness and latency of locks", lb_cmd_bench },
	{ "list", "the registered locks (--json for machine-readable)", lb_cmd_list },
	{ "aim7", "AIM7/re-aim work-alike: jobs/min of a simulated kernel on the locks", lb_cmd_aim7 },
	{ "compare", "result files side by side: deltas, Welch t and U test verdicts", lb_cmd_compare },
	{ "plot", "pictures of result files through gnuplot (SVG, PNG)", lb_cmd_plot },
	{ "rt", "hackbench + cyclictest on a SLUB-like allocator: raw vs PI list_lock", lb_cmd_rt },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: lockbench [COMMAND [options]]\n\n"
		     "With no command: the default comparison, a few common locks at 1 and\n"
		     "NCPU threads, medians of 3 short runs (under 5 s); its header names\n"
		     "what it leaves out and the command for the full comparison.\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
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
	if (argc < 2)
		return lb_cmd_default(argc, argv);
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
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	/* The accepted list is the table itself, so it can never go stale. */
	char accepted[256] = "";
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		strncat(accepted, commands[i].name, sizeof(accepted) - strlen(accepted) - 1);
		strncat(accepted, ", ", sizeof(accepted) - strlen(accepted) - 1);
	}
	lb_usage_error("unknown command '%s'; accepted: %s--help, --version", argv[1], accepted);
}
