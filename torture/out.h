/* SPDX-License-Identifier: MIT */
/*
 * out.h - locktorture's standard output, and its progress on a terminal.
 *
 * Every line locktorture prints while its workers run goes through
 * lb_torture_printf(), from any thread.  On a terminal a status line
 * (lib/lb_progress: "[1/1] tas, 8 writers, 0 readers: 0:04 elapsed, ETA
 * 0:26", redrawn every second) shows the test is alive between the
 * kernel-format lines, which may be a stat_interval (60 s) apart; each of
 * those lines clears it first, so the two never share a line.  Off a
 * terminal there is no status line at all: the kernel-format lines are the
 * log, and a one-step run has no step lines to add to it.
 */
#ifndef LB_TORTURE_OUT_H
#define LB_TORTURE_OUT_H

#include <stdint.h>

/* The status line of a test of duration_ns (0: until a signal), on a
 * terminal only; a -P worker process prints plainly. */
void lb_torture_out_begin(const char *what, uint64_t duration_ns);
/* The test is over: the status line is cleared and stays off; workers may
 * still print (plainly). */
void lb_torture_out_stop(void);

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
void lb_torture_printf(const char *fmt, ...);

#endif /* LB_TORTURE_OUT_H */
