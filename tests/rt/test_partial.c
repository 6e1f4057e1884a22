/* SPDX-License-Identifier: MIT */
/*
 * test_partial.c - the allocator's cpu partial slabs with cpu_partial 0
 * (engines/slub/slub.h, partial_mode SYSFS_ZERO: mm/slub.c v6.1 with
 * CONFIG_SLUB_CPU_PARTIAL=y and cpu_partial set to 0 through sysfs), on one
 * thread, read from each task's own counters (lock_acquires, site_acquires)
 * and cpu slab (cs->page, cs->partial):
 *  - a free into a full, unfrozen page with an empty stash freezes it onto
 *    the freeing task's partial list and takes no list_lock;
 *  - a second such free drains the first page to the node list under one
 *    list_lock acquisition (site "unfreeze");
 *  - a refill takes the stashed page before the node list, without the lock;
 *  - get_partial takes two pages under one acquisition: one for the cpu
 *    slab, one for the partial list;
 *  - a cache whose tuning mixes the work-alike's own cpu_partial with
 *    SYSFS_ZERO is refused.
 * Tasks are PER_THREAD cpu slabs on the test's one thread (task A allocates
 * as a sender, B and C as receivers), so nothing depends on the CPU.
 *
 *   test-rt-partial   TAP
 */
#include "slub.h"
#include "lb_registry.h"
#include "../tap.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define POOL (16u << 20)
#define PER_PAGE 4u  /* 1024-byte objects in 4096-byte pages */
#define NPAGES 5u

static const struct lb_lock_ops *ops;

static int new_cache(struct lb_slub_cache *c, enum lb_slub_partial_mode mode, uint32_t cpu_partial)
{
	struct lb_slub_tuning t = lb_slub_tuning_default();
	t.partial_mode = mode;
	t.cpu_partial = cpu_partial;
	t.obj_stride = 1024;
	t.slab_bytes = 4096;
	return lb_slub_cache_init_tuned(c, ops, 48, POOL, &t);
}

/* The page index an object lies in. */
static uint32_t page_of(const struct lb_slub_cache *c, const void *obj)
{
	return (uint32_t)(((const char *)obj - c->base) / c->page_bytes);
}

static uint64_t acq(const struct lb_slub_cpu *t)
{
	return t->lock_acquires;
}

int main(void)
{
	ops = lb_lock_find("tas");
	if (!ops) {
		tap_skip_all("no tas lock");
		return 0;
	}
	struct lb_slub_cache *c = calloc(1, sizeof(*c));
	struct lb_slub_cpu a, b, d;
	if (!c || new_cache(c, LB_SLUB_PARTIAL_SYSFS_ZERO, 0) || c->objs_per_page != PER_PAGE ||
	    lb_slub_cpu_init(c, &a, 0) || lb_slub_cpu_init(c, &b, 1) ||
	    lb_slub_cpu_init(c, &d, 2)) {
		tap_ok(false, "cache with 4 objects a page and three tasks");
		return tap_done();
	}
	/* A fills pages 0..3 and starts page 4: each dry cpu slab whose page
	 * got nothing back is unfrozen full, on no list. */
	void *obj[NPAGES][PER_PAGE] = { { 0 } };
	for (uint32_t p = 0; p < NPAGES; p++)
		for (uint32_t k = 0; k < (p + 1 < NPAGES ? PER_PAGE : 1); k++)
			obj[p][k] = lb_slub_alloc(&a);
	bool laid = acq(&a) == 0;
	for (uint32_t p = 0; p < NPAGES; p++)
		laid = laid && obj[p][0] && page_of(c, obj[p][0]) == p;

	/* 1: B frees into full page 0, its stash empty. */
	lb_slub_free(&b, obj[0][0]);
	obj[0][0] = NULL;
	tap_ok(laid && acq(&b) == 0 && b.cs->partial == 1 && b.cs->nr_partial == 1,
	       "a free into a full page with an empty stash freezes it onto the stash, no list_lock "
	       "(acquisitions %llu, stash page %u)", (unsigned long long)acq(&b), b.cs->partial);

	/* 2: B frees into full page 1: page 0 drained to the node list. */
	lb_slub_free(&b, obj[1][0]);
	obj[1][0] = NULL;
	tap_ok(acq(&b) == 1 && b.site_acquires[LB_SLUB_SITE_UNFREEZE] == 1 &&
	       b.cs->partial == 2 && b.cs->nr_partial == 1 &&
	       atomic_load(&c->nr_partial) == 1 && atomic_load(&c->partial_head) == 1,
	       "a second one drains the first to the node list under one list_lock (acquisitions "
	       "%llu, unfreeze %llu, node partial %u)", (unsigned long long)acq(&b),
	       (unsigned long long)b.site_acquires[LB_SLUB_SITE_UNFREEZE],
	       atomic_load(&c->nr_partial));

	/* 3: B allocates: its stash (page 1) before the node list (page 0). */
	void *x = lb_slub_alloc(&b);
	tap_ok(x && page_of(c, x) == 1 && acq(&b) == 1 && b.cs->page == 2 && b.cs->partial == 0 &&
	       atomic_load(&c->nr_partial) == 1,
	       "a refill takes the stashed page before the node list, no list_lock (page %u, "
	       "acquisitions %llu)", x ? page_of(c, x) : 0, (unsigned long long)acq(&b));

	/* 4: page 2 to the node list too (B stashes 2, then 3 drains 2). */
	lb_slub_free(&b, obj[2][0]);
	lb_slub_free(&b, obj[3][0]);
	obj[2][0] = obj[3][0] = NULL;
	bool two = atomic_load(&c->nr_partial) == 2 && acq(&b) == 2;
	/* D, with no cpu slab and no stash, allocates: one get_partial. */
	void *y = lb_slub_alloc(&d);
	tap_ok(two && y && page_of(c, y) == 0 && acq(&d) == 1 &&
	       d.site_acquires[LB_SLUB_SITE_PARTIAL_TAKE] == 1 && d.cs->page == 1 &&
	       d.cs->partial == 3 && d.cs->nr_partial == 1 && atomic_load(&c->nr_partial) == 0,
	       "get_partial takes two pages under one list_lock: the cpu slab and the stash "
	       "(acquisitions %llu, cpu slab page %u, stash page %u, node partial %u)",
	       (unsigned long long)acq(&d), d.cs->page ? d.cs->page - 1 : 99,
	       d.cs->partial ? d.cs->partial - 1 : 99, atomic_load(&c->nr_partial));
	tap_ok(d.lockless_frees == 0 && b.lockless_frees == 4,
	       "frees that froze a page count as lockless (B %llu)",
	       (unsigned long long)b.lockless_frees);

	/* 5: a free into D's stashed page (frozen) is lockless. */
	uint64_t before = acq(&a);
	lb_slub_free(&a, obj[2][1]);
	obj[2][1] = NULL;
	tap_ok(acq(&a) == before, "a free into another task's stashed page takes no list_lock");

	/* Everything back; every cpu slab and stash flushed. */
	lb_slub_free(&b, x);
	lb_slub_free(&d, y);
	for (uint32_t p = 0; p < NPAGES; p++)
		for (uint32_t k = 0; k < PER_PAGE; k++)
			if (obj[p][k])
				lb_slub_free(&a, obj[p][k]);
	lb_slub_cpu_fini(&a);
	lb_slub_cpu_fini(&b);
	lb_slub_cpu_fini(&d);
	tap_ok(lb_slub_check(c, 0, stdout) == 0, "invariants hold once all is freed and flushed");
	lb_slub_cpu_release(&a);
	lb_slub_cpu_release(&b);
	lb_slub_cpu_release(&d);
	lb_slub_cache_destroy(c);

	tap_ok(new_cache(c, LB_SLUB_PARTIAL_SYSFS_ZERO, 30) == EINVAL,
	       "SYSFS_ZERO with the work-alike's cpu_partial 30 is refused");
	int err = new_cache(c, LB_SLUB_PARTIAL_CONFIG_OFF, 30);
	tap_ok(err == 0, "CONFIG_OFF with cpu_partial 30 is accepted");
	if (!err)
		lb_slub_cache_destroy(c);
	free(c);
	return tap_done();
}
