/* SPDX-License-Identifier: MIT */
/*
 * lb_topo.h - CPU topology (hwloc), thread pinning policies and memory
 * placement (libnuma).
 *
 * Policies:
 *   none     threads float; the scheduler places them
 *   compact  fill CPUs in hwloc logical order: SMT siblings, then cores of
 *            one package, then the next package (neighbours share caches)
 *   scatter  spread: one CPU per core round-robin over packages/NUMA nodes
 *            before using any SMT sibling (threads share as little as possible)
 *   LIST     explicit CPU list ("0,2,4-7"); thread i gets the i-th CPU
 * With more threads than CPUs the order wraps around.
 */
#ifndef LB_TOPO_H
#define LB_TOPO_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

enum lb_pin_policy { LB_PIN_NONE, LB_PIN_COMPACT, LB_PIN_SCATTER, LB_PIN_LIST };

struct lb_pin {
	enum lb_pin_policy policy;
	cpu_set_t list;          /* LB_PIN_LIST only */
	char text[256];          /* as given, for reports */
};

/* Parse "none" | "compact" | "scatter" | a CPU list; 0 or -1 (bad policy,
 * bad list, or a CPU this process may not run on). */
int lb_pin_parse(const char *s, struct lb_pin *pin);

/*
 * The CPU for each of n threads (cpu_out[i]; -1 = unpinned).  Uses hwloc for
 * compact/scatter orders restricted to the allowed CPUs.  0 or -1.
 */
int lb_pin_plan(const struct lb_pin *pin, unsigned int n, int *cpu_out);

/* Pin the calling thread to one CPU (no-op for cpu < 0); 0 or errno. */
int lb_pin_self(int cpu);

/* NUMA nodes in the system (1 without libnuma support). */
int lb_numa_nodes(void);

/* NUMA node of a CPU (0 without NUMA). */
int lb_numa_node_of_cpu(int cpu);

/*
 * Zeroed memory, aligned to align (power of two ≥ a cache line), placed on
 * NUMA node `node` when there is more than one node and node ≥ 0, else
 * ordinary memory.  Free with lb_mem_free(p, size, node) (same node).
 */
void *lb_mem_alloc(size_t size, size_t align, int node);
void lb_mem_free(void *p, size_t size, int node);

/* The NUMA node the page holding p is on now (get_mempolicy(2) with
 * MPOL_F_NODE | MPOL_F_ADDR, which faults the page in if it is not yet);
 * -1 when it cannot be told (no NUMA support, p NULL).  A fact for the run
 * record: where the memory the placement policy meant to put on a node
 * really is. */
int lb_mem_node_of(const void *p);

#endif /* LB_TOPO_H */
