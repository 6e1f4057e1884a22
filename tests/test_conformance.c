/* SPDX-License-Identifier: MIT */
/*
 * test_conformance.c - every registered lock, through the vtable only:
 *
 *   1. exact count: T threads x N lock/increment/unlock; the total must be
 *      exactly T*N (a lost update means two holders overlapped);
 *   2. held flag: a holder counter bumped with fetch_add right after lock;
 *      seeing another holder is an exclusion failure, detected
 *      deterministically;
 *   3. trylock (TRYLOCK locks): fails while another thread holds the lock,
 *      succeeds once it is free;
 *   3b. trylock racing lock (TRYLOCK locks): half the threads acquire by
 *      trylock-and-retry, half by lock(), on one lock; the count must be
 *      exact and no holders may overlap (a racy trylock passes 3 but not
 *      this);
 *   3c. trylock racing lock at the hand-off (TRYLOCK locks): pollers spin
 *      on trylock while lock() callers take the lock, hold it a random
 *      while and pause a random while after unlock, so that a poller's
 *      look at the freed word and its claim straddle a lock() caller's
 *      exchange: a trylock that claims a free lock with a plain store
 *      (two steps) lets both in (tests/harden: tas-trylock-store, which
 *      3 and 3b pass);
 *   4. reader/writer (RW locks): writers exclude readers and each other,
 *      readers see no writer, two readers may hold the lock together, and
 *      read_trylock fails while a writer holds it.
 *
 * usage: test-conformance --lock NAME [--threads T] [--iters N]
 *        test-conformance --expect-locks a,b,c   (registry coverage check)
 * `busted` must fail this test (registered with should_fail).
 */
#include "lb_atomic.h"
#include "lb_cli.h"
#include "lb_registry.h"
#include "tap.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct shared {
	const struct lb_lock_ops *ops;
	void *lock;
	unsigned int iters, nthreads;
	bool yield_in_cs; /* sleeping locks only: a spinning waiter behind a
			   * yielding holder would just burn its time slice */
	_Atomic unsigned int next_index;
	_Alignas(LB_CACHELINE) _Atomic uint64_t counter; /* plain-style RMW under the lock */
	_Alignas(LB_CACHELINE) _Atomic int holders;      /* writers (or exclusive holders) inside */
	_Alignas(LB_CACHELINE) _Atomic int readers;      /* readers inside */
	_Alignas(LB_CACHELINE) _Atomic uint64_t violations;
	_Atomic unsigned int arrived;                     /* start line: all threads go together */
};

/* Each test thread gets its own context and a unique dense index. */
static void *ctx_for_thread(struct shared *s)
{
	void *tctx = lb_thread_ctx_alloc(s->ops);
	unsigned int index = atomic_fetch_add_explicit(&s->next_index, 1, memory_order_relaxed);
	if (s->ops->thread_init && s->ops->thread_init(tctx, index) != 0) {
		fprintf(stderr, "thread_init failed\n");
		abort();
	}
	return tctx;
}

static void release_ctx(struct shared *s, void *tctx)
{
	if (s->ops->thread_fini)
		s->ops->thread_fini(tctx);
	/* Contexts are freed by the caller only after every thread is done. */
}

static void writer_section(struct shared *s)
{
	if (atomic_fetch_add_explicit(&s->holders, 1, memory_order_relaxed) != 0 ||
	    (!(s->ops->flags & LB_LOCK_F_RCU) &&
	     atomic_load_explicit(&s->readers, memory_order_relaxed) != 0))
		atomic_fetch_add_explicit(&s->violations, 1, memory_order_relaxed);
	/* Non-atomic-style increment: load then store, so overlap loses updates. */
	uint64_t v = atomic_load_explicit(&s->counter, memory_order_relaxed);
	/* Widen the load-to-store window so an overlap really loses updates. */
	for (int i = 0; i < 8; i++)
		lb_cpu_relax();
	if (s->yield_in_cs && (v & 7) == 0)
		sched_yield(); /* holder preemption now and then */
	atomic_store_explicit(&s->counter, v + 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&s->holders, 1, memory_order_relaxed);
}

static void reader_section(struct shared *s)
{
	atomic_fetch_add_explicit(&s->readers, 1, memory_order_relaxed);
	/* RCU readers run alongside writers by design: nothing to check. */
	if (!(s->ops->flags & LB_LOCK_F_RCU) &&
	    atomic_load_explicit(&s->holders, memory_order_relaxed) != 0)
		atomic_fetch_add_explicit(&s->violations, 1, memory_order_relaxed);
	(void)atomic_load_explicit(&s->counter, memory_order_relaxed);
	atomic_fetch_sub_explicit(&s->readers, 1, memory_order_relaxed);
}

struct worker_arg {
	struct shared *s;
	bool mixed;   /* RW lock: every third op is a read */
	bool by_try;  /* acquire with trylock-and-retry instead of lock() */
	bool race;    /* 3c: pollers never yield; lockers hold and pause at random */
	uint64_t rng; /* 3c: xorshift state */
	void *tctx;
};

/* 3c: a few lb_cpu_relax() calls, log-uniform in 0..2^max_log2 - 1 (short
 * ones as often as long ones: a poller's look and claim are a cache-line
 * transfer apart, and the exchange must land in between). */
static void random_relax(struct worker_arg *a, unsigned int max_log2)
{
	a->rng ^= a->rng << 13;
	a->rng ^= a->rng >> 7;
	a->rng ^= a->rng << 17;
	unsigned int bits = (unsigned int)(a->rng % (max_log2 + 1));
	for (uint64_t i = (a->rng >> 8) & ((UINT64_C(1) << bits) - 1); i > 0; i--)
		lb_cpu_relax(); /* a delay only: nothing is waited for */
}

/* 3c: poll trylock; give the CPU away only rarely (a preempted holder). */
static void poll_until_locked(struct shared *s, void *tctx)
{
	for (unsigned int n = 1; !s->ops->trylock(s->lock, tctx); n++) {
		/* Spin-wait hint: the poller must look again at once when it frees. */
		if (n % 4096 == 0)
			sched_yield();
		else
			lb_cpu_relax();
	}
}

/* trylock until it succeeds; the holder may be preempted, so yield now and then. */
static void try_until_locked(struct shared *s, void *tctx)
{
	for (unsigned int n = 1; !s->ops->trylock(s->lock, tctx); n++) {
		/* Spin-wait hint between attempts; every 16th, give the CPU away. */
		if (n % 16 == 0)
			sched_yield();
		else
			lb_cpu_relax();
	}
}

static void *count_worker(void *p)
{
	struct worker_arg *a = p;
	struct shared *s = a->s;
	a->tctx = ctx_for_thread(s);
	/* Start together, or the first thread may finish before the last one
	 * exists and a broken lock would never be caught overlapping. */
	atomic_fetch_add_explicit(&s->arrived, 1, memory_order_relaxed);
	while (atomic_load_explicit(&s->arrived, memory_order_relaxed) < s->nthreads)
		sched_yield();
	for (unsigned int i = 0; i < s->iters; i++) {
		if (a->mixed && i % 3 == 0) {
			s->ops->read_lock(s->lock, a->tctx);
			reader_section(s);
			s->ops->read_unlock(s->lock, a->tctx);
		}
		if (a->by_try && a->race)
			poll_until_locked(s, a->tctx);
		else if (a->by_try)
			try_until_locked(s, a->tctx);
		else
			s->ops->lock(s->lock, a->tctx);
		writer_section(s);
		if (a->race && !a->by_try)
			random_relax(a, 6); /* still inside: a late claim overlaps */
		s->ops->unlock(s->lock, a->tctx);
		if (a->race && !a->by_try)
			random_relax(a, 7); /* the pollers see it free meanwhile */
	}
	release_ctx(s, a->tctx);
	return NULL;
}

static void *alloc_lock(const struct lb_lock_ops *ops)
{
	void *lock = lb_lock_alloc(ops);
	if (!lock || ops->init(lock) != 0) {
		fprintf(stderr, "cannot create lock %s\n", ops->name);
		exit(1);
	}
	return lock;
}

static void free_lock(const struct lb_lock_ops *ops, void *lock)
{
	if (ops->destroy)
		ops->destroy(lock);
	lb_lock_free(lock);
}

enum count_mode { COUNT_LOCK, COUNT_MIXED_RW, COUNT_TRY_VS_LOCK, COUNT_TRY_RACE };

static void check_counting(const struct lb_lock_ops *ops, unsigned int nthreads, unsigned int iters,
			   enum count_mode mode)
{
	bool mixed = mode == COUNT_MIXED_RW;
	struct shared *s = aligned_alloc(LB_CACHELINE, sizeof(*s));
	memset(s, 0, sizeof(*s));
	s->ops = ops;
	s->lock = alloc_lock(ops);
	s->iters = iters;
	s->nthreads = nthreads;
	s->yield_in_cs = ops->flags & LB_LOCK_F_SLEEPS;
	pthread_t tid[64];
	struct worker_arg args[64];
	for (unsigned int i = 0; i < nthreads; i++) {
		bool try_mode = mode == COUNT_TRY_VS_LOCK || mode == COUNT_TRY_RACE;
		args[i] = (struct worker_arg){ .s = s, .mixed = mixed,
					       .by_try = try_mode && i % 2 == 0,
					       .race = mode == COUNT_TRY_RACE,
					       .rng = 0x9e3779b97f4a7c15ull * (i + 1) };
		pthread_create(&tid[i], NULL, count_worker, &args[i]);
	}
	for (unsigned int i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	uint64_t expect = (uint64_t)nthreads * iters;
	uint64_t got = atomic_load_explicit(&s->counter, memory_order_relaxed);
	tap_ok(got == expect, "%s: %u threads x %u %s: count %llu, expected %llu", ops->name,
	       nthreads, iters,
	       mixed ? "mixed read/write ops"
	       : mode == COUNT_TRY_VS_LOCK ? "increments, half by trylock racing lock()"
	       : mode == COUNT_TRY_RACE    ? "increments, half by trylock polling at the hand-off"
				   : "increments",
	       (unsigned long long)got, (unsigned long long)expect);
	uint64_t v = atomic_load_explicit(&s->violations, memory_order_relaxed);
	tap_ok(v == 0, "%s: no overlapping holders (%llu overlaps seen)", ops->name,
	       (unsigned long long)v);
	for (unsigned int i = 0; i < nthreads; i++)
		lb_thread_ctx_free(args[i].tctx);
	free_lock(ops, s->lock);
	free(s);
}

/* A helper thread that runs one try operation while main holds the lock. */
struct try_arg {
	struct shared *s;
	bool read_side;
	bool result;
};

static void *try_once(void *p)
{
	struct try_arg *a = p;
	void *tctx = ctx_for_thread(a->s);
	if (a->read_side) {
		a->result = a->s->ops->read_trylock(a->s->lock, tctx);
		if (a->result)
			a->s->ops->read_unlock(a->s->lock, tctx);
	} else {
		a->result = a->s->ops->trylock(a->s->lock, tctx);
		if (a->result)
			a->s->ops->unlock(a->s->lock, tctx);
	}
	release_ctx(a->s, tctx);
	lb_thread_ctx_free(tctx);
	return NULL;
}

static bool try_from_other_thread(struct shared *s, bool read_side)
{
	struct try_arg a = { .s = s, .read_side = read_side };
	pthread_t t;
	pthread_create(&t, NULL, try_once, &a);
	pthread_join(t, NULL);
	return a.result;
}

static void check_trylock(const struct lb_lock_ops *ops)
{
	struct shared *s = aligned_alloc(LB_CACHELINE, sizeof(*s));
	memset(s, 0, sizeof(*s));
	s->ops = ops;
	s->lock = alloc_lock(ops);
	void *tctx = ctx_for_thread(s);

	tap_ok(ops->trylock(s->lock, tctx), "%s: trylock on a free lock succeeds", ops->name);
	tap_ok(!try_from_other_thread(s, false), "%s: trylock fails while another thread holds it",
	       ops->name);
	bool rcu = ops->flags & LB_LOCK_F_RCU;
	if (ops->read_trylock)
		tap_ok(rcu ? try_from_other_thread(s, true) : !try_from_other_thread(s, true),
		       "%s: read_trylock %s while a writer holds it", ops->name,
		       rcu ? "still succeeds (RCU readers never wait)" : "fails");
	ops->unlock(s->lock, tctx);
	tap_ok(try_from_other_thread(s, false), "%s: trylock succeeds again after unlock",
	       ops->name);
	ops->lock(s->lock, tctx);
	tap_ok(!try_from_other_thread(s, false), "%s: trylock fails while held via lock()",
	       ops->name);
	ops->unlock(s->lock, tctx);
	if (ops->read_trylock) {
		ops->read_lock(s->lock, tctx);
		tap_ok(try_from_other_thread(s, true),
		       "%s: a second reader gets in with read_trylock", ops->name);
		if (!rcu)
			tap_ok(!try_from_other_thread(s, false),
			       "%s: trylock (write) fails while a reader holds it", ops->name);
		ops->read_unlock(s->lock, tctx);
	}
	release_ctx(s, tctx);
	lb_thread_ctx_free(tctx);
	free_lock(ops, s->lock);
	free(s);
}

/* Two readers inside together: reader B must get in while A holds the lock. */
struct reader_arg {
	struct shared *s;
	_Atomic int got_in;
};

static void *second_reader(void *p)
{
	struct reader_arg *a = p;
	void *tctx = ctx_for_thread(a->s);
	a->s->ops->read_lock(a->s->lock, tctx);
	atomic_store_explicit(&a->got_in, 1, memory_order_release);
	a->s->ops->read_unlock(a->s->lock, tctx);
	release_ctx(a->s, tctx);
	lb_thread_ctx_free(tctx);
	return NULL;
}

static void check_shared_readers(const struct lb_lock_ops *ops)
{
	struct shared *s = aligned_alloc(LB_CACHELINE, sizeof(*s));
	memset(s, 0, sizeof(*s));
	s->ops = ops;
	s->lock = alloc_lock(ops);
	void *tctx = ctx_for_thread(s);
	struct reader_arg a = { .s = s };
	pthread_t t;

	ops->read_lock(s->lock, tctx);
	pthread_create(&t, NULL, second_reader, &a);
	/* Poll up to 2 s: a reader-excluding lock would keep B out for good. */
	bool in = false;
	for (int i = 0; i < 2000 && !in; i++) {
		in = atomic_load_explicit(&a.got_in, memory_order_acquire);
		if (!in)
			usleep(1000);
	}
	tap_ok(in, "%s: a second reader enters while the first holds the read side", ops->name);
	ops->read_unlock(s->lock, tctx);
	pthread_join(t, NULL);
	release_ctx(s, tctx);
	lb_thread_ctx_free(tctx);
	free_lock(ops, s->lock);
	free(s);
}

/* Every describe() line fits the LB_DESCRIBE_MAX bytes workloads keep for
 * it: a longer one would be cut short in every report. */
static void check_describe_fits(const struct lb_lock_ops *ops)
{
	if (!ops->describe || ops->unsupported)
		return;
	void *lock = lb_lock_alloc(ops);
	if (!lock || ops->init(lock) != 0) {
		tap_ok(false, "%s: allocated and initialised for describe()", ops->name);
		lb_lock_free(lock);
		return;
	}
	char line[4 * LB_DESCRIBE_MAX];
	ops->describe(lock, line, sizeof(line));
	tap_ok(strlen(line) < LB_DESCRIBE_MAX, "%s: describe() line of %zu bytes fits LB_DESCRIBE_MAX (%d)",
	       ops->name, strlen(line), LB_DESCRIBE_MAX);
	if (ops->destroy)
		ops->destroy(lock);
	lb_lock_free(lock);
}

static int check_coverage(const char *expected)
{
	char buf[4096], *names[256];
	size_t n;
	if (strlen(expected) >= sizeof(buf) || lb_split_names(strcpy(buf, expected), names, 256, &n))
		return 2;
	for (size_t i = 0; i < lb_lock_count(); i++) {
		const char *name = lb_lock_table()[i]->name;
		bool found = false;
		for (size_t k = 0; k < n; k++)
			found |= strcmp(names[k], name) == 0;
		tap_ok(found, "registered lock '%s' has a conformance test", name);
		check_describe_fits(lb_lock_table()[i]);
	}
	for (size_t k = 0; k < n; k++)
		tap_ok(lb_lock_find(names[k]) != NULL, "tested lock '%s' is registered", names[k]);
	tap_ok(lb_registry_check(stdout) == 0, "registry entries are consistent");
	return tap_done();
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "Bail out! conformance test timed out (deadlock or lost wake-up)\n";
	(void)!write(1, msg, sizeof(msg) - 1);
	_exit(1);
}

#ifdef LB_TEST_BROKEN_LOCKS
#include "broken_copies.h"
#include "broken_locks.h"
#endif

/* The registry; test builds with LB_TEST_BROKEN_LOCKS also see broken copies. */
static const struct lb_lock_ops *find_lock(const char *name)
{
#ifdef LB_TEST_BROKEN_LOCKS
	for (size_t i = 0; lb_test_broken_locks[i]; i++)
		if (!strcmp(lb_test_broken_locks[i]->name, name))
			return lb_test_broken_locks[i];
	if (!strcmp(lb_broken_tas_trylock_store_ops.name, name))
		return &lb_broken_tas_trylock_store_ops;
#endif
	return lb_lock_find(name);
}

int main(int argc, char **argv)
{
	const char *name = NULL;
	unsigned int nthreads = 0, iters = 0;
	lb_cli_set_prog("test-conformance");
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--lock"))
			name = argv[i + 1];
		else if (!strcmp(argv[i], "--threads"))
			lb_parse_uint(argv[i + 1], 1, 64, &nthreads);
		else if (!strcmp(argv[i], "--iters"))
			lb_parse_uint(argv[i + 1], 1, 100000000, &iters);
		else if (!strcmp(argv[i], "--expect-locks"))
			return check_coverage(argv[i + 1]);
	}
	const struct lb_lock_ops *ops = name ? find_lock(name) : NULL;
	if (!ops) {
		printf("Bail out! unknown or missing --lock\n");
		return 1;
	}
	if (ops->unsupported) {
		char reason[256];
		snprintf(reason, sizeof(reason), "%s: %s", ops->name, ops->unsupported);
		tap_skip_all(reason);
	}
	if (ops->flags & LB_LOCK_F_NOLOCK)
		tap_skip_all("lock 'none' promises no exclusion");
#if defined(__SANITIZE_THREAD__)
	if (!strncmp(ops->name, "ck-", 3))
		tap_skip_all("Concurrency Kit's inline-asm atomics are invisible to ThreadSanitizer");
#endif
	/* Spinning locks get one thread per CPU (at least 2): more would only
	 * measure waiter preemption, which can take seconds per hand-over for a
	 * FIFO spinlock.  Sleeping locks get 4 and holders that yield. */
	if (nthreads == 0) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		nthreads = (ops->flags & LB_LOCK_F_SLEEPS) ? 4 : (unsigned int)(ncpu < 2 ? 2 : ncpu > 8 ? 8 : ncpu);
	}
	if (iters == 0) {
		iters = (ops->flags & LB_LOCK_F_SLEEPS) ? 20000 : 100000;
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
		/* The sanitizer builds look for races and memory errors, which
		 * a quarter of the hand-overs still reaches (TSan reports any
		 * two unordered accesses, not only overlapping ones); build/
		 * keeps the full count, whose lost updates are the check for a
		 * broken exclusion.  Under TSan every access costs 5-15x: the
		 * full count was most of scripts/test's conformance time. */
		iters /= 4;
#endif
	}
	signal(SIGALRM, on_alarm);
	alarm(120);
	tap_diag("lock %s (%s), %u threads, %u iterations", ops->name, ops->summary, nthreads, iters);
	check_counting(ops, nthreads, iters, COUNT_LOCK);
	if (ops->flags & LB_LOCK_F_RW) {
		check_counting(ops, nthreads, iters / 2, COUNT_MIXED_RW);
		check_shared_readers(ops);
	}
	if (ops->flags & LB_LOCK_F_TRYLOCK) {
		check_trylock(ops);
		check_counting(ops, nthreads, iters / 4, COUNT_TRY_VS_LOCK);
		/* 3c wants a lock() caller spinning while another releases and a
		 * poller looks: at least 4 threads, for locks whose waiters are
		 * not served in order (a FIFO spinlock's would wait for each
		 * preempted waiter's time slice). */
		unsigned int racers = nthreads;
		if (!(ops->flags & LB_LOCK_F_FAIR) && racers < 4)
			racers = 4;
		check_counting(ops, racers, iters * 2, COUNT_TRY_RACE);
	}
	return tap_done();
}
