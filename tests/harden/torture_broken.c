/* SPDX-License-Identifier: MIT */
/*
 * torture_broken.c - locktorture with the deliberately broken locks of
 * broken_locks.h and the broken copies of the real locks of broken_copies.h
 * added to --type (test program only; the production locktorture never sees
 * them).  The real locks are locktorture's own copy, with the --perturb hooks.
 */
#include "broken_copies.h"
#include "broken_locks.h"
#include "options.h"
#include "run.h"
#include "lb_cli.h"

#include <stdio.h>

#define N_COPIES 5

int main(int argc, char **argv)
{
	/* broken_locks.h's list, then the copies; NULL-terminated. */
	static const struct lb_lock_ops *all[64];
	size_t n = 0;
	for (; lb_test_broken_locks[n] && n < 64 - N_COPIES - 1; n++)
		all[n] = lb_test_broken_locks[n];
	all[n++] = &lb_broken_pv_steal_bit_ops;
	all[n++] = &lb_broken_pv_halt_no_recheck_ops;
	all[n++] = &lb_broken_mutex_pass_on_ops;
	all[n++] = &lb_broken_mutex_wait_private_ops;
	all[n++] = &lb_broken_qrwlock_seq_after_word_ops;
	all[n] = NULL;
	struct lb_torture_config cfg;
	lb_cli_set_prog("locktorture");
	setvbuf(stdout, NULL, _IOLBF, 0);
	lb_torture_parse_options_extra(argc, argv, &cfg, all);
	return lb_torture_run(&cfg);
}
