/* SPDX-License-Identifier: MIT */
/*
 * slub.h - a SLUB-like object allocator in userspace, whose shared
 * list_lock is any exclusive lock of the registry (through the vtable).
 *
 * Layout (doc/rt.md has the mapping to the kernel's SLUB):
 *  - One cache serves objects of one size.  Slab pages come from a page pool:
 *    one reserved mapping, handed out by a bump index, and pages that became
 *    empty are kept on an empty list and reused ("the page allocator").
 *  - Every thread has a cpu slab (struct lb_slub_cpu): one frozen page whose
 *    free objects it owns on a private freelist.  Allocation and frees of
 *    objects of that page need no lock ("lockless fast path").
 *  - The node's partial list (pages with some free objects) is guarded by
 *    list_lock, the lock under test.  A thread whose cpu slab ran out
 *    takes list_lock only to freeze a partial page, when there is one;
 *    otherwise it freezes an empty or new page from the pool, which has
 *    its own compare-and-swap stack (the page allocator, as in SLUB).
 *  - A remote free (an object of a page that is not the freeing thread's cpu
 *    slab) pushes the object onto its page's freelist by compare-and-swap,
 *    without list_lock when the page is frozen (some thread's cpu slab) or
 *    stays partial.  Only a page that must move takes list_lock: a full page
 *    becomes partial; an empty one goes back to the pool once min_partial
 *    pages are kept.  A cpu slab refills from its own page's freelist the
 *    same way, without list_lock; list_lock is for the partial list.
 *  - Tuning (struct lb_slub_tuning; `lockbench slab` sets it, rt keeps the
 *    defaults): min_partial, min_objects per page, and cpu_partial: with
 *    cpu_partial > 0 a full page that gets an object back is frozen onto the
 *    freeing thread's own cpu partial list (at most cpu_partial objects'
 *    worth of pages) instead of the node's partial list; the owner's later
 *    frees to it and its refills from it take no lock (SLUB's per-CPU
 *    partial slabs).  When that list is full it goes back to the node lists
 *    in one list_lock acquisition.
 *  - tuning.partial_mode says which kernel's cpu partial slabs these are:
 *    CONFIG_OFF (the default) is a kernel built with
 *    CONFIG_SLUB_CPU_PARTIAL=n, every list move above under list_lock (and
 *    cpu_partial > 0 the work-alike's own list).  SYSFS_ZERO is a kernel
 *    built with it whose /sys/kernel/slab/<cache>/cpu_partial was set to 0,
 *    as scripts/rt-calibrate measures the kernel (mm/slub.c, v6.1:
 *    __slab_free, put_cpu_partial, __unfreeze_partials, ___slab_alloc,
 *    get_partial_node): a free into a full, unfrozen page freezes it
 *    without list_lock onto the freeing CPU's partial list, which holds
 *    one page: the page there before goes back to the node lists under
 *    list_lock (the "unfreeze" site).  A cpu slab that runs dry, and
 *    whose own page got nothing back, is unfrozen and replaced by that
 *    partial page, without list_lock; only then get_partial takes list_lock,
 *    and takes two pages under it: one for the cpu slab, one frozen onto
 *    the partial list.  Frees into a frozen page (a cpu slab or a partial
 *    one) never take list_lock; the owner collects them when it uses it.
 *    A cpu slab flushed at the end takes list_lock only when it goes back
 *    with free objects (deactivate_slab).
 *
 * Every page field that list_lock guards is a relaxed atomic: the lock
 * provides the ordering, and a broken lock (the `busted` control) then
 * yields wrong lists and counts that lb_slub_check() reports, instead of
 * undefined behaviour.  Each object carries a header word FREE/ALLOCATED,
 * swapped atomically on every allocation and free, so an object handed out
 * twice or freed twice is caught at once.
 */
#ifndef LB_SLUB_H
#define LB_SLUB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lb_lock_ops.h"
#include "lb_sched_hooks.h"
#include "raw_section.h"
#include "shared_arena.h"

/* SLUB's MIN_PARTIAL: empty pages kept on the partial list before the pool. */
#define LB_SLUB_MIN_PARTIAL 5
/* At least this many objects per slab page (SLUB's min_objects idea). */
#define LB_SLUB_MIN_OBJECTS 8
#define LB_SLUB_MAX_PAYLOAD (1u << 20)

/*
 * A slab page.  Its freelist and counters are one 64-bit word, changed only
 * by compare-and-swap (SLUB's double-word cmpxchg on freelist and counters;
 * one word is enough here because objects are named by a 32-bit index):
 * bits 0-31 the first free object (global index + 1, 0: none), 32-44 the
 * objects not on that freelist, 45-63 the cpu slab id + 1 of the thread
 * that froze it (0: not frozen).  A remote free pushes onto it without
 * list_lock unless the page must change lists (see slub.c).
 */
struct lb_slub_page {
	_Atomic uint64_t fc;
	_Atomic uint32_t on_list;   /* 0 none (full or frozen), 1 partial, 2 empty pool, 3 cpu partial */
	_Atomic uint32_t prev, next; /* partial list links (page index + 1); cpu partial link */
	uint32_t local_free;         /* on a cpu partial list: the owner's private freelist */
};

/*
 * Whose cpu slab a task allocates from (tuning.cpu_mode; doc/rt.md, "cpu
 * slabs"):
 *  - PER_THREAD: every thread its own (the default of the library, and of
 *    `lockbench slab`): a thread's page stays frozen while it sleeps.
 *  - PER_CPU: one per CPU, keyed by the CPU the task runs on (glibc's rseq
 *    cpu_id, through sched_getcpu()), shared by every task on that CPU, as
 *    in the kernel.  The fast path (a pop or a push on the cpu freelist) is
 *    lockless: a restartable commit of the slot's (freelist, tid) word -
 *    an rseq section holding one compare-and-swap on x86-64 (a task that
 *    migrated or was preempted between reading and committing restarts),
 *    as the kernel's this_cpu_cmpxchg_double on (freelist, tid) in
 *    slab_alloc_node and do_slab_free of a !PREEMPT_RT kernel.  The slow
 *    path (refill, deactivation) holds the slot's local lock, a plain
 *    mutex: the kernel's local_lock_irqsave, which userspace cannot make
 *    non-preemptible, so a task preempted in it makes its CPU's others
 *    sleep on it.
 *  - PER_CPU_LOCAL_LOCK: the same slots, every cpu slab operation under the
 *    slot's local lock, a priority-inheriting mutex: PREEMPT_RT's
 *    local_lock (a spinlock_t, i.e. a sleeping PI rt_mutex), which RT
 *    kernels take on the fast path too (USE_LOCKLESS_FAST_PATH() is false
 *    there; mm/slub.c since v5.19).
 */
enum lb_slub_cpu_mode { LB_SLUB_PER_THREAD = 0, LB_SLUB_PER_CPU, LB_SLUB_PER_CPU_LOCAL_LOCK };
#define LB_SLUB_MAX_SLOTS 1024

/*
 * Which kernel's cpu partial slabs (tuning.partial_mode; the header's
 * comment has both, doc/rt.md "Calibration" the sources):
 *  - CONFIG_OFF: CONFIG_SLUB_CPU_PARTIAL=n (the default).
 *  - SYSFS_ZERO: CONFIG_SLUB_CPU_PARTIAL=y with cpu_partial 0 written to
 *    sysfs (cpu_partial_slabs 0): one frozen partial page per cpu slab.
 */
enum lb_slub_partial_mode { LB_SLUB_PARTIAL_CONFIG_OFF = 0, LB_SLUB_PARTIAL_SYSFS_ZERO };

/* What `lockbench slab` tunes; lb_slub_tuning_default() is what rt runs with. */
struct lb_slub_tuning {
	enum lb_slub_cpu_mode cpu_mode; /* default PER_THREAD */
	uint32_t slab_bytes;   /* >0: each slab page this many bytes (4096 << order,
				* as the kernel's calculate_order gives); 0: the
				* smallest multiple of 4096 with min_objects objects */
	uint32_t obj_stride;   /* >0: each object this many bytes (the kernel's
				* slab_size; a multiple of 16, >= 16 + payload) */
	uint32_t min_objects;  /* at least this many objects per page (default 8) */
	uint32_t min_partial;  /* empty pages kept on the partial list (default 5) */
	uint32_t cpu_partial;  /* objects' worth of cpu partial pages per thread (0: off;
				* CONFIG_OFF only) */
	enum lb_slub_partial_mode partial_mode; /* default CONFIG_OFF */
	bool recarve_empty;    /* a page from the empty pool is carved again, as a page
				* the page allocator handed back would be (default off) */
};
struct lb_slub_tuning lb_slub_tuning_default(void);

/* One cpu slab: the frozen page, its private freelist, the cpu partial list. */
struct lb_slub_cs {
	uint32_t owner;              /* the id + 1 frozen pages carry */
	uint32_t page;               /* frozen page index + 1, 0: none */
	uint32_t freelist;           /* private freelist (global object index + 1) */
	uint32_t partial;            /* cpu partial list head (page index + 1), 0: empty
				      * (SYSFS_ZERO: linked by page.next, frozen with owner,
				      * objects on the page's freelist) */
	uint32_t nr_partial;         /* pages on it */
};

/* A CPU's slot (PER_CPU modes): its cpu slab and the slot's local lock. */
struct lb_slub_pcpu {
	pthread_mutex_t lock;        /* local_lock: the slow path (every path with LOCAL_LOCK) */
	/* PER_CPU: freelist | tid << 32 while unlocked (cs.freelist then
	 * stale); tid odd while the local lock's holder owns the freelist.
	 * Every change bumps tid, so a commit that read an older word fails. */
	_Atomic uint64_t fl_tid;
	_Atomic uint32_t page;       /* cs.page, for the lockless free's page test */
	struct lb_slub_cs cs;
} __attribute__((aligned(64)));

/*
 * A task's list_lock state word (struct lb_slub_cpu.lock_state), set by the
 * allocator around its list_lock calls: what the running-contenders gauge
 * and the thread dumps read (doc/rt.md, "Running contenders").
 */
enum lb_slub_lock_state {
	LB_SLUB_LS_OUT = 0,      /* outside list_lock */
	LB_SLUB_LS_SPINNING = 1, /* attempting, or waiting in a wait that spins */
	LB_SLUB_LS_HOLDS = 2,    /* holding it */
	LB_SLUB_LS_OFFCPU = 3,   /* waiting, asleep in the bounded wait's pause */
	LB_SLUB_LS_MAYSLEEP = 4, /* waiting inside the lock's own lock() of a lock
				  * whose waiters may sleep: spinning or asleep,
				  * the allocator cannot tell which */
};

/* Running contenders at an attempt that found list_lock taken, binned
 * 1 / 2 / 3 or more (aim7's acq_running_1/2/3plus bins). */
#define LB_SLUB_RUNNING_BINS 3

/*
 * Why list_lock was taken (doc/rt.md, "Where the acquisitions come from").
 * The kernel's documented path with cpu partials off counts the first
 * three: get_partial_node() taking a slab off the partial list, the free
 * to a full slab that puts it back, the free that empties a slab.  The
 * others are what that path leaves out: a get_partial that found nothing
 * it could take (the list emptied while we waited), a free that took the
 * lock and then found the slab no longer had to move (it was frozen or
 * refilled meanwhile; the kernel's __slab_free drops and retakes it then),
 * a cpu slab flushed back to the lists (deactivate_slab), with SYSFS_ZERO
 * the cpu partial page put back when a newer one takes its place
 * (__unfreeze_partials from put_cpu_partial), and the rest (cpu partial
 * pages given back, the nocache paths, tests).
 */
enum lb_slub_site {
	LB_SLUB_SITE_PARTIAL_TAKE,
	LB_SLUB_SITE_FREE_FULL,
	LB_SLUB_SITE_FREE_EMPTY,
	LB_SLUB_SITE_PARTIAL_NONE,
	LB_SLUB_SITE_FREE_NOMOVE,
	LB_SLUB_SITE_FLUSH,
	LB_SLUB_SITE_UNFREEZE,
	LB_SLUB_SITE_OTHER,
	LB_SLUB_SITES
};

/* The site's name in reports and JSON ("partial_take", ...). */
const char *lb_slub_site_name(enum lb_slub_site site);

struct lb_slub_cpu;
struct lb_slub_cache;
/* Testing: called between the fast path's read and its commit. */
typedef void lb_slub_commit_hook(struct lb_slub_cache *c, void *arg);

struct lb_slub_cache {
	const struct lb_lock_ops *ops;
	void *list_lock;             /* lb_lock_alloc()'d, ops->init()'d */
	size_t payload, obj_size, page_bytes;
	uint32_t objs_per_page;
	uint32_t capacity;           /* pages the pool can hold */
	struct lb_slub_tuning tuning;
	char *base;                  /* the pool mapping */
	size_t map_bytes;
	struct lb_slub_page *pages;
	_Atomic uint32_t pages_used; /* bump index of the pool */
	_Atomic uint32_t next_cpu_id;
	/* Guarded by list_lock (nr_partial is also read without it, as the
	 * kernel's get_partial_node() does). */
	_Atomic uint32_t partial_head, partial_tail, nr_partial;
	/* The empty pool ("the page allocator"): a compare-and-swap stack of
	 * its own, tag << 32 | top page index + 1, not guarded by list_lock. */
	_Atomic uint64_t empty_head;
	_Atomic uint32_t nr_empty;
	/* Totals folded in by lb_slub_cpu_fini(), and problems seen on the way. */
	_Atomic uint64_t allocs, frees, remote_frees, lock_acquires, budget_exhausted;
	_Atomic uint64_t site_acquires[LB_SLUB_SITES]; /* lock_acquires by enum lb_slub_site */
	_Atomic uint64_t partial_take_objs; /* free objects the partial slabs taken brought */
	/* Slow-path refills (the kernel's ___slab_alloc entries but those that
	 * found the cpu freelist refilled meanwhile), pages put on a cpu
	 * partial list (SYSFS_ZERO's put_cpu_partial calls) and refills from
	 * one (slub_percpu_partial). */
	_Atomic uint64_t refills, cpu_partial_puts, cpu_partial_refills;
	_Atomic uint64_t lockless_frees, lockless_refills;
	_Atomic uint64_t max_hold_ns, violations;
	/* The list_lock's gauges (doc/rt.md, "Is the mechanism there"): time
	 * held in all, acquisitions that found it taken (a first trylock
	 * failed; only for locks with trylock), and their time to acquire. */
	_Atomic uint64_t hold_ns_sum, lock_contended, contended_wait_ns;
	/* PER_CPU modes: one slot per possible CPU; the last lb_slub_cpu_fini
	 * (live_tasks reaching 0) drains them all. */
	struct lb_slub_pcpu *slots;
	uint32_t nslots;
	_Atomic uint32_t live_tasks;
	/* list_lock contenders at each acquisition: the new holder plus the
	 * tasks then waiting for it (a sum over acquisitions and the maximum). */
	_Atomic uint32_t lock_waiters;
	_Atomic uint64_t contenders_sum, contenders_max;
	/* Running contenders (doc/rt.md, "Running contenders"): the holder
	 * and when it took list_lock (cycles), published after acquisition
	 * and cleared before release; of lock_waiters, those in a wait that
	 * spins and those in a lock() that may sleep (LB_SLUB_LS_*). */
	_Atomic(struct lb_slub_cpu *) owner;
	_Atomic uint64_t owner_since;
	_Atomic uint32_t waiters_spinning, waiters_maysleep;
	/* An owner holding longer than this (cycles; LB_SCHED_PREEMPT_GAP_NS
	 * by default, tests may change it) lost its CPU meanwhile. */
	uint64_t owner_gap_cycles;
	/* Totals: attempts that found it taken, by running contenders with
	 * may-sleep waiters counted asleep (lo) and running (hi); owners seen
	 * off their CPU by an announcement and by the hold's age. */
	_Atomic uint64_t running_lo[LB_SLUB_RUNNING_BINS], running_hi[LB_SLUB_RUNNING_BINS];
	_Atomic uint64_t owner_off_announced, owner_off_held;
	/* PER_CPU fast path: commits, restarts (a stale tid or another CPU). */
	_Atomic uint64_t fast_commits, fast_restarts;
	/* Testing: the hook, and a commit that checks neither tid nor CPU. */
	lb_slub_commit_hook *debug_commit_hook;
	void *debug_commit_arg;
	bool debug_broken_commit;
	/* Non-NULL: list_lock sections are raw (raw_section.h); rt sets it. */
	struct lb_raw_sections *raw;
	/* Non-NULL: a cache shared by processes (lb_slub_cache_init_shared). */
	struct lb_arena *arena;
	_Atomic int first_violation_set;
	char first_violation[200];
};

/* Per-task state: its cpu slab (PER_THREAD) or the slot it holds, and the
 * task's list_lock context. */
struct lb_slub_cpu {
	struct lb_slub_cache *cache;
	void *tctx;                  /* the lock's per-thread context (may be NULL) */
	uint32_t id;
	struct lb_slub_cs *cs;       /* &own, or the held slot's (PER_CPU modes) */
	struct lb_slub_cs own;
	struct lb_slub_pcpu *slot;   /* the slot whose local lock this task holds */
	uint64_t fast_commits, fast_restarts, contenders_sum, contenders_max;
	uint64_t running_lo[LB_SLUB_RUNNING_BINS], running_hi[LB_SLUB_RUNNING_BINS];
	uint64_t owner_off_announced, owner_off_held;
	/* What lb_sched_owner_running() reads of this task when it holds
	 * list_lock (lb_slub_cpu_offcpu announces its waits off the CPU).
	 * Contenders read it through cache->owner: the struct must stay valid
	 * until no other task can be inside list_lock (after the joins). */
	struct lb_sched_task sched;
	uint64_t spin_budget_ns;     /* >0: bounded trylock wait (RT threads, spin locks) */
	uint64_t hold_start;         /* cycles at acquisition */
	uint64_t allocs, frees, remote_frees, lock_acquires, budget_exhausted, max_hold_cycles;
	uint64_t site_acquires[LB_SLUB_SITES]; /* lock_acquires by enum lb_slub_site */
	uint64_t partial_take_objs; /* free objects the partial slabs we took brought */
	uint64_t refills, cpu_partial_puts; /* as the cache's */
	uint64_t hold_cycles_sum, lock_contended, contended_wait_cycles; /* list_lock gauges */
	uint64_t partial_frees, partial_refills; /* lockless via the cpu partial list */
	uint64_t lockless_frees, lockless_refills; /* remote frees / own-page refills without list_lock */
	struct lb_raw_thread raw;    /* with cache->raw: this thread's raw-section state */
	bool tctx_in_arena;          /* tctx came from the cache's arena: never freed */
	/* enum lb_slub_lock_state: for the running-contenders gauge and dumps. */
	_Atomic int lock_state;
};

/* 0 or an errno value.  max_bytes bounds the pool (reserved, not committed). */
int lb_slub_cache_init(struct lb_slub_cache *c, const struct lb_lock_ops *ops, size_t payload,
		       size_t max_bytes);
/* The same with tuning (NULL: the defaults). */
int lb_slub_cache_init_tuned(struct lb_slub_cache *c, const struct lb_lock_ops *ops, size_t payload,
			     size_t max_bytes, const struct lb_slub_tuning *tuning);
/*
 * The same for processes (`lockbench rt -P`): the cache struct `c` must lie
 * in `arena` itself; the page pool is a MAP_SHARED mapping, the page array,
 * the list_lock object (set up by ops->init_shared) and every context
 * lb_slub_cpu_init gives out come from the arena, and every lb_slub_cpu
 * must lie in shared memory too (boosters and the lock reach into it).
 * Made before the fork.  ENOTSUP when the lock has no init_shared.
 */
int lb_slub_cache_init_shared(struct lb_slub_cache *c, const struct lb_lock_ops *ops,
			      size_t payload, size_t max_bytes,
			      const struct lb_slub_tuning *tuning, struct lb_arena *arena);
void lb_slub_cache_destroy(struct lb_slub_cache *c);

/* On the thread that will use it: the lock context and thread_init.  0 or errno. */
int lb_slub_cpu_init(struct lb_slub_cache *c, struct lb_slub_cpu *cpu, unsigned int thread_index);
/* On the thread, when it is done with the cache: return the cpu slab to the
 * lists, fold the counts in, and the lock's thread_fini. */
void lb_slub_cpu_fini(struct lb_slub_cpu *cpu);
/* Free the lock context.  Only once no thread can be inside list_lock any
 * more (after the joins): an unlocker may still write into the context of
 * a waiter that has already left (see locks/include/lockbench/lb_lock_ops.h). */
void lb_slub_cpu_release(struct lb_slub_cpu *cpu);
/* The calling thread changed its priority (0 normal, 1..99 FIFO): tell a PI lock. */
void lb_slub_cpu_set_prio(struct lb_slub_cpu *cpu, int prio);
/* The calling task announces a wait off its CPU (begin true) and its end,
 * made while it may hold list_lock (an I/O wait): contenders then count it
 * as an owner off its CPU, and the lock's own offcpu op is told (v3.x
 * mutex spinners stop).  Announcements nest. */
void lb_slub_cpu_offcpu(struct lb_slub_cpu *cpu, bool begin);
/* Wait for a spin-only list_lock by trylock, sleeping 50 us between tries once
 * budget_ns of spinning has passed (0: plain ops->lock). */
void lb_slub_cpu_set_spin_budget(struct lb_slub_cpu *cpu, uint64_t budget_ns);

/* One object of the cache's payload size, or NULL when the pool is exhausted. */
void *lb_slub_alloc(struct lb_slub_cpu *cpu);
void lb_slub_free(struct lb_slub_cpu *cpu, void *obj);
/* Up to n objects into out[]; returns how many (n unless the pool ran out).
 * One loop over the cpu freelist, a refill per page it empties. */
size_t lb_slub_alloc_bulk(struct lb_slub_cpu *cpu, size_t n, void **out);
/* Free n objects; the remote ones under one list_lock acquisition (and none
 * for those of the cpu slab or of the thread's cpu partial pages). */
void lb_slub_free_bulk(struct lb_slub_cpu *cpu, size_t n, void *const *objs);
/* Bypass the cpu slab: both go straight to the partial list under list_lock
 * (what an RT thread's allocation looks like when its cpu slab is empty). */
void *lb_slub_alloc_nocache(struct lb_slub_cpu *cpu);
void lb_slub_free_nocache(struct lb_slub_cpu *cpu, void *obj);

/* Testing (--inject-hang): take list_lock and never give it back. */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void lb_slub_debug_hold_lock(struct lb_slub_cpu *cpu);

/* Testing: take and release list_lock as an allocator path does (gauges
 * included), for scripted schedules. */
void lb_slub_debug_lock(struct lb_slub_cpu *cpu);
void lb_slub_debug_unlock(struct lb_slub_cpu *cpu);

/* The slot index the calling task runs on (PER_CPU modes). */
uint32_t lb_slub_current_slot(const struct lb_slub_cache *c);

/*
 * The invariants, once every cpu slab is finalised: every object exactly
 * once either free on its page's freelist or still allocated
 * (`outstanding` expected), page counts add up, the partial and empty lists
 * hold exactly the pages that say so, allocs - frees == outstanding, and no
 * violation was seen during the run.  Prints up to 5 problems to err;
 * returns their number (0: all good).
 */
unsigned long lb_slub_check(struct lb_slub_cache *c, uint64_t outstanding, FILE *err);

#endif /* LB_SLUB_H */
