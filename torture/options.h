/* SPDX-License-Identifier: MIT */
/*
 * options.h - locktorture's command line: the kernel's module parameters as
 * long options (both --name_with_underscores and --name-with-dashes), plus
 * a few port-only ones, generated into --help from one table.
 */
#ifndef LB_TORTURE_OPTIONS_H
#define LB_TORTURE_OPTIONS_H

#include "context.h"

/*
 * Fill cfg from argv with every default resolved (thread counts, bind
 * lists, CPU count).  --help and --list print and exit(0); any bad value
 * prints one line naming the option and the accepted values and exit(2).
 */
void lb_torture_parse_options(int argc, char **argv, struct lb_torture_config *cfg);

/*
 * The same, with `extra` (NULL-terminated, may be NULL) searched before the
 * registry for --type.  For test programs only: deliberately broken locks
 * live in tests/ and reach the torture this way, never through the registry.
 */
void lb_torture_parse_options_extra(int argc, char **argv, struct lb_torture_config *cfg,
				    const struct lb_lock_ops *const *extra);

#endif /* LB_TORTURE_OPTIONS_H */
