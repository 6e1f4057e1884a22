/* SPDX-License-Identifier: MIT */
/*
 * lb_c2c_pairs.c - which CPU pairs describe a many-CPU machine, and their
 * round trips (see lb_c2c_pairs.h).
 */
#include "lb_c2c_pairs.h"
#include "lb_c2c.h"
#include "lb_cpulist.h"
#include "lb_json.h"
#include "lb_topo.h"
#include "lb_wrap.h"

#include <sched.h>
#include <string.h>

static void add_pair(struct lb_c2c_pairs *set, int a, int b, int (*node_of)(int cpu))
{
	set->pair[set->n++] = (struct lb_c2c_pair){
		.cpu = { a, b }, .node = { node_of(a), node_of(b) }, .ns = -1
	};
}

/* The first allowed CPU after `after` on `node`; -1 when none. */
static int next_on_node(const cpu_set_t *allowed, int after, int node, int (*node_of)(int cpu))
{
	for (int cpu = after + 1; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, allowed) && node_of(cpu) == node)
			return cpu;
	return -1;
}

/* The lowest node id above `above` that has an allowed CPU, and in *cpu
 * that node's first allowed CPU; -1 when none is left. */
static int next_node(const cpu_set_t *allowed, int above, int (*node_of)(int cpu), int *cpu)
{
	int best = -1;
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, allowed))
			continue;
		int node = node_of(c);
		if (node > above && (best < 0 || node < best)) {
			best = node;
			*cpu = c;
		}
	}
	return best;
}

void lb_c2c_pick_pairs_on(struct lb_c2c_pairs *set, const cpu_set_t *allowed,
			  int (*node_of)(int cpu))
{
	set->n = 0;
	if (CPU_COUNT(allowed) < 3)
		return;
	int c0 = 0;
	while (c0 < CPU_SETSIZE && !CPU_ISSET(c0, allowed))
		c0++;
	int home = node_of(c0);
	int next = next_on_node(allowed, c0, home, node_of);
	if (next >= 0)
		add_pair(set, c0, next, node_of);
	/* One CPU on each other node, in node order: its first allowed one.
	 * Node ids come from the CPUs, not from a count: a machine's ids can
	 * have holes (a node without CPUs, or one taken offline). */
	int cpu = -1;
	for (int node = next_node(allowed, -1, node_of, &cpu);
	     node >= 0 && set->n < LB_C2C_MAX_PAIRS; node = next_node(allowed, node, node_of, &cpu))
		if (node != home)
			add_pair(set, c0, cpu, node_of);
}

void lb_c2c_pick_pairs(struct lb_c2c_pairs *set)
{
	cpu_set_t allowed;
	lb_cpulist_allowed(&allowed);
	lb_c2c_pick_pairs_on(set, &allowed, lb_numa_node_of_cpu);
}

void lb_c2c_measure_pairs(struct lb_c2c_pairs *set)
{
	for (size_t i = 0; i < set->n; i++)
		set->pair[i].ns = lb_c2c_round_trip_ns(set->pair[i].cpu[0], set->pair[i].cpu[1],
						       LB_C2C_ROUNDS, LB_C2C_BUDGET_NS);
}

void lb_c2c_pairs_json(struct lb_json *j, const struct lb_c2c_pairs *set)
{
	lb_json_key(j, "c2c_pairs");
	lb_json_array_begin(j);
	for (size_t i = 0; i < set->n; i++) {
		const struct lb_c2c_pair *p = &set->pair[i];
		lb_json_object_begin(j);
		lb_json_key(j, "cpus");
		lb_json_array_begin(j);
		lb_json_int(j, p->cpu[0]);
		lb_json_int(j, p->cpu[1]);
		lb_json_array_end(j);
		lb_json_key(j, "nodes");
		lb_json_array_begin(j);
		lb_json_int(j, p->node[0]);
		lb_json_int(j, p->node[1]);
		lb_json_array_end(j);
		if (p->ns >= 0)
			lb_json_kv_double(j, "round_trip_ns", p->ns);
		else
			lb_json_kv_string(j, "round_trip_ns", NULL);
		lb_json_object_end(j);
	}
	lb_json_array_end(j);
}

void lb_c2c_pairs_print(FILE *out, const struct lb_c2c_pairs *set)
{
	if (!set->n)
		return;
	char line[1024] = "# cache-line round trip by CPU pair (before the runs):";
	for (size_t i = 0; i < set->n; i++) {
		const struct lb_c2c_pair *p = &set->pair[i];
		char where[32], ns[32];
		if (p->node[0] == p->node[1])
			snprintf(where, sizeof(where), "node %d", p->node[0]);
		else
			snprintf(where, sizeof(where), "nodes %d-%d", p->node[0], p->node[1]);
		if (p->ns >= 0)
			snprintf(ns, sizeof(ns), "%.0f ns", p->ns);
		else
			snprintf(ns, sizeof(ns), "not measured");
		size_t used = strlen(line);
		snprintf(line + used, sizeof(line) - used, "%s CPU%d<->CPU%d (%s) %s", i ? ";" : "",
			 p->cpu[0], p->cpu[1], where, ns);
	}
	lb_wrapf(out, "#   ", "%s", line);
}
