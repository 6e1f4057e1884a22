/* SPDX-License-Identifier: MIT */
/*
 * perf_counters.h - the counters of `perf stat` for this process and every
 * thread it creates afterwards (perf_event_open with inherit = 1): the
 * software events task-clock, context-switches, cpu-migrations and
 * page-faults, and the hardware cycles/instructions where the machine has
 * them (a KVM guest often has none: perf prints "<not supported>").
 */
#ifndef LB_RT_PERF_COUNTERS_H
#define LB_RT_PERF_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>

enum lb_perf_event {
	LB_PERF_TASK_CLOCK, LB_PERF_CONTEXT_SWITCHES, LB_PERF_CPU_MIGRATIONS,
	LB_PERF_PAGE_FAULTS, LB_PERF_CYCLES, LB_PERF_INSTRUCTIONS, LB_PERF_NEVENTS
};

struct lb_perf_counters {
	int fd[LB_PERF_NEVENTS];     /* -1: not counted */
	int err[LB_PERF_NEVENTS];    /* errno of a failed open */
};

/* perf's event names, in enum order. */
extern const char *const lb_perf_event_names[LB_PERF_NEVENTS];

/* Open and start every counter on the calling process; call before the
 * threads to count are created.  Failures are kept per event. */
void lb_perf_open(struct lb_perf_counters *pc);

/* Read (after the counted threads were joined, so their counts are folded
 * in) and close.  values[i] is -1 for an event that is not counted. */
void lb_perf_read_close(struct lb_perf_counters *pc, int64_t values[LB_PERF_NEVENTS]);

#endif /* LB_RT_PERF_COUNTERS_H */
