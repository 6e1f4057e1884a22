/* SPDX-License-Identifier: MIT */
/* lb_cpulist.c - CPU list parsing and formatting. */
#include "lb_cpulist.h"
#include "lb_cli.h"

#include <stdio.h>
#include <string.h>

int lb_cpulist_parse(const char *s, cpu_set_t *set)
{
	unsigned int cpus[CPU_SETSIZE];
	size_t n;
	if (lb_parse_uint_list(s, 0, CPU_SETSIZE - 1, cpus, CPU_SETSIZE, &n))
		return -1;
	CPU_ZERO(set);
	for (size_t i = 0; i < n; i++)
		CPU_SET(cpus[i], set);
	return 0;
}

char *lb_cpulist_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, set))
			continue;
		int last = cpu;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
			last++;
		int n = last == cpu ? snprintf(buf + used, len - used, "%s%d", used ? "," : "", cpu)
				    : snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "",
					       cpu, last);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
		cpu = last;
	}
	return buf;
}

void lb_cpulist_allowed(cpu_set_t *set)
{
	if (sched_getaffinity(0, sizeof(*set), set) != 0) {
		CPU_ZERO(set);
		CPU_SET(0, set);
	}
}
