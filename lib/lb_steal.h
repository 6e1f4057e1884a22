/* SPDX-License-Identifier: MIT */
/*
 * lb_steal.h - steal time: CPU time a hypervisor gave to other guests while
 * this machine's vCPUs wanted it (/proc/stat's "cpu" line, 8th field).  A run
 * with steal time measured a machine that was not all there: lock hand-overs
 * wait for preempted vCPUs (FIFO spinlocks most), so the reports print it
 * when it is not zero and compare warns when two files differ in it.
 */
#ifndef LB_STEAL_H
#define LB_STEAL_H

#include <stdint.h>
#include <stdio.h>

struct lb_json;

/* The steal field (clock ticks, all CPUs together) of /proc/stat text: 0 and
 * *ticks, or -1 when the text has no aggregate "cpu" line with at least 8
 * numbers (kernels before 2.6.11 have 7: -1 too). */
int lb_steal_parse(const char *text, uint64_t *ticks);

/* Steal ticks now from /proc/stat; -1 where it cannot be read. */
int64_t lb_steal_ticks_now(void);

/* Seconds of steal between two lb_steal_ticks_now() reads (all CPUs
 * together); -1 when either read failed, 0 when the counter went back. */
double lb_steal_seconds(int64_t before, int64_t after);

/* "PREFIXsteal time: S s over the run ..." and a newline when steal_s > 0;
 * nothing otherwise (reports stay as they were on machines without it). */
void lb_steal_note(FILE *out, const char *prefix, double steal_s);

/* "steal_s": seconds (0 included), or null when unknown (< 0). */
void lb_steal_json(struct lb_json *j, double steal_s);

#endif /* LB_STEAL_H */
