/* SPDX-License-Identifier: MIT */
/*
 * test_preload.c - a multithreaded program run under liblockbench-preload.so
 * (LD_PRELOAD, lock from LOCKBENCH_LOCK): every check is a property the
 * program would have with glibc's own mutexes.
 *
 *  - threads started by a library constructor before the preload's own
 *    (preload_early.c) keep an exact counter;
 *  - a PTHREAD_MUTEX_INITIALIZER mutex first locked by several threads at
 *    once guards a read-pause-write counter: the total must be exact
 *    (busted loses updates here: the expected failure);
 *  - producer/consumer over a bounded queue with two condvars (one with a
 *    CLOCK_MONOTONIC attribute, timed waits): the consumed checksum equals
 *    the produced one, and no wait hangs;
 *  - recursive and error-checking mutexes keep glibc's semantics;
 *  - trylock/timedlock/cond_timedwait time-outs; destroy and re-init;
 *  - fork: the child uses the locks (and a thread) and exits cleanly.
 * A watchdog fails the run (rather than hanging) after 60 s, or after
 * PRELOAD_TEST_WATCHDOG_S seconds: busted, whose first lost update is
 * already the expected failure, need not hang for a minute after it.
 */
#include "tap.h"
#include "preload_early.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern int lb_preload_state(const char **lock_name) __attribute__((weak));

#define WORKERS 4
/* Per-worker iterations; PRELOAD_TEST_ITERS lowers it for FIFO spinlocks,
 * which hand over at time-slice speed when waiters outnumber CPUs. */
static long ITERS = 20000;

/* A pause inside critical sections: a lock that does not exclude (busted)
 * lets another thread in between the read and the write. */
static void cs_pause(void)
{
	for (volatile int k = 0; k < 1000; k++)
		;
}

static pthread_mutex_t static_lock = PTHREAD_MUTEX_INITIALIZER;
static long static_counter;
static _Atomic int go;

static void *counter_worker(void *arg)
{
	(void)arg;
	/* Spin until released: all workers meet the untouched mutex at once. */
	while (!atomic_load_explicit(&go, memory_order_acquire))
		;
	for (int i = 0; i < ITERS; i++) {
		pthread_mutex_lock(&static_lock);
		long v = static_counter;
		cs_pause();
		static_counter = v + 1;
		pthread_mutex_unlock(&static_lock);
	}
	return NULL;
}

static void test_static_counter(void)
{
	pthread_t t[WORKERS];
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, counter_worker, NULL);
	atomic_store_explicit(&go, 1, memory_order_release);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	tap_ok(static_counter == (long)WORKERS * ITERS,
	       "static mutex, first used by %d threads at once: counter %ld == %ld", WORKERS,
	       static_counter, (long)WORKERS * ITERS);
}

/* ---- producer/consumer ---------------------------------------------------- */

#define QCAP 8
#define PRODUCERS 2
#define CONSUMERS 2
static unsigned int ITEMS = 20000;

static struct {
	pthread_mutex_t lock;
	pthread_cond_t not_full;   /* static initialiser, CLOCK_REALTIME */
	pthread_cond_t not_empty;  /* pthread_cond_init with CLOCK_MONOTONIC */
	uint64_t q[QCAP];
	unsigned int head, count, producers_left;
	uint64_t consumed_sum, consumed_n;
	unsigned int timeouts; /* a lost wake-up shows as a 5 s time-out */
} pc = { .lock = PTHREAD_MUTEX_INITIALIZER, .not_full = PTHREAD_COND_INITIALIZER };

static uint64_t item_value(unsigned int producer, unsigned int i)
{
	uint64_t x = ((uint64_t)producer << 32 | i) * 0x9e3779b97f4a7c15ull;
	return x ^ (x >> 29);
}

static void *producer(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	for (unsigned int i = 0; i < ITEMS; i++) {
		pthread_mutex_lock(&pc.lock);
		while (pc.count == QCAP)
			pthread_cond_wait(&pc.not_full, &pc.lock);
		unsigned int n = pc.count;
		cs_pause();
		pc.q[(pc.head + n) % QCAP] = item_value(id, i);
		pc.count = n + 1;
		pthread_cond_signal(&pc.not_empty);
		pthread_mutex_unlock(&pc.lock);
	}
	pthread_mutex_lock(&pc.lock);
	if (--pc.producers_left == 0)
		pthread_cond_broadcast(&pc.not_empty);
	pthread_mutex_unlock(&pc.lock);
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pc.lock);
	for (;;) {
		while (pc.count == 0 && pc.producers_left) {
			struct timespec dl;
			clock_gettime(CLOCK_MONOTONIC, &dl);
			dl.tv_sec += 5; /* timed wait on the monotonic cond */
			if (pthread_cond_timedwait(&pc.not_empty, &pc.lock, &dl) == ETIMEDOUT)
				pc.timeouts++;
		}
		if (pc.count == 0)
			break;
		unsigned int h = pc.head;
		uint64_t item = pc.q[h];
		cs_pause();
		pc.consumed_sum += item;
		pc.consumed_n++;
		pc.head = (h + 1) % QCAP;
		pc.count--;
		pthread_cond_signal(&pc.not_full);
	}
	pthread_mutex_unlock(&pc.lock);
	return NULL;
}

static void test_producer_consumer(void)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&pc.not_empty, &ca);
	pthread_condattr_destroy(&ca);
	pc.producers_left = PRODUCERS;
	uint64_t want = 0;
	for (unsigned int p = 0; p < PRODUCERS; p++)
		for (unsigned int i = 0; i < ITEMS; i++)
			want += item_value(p, i);
	pthread_t prod[PRODUCERS], cons[CONSUMERS];
	for (unsigned int i = 0; i < CONSUMERS; i++)
		pthread_create(&cons[i], NULL, consumer, NULL);
	for (unsigned int i = 0; i < PRODUCERS; i++)
		pthread_create(&prod[i], NULL, producer, (void *)(uintptr_t)i);
	for (unsigned int i = 0; i < PRODUCERS; i++)
		pthread_join(prod[i], NULL);
	for (unsigned int i = 0; i < CONSUMERS; i++)
		pthread_join(cons[i], NULL);
	tap_ok(pc.consumed_n == (uint64_t)PRODUCERS * ITEMS && pc.consumed_sum == want,
	       "producer/consumer: %llu items, checksum %016llx (want %016llx)",
	       (unsigned long long)pc.consumed_n, (unsigned long long)pc.consumed_sum,
	       (unsigned long long)want);
	tap_ok(pc.timeouts == 0, "no consumer waited out its 5 s time-out (no lost wake-up): %u",
	       pc.timeouts);
}

/* ---- glibc types left to glibc -------------------------------------------- */

static pthread_mutex_t errchk_holder_lock;
static void *unlock_other(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)pthread_mutex_unlock(&errchk_holder_lock);
}

static void test_types(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t rec, stat_rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec, &a);
	int r1 = pthread_mutex_lock(&rec), r2 = pthread_mutex_lock(&rec),
	    r3 = pthread_mutex_trylock(&rec);
	int u = pthread_mutex_unlock(&rec) | pthread_mutex_unlock(&rec) | pthread_mutex_unlock(&rec);
	int extra = pthread_mutex_unlock(&rec);
	tap_ok(!r1 && !r2 && !r3 && !u && extra == EPERM,
	       "recursive mutex: lock x3, unlock x3, 4th unlock EPERM (%d %d %d %d %d)", r1, r2,
	       r3, u, extra);
	pthread_mutex_destroy(&rec);
	r1 = pthread_mutex_lock(&stat_rec);
	r2 = pthread_mutex_lock(&stat_rec);
	u = pthread_mutex_unlock(&stat_rec) | pthread_mutex_unlock(&stat_rec);
	tap_ok(!r1 && !r2 && !u, "PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP nests");

	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&errchk_holder_lock, &a);
	r1 = pthread_mutex_lock(&errchk_holder_lock);
	r2 = pthread_mutex_lock(&errchk_holder_lock);
	pthread_t t;
	void *other;
	pthread_create(&t, NULL, unlock_other, NULL);
	pthread_join(t, &other);
	u = pthread_mutex_unlock(&errchk_holder_lock);
	tap_ok(!r1 && r2 == EDEADLK && (intptr_t)other == EPERM && !u,
	       "error-checking mutex: relock EDEADLK, foreign unlock EPERM (%d %d %ld %d)", r1,
	       r2, (long)(intptr_t)other, u);
	pthread_mutex_destroy(&errchk_holder_lock);
	pthread_mutexattr_destroy(&a);
}

/* A cond waited on with a glibc-owned (error-checking) mutex: our signal
 * must reach glibc's waiter. */
static struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	int ready;
	int waiting; /* set under m just before the waiter's cond_wait */
} gw = { .c = PTHREAD_COND_INITIALIZER };

static void *glibc_waiter(void *arg)
{
	(void)arg;
	int seen = 0;
	pthread_mutex_lock(&gw.m);
	while (!gw.ready) {
		gw.waiting = 1;
		pthread_cond_wait(&gw.c, &gw.m);
	}
	seen = gw.ready;
	pthread_mutex_unlock(&gw.m);
	return (void *)(intptr_t)seen;
}

static void test_other_kinds(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t robust, pi, shared;
	int bad = 0;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	bad |= pthread_mutex_init(&robust, &a);
	pthread_mutexattr_destroy(&a);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	bad |= pthread_mutex_init(&pi, &a);
	pthread_mutexattr_destroy(&a);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	bad |= pthread_mutex_init(&shared, &a);
	pthread_mutexattr_destroy(&a);
	pthread_mutex_t *all[] = { &robust, &pi, &shared };
	for (int i = 0; i < 3; i++) {
		bad |= pthread_mutex_lock(all[i]) | pthread_mutex_unlock(all[i]);
		bad |= pthread_mutex_trylock(all[i]) | pthread_mutex_unlock(all[i]);
		bad |= pthread_mutex_destroy(all[i]);
	}
	tap_ok(!bad, "robust, PI and process-shared mutexes work (left to glibc)");

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&gw.m, &a);
	pthread_mutexattr_destroy(&a);
	pthread_t t;
	void *seen;
	pthread_create(&t, NULL, glibc_waiter, NULL);
	/* Until the waiter is inside glibc's cond_wait: it sets `waiting` with
	 * the mutex held and cond_wait releases that mutex atomically with
	 * starting to wait, so once we hold the mutex and see the flag it
	 * waits (a fixed nap lost that race on a loaded machine, and the
	 * stats test then found no cond wait left to glibc). */
	struct timespec nap = { 0, 1000 * 1000 };
	for (;;) {
		pthread_mutex_lock(&gw.m);
		if (gw.waiting)
			break; /* still holding gw.m */
		pthread_mutex_unlock(&gw.m);
		nanosleep(&nap, NULL);
	}
	gw.ready = 7;
	pthread_cond_signal(&gw.c);
	pthread_mutex_unlock(&gw.m);
	pthread_join(t, &seen);
	tap_ok((intptr_t)seen == 7, "cond wait on a glibc-owned mutex is woken by signal");
	pthread_mutex_destroy(&gw.m);
}

/* Cancelled inside pthread_cond_wait: the cleanup handler runs with the
 * mutex held (it unlocks it), and the mutex is free afterwards. */
static pthread_mutex_t cancel_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cancel_cond = PTHREAD_COND_INITIALIZER;
static _Atomic int cancel_waiting, cancel_cleanup_held;

static void cancel_cleanup(void *arg)
{
	(void)arg;
	/* Held by us: a trylock from this thread must fail (EBUSY). */
	atomic_store(&cancel_cleanup_held, pthread_mutex_trylock(&cancel_lock) == EBUSY);
	pthread_mutex_unlock(&cancel_lock);
}

static void *cancel_victim(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cancel_lock);
	pthread_cleanup_push(cancel_cleanup, NULL);
	atomic_store(&cancel_waiting, 1);
	for (;;)
		pthread_cond_wait(&cancel_cond, &cancel_lock);
	pthread_cleanup_pop(1);
	return NULL;
}

static void test_cancel(void)
{
	pthread_t t;
	void *ret = NULL;
	pthread_create(&t, NULL, cancel_victim, NULL);
	while (!atomic_load(&cancel_waiting)) {
		struct timespec nap = { 0, 1000 * 1000 };
		nanosleep(&nap, NULL); /* until it waits */
	}
	pthread_mutex_lock(&cancel_lock); /* it is inside the wait now */
	pthread_mutex_unlock(&cancel_lock);
	pthread_cancel(t);
	pthread_join(t, &ret);
	int free_after = pthread_mutex_trylock(&cancel_lock) == 0;
	if (free_after)
		pthread_mutex_unlock(&cancel_lock);
	tap_ok(ret == PTHREAD_CANCELED && atomic_load(&cancel_cleanup_held) && free_after,
	       "cancelled in cond_wait: cleanup ran with the mutex held, mutex free after");
}

/* ---- time-outs, destroy, re-init ------------------------------------------ */

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static void *try_held(void *arg)
{
	(void)arg;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_nsec += 20 * 1000 * 1000;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	int a = pthread_mutex_trylock(&held);
	int b = pthread_mutex_timedlock(&held, &dl);
	return (void *)(intptr_t)(a == EBUSY && b == ETIMEDOUT);
}

static void test_timeouts(void)
{
	pthread_mutex_lock(&held);
	pthread_t t;
	void *ok;
	pthread_create(&t, NULL, try_held, NULL);
	pthread_join(t, &ok);
	tap_ok(ok != NULL, "held mutex: trylock EBUSY, timedlock ETIMEDOUT from another thread");
	tap_ok(pthread_mutex_destroy(&held) == EBUSY, "destroy of a held mutex: EBUSY");
	pthread_mutex_unlock(&held);

	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_nsec += 10 * 1000 * 1000;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&held);
	int r = pthread_cond_timedwait(&c, &held, &dl);
	pthread_create(&t, NULL, try_held, NULL); /* we hold it again */
	pthread_join(t, &ok);
	pthread_mutex_unlock(&held);
	tap_ok(r == ETIMEDOUT && ok != NULL,
	       "cond_timedwait times out (%d) and returns with the mutex held", r);

	int bad = 0;
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_t *m = malloc(sizeof(*m));
		bad |= pthread_mutex_init(m, NULL) | pthread_mutex_lock(m) |
		       pthread_mutex_unlock(m) | pthread_mutex_destroy(m);
		bad |= pthread_mutex_init(m, NULL) | pthread_mutex_trylock(m) |
		       pthread_mutex_unlock(m) | pthread_mutex_destroy(m);
		free(m);
	}
	tap_ok(!bad, "1000 x init/lock/unlock/destroy/re-init on heap mutexes");
}

/* ---- fork ----------------------------------------------------------------- */

static void *child_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&static_lock);
		static_counter++;
		pthread_mutex_unlock(&static_lock);
	}
	return NULL;
}

static void test_fork(void)
{
	/* Fork while other threads hammer the same lock. */
	pthread_t busy[2];
	static_counter = 0;
	atomic_store(&go, 1);
	for (int i = 0; i < 2; i++)
		pthread_create(&busy[i], NULL, counter_worker, NULL);
	pid_t pid = fork();
	if (pid == 0) {
		/* The workers do not exist here; the lock may have been
		 * held by one of them at fork time, as with glibc: use a
		 * fresh mutex and a fresh thread. */
		pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		static_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
		static_counter = 0;
		pthread_t t[2];
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, child_thread, NULL);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		_exit(static_counter == 2000 ? 0 : 3);
	}
	int st = -1;
	waitpid(pid, &st, 0);
	for (int i = 0; i < 2; i++)
		pthread_join(busy[i], NULL);
	tap_ok(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "fork during contention: the child locks, runs threads, exits 0 (status %d)", st);
	tap_ok(static_counter == 2L * ITERS, "parent counter after fork: %ld == %ld",
	       static_counter, 2L * ITERS);
}

static unsigned int watchdog_s = 60;

static void *watchdog(void *arg)
{
	(void)arg;
	sleep(watchdog_s);
	printf("not ok - watchdog: the test hung for %u s\n", watchdog_s);
	fflush(stdout);
	_exit(1);
}

int main(void)
{
	pthread_t wd;
	const char *iters = getenv("PRELOAD_TEST_ITERS");
	if (iters && atol(iters) > 0) {
		ITERS = atol(iters);
		ITEMS = (unsigned int)ITERS;
	}
	const char *wd_s = getenv("PRELOAD_TEST_WATCHDOG_S");
	if (wd_s && atoi(wd_s) > 0)
		watchdog_s = (unsigned int)atoi(wd_s);
	pthread_create(&wd, NULL, watchdog, NULL);
	pthread_detach(wd);

	/* A plugin path in LOCKBENCH_LOCK: the lock's own name is given apart. */
	const char *want = getenv("PRELOAD_TEST_LOCK_NAME"), *name = NULL;
	if (!want)
		want = getenv("LOCKBENCH_LOCK");
	int state = lb_preload_state ? lb_preload_state(&name) : -1;
	if (state < 0)
		tap_skip_exit77("liblockbench-preload.so is not preloaded");
	tap_ok(name && want && !strcmp(name, want), "preloaded, lock %s", name ? name : "?");

	struct early_result er;
	early_finish(&er);
	tap_ok(er.threads == EARLY_THREADS && er.counter == er.done_by_threads && er.counter > 0,
	       "threads from a constructor run before ours: counter %ld == %ld", er.counter,
	       er.done_by_threads);
	if (er.state_at_start >= 0 && !(er.state_at_start & 2))
		tap_diag("that constructor ran before the preload's (state %d)", er.state_at_start);
	else
		tap_diag("note: the preload's constructor ran first (state %d)", er.state_at_start);

	test_static_counter();
	test_producer_consumer();
	test_types();
	test_other_kinds();
	test_cancel();
	test_timeouts();
	test_fork();
	return tap_done();
}
