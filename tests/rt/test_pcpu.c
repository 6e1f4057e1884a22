/* SPDX-License-Identifier: MIT */
/*
 * test_pcpu.c - the allocator's per-CPU cpu slabs (engines/slub/slub.h,
 * cpu_mode PER_CPU and PER_CPU_LOCAL_LOCK) and the kernel's slab geometry:
 *  - a task moved to another CPU between the fast path's read and its
 *    commit restarts (no object lost or doubled: lb_slub_check);
 *  - another task's allocation on the same CPU in that window (the hook
 *    runs one, as a preempting task would) makes the commit restart; with
 *    a commit that checks nothing (debug_broken_commit) the object is
 *    handed out twice and the check reports it;
 *  - threads migrating while they allocate and free, both per-CPU modes,
 *    with cpu partials off and with cpu_partial 0 (partial_mode SYSFS_ZERO:
 *    a page frozen for a CPU's stash, drains, two-page takes);
 *  - calculate_order()/order_objects() and the AF_UNIX send's two caches
 *    on fixed sizes, 6.18's and 6.1's.
 *   test-rt-pcpu   TAP
 */
#include "slub.h"
#include "slub_order.h"
#include "rt_skb.h"
#include "lb_registry.h"
#include "../tap.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POOL (64u << 20)

static const struct lb_lock_ops *ops;
static int cpus[2];
static int ncpus;

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int find_cpus(void)
{
	cpu_set_t set;
	int n = 0;
	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (int i = 0; i < CPU_SETSIZE && n < 2; i++)
		if (CPU_ISSET(i, &set))
			cpus[n++] = i;
	return n;
}

static enum lb_slub_partial_mode partial_mode; /* of the next new_cache() */

static struct lb_slub_cache *new_cache(enum lb_slub_cpu_mode mode)
{
	struct lb_slub_cache *c = calloc(1, sizeof(*c));
	struct lb_slub_tuning t = lb_slub_tuning_default();
	t.cpu_mode = mode;
	t.partial_mode = partial_mode;
	if (!c || lb_slub_cache_init_tuned(c, ops, 48, POOL, &t)) {
		free(c);
		return NULL;
	}
	return c;
}

/* ---- a task moved mid-allocation ------------------------------------ */

static int migrations;
static void migrate_hook(struct lb_slub_cache *c, void *arg)
{
	(void)c;
	(void)arg;
	if (migrations++ == 0) /* once: to the CPU we are not on */
		pin(sched_getcpu() == cpus[0] ? cpus[1] : cpus[0]);
}

static void test_migration(void)
{
	if (ncpus < 2) {
		tap_ok(1, "# SKIP migration: one CPU allowed");
		return;
	}
	struct lb_slub_cache *c = new_cache(LB_SLUB_PER_CPU);
	struct lb_slub_cpu cpu;
	tap_ok(c && lb_slub_cpu_init(c, &cpu, 0) == 0, "per-CPU cache and task");
	if (!c)
		return;
	pin(cpus[0]);
	void *obj[8];
	for (int i = 0; i < 4; i++)
		obj[i] = lb_slub_alloc(&cpu); /* the slot of cpus[0] gets its page */
	c->debug_commit_hook = migrate_hook;
	migrations = 0;
	uint64_t restarts = cpu.fast_restarts;
	obj[4] = lb_slub_alloc(&cpu);
	c->debug_commit_hook = NULL;
	tap_ok(sched_getcpu() == cpus[1], "the hook moved the task to CPU %d", cpus[1]);
	tap_ok(cpu.fast_restarts > restarts, "the commit after the move restarted (%llu restart(s))",
	       (unsigned long long)(cpu.fast_restarts - restarts));
	bool distinct = obj[4] != NULL;
	for (int i = 0; i < 4; i++)
		distinct = distinct && obj[i] && obj[i] != obj[4];
	tap_ok(distinct, "the restarted allocation got an object of its own");
	for (int i = 0; i < 5; i++)
		lb_slub_free(&cpu, obj[i]);
	lb_slub_cpu_fini(&cpu);
	tap_ok(lb_slub_check(c, 0, stdout) == 0, "no object lost or doubled");
	lb_slub_cpu_release(&cpu);
	lb_slub_cache_destroy(c);
	free(c);
}

/* ---- another task's allocation inside the window ---------------------- */

static struct lb_slub_cpu *intruder;
static void *intruder_obj;
static void intrude_hook(struct lb_slub_cache *c, void *arg)
{
	(void)arg;
	lb_slub_commit_hook *h = c->debug_commit_hook;
	c->debug_commit_hook = NULL; /* once, and not inside itself */
	intruder_obj = lb_slub_alloc(intruder);
	(void)h;
}

/* 0 when the check passed; the number of problems otherwise. */
static unsigned long intrude(bool broken, void **a, void **b, uint64_t *restarts)
{
	struct lb_slub_cache *c = new_cache(LB_SLUB_PER_CPU);
	struct lb_slub_cpu t1, t2;
	if (!c || lb_slub_cpu_init(c, &t1, 0) || lb_slub_cpu_init(c, &t2, 1))
		return 1000;
	pin(cpus[0]);
	void *warm = lb_slub_alloc(&t1); /* the slot's page, lockless from here */
	intruder = &t2;
	c->debug_broken_commit = broken;
	c->debug_commit_hook = intrude_hook;
	*a = lb_slub_alloc(&t1);
	*b = intruder_obj;
	*restarts = t1.fast_restarts;
	c->debug_broken_commit = false;
	lb_slub_free(&t1, warm);
	lb_slub_free(&t1, *a);
	if (*b != *a)
		lb_slub_free(&t2, *b);
	lb_slub_cpu_fini(&t1);
	lb_slub_cpu_fini(&t2);
	unsigned long problems = lb_slub_check(c, 0, NULL);
	lb_slub_cpu_release(&t1);
	lb_slub_cpu_release(&t2);
	lb_slub_cache_destroy(c);
	free(c);
	return problems;
}

static void test_intruder(void)
{
	void *a, *b;
	uint64_t restarts;
	unsigned long p = intrude(false, &a, &b, &restarts);
	tap_ok(a && b && a != b, "an allocation between read and commit: two objects");
	tap_ok(restarts >= 1, "the outer commit saw the tid change and restarted");
	tap_ok(p == 0, "invariants hold");
	p = intrude(true, &a, &b, &restarts);
	tap_ok(a == b && p > 0, "a commit that checks nothing hands one object out twice, and the "
	       "check reports it (%lu problem(s))", p);
}

/* ---- threads migrating while they allocate ---------------------------- */

struct stress {
	struct lb_slub_cache *c;
	unsigned int index;
	int err;
};

static void *stress_main(void *arg)
{
	struct stress *s = arg;
	struct lb_slub_cpu cpu;
	if ((s->err = lb_slub_cpu_init(s->c, &cpu, s->index)))
		return NULL;
	void *held[64] = { 0 };
	unsigned int seed = s->index * 7919u + 1;
	for (int i = 0; i < 20000; i++) {
		seed = seed * 1103515245u + 12345u;
		unsigned int k = (seed >> 8) % 64;
		if (held[k]) {
			lb_slub_free(&cpu, held[k]);
			held[k] = NULL;
		} else {
			held[k] = lb_slub_alloc(&cpu);
		}
		if (ncpus > 1 && i % 1000 == 999)
			pin(cpus[(seed >> 4) & 1]);
	}
	for (int k = 0; k < 64; k++)
		if (held[k])
			lb_slub_free(&cpu, held[k]);
	lb_slub_cpu_fini(&cpu);
	lb_slub_cpu_release(&cpu);
	return NULL;
}

static void test_stress(enum lb_slub_cpu_mode mode, const char *name)
{
	struct lb_slub_cache *c = new_cache(mode);
	struct stress st[4];
	pthread_t tid[4];
	int started = 0;
	for (int i = 0; c && i < 4; i++) {
		st[i] = (struct stress){ .c = c, .index = (unsigned int)i };
		started += pthread_create(&tid[i], NULL, stress_main, &st[i]) == 0;
	}
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	int err = 0;
	for (int i = 0; i < started; i++)
		err |= st[i].err;
	tap_ok(c && started == 4 && !err && lb_slub_check(c, 0, stdout) == 0,
	       "%s: 4 migrating threads, 80000 operations, invariants hold", name);
	if (c) {
		lb_slub_cache_destroy(c);
		free(c);
	}
}

/* ---- the kernel's geometry ------------------------------------------- */

static void test_geometry(void)
{
	/* /sys/kernel/slab on a 2-CPU v6.18 guest: skbuff_head_cache 256 B
	 * order 0, 16 per slab; skbuff_small_head 576 B order 1, 14;
	 * kmalloc-512 order 1, 16; kmalloc-1k order 2, 16. */
	unsigned int size[] = { 256, 576, 512, 1024 }, order[] = { 0, 1, 1, 2 },
		     objs[] = { 16, 14, 16, 16 };
	for (int i = 0; i < 4; i++) {
		unsigned int o = lb_slub_calculate_order(size[i], 2);
		unsigned int n = lb_slub_order_objects(o, size[i]);
		tap_ok(o == order[i] && n == objs[i], "%u-byte objects on 2 CPUs: order %u, %u per slab "
		       "(got %u, %u)", size[i], order[i], objs[i], o, n);
	}
	/* 8 CPUs (min_objects 20): 256 B order 1, 32; 512 B order 2, 32. */
	tap_ok(lb_slub_calculate_order(256, 8) == 1 && lb_slub_order_objects(1, 256) == 32,
	       "256-byte objects on 8 CPUs: order 1, 32 per slab");
	tap_ok(lb_slub_calculate_order(512, 8) == 2 && lb_slub_order_objects(2, 512) == 32,
	       "512-byte objects on 8 CPUs: order 2, 32 per slab");
	struct lb_rt_skb_geometry g;
	lb_rt_skb_geometry(100, 2, &g);
	tap_ok(g.linear == 100 && !strcmp(g.head.name, "skbuff_head_cache") &&
	       g.head.objs_per_slab == 16 && !strcmp(g.data.name, "skbuff_small_head") &&
	       g.data.objs_per_slab == 14, "-s 100: a 256-B head (16/slab) and a small head (14/slab)");
	lb_rt_skb_geometry(4096, 2, &g);
	tap_ok(g.linear == 0 && !strcmp(g.data.name, "skbuff_small_head"),
	       "-s 4096: the data in a page fragment, the small head only holds skb_shared_info");
	lb_rt_skb_geometry(3000, 2, &g);
	tap_ok(g.linear == 3000 && !strcmp(g.data.name, "kmalloc-4k") && g.data.order == 3 &&
	       g.data.objs_per_slab == 8, "-s 3000: a 3328-byte head from kmalloc-4k (order 3, 8/slab)");
	/* 6.1 (Debian 12): heads kmalloc'd, rounded up to a power of two from
	 * 512; /sys/kernel/slab/kmalloc-cg-512 on the 2-vCPU guest: 16 a slab. */
	lb_rt_skb_geometry_of(100, 2, LB_RT_SKB_V6_1, &g);
	tap_ok(!strcmp(g.head.name, "skbuff_head_cache") && g.head.objs_per_slab == 16 &&
	       !strcmp(g.data.name, "kmalloc-cg-512") && g.data.object_size == 512 &&
	       g.data.order == 1 && g.data.objs_per_slab == 16,
	       "6.1, -s 100: a 448-byte head from kmalloc-cg-512 (order 1, 16/slab; got %s, %u)",
	       g.data.name, g.data.objs_per_slab);
	lb_rt_skb_geometry_of(4096, 2, LB_RT_SKB_V6_1, &g);
	tap_ok(g.linear == 0 && !strcmp(g.data.name, "kmalloc-cg-512"),
	       "6.1, -s 4096: the 320-byte shared-info head from kmalloc-cg-512");
	lb_rt_skb_geometry_of(1000, 2, LB_RT_SKB_V6_1, &g);
	tap_ok(!strcmp(g.data.name, "kmalloc-cg-2k") && g.data.order == 3 && g.data.objs_per_slab == 16,
	       "6.1, -s 1000: a 1344-byte head from kmalloc-cg-2k (order 3, 16/slab)");
	lb_rt_skb_geometry_of(3000, 2, LB_RT_SKB_V6_1, &g);
	tap_ok(!strcmp(g.data.name, "kmalloc-cg-4k") && g.data.objs_per_slab == 8,
	       "6.1, -s 3000: kmalloc-cg-4k (8/slab)");
	lb_rt_skb_geometry_of(100, 8, LB_RT_SKB_V6_1, &g);
	tap_ok(g.data.order == 2 && g.data.objs_per_slab == 32 && g.head.objs_per_slab == 32,
	       "6.1, -s 100 on 8 CPUs: kmalloc-cg-512 order 2, 32/slab; the head 32/slab");
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	ops = lb_lock_find("tas");
	ncpus = find_cpus();
	if (!ops) {
		tap_skip_all("no tas lock");
		return 0;
	}
	test_geometry();
	test_migration();
	if (ncpus >= 1)
		test_intruder();
	test_stress(LB_SLUB_PER_CPU, "percpu");
	test_stress(LB_SLUB_PER_CPU_LOCAL_LOCK, "local-lock");
	partial_mode = LB_SLUB_PARTIAL_SYSFS_ZERO;
	test_stress(LB_SLUB_PER_CPU, "percpu, cpu_partial 0");
	test_stress(LB_SLUB_PER_CPU_LOCAL_LOCK, "local-lock, cpu_partial 0");
	test_stress(LB_SLUB_PER_THREAD, "thread, cpu_partial 0");
	return tap_done();
}
