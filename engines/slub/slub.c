/* SPDX-License-Identifier: MIT */
/*
 * slub.c - the SLUB-like allocator of slub.h.  Objects are named by a
 * global index (page * objs_per_page + slot); freelists link them through
 * the index + 1 kept in each object's header, so a link damaged by a broken
 * list_lock is caught by a range check instead of being followed.
 */
#include "slub.h"
#include "lb_atomic.h"
#include "lb_registry.h"
#include "lb_time.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "slub_rseq.h"

#define OBJ_FREE  UINT32_C(0x46524545) /* "FREE" */
#define OBJ_ALLOC UINT32_C(0x414c4c43) /* "ALLC" */
#define HDR_SIZE  16u

struct obj_hdr {
	_Atomic uint32_t state;  /* OBJ_FREE / OBJ_ALLOC; 0 before the page was carved */
	_Atomic uint32_t next;   /* freelist link: global index + 1, 0 = end */
	uint64_t unused;
};

#define RLX memory_order_relaxed
#define REL memory_order_release
#define ACQ memory_order_acquire
#define ACQREL memory_order_acq_rel

/* struct lb_slub_page's fc word: freelist | inuse << 32 | owner << 45. */
#define FC_INUSE_MAX 0x1fffu
#define FC_OWNER_MAX 0x7ffffu
static inline uint32_t fc_free(uint64_t w) { return (uint32_t)w; }
static inline uint32_t fc_inuse(uint64_t w) { return (uint32_t)(w >> 32) & FC_INUSE_MAX; }
static inline uint32_t fc_owner(uint64_t w) { return (uint32_t)(w >> 45); }
static inline uint64_t fc_make(uint32_t free, uint32_t inuse, uint32_t owner)
{
	return (uint64_t)free | (uint64_t)(inuse & FC_INUSE_MAX) << 32 | (uint64_t)owner << 45;
}

static void violation(struct lb_slub_cache *c, const char *fmt, ...)
{
	atomic_fetch_add_explicit(&c->violations, 1, RLX);
	/* exchange: exactly one thread writes the first message; relaxed, the
	 * text is read only after every thread was joined. */
	if (atomic_exchange_explicit(&c->first_violation_set, 1, RLX))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->first_violation, sizeof(c->first_violation), fmt, ap);
	va_end(ap);
}

static inline struct obj_hdr *hdr_of(const struct lb_slub_cache *c, uint32_t idx)
{
	uint32_t page = idx / c->objs_per_page, slot = idx % c->objs_per_page;
	return (struct obj_hdr *)(c->base + (size_t)page * c->page_bytes +
				  (size_t)slot * c->obj_size);
}

static inline bool index_valid(const struct lb_slub_cache *c, uint32_t idx)
{
	return idx / c->objs_per_page < atomic_load_explicit(&c->pages_used, RLX);
}

/* The global index of a payload pointer, or UINT32_MAX when it is none of ours. */
static uint32_t index_of(const struct lb_slub_cache *c, const void *obj)
{
	uintptr_t p = (uintptr_t)obj, b = (uintptr_t)c->base;
	if (p < b + HDR_SIZE)
		return UINT32_MAX;
	size_t off = p - HDR_SIZE - b, page = off / c->page_bytes, in = off % c->page_bytes;
	if (page >= atomic_load_explicit(&c->pages_used, RLX) || in % c->obj_size ||
	    in / c->obj_size >= c->objs_per_page)
		return UINT32_MAX;
	return (uint32_t)(page * c->objs_per_page + in / c->obj_size);
}

struct lb_slub_tuning lb_slub_tuning_default(void)
{
	return (struct lb_slub_tuning){ .min_objects = LB_SLUB_MIN_OBJECTS,
					.min_partial = LB_SLUB_MIN_PARTIAL };
}

int lb_slub_cache_init(struct lb_slub_cache *c, const struct lb_lock_ops *ops, size_t payload,
		       size_t max_bytes)
{
	return lb_slub_cache_init_tuned(c, ops, payload, max_bytes, NULL);
}

/* Whole cache lines of the arena, as lb_lock_alloc gives a lock its own. */
static void *arena_lines(struct lb_arena *a, size_t size, size_t align)
{
	return lb_arena_alloc(a, (size + 63) / 64 * 64, align > 64 ? align : 64);
}

/* The PER_CPU modes' slots, one per possible CPU, each with its local lock
 * (priority-inheriting with LOCAL_LOCK; process-shared in an arena). */
static int slots_init(struct lb_slub_cache *c)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	uint32_t n = ncpu < 1 ? 1 : ncpu > LB_SLUB_MAX_SLOTS ? LB_SLUB_MAX_SLOTS : (uint32_t)ncpu;
	size_t bytes = n * sizeof(struct lb_slub_pcpu);
	c->slots = c->arena ? arena_lines(c->arena, bytes, 64) : aligned_alloc(64, bytes);
	if (!c->slots)
		return ENOMEM;
	memset(c->slots, 0, bytes);
	pthread_mutexattr_t ma;
	int err = pthread_mutexattr_init(&ma);
	if (!err && c->tuning.cpu_mode == LB_SLUB_PER_CPU_LOCAL_LOCK)
		err = pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	if (!err && c->arena)
		err = pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	for (uint32_t k = 0; !err && k < n; k++) {
		err = pthread_mutex_init(&c->slots[k].lock, &ma);
		c->slots[k].cs.owner = k + 1; /* tasks' ids start above the slots' */
		c->nslots = err ? k : k + 1;
	}
	pthread_mutexattr_destroy(&ma);
	atomic_store_explicit(&c->next_cpu_id, n, RLX);
	return err;
}

static int cache_init(struct lb_slub_cache *c, const struct lb_lock_ops *ops, size_t payload,
		      size_t max_bytes, const struct lb_slub_tuning *tuning, struct lb_arena *arena)
{
	memset(c, 0, sizeof(*c));
	if (arena && !ops->init_shared)
		return ENOTSUP;
	c->tuning = tuning ? *tuning : lb_slub_tuning_default();
	if (!payload || payload > LB_SLUB_MAX_PAYLOAD || !(ops->flags & LB_LOCK_F_EXCLUSIVE) ||
	    !c->tuning.min_objects || c->tuning.min_objects > 4096)
		return EINVAL;
	c->ops = ops;
	c->payload = payload;
	c->obj_size = (HDR_SIZE + payload + 15) / 16 * 16;
	if (c->tuning.obj_stride) {
		if (c->tuning.obj_stride < c->obj_size || c->tuning.obj_stride % 16)
			return EINVAL;
		c->obj_size = c->tuning.obj_stride;
	}
	c->page_bytes = c->tuning.slab_bytes
				? c->tuning.slab_bytes
				: (c->obj_size * c->tuning.min_objects + 4095) / 4096 * 4096;
	if (c->page_bytes % 4096 || c->page_bytes < c->obj_size)
		return EINVAL;
	c->objs_per_page = (uint32_t)(c->page_bytes / c->obj_size);
	if (c->objs_per_page > FC_INUSE_MAX || c->tuning.cpu_mode > LB_SLUB_PER_CPU_LOCAL_LOCK ||
	    c->tuning.partial_mode > LB_SLUB_PARTIAL_SYSFS_ZERO ||
	    (c->tuning.partial_mode == LB_SLUB_PARTIAL_SYSFS_ZERO && c->tuning.cpu_partial))
		return EINVAL;
	size_t cap = max_bytes / c->page_bytes;
	if (cap > UINT32_MAX / c->objs_per_page - 1)
		cap = UINT32_MAX / c->objs_per_page - 1;
	if (cap < 1)
		return EINVAL;
	c->capacity = (uint32_t)cap;
	c->map_bytes = cap * c->page_bytes;
	c->arena = arena;
	if (arena) {
		c->base = lb_shared_map(c->map_bytes);
	} else {
		c->base = mmap(NULL, c->map_bytes, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		c->base = c->base == MAP_FAILED ? NULL : c->base;
	}
	if (!c->base)
		return ENOMEM;
	c->pages = arena ? arena_lines(arena, cap * sizeof(*c->pages), 64)
			 : calloc(cap, sizeof(*c->pages));
	c->list_lock = arena ? arena_lines(arena, ops->lock_size, ops->lock_align)
			     : lb_lock_alloc(ops);
	if (!c->pages || !c->list_lock) {
		if (arena)
			c->list_lock = NULL; /* arena memory: nothing to free */
		lb_slub_cache_destroy(c);
		return ENOMEM;
	}
	int err = arena ? ops->init_shared(c->list_lock) : ops->init(c->list_lock);
	if (err) {
		if (!arena)
			lb_lock_free(c->list_lock);
		c->list_lock = NULL;
		lb_slub_cache_destroy(c);
		return err;
	}
	c->owner_gap_cycles = (uint64_t)((double)LB_SCHED_PREEMPT_GAP_NS * lb_cycles_per_ns());
	err = c->tuning.cpu_mode != LB_SLUB_PER_THREAD ? slots_init(c) : 0;
	if (err)
		lb_slub_cache_destroy(c);
	return err;
}

int lb_slub_cache_init_tuned(struct lb_slub_cache *c, const struct lb_lock_ops *ops, size_t payload,
			     size_t max_bytes, const struct lb_slub_tuning *tuning)
{
	return cache_init(c, ops, payload, max_bytes, tuning, NULL);
}

int lb_slub_cache_init_shared(struct lb_slub_cache *c, const struct lb_lock_ops *ops,
			      size_t payload, size_t max_bytes,
			      const struct lb_slub_tuning *tuning, struct lb_arena *arena)
{
	return cache_init(c, ops, payload, max_bytes, tuning, arena);
}

void lb_slub_cache_destroy(struct lb_slub_cache *c)
{
	if (c->list_lock) {
		if (c->ops->destroy)
			c->ops->destroy(c->list_lock);
		if (!c->arena)
			lb_lock_free(c->list_lock);
	}
	for (uint32_t k = 0; k < c->nslots; k++)
		pthread_mutex_destroy(&c->slots[k].lock);
	if (!c->arena)
		free(c->slots);
	c->slots = NULL;
	c->nslots = 0;
	if (c->base)
		munmap(c->base, c->map_bytes);
	if (!c->arena)
		free(c->pages); /* arena memory goes with the arena */
	c->list_lock = NULL;
	c->base = NULL;
	c->pages = NULL;
}

/* ---- list_lock ------------------------------------------------------- */

static void sleep_us(long us)
{
	struct timespec ts = { 0, us * 1000 };
	nanosleep(&ts, NULL);
}

/* A waiter's state: its word and the cache's count of waiters in it
 * (relaxed: a gauge; nothing is ordered by them). */
static _Atomic uint32_t *waiters_in(struct lb_slub_cache *c, int state)
{
	return state == LB_SLUB_LS_SPINNING ? &c->waiters_spinning
	       : state == LB_SLUB_LS_MAYSLEEP ? &c->waiters_maysleep
					      : NULL;
}

static void wait_state_set(struct lb_slub_cpu *cpu, int from, int to)
{
	_Atomic uint32_t *a = waiters_in(cpu->cache, from), *b = waiters_in(cpu->cache, to);
	if (a)
		atomic_fetch_sub_explicit(a, 1, RLX);
	atomic_store_explicit(&cpu->lock_state, to, RLX);
	if (b)
		atomic_fetch_add_explicit(b, 1, RLX);
}

/* Wait for list_lock (ops->lock, or the bounded trylock wait), in the
 * waiting state `state`; the bounded wait's pauses are off the CPU. */
static void list_lock_wait(struct lb_slub_cpu *cpu, int state)
{
	struct lb_slub_cache *c = cpu->cache;
	if (cpu->spin_budget_ns) {
		/*
		 * An RT thread and a lock whose waiters only spin: the holder may
		 * be a normal thread this one preempted on its own CPU, which
		 * cannot run again while we spin (livelock until RT throttling).
		 * Spin for the budget, then sleep 50 us between tries so the
		 * holder can finish: every wait stays bounded.
		 */
		uint64_t t0 = lb_now_ns();
		bool exhausted = false;
		while (!c->ops->trylock(c->list_lock, cpu->tctx)) {
			if (exhausted || lb_now_ns() - t0 > cpu->spin_budget_ns) {
				if (!exhausted)
					cpu->budget_exhausted++;
				exhausted = true;
				wait_state_set(cpu, state, LB_SLUB_LS_OFFCPU);
				sleep_us(50);
				wait_state_set(cpu, LB_SLUB_LS_OFFCPU, state);
			} else {
				lb_cpu_relax(); /* spin-wait: the holder runs elsewhere */
			}
		}
	} else {
		c->ops->lock(c->list_lock, cpu->tctx);
	}
}

/* Where a waiter of this cache waits: spinning, unless it waits inside a
 * lock() whose waiters may sleep (the bounded wait spins). */
static int waiting_state(const struct lb_slub_cpu *cpu)
{
	bool may_sleep = (cpu->cache->ops->flags & LB_LOCK_F_SLEEPS) && !cpu->spin_budget_ns;
	return may_sleep ? LB_SLUB_LS_MAYSLEEP : LB_SLUB_LS_SPINNING;
}

static unsigned int running_bin(uint64_t n)
{
	return n <= 1 ? 0 : n == 2 ? 1 : 2;
}

/*
 * The running-contenders gauge at an attempt that found list_lock taken
 * (doc/rt.md, "Running contenders"): this task (on its CPU, attempting),
 * the owner when it is on its CPU, and the waiters that spin.  The owner
 * is on its CPU unless lb_sched_owner_running() says it announced a wait
 * off it (aim7's stand-in for owner->on_cpu), or it has held list_lock
 * longer than owner_gap_cycles (a section takes well under a microsecond
 * when it runs: it lost its CPU).  An owner not yet published (or already
 * gone) is running the lock's code: counted.  Waiters inside a lock()
 * that may sleep are counted asleep (lo) and running (hi).  Relaxed loads
 * but the owner pointer's (a gauge); the owner record stays valid (slub.h).
 */
static void running_gauge(struct lb_slub_cpu *cpu, uint64_t now)
{
	struct lb_slub_cache *c = cpu->cache;
	/* Acquire pairs with list_lock()'s release of c->owner: the owner's
	 * record was written by whoever made that task (another thread) before
	 * the owner published it; relaxed, TSan saw that write race this read
	 * (rt-slab under TSan, 2 of 2 runs of one CI). */
	struct lb_slub_cpu *o = atomic_load_explicit(&c->owner, memory_order_acquire);
	uint64_t since = atomic_load_explicit(&c->owner_since, RLX);
	uint64_t running = 1;
	if (o && !lb_sched_owner_running(&o->sched))
		cpu->owner_off_announced++;
	else if (o && now > since && now - since > c->owner_gap_cycles)
		cpu->owner_off_held++;
	else
		running++;
	running += atomic_load_explicit(&c->waiters_spinning, RLX);
	uint64_t unknown = atomic_load_explicit(&c->waiters_maysleep, RLX);
	cpu->running_lo[running_bin(running)]++;
	cpu->running_hi[running_bin(running + unknown)]++;
}

static const char *const site_names[LB_SLUB_SITES] = {
	[LB_SLUB_SITE_PARTIAL_TAKE] = "partial_take",
	[LB_SLUB_SITE_FREE_FULL] = "free_full",
	[LB_SLUB_SITE_FREE_EMPTY] = "free_empty",
	[LB_SLUB_SITE_PARTIAL_NONE] = "partial_none",
	[LB_SLUB_SITE_FREE_NOMOVE] = "free_nomove",
	[LB_SLUB_SITE_FLUSH] = "flush",
	[LB_SLUB_SITE_UNFREEZE] = "unfreeze",
	[LB_SLUB_SITE_OTHER] = "other",
};

const char *lb_slub_site_name(enum lb_slub_site site)
{
	return (unsigned int)site < LB_SLUB_SITES ? site_names[site] : "?";
}

/* An acquisition counted under `from` turned out to be for `to`. */
static void site_recount(struct lb_slub_cpu *cpu, enum lb_slub_site from, enum lb_slub_site to)
{
	cpu->site_acquires[from]--;
	cpu->site_acquires[to]++;
}

static void list_lock(struct lb_slub_cpu *cpu, enum lb_slub_site site)
{
	struct lb_slub_cache *c = cpu->cache;
	atomic_store_explicit(&cpu->lock_state, LB_SLUB_LS_SPINNING, RLX);
	/* A first trylock tells a contended acquisition from a free one, the
	 * same way for every lock (one extra attempt, as the lock's own fast
	 * path would make); a lock without trylock is not gauged. */
	bool gauged = c->ops->trylock != NULL;
	uint64_t w0 = 0;
	if (c->raw) /* spinning is part of a raw section (raw_section.h) */
		lb_raw_enter(&cpu->raw);
	bool at_once = gauged && c->ops->trylock(c->list_lock, cpu->tctx);
	if (!at_once) {
		if (gauged) {
			cpu->lock_contended++;
			w0 = lb_cycles();
			running_gauge(cpu, w0);
		}
		if (c->raw) /* only a waiter pays for the boosts */
			lb_raw_contended(&cpu->raw);
		int state = waiting_state(cpu);
		atomic_fetch_add_explicit(&c->lock_waiters, 1, RLX);
		wait_state_set(cpu, LB_SLUB_LS_OUT, state);
		list_lock_wait(cpu, state);
		wait_state_set(cpu, state, LB_SLUB_LS_OUT);
		atomic_fetch_sub_explicit(&c->lock_waiters, 1, RLX);
	}
	/* Contenders at this acquisition: us and those still waiting (a
	 * gauge; relaxed, nothing is ordered by it). */
	uint64_t contenders = 1 + atomic_load_explicit(&c->lock_waiters, RLX);
	cpu->contenders_sum += contenders;
	if (contenders > cpu->contenders_max)
		cpu->contenders_max = contenders;
	if (c->raw)
		lb_raw_acquired(&cpu->raw, !at_once);
	atomic_store_explicit(&cpu->lock_state, LB_SLUB_LS_HOLDS, RLX);
	cpu->lock_acquires++;
	cpu->site_acquires[site]++;
	cpu->hold_start = lb_cycles();
	/* The holder for the running gauge (relaxed: the lock orders one
	 * holder's stores before the next's; readers only gauge). */
	atomic_store_explicit(&c->owner_since, cpu->hold_start, RLX);
	/* Release: publishes this task's record to running_gauge()'s acquire. */
	atomic_store_explicit(&c->owner, cpu, memory_order_release);
	if (w0)
		cpu->contended_wait_cycles += cpu->hold_start - w0;
}

static void list_unlock(struct lb_slub_cpu *cpu)
{
	uint64_t held = lb_cycles() - cpu->hold_start;
	cpu->hold_cycles_sum += held;
	if (held > cpu->max_hold_cycles)
		cpu->max_hold_cycles = held;
	atomic_store_explicit(&cpu->cache->owner, NULL, RLX);
	cpu->cache->ops->unlock(cpu->cache->list_lock, cpu->tctx);
	atomic_store_explicit(&cpu->lock_state, LB_SLUB_LS_OUT, RLX);
	if (cpu->cache->raw)
		lb_raw_exit(&cpu->raw);
}

void lb_slub_debug_lock(struct lb_slub_cpu *cpu)
{
	list_lock(cpu, LB_SLUB_SITE_OTHER);
}

void lb_slub_debug_unlock(struct lb_slub_cpu *cpu)
{
	list_unlock(cpu);
}

void lb_slub_cpu_offcpu(struct lb_slub_cpu *cpu, bool begin)
{
	if (begin)
		lb_sched_block_begin(&cpu->sched);
	else
		lb_sched_block_end(&cpu->sched);
	if (cpu->cache->ops->offcpu)
		cpu->cache->ops->offcpu(cpu->tctx, begin);
}

void lb_slub_debug_hold_lock(struct lb_slub_cpu *cpu)
{
	list_lock(cpu, LB_SLUB_SITE_OTHER);
	lb_slub_cpu_offcpu(cpu, true); /* the hang sleeps: off its CPU */
	for (;;)
		sleep_us(100000); /* the injected hang: only the watchdog ends it */
}

/* ---- lists (list_lock held) ------------------------------------------ */

/*
 * A page's count against the list it is about to join (issue 39): a page
 * goes onto the partial list unfrozen with a free object, into the empty
 * pool unfrozen with none in use.  Exact at the move: the mover holds
 * list_lock (partial) or the page's last object came back (pool), so no
 * one can take an object from the page meanwhile, and lockless frees only
 * lower the count.  A mover that decided on a stale count (a free that
 * read the count before waiting for list_lock, while an allocator popped
 * an object) is reported here, when it happens: once the object comes
 * back the lists and counts agree again and lb_slub_check() at the end
 * sees nothing.  Relaxed: the count of the page being moved, read by its
 * mover.
 */
static void check_move(struct lb_slub_cache *c, uint32_t page, bool to_pool)
{
	uint64_t w = atomic_load_explicit(&c->pages[page].fc, RLX);
	if (fc_owner(w))
		violation(c, "page %u moved to the %s while frozen by cpu slab %u", page,
			  to_pool ? "empty pool" : "partial list", fc_owner(w) - 1);
	else if (to_pool && fc_inuse(w))
		violation(c, "page %u moved to the empty pool with %u objects in use", page,
			  fc_inuse(w));
	else if (!to_pool && fc_inuse(w) >= c->objs_per_page)
		violation(c, "page %u moved to the partial list with all %u objects in use", page,
			  fc_inuse(w));
}

static void partial_add(struct lb_slub_cache *c, uint32_t page)
{
	struct lb_slub_page *pg = &c->pages[page];
	check_move(c, page, false);
	uint32_t tail = atomic_load_explicit(&c->partial_tail, RLX);
	atomic_store_explicit(&pg->prev, tail, RLX);
	atomic_store_explicit(&pg->next, 0, RLX);
	if (tail && tail <= c->capacity)
		atomic_store_explicit(&c->pages[tail - 1].next, page + 1, RLX);
	else
		atomic_store_explicit(&c->partial_head, page + 1, RLX);
	atomic_store_explicit(&c->partial_tail, page + 1, RLX);
	atomic_store_explicit(&pg->on_list, 1, RLX);
	atomic_fetch_add_explicit(&c->nr_partial, 1, RLX);
}

static void partial_del(struct lb_slub_cache *c, uint32_t page)
{
	struct lb_slub_page *pg = &c->pages[page];
	uint32_t prev = atomic_load_explicit(&pg->prev, RLX);
	uint32_t next = atomic_load_explicit(&pg->next, RLX);
	if (prev && prev <= c->capacity)
		atomic_store_explicit(&c->pages[prev - 1].next, next, RLX);
	else
		atomic_store_explicit(&c->partial_head, next, RLX);
	if (next && next <= c->capacity)
		atomic_store_explicit(&c->pages[next - 1].prev, prev, RLX);
	else
		atomic_store_explicit(&c->partial_tail, prev, RLX);
	atomic_store_explicit(&pg->on_list, 0, RLX);
	atomic_fetch_sub_explicit(&c->nr_partial, 1, RLX);
}

/*
 * The empty pool is the page allocator's: a stack of its own, changed only
 * by compare-and-swap on (tag << 32 | top page index + 1), never under
 * list_lock of necessity (the kernel's new_slab() and discard_slab() run
 * outside n->list_lock, mm/slub.c v6.18).  The tag, bumped by every change,
 * makes a pop that read a stale top fail (no ABA).
 */
static inline uint32_t empty_top(uint64_t w) { return (uint32_t)w; }

static void empty_push(struct lb_slub_cache *c, uint32_t page)
{
	struct lb_slub_page *pg = &c->pages[page];
	check_move(c, page, true);
	atomic_store_explicit(&pg->on_list, 2, RLX);
	atomic_fetch_add_explicit(&c->nr_empty, 1, RLX);
	uint64_t old = atomic_load_explicit(&c->empty_head, RLX), nw;
	/* CAS loop: against other pushes and pops.  Release: the page's link
	 * and marks before a popper (acquire) can take it. */
	do {
		atomic_store_explicit(&pg->next, empty_top(old), RLX);
		nw = ((old >> 32) + 1) << 32 | (page + 1);
	} while (!atomic_compare_exchange_weak_explicit(&c->empty_head, &old, nw, REL, RLX));
}

/* An empty page off the pool's stack (page index + 1), 0 when none. */
static uint32_t empty_pop(struct lb_slub_cache *c)
{
	uint64_t old = atomic_load_explicit(&c->empty_head, ACQ);
	/* CAS loop: against other pushes and pops; acquire pairs with the
	 * push's release (the link read below is the pusher's). */
	for (;;) {
		uint32_t head = empty_top(old);
		if (!head)
			return 0;
		if (head > atomic_load_explicit(&c->pages_used, RLX)) {
			violation(c, "empty-page list points outside the pool (%u)", head);
			return 0;
		}
		uint32_t next = atomic_load_explicit(&c->pages[head - 1].next, RLX);
		uint64_t nw = ((old >> 32) + 1) << 32 | next;
		if (atomic_compare_exchange_weak_explicit(&c->empty_head, &old, nw, ACQREL, ACQ)) {
			atomic_store_explicit(&c->pages[head - 1].on_list, 0, RLX);
			atomic_fetch_sub_explicit(&c->nr_empty, 1, RLX);
			return head;
		}
	}
}

/* Every object of `page` free, on its freelist in address order. */
static void carve(struct lb_slub_cache *c, uint32_t page)
{
	uint32_t first = page * c->objs_per_page;
	for (uint32_t i = 0; i < c->objs_per_page; i++) {
		struct obj_hdr *h = hdr_of(c, first + i);
		atomic_store_explicit(&h->state, OBJ_FREE, RLX);
		atomic_store_explicit(&h->next, i + 1 < c->objs_per_page ? first + i + 2 : 0, RLX);
	}
	/* Release: the links above before the page can be taken (acquire). */
	atomic_store_explicit(&c->pages[page].fc, fc_make(first + 1, 0, 0), REL);
}

/* A fresh page from the pool with every object on its freelist; no lock
 * needed (the bump index hands each page to one thread).  0 when full. */
static uint32_t page_new(struct lb_slub_cache *c)
{
	uint32_t page = atomic_fetch_add_explicit(&c->pages_used, 1, RLX);
	if (page >= c->capacity) {
		atomic_fetch_sub_explicit(&c->pages_used, 1, RLX);
		return 0;
	}
	carve(c, page);
	return page + 1;
}

/* Make `page` (index + 1) the cpu slab: all its free objects become ours. */
/* Freeze page (1-based) as our cpu slab; the free objects it brought. */
static uint32_t freeze(struct lb_slub_cpu *cpu, uint32_t page)
{
	struct lb_slub_cache *c = cpu->cache;
	struct lb_slub_page *pg = &c->pages[page - 1];
	uint64_t old = atomic_load_explicit(&pg->fc, RLX);
	/* CAS loop: take the whole freelist (lockless remote frees may push
	 * onto it meanwhile); acquire: their links are seen. */
	while (!atomic_compare_exchange_weak_explicit(&pg->fc, &old,
						      fc_make(0, c->objs_per_page, cpu->cs->owner),
						      ACQREL, RLX))
		;
	cpu->cs->page = page;
	cpu->cs->freelist = fc_free(old);
	return c->objs_per_page - fc_inuse(old);
}

/* Put a page that is not frozen and on no list where its count says. */
static void place_page(struct lb_slub_cache *c, uint32_t page)
{
	uint32_t inuse = fc_inuse(atomic_load_explicit(&c->pages[page].fc, RLX));
	if (inuse == 0 && atomic_load_explicit(&c->nr_partial, RLX) >= c->tuning.min_partial)
		empty_push(c, page);
	else if (inuse < c->objs_per_page)
		partial_add(c, page);
	/* else full: on no list, as in SLUB without debugging */
}

/* Pop one object off a page's shared freelist (list_lock held); 0 if empty. */
static uint32_t page_pop(struct lb_slub_cache *c, uint32_t page)
{
	struct lb_slub_page *pg = &c->pages[page];
	uint64_t old = atomic_load_explicit(&pg->fc, ACQ);
	/* CAS loop: pop one.  No ABA: objects leave a page's freelist only
	 * under list_lock or by its frozen owner (a page on the partial list
	 * has none), and an object comes back only after it left. */
	for (;;) {
		uint32_t head = fc_free(old);
		if (!head)
			return 0;
		if (!index_valid(c, head - 1) || (head - 1) / c->objs_per_page != page) {
			violation(c, "page %u freelist points at object %u of another page", page,
				  head - 1);
			atomic_store_explicit(&pg->fc, fc_make(0, fc_inuse(old), fc_owner(old)), RLX);
			return 0;
		}
		uint32_t next = atomic_load_explicit(&hdr_of(c, head - 1)->next, RLX);
		if (atomic_compare_exchange_weak_explicit(
			    &pg->fc, &old, fc_make(next, fc_inuse(old) + 1, fc_owner(old)), ACQREL, ACQ))
			return head;
	}
}

/* ---- allocation ------------------------------------------------------ */

static void *claim(struct lb_slub_cpu *cpu, uint32_t idx)
{
	struct lb_slub_cache *c = cpu->cache;
	struct obj_hdr *h = hdr_of(c, idx);
	/* exchange: the one atomic step that catches an object handed out twice;
	 * relaxed, the lock (or the cpu slab's privacy) orders the payload. */
	uint32_t old = atomic_exchange_explicit(&h->state, OBJ_ALLOC, RLX);
	if (old != OBJ_FREE)
		violation(c, "object %u handed out while %s", idx,
			  old == OBJ_ALLOC ? "already allocated" : "never carved");
	cpu->allocs++;
	return (char *)h + HDR_SIZE;
}

/* ---- cpu partial pages (tuning.cpu_partial > 0) ------------------------ */

#define ON_CPU_PARTIAL 3u /* pg->on_list of a page on its owner's cpu partial list */

static uint32_t cpu_partial_max_pages(const struct lb_slub_cache *c)
{
	return (c->tuning.cpu_partial + c->objs_per_page - 1) / c->objs_per_page;
}

/* Whether `page` (index) is on this thread's cpu partial list.  Only the
 * owner changes `frozen` to or from its own id, so the owner reads it
 * without the lock. */
/* The node partial list's head (page index + 1; 0: empty), list_lock
 * held; a head outside the pool is a violation and reads as empty. */
static uint32_t partial_head_checked(struct lb_slub_cache *c)
{
	uint32_t page = atomic_load_explicit(&c->partial_head, RLX);
	if (page > atomic_load_explicit(&c->pages_used, RLX)) {
		violation(c, "partial list points outside the pool (%u)", page);
		atomic_store_explicit(&c->partial_head, 0, RLX);
		page = 0;
	}
	return page;
}

/* new_slab(): a page from the page allocator (the empty pool, else a
 * fresh one), without list_lock; it is private until frozen as cpu's
 * slab.  False when the pool is exhausted. */
static bool new_slab(struct lb_slub_cpu *cpu)
{
	struct lb_slub_cache *c = cpu->cache;
	uint32_t page = empty_pop(c);
	if (page && c->tuning.recarve_empty)
		carve(c, page - 1);
	if (!page)
		page = page_new(c);
	if (!page)
		return false;
	freeze(cpu, page);
	return true;
}

static bool on_my_partial(const struct lb_slub_cpu *cpu, uint32_t page)
{
	const struct lb_slub_page *pg = &cpu->cache->pages[page];
	return fc_owner(atomic_load_explicit(&pg->fc, RLX)) == cpu->cs->owner &&
	       atomic_load_explicit(&pg->on_list, RLX) == ON_CPU_PARTIAL;
}

/* Freeze `page` (index; unfrozen, on no list) onto the cpu partial list: its
 * shared free objects become the owner's private ones (list_lock held). */
static void cpu_partial_push_locked(struct lb_slub_cpu *cpu, uint32_t page)
{
	struct lb_slub_cache *c = cpu->cache;
	struct lb_slub_page *pg = &c->pages[page];
	uint64_t old = atomic_load_explicit(&pg->fc, RLX);
	/* CAS loop: freeze it and take its freelist (frees may push meanwhile). */
	while (!atomic_compare_exchange_weak_explicit(&pg->fc, &old,
						      fc_make(0, c->objs_per_page, cpu->cs->owner),
						      ACQREL, RLX))
		;
	atomic_store_explicit(&pg->on_list, ON_CPU_PARTIAL, RLX);
	pg->local_free = fc_free(old);
	atomic_store_explicit(&pg->next, cpu->cs->partial, RLX);
	cpu->cs->partial = page + 1;
	cpu->cs->nr_partial++;
}

/*
 * Unfreeze `page` (index), giving back a private chain of its objects that
 * starts at head (index + 1, 0: none) in one compare-and-swap with its
 * shared freelist and counters.  The chain is walked (and cut at a link
 * that leaves the page) first.  list_lock held: the caller places the page.
 */
static void unfreeze_with(struct lb_slub_cache *c, uint32_t page, uint32_t head, const char *what)
{
	struct lb_slub_page *pg = &c->pages[page];
	uint32_t n = 0, tail = 0;
	for (uint32_t idx = head; idx && n <= c->objs_per_page; n++) {
		if (!index_valid(c, idx - 1) || (idx - 1) / c->objs_per_page != page) {
			violation(c, "%s of page %u points at object %u", what, page, idx - 1);
			if (tail)
				atomic_store_explicit(&hdr_of(c, tail - 1)->next, 0, RLX);
			else
				head = 0;
			break;
		}
		tail = idx;
		idx = atomic_load_explicit(&hdr_of(c, idx - 1)->next, RLX);
	}
	uint64_t old = atomic_load_explicit(&pg->fc, RLX), nw;
	/* CAS loop: lockless remote frees may push meanwhile; release: our
	 * links before the chain is public. */
	do {
		uint32_t inuse = fc_inuse(old);
		if (tail)
			atomic_store_explicit(&hdr_of(c, tail - 1)->next, fc_free(old), RLX);
		nw = fc_make(tail ? head : fc_free(old), inuse >= n ? inuse - n : 0, 0);
	} while (!atomic_compare_exchange_weak_explicit(&pg->fc, &old, nw, ACQREL, RLX));
}

/* Every cpu partial page back where its count says (list_lock held): its
 * private objects onto its shared freelist, unfrozen, placed (min_partial). */
static void cpu_partial_unfreeze_locked(struct lb_slub_cpu *cpu)
{
	struct lb_slub_cache *c = cpu->cache;
	for (uint32_t n = 0; cpu->cs->partial && n <= c->capacity; n++) {
		uint32_t page = cpu->cs->partial - 1;
		struct lb_slub_page *pg = &c->pages[page];
		cpu->cs->partial = atomic_load_explicit(&pg->next, RLX);
		unfreeze_with(c, page, pg->local_free, "cpu partial freelist");
		pg->local_free = 0;
		atomic_store_explicit(&pg->on_list, 0, RLX);
		place_page(c, page);
	}
	cpu->cs->partial = 0;
	cpu->cs->nr_partial = 0;
}

/* Without the lock: make a cpu partial page with private objects the cpu
 * slab; the dry cpu slab takes its place on the list (still frozen, so the
 * owner's frees to it stay lockless).  False when no page has any. */
static bool cpu_partial_swap_in(struct lb_slub_cpu *cpu)
{
	struct lb_slub_cache *c = cpu->cache;
	uint32_t prev = 0, cur = cpu->cs->partial;
	for (uint32_t n = 0; cur && n < cpu->cs->nr_partial; n++) {
		struct lb_slub_page *pg = &c->pages[cur - 1];
		uint32_t next = atomic_load_explicit(&pg->next, RLX);
		if (pg->local_free) {
			if (prev)
				atomic_store_explicit(&c->pages[prev - 1].next, next, RLX);
			else
				cpu->cs->partial = next;
			cpu->cs->nr_partial--;
			uint32_t old = cpu->cs->page;
			cpu->cs->page = cur;
			cpu->cs->freelist = pg->local_free;
			pg->local_free = 0;
			atomic_store_explicit(&pg->on_list, 0, RLX); /* frozen: the cpu slab */
			if (old) {
				struct lb_slub_page *op = &c->pages[old - 1];
				atomic_store_explicit(&op->on_list, ON_CPU_PARTIAL, RLX);
				op->local_free = 0;
				atomic_store_explicit(&op->next, cpu->cs->partial, RLX);
				cpu->cs->partial = old;
				cpu->cs->nr_partial++;
			}
			cpu->partial_refills++;
			return true;
		}
		prev = cur;
		cur = next;
	}
	return false;
}

/*
 * Without list_lock: the objects others freed into our frozen page become
 * our cpu freelist (SLUB's get_freelist).  When there are none the page is
 * unfrozen in the same compare-and-swap: full, on no list, and the next
 * remote free to it puts it on the partial list.  False then.
 */
static bool take_own_freelist(struct lb_slub_cpu *cpu)
{
	struct lb_slub_cache *c = cpu->cache;
	struct lb_slub_page *pg = &c->pages[cpu->cs->page - 1];
	uint64_t old = atomic_load_explicit(&pg->fc, RLX), nw;
	/* CAS loop: against remote frees pushing meanwhile; acquire: their
	 * links are seen. */
	do {
		nw = fc_free(old) ? fc_make(0, c->objs_per_page, cpu->cs->owner)
				  : fc_make(0, fc_inuse(old), 0);
	} while (!atomic_compare_exchange_weak_explicit(&pg->fc, &old, nw, ACQREL, RLX));
	if (fc_free(old)) {
		cpu->cs->freelist = fc_free(old);
		cpu->lockless_refills++;
		return true;
	}
	cpu->cs->page = 0;
	return false;
}

static bool sysfs_zero(const struct lb_slub_cache *c);
static bool refill_sz(struct lb_slub_cpu *cpu);

/* The cpu freelist ran dry: collect remote frees of the frozen page, or
 * freeze another page.  False when the pool is exhausted. */
static bool refill(struct lb_slub_cpu *cpu)
{
	struct lb_slub_cache *c = cpu->cache;
	uint32_t page = 0;

	cpu->refills++;
	if (sysfs_zero(c))
		return refill_sz(cpu);

	/* The cpu partial pages first: a swap keeps the dry page frozen on
	 * that list, so our own later frees to it stay lockless. */
	if (cpu->cs->partial && cpu_partial_swap_in(cpu))
		return true;
	if (cpu->cs->page && take_own_freelist(cpu))
		return true;
	/*
	 * list_lock only when there is a partial page to take (or cpu partial
	 * pages to give back): the kernel's get_partial_node() reads
	 * n->nr_partial without the lock and returns at once when it is 0
	 * (mm/slub.c v6.18).  Relaxed: a stale 0 only means a new page.
	 */
	if (cpu->cs->partial || atomic_load_explicit(&c->nr_partial, RLX)) {
		list_lock(cpu, LB_SLUB_SITE_PARTIAL_NONE);
		if (cpu->cs->partial)
			cpu_partial_unfreeze_locked(cpu); /* none had objects of its own */
		page = partial_head_checked(c);
		if (page) {
			partial_del(c, page - 1);
			cpu->partial_take_objs += freeze(cpu, page);
			site_recount(cpu, LB_SLUB_SITE_PARTIAL_NONE, LB_SLUB_SITE_PARTIAL_TAKE);
		}
		list_unlock(cpu);
		if (page)
			return true; /* the caller retries if the page had nothing after all */
	}
	return new_slab(cpu);
}

/* Pop the cpu freelist (which must be non-empty); 0 when its link is bad. */
static uint32_t cpu_pop(struct lb_slub_cpu *cpu)
{
	struct lb_slub_cache *c = cpu->cache;
	uint32_t head = cpu->cs->freelist;
	if (!index_valid(c, head - 1) || (head - 1) / c->objs_per_page != cpu->cs->page - 1) {
		violation(c, "cpu slab %u freelist points at object %u of another page", cpu->id,
			  head - 1);
		cpu->cs->freelist = 0;
		return 0;
	}
	cpu->cs->freelist = atomic_load_explicit(&hdr_of(c, head - 1)->next, RLX);
	return head;
}

static void *alloc_cs(struct lb_slub_cpu *cpu)
{
	for (int tries = 0; tries < 4; tries++) {
		if (!cpu->cs->freelist && !refill(cpu))
			return NULL;
		uint32_t head = cpu->cs->freelist ? cpu_pop(cpu) : 0;
		if (head)
			return claim(cpu, head - 1);
	}
	return NULL;
}

static size_t alloc_bulk_cs(struct lb_slub_cpu *cpu, size_t n, void **out)
{
	size_t got = 0;
	for (int dry = 0; got < n && dry < 4;) {
		if (!cpu->cs->freelist && !refill(cpu))
			break;
		size_t before = got;
		while (got < n && cpu->cs->freelist) {
			uint32_t head = cpu_pop(cpu);
			if (!head)
				break;
			out[got++] = claim(cpu, head - 1);
		}
		dry = got == before ? dry + 1 : 0; /* a refill that gave nothing: retry a few times */
	}
	return got;
}

void *lb_slub_alloc_nocache(struct lb_slub_cpu *cpu)
{
	struct lb_slub_cache *c = cpu->cache;
	for (int tries = 0; tries < 4; tries++) {
		uint32_t idx = 0;
		list_lock(cpu, LB_SLUB_SITE_OTHER);
		uint32_t page = partial_head_checked(c);
		if (!page) {
			page = empty_pop(c);
			if (page)
				partial_add(c, page - 1);
		}
		if (page) {
			idx = page_pop(c, page - 1);
			struct lb_slub_page *pg = &c->pages[page - 1];
			uint64_t w = atomic_load_explicit(&pg->fc, RLX);
			/* Now full: remote frees to it need list_lock (they put
			 * it back), so it cannot gain an object unseen here. */
			if (fc_inuse(w) >= c->objs_per_page || !fc_free(w))
				partial_del(c, page - 1);
		}
		list_unlock(cpu);
		if (idx)
			return claim(cpu, idx - 1);
		if (!page) {
			uint32_t fresh = page_new(c);
			if (!fresh)
				return NULL;
			list_lock(cpu, LB_SLUB_SITE_OTHER);
			partial_add(c, fresh - 1);
			list_unlock(cpu);
		}
	}
	return NULL;
}

/* ---- free ------------------------------------------------------------ */

/* Check and mark a payload pointer free; its index, or UINT32_MAX. */
static uint32_t release(struct lb_slub_cpu *cpu, void *obj)
{
	struct lb_slub_cache *c = cpu->cache;
	uint32_t idx = index_of(c, obj);
	if (idx == UINT32_MAX) {
		violation(c, "free of %p, which is no object of this cache", obj);
		return UINT32_MAX;
	}
	/* exchange: catches a double free; relaxed as in claim(). */
	uint32_t old = atomic_exchange_explicit(&hdr_of(c, idx)->state, OBJ_FREE, RLX);
	if (old != OBJ_ALLOC) {
		violation(c, "object %u freed while %s", idx, old == OBJ_FREE ? "free" : "never carved");
		return UINT32_MAX;
	}
	cpu->frees++;
	return idx;
}

/*
 * An object of a page that is not ours goes to its page (SLUB's
 * __slab_free): pushed by compare-and-swap on the page's freelist and
 * counters.  list_lock only when the page must change lists: not frozen,
 * and full before the free (it becomes partial) or empty after it (it may
 * go to the pool).  Then the lock is taken before the swap, so list_lock
 * holders see the count and the list move together.  *locked: whether we
 * hold list_lock (the bulk free may already); the caller releases it.
 */
static void remote_free(struct lb_slub_cpu *cpu, uint32_t idx, bool to_cpu_partial, bool *locked)
{
	struct lb_slub_cache *c = cpu->cache;
	uint32_t page = idx / c->objs_per_page;
	struct lb_slub_page *pg = &c->pages[page];
	uint64_t old = atomic_load_explicit(&pg->fc, RLX);
	uint32_t prior, inuse, owner;
	bool moves, took = false;
	/* CAS loop: frees, refills and freezes race on the word. */
	for (;;) {
		prior = fc_free(old);
		inuse = fc_inuse(old);
		owner = fc_owner(old);
		if (inuse == 0) {
			violation(c, "page %u count went below zero", page);
			return;
		}
		moves = !owner && (!prior || inuse == 1);
		if (moves && !*locked) {
			list_lock(cpu, LB_SLUB_SITE_FREE_NOMOVE); /* recounted below if it moves */
			*locked = took = true;
			old = atomic_load_explicit(&pg->fc, RLX);
			continue;
		}
		atomic_store_explicit(&hdr_of(c, idx)->next, prior, RLX);
		/* Release: the link above before the object is on the list. */
		if (atomic_compare_exchange_weak_explicit(&pg->fc, &old,
							  fc_make(idx + 1, inuse - 1, owner), REL, RLX))
			break;
	}
	cpu->remote_frees++;
	if (took && moves)
		site_recount(cpu, LB_SLUB_SITE_FREE_NOMOVE,
			     !prior ? LB_SLUB_SITE_FREE_FULL : LB_SLUB_SITE_FREE_EMPTY);
	if (!moves) {
		cpu->lockless_frees++; /* frozen (its owner collects it), or stays partial */
		return;
	}
	uint32_t on = atomic_load_explicit(&pg->on_list, RLX);
	if (!prior && on == 0 && to_cpu_partial && c->tuning.cpu_partial) {
		/* Was full: onto our cpu partial list (SLUB's put_cpu_partial); a full
		 * list goes back to the node lists first. */
		if (cpu->cs->nr_partial >= cpu_partial_max_pages(c))
			cpu_partial_unfreeze_locked(cpu);
		cpu_partial_push_locked(cpu, page);
	} else if (!prior && on == 0) {
		place_page(c, page); /* was full */
	} else if (on == 1 && inuse - 1 == 0 &&
		   atomic_load_explicit(&c->nr_partial, RLX) > c->tuning.min_partial) {
		partial_del(c, page);
		empty_push(c, page);
	}
}

/* An object of one of our cpu partial pages: its private freelist, no lock. */
/*
 * A free's fast path into the task's cpu slab (cpu->cs: its own, or the
 * slot whose local lock it holds): idx goes onto the cpu freelist when
 * its page is the cpu slab.  False: another page's object, nothing done.
 */
static bool cpu_slab_push(struct lb_slub_cpu *cpu, uint32_t idx)
{
	struct lb_slub_cache *c = cpu->cache;
	if (!cpu->cs->page || idx / c->objs_per_page != cpu->cs->page - 1)
		return false;
	atomic_store_explicit(&hdr_of(c, idx)->next, cpu->cs->freelist, RLX);
	cpu->cs->freelist = idx + 1;
	return true;
}

static void local_free_push(struct lb_slub_cpu *cpu, uint32_t idx)
{
	struct lb_slub_page *pg = &cpu->cache->pages[idx / cpu->cache->objs_per_page];
	atomic_store_explicit(&hdr_of(cpu->cache, idx)->next, pg->local_free, RLX);
	pg->local_free = idx + 1;
	cpu->partial_frees++;
}

/* Free object idx (released) with cpu->cs the cpu slab it may belong to. */
static void free_cs(struct lb_slub_cpu *cpu, uint32_t idx)
{
	struct lb_slub_cache *c = cpu->cache;
	if (cpu_slab_push(cpu, idx)) /* our own cpu slab: the lockless fast path */
		return;
	if (cpu->cs->partial && on_my_partial(cpu, idx / c->objs_per_page)) {
		local_free_push(cpu, idx);
		return;
	}
	bool locked = false;
	remote_free(cpu, idx, true, &locked);
	if (locked)
		list_unlock(cpu);
}

void lb_slub_free_nocache(struct lb_slub_cpu *cpu, void *obj)
{
	uint32_t idx = release(cpu, obj);
	if (idx == UINT32_MAX)
		return;
	bool locked = false;
	remote_free(cpu, idx, false, &locked);
	if (locked)
		list_unlock(cpu);
}

static void free_bulk_cs(struct lb_slub_cpu *cpu, size_t n, void *const *objs)
{
	struct lb_slub_cache *c = cpu->cache;
	bool locked = false;
	for (size_t i = 0; i < n; i++) {
		uint32_t idx = release(cpu, objs[i]);
		if (idx == UINT32_MAX)
			continue;
		if (cpu_slab_push(cpu, idx))
			continue;
		if (cpu->cs->partial && on_my_partial(cpu, idx / c->objs_per_page)) {
			local_free_push(cpu, idx);
			continue;
		}
		remote_free(cpu, idx, true, &locked);
	}
	if (locked)
		list_unlock(cpu);
}

/* ---- per-CPU cpu slabs (tuning.cpu_mode PER_CPU, PER_CPU_LOCAL_LOCK) ---- */

#define TID_ONE (UINT64_C(1) << 32)
static inline bool tid_locked(uint64_t w) { return (w >> 32) & 1; }

uint32_t lb_slub_current_slot(const struct lb_slub_cache *c)
{
	int k = sched_getcpu(); /* glibc reads it from the rseq area */
	return k < 0 || !c->nslots ? 0 : (uint32_t)k % c->nslots;
}

/* Take slot s's local lock: cpu->cs becomes its cpu slab.  PER_CPU: the tid
 * turns odd and the freelist in the word becomes cs.freelist. */
static void slot_lock_at(struct lb_slub_cpu *cpu, struct lb_slub_pcpu *s)
{
	pthread_mutex_lock(&s->lock);
	cpu->slot = s;
	cpu->cs = &s->cs;
	if (cpu->cache->tuning.cpu_mode == LB_SLUB_PER_CPU) {
		/* The fetch-add makes every commit that read an even tid fail;
		 * acquire: the links of objects pushed before it are seen. */
		uint64_t w = atomic_fetch_add_explicit(&s->fl_tid, TID_ONE, ACQ);
		s->cs.freelist = (uint32_t)w;
	}
}

static void slot_lock(struct lb_slub_cpu *cpu)
{
	slot_lock_at(cpu, &cpu->cache->slots[lb_slub_current_slot(cpu->cache)]);
}

static void slot_unlock(struct lb_slub_cpu *cpu)
{
	struct lb_slub_pcpu *s = cpu->slot;
	atomic_store_explicit(&s->page, s->cs.page, RLX);
	if (cpu->cache->tuning.cpu_mode == LB_SLUB_PER_CPU) {
		uint64_t w = atomic_load_explicit(&s->fl_tid, RLX);
		/* Release: the page above and the freelist's links before a
		 * lockless path can see the even tid (its acquire load). */
		atomic_store_explicit(&s->fl_tid,
				      (uint64_t)s->cs.freelist | (((w >> 32) + 1) << 32), REL);
	}
	cpu->slot = NULL;
	cpu->cs = &cpu->own;
	pthread_mutex_unlock(&s->lock);
}

/* The fast path's commit of slot k's word: the rseq section, or the C11
 * fallback (slub_rseq.h); debug_broken_commit stores without checking. */
static int commit_word(struct lb_slub_cache *c, uint32_t k, _Atomic uint64_t *word,
		       uint64_t expect, uint64_t desired)
{
	if (c->debug_broken_commit) {
		atomic_store_explicit(word, desired, REL);
		return LB_SLUB_COMMIT_OK;
	}
#if LB_SLUB_RSEQ_ASM
	if (lb_slub_rseq_usable())
		return lb_slub_rseq_cas(k, word, expect, desired);
#endif
	if (lb_slub_current_slot(c) != k)
		return LB_SLUB_COMMIT_MOVED;
	return atomic_compare_exchange_strong_explicit(word, &expect, desired, ACQREL, RLX)
		       ? LB_SLUB_COMMIT_OK : LB_SLUB_COMMIT_CHANGED;
}

#define FAST_TRIES 8

/* PER_CPU's lockless allocation (slab_alloc_node's fast path): pop the
 * slot's freelist by commit.  False: take the slow path. */
static bool fast_alloc(struct lb_slub_cpu *cpu, void **out)
{
	struct lb_slub_cache *c = cpu->cache;
	for (int tries = 0; tries < FAST_TRIES; tries++) {
		uint32_t k = lb_slub_current_slot(c);
		struct lb_slub_pcpu *s = &c->slots[k];
		/* Acquire: pairs with slot_unlock's and the commits' release,
		 * so the head's link read below is the one pushed with it. */
		uint64_t w = atomic_load_explicit(&s->fl_tid, ACQ);
		uint32_t head = (uint32_t)w;
		if (tid_locked(w) || !head || !index_valid(c, head - 1))
			return false;
		uint32_t next = atomic_load_explicit(&hdr_of(c, head - 1)->next, RLX);
		if (c->debug_commit_hook)
			c->debug_commit_hook(c, c->debug_commit_arg);
		uint64_t nw = (uint64_t)next | (((w >> 32) + 2) << 32);
		if (commit_word(c, k, &s->fl_tid, w, nw) == LB_SLUB_COMMIT_OK) {
			cpu->fast_commits++;
			*out = claim(cpu, head - 1);
			return true;
		}
		cpu->fast_restarts++; /* another task's commit, a lock, or we moved */
	}
	return false;
}

/* PER_CPU's lockless free (do_slab_free's fast path): an object of the
 * slot's own page pushed by commit.  False: not that page, or locked. */
static bool fast_free(struct lb_slub_cpu *cpu, uint32_t idx)
{
	struct lb_slub_cache *c = cpu->cache;
	uint32_t page = idx / c->objs_per_page + 1;
	for (int tries = 0; tries < FAST_TRIES; tries++) {
		uint32_t k = lb_slub_current_slot(c);
		struct lb_slub_pcpu *s = &c->slots[k];
		/* Acquire: the page read next is at least as new as the word. */
		uint64_t w = atomic_load_explicit(&s->fl_tid, ACQ);
		if (tid_locked(w) || atomic_load_explicit(&s->page, RLX) != page)
			return false;
		atomic_store_explicit(&hdr_of(c, idx)->next, (uint32_t)w, RLX);
		if (c->debug_commit_hook)
			c->debug_commit_hook(c, c->debug_commit_arg);
		uint64_t nw = (uint64_t)(idx + 1) | (((w >> 32) + 2) << 32);
		if (commit_word(c, k, &s->fl_tid, w, nw) == LB_SLUB_COMMIT_OK) {
			cpu->fast_commits++;
			return true;
		}
		cpu->fast_restarts++;
	}
	return false;
}

/* ---- cpu partial slabs with cpu_partial 0 (tuning.partial_mode SYSFS_ZERO) ----
 *
 * A kernel built with CONFIG_SLUB_CPU_PARTIAL=y whose cpu_partial was set to
 * 0 through sysfs (s->cpu_partial_slabs 0), as scripts/rt-calibrate counts
 * the kernel.  Facts from mm/slub.c, v6.1 (Debian 12's 6.1.0): __slab_free,
 * put_cpu_partial, __unfreeze_partials, ___slab_alloc, get_partial_node,
 * deactivate_slab.  A page on a cpu partial list here is frozen with its
 * cpu slab's owner id and keeps its free objects on its own freelist (the
 * kernel's slab->freelist), linked through pg->next from cs->partial.
 */

static bool sysfs_zero(const struct lb_slub_cache *c)
{
	return c->tuning.partial_mode == LB_SLUB_PARTIAL_SYSFS_ZERO;
}

/*
 * put_cpu_partial(s, page, drain): `page` (index, frozen by cs) onto cs's
 * partial list.  With drain, the list there before is full at once
 * (oldslab->slabs >= cpu_partial_slabs, which is 0): it is detached and
 * returned (head, page index + 1; 0: none) for unfreeze_chain() once the
 * local lock is dropped, as the kernel unfreezes it after
 * local_unlock_irqrestore.  get_partial_node's second page comes with no
 * drain.  The caller holds cs (its slot's local lock, or its own).
 */
static uint32_t stash_page(struct lb_slub_cache *c, struct lb_slub_cs *cs, uint32_t page,
			   bool drain)
{
	uint32_t old = 0;
	if (drain && cs->partial) {
		old = cs->partial;
		cs->partial = 0;
		cs->nr_partial = 0;
	}
	struct lb_slub_page *pg = &c->pages[page];
	atomic_store_explicit(&pg->next, cs->partial, RLX);
	atomic_store_explicit(&pg->on_list, ON_CPU_PARTIAL, RLX);
	cs->partial = page + 1;
	cs->nr_partial++;
	return old;
}

/*
 * __unfreeze_partials: every page of a detached chain unfrozen (its own
 * freelist and count kept) and placed, under one list_lock acquisition:
 * empty ones go to the pool once min_partial pages are on the partial list
 * (discard_slab, outside the lock in the kernel; the pool needs none),
 * the others onto the partial list.
 */
static void unfreeze_chain(struct lb_slub_cpu *cpu, uint32_t head, enum lb_slub_site site)
{
	struct lb_slub_cache *c = cpu->cache;
	list_lock(cpu, site);
	for (uint32_t n = 0; head && n <= c->capacity; n++) {
		if (head > atomic_load_explicit(&c->pages_used, RLX)) {
			violation(c, "cpu partial list points outside the pool (%u)", head);
			break;
		}
		uint32_t page = head - 1;
		struct lb_slub_page *pg = &c->pages[page];
		head = atomic_load_explicit(&pg->next, RLX);
		uint64_t old = atomic_load_explicit(&pg->fc, RLX);
		/* CAS loop: lockless frees push meanwhile; clear the owner only. */
		while (!atomic_compare_exchange_weak_explicit(
			&pg->fc, &old, fc_make(fc_free(old), fc_inuse(old), 0), ACQREL, RLX))
			;
		atomic_store_explicit(&pg->on_list, 0, RLX);
		place_page(c, page);
	}
	list_unlock(cpu);
}

/*
 * __slab_free with cpu partials on: an object of a page that is not the
 * freeing task's cpu slab, pushed by compare-and-swap.  A page not frozen
 * and full before the free is frozen for `freezer` (a cpu slab's owner id)
 * in the same swap, without list_lock: true, and the caller puts it on that
 * cpu slab's partial list.  A page not frozen that this free empties takes
 * list_lock before the swap and goes to the pool when min_partial pages are
 * on the partial list (the kernel's n->nr_partial >= s->min_partial, the
 * page itself counted).  Every other free is lockless.
 */
static bool remote_free_sz(struct lb_slub_cpu *cpu, uint32_t idx, uint32_t freezer)
{
	struct lb_slub_cache *c = cpu->cache;
	uint32_t page = idx / c->objs_per_page;
	struct lb_slub_page *pg = &c->pages[page];
	uint64_t old = atomic_load_explicit(&pg->fc, RLX);
	uint32_t prior, inuse, owner;
	bool freeze, empties, locked = false;
	/* CAS loop: frees, refills and freezes race on the word. */
	for (;;) {
		prior = fc_free(old);
		inuse = fc_inuse(old);
		owner = fc_owner(old);
		if (inuse == 0) {
			violation(c, "page %u count went below zero", page);
			if (locked)
				list_unlock(cpu);
			return false;
		}
		freeze = !owner && !prior;
		empties = !owner && prior && inuse == 1;
		if (empties && !locked) {
			list_lock(cpu, LB_SLUB_SITE_FREE_NOMOVE); /* recounted below if it moves */
			locked = true;
			old = atomic_load_explicit(&pg->fc, RLX);
			continue;
		}
		atomic_store_explicit(&hdr_of(c, idx)->next, prior, RLX);
		/* Release: the link above before the object is on the list. */
		if (atomic_compare_exchange_weak_explicit(
			    &pg->fc, &old, fc_make(idx + 1, inuse - 1, freeze ? freezer : owner), REL,
			    RLX))
			break;
	}
	cpu->remote_frees++;
	if (!locked)
		cpu->lockless_frees++;
	if (locked && empties) {
		site_recount(cpu, LB_SLUB_SITE_FREE_NOMOVE, LB_SLUB_SITE_FREE_EMPTY);
		if (atomic_load_explicit(&pg->on_list, RLX) == 1 &&
		    atomic_load_explicit(&c->nr_partial, RLX) >= c->tuning.min_partial) {
			partial_del(c, page);
			empty_push(c, page);
		}
	}
	if (locked)
		list_unlock(cpu);
	return freeze;
}

/* A free that is not the cpu slab's fast path (lb_slub_free, SYSFS_ZERO). */
static void free_sz(struct lb_slub_cpu *cpu, uint32_t idx)
{
	struct lb_slub_cache *c = cpu->cache;
	enum lb_slub_cpu_mode mode = c->tuning.cpu_mode;
	uint32_t page = idx / c->objs_per_page, chain = 0;
	if (mode == LB_SLUB_PER_THREAD) {
		if (cpu_slab_push(cpu, idx))
			return;
		if (remote_free_sz(cpu, idx, cpu->cs->owner)) {
			chain = stash_page(c, cpu->cs, page, true);
			cpu->cpu_partial_puts++;
		}
		if (chain)
			unfreeze_chain(cpu, chain, LB_SLUB_SITE_UNFREEZE);
		return;
	}
	if (mode == LB_SLUB_PER_CPU && fast_free(cpu, idx))
		return;
	struct lb_slub_pcpu *s = &c->slots[lb_slub_current_slot(c)];
	if (mode == LB_SLUB_PER_CPU_LOCAL_LOCK) {
		slot_lock_at(cpu, s);
		bool own = cpu_slab_push(cpu, idx);
		slot_unlock(cpu);
		if (own)
			return;
	}
	/* __slab_free outside the local lock; put_cpu_partial under it, on
	 * the slot the page was frozen for (the task may have moved since:
	 * the kernel's put_cpu_partial takes the CPU it then runs on). */
	if (!remote_free_sz(cpu, idx, s->cs.owner))
		return;
	slot_lock_at(cpu, s);
	chain = stash_page(c, cpu->cs, page, true);
	slot_unlock(cpu);
	cpu->cpu_partial_puts++;
	if (chain)
		unfreeze_chain(cpu, chain, LB_SLUB_SITE_UNFREEZE);
}

/* acquire_slab(mode 0) and put_cpu_partial(drain 0): the page at the head
 * of the partial list (list_lock held) frozen onto cs's partial list with
 * its freelist; the free objects it holds. */
static uint32_t take_second(struct lb_slub_cpu *cpu, uint32_t page)
{
	struct lb_slub_cache *c = cpu->cache;
	struct lb_slub_page *pg = &c->pages[page];
	partial_del(c, page);
	uint64_t old = atomic_load_explicit(&pg->fc, RLX);
	/* CAS loop: lockless frees push meanwhile; freeze, freelist kept. */
	while (!atomic_compare_exchange_weak_explicit(
		&pg->fc, &old, fc_make(fc_free(old), fc_inuse(old), cpu->cs->owner), ACQREL, RLX))
		;
	stash_page(c, cpu->cs, page, false);
	cpu->cpu_partial_puts++;
	return c->objs_per_page - fc_inuse(old);
}

/*
 * ___slab_alloc with cpu partials on: the cpu slab's own page first
 * (get_freelist: remote frees, no lock; a page with none is unfrozen full),
 * then the cpu partial page (no lock), then get_partial_node under
 * list_lock, which takes a page for the cpu slab and, with cpu_partial_slabs
 * 0 (partial_slabs 0 > 0 / 2 is false), a second one onto the partial list
 * before it stops; then a new page.  False when the pool is exhausted.
 */
static bool refill_sz(struct lb_slub_cpu *cpu)
{
	struct lb_slub_cache *c = cpu->cache;
	struct lb_slub_cs *cs = cpu->cs;
	if (cs->page && take_own_freelist(cpu))
		return true;
	for (uint32_t n = 0; cs->partial && n <= c->capacity; n++) {
		uint32_t page = cs->partial;
		struct lb_slub_page *pg = &c->pages[page - 1];
		cs->partial = atomic_load_explicit(&pg->next, RLX);
		cs->nr_partial--;
		atomic_store_explicit(&pg->on_list, 0, RLX); /* frozen: the cpu slab */
		cs->page = page;
		if (take_own_freelist(cpu)) {
			cpu->partial_refills++;
			return true;
		}
	}
	/* get_partial_node() reads nr_partial without the lock first. */
	if (atomic_load_explicit(&c->nr_partial, RLX)) {
		list_lock(cpu, LB_SLUB_SITE_PARTIAL_NONE);
		uint32_t page = partial_head_checked(c);
		if (page) {
			partial_del(c, page - 1);
			cpu->partial_take_objs += freeze(cpu, page);
			site_recount(cpu, LB_SLUB_SITE_PARTIAL_NONE, LB_SLUB_SITE_PARTIAL_TAKE);
			uint32_t second = atomic_load_explicit(&c->partial_head, RLX);
			if (second && second <= atomic_load_explicit(&c->pages_used, RLX))
				cpu->partial_take_objs += take_second(cpu, second - 1);
		}
		list_unlock(cpu);
		if (page)
			return true;
	}
	return new_slab(cpu);
}

/*
 * __flush_cpu_slab: deactivate_slab of the cpu slab, then its partial list
 * (__unfreeze_partials).  deactivate_slab unfreezes the page with the cpu
 * freelist spliced onto its own and takes list_lock only to put it on the
 * partial list: not for a page that goes to the pool (empty, min_partial
 * pages on the list) nor for a full one (on no list).
 */
static void flush_sz(struct lb_slub_cpu *cpu)
{
	struct lb_slub_cache *c = cpu->cache;
	struct lb_slub_cs *cs = cpu->cs;
	if (cs->page) {
		uint32_t page = cs->page - 1, head = cs->freelist, n = 0, tail = 0;
		struct lb_slub_page *pg = &c->pages[page];
		for (uint32_t idx = head; idx && n <= c->objs_per_page; n++) {
			if (!index_valid(c, idx - 1) || (idx - 1) / c->objs_per_page != page) {
				violation(c, "cpu freelist of page %u points at object %u", page, idx - 1);
				break;
			}
			tail = idx;
			idx = atomic_load_explicit(&hdr_of(c, idx - 1)->next, RLX);
		}
		if (tail)
			atomic_store_explicit(&hdr_of(c, tail - 1)->next, 0, RLX);
		else
			head = 0;
		uint64_t old = atomic_load_explicit(&pg->fc, RLX), nw;
		bool locked = false, to_pool;
		/* CAS loop: lockless frees push meanwhile; list_lock before the
		 * swap when the page goes to the partial list. */
		for (;;) {
			uint32_t inuse = fc_inuse(old) >= n ? fc_inuse(old) - n : 0;
			uint32_t first = tail ? head : fc_free(old);
			to_pool = !inuse &&
				  atomic_load_explicit(&c->nr_partial, RLX) >= c->tuning.min_partial;
			if (!to_pool && first && !locked) {
				list_lock(cpu, LB_SLUB_SITE_FLUSH);
				locked = true;
				old = atomic_load_explicit(&pg->fc, RLX);
				continue;
			}
			if (tail)
				atomic_store_explicit(&hdr_of(c, tail - 1)->next, fc_free(old), RLX);
			nw = fc_make(first, inuse, 0);
			/* Release: our links before the chain is public. */
			if (atomic_compare_exchange_weak_explicit(&pg->fc, &old, nw, ACQREL, RLX))
				break;
		}
		cs->page = 0;
		cs->freelist = 0;
		if (to_pool)
			empty_push(c, page);
		else if (fc_free(nw))
			partial_add(c, page);
		if (locked)
			list_unlock(cpu);
	}
	uint32_t chain = cs->partial;
	cs->partial = 0;
	cs->nr_partial = 0;
	if (chain)
		unfreeze_chain(cpu, chain, LB_SLUB_SITE_FLUSH);
}

void *lb_slub_alloc(struct lb_slub_cpu *cpu)
{
	enum lb_slub_cpu_mode mode = cpu->cache->tuning.cpu_mode;
	void *p;
	if (mode == LB_SLUB_PER_THREAD)
		return alloc_cs(cpu);
	if (mode == LB_SLUB_PER_CPU && fast_alloc(cpu, &p))
		return p;
	slot_lock(cpu);
	p = alloc_cs(cpu);
	slot_unlock(cpu);
	return p;
}

size_t lb_slub_alloc_bulk(struct lb_slub_cpu *cpu, size_t n, void **out)
{
	if (cpu->cache->tuning.cpu_mode == LB_SLUB_PER_THREAD)
		return alloc_bulk_cs(cpu, n, out);
	slot_lock(cpu);
	size_t got = alloc_bulk_cs(cpu, n, out);
	slot_unlock(cpu);
	return got;
}

void lb_slub_free(struct lb_slub_cpu *cpu, void *obj)
{
	uint32_t idx = release(cpu, obj);
	if (idx == UINT32_MAX)
		return;
	struct lb_slub_cache *c = cpu->cache;
	enum lb_slub_cpu_mode mode = c->tuning.cpu_mode;
	if (sysfs_zero(c)) {
		free_sz(cpu, idx);
		return;
	}
	if (mode == LB_SLUB_PER_THREAD) {
		free_cs(cpu, idx);
		return;
	}
	if (mode == LB_SLUB_PER_CPU && fast_free(cpu, idx))
		return;
	if (c->tuning.cpu_partial) { /* put_cpu_partial needs the slot */
		slot_lock(cpu);
		free_cs(cpu, idx);
		slot_unlock(cpu);
		return;
	}
	if (mode == LB_SLUB_PER_CPU_LOCAL_LOCK) {
		slot_lock(cpu);
		bool own = cpu_slab_push(cpu, idx);
		slot_unlock(cpu);
		if (own)
			return;
	}
	/* __slab_free, outside the local lock as in the kernel. */
	bool locked = false;
	remote_free(cpu, idx, false, &locked);
	if (locked)
		list_unlock(cpu);
}

void lb_slub_free_bulk(struct lb_slub_cpu *cpu, size_t n, void *const *objs)
{
	if (sysfs_zero(cpu->cache)) { /* one by one: each may freeze or drain */
		for (size_t i = 0; i < n; i++)
			lb_slub_free(cpu, objs[i]);
		return;
	}
	if (cpu->cache->tuning.cpu_mode == LB_SLUB_PER_THREAD) {
		free_bulk_cs(cpu, n, objs);
		return;
	}
	slot_lock(cpu);
	free_bulk_cs(cpu, n, objs);
	slot_unlock(cpu);
}

/* ---- per-thread state ------------------------------------------------ */

int lb_slub_cpu_init(struct lb_slub_cache *c, struct lb_slub_cpu *cpu, unsigned int thread_index)
{
	memset(cpu, 0, sizeof(*cpu));
	cpu->cache = c;
	cpu->cs = &cpu->own;
	cpu->id = atomic_fetch_add_explicit(&c->next_cpu_id, 1, RLX);
	if (cpu->id >= FC_OWNER_MAX) {
		cpu->cache = NULL;
		return ENOSPC; /* the page word's owner field is full */
	}
	cpu->own.owner = cpu->id + 1;
	lb_sched_task_init(&cpu->sched);
	if (c->raw) {
		int rerr = lb_raw_thread_init(c->raw, &cpu->raw);
		if (rerr)
			return rerr;
	}
	cpu->tctx_in_arena = c->arena != NULL;
	cpu->tctx = !c->ops->thread_ctx_size ? NULL
		    : c->arena ? arena_lines(c->arena, c->ops->thread_ctx_size, 64)
			       : lb_thread_ctx_alloc(c->ops);
	int err = c->ops->thread_ctx_size && !cpu->tctx ? ENOMEM : 0;
	if (!err && c->ops->thread_init)
		err = c->ops->thread_init(cpu->tctx, thread_index);
	if (err) {
		if (c->raw)
			lb_raw_thread_fini(&cpu->raw);
		if (!cpu->tctx_in_arena)
			lb_thread_ctx_free(cpu->tctx);
		cpu->tctx = NULL;
		cpu->cache = NULL;
		return err;
	}
	atomic_fetch_add_explicit(&c->live_tasks, 1, RLX);
	return 0;
}

void lb_slub_cpu_set_prio(struct lb_slub_cpu *cpu, int prio)
{
	if (cpu->cache->raw)
		lb_raw_thread_resched(&cpu->raw); /* the scheduling a boost returns to */
	if (cpu->cache->ops->thread_set_prio)
		cpu->cache->ops->thread_set_prio(cpu->tctx, prio);
}

void lb_slub_cpu_set_spin_budget(struct lb_slub_cpu *cpu, uint64_t budget_ns)
{
	const struct lb_lock_ops *ops = cpu->cache->ops;
	bool spins_only = !(ops->flags & LB_LOCK_F_SLEEPS);
	cpu->spin_budget_ns = spins_only && ops->trylock ? budget_ns : 0;
}

static void flush(struct lb_slub_cpu *cpu)
{
	struct lb_slub_cache *c = cpu->cache;
	if (sysfs_zero(c)) {
		flush_sz(cpu);
		return;
	}
	if (!cpu->cs->page) {
		if (cpu->cs->partial) {
			list_lock(cpu, LB_SLUB_SITE_FLUSH);
			cpu_partial_unfreeze_locked(cpu);
			list_unlock(cpu);
		}
		return;
	}
	uint32_t page = cpu->cs->page - 1;
	list_lock(cpu, LB_SLUB_SITE_FLUSH);
	cpu_partial_unfreeze_locked(cpu);
	unfreeze_with(c, page, cpu->cs->freelist, "cpu freelist");
	cpu->cs->page = 0;
	cpu->cs->freelist = 0;
	place_page(c, page);
	list_unlock(cpu);
}

/* The last task of a PER_CPU cache: every slot's cpu slab back to the lists. */
static void drain_slots(struct lb_slub_cpu *cpu)
{
	struct lb_slub_cache *c = cpu->cache;
	for (uint32_t k = 0; k < c->nslots; k++) {
		slot_lock_at(cpu, &c->slots[k]);
		flush(cpu);
		slot_unlock(cpu);
	}
}

void lb_slub_cpu_fini(struct lb_slub_cpu *cpu)
{
	struct lb_slub_cache *c = cpu->cache;
	if (!c)
		return;
	flush(cpu);
	/* acq_rel: the last one sees every other task's frees done. */
	if (atomic_fetch_sub_explicit(&c->live_tasks, 1, ACQREL) == 1 && c->nslots)
		drain_slots(cpu);
	atomic_fetch_add_explicit(&c->fast_commits, cpu->fast_commits, RLX);
	atomic_fetch_add_explicit(&c->fast_restarts, cpu->fast_restarts, RLX);
	atomic_fetch_add_explicit(&c->contenders_sum, cpu->contenders_sum, RLX);
	uint64_t cm = atomic_load_explicit(&c->contenders_max, RLX);
	/* CAS loop: raise the maximum; relaxed, read after the joins. */
	while (cpu->contenders_max > cm &&
	       !atomic_compare_exchange_weak_explicit(&c->contenders_max, &cm, cpu->contenders_max,
						      RLX, RLX))
		;
	for (int b = 0; b < LB_SLUB_RUNNING_BINS; b++) {
		atomic_fetch_add_explicit(&c->running_lo[b], cpu->running_lo[b], RLX);
		atomic_fetch_add_explicit(&c->running_hi[b], cpu->running_hi[b], RLX);
	}
	atomic_fetch_add_explicit(&c->owner_off_announced, cpu->owner_off_announced, RLX);
	atomic_fetch_add_explicit(&c->owner_off_held, cpu->owner_off_held, RLX);
	atomic_fetch_add_explicit(&c->allocs, cpu->allocs, RLX);
	atomic_fetch_add_explicit(&c->frees, cpu->frees, RLX);
	atomic_fetch_add_explicit(&c->remote_frees, cpu->remote_frees, RLX);
	atomic_fetch_add_explicit(&c->lockless_frees, cpu->lockless_frees, RLX);
	atomic_fetch_add_explicit(&c->lockless_refills, cpu->lockless_refills, RLX);
	atomic_fetch_add_explicit(&c->lock_acquires, cpu->lock_acquires, RLX);
	for (int k = 0; k < LB_SLUB_SITES; k++)
		atomic_fetch_add_explicit(&c->site_acquires[k], cpu->site_acquires[k], RLX);
	atomic_fetch_add_explicit(&c->partial_take_objs, cpu->partial_take_objs, RLX);
	atomic_fetch_add_explicit(&c->refills, cpu->refills, RLX);
	atomic_fetch_add_explicit(&c->cpu_partial_puts, cpu->cpu_partial_puts, RLX);
	atomic_fetch_add_explicit(&c->cpu_partial_refills, cpu->partial_refills, RLX);
	atomic_fetch_add_explicit(&c->budget_exhausted, cpu->budget_exhausted, RLX);
	atomic_fetch_add_explicit(&c->hold_ns_sum, (uint64_t)lb_cycles_to_ns(cpu->hold_cycles_sum),
				  RLX);
	atomic_fetch_add_explicit(&c->lock_contended, cpu->lock_contended, RLX);
	atomic_fetch_add_explicit(&c->contended_wait_ns,
				  (uint64_t)lb_cycles_to_ns(cpu->contended_wait_cycles), RLX);
	if (c->raw)
		lb_raw_thread_fini(&cpu->raw);
	uint64_t hold = (uint64_t)lb_cycles_to_ns(cpu->max_hold_cycles);
	uint64_t cur = atomic_load_explicit(&c->max_hold_ns, RLX);
	/* CAS loop: raise the maximum; relaxed, read after the joins. */
	while (hold > cur &&
	       !atomic_compare_exchange_weak_explicit(&c->max_hold_ns, &cur, hold, RLX, RLX))
		;
	if (c->ops->thread_fini)
		c->ops->thread_fini(cpu->tctx);
	cpu->cache = NULL;
}

void lb_slub_cpu_release(struct lb_slub_cpu *cpu)
{
	if (!cpu->tctx_in_arena)
		lb_thread_ctx_free(cpu->tctx); /* else it goes with the arena */
	cpu->tctx = NULL;
}

/* ---- invariants ------------------------------------------------------ */

#define PROBLEM(...)                                                          \
	do {                                                                  \
		if (problems++ < 5 && err)                                    \
			fprintf(err, "  invariant: " __VA_ARGS__);            \
	} while (0)

unsigned long lb_slub_check(struct lb_slub_cache *c, uint64_t outstanding, FILE *err)
{
	unsigned long problems = 0;
	uint32_t used = atomic_load_explicit(&c->pages_used, RLX);
	uint64_t nobj = (uint64_t)used * c->objs_per_page, allocated = 0;
	unsigned char *seen = calloc(nobj ? nobj : 1, 1);
	if (!seen) {
		PROBLEM("out of memory for the check\n");
		return problems;
	}
	uint64_t v = atomic_load_explicit(&c->violations, RLX);
	if (v)
		PROBLEM("%llu violation(s) during the run, first: %s\n", (unsigned long long)v,
			c->first_violation);
	for (uint32_t p = 0; p < used; p++) {
		struct lb_slub_page *pg = &c->pages[p];
		uint64_t w = atomic_load_explicit(&pg->fc, RLX);
		uint32_t nfree = 0, idx = fc_free(w);
		while (idx) {
			if ((idx - 1) / c->objs_per_page != p || ++nfree > c->objs_per_page) {
				PROBLEM("page %u: freelist leaves the page or loops\n", p);
				break;
			}
			if (seen[idx - 1]++)
				PROBLEM("object %u twice on a freelist\n", idx - 1);
			if (atomic_load_explicit(&hdr_of(c, idx - 1)->state, RLX) != OBJ_FREE)
				PROBLEM("object %u on a freelist but not free\n", idx - 1);
			idx = atomic_load_explicit(&hdr_of(c, idx - 1)->next, RLX);
		}
		if (fc_owner(w))
			PROBLEM("page %u still frozen after every cpu slab was flushed\n", p);
		if (nfree + fc_inuse(w) != c->objs_per_page)
			PROBLEM("page %u: %u free + %u in use != %u objects\n", p, nfree, fc_inuse(w),
				c->objs_per_page);
		uint32_t on = atomic_load_explicit(&pg->on_list, RLX);
		if (on == 0 && nfree)
			PROBLEM("page %u has %u free objects but is on no list\n", p, nfree);
		if (on == 2 && nfree != c->objs_per_page)
			PROBLEM("page %u in the empty pool with objects in use\n", p);
		for (uint32_t s = 0; s < c->objs_per_page; s++) {
			uint32_t i = p * c->objs_per_page + s;
			uint32_t st = atomic_load_explicit(&hdr_of(c, i)->state, RLX);
			if (st == OBJ_ALLOC)
				allocated++;
			else if (st == OBJ_FREE && !seen[i])
				PROBLEM("object %u free but on no freelist (lost)\n", i);
		}
	}
	uint32_t n = 0, prev = 0;
	for (uint32_t pp = atomic_load_explicit(&c->partial_head, RLX); pp; n++) {
		if (pp > used || n > used) {
			PROBLEM("partial list leaves the pool or loops\n");
			break;
		}
		struct lb_slub_page *pg = &c->pages[pp - 1];
		if (atomic_load_explicit(&pg->on_list, RLX) != 1)
			PROBLEM("page %u on the partial list but not marked so\n", pp - 1);
		if (atomic_load_explicit(&pg->prev, RLX) != prev)
			PROBLEM("page %u: partial list back link broken\n", pp - 1);
		prev = pp;
		pp = atomic_load_explicit(&pg->next, RLX);
	}
	if (n != atomic_load_explicit(&c->nr_partial, RLX))
		PROBLEM("nr_partial %u but %u pages on the list\n",
			atomic_load_explicit(&c->nr_partial, RLX), n);
	n = 0;
	for (uint32_t pp = empty_top(atomic_load_explicit(&c->empty_head, RLX)); pp; n++) {
		if (pp > used || n > used) {
			PROBLEM("empty list leaves the pool or loops\n");
			break;
		}
		if (atomic_load_explicit(&c->pages[pp - 1].on_list, RLX) != 2)
			PROBLEM("page %u in the empty pool but not marked so\n", pp - 1);
		pp = atomic_load_explicit(&c->pages[pp - 1].next, RLX);
	}
	if (n != atomic_load_explicit(&c->nr_empty, RLX))
		PROBLEM("nr_empty %u but %u pages on the list\n",
			atomic_load_explicit(&c->nr_empty, RLX), n);
	uint64_t a = atomic_load_explicit(&c->allocs, RLX), f = atomic_load_explicit(&c->frees, RLX);
	if (a - f != outstanding)
		PROBLEM("%llu allocations - %llu frees != %llu outstanding\n", (unsigned long long)a,
			(unsigned long long)f, (unsigned long long)outstanding);
	if (allocated != outstanding)
		PROBLEM("%llu objects marked allocated, %llu expected\n",
			(unsigned long long)allocated, (unsigned long long)outstanding);
	free(seen);
	return problems;
}
