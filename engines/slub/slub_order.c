/* SPDX-License-Identifier: MIT */
/*
 * slub_order.c - the kernel's slab geometry: how many pages a slab of
 * objects of one size gets, hence its objects per slab.  Facts from
 * mm/slub.c (Linux v6.18): calculate_order() starts at the smallest order
 * holding min_objects = 4 * (fls(nr_cpus) + 1) objects (capped by what
 * slub_max_order = PAGE_ALLOC_COSTLY_ORDER = 3 holds) and takes the first
 * order up to 3 whose leftover is at most 1/16 of the slab, then 1/8, 1/4,
 * 1/2; order_objects(order, size) = (PAGE_SIZE << order) / size.
 */
#include "slub_order.h"

static unsigned int fls_u(unsigned int x)
{
	unsigned int n = 0;
	while (x) {
		n++;
		x >>= 1;
	}
	return n;
}

static unsigned int order_of_bytes(unsigned long bytes)
{
	unsigned int order = 0;
	while ((LB_SLUB_PAGE_SIZE << order) < bytes)
		order++;
	return order;
}

unsigned int lb_slub_order_objects(unsigned int order, unsigned int size)
{
	return size ? (unsigned int)((LB_SLUB_PAGE_SIZE << order) / size) : 0;
}

unsigned int lb_slub_calculate_order(unsigned int size, unsigned int nr_cpus)
{
	if (!size)
		return 0;
	unsigned int min_objects = 4 * (fls_u(nr_cpus ? nr_cpus : 1) + 1);
	unsigned int max_objects = lb_slub_order_objects(LB_SLUB_MAX_ORDER, size);
	if (max_objects < 1)
		max_objects = 1;
	if (min_objects > max_objects)
		min_objects = max_objects;
	unsigned int min_order = order_of_bytes((unsigned long)min_objects * size);
	for (unsigned int fraction = 16; fraction > 1; fraction /= 2)
		for (unsigned int order = min_order; order <= LB_SLUB_MAX_ORDER; order++) {
			unsigned long slab = LB_SLUB_PAGE_SIZE << order;
			if (slab % size <= slab / fraction)
				return order;
		}
	/* Nothing up to slub_max_order fits well: one object's order. */
	return order_of_bytes(size);
}
