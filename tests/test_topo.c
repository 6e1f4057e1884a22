/* SPDX-License-Identifier: MIT */
/*
 * test_topo.c - pinning plans: every policy hands out only allowed CPUs,
 * compact and scatter each cover every allowed CPU before reusing one, an
 * explicit list is followed in order and wraps, bad lists are rejected, and
 * lb_pin_self really moves the thread.
 */
#include "lb_cpulist.h"
#include "lb_topo.h"
#include "tap.h"

#include <sched.h>
#include <stdint.h>
#include <string.h>

static bool plan_covers_allowed(const char *policy)
{
	struct lb_pin pin;
	cpu_set_t allowed, seen;
	int cpus[64];
	lb_cpulist_allowed(&allowed);
	int n = CPU_COUNT(&allowed);
	if (n > 64 || lb_pin_parse(policy, &pin) || lb_pin_plan(&pin, (unsigned int)n, cpus))
		return false;
	CPU_ZERO(&seen);
	for (int i = 0; i < n; i++) {
		if (cpus[i] < 0 || !CPU_ISSET(cpus[i], &allowed) || CPU_ISSET(cpus[i], &seen))
			return false;
		CPU_SET(cpus[i], &seen);
	}
	return CPU_EQUAL(&seen, &allowed);
}

int main(void)
{
	struct lb_pin pin;
	int cpus[8];
	cpu_set_t allowed;
	char buf[256];
	lb_cpulist_allowed(&allowed);
	int first = -1;
	for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
		if (CPU_ISSET(c, &allowed))
			first = c;
	tap_diag("allowed CPUs: %s", lb_cpulist_format(&allowed, buf, sizeof(buf)));

	tap_ok(lb_pin_parse("none", &pin) == 0 && lb_pin_plan(&pin, 3, cpus) == 0 &&
		       cpus[0] == -1 && cpus[2] == -1,
	       "none: threads are left unpinned");
	tap_ok(plan_covers_allowed("compact"), "compact: each allowed CPU once before any reuse");
	tap_ok(plan_covers_allowed("scatter"), "scatter: each allowed CPU once before any reuse");

	snprintf(buf, sizeof(buf), "%d", first);
	tap_ok(lb_pin_parse(buf, &pin) == 0 && lb_pin_plan(&pin, 3, cpus) == 0 &&
		       cpus[0] == first && cpus[1] == first && cpus[2] == first,
	       "explicit one-CPU list '%s' wraps for 3 threads", buf);
	tap_ok(lb_pin_parse("sideways", &pin) != 0, "unknown policy rejected");
	tap_ok(lb_pin_parse("0-", &pin) != 0 && lb_pin_parse("", &pin) != 0 &&
		       lb_pin_parse("1,,2", &pin) != 0,
	       "malformed CPU lists rejected");
	tap_ok(lb_pin_parse("1023", &pin) != 0 || CPU_ISSET(1023, &allowed),
	       "a CPU outside the allowed set is rejected");

	tap_ok(lb_pin_self(first) == 0 && sched_getcpu() == first, "lb_pin_self moves us to CPU %d",
	       first);
	cpu_set_t parsed;
	tap_ok(lb_cpulist_parse("0-3,8,10-11", &parsed) == 0 &&
		       strcmp(lb_cpulist_format(&parsed, buf, sizeof(buf)), "0-3,8,10-11") == 0,
	       "cpulist round trip: %s", buf);
	tap_ok(lb_numa_nodes() >= 1, "NUMA nodes: %d", lb_numa_nodes());
	void *p = lb_mem_alloc(100, 64, 0);
	tap_ok(p && ((uintptr_t)p & 63) == 0, "lb_mem_alloc gives cache-aligned memory");
	lb_mem_free(p, 100, 0);
	return tap_done();
}
