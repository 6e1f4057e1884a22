/* SPDX-License-Identifier: MIT */
/*
 * test_stock.c - the protected stocks of `lockbench slab`
 * (bench/slab/slab_stock.h) under a signal handler that allocates and frees
 * from the same stock while the task is inside its fast path, and the
 * allocator's cpu partial pages and bulk API (engines/slub/slub.h).
 *
 *   test-slab-stock            every supported protection: no object lost
 *                              or handed out twice; the forced rseq abort
 *   test-slab-stock --broken   no protection while the handler allocates:
 *                              the damage must be caught (exit 0 when it is)
 */
#include "slab_stock.h"
#include "lb_registry.h"
#include "lb_time.h"
#include "../tap.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POOL (64u << 20)

/* ThreadSanitizer delivers an asynchronous signal only at its next
 * interceptor, never inside the fast path: the handler tests mean nothing. */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif
#define TEST_SIGNAL SIGUSR2
#define FREE_STAMP UINT64_C(0xf4eef4eef4eef4ee)
#define OWNED_STAMP UINT64_C(0x0123456789abcdef)
#define RING 4
#define HPOOL 8
#define BURST 70 /* more than a stock holds: the slow paths run too */

/* What the handler works on (one test at a time, on one thread). */
struct torture {
	struct lb_stock *stock;
	struct lb_stock_thread *t;
	void *hpool[HPOOL];
	unsigned int hcount;
	uint64_t signals, inside_fast_path, doubled, bad_free;
	volatile sig_atomic_t task_in_fast_path;
};
static _Thread_local struct torture *volatile current; /* the handler's, per thread */

/* Word 1 of the payload (word 0 is the cas mode's link) says who has it. */
static void take(struct torture *x, void *obj)
{
	uint64_t *w = (uint64_t *)obj + 1;
	if (*w != FREE_STAMP && *w != 0)
		x->doubled++;
	*w = OWNED_STAMP;
}

static void give(struct torture *x, void *obj)
{
	uint64_t *w = (uint64_t *)obj + 1;
	if (*w != OWNED_STAMP)
		x->bad_free++;
	*w = FREE_STAMP;
}

static void on_signal(int sig)
{
	(void)sig;
	struct torture *x = current;
	if (!x)
		return;
	int saved = errno;
	x->signals++;
	if (x->task_in_fast_path)
		x->inside_fast_path++;
	x->t->in_handler = 1;
	/* Alternate: fill the handler's pool, then empty it. */
	if ((x->signals / HPOOL) % 2 == 0 && x->hcount < HPOOL) {
		void *obj = lb_stock_alloc(x->stock, x->t);
		if (obj) {
			take(x, obj);
			x->hpool[x->hcount++] = obj;
		}
	} else if (x->hcount) {
		void *obj = x->hpool[--x->hcount];
		give(x, obj);
		lb_stock_free(x->stock, x->t, obj);
	}
	x->t->in_handler = 0;
	errno = saved;
}

/* False when no timer could be made (a timer_t of 0 is a valid timer). */
static bool start_timer(long interval_ns, timer_t *tm)
{
	struct sigevent sev = { 0 };
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = TEST_SIGNAL;
	sev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, tm))
		return false;
	struct itimerspec its = { { 0, interval_ns }, { 0, interval_ns } };
	return timer_settime(*tm, 0, &its, NULL) == 0;
}

/* The task: alloc+free through the shared stock for `ns`, a ring of RING
 * objects outstanding, a burst past the stock's capacity now and then. */
static void task_loop(struct torture *x, uint64_t ns)
{
	void *ring[RING] = { 0 }, *burst[BURST];
	uint64_t end = lb_now_ns() + ns;
	for (uint64_t i = 0; lb_now_ns() < end; i++) {
		for (int k = 0; k < 256; k++) {
			unsigned int slot = (unsigned int)(i * 256 + k) % RING;
			if (ring[slot]) {
				give(x, ring[slot]);
				x->task_in_fast_path = 1;
				lb_stock_free(x->stock, x->t, ring[slot]);
				x->task_in_fast_path = 0;
			}
			x->task_in_fast_path = 1;
			void *obj = lb_stock_alloc(x->stock, x->t);
			x->task_in_fast_path = 0;
			if (obj)
				take(x, obj);
			ring[slot] = obj;
		}
		if (i % 64 == 0) {
			for (int b = 0; b < BURST; b++)
				if ((burst[b] = lb_stock_alloc(x->stock, x->t)))
					take(x, burst[b]);
			for (int b = 0; b < BURST; b++)
				if (burst[b]) {
					give(x, burst[b]);
					lb_stock_free(x->stock, x->t, burst[b]);
				}
		}
	}
	for (int r = 0; r < RING; r++)
		if (ring[r]) {
			give(x, ring[r]);
			lb_stock_free(x->stock, x->t, ring[r]);
		}
}

/* One protection under the handler for `ns`; the number of problems found
 * (doubled objects, bad frees, allocator invariants); -1 when it could not run. */
static long torture_one(enum lb_prot prot, const struct lb_lock_ops *lock, uint64_t ns, bool quiet,
			struct torture *out)
{
	struct lb_slub_cache c;
	struct lb_stock s;
	struct lb_stock_thread t;
	struct torture x;
	memset(&x, 0, sizeof(x));
	if (lb_slub_cache_init(&c, lock, 128, POOL))
		return -1;
	if (lb_stock_init(&s, prot, &c, lock) || lb_stock_thread_init(&t, &c, lock, 0))
		return -1;
	x.stock = &s;
	x.t = &t;
	timer_t tm;
	if (!start_timer(20000, &tm)) /* 20 us: thousands of signals in the window */
		return -1;
	current = &x;
	task_loop(&x, ns);
	timer_delete(tm);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old); /* a last pending signal stays out */
	current = NULL;
	while (x.hcount) {
		void *obj = x.hpool[--x.hcount];
		give(&x, obj);
		lb_stock_free(&s, &t, obj);
	}
	lb_stock_drain(&s, &t);
	uint64_t aborts = t.rseq_aborts, busy = t.lock_busy;
	lb_stock_thread_fini(&t, lock);
	unsigned long problems = lb_slub_check(&c, 0, quiet ? NULL : stdout);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	lb_stock_destroy(&s);
	lb_slub_cache_destroy(&c);
	if (!quiet)
		tap_diag("%s: %llu signals, %llu inside the task's fast path, %llu rseq restarts, "
			 "%llu busy per-CPU locks, %llu doubled, %llu bad frees, %lu invariant problems",
			 lb_prot_name(prot), (unsigned long long)x.signals,
			 (unsigned long long)x.inside_fast_path, (unsigned long long)aborts,
			 (unsigned long long)busy, (unsigned long long)x.doubled,
			 (unsigned long long)x.bad_free, problems);
	*out = x;
	out->t = NULL;
	out->stock = NULL;
	return (long)(x.doubled + x.bad_free + problems);
}

/* ---- two threads on one per-CPU stock, each with its own timer ------- */

struct mt_arg {
	struct lb_stock *stock;
	struct lb_slub_cache *cache;
	const struct lb_lock_ops *lock;
	pthread_barrier_t *bar;
	unsigned int index;
	uint64_t ns;
	struct torture x;
	uint64_t aborts;
	bool timer_ok;
};

static void *mt_thread(void *p)
{
	struct mt_arg *a = p;
	struct lb_stock_thread t;
	lb_stock_thread_init(&t, a->cache, a->lock, a->index);
	a->x.stock = a->stock;
	a->x.t = &t;
	timer_t tm;
	a->timer_ok = start_timer(30000, &tm);
	current = &a->x;
	task_loop(&a->x, a->ns);
	if (a->timer_ok)
		timer_delete(tm);
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	current = NULL;
	while (a->x.hcount) {
		void *obj = a->x.hpool[--a->x.hcount];
		give(&a->x, obj);
		lb_stock_free(a->stock, &t, obj);
	}
	pthread_barrier_wait(a->bar); /* both stopped: the stock is quiet */
	if (a->index == 0)
		lb_stock_drain(a->stock, &t);
	pthread_barrier_wait(a->bar);
	a->aborts = t.rseq_aborts;
	lb_stock_thread_fini(&t, a->lock);
	return NULL;
}

/* Two unpinned threads share the per-CPU slots (preemption and migration
 * between them on a 2-CPU machine), each interrupted by its own handler. */
static void test_two_threads(enum lb_prot prot, const struct lb_lock_ops *lock)
{
	const char *why = UNDER_TSAN ? "ThreadSanitizer defers signals out of the fast path"
				     : lb_prot_unsupported(prot, lock);
	if (why) {
		tap_ok(true, "# SKIP %s, two threads: %s", lb_prot_name(prot), why);
		return;
	}
	struct lb_slub_cache c;
	struct lb_stock s;
	pthread_barrier_t bar;
	lb_slub_cache_init(&c, lock, 128, POOL);
	lb_stock_init(&s, prot, &c, lock);
	pthread_barrier_init(&bar, NULL, 2);
	struct mt_arg args[2];
	pthread_t th[2];
	for (unsigned int i = 0; i < 2; i++) {
		memset(&args[i], 0, sizeof(args[i]));
		args[i] = (struct mt_arg){ .stock = &s, .cache = &c, .lock = lock, .bar = &bar,
					   .index = i, .ns = 200 * 1000000ull };
		pthread_create(&th[i], NULL, mt_thread, &args[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	unsigned long problems = lb_slub_check(&c, 0, stdout);
	uint64_t bad = 0, sigs = 0, aborts = 0;
	for (int i = 0; i < 2; i++) {
		bad += args[i].x.doubled + args[i].x.bad_free;
		sigs += args[i].x.inside_fast_path;
		aborts += args[i].aborts;
	}
	bool clean = problems == 0 && bad == 0;
	char what[256];
	snprintf(what, sizeof(what),
		 "%s, two threads sharing the per-CPU slots, each with a handler (%llu signals "
		 "inside a fast path, %llu rseq restarts): no object lost or doubled (%llu stamps, "
		 "%lu invariant problems)", lb_prot_name(prot), (unsigned long long)sigs,
		 (unsigned long long)aborts, (unsigned long long)bad, problems);
	tap_ok(clean, "%s", what);
	pthread_barrier_destroy(&bar);
	lb_stock_destroy(&s);
	lb_slub_cache_destroy(&c);
}

/* The rseq-only scenes: why they cannot run here (NULL when they can), and
 * one rseq stock of `size`-byte objects with the handler working on it. */
struct rseq_scene {
	struct lb_slub_cache c;
	struct lb_stock s;
	struct lb_stock_thread t;
	struct torture x;
};

static const char *rseq_scene_unsupported(void)
{
	return UNDER_TSAN ? "ThreadSanitizer defers signals out of the section"
			  : lb_prot_unsupported(LB_PROT_RSEQ, NULL);
}

static void rseq_scene_open(struct rseq_scene *sc, const struct lb_lock_ops *lock, size_t size)
{
	memset(&sc->x, 0, sizeof(sc->x));
	lb_slub_cache_init(&sc->c, lock, size, POOL);
	lb_stock_init(&sc->s, LB_PROT_RSEQ, &sc->c, lock);
	lb_stock_thread_init(&sc->t, &sc->c, lock, 0);
	sc->x.stock = &sc->s; /* the handler allocates from the rseq stock meanwhile */
	sc->x.t = &sc->t;
	current = &sc->x;
}

/*
 * Issue 23's race, made likely: the task's stock holds one object; its pop
 * holds the section open between reading that object and the commit, a
 * signal lands there and the handler pops the same object (in its fill
 * phase), and the restarted pop finds the slot empty.  The task must then
 * get a fresh object from the slow path, never the one the handler took
 * (the stamps see that at once), and the allocator's invariants must hold.
 */
static void test_pop_window(const struct lb_lock_ops *lock)
{
	const char *why = rseq_scene_unsupported();
	if (why) {
		tap_ok(true, "# SKIP rseq pop window: %s", why);
		return;
	}
	struct rseq_scene sc;
	rseq_scene_open(&sc, lock, 128);
	timer_t tm;
	bool timer_ok = start_timer(50000, &tm);
	sigset_t all, old;
	sigfillset(&all);
	/* At least 32 rounds, and on until a handler has emptied the slot in
	 * the window (it lands there in its drain phase as often as in its
	 * fill phase: 32 rounds once saw 15 restarts and no emptied slot), at
	 * most 1024 rounds or 2 s. */
	const int min_rounds = 32, max_rounds = 1024;
	uint64_t emptied = 0, give_up = lb_now_ns() + 2 * LB_NS_PER_S;
	int rounds = 0;
	for (int i = 0; i < max_rounds && (i < min_rounds || (!emptied && lb_now_ns() < give_up));
	     i++, rounds++) {
		pthread_sigmask(SIG_BLOCK, &all, &old); /* the handler stays out of the drain */
		lb_stock_drain(&sc.s, &sc.t);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		void *obj = lb_stock_slow_alloc(&sc.t);
		if (!obj)
			break;
		take(&sc.x, obj);
		give(&sc.x, obj);
		lb_stock_free(&sc.s, &sc.t, obj); /* the one object of this CPU's slot */
		/* ~0.1-10 ms of pause (by CPU model) against a 50-us timer */
		obj = lb_stock_rseq_alloc_window(&sc.s, &sc.t, 200000, &emptied);
		if (obj) {
			take(&sc.x, obj);
			give(&sc.x, obj);
			lb_stock_free(&sc.s, &sc.t, obj);
		}
	}
	if (timer_ok)
		timer_delete(tm);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	current = NULL;
	while (sc.x.hcount) {
		void *obj = sc.x.hpool[--sc.x.hcount];
		give(&sc.x, obj);
		lb_stock_free(&sc.s, &sc.t, obj);
	}
	lb_stock_drain(&sc.s, &sc.t);
	uint64_t aborts = sc.t.rseq_aborts;
	lb_stock_thread_fini(&sc.t, lock);
	unsigned long problems = lb_slub_check(&sc.c, 0, stdout);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	tap_ok(emptied > 0 && sc.x.doubled == 0 && sc.x.bad_free == 0 && problems == 0,
	       "rseq: a signal between the pop's read and its commit, the handler taking the "
	       "slot's last object: the restarted pop goes to the slow path (%llu of %d pops "
	       "found the slot emptied, %llu restarts, %llu signals; %llu doubled, %llu bad "
	       "frees, %lu invariant problems)", (unsigned long long)emptied, rounds,
	       (unsigned long long)aborts, (unsigned long long)sc.x.signals,
	       (unsigned long long)sc.x.doubled, (unsigned long long)sc.x.bad_free, problems);
	lb_stock_destroy(&sc.s);
	lb_slub_cache_destroy(&sc.c);
}

static void test_forced_abort(const struct lb_lock_ops *lock)
{
	const char *why = rseq_scene_unsupported();
	if (why) {
		tap_ok(true, "# SKIP rseq abort: %s", why);
		tap_ok(true, "# SKIP rseq abort count");
		return;
	}
	struct rseq_scene sc;
	rseq_scene_open(&sc, lock, 64);
	timer_t tm;
	if (!start_timer(50000, &tm))
		tap_diag("no timer: the abort can only come from preemption");
	const int sections = 20;
	for (int i = 0; i < sections; i++)
		lb_stock_rseq_slow_section(&sc.s, &sc.t, 2000000); /* ~ms of pause: a signal lands inside */
	timer_delete(tm);
	current = NULL;
	uint64_t sum = 0;
	for (unsigned int i = 0; i < sc.s.nslots; i++)
		sum += sc.s.counters[i * 8];
	tap_ok(sc.t.rseq_aborts >= 1, "rseq: a signal inside a long section forces the abort path "
	       "(%llu restarts counted, %llu signals)", (unsigned long long)sc.t.rseq_aborts,
	       (unsigned long long)sc.x.signals);
	tap_ok(sum == (uint64_t)sections, "rseq: each aborted section completes exactly once on "
	       "retry (%llu updates for %d sections)", (unsigned long long)sum, sections);
	while (sc.x.hcount)
		lb_stock_free(&sc.s, &sc.t, sc.x.hpool[--sc.x.hcount]);
	lb_stock_drain(&sc.s, &sc.t);
	lb_stock_thread_fini(&sc.t, lock);
	lb_stock_destroy(&sc.s);
	lb_slub_cache_destroy(&sc.c);
}

/* ---- the allocator: cpu partial pages and the bulk API ---------------- */

struct pair_arg {
	struct lb_slub_cache *c;
	pthread_barrier_t *bar;
	void **mine, **theirs;
	unsigned int index;
	unsigned long failures;
};

#define PAIR_N 300
#define PAIR_ROUNDS 200

/* Each round: allocate PAIR_N (bulk on odd rounds), swap, free the other
 * thread's (remote frees onto full pages: the cpu partial path). */
static void *pair_thread(void *p)
{
	struct pair_arg *a = p;
	struct lb_slub_cpu cpu;
	lb_slub_cpu_init(a->c, &cpu, a->index);
	for (int r = 0; r < PAIR_ROUNDS; r++) {
		size_t got = PAIR_N;
		if (r % 2)
			got = lb_slub_alloc_bulk(&cpu, PAIR_N, a->mine);
		else
			for (size_t i = 0; i < PAIR_N; i++)
				if (!(a->mine[i] = lb_slub_alloc(&cpu)))
					got = 0;
		if (got != PAIR_N)
			a->failures++;
		pthread_barrier_wait(a->bar);
		if (r % 3)
			lb_slub_free_bulk(&cpu, PAIR_N, a->theirs);
		else
			for (size_t i = 0; i < PAIR_N; i++)
				lb_slub_free(&cpu, a->theirs[PAIR_N - 1 - i]);
		pthread_barrier_wait(a->bar);
		/* and some of our own back, in and out of order */
		got = lb_slub_alloc_bulk(&cpu, PAIR_N / 2, a->mine);
		for (size_t i = 0; i < got; i++)
			lb_slub_free(&cpu, a->mine[(i * 7) % got]) ;
		(void)0;
	}
	lb_slub_cpu_fini(&cpu);
	lb_slub_cpu_release(&cpu);
	return NULL;
}

static void test_cpu_partial(const struct lb_lock_ops *lock, uint32_t cpu_partial)
{
	struct lb_slub_cache c;
	struct lb_slub_tuning tune = lb_slub_tuning_default();
	tune.min_objects = 30;
	tune.cpu_partial = cpu_partial;
	tune.min_partial = 2;
	tune.recarve_empty = true;
	lb_slub_cache_init_tuned(&c, lock, 256, POOL, &tune);
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, 2);
	void *a0[PAIR_N], *a1[PAIR_N];
	struct pair_arg args[2] = { { &c, &bar, a0, a1, 0, 0 }, { &c, &bar, a1, a0, 1, 0 } };
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, pair_thread, &args[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	unsigned long problems = lb_slub_check(&c, 0, stdout);
	tap_ok(problems == 0 && !args[0].failures && !args[1].failures,
	       "allocator, cpu_partial %u: two threads freeing each other's objects (single and "
	       "bulk): invariants hold (%lu problems)", cpu_partial, problems);
	pthread_barrier_destroy(&bar);
	lb_slub_cache_destroy(&c);
}

/* One thread: the lockless cpu partial path really serves frees and refills. */
static void test_cpu_partial_lockless(const struct lb_lock_ops *lock)
{
	struct lb_slub_cache c;
	struct lb_slub_cpu cpu;
	struct lb_slub_tuning tune = lb_slub_tuning_default();
	tune.min_objects = 30;
	tune.cpu_partial = 512;
	lb_slub_cache_init_tuned(&c, lock, 256, POOL, &tune);
	lb_slub_cpu_init(&c, &cpu, 0);
	void *objs[250];
	for (int r = 0; r < 50; r++) {
		size_t got = lb_slub_alloc_bulk(&cpu, 250, objs);
		for (size_t i = 0; i < got; i++)
			lb_slub_free(&cpu, objs[i]);
	}
	uint64_t locks_before = cpu.lock_acquires;
	for (int r = 0; r < 50; r++) {
		size_t got = lb_slub_alloc_bulk(&cpu, 250, objs);
		lb_slub_free_bulk(&cpu, got, objs);
	}
	uint64_t locks = cpu.lock_acquires - locks_before;
	tap_ok(cpu.partial_frees > 0 && cpu.partial_refills > 0 && locks == 0,
	       "cpu partial 512: a 250-object working set cycles without list_lock once warm "
	       "(%llu lockless frees, %llu refills, %llu lock acquisitions)",
	       (unsigned long long)cpu.partial_frees, (unsigned long long)cpu.partial_refills,
	       (unsigned long long)locks);
	lb_slub_cpu_fini(&cpu);
	lb_slub_cpu_release(&cpu);
	tap_ok(lb_slub_check(&c, 0, stdout) == 0, "cpu partial 512: invariants after the flush");
	lb_slub_cache_destroy(&c);
}

int main(int argc, char **argv)
{
	bool broken = argc > 1 && !strcmp(argv[1], "--broken");
	const struct lb_lock_ops *lock = lb_lock_find("tas");
	struct sigaction sa = { 0 };
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(TEST_SIGNAL, &sa, NULL);
	struct torture x;

	if (broken) {
		if (UNDER_TSAN)
			tap_skip_all("ThreadSanitizer defers signals out of the fast path");
		tap_plan(1);
		/* Up to 3 windows: the race is certain to show within them. */
		long found = 0;
		for (int attempt = 0; attempt < 3 && found <= 0; attempt++)
			found = torture_one(LB_PROT_NONE, lock, 300 * 1000000ull, true, &x);
		tap_ok(found > 0, "no protection while the handler allocates from the same stock: "
		       "caught (%ld lost/doubled objects or invariant problems; %llu signals inside "
		       "the fast path)", found, (unsigned long long)x.inside_fast_path);
		return tap_failed ? 1 : 0;
	}
	tap_plan(LB_PROT_COUNT - 1 + 3 + 1 + 2 + 3 + 2);
	for (int p = 0; p < LB_PROT_COUNT; p++) {
		if (p == LB_PROT_NONE)
			continue; /* the broken mode: --broken */
		const char *why = lb_prot_unsupported((enum lb_prot)p, lock);
		if (UNDER_TSAN)
			why = "ThreadSanitizer defers signals out of the fast path";
		if (why) {
			tap_ok(true, "# SKIP %s: %s", lb_prot_name((enum lb_prot)p), why);
			continue;
		}
		long problems = torture_one((enum lb_prot)p, lock, 250 * 1000000ull, false, &x);
		char what[256];
		snprintf(what, sizeof(what),
			 "%s: a handler allocating from the same stock while the task is in its "
			 "fast path (%llu times): no object lost or doubled, invariants hold",
			 lb_prot_name((enum lb_prot)p), (unsigned long long)x.inside_fast_path);
		tap_ok(problems == 0 && x.inside_fast_path > 0, "%s", what);
	}
	test_two_threads(LB_PROT_RSEQ, lock);
	test_two_threads(LB_PROT_CAS, lock);
	test_two_threads(LB_PROT_LOCK, lock);
	test_pop_window(lock);
	test_forced_abort(lock);
	test_cpu_partial(lock, 0);
	test_cpu_partial(lock, 64);
	test_cpu_partial(lock, 1024);
	test_cpu_partial_lockless(lock);
	return tap_failed ? 1 : 0;
}
