/* SPDX-License-Identifier: MIT */
/* shared_arena.c - the process-shared bump arena (shared_arena.h). */
#include "shared_arena.h"

#include <stdint.h>
#include <sys/mman.h>

#define ARENA_HEADER 64u /* the header on its own cache line */

void *lb_shared_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

struct lb_arena *lb_arena_create(size_t bytes)
{
	if (bytes < 2 * ARENA_HEADER)
		bytes = 2 * ARENA_HEADER;
	struct lb_arena *a = lb_shared_map(bytes);
	if (!a)
		return NULL;
	a->bytes = bytes;
	atomic_init(&a->used, ARENA_HEADER);
	return a;
}

void *lb_arena_alloc(struct lb_arena *a, size_t size, size_t align)
{
	if (!align)
		align = 1;
	size_t old = atomic_load_explicit(&a->used, memory_order_relaxed), start, end;
	/* CAS loop: claim [start, end); relaxed, the memory is fresh zeroed
	 * pages and each piece has one claimant. */
	do {
		start = (old + align - 1) & ~(align - 1);
		end = start + size;
		if (end < start || end > a->bytes)
			return NULL;
	} while (!atomic_compare_exchange_weak_explicit(&a->used, &old, end, memory_order_relaxed,
							memory_order_relaxed));
	return (char *)a + start; /* zero: never handed out before (no frees) */
}

void lb_arena_destroy(struct lb_arena *a)
{
	if (a)
		munmap(a, a->bytes);
}
