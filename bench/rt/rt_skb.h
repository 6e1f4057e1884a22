/* SPDX-License-Identifier: MIT */
/*
 * rt_skb.h - what one AF_UNIX stream send of -s bytes allocates from slab
 * caches in the kernel (rt_skb.c), so that the work-alike allocates the
 * same per message: a head object (skbuff_head_cache) and a data head
 * (skbuff_small_head, or a kmalloc size cache), both freed on receive.
 */
#ifndef LB_RT_SKB_H
#define LB_RT_SKB_H

struct lb_rt_skb_cache {
	const char *name;          /* the kernel cache's name */
	unsigned int object_size;  /* its slab_size (object stride), bytes */
	unsigned int order, objs_per_slab;
};

struct lb_rt_skb_geometry {
	unsigned int linear;       /* bytes of the message in the data head */
	struct lb_rt_skb_cache head, data;
};

/* The two caches for a message of `datasize` bytes on nr_cpus CPUs. */
void lb_rt_skb_geometry(unsigned int datasize, unsigned int nr_cpus, struct lb_rt_skb_geometry *g);

#endif /* LB_RT_SKB_H */
