/* SPDX-License-Identifier: MIT */
/*
 * test_slub_moves.c - the allocator's list moves against its page counts
 * (issue 39 item 4): "a remote free empties a partial page while an
 * allocator pops it".
 *
 * Threads allocate through lb_slub_alloc_nocache (under list_lock, from the
 * head of the partial list) and free objects other threads allocated
 * through lb_slub_free_nocache (a remote free: a page whose last object
 * comes back takes list_lock and moves to the empty pool; min_partial 0, so
 * every emptied partial page does).  A handful of live objects keeps pages
 * going between one and zero objects in use, so a free that finds its page
 * at one object often waits for list_lock while an allocator pops that page.
 * The allocator checks each move against the page's count (check_move in
 * engines/slub/slub.c); the test fails on any violation reported during the
 * run or by lb_slub_check() at the end.
 *
 *   test-slub-moves [--lock NAME] [--seconds S]
 *       TAP: S seconds (default 2) of the race, no violation.
 *   test-slub-moves --expect-caught [--lock NAME] [--seconds S]
 *       TAP, for the broken copy (tests/harden/mkbroken.py slub-stale-count):
 *       ok when a violation is reported within S seconds (default 20); it
 *       also says whether the end-of-run check alone would have seen it.
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

#define POOL (16u << 20)
#define THREADS 8
#define RING 3 /* live objects: 0..3, so pages often go from one in use to none */

struct shared {
	struct lb_slub_cache cache;
	_Atomic(void *) ring[RING];
	_Atomic bool stop;
	uint64_t deadline_ns;
};

struct worker {
	struct shared *s;
	unsigned int index;
	uint64_t ops;
};

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct shared *s = w->s;
	struct lb_slub_cpu cpu;
	if (lb_slub_cpu_init(&s->cache, &cpu, w->index))
		return NULL;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (w->index + 1);
	/* Relaxed: the stop flag only ends the loop; the joins order the rest. */
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		unsigned int slot = (unsigned int)(xorshift(&rng) % RING);
		/* acq_rel: the object's payload and header changes travel with it
		 * between the thread that allocated it and the one that frees it. */
		void *p = atomic_exchange_explicit(&s->ring[slot], NULL, memory_order_acq_rel);
		if (!p && (p = lb_slub_alloc_nocache(&cpu)) != NULL)
			/* Into the slot; what another thread put there meanwhile
			 * comes back out and is freed instead. */
			p = atomic_exchange_explicit(&s->ring[slot], p, memory_order_acq_rel);
		if (p)
			lb_slub_free_nocache(&cpu, p);
		if ((++w->ops & 63) == 0 &&
		    (lb_now_ns() > s->deadline_ns ||
		     atomic_load_explicit(&s->cache.violations, memory_order_relaxed)))
			atomic_store_explicit(&s->stop, true, memory_order_relaxed);
	}
	lb_slub_cpu_fini(&cpu);
	lb_slub_cpu_release(&cpu);
	return NULL;
}

/* One run; the violations reported during it, and the end check's problems. */
static uint64_t run(const struct lb_lock_ops *ops, uint64_t ns, unsigned long *end_problems,
		    uint64_t *ops_done, char *first, size_t first_size)
{
	struct shared *s = calloc(1, sizeof(*s));
	struct lb_slub_tuning t = lb_slub_tuning_default();
	t.min_partial = 0; /* every page a free empties leaves the partial list */
	if (!s || lb_slub_cache_init_tuned(&s->cache, ops, 100, POOL, &t)) {
		free(s);
		return UINT64_MAX;
	}
	s->deadline_ns = lb_now_ns() + ns;
	struct worker w[THREADS];
	pthread_t tid[THREADS];
	for (unsigned int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .s = s, .index = i };
		pthread_create(&tid[i], NULL, worker_main, &w[i]);
	}
	*ops_done = 0;
	for (unsigned int i = 0; i < THREADS; i++) {
		pthread_join(tid[i], NULL);
		*ops_done += w[i].ops;
	}
	uint64_t during = atomic_load(&s->cache.violations);
	snprintf(first, first_size, "%s", during ? s->cache.first_violation : "");
	/* The live objects back, then the end-of-run check.  Its violation
	 * count includes the run's, so take the run's out. */
	struct lb_slub_cpu cpu;
	lb_slub_cpu_init(&s->cache, &cpu, THREADS);
	for (int i = 0; i < RING; i++) {
		void *p = atomic_exchange(&s->ring[i], NULL);
		if (p)
			lb_slub_free_nocache(&cpu, p);
	}
	lb_slub_cpu_fini(&cpu);
	lb_slub_cpu_release(&cpu);
	atomic_store(&s->cache.violations, 0);
	*end_problems = lb_slub_check(&s->cache, 0, stdout);
	lb_slub_cache_destroy(&s->cache);
	free(s);
	return during;
}

int main(int argc, char **argv)
{
	const char *name = "pthread-mutex";
	bool expect_caught = false;
	double seconds = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--expect-caught"))
			expect_caught = true;
		else if (!strcmp(argv[i], "--lock") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else {
			fprintf(stderr, "test-slub-moves: unknown argument '%s'; accepted: "
				"--expect-caught, --lock NAME, --seconds S\n", argv[i]);
			return 2;
		}
	}
	if (seconds <= 0)
		seconds = expect_caught ? 20 : 2;
	const struct lb_lock_ops *ops = lb_lock_find(name);
	if (!ops) {
		printf("1..0 # SKIP lock %s not built\n", name);
		return 0;
	}
	unsigned long end_problems = 0;
	uint64_t done = 0, t0 = lb_now_ns();
	char first[200];
	uint64_t during = run(ops, (uint64_t)(seconds * 1e9), &end_problems, &done, first,
			      sizeof(first));
	double took = (double)(lb_now_ns() - t0) / 1e9;
	if (during == UINT64_MAX) {
		tap_ok(false, "cache set-up");
		return tap_done();
	}
	tap_diag("%llu operations in %.2f s under '%s'", (unsigned long long)done, took, name);
	if (expect_caught) {
		tap_ok(during > 0, "a move with a stale count is reported during the run "
		       "(after %.2f s: %s)", took, during ? first : "none");
		tap_diag("the end-of-run check alone: %lu problem(s)", end_problems);
	} else {
		tap_ok(during == 0, "no list move disagrees with its page's count (%llu reported%s%s)",
		       (unsigned long long)during, during ? ": " : "", first);
		tap_ok(end_problems == 0, "the end-of-run check holds");
	}
	return tap_done();
}
