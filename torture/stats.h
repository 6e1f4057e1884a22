/* SPDX-License-Identifier: MIT */
/*
 * stats.h - the output lines that must stay byte-compatible with the
 * kernel's locktorture (kernel/locking/locktorture.c): the Writes/Reads statistics
 * lines and the Start/End banners.
 */
#ifndef LB_TORTURE_STATS_H
#define LB_TORTURE_STATS_H

#include <stddef.h>

#include "context.h"

/* Sum, max and min of n_lock_acquired and whether any n_lock_fail is set. */
struct lb_torture_totals {
	long long sum;
	long max, min;
	long fails;   /* sum of n_lock_fail (port addition, not in the line) */
	bool fail;
};

/* Snapshot the writers' (write = true) or the readers' counters. */
void lb_torture_collect(const struct lb_torture_run *run, bool write,
			struct lb_torture_totals *out);

/*
 * "Writes:  Total: %lld  Max/Min: %ld/%ld %s  Fail: %d %s\n" (or "Reads ");
 * "???" when onoff is off and max/2 > min, "!!!" after a failure.
 */
int lb_torture_format_stats(char *buf, size_t len, bool write,
			    const struct lb_torture_totals *t, bool onoff);

/* "<type>-torture:--- <tag><debug>: acq_writer_lim=... writer_fifo=...\n" */
int lb_torture_format_banner(char *buf, size_t len, const struct lb_torture_config *cfg,
			     const char *tag, bool debug);

/*
 * Print the Writes line and, for locks with a read side, the Reads line.
 * Returns true when either showed a failure (the caller counts an error).
 */
bool lb_torture_print_stats(const struct lb_torture_run *run);

void lb_torture_print_banner(const struct lb_torture_run *run, const char *tag);

#endif /* LB_TORTURE_STATS_H */
