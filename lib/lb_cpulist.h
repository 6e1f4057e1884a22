/* SPDX-License-Identifier: MIT */
/* lb_cpulist.h - kernel-style CPU lists ("0-3,8,10-11") to and from cpu_set_t. */
#ifndef LB_CPULIST_H
#define LB_CPULIST_H

#include <sched.h>
#include <stddef.h>

/* Parse; 0 or -1 (syntax error, a CPU >= CPU_SETSIZE, empty list). */
int lb_cpulist_parse(const char *s, cpu_set_t *set);

/* Format as ranges ("0-63", "0-3,8"); "" for an empty set. */
char *lb_cpulist_format(const cpu_set_t *set, char *buf, size_t len);

/* The CPUs this process may run on (sched_getaffinity). */
void lb_cpulist_allowed(cpu_set_t *set);

#endif /* LB_CPULIST_H */
