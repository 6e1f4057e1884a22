/* SPDX-License-Identifier: MIT */
/*
 * slab_stock.h - an object stock in front of the SLUB-like allocator
 * (engines/slub/slub.h), protected one of five ways against the two things
 * that can get between a thread and per-CPU data in userspace: another
 * thread on the same CPU (after preemption or migration) and a signal
 * handler on the same thread (the "interrupt").
 *
 *   rseq     per-CPU slots; a restartable sequence (slab_rseq.h): preemption,
 *            migration or a signal restarts it (preempt_disable analogue,
 *            and like this_cpu ops it also survives the "interrupt")
 *   sigmask  the thread's own slot; every signal blocked around the section
 *            (local_irq_save analogue: two rt_sigprocmask system calls)
 *   lock     per-CPU slots, each behind a lock of the registry (local_lock on
 *            PREEMPT_RT); a handler that finds it taken goes to the slow path
 *   cas      per-CPU freelists whose head word carries a count and a tag,
 *            changed by compare-and-swap (this_cpu_cmpxchg analogue)
 *   none     the thread's own slot, no protection (tcmalloc-style per-thread
 *            cache): correct only while no handler touches the same stock
 *
 * The slow path (stock empty or full) is the allocator itself, through the
 * thread's lb_slub_cpu, with every signal blocked: the allocator is not
 * re-entrant, so a handler never enters it while the task is inside.
 */
#ifndef LB_SLAB_STOCK_H
#define LB_SLAB_STOCK_H

#include "slab_rseq.h"
#include "slub.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum lb_prot {
	LB_PROT_RSEQ,
	LB_PROT_SIGMASK,
	LB_PROT_LOCK,
	LB_PROT_CAS,
	LB_PROT_NONE,
	LB_PROT_COUNT
};

/* Slots for CPU ids 0..LB_STOCK_MAX_CPUS-1. */
#define LB_STOCK_MAX_CPUS 1024

/* "rseq", "sigmask", ...; upper case for table rows. */
const char *lb_prot_name(enum lb_prot p);
const char *lb_prot_label(enum lb_prot p);
/* -1 when unknown. */
int lb_prot_parse(const char *s);
/* NULL when `p` can run here, else why not (one line). */
const char *lb_prot_unsupported(enum lb_prot p, const struct lb_lock_ops *lock_ops);
/* Whether the stock is per CPU (else per thread). */
bool lb_prot_per_cpu(enum lb_prot p);

/* One stock: per-CPU slots, or one slot for the thread that owns it. */
struct lb_stock {
	enum lb_prot prot;
	unsigned int nslots;
	struct lb_stock_slot *slots;     /* array modes */
	_Atomic uint64_t *cas_heads;     /* cas: one per slot, a cache line apart */
	const struct lb_lock_ops *lock_ops;
	void **locks;                    /* lock: one per slot */
	uint64_t *counters;              /* empty sections: one per slot, a line apart */
	const struct lb_slub_cache *cache; /* cas: object references are offsets in it */
};

/* Every signal blocked by the slow path and the sigmask mode. */
struct lb_stock_thread {
	struct lb_slub_cpu slab;         /* the allocator's per-thread state */
	void *tctx_task, *tctx_irq;      /* lock mode: task and handler contexts */
	sigset_t all;
	volatile sig_atomic_t in_handler; /* in_task() is false while set */
	uint64_t rseq_aborts, slow_allocs, slow_frees, lock_busy;
	uint64_t plain_counter;          /* the none mode's empty section */
};

int lb_stock_init(struct lb_stock *s, enum lb_prot prot, const struct lb_slub_cache *cache,
		  const struct lb_lock_ops *lock_ops);
/* The objects still stocked go back through `t`'s allocator state. */
void lb_stock_drain(struct lb_stock *s, struct lb_stock_thread *t);
void lb_stock_destroy(struct lb_stock *s);

/* On the thread: allocator state and lock contexts (thread_index * 2, + 1). */
int lb_stock_thread_init(struct lb_stock_thread *t, struct lb_slub_cache *c,
			 const struct lb_lock_ops *lock_ops, unsigned int thread_index);
void lb_stock_thread_fini(struct lb_stock_thread *t, const struct lb_lock_ops *lock_ops);

/* One object (NULL when the pool is exhausted) and its free. */
void *lb_stock_alloc(struct lb_stock *s, struct lb_stock_thread *t);
void lb_stock_free(struct lb_stock *s, struct lb_stock_thread *t, void *obj);

/* The empty section: the protection around one counter update; and n of
 * them in a loop compiled per protection (no call per section). */
void lb_stock_section(struct lb_stock *s, struct lb_stock_thread *t);
void lb_stock_sections(struct lb_stock *s, struct lb_stock_thread *t, uint64_t n);

/* n plain updates of the per-CPU counter indexed by rseq's cpu_id, with no
 * section (unsafe; it only splits the rseq cost into indexing and the
 * section's own stores); 0 ns when rseq is not there. */
uint64_t lb_stock_indexed_updates_ns(struct lb_stock *s, uint64_t n);
/* The same, untimed and unchecked: only where rseq is supported (the
 * check reads sysconf, too slow to repeat per timed batch). */
void lb_stock_indexed_updates(struct lb_stock *s, uint64_t n);

/* The slow path alone (the allocator with signals blocked). */
void *lb_stock_slow_alloc(struct lb_stock_thread *t);
void lb_stock_slow_free(struct lb_stock_thread *t, void *obj);

/* Testing: one rseq counter update whose section spins `spins` pauses
 * (aborts counted in t->rseq_aborts); false without rseq. */
bool lb_stock_rseq_slow_section(struct lb_stock *s, struct lb_stock_thread *t, uint64_t spins);

/* Testing: lb_stock_alloc() of an rseq stock whose first pop holds its
 * section open for `spins` pauses between reading the object and the commit
 * (a signal lands there); retries that then found the slot empty are added
 * to *empty_after_abort (may be NULL).  NULL without rseq or for another
 * protection. */
void *lb_stock_rseq_alloc_window(struct lb_stock *s, struct lb_stock_thread *t, uint64_t spins,
				 uint64_t *empty_after_abort);

/* The CPU to index per-CPU slots with (rseq's cpu_id, else sched_getcpu). */
unsigned int lb_stock_cpu(void);

#endif /* LB_SLAB_STOCK_H */
