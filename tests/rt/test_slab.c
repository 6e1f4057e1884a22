/* SPDX-License-Identifier: MIT */
/*
 * test_slab.c - the SLUB-like allocator of `lockbench rt` (engines/slub/slub.h):
 * single and bulk allocation, the lockless cpu slab, remote frees between
 * threads, the no-cache path, the invariant check on a healthy allocator,
 * on deliberate misuse (double free, foreign pointer, leaked object), and
 * with the `busted` list_lock, which must be caught.
 *
 *   test-rt-slab [--lock NAME]    TAP; every check (default lock: tas)
 *   test-rt-slab --busted         TAP; `busted` must be caught within 30 s
 */
#include "slub.h"
#include "lb_registry.h"
#include "lb_time.h"
#include "../tap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define POOL (64u << 20)

static const struct lb_lock_ops *ops;

static void test_single(void)
{
	struct lb_slub_cache c;
	struct lb_slub_cpu cpu;
	tap_ok(lb_slub_cache_init(&c, ops, 100, POOL) == 0, "cache init (100-byte objects)");
	tap_ok(lb_slub_cpu_init(&c, &cpu, 0) == 0, "cpu slab init");
	void *a = lb_slub_alloc(&cpu), *b = lb_slub_alloc(&cpu);
	tap_ok(a && b && a != b, "two allocations, two objects");
	memset(a, 0xaa, 100);
	memset(b, 0xbb, 100);
	tap_ok(((unsigned char *)a)[99] == 0xaa, "payloads do not overlap");
	lb_slub_free(&cpu, a);
	void *a2 = lb_slub_alloc(&cpu);
	tap_ok(a2 == a, "a freed object of the cpu slab is reused first (lockless path)");
	lb_slub_free(&cpu, a2);
	lb_slub_free(&cpu, b);
	/* Spans many pages: the partial list and the empty pool take part. */
	enum { N = 5000 };
	void **v = calloc(N, sizeof(void *));
	size_t got = 0;
	for (size_t i = 0; i < N; i++)
		got += (v[i] = lb_slub_alloc(&cpu)) != NULL;
	tap_ok(got == N, "%d allocations over many pages", N);
	for (size_t i = 0; i < N; i += 2)
		lb_slub_free(&cpu, v[i]);
	for (size_t i = 1; i < N; i += 2)
		lb_slub_free(&cpu, v[i]);
	void *p = lb_slub_alloc_nocache(&cpu);
	tap_ok(p != NULL, "allocation bypassing the cpu slab");
	lb_slub_free_nocache(&cpu, p);
	lb_slub_cpu_fini(&cpu);
	lb_slub_cpu_release(&cpu);
	tap_ok(lb_slub_check(&c, 0, stdout) == 0, "invariants hold after everything was freed");
	tap_ok(atomic_load(&c.allocs) == N + 4 && atomic_load(&c.frees) == N + 4,
	   "allocation and free counts add up (%llu/%llu)",
	   (unsigned long long)atomic_load(&c.allocs), (unsigned long long)atomic_load(&c.frees));
	lb_slub_cache_destroy(&c);
	free(v);
}

/*
 * cpu_partial, deterministically: cpu slab A fills pages, then B frees every
 * object (all remote frees) in one thread, so no schedule decides the count.
 * Off, the first free to each full page moves it to the node partial list
 * under list_lock (and its last free to the empty pool, again under it); on,
 * the first free freezes the page onto B's own cpu partial list without
 * list_lock, and later frees to it are lockless too (SLUB's put_cpu_partial).
 */
static uint64_t remote_free_acquires(uint32_t cpu_partial, uint64_t *partial_frees)
{
	struct lb_slub_tuning t = lb_slub_tuning_default();
	t.cpu_partial = cpu_partial;
	struct lb_slub_cache c;
	struct lb_slub_cpu a, b;
	enum { N = 2000 };
	void **v = calloc(N, sizeof(void *));
	uint64_t acquires = UINT64_MAX;
	if (!v || lb_slub_cache_init_tuned(&c, ops, 4096, POOL, &t) != 0) {
		free(v);
		return acquires;
	}
	if (lb_slub_cpu_init(&c, &a, 0) == 0 && lb_slub_cpu_init(&c, &b, 1) == 0) {
		size_t got = 0;
		for (size_t i = 0; i < N; i++)
			got += (v[i] = lb_slub_alloc(&a)) != NULL;
		uint64_t before = b.lock_acquires;
		for (size_t i = 0; i < got; i++)
			lb_slub_free(&b, v[i]);
		acquires = got == N ? b.lock_acquires - before : UINT64_MAX;
		*partial_frees = b.partial_frees;
		lb_slub_cpu_fini(&a);
		lb_slub_cpu_fini(&b);
		lb_slub_cpu_release(&a);
		lb_slub_cpu_release(&b);
		if (lb_slub_check(&c, 0, stdout) != 0)
			acquires = UINT64_MAX;
	}
	lb_slub_cache_destroy(&c);
	free(v);
	return acquires;
}

static void test_cpu_partial(void)
{
	uint64_t pf_off = 0, pf_on = 0;
	uint64_t off = remote_free_acquires(0, &pf_off), on = remote_free_acquires(64, &pf_on);
	tap_ok(off != UINT64_MAX && on != UINT64_MAX, "remote frees of 2000 objects, both tunings: "
	       "invariants hold");
	tap_ok(pf_off == 0 && pf_on > 0, "cpu partial frees only with cpu_partial 64 (%llu, %llu)",
	       (unsigned long long)pf_off, (unsigned long long)pf_on);
	tap_ok(on < off, "list_lock taken less by remote frees with cpu_partial 64: %llu < %llu",
	       (unsigned long long)on, (unsigned long long)off);
}

/*
 * The refill takes list_lock only where the kernel's does: with no partial
 * page, get_partial_node() returns without it and new_slab() comes from
 * the page allocator (mm/slub.c v6.18).  One thread: 4 fresh pages, then
 * every object freed (3 full pages go partial and then empty, into the
 * pool with min_partial 0), then 3 pages again from the pool.
 */
static void test_refill_lock(void)
{
	struct lb_slub_tuning t = lb_slub_tuning_default();
	t.min_partial = 0;
	struct lb_slub_cache c;
	struct lb_slub_cpu cpu;
	tap_ok(lb_slub_cache_init_tuned(&c, ops, 100, POOL, &t) == 0 &&
		       lb_slub_cpu_init(&c, &cpu, 0) == 0, "refill: set up");
	uint32_t per = c.objs_per_page, n = 4 * per;
	void **v = calloc(n, sizeof(void *));
	size_t got = 0;
	for (uint32_t i = 0; v && i < n; i++)
		got += (v[i] = lb_slub_alloc(&cpu)) != NULL;
	tap_ok(got == n && cpu.lock_acquires == 0,
	       "refill: 4 new pages (%u objects) without list_lock (%llu acquisitions)", n,
	       (unsigned long long)cpu.lock_acquires);
	for (uint32_t i = 0; i < got; i++)
		lb_slub_free(&cpu, v[i]);
	uint64_t freed = cpu.lock_acquires, empty = atomic_load(&c.nr_empty);
	got = 0;
	for (uint32_t i = 0; v && i < 4 * per; i++)
		got += (v[i] = lb_slub_alloc(&cpu)) != NULL;
	tap_ok(got == 4 * per && empty == 3 && atomic_load(&c.nr_empty) == 0 &&
		       atomic_load(&c.pages_used) == 4 && cpu.lock_acquires == freed,
	       "refill: 3 pages from the empty pool without list_lock (%u empty before, %u after, "
	       "%u pages used, %llu acquisitions)", (unsigned)empty,
	       (unsigned)atomic_load(&c.nr_empty), (unsigned)atomic_load(&c.pages_used),
	       (unsigned long long)(cpu.lock_acquires - freed));
	for (uint32_t i = 0; i < got; i++)
		lb_slub_free(&cpu, v[i]);
	lb_slub_cpu_fini(&cpu);
	lb_slub_cpu_release(&cpu);
	tap_ok(lb_slub_check(&c, 0, stdout) == 0, "refill: invariants hold");
	lb_slub_cache_destroy(&c);
	free(v);
}

/*
 * Why list_lock was taken (enum lb_slub_site), on a scripted sequence of
 * two tasks, cpu partials off, min_partial 0: A fills pages 1 and 2; B's
 * free to full page 1 puts it on the partial list (free_full); A's refill
 * takes it back with its one free object (partial_take, 1 object); B's
 * first free to page 2, now full, and its last, which empties it
 * (free_full, free_empty); A's exit flushes its cpu slab (flush).
 */
static void test_sites(void)
{
	struct lb_slub_tuning t = lb_slub_tuning_default();
	t.min_partial = 0;
	struct lb_slub_cache c;
	struct lb_slub_cpu a, b;
	tap_ok(lb_slub_cache_init_tuned(&c, ops, 100, POOL, &t) == 0 &&
		       lb_slub_cpu_init(&c, &a, 0) == 0 && lb_slub_cpu_init(&c, &b, 0) == 0,
	       "sites: set up");
	uint32_t per = c.objs_per_page;
	void **v = calloc(2 * per, sizeof(void *));
	size_t got = 0;
	for (uint32_t i = 0; v && i < 2 * per; i++)
		got += (v[i] = lb_slub_alloc(&a)) != NULL;
	lb_slub_free(&b, v[0]);
	void *again = lb_slub_alloc(&a);
	lb_slub_free(&b, v[per]);
	for (uint32_t i = per + 1; i < 2 * per; i++)
		lb_slub_free(&b, v[i]);
	const uint64_t *sa = a.site_acquires, *sb = b.site_acquires;
	uint64_t sum = 0;
	for (int k = 0; k < LB_SLUB_SITES; k++)
		sum += sa[k] + sb[k];
	tap_ok(got == 2 * per && again == v[0] && sb[LB_SLUB_SITE_FREE_FULL] == 2 &&
		       sb[LB_SLUB_SITE_FREE_EMPTY] == 1 && sa[LB_SLUB_SITE_PARTIAL_TAKE] == 1 &&
		       a.partial_take_objs == 1,
	       "sites: free_full %llu (want 2), free_empty %llu (1), partial_take %llu (1) "
	       "bringing %llu object(s) (1)", (unsigned long long)sb[LB_SLUB_SITE_FREE_FULL],
	       (unsigned long long)sb[LB_SLUB_SITE_FREE_EMPTY],
	       (unsigned long long)sa[LB_SLUB_SITE_PARTIAL_TAKE],
	       (unsigned long long)a.partial_take_objs);
	tap_ok(sum == a.lock_acquires + b.lock_acquires && sum == 4,
	       "sites: every acquisition has one site (%llu by site, %llu acquisitions)",
	       (unsigned long long)sum, (unsigned long long)(a.lock_acquires + b.lock_acquires));
	lb_slub_cpu_fini(&a);
	lb_slub_cpu_release(&a);
	tap_ok(atomic_load(&c.site_acquires[LB_SLUB_SITE_FLUSH]) == 1 &&
		       atomic_load(&c.partial_take_objs) == 1,
	       "sites: the exiting task's cpu slab flushed once (%llu)",
	       (unsigned long long)atomic_load(&c.site_acquires[LB_SLUB_SITE_FLUSH]));
	for (uint32_t i = 0; i < per; i++)
		lb_slub_free(&b, v[i]);
	lb_slub_cpu_fini(&b);
	lb_slub_cpu_release(&b);
	tap_ok(lb_slub_check(&c, 0, stdout) == 0, "sites: invariants hold");
	lb_slub_cache_destroy(&c);
	free(v);
}

static void test_bulk(void)
{
	struct lb_slub_cache c;
	struct lb_slub_cpu cpu;
	void *v[300];
	tap_ok(lb_slub_cache_init(&c, ops, 4096, POOL) == 0, "cache init (4096-byte objects)");
	lb_slub_cpu_init(&c, &cpu, 0);
	tap_ok(lb_slub_alloc_bulk(&cpu, 300, v) == 300, "bulk allocation of 300");
	bool distinct = true;
	for (int i = 1; i < 300; i++)
		distinct &= v[i] != v[i - 1];
	tap_ok(distinct, "bulk objects are distinct");
	uint64_t before = cpu.lock_acquires;
	lb_slub_free_bulk(&cpu, 300, v);
	tap_ok(cpu.lock_acquires - before <= 1, "bulk free takes list_lock at most once (%llu)",
	   (unsigned long long)(cpu.lock_acquires - before));
	lb_slub_cpu_fini(&cpu);
	lb_slub_cpu_release(&cpu);
	tap_ok(lb_slub_check(&c, 0, stdout) == 0, "invariants hold after the bulk free");
	lb_slub_cache_destroy(&c);
}

static void test_misuse(void)
{
	struct lb_slub_cache c;
	struct lb_slub_cpu cpu;
	int local;
	lb_slub_cache_init(&c, ops, 64, POOL);
	lb_slub_cpu_init(&c, &cpu, 0);
	void *a = lb_slub_alloc(&cpu), *leak = lb_slub_alloc(&cpu);
	lb_slub_free(&cpu, a);
	lb_slub_free(&cpu, a);
	lb_slub_free(&cpu, &local);
	tap_ok(atomic_load(&c.violations) == 2, "a double free and a foreign pointer are caught");
	lb_slub_cpu_fini(&cpu);
	lb_slub_cpu_release(&cpu);
	tap_ok(lb_slub_check(&c, 1, NULL) == 1, "the check reports those violations");
	(void)leak;
	lb_slub_cache_destroy(&c);

	lb_slub_cache_init(&c, ops, 64, POOL);
	lb_slub_cpu_init(&c, &cpu, 0);
	leak = lb_slub_alloc(&cpu);
	lb_slub_cpu_fini(&cpu);
	lb_slub_cpu_release(&cpu);
	tap_ok(lb_slub_check(&c, 0, NULL) >= 1, "an object never freed is reported");
	tap_ok(lb_slub_check(&c, 1, NULL) == 0, "and accepted when expected outstanding");
	lb_slub_cache_destroy(&c);
}

/* Remote frees: producers allocate, consumers free through a ring. */
#define RING 256
struct shared {
	struct lb_slub_cache cache;
	_Atomic(void *) ring[RING];
	_Atomic uint64_t produced, consumed;
	uint64_t per_producer;
	uint64_t deadline_ns;
	_Atomic int stop;
};

struct worker {
	struct shared *s;
	unsigned int index;
	bool producer;
	int err;
	struct lb_slub_cpu cpu; /* released by main after the joins */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct shared *s = w->s;
	w->err = lb_slub_cpu_init(&s->cache, &w->cpu, w->index);
	if (w->err)
		return NULL;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (w->index + 1);
	for (uint64_t n = 0; n < s->per_producer && !atomic_load(&s->stop);) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		unsigned int slot = (unsigned int)(rng % RING);
		if (lb_now_ns() > s->deadline_ns)
			break;
		if (w->producer) {
			void *p = (rng & 3) ? lb_slub_alloc(&w->cpu) : lb_slub_alloc_nocache(&w->cpu);
			if (!p)
				break;
			bool placed = false;
			for (unsigned int k = 0; k < RING && !placed; k++) {
				void *expected = NULL;
				/* acq_rel: hands the object over to whichever consumer takes it. */
				placed = atomic_compare_exchange_strong_explicit(
					&s->ring[(slot + k) % RING], &expected, p, memory_order_acq_rel,
					memory_order_relaxed);
			}
			if (placed) {
				n++;
				atomic_fetch_add(&s->produced, 1);
			} else {
				lb_slub_free(&w->cpu, p); /* ring full: give it back */
			}
		} else {
			/* acquire: pairs with the producer's release. */
			void *p = atomic_exchange_explicit(&s->ring[slot], NULL, memory_order_acq_rel);
			if (p) {
				if (rng & 4)
					lb_slub_free(&w->cpu, p); /* remote: through list_lock */
				else
					lb_slub_free_nocache(&w->cpu, p);
				n++;
				atomic_fetch_add(&s->consumed, 1);
			} else if (atomic_load(&s->produced) == atomic_load(&s->consumed) &&
				   atomic_load(&s->stop)) {
				break;
			}
		}
	}
	lb_slub_cpu_fini(&w->cpu);
	return NULL;
}

/* What a run_remote() did without list_lock. */
struct lockless {
	uint64_t remote_frees, lockless_frees, lockless_refills, allocs, lock_acquires;
};

/* Run producers/consumers; returns the check's problem count. */
static unsigned long run_remote(uint64_t per, uint64_t max_ns, FILE *err, struct lockless *out)
{
	enum { P = 2, C = 2 };
	struct shared *s = calloc(1, sizeof(*s));
	struct worker w[P + C];
	pthread_t t[P + C];
	lb_slub_cache_init(&s->cache, ops, 100, POOL);
	s->per_producer = per;
	s->deadline_ns = lb_now_ns() + max_ns;
	for (int i = 0; i < P + C; i++) {
		w[i] = (struct worker){ .s = s, .index = (unsigned int)i, .producer = i < P };
		pthread_create(&t[i], NULL, worker_main, &w[i]);
	}
	for (int i = 0; i < P; i++)
		pthread_join(t[i], NULL);
	atomic_store(&s->stop, 1);
	for (int i = P; i < P + C; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < P + C; i++)
		lb_slub_cpu_release(&w[i].cpu);
	/* Objects left in the ring: free them from a fresh cpu slab. */
	struct lb_slub_cpu cpu;
	lb_slub_cpu_init(&s->cache, &cpu, P + C);
	for (int i = 0; i < RING; i++) {
		void *p = atomic_exchange(&s->ring[i], NULL);
		if (p)
			lb_slub_free(&cpu, p);
	}
	lb_slub_cpu_fini(&cpu);
	lb_slub_cpu_release(&cpu);
	unsigned long problems = lb_slub_check(&s->cache, 0, err);
	if (out) {
		out->remote_frees = atomic_load(&s->cache.remote_frees);
		out->lockless_frees = atomic_load(&s->cache.lockless_frees);
		out->lockless_refills = atomic_load(&s->cache.lockless_refills);
		out->allocs = atomic_load(&s->cache.allocs);
		out->lock_acquires = atomic_load(&s->cache.lock_acquires);
	}
	lb_slub_cache_destroy(&s->cache);
	free(s);
	return problems;
}

int main(int argc, char **argv)
{
	const char *name = "tas";
	bool busted = argc > 1 && !strcmp(argv[1], "--busted");
	if (argc > 2 && !strcmp(argv[1], "--lock"))
		name = argv[2];
	if (busted)
		name = "busted";
	ops = lb_lock_find(name);
	if (!ops) {
		printf("1..0 # SKIP lock %s not built\n", name);
		return 0;
	}
	if (busted) {
#if defined(__SANITIZE_THREAD__)
		/* TSan slows every access so much that the unlocked sections rarely
		 * overlap on a loaded 2-CPU machine: not a reliable negative control. */
		tap_skip_all("busted is not reliably caught under ThreadSanitizer's slowdown");
#endif
		/* Up to 30 s of attempts, each a short burst of 2+2 threads; the
		 * first catch ends it (well under a second on an idle machine, but
		 * at load average 40+ the threads seldom overlap: 5 s missed). */
		uint64_t end = lb_now_ns() + 30000000000ull;
		unsigned long problems = 0;
		int rounds = 0;
		while (!problems && lb_now_ns() < end) {
			problems = run_remote(200000, 1000000000ull, NULL, NULL);
			rounds++;
		}
		tap_ok(problems > 0, "the busted list_lock is caught by the invariants (%lu problem(s), "
		   "round %d)", problems, rounds);
		return tap_done();
	}
	test_single();
	test_bulk();
	test_misuse();
	test_cpu_partial();
	test_refill_lock();
	test_sites();
	struct lockless ll;
	tap_ok(run_remote(10000, 10000000000ull, stdout, &ll) == 0,
	       "2 producers + 2 consumers with remote frees under '%s': invariants hold", name);
	/* SLUB's locking: a free to a frozen page or to one that stays partial,
	 * and a cpu slab's refill from its own page, take no list_lock. */
	tap_ok(ll.lockless_frees > 0 && ll.lockless_frees <= ll.remote_frees,
	       "remote frees without list_lock under contention: %llu of %llu",
	       (unsigned long long)ll.lockless_frees, (unsigned long long)ll.remote_frees);
	tap_ok(ll.lockless_refills > 0, "cpu slab refills from its own page without list_lock: %llu",
	       (unsigned long long)ll.lockless_refills);
	tap_diag("list_lock: %llu acquisitions for %llu allocations (%.1f per 1000)",
		 (unsigned long long)ll.lock_acquires, (unsigned long long)ll.allocs,
		 ll.allocs ? 1000.0 * (double)ll.lock_acquires / (double)ll.allocs : 0);
	return tap_done();
}
