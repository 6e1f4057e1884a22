/* SPDX-License-Identifier: MIT */
/*
 * shared_arena.h - one MAP_SHARED | MAP_ANONYMOUS mapping for everything
 * several processes share (`lockbench rt -P`, doc/rt.md "Process mode").
 *
 * The arena is mapped before the fork, so every child sees it at the same
 * address and pointers into it stay valid in all of them.  It is a bump
 * allocator: lb_arena_alloc() hands out zeroed, aligned pieces (any process
 * may call it: the bump index lives in the mapping itself) and nothing is
 * freed one by one; lb_arena_destroy() unmaps the whole arena once no
 * process uses it.  The mapping is MAP_NORESERVE: only what is touched is
 * backed.  Holds the allocator's structures (engines/slub/slub.h), the lock
 * object and every lock context, the raw-section marks and slots, and the
 * tasks' shared state.
 */
#ifndef LB_SHARED_ARENA_H
#define LB_SHARED_ARENA_H

#include <stdatomic.h>
#include <stddef.h>

struct lb_arena {
	size_t bytes;                /* the whole mapping, this header included */
	_Atomic size_t used;         /* bump index, from the mapping's start */
};

/* A new arena of `bytes` (reserved, not committed), or NULL with errno set. */
struct lb_arena *lb_arena_create(size_t bytes);
/* `size` zeroed bytes aligned to `align` (a power of two), or NULL when the
 * arena is full.  Safe from any thread of any process that maps it. */
void *lb_arena_alloc(struct lb_arena *a, size_t size, size_t align);
/* Unmap it (NULL: nothing).  No process may touch it afterwards. */
void lb_arena_destroy(struct lb_arena *a);

/* A separate shared mapping of `bytes` (the allocator's page pool), or NULL. */
void *lb_shared_map(size_t bytes);

#endif /* LB_SHARED_ARENA_H */
