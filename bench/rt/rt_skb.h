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

/* Whose caches (rt_skb.c has the facts of each). */
enum lb_rt_skb_kernel {
	LB_RT_SKB_V6_18 = 0, /* skbuff_small_head (v6.3 on) for heads up to 576 bytes */
	LB_RT_SKB_V6_1,      /* kmalloc's power-of-two caches, from 512 bytes (Debian 12) */
};

/* The two caches for a message of `datasize` bytes on nr_cpus CPUs (6.18's). */
void lb_rt_skb_geometry(unsigned int datasize, unsigned int nr_cpus, struct lb_rt_skb_geometry *g);
/* The same for the kernel `k`. */
void lb_rt_skb_geometry_of(unsigned int datasize, unsigned int nr_cpus, enum lb_rt_skb_kernel k,
			   struct lb_rt_skb_geometry *g);
/* "6.18" or "6.1". */
const char *lb_rt_skb_kernel_name(enum lb_rt_skb_kernel k);

#endif /* LB_RT_SKB_H */
