/* SPDX-License-Identifier: MIT */
/*
 * rt_skb.c - the kernel's allocations for one hackbench message over an
 * AF_UNIX stream socket.  Facts (Linux v6.18):
 *  - net/unix/af_unix.c, unix_stream_sendmsg(): a send of `size` bytes puts
 *    at most SKB_MAX_HEAD(0) bytes in the linear head and the rest, rounded
 *    up to whole pages, in page fragments: data_len = min(size,
 *    PAGE_ALIGN(max(0, size - SKB_MAX_HEAD(0)))); the head gets size -
 *    data_len.  SKB_MAX_HEAD(0) = 4096 - SKB_DATA_ALIGN(sizeof(struct
 *    skb_shared_info)) = 4096 - 320 = 3776 on x86-64.  (Sends over about
 *    36 KiB are split in several skbs; one is modelled.)
 *  - net/core/skbuff.c, __alloc_skb(): the sk_buff from skbuff_head_cache
 *    (sizeof(struct sk_buff) = 224, cache-line aligned: 256), and
 *    kmalloc_reserve() for SKB_HEAD_ALIGN(linear) = ALIGN(linear, 64) + 320
 *    bytes: from skbuff_small_head (SKB_SMALL_HEAD_CACHE_SIZE = 576 bytes)
 *    when it fits there, else kmalloc's power-of-two cache.  The page
 *    fragments come from the page allocator, not from a slab.
 *  - consume_skb() on receive frees both (kfree_skbmem, skb_free_head).
 * This guest's /sys/kernel/slab agrees: skbuff_head_cache 256 B, 16 per
 * slab, order 0; skbuff_small_head 576 B, 14 per slab, order 1 (2 CPUs).
 *
 * Linux v6.1 (Debian 12's 6.1.0, the kernel scripts/rt-calibrate counts):
 * unix_stream_sendmsg() splits a send the same way; __alloc_skb() takes the
 * sk_buff from skbuff_head_cache (232 bytes, SLAB_HWCACHE_ALIGN: 256) and
 * kmalloc_reserve() the data head with kmalloc(kmalloc_size_roundup(
 * SKB_HEAD_ALIGN(linear))): kmalloc's power-of-two caches, at least
 * kmalloc-512 (the smallest head, 320 bytes, rounds up to 512).  The
 * socket's allocations are memcg-accounted, so the heads are freed to
 * kmalloc-cg-512 and its siblings (doc/rt.md, "Calibration").  There is no
 * skbuff_small_head (v6.3).  The objects per slab come from the same
 * calculate_order() port: v6.1's own loop (fractions 16, 8, 4, then fewer
 * min_objects) picks the same orders for these power-of-two sizes, whose
 * leftover is 0 at the smallest order holding min_objects.
 */
#include "rt_skb.h"
#include "slub_order.h"

#define SKB_SHINFO 320u         /* SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) */
#define SKB_MAX_HEAD0 (4096u - SKB_SHINFO)
#define SKB_HEAD_OBJ 256u       /* skbuff_head_cache's slab_size */
#define SKB_SMALL_HEAD 576u     /* SKB_SMALL_HEAD_CACHE_SIZE */

static void cache_fill(struct lb_rt_skb_cache *c, const char *name, unsigned int size,
		       unsigned int nr_cpus)
{
	c->name = name;
	c->object_size = size;
	c->order = lb_slub_calculate_order(size, nr_cpus);
	c->objs_per_slab = lb_slub_order_objects(c->order, size);
}

const char *lb_rt_skb_kernel_name(enum lb_rt_skb_kernel k)
{
	return k == LB_RT_SKB_V6_1 ? "6.1" : "6.18";
}

void lb_rt_skb_geometry(unsigned int datasize, unsigned int nr_cpus, struct lb_rt_skb_geometry *g)
{
	lb_rt_skb_geometry_of(datasize, nr_cpus, LB_RT_SKB_V6_18, g);
}

void lb_rt_skb_geometry_of(unsigned int datasize, unsigned int nr_cpus, enum lb_rt_skb_kernel k,
			   struct lb_rt_skb_geometry *g)
{
	unsigned int over = datasize > SKB_MAX_HEAD0 ? datasize - SKB_MAX_HEAD0 : 0;
	unsigned int data_len = (over + 4095u) / 4096u * 4096u;
	if (data_len > datasize)
		data_len = datasize;
	g->linear = datasize - data_len;
	unsigned int head_bytes = (g->linear + 63u) / 64u * 64u + SKB_SHINFO;
	cache_fill(&g->head, "skbuff_head_cache", SKB_HEAD_OBJ, nr_cpus);
	if (k == LB_RT_SKB_V6_1) {
		static const char *const cg[] = { "kmalloc-cg-512", "kmalloc-cg-1k",
						  "kmalloc-cg-2k", "kmalloc-cg-4k" };
		unsigned int size = 512, i = 0;
		while (size < head_bytes && i < 3) {
			size *= 2;
			i++;
		}
		cache_fill(&g->data, cg[i], size, nr_cpus);
		return;
	}
	if (head_bytes <= SKB_SMALL_HEAD) {
		cache_fill(&g->data, "skbuff_small_head", SKB_SMALL_HEAD, nr_cpus);
		return;
	}
	unsigned int size = 1024;
	while (size < head_bytes)
		size *= 2;
	cache_fill(&g->data, size == 1024 ? "kmalloc-1k" : size == 2048 ? "kmalloc-2k"
			     : size == 4096 ? "kmalloc-4k" : "kmalloc-8k", size, nr_cpus);
}
