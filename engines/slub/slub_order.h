/* SPDX-License-Identifier: MIT */
/* slub_order.h - the kernel's slab order and objects per slab (slub_order.c). */
#ifndef LB_SLUB_ORDER_H
#define LB_SLUB_ORDER_H

#define LB_SLUB_PAGE_SIZE 4096ul
#define LB_SLUB_MAX_ORDER 3u /* slub_max_order's default, PAGE_ALLOC_COSTLY_ORDER */

/* calculate_order(size) for nr_cpus CPUs (num_present_cpus()). */
unsigned int lb_slub_calculate_order(unsigned int size, unsigned int nr_cpus);
/* order_objects(): objects of `size` bytes in a slab of that order. */
unsigned int lb_slub_order_objects(unsigned int order, unsigned int size);

#endif /* LB_SLUB_ORDER_H */
