/* SPDX-License-Identifier: MIT */
/* slab_stock.c - the protected object stocks of slab_stock.h. */
#include "slab_stock.h"
#include "lb_registry.h"
#include "lb_time.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RLX memory_order_relaxed
#define LINE_WORDS 8 /* uint64_t per cache line */

static const char *const prot_names[LB_PROT_COUNT] = { "rseq", "sigmask", "lock", "cas", "none" };
static const char *const prot_labels[LB_PROT_COUNT] = { "RSEQ", "SIGMASK", "LOCK", "CAS", "NONE" };

const char *lb_prot_name(enum lb_prot p)
{
	return p < LB_PROT_COUNT ? prot_names[p] : "?";
}

const char *lb_prot_label(enum lb_prot p)
{
	return p < LB_PROT_COUNT ? prot_labels[p] : "?";
}

int lb_prot_parse(const char *s)
{
	for (int p = 0; p < LB_PROT_COUNT; p++)
		if (!strcmp(s, prot_names[p]))
			return p;
	return -1;
}

bool lb_prot_per_cpu(enum lb_prot p)
{
	return p == LB_PROT_RSEQ || p == LB_PROT_LOCK || p == LB_PROT_CAS;
}

const char *lb_prot_unsupported(enum lb_prot p, const struct lb_lock_ops *lock_ops)
{
	if (p == LB_PROT_RSEQ) {
#if LB_HAVE_RSEQ_ASM
		if (!__rseq_size)
			return "glibc did not register rseq for this thread (kernel < 4.18, or "
			       "GLIBC_TUNABLES=glibc.pthread.rseq=0)";
		if (lb_rseq_cpu() < 0)
			return "the rseq area has no cpu_id (registration failed)";
		if (lb_rseq_cpu() >= LB_STOCK_MAX_CPUS ||
		    sysconf(_SC_NPROCESSORS_CONF) > LB_STOCK_MAX_CPUS)
			return "CPU ids beyond the 1024 slots";
#else
		return "the rseq sections are written for x86-64 with glibc's <sys/rseq.h> only";
#endif
	}
	if (p == LB_PROT_LOCK) {
		if (!lock_ops)
			return "no lock chosen";
		if (lock_ops->unsupported)
			return lock_ops->unsupported;
		if (!(lock_ops->flags & LB_LOCK_F_EXCLUSIVE) || !lock_ops->trylock)
			return "the per-CPU lock must be exclusive and have a trylock";
	}
	return NULL;
}

unsigned int lb_stock_cpu(void)
{
	int cpu = lb_rseq_cpu();
	if (cpu < 0)
		cpu = sched_getcpu();
	return cpu < 0 ? 0 : (unsigned int)cpu % LB_STOCK_MAX_CPUS;
}

int lb_stock_init(struct lb_stock *s, enum lb_prot prot, const struct lb_slub_cache *cache,
		  const struct lb_lock_ops *lock_ops)
{
	memset(s, 0, sizeof(*s));
	s->prot = prot;
	s->cache = cache;
	s->lock_ops = lock_ops;
	s->nslots = lb_prot_per_cpu(prot) ? LB_STOCK_MAX_CPUS : 1;
	s->slots = aligned_alloc(1u << LB_STOCK_SLOT_SHIFT, (size_t)s->nslots << LB_STOCK_SLOT_SHIFT);
	s->counters = aligned_alloc(64, (size_t)s->nslots * 64);
	s->cas_heads = aligned_alloc(64, (size_t)s->nslots * 64);
	if (!s->slots || !s->counters || !s->cas_heads) {
		lb_stock_destroy(s);
		return ENOMEM;
	}
	memset(s->slots, 0, (size_t)s->nslots << LB_STOCK_SLOT_SHIFT);
	memset(s->counters, 0, (size_t)s->nslots * 64);
	for (unsigned int i = 0; i < s->nslots; i++)
		atomic_init(&s->cas_heads[i * LINE_WORDS], 0);
	if (prot == LB_PROT_LOCK) {
		s->locks = calloc(s->nslots, sizeof(*s->locks));
		if (!s->locks) {
			lb_stock_destroy(s);
			return ENOMEM;
		}
		for (unsigned int i = 0; i < s->nslots; i++) {
			s->locks[i] = lb_lock_alloc(lock_ops);
			int err = s->locks[i] ? lock_ops->init(s->locks[i]) : ENOMEM;
			if (err) {
				lb_lock_free(s->locks[i]);
				s->locks[i] = NULL;
				lb_stock_destroy(s);
				return err;
			}
		}
	}
	return 0;
}

void lb_stock_destroy(struct lb_stock *s)
{
	if (s->locks) {
		for (unsigned int i = 0; i < s->nslots; i++) {
			if (!s->locks[i])
				continue;
			if (s->lock_ops->destroy)
				s->lock_ops->destroy(s->locks[i]);
			lb_lock_free(s->locks[i]);
		}
		free(s->locks);
	}
	free(s->slots);
	free(s->counters);
	free((void *)s->cas_heads);
	memset(s, 0, sizeof(*s));
}

int lb_stock_thread_init(struct lb_stock_thread *t, struct lb_slub_cache *c,
			 const struct lb_lock_ops *lock_ops, unsigned int thread_index)
{
	memset(t, 0, sizeof(*t));
	sigfillset(&t->all);
	int err = lb_slub_cpu_init(c, &t->slab, thread_index);
	if (err || !lock_ops)
		return err;
	t->tctx_task = lb_thread_ctx_alloc(lock_ops);
	t->tctx_irq = lb_thread_ctx_alloc(lock_ops);
	if (lock_ops->thread_ctx_size && (!t->tctx_task || !t->tctx_irq))
		return ENOMEM;
	if (lock_ops->thread_init) {
		err = lock_ops->thread_init(t->tctx_task, thread_index * 2);
		if (!err)
			err = lock_ops->thread_init(t->tctx_irq, thread_index * 2 + 1);
	}
	return err;
}

void lb_stock_thread_fini(struct lb_stock_thread *t, const struct lb_lock_ops *lock_ops)
{
	lb_slub_cpu_fini(&t->slab);
	lb_slub_cpu_release(&t->slab);
	if (lock_ops && lock_ops->thread_fini) {
		lock_ops->thread_fini(t->tctx_task);
		lock_ops->thread_fini(t->tctx_irq);
	}
	lb_thread_ctx_free(t->tctx_task);
	lb_thread_ctx_free(t->tctx_irq);
	t->tctx_task = t->tctx_irq = NULL;
}

/* ---- slow path: the allocator, every signal blocked ------------------ */

void *lb_stock_slow_alloc(struct lb_stock_thread *t)
{
	sigset_t old;
	pthread_sigmask(SIG_BLOCK, &t->all, &old);
	void *obj = lb_slub_alloc(&t->slab);
	t->slow_allocs++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return obj;
}

void lb_stock_slow_free(struct lb_stock_thread *t, void *obj)
{
	sigset_t old;
	pthread_sigmask(SIG_BLOCK, &t->all, &old);
	lb_slub_free(&t->slab, obj);
	t->slow_frees++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- array slots, in C (sigmask, lock, none) ------------------------- */

static inline void *slot_pop(struct lb_stock_slot *slot)
{
	uint64_t n = slot->count;
	if (!n)
		return NULL;
	void *obj = slot->objs[n - 1];
	slot->count = n - 1;
	return obj;
}

static inline bool slot_push(struct lb_stock_slot *slot, void *obj)
{
	uint64_t n = slot->count;
	if (n >= LB_STOCK_CAP)
		return false;
	slot->objs[n] = obj;
	slot->count = n + 1;
	return true;
}

/* The handler must never wait for a lock its own thread may hold. */
static inline bool slot_lock(struct lb_stock *s, struct lb_stock_thread *t, unsigned int cpu)
{
	if (t->in_handler) {
		if (s->lock_ops->trylock(s->locks[cpu], t->tctx_irq))
			return true;
		t->lock_busy++;
		return false;
	}
	s->lock_ops->lock(s->locks[cpu], t->tctx_task);
	return true;
}

static inline void slot_unlock(struct lb_stock *s, struct lb_stock_thread *t, unsigned int cpu)
{
	s->lock_ops->unlock(s->locks[cpu], t->in_handler ? t->tctx_irq : t->tctx_task);
}

/*
 * Enter and leave the section around a slot under the sigmask or lock
 * protection, the same for alloc, free and the counter: sigmask blocks
 * every signal (the old mask kept in *old) and uses slot 0; lock takes this
 * CPU's lock and uses this CPU's slot.  Enter returns the slot, or -1 when
 * the handler found the lock busy (nothing to leave: the caller takes the
 * slow path).  Inlined: with a constant prot the other protection's branch
 * folds away.
 */
static inline __attribute__((always_inline)) int
slot_enter(struct lb_stock *s, struct lb_stock_thread *t, enum lb_prot prot, sigset_t *old)
{
	if (prot == LB_PROT_LOCK) {
		unsigned int cpu = lb_stock_cpu();
		return slot_lock(s, t, cpu) ? (int)cpu : -1;
	}
	pthread_sigmask(SIG_BLOCK, &t->all, old);
	return 0;
}

static inline __attribute__((always_inline)) void
slot_leave(struct lb_stock *s, struct lb_stock_thread *t, enum lb_prot prot, int slot,
	   const sigset_t *old)
{
	if (prot == LB_PROT_LOCK)
		slot_unlock(s, t, (unsigned int)slot);
	else
		pthread_sigmask(SIG_SETMASK, old, NULL);
}

/*
 * One slot operation inside the sigmask or lock section: a push of *obj,
 * or a pop into *obj.  False when the section could not be entered or the
 * slot was full or empty: the caller takes the slow path.  Inlined with a
 * constant push, so each call keeps only its own operation.
 */
static inline __attribute__((always_inline)) bool
slot_guarded(struct lb_stock *s, struct lb_stock_thread *t, void **obj, bool push)
{
	sigset_t old;
	int slot = slot_enter(s, t, s->prot, &old);
	if (slot < 0)
		return false;
	bool done;
	if (push) {
		done = slot_push(&s->slots[slot], *obj);
	} else {
		*obj = slot_pop(&s->slots[slot]);
		done = *obj != NULL;
	}
	slot_leave(s, t, s->prot, slot, &old);
	return done;
}

/* ---- cas: per-CPU freelist, head = ref | count << 32 | tag << 42 ------ */

#define CAS_COUNT_SHIFT 32
#define CAS_COUNT_MASK UINT64_C(0x3ff)
#define CAS_TAG_SHIFT 42

static inline uint32_t obj_ref(const struct lb_stock *s, const void *obj)
{
	return (uint32_t)(((const char *)obj - s->cache->base) / 16 + 1);
}

static inline void *ref_obj(const struct lb_stock *s, uint32_t ref)
{
	return s->cache->base + (size_t)(ref - 1) * 16;
}

/* The link of a stocked object lives in its first payload word. */
static inline _Atomic uint32_t *obj_link(void *obj)
{
	return (_Atomic uint32_t *)obj;
}

static inline uint64_t cas_head(uint32_t ref, uint64_t count, uint64_t tag)
{
	return ref | (count & CAS_COUNT_MASK) << CAS_COUNT_SHIFT | tag << CAS_TAG_SHIFT;
}

static void *cas_pop(struct lb_stock *s)
{
	_Atomic uint64_t *head = &s->cas_heads[lb_stock_cpu() * LINE_WORDS];
	/* acquire: the link and the payload the pusher wrote before its release */
	uint64_t h = atomic_load_explicit(head, memory_order_acquire);
	for (;;) { /* retried while another thread or our handler changes the head */
		uint32_t ref = (uint32_t)h;
		if (!ref)
			return NULL;
		void *obj = ref_obj(s, ref);
		/* May read a stale link if another popper won: the tag then differs
		 * and the CAS fails, so the stale value is never installed. */
		uint32_t next = atomic_load_explicit(obj_link(obj), RLX);
		uint64_t count = h >> CAS_COUNT_SHIFT & CAS_COUNT_MASK;
		uint64_t want = cas_head(next, count - 1, (h >> CAS_TAG_SHIFT) + 1);
		/* acq_rel on success: we take the object the pusher published;
		 * acquire on failure: reload the head for the retry. */
		if (atomic_compare_exchange_weak_explicit(head, &h, want, memory_order_acq_rel,
							  memory_order_acquire))
			return obj;
	}
}

static bool cas_push(struct lb_stock *s, void *obj)
{
	_Atomic uint64_t *head = &s->cas_heads[lb_stock_cpu() * LINE_WORDS];
	uint64_t h = atomic_load_explicit(head, RLX);
	uint32_t ref = obj_ref(s, obj);
	for (;;) { /* retried while another thread or our handler changes the head */
		uint64_t count = h >> CAS_COUNT_SHIFT & CAS_COUNT_MASK;
		if (count >= LB_STOCK_CAP)
			return false;
		atomic_store_explicit(obj_link(obj), (uint32_t)h, RLX);
		/* release: the link (and the payload) before the object is poppable */
		if (atomic_compare_exchange_weak_explicit(head, &h,
							  cas_head(ref, count + 1, (h >> CAS_TAG_SHIFT) + 1),
							  memory_order_release, RLX))
			return true;
	}
}

/* ---- the five fast paths --------------------------------------------- */

#if LB_HAVE_RSEQ_ASM
/*
 * The rseq pop, retried after each abort; NULL when the slot is empty (the
 * caller takes the slow path).  The result is only ever the object of a
 * committed pop: lb_rseq_stock_pop() writes `got` after its commit, and
 * `got` is reset before each try, so an aborted try leaves nothing behind
 * (issue 23: a value left from an aborted try, returned when the retry found
 * the slot empty, handed out an object a handler or another thread had
 * popped meanwhile).  window_spins > 0: the first try holds its section
 * open between reading the object and the commit (tests); *empty_after_abort
 * counts retries that found the slot emptied.
 */
static inline __attribute__((always_inline)) void *
rseq_pop(struct lb_stock *s, struct lb_stock_thread *t, uint64_t window_spins,
	 uint64_t *empty_after_abort)
{
	for (bool retry = false;; retry = true) {
		void *got = NULL;
		int r = window_spins && !retry
			? lb_rseq_stock_pop_window(s->slots, &got, window_spins)
			: lb_rseq_stock_pop(s->slots, &got);
		if (r == LB_RSEQ_OK)
			return got;
		if (r == LB_RSEQ_EMPTY) {
			if (retry && empty_after_abort)
				++*empty_after_abort;
			return NULL;
		}
		t->rseq_aborts++; /* restarted: preempted, migrated or signalled */
	}
}
#endif

void *lb_stock_rseq_alloc_window(struct lb_stock *s, struct lb_stock_thread *t, uint64_t spins,
				 uint64_t *empty_after_abort)
{
#if LB_HAVE_RSEQ_ASM
	if (s->prot != LB_PROT_RSEQ || lb_prot_unsupported(LB_PROT_RSEQ, NULL))
		return NULL;
	void *obj = rseq_pop(s, t, spins, empty_after_abort);
	return obj ? obj : lb_stock_slow_alloc(t);
#else
	(void)s;
	(void)t;
	(void)spins;
	(void)empty_after_abort;
	return NULL;
#endif
}

void *lb_stock_alloc(struct lb_stock *s, struct lb_stock_thread *t)
{
	void *obj = NULL;
	switch (s->prot) {
	case LB_PROT_RSEQ:
#if LB_HAVE_RSEQ_ASM
		obj = rseq_pop(s, t, 0, NULL);
#endif
		break;
	case LB_PROT_SIGMASK:
	case LB_PROT_LOCK:
		(void)slot_guarded(s, t, &obj, false);
		break;
	case LB_PROT_CAS:
		obj = cas_pop(s);
		break;
	case LB_PROT_NONE:
		obj = slot_pop(&s->slots[0]);
		break;
	default:
		break;
	}
	return obj ? obj : lb_stock_slow_alloc(t);
}

void lb_stock_free(struct lb_stock *s, struct lb_stock_thread *t, void *obj)
{
	bool done = false;
	switch (s->prot) {
	case LB_PROT_RSEQ:
#if LB_HAVE_RSEQ_ASM
		for (;;) {
			int r = lb_rseq_stock_push(s->slots, obj);
			if (r != LB_RSEQ_ABORT) {
				done = r == LB_RSEQ_OK;
				break;
			}
			t->rseq_aborts++;
		}
#endif
		break;
	case LB_PROT_SIGMASK:
	case LB_PROT_LOCK:
		done = slot_guarded(s, t, &obj, true);
		break;
	case LB_PROT_CAS:
		done = cas_push(s, obj);
		break;
	case LB_PROT_NONE:
		done = slot_push(&s->slots[0], obj);
		break;
	default:
		break;
	}
	if (!done)
		lb_stock_slow_free(t, obj);
}

/* The body of lb_stock_section(), inlined into each protection's loop. */
static inline __attribute__((always_inline)) void section(struct lb_stock *s,
							 struct lb_stock_thread *t, enum lb_prot prot)
{
	switch (prot) {
	case LB_PROT_RSEQ:
#if LB_HAVE_RSEQ_ASM
		/* restarted after preemption, migration or a signal: retry */
		while (lb_rseq_counter_inc(s->counters) != LB_RSEQ_OK)
			t->rseq_aborts++;
#endif
		break;
	case LB_PROT_SIGMASK:
	case LB_PROT_LOCK: {
		sigset_t old;
		int slot = slot_enter(s, t, prot, &old);
		if (slot >= 0) {
			s->counters[(unsigned int)slot * LINE_WORDS]++;
			slot_leave(s, t, prot, slot, &old);
		}
		break;
	}
	case LB_PROT_CAS: {
		_Atomic uint64_t *ctr = (_Atomic uint64_t *)&s->counters[lb_stock_cpu() * LINE_WORDS];
		uint64_t v = atomic_load_explicit(ctr, RLX);
		/* relaxed CAS loop: a counter orders nothing; retried when a handler
		 * or another thread on this CPU updated it in between */
		while (!atomic_compare_exchange_weak_explicit(ctr, &v, v + 1, RLX, RLX))
			;
		break;
	}
	case LB_PROT_NONE:
		/* volatile: one real load and store per call, like the others */
		(*(volatile uint64_t *)&t->plain_counter)++;
		break;
	default:
		break;
	}
}

void lb_stock_section(struct lb_stock *s, struct lb_stock_thread *t)
{
	section(s, t, s->prot);
}

/*
 * The none mode's n updates as one asm loop whose top is aligned to 64
 * bytes: the same instructions at the same alignment in every build,
 * whatever the compiler does around it.  The counter is addressed as base +
 * index (index 0), the form of the indexed update beside rseq: with a plain
 * (base) address this CPU (family 6 model 207) sometimes ran the loop with
 * the store forwarded at no latency (0.36 ns) and sometimes not (2.5 ns),
 * the mode flipping between repeats (doc/slab.md).
 */
static void plain_updates(uint64_t *counter, uint64_t n)
{
#if defined(__x86_64__)
	uint64_t index = 0;
	if (!n)
		return;
	__asm__ __volatile__(".p2align 6\n"
			     "1:\n\t"
			     "movq (%[ctr],%[ix],8), %%rcx\n\t"
			     "incq %%rcx\n\t"
			     "movq %%rcx, (%[ctr],%[ix],8)\n\t"
			     "decq %[n]\n\t"
			     "jnz 1b"
			     : [n] "+r"(n)
			     : [ctr] "r"(counter), [ix] "r"(index)
			     : "rcx", "memory", "cc");
#else
	for (uint64_t i = 0; i < n; i++)
		(*(volatile uint64_t *)counter)++; /* one real load and store each */
#endif
}

void lb_stock_sections(struct lb_stock *s, struct lb_stock_thread *t, uint64_t n)
{
	if (s->prot == LB_PROT_NONE) {
		plain_updates(&t->plain_counter, n);
		return;
	}
	/* One loop per protection, the switch folded away by the constant. */
#define SECTION_LOOP(p)                            \
	case p:                                    \
		for (uint64_t i = 0; i < n; i++)   \
			section(s, t, p);          \
		break;
	switch (s->prot) {
	SECTION_LOOP(LB_PROT_RSEQ)
	SECTION_LOOP(LB_PROT_SIGMASK)
	SECTION_LOOP(LB_PROT_LOCK)
	SECTION_LOOP(LB_PROT_CAS)
	default:
		break;
	}
#undef SECTION_LOOP
}

void lb_stock_indexed_updates(struct lb_stock *s, uint64_t n)
{
#if LB_HAVE_RSEQ_ASM
	struct rseq *rs = lb_rseq_area();
	for (uint64_t i = 0; i < n; i++)
		__asm__ __volatile__("movl %c[cpu_off](%[rs]), %%eax\n\t"
				     "shlq %[shift], %%rax\n\t"
				     "movq (%[ctrs], %%rax), %%rcx\n\t"
				     "incq %%rcx\n\t"
				     "movq %%rcx, (%[ctrs], %%rax)\n\t"
				     : : [rs] "r"(rs), [ctrs] "r"(s->counters),
				       [cpu_off] "i"(offsetof(struct rseq, cpu_id)),
				       [shift] "i"(LB_COUNTER_SHIFT)
				     : "rax", "rcx", "memory", "cc");
#else
	(void)s;
	(void)n;
#endif
}

uint64_t lb_stock_indexed_updates_ns(struct lb_stock *s, uint64_t n)
{
	if (lb_prot_unsupported(LB_PROT_RSEQ, NULL))
		return 0;
	uint64_t t0 = lb_now_ns();
	lb_stock_indexed_updates(s, n);
	return lb_now_ns() - t0;
}

bool lb_stock_rseq_slow_section(struct lb_stock *s, struct lb_stock_thread *t, uint64_t spins)
{
#if LB_HAVE_RSEQ_ASM
	if (lb_prot_unsupported(LB_PROT_RSEQ, NULL))
		return false;
	/* After an abort, retry without the spin so the update completes. */
	if (lb_rseq_counter_inc_slow(s->counters, spins) == LB_RSEQ_OK)
		return true;
	t->rseq_aborts++;
	while (lb_rseq_counter_inc(s->counters) != LB_RSEQ_OK)
		t->rseq_aborts++;
	return true;
#else
	(void)s;
	(void)t;
	(void)spins;
	return false;
#endif
}

void lb_stock_drain(struct lb_stock *s, struct lb_stock_thread *t)
{
	for (unsigned int i = 0; i < s->nslots; i++) {
		void *obj;
		while ((obj = slot_pop(&s->slots[i])))
			lb_stock_slow_free(t, obj);
		_Atomic uint64_t *head = &s->cas_heads[i * LINE_WORDS];
		uint64_t h = atomic_load_explicit(head, memory_order_acquire);
		for (uint32_t n = 0; (uint32_t)h && n <= LB_STOCK_CAP; n++) {
			void *o = ref_obj(s, (uint32_t)h);
			uint32_t next = atomic_load_explicit(obj_link(o), RLX);
			lb_stock_slow_free(t, o);
			h = next;
		}
		atomic_store_explicit(head, 0, RLX);
	}
}
