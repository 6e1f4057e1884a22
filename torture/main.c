/* SPDX-License-Identifier: MIT */
/*
 * main.c - locktorture: the userspace port of the kernel's locktorture.
 * Parses the options, checks the lock registry, runs one test.
 */
#include "options.h"
#include "run.h"
#include "lb_cli.h"
#include "lb_registry.h"

#include <stdio.h>

int main(int argc, char **argv)
{
	struct lb_torture_config cfg;

	lb_cli_set_prog("locktorture");
	/* Line-buffered even into a pipe: logs stay in order and complete. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (lb_registry_check(stderr)) {
		fprintf(stderr, "locktorture: the lock registry is inconsistent\n");
		return 1;
	}
	lb_torture_parse_options(argc, argv, &cfg);
	return lb_torture_run(&cfg);
}
