/* SPDX-License-Identifier: MIT */
/*
 * torture_broken.c - locktorture with the deliberately broken locks of
 * broken_locks.h added to --type (test program only; the production
 * locktorture never sees them).
 */
#include "broken_locks.h"
#include "options.h"
#include "run.h"
#include "lb_cli.h"

#include <stdio.h>

int main(int argc, char **argv)
{
	struct lb_torture_config cfg;
	lb_cli_set_prog("locktorture");
	setvbuf(stdout, NULL, _IOLBF, 0);
	lb_torture_parse_options_extra(argc, argv, &cfg, lb_test_broken_locks);
	return lb_torture_run(&cfg);
}
