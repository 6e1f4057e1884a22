/* SPDX-License-Identifier: MIT */
/*
 * preload_pool.c - fixed-size slots carved from one reserved mapping.
 *
 * Why not malloc: a mutex may first be seen inside a fork handler, a
 * malloc hook or another library's constructor, where calling malloc can
 * deadlock or recurse.  Why one mapping: it is never unmapped, so a late
 * unlocker that still touches a lock word (a futex wake after the release)
 * or a spinner that reads a departed owner's context reads valid memory,
 * and the statistics can walk every slot at exit.  MAP_NORESERVE: only the
 * pages actually used cost memory.
 */
#include "preload.h"
#include "lb_atomic.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

int lbp_pool_create(struct lbp_pool *p, const char *what, size_t slot_size, size_t max_slots)
{
	void *base = mmap(NULL, slot_size * max_slots, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return errno;
	p->what = what;
	p->base = base;
	p->slot_size = slot_size;
	p->max_slots = max_slots;
	atomic_store_explicit(&p->used, 0, memory_order_relaxed);
	p->free_list = NULL;
	atomic_store_explicit(&p->guard, 0, memory_order_release);
	return 0;
}

void lbp_pool_lock(struct lbp_pool *p)
{
	/* Spin: the guard is held for a few instructions.  Yield after a while
	 * so a holder preempted on the same CPU can finish. */
	unsigned int spins = 0;
	while (atomic_exchange_explicit(&p->guard, 1, memory_order_acquire)) {
		if (++spins % 64 == 0)
			sched_yield();
		else
			lb_cpu_relax();
	}
}

void lbp_pool_unlock(struct lbp_pool *p)
{
	atomic_store_explicit(&p->guard, 0, memory_order_release);
}

void *lbp_pool_get(struct lbp_pool *p)
{
	void *slot;
	lbp_pool_lock(p);
	slot = p->free_list;
	if (slot) {
		p->free_list = *(void **)slot;
	} else {
		size_t i = atomic_load_explicit(&p->used, memory_order_relaxed);
		if (i == p->max_slots) {
			lbp_pool_unlock(p);
			lbp_fatal("liblockbench-preload: out of %s slots (%zu in use)", p->what, i);
		}
		slot = p->base + i * p->slot_size;
		/* Release: the statistics walker reads slots below `used`. */
		atomic_store_explicit(&p->used, i + 1, memory_order_release);
	}
	lbp_pool_unlock(p);
	memset(slot, 0, p->slot_size);
	return slot;
}

void lbp_pool_put(struct lbp_pool *p, void *slot)
{
	lbp_pool_lock(p);
	*(void **)slot = p->free_list;
	p->free_list = slot;
	lbp_pool_unlock(p);
}

void *lbp_pool_slot(struct lbp_pool *p, size_t i)
{
	return p->base + i * p->slot_size;
}
