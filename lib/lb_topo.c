/* SPDX-License-Identifier: MIT */
/* lb_topo.c - pinning orders from hwloc, memory placement through libnuma. */
#include "lb_topo.h"
#include "lb_cpu.h"
#include "lb_cpulist.h"

#include <hwloc.h>
#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int lb_pin_parse(const char *s, struct lb_pin *pin)
{
	memset(pin, 0, sizeof(*pin));
	if (!s || strlen(s) >= sizeof(pin->text))
		return -1;
	strcpy(pin->text, s);
	if (strcmp(s, "none") == 0) {
		pin->policy = LB_PIN_NONE;
		return 0;
	}
	if (strcmp(s, "compact") == 0) {
		pin->policy = LB_PIN_COMPACT;
		return 0;
	}
	if (strcmp(s, "scatter") == 0) {
		pin->policy = LB_PIN_SCATTER;
		return 0;
	}
	cpu_set_t allowed, both;
	if (lb_cpulist_parse(s, &pin->list))
		return -1;
	lb_cpulist_allowed(&allowed);
	CPU_AND(&both, &allowed, &pin->list);
	if (!CPU_EQUAL(&both, &pin->list))
		return -1; /* names a CPU we may not use */
	pin->policy = LB_PIN_LIST;
	return 0;
}

struct pu_key {
	int os_index;
	unsigned int smt_rank, core_rank, pkg;
};

static int pu_key_scatter_cmp(const void *a, const void *b)
{
	const struct pu_key *x = a, *y = b;
	if (x->smt_rank != y->smt_rank)
		return x->smt_rank < y->smt_rank ? -1 : 1;
	if (x->core_rank != y->core_rank)
		return x->core_rank < y->core_rank ? -1 : 1;
	if (x->pkg != y->pkg)
		return x->pkg < y->pkg ? -1 : 1;
	return x->os_index - y->os_index;
}

/* Allowed PUs in hwloc logical order, with their scatter sort keys. */
static int topo_pus(struct pu_key **out, unsigned int *count)
{
	hwloc_topology_t topo;
	cpu_set_t allowed;
	lb_cpulist_allowed(&allowed);
	if (hwloc_topology_init(&topo) || hwloc_topology_load(topo))
		return -1;
	int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	struct pu_key *keys = calloc(npu > 0 ? (size_t)npu : 1, sizeof(*keys));
	unsigned int n = 0;
	for (int i = 0; keys && i < npu; i++) {
		hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned int)i);
		if (!pu || pu->os_index >= CPU_SETSIZE || !CPU_ISSET(pu->os_index, &allowed))
			continue;
		hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
		hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
		struct pu_key *k = &keys[n++];
		k->os_index = (int)pu->os_index;
		k->smt_rank = core ? pu->sibling_rank : 0;
		k->pkg = pkg ? pkg->logical_index : 0;
		/* rank of the core inside its package */
		k->core_rank = 0;
		if (core) {
			hwloc_obj_t c = core;
			while ((c = c->prev_cousin) != NULL) {
				hwloc_obj_t cp = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, c);
				if (cp == pkg)
					k->core_rank++;
			}
		}
	}
	hwloc_topology_destroy(topo);
	if (!keys || n == 0) {
		free(keys);
		return -1;
	}
	*out = keys;
	*count = n;
	return 0;
}

int lb_pin_plan(const struct lb_pin *pin, unsigned int n, int *cpu_out)
{
	if (pin->policy == LB_PIN_NONE) {
		for (unsigned int i = 0; i < n; i++)
			cpu_out[i] = -1;
		return 0;
	}
	if (pin->policy == LB_PIN_LIST) {
		int cpus[CPU_SETSIZE], m = 0;
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &pin->list))
				cpus[m++] = c;
		if (m == 0)
			return -1;
		for (unsigned int i = 0; i < n; i++)
			cpu_out[i] = cpus[i % (unsigned int)m];
		return 0;
	}
	struct pu_key *keys;
	unsigned int count;
	if (topo_pus(&keys, &count))
		return -1;
	if (pin->policy == LB_PIN_SCATTER)
		qsort(keys, count, sizeof(*keys), pu_key_scatter_cmp);
	for (unsigned int i = 0; i < n; i++)
		cpu_out[i] = keys[i % count].os_index;
	free(keys);
	return 0;
}

int lb_pin_self(int cpu)
{
	if (cpu < 0)
		return 0;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int lb_numa_nodes(void)
{
	if (numa_available() < 0)
		return 1;
	int n = numa_num_configured_nodes();
	return n > 0 ? n : 1;
}

int lb_numa_node_of_cpu(int cpu)
{
	if (cpu < 0 || numa_available() < 0)
		return 0;
	int node = numa_node_of_cpu(cpu);
	return node < 0 ? 0 : node;
}

static bool placed_on_node(int node)
{
	return node >= 0 && lb_numa_nodes() > 1;
}

void *lb_mem_alloc(size_t size, size_t align, int node)
{
	if (align < LB_CACHELINE)
		align = LB_CACHELINE;
	size = (size + align - 1) / align * align;
	if (size == 0)
		size = align;
	void *p;
	if (placed_on_node(node))
		p = numa_alloc_onnode(size, node); /* page aligned */
	else
		p = aligned_alloc(align, size);
	if (p)
		memset(p, 0, size);
	return p;
}

void lb_mem_free(void *p, size_t size, int node)
{
	if (!p)
		return;
	if (placed_on_node(node))
		numa_free(p, size);
	else
		free(p);
}

int lb_mem_node_of(const void *p)
{
	int node = -1;
	if (!p || numa_available() < 0)
		return -1;
	if (get_mempolicy(&node, NULL, 0, (void *)(uintptr_t)p, MPOL_F_NODE | MPOL_F_ADDR) != 0)
		return -1;
	return node;
}
