/* SPDX-License-Identifier: MIT */
/*
 * lb_die.h - abort on states that cannot happen (a failed unlock of a held
 * pthread mutex, say).  Prints where and why, then aborts so a core or a
 * sanitizer report shows the stack.  Never used for user errors: those get
 * a one-line message and exit status 2 (lb_usage_error in lb_cli.h).
 */
#ifndef LB_DIE_H
#define LB_DIE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define lb_die(err, what)                                                      \
	do {                                                                   \
		fprintf(stderr, "lockbench: fatal: %s:%d: %s: %s: %s\n",       \
			__FILE__, __LINE__, __func__, (what), strerror(err));  \
		abort();                                                       \
	} while (0)

#endif /* LB_DIE_H */
