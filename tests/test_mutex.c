/* SPDX-License-Identifier: MIT */
/*
 * test_mutex.c - behaviour tests of locks/include/lockbench/mutex.h beyond the conformance
 * suite: exact counts, trylock under contention, bounded starvation through
 * HANDOFF, the tenure quantum, and no lost wake-up under heavy churn (32
 * threads, timed locks, holders yielding inside the critical section).
 *
 * Each check runs on a fixed amount of work and is bounded in time: a
 * watchdog turns a stuck lock into "not ok" plus a dump of the lock state,
 * and alarm() ends the whole program if even that fails.  TAP on stdout.
 */
#include "mutex.h"
#include "tap.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>

/* The verbs of the mutex's generation: the current one's (mutex.h) or the
 * v3.x ones (mutex_v3.h), which share the object and the thread record. */
static inline void tm_lock(lb_mutex_t *m, lb_mutex_ctx_t *t)
{
	if (m->gen == LB_MUTEX_GEN_CURRENT)
		lb_mutex_lock(m, t);
	else
		lb_mutex_v3_lock(m, t);
}

static inline void tm_unlock(lb_mutex_t *m, lb_mutex_ctx_t *t)
{
	if (m->gen == LB_MUTEX_GEN_CURRENT)
		lb_mutex_unlock(m, t);
	else
		lb_mutex_v3_unlock(m, t);
}

static inline bool tm_trylock(lb_mutex_t *m, lb_mutex_ctx_t *t)
{
	return m->gen == LB_MUTEX_GEN_CURRENT ? lb_mutex_trylock(m, t) : lb_mutex_v3_trylock(m, t);
}

static inline int tm_timedlock(lb_mutex_t *m, lb_mutex_ctx_t *t, const struct timespec *abs)
{
	return m->gen == LB_MUTEX_GEN_CURRENT ? lb_mutex_timedlock(m, t, abs)
					      : lb_mutex_v3_timedlock(m, t, abs);
}

#define NS_PER_MS 1000000ull

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static lb_mutex_ctx_t *thread_rec(void)
{
	lb_mutex_ctx_t *t = aligned_alloc(_Alignof(lb_mutex_ctx_t), sizeof(*t));
	if (!t) {
		tap_diag("out of memory");
		exit(1);
	}
	lb_mutex_ctx_init(t);
	return t;
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "Bail out! test_mutex: global time limit hit (a lock is stuck)\n";
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

/* A lock under test plus the checks shared by the workers. */
struct arena {
	lb_mutex_t m;
	_Atomic int in_cs;       /* exclusivity probe */
	_Atomic long overlaps;   /* a holder found another inside */
	long counter;            /* protected by m */
	_Atomic int stop;
};

static void cs_enter(struct arena *a)
{
	if (atomic_exchange_explicit(&a->in_cs, 1, memory_order_relaxed) != 0)
		atomic_fetch_add_explicit(&a->overlaps, 1, memory_order_relaxed);
}

static void cs_exit(struct arena *a)
{
	atomic_store_explicit(&a->in_cs, 0, memory_order_relaxed);
}

static void dump_lock(const char *name, struct arena *a)
{
	uintptr_t w = atomic_load(&a->m.owner);
	tap_diag("%s: owner word %#lx (task %#lx flags%s%s%s%s) waiters %d spinners %d", name,
		 (unsigned long)w, (unsigned long)(w & ~LB_MUTEX_FLAGS),
		 w & LB_MUTEX_WAITERS ? " WAITERS" : "", w & LB_MUTEX_HANDOFF ? " HANDOFF" : "",
		 w & LB_MUTEX_PICKUP ? " PICKUP" : "", w & LB_MUTEX_WOKEN ? " WOKEN" : "",
		 atomic_load(&a->m.nr_waiters), atomic_load(&a->m.spinners));
}

static void report_counters(const char *name, const lb_mutex_t *m)
{
#if LB_MUTEX_COUNTING
	struct lb_mutex_stats s;
	lb_mutex_read_stats(m, &s);
	tap_diag("%s: fast %llu spin_won %llu spin_gaveup %llu sleeps %llu wakes %llu "
		 "handoffs %llu timeouts %llu", name, (unsigned long long)s.fast,
		 (unsigned long long)s.spin_won, (unsigned long long)s.spin_gaveup,
		 (unsigned long long)s.sleeps, (unsigned long long)s.wakes,
		 (unsigned long long)s.handoffs, (unsigned long long)s.timeouts);
#else
	(void)name;
	(void)m;
#endif
}

/* ---- workers ------------------------------------------------------------- */

enum { USE_LOCK, USE_TIMED, USE_TRY };

struct worker {
	pthread_t tid;
	struct arena *a;
	_Atomic int *go;    /* start gate: all workers start together */
	lb_mutex_ctx_t *rec;
	int use;            /* USE_* */
	long ops;           /* acquisitions to make */
	int yield_every;    /* sched_yield() inside the section every N ops (0 = never) */
	unsigned int seed;
	_Atomic long done;  /* progress, read by the watchdog */
	long try_ok, timeouts;
};

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct arena *a = wk->a;
	while (wk->go && !atomic_load_explicit(wk->go, memory_order_acquire))
		usleep(100); /* start gate; acquire pairs with the store releasing it */
	for (long i = 0; i < wk->ops;) {
		if (wk->use == USE_TIMED) {
			struct timespec abs;
			clock_gettime(CLOCK_MONOTONIC, &abs);
			abs.tv_nsec += 20000 + (long)(rand_r(&wk->seed) % 180000);
			if (abs.tv_nsec >= 1000000000) {
				abs.tv_sec++;
				abs.tv_nsec -= 1000000000;
			}
			if (tm_timedlock(&a->m, wk->rec, &abs) == ETIMEDOUT) {
				wk->timeouts++;
				continue;
			}
		} else if (wk->use == USE_TRY) {
			if (tm_trylock(&a->m, wk->rec))
				wk->try_ok++;
			else
				tm_lock(&a->m, wk->rec);
		} else {
			tm_lock(&a->m, wk->rec);
		}
		cs_enter(a);
		a->counter++;
		if (wk->yield_every && i % wk->yield_every == wk->yield_every - 1)
			sched_yield(); /* provoke holder preemption and pile-ups */
		cs_exit(a);
		tm_unlock(&a->m, wk->rec);
		i++;
		atomic_store_explicit(&wk->done, i, memory_order_relaxed);
	}
	return NULL;
}

/*
 * Run the workers to completion under a watchdog: no progress for
 * stall_ms is a stuck lock (a lost wake-up); more than limit_ms in all is
 * reported apart, as too slow (a ThreadSanitizer build beside a parallel
 * build needed more than 20 s for a churn that takes 1 s alone).  Returns true if
 * they all finished; on a stall the workers cannot be joined, so the caller
 * reports and bails out.
 */
static bool run_workers(const char *name, struct worker *wk, int n, uint64_t stall_ms,
			uint64_t limit_ms)
{
	_Atomic int go = 0;
	for (int i = 0; i < n; i++) {
		wk[i].go = &go;
		if (pthread_create(&wk[i].tid, NULL, worker_main, &wk[i]) != 0) {
			tap_diag("%s: pthread_create failed", name);
			exit(1);
		}
	}
	atomic_store_explicit(&go, 1, memory_order_release);
	uint64_t start = now_ns(), last_change = start;
	long last_sum = -1;
	for (;;) {
		long sum = 0, want = 0;
		for (int i = 0; i < n; i++) {
			sum += atomic_load_explicit(&wk[i].done, memory_order_relaxed);
			want += wk[i].ops;
		}
		uint64_t t = now_ns();
		if (sum == want)
			break;
		if (sum != last_sum) {
			last_sum = sum;
			last_change = t;
		}
		bool stalled = t - last_change > stall_ms * NS_PER_MS;
		if (stalled || t - start > limit_ms * NS_PER_MS) {
			if (stalled)
				tap_ok(false, "%s: no lost wake-up (stuck at %ld of %ld ops for %llu ms)",
				       name, sum, want,
				       (unsigned long long)((t - last_change) / NS_PER_MS));
			else
				tap_ok(false, "%s: finished within %llu ms (at %ld of %ld ops, still "
				       "progressing: far too slow, not stuck)", name,
				       (unsigned long long)limit_ms, sum, want);
			dump_lock(name, wk[0].a);
			for (int i = 0; i < n; i++)
				tap_diag("  thread %d: %ld/%ld ops, waiter state %u", i,
					 atomic_load(&wk[i].done), wk[i].ops,
					 atomic_load(&wk[i].rec->waiter.state));
			printf("Bail out! %s: lock stuck, threads cannot be joined\n", name);
			fflush(stdout);
			_exit(1);
		}
		usleep(20000);
	}
	for (int i = 0; i < n; i++)
		pthread_join(wk[i].tid, NULL);
	return true;
}

/* The generation arena_new gives its locks (main sets it per test group). */
static enum lb_mutex_gen arena_gen = LB_MUTEX_GEN_CURRENT;

static struct arena *arena_new(const struct lb_mutex_attr *attr)
{
	struct arena *a = aligned_alloc(_Alignof(struct arena), sizeof(*a));
	if (!a)
		exit(1);
	memset(a, 0, sizeof(*a));
	lb_mutex_init_gen(&a->m, arena_gen, attr);
	return a;
}

/* ---- 1. exact count -------------------------------------------------------- */

static void test_count(const char *name, const struct lb_mutex_attr *attr, int n, long ops)
{
	struct arena *a = arena_new(attr);
	struct worker wk[64];
	memset(wk, 0, sizeof(wk));
	for (int i = 0; i < n; i++)
		wk[i] = (struct worker){ .a = a, .rec = thread_rec(), .use = USE_LOCK, .ops = ops };
	uint64_t t0 = now_ns();
	run_workers(name, wk, n, 5000, 60000);
	tap_ok(a->counter == n * ops && atomic_load(&a->overlaps) == 0,
	       "%s: %d threads x %ld increments = %ld (expected %ld), %ld overlaps, %.0f ms",
	       name, n, ops, a->counter, n * ops, atomic_load(&a->overlaps),
	       (now_ns() - t0) / 1e6);
	report_counters(name, &a->m);
	for (int i = 0; i < n; i++)
		free(wk[i].rec);
	free(a);
}

/* ---- 2. trylock under contention ------------------------------------------- */

struct hammer {
	struct arena *a;
	lb_mutex_ctx_t *rec;
	_Atomic int *held;   /* main's "I hold it" flag */
	long tries, bad;     /* bad: succeeded while held */
};

static void *hammer_main(void *arg)
{
	struct hammer *h = arg;
	while (!atomic_load_explicit(&h->a->stop, memory_order_relaxed)) {
		h->tries++;
		if (tm_trylock(&h->a->m, h->rec)) {
			if (atomic_load_explicit(h->held, memory_order_relaxed))
				h->bad++;
			tm_unlock(&h->a->m, h->rec);
		}
	}
	return NULL;
}

static void test_trylock(const char *name, const struct lb_mutex_attr *attr)
{
	/* a) The main thread holds the lock (with sleeping waiters queued, so
	 * the flags are set too) while 3 threads hammer trylock: exactly 0
	 * successes. */
	struct arena *a = arena_new(attr);
	lb_mutex_ctx_t *me = thread_rec();
	_Atomic int held = 0;
	struct hammer h[3];
	pthread_t tid[3];
	struct worker sleepers[2];

	tm_lock(&a->m, me);
	atomic_store(&held, 1);
	for (int i = 0; i < 2; i++) {
		sleepers[i] = (struct worker){ .a = a, .rec = thread_rec(), .use = USE_LOCK, .ops = 1 };
		pthread_create(&sleepers[i].tid, NULL, worker_main, &sleepers[i]);
	}
	for (int i = 0; i < 3; i++) {
		h[i] = (struct hammer){ .a = a, .rec = thread_rec(), .held = &held };
		pthread_create(&tid[i], NULL, hammer_main, &h[i]);
	}
	usleep(200000);
	uintptr_t word = atomic_load(&a->m.owner);
	atomic_store(&held, 0);
	atomic_store(&a->stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(tid[i], NULL);
	tm_unlock(&a->m, me);
	for (int i = 0; i < 2; i++)
		pthread_join(sleepers[i].tid, NULL);
	long tries = 0, bad = 0;
	for (int i = 0; i < 3; i++) {
		tries += h[i].tries;
		bad += h[i].bad;
		free(h[i].rec);
	}
	tap_ok(bad == 0 && tries > 1000,
	       "%s: trylock never succeeds while held (%ld tries, %ld successes, word flags %#lx)",
	       name, tries, bad, (unsigned long)(word & LB_MUTEX_FLAGS));
	for (int i = 0; i < 2; i++)
		free(sleepers[i].rec);
	free(a);

	/* b) Mixed trylock/lock/timedlock traffic: the count is exact and
	 * nobody overlaps, and trylock does win sometimes. */
	a = arena_new(attr);
	struct worker wk[8];
	memset(wk, 0, sizeof(wk));
	for (int i = 0; i < 8; i++)
		wk[i] = (struct worker){ .a = a, .rec = thread_rec(),
					 .use = i < 4 ? USE_TRY : (i < 6 ? USE_LOCK : USE_TIMED),
					 .ops = 40000, .seed = (unsigned int)i + 1 };
	run_workers(name, wk, 8, 5000, 60000);
	long try_ok = 0;
	for (int i = 0; i < 8; i++)
		try_ok += wk[i].try_ok;
	tap_ok(a->counter == 8 * 40000 && atomic_load(&a->overlaps) == 0 && try_ok > 0,
	       "%s: mixed trylock/lock/timedlock: count %ld (expected %d), %ld overlaps, "
	       "%ld trylock wins", name, a->counter, 8 * 40000, atomic_load(&a->overlaps), try_ok);
	for (int i = 0; i < 8; i++)
		free(wk[i].rec);
	free(me);
	free(a);
}

/* ---- 3. handoff: bounded starvation ----------------------------------------- */

struct handoff_waiter {
	lb_mutex_t *m;
	lb_mutex_ctx_t *rec;
	int cpu;            /* pin to this CPU first (-1: no) */
	_Atomic int got;
	uint64_t t_start, t_got;
};

static void pin_self(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *handoff_waiter_main(void *arg)
{
	struct handoff_waiter *hw = arg;
	if (hw->cpu >= 0)
		pin_self(hw->cpu);
	hw->t_start = now_ns();
	tm_lock(hw->m, hw->rec);
	hw->t_got = now_ns();
	atomic_store_explicit(&hw->got, 1, memory_order_relaxed);
	tm_unlock(hw->m, hw->rec);
	return NULL;
}

/* SCHED_FIFO priorities of deterministic mode: the holder preempts the waiter. */
#define HOLDER_FIFO_PRIO 2
#define WAITER_FIFO_PRIO 1

/* Can the main thread run SCHED_FIFO at the holder's priority?  Probe and restore. */
static bool fifo_permitted(void)
{
	struct sched_param sp = { .sched_priority = HOLDER_FIFO_PRIO }, old;
	int policy;
	pthread_getschedparam(pthread_self(), &policy, &old);
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
		return false;
	pthread_setschedparam(pthread_self(), policy, &old);
	return true;
}

/*
 * A waiter queues up and sleeps; the main thread then re-locks in a loop:
 * unlock, lock again at once (a barging re-acquire), hold, check.  Each hold
 * lasts hold_us and then until the waiter has reacted to the wake-up the
 * unlock gave it (HANDOFF appeared, or it went back to sleep), so every loop
 * is one "lost wake-up" of the waiter whatever the scheduling delays.
 *
 * Deterministic mode (SCHED_FIFO permitted): both threads are pinned to one
 * CPU and run SCHED_FIFO, the main thread one priority ABOVE the waiter, so
 * the waiter can run only while the main thread sleeps -- inside its holds,
 * never between its unlock and its re-lock -- and the main thread takes the
 * CPU back the moment its nap ends, even from a spinning waiter.  Without
 * HANDOFF the barging holder would win every time.  (The waiter must not
 * inherit the main thread's priority: at equal FIFO priority a waiter that
 * spins keeps the CPU for its whole budget, gives up, withdraws its request
 * and sleeps before the main thread can look, so every wake-up is lost until
 * the starvation threshold.)
 *
 * The main thread watches for the reaction in naps that start at 5 us and
 * grow by half while the waiter has not reacted, up to the spin budget: on
 * a VM a context switch plus the timer interrupt can take longer than a
 * 5 us nap, and then the preempted waiter never gets past the switch back
 * to it (it runs, but only in the kernel's switch path).  A nap longer than
 * the spin budget would let a running waiter give up before we look.
 * Otherwise both run SCHED_OTHER anywhere (weaker: a woken waiter may also
 * win in the unlocker's futex-wake window).  Checked:
 *  - the handoff rule: once HANDOFF is in the word, the main thread's next
 *    lock() returns only after the waiter has had the lock;
 *  - the bound: the waiter gets the lock within max_lost lost wake-ups.
 */
static void test_handoff(const char *name, const struct lb_mutex_attr *attr, uint64_t hold_us,
			 int max_lost, bool rt)
{
	lb_mutex_t *m = aligned_alloc(_Alignof(lb_mutex_t), sizeof(*m));
	lb_mutex_ctx_t *me = thread_rec();
	struct handoff_waiter hw = { .m = m, .rec = thread_rec(), .cpu = rt ? 0 : -1 };
	cpu_set_t old_set;
	struct sched_param old_sp, fifo = { .sched_priority = HOLDER_FIFO_PRIO };
	pthread_attr_t wattr;
	int old_policy;
	pthread_t tid;

	lb_mutex_init(m, attr); /* before pinning: it sizes spinning by our CPUs */
	pthread_getaffinity_np(pthread_self(), sizeof(old_set), &old_set);
	pthread_getschedparam(pthread_self(), &old_policy, &old_sp);
	if (rt) {
		pin_self(0);
		pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo);
	}
	pthread_attr_init(&wattr);
	if (rt) {
		/* Below ours, explicitly: pthread_create would inherit ours. */
		struct sched_param wsp = { .sched_priority = WAITER_FIFO_PRIO };
		pthread_attr_setinheritsched(&wattr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&wattr, SCHED_FIFO);
		pthread_attr_setschedparam(&wattr, &wsp);
	}
	tm_lock(m, me);
	int cerr = pthread_create(&tid, &wattr, handoff_waiter_main, &hw);
	pthread_attr_destroy(&wattr);
	if (cerr != 0) {
		tap_diag("%s: pthread_create failed: %s", name, strerror(cerr));
		exit(1);
	}
	uint64_t deadline = now_ns() + 2000 * NS_PER_MS;
	while (!(atomic_load(&m->nr_waiters) == 1 &&
		 atomic_load(&hw.rec->waiter.state) == LB_MUTEX__SLEEPING) &&
	       now_ns() < deadline)
		usleep(100); /* sleeping lets the pinned waiter run */
	bool asleep = atomic_load(&hw.rec->waiter.state) == LB_MUTEX__SLEEPING;

	int lost = 0, violations = 0, handoff_seen_at = 0, slow = 0;
	const int limit = 200;
	bool handoff = false;
	for (;;) {
		/* Release (waking the waiter, or handing over) and barge back. */
		tm_unlock(m, me);
		tm_lock(m, me);
		if (handoff && !atomic_load_explicit(&hw.got, memory_order_relaxed))
			violations++;
		if (atomic_load_explicit(&hw.got, memory_order_relaxed) || lost >= limit)
			break;
		/* The waiter was woken and lost: hold hold_us, and then until
		 * it reacted to that wake-up (asked for the lock or slept). */
		lost++;
		uint64_t t0 = now_ns();
		useconds_t nap = 5, max_nap = m->spin_ns / 1000 ? m->spin_ns / 1000 : 1;
		if (hold_us)
			usleep((useconds_t)hold_us);
		for (;;) {
			handoff = atomic_load(&m->owner) & LB_MUTEX_HANDOFF;
			if (handoff || atomic_load(&hw.rec->waiter.state) == LB_MUTEX__SLEEPING)
				break;
			if (now_ns() - t0 > 200 * NS_PER_MS) {
				slow++; /* it never reacted: count it, go on */
				break;
			}
			usleep(nap); /* lets the waiter run (see above) */
			if (nap < max_nap)
				nap = nap + nap / 2 < max_nap ? nap + nap / 2 : max_nap;
		}
		if (handoff && !handoff_seen_at)
			handoff_seen_at = lost;
	}
	tm_unlock(m, me);
	pthread_join(tid, NULL);
	pthread_setschedparam(pthread_self(), old_policy, &old_sp);
	pthread_setaffinity_np(pthread_self(), sizeof(old_set), &old_set);
	bool got = atomic_load(&hw.got);
	tap_ok(asleep && got && lost <= max_lost && violations == 0 && slow == 0,
	       "%s%s: sleeping waiter gets the lock from a barging holder (hold %llu us): after "
	       "%d lost wake-ups (limit %d), %.2f ms waited, HANDOFF first seen at %d, %d "
	       "re-locks despite HANDOFF, %d holds without a reaction", name,
	       rt ? "" : " (no SCHED_FIFO: weak form)", (unsigned long long)hold_us, lost,
	       max_lost, got ? (hw.t_got - hw.t_start) / 1e6 : -1.0, handoff_seen_at,
	       violations, slow);
	report_counters(name, m);
	free(hw.rec);
	free(me);
	free(m);
}

/* ---- 4. no lost wake-up under churn -------------------------------------------- */

static void test_churn(const char *name, const struct lb_mutex_attr *attr, int n, long ops)
{
	struct arena *a = arena_new(attr);
	struct worker wk[64];
	memset(wk, 0, sizeof(wk));
	for (int i = 0; i < n; i++)
		wk[i] = (struct worker){ .a = a, .rec = thread_rec(),
					 .use = i % 4 == 1 ? USE_TIMED : (i % 8 == 2 ? USE_TRY : USE_LOCK),
					 .ops = ops, .yield_every = 61 + i,
					 .seed = (unsigned int)i * 7919u + 1 };
	uint64_t t0 = now_ns();
	run_workers(name, wk, n, 3000, 60000);
	long timeouts = 0;
	for (int i = 0; i < n; i++)
		timeouts += wk[i].timeouts;
	tap_ok(a->counter == n * ops && atomic_load(&a->overlaps) == 0,
	       "%s: no lost wake-up: %d threads x %ld ops (1/4 timed, yields in the section) "
	       "done in %.0f ms, count %ld, %ld overlaps, %ld timeouts", name, n, ops,
	       (now_ns() - t0) / 1e6, a->counter, atomic_load(&a->overlaps), timeouts);
	report_counters(name, &a->m);
	uintptr_t w = atomic_load(&a->m.owner);
	tap_ok(w == 0 && atomic_load(&a->m.nr_waiters) == 0 && atomic_load(&a->m.spinners) == 0,
	       "%s: quiescent afterwards (word %#lx, no waiters, no spinners)", name,
	       (unsigned long)w);
	for (int i = 0; i < n; i++)
		free(wk[i].rec);
	free(a);
}

/*
 * Tenure quantum, white box: a waiter record that never runs (its thread is
 * this test) sits first in the list of a lock that believes it has one CPU
 * (so one sleeper makes it crowded), with the starvation threshold out of
 * reach (handoff_ns = 4.3 s).  The holder re-takes the lock back to back with
 * trylock.  The rule must pass the lock to that waiter (owner = waiter |
 * PICKUP, so trylock fails) after about LB_MUTEX_TENURE_NS, well within
 * 100 ms; without it the holder keeps the lock for the whole 100 ms.
 * Then the waiter picks the lock up, leaves the list and unlocks.
 * With `alternate`, two holder records take turns (as two spinning threads
 * pass the lock between them): the quantum dates the first waiter's wait,
 * not a holder's tenure, so it must still pass (the rule that dated each
 * holder's tenure started afresh at every change of holder and never did).
 */
static void test_tenure(const char *name, bool nospin, bool alternate)
{
	struct lb_mutex_attr attr = { .ncpus = 1, .handoff_ns = UINT32_MAX, .nospin = nospin };
	struct arena *a = arena_new(&attr);
	lb_mutex_t *m = &a->m;
	lb_mutex_ctx_t *holders[2] = { thread_rec(), thread_rec() }, *waiter = thread_rec();
	lb_mutex_ctx_t *holder = holders[0];

	lb_mutex__wait_lock(m);
	lb_mutex__enqueue(m, &waiter->waiter);
	lb_mutex__wait_unlock(m);

	uint64_t start = now_ns(), passed_at = 0, cpu_start = thread_cpu_ns(), cpu_used = 0;
	long ops = 0;
	while (now_ns() - start < 100 * NS_PER_MS) {
		/* Every third turn the other record: the slow unlocks (every
		 * 256th quiet one, an even count) then fall to both. */
		holder = holders[alternate && ops % 3 == 0];
		if (!tm_trylock(m, holder)) {
			passed_at = now_ns();
			cpu_used = thread_cpu_ns() - cpu_start;
			break;
		}
		ops++;
		tm_unlock(m, holder);
	}
	uintptr_t w = lb_load_relaxed(&m->owner);
	bool to_waiter = lb_mutex__task(w) == waiter && (w & LB_MUTEX_PICKUP);
	if (!tap_ok(passed_at && to_waiter,
		    "%s: the holder passes a crowded lock to the first waiter after its tenure", name))
		tap_diag("after %ld re-acquisitions in %.1f ms: owner word %#lx", ops,
			 (double)(now_ns() - start) / 1e6, (unsigned long)w);
	else
		tap_diag("passed after %.0f us and %ld re-acquisitions (quantum %u us)",
			 (double)(passed_at - start) / 1e3, ops, LB_MUTEX_TENURE_NS / 1000);
	tap_ok(!passed_at || passed_at - start >= LB_MUTEX_TENURE_NS,
	       "%s: not before the quantum (%u us)", name, LB_MUTEX_TENURE_NS / 1000);
	/* In this thread's CPU time, so that being preempted (which under
	 * load can stretch one holder's turn past the quantum by chance)
	 * neither helps nor hurts: the quantum passes in at most its length.
	 * The rule looks only on every LB_MUTEX_TOKEN_CHECK_EVERY-th quiet
	 * unlock (mutex.h: "late by at most that many operations"): where an
	 * operation is slow (ThreadSanitizer: 6 us, so 2 x 256 of them are
	 * 3 ms) the pass is on time if it came within three such checks. */
	bool in_time = cpu_used < 8u * LB_MUTEX_TENURE_NS ||
		       (unsigned long)ops <= 3ul * LB_MUTEX_TOKEN_CHECK_EVERY;
	if (alternate && !tap_ok(passed_at && in_time,
				 "%s: passed within 8 quanta of CPU time or 3 checks (%u unlocks)",
				 name, 3u * LB_MUTEX_TOKEN_CHECK_EVERY))
		tap_diag("CPU time used: %.0f us, %ld re-acquisitions", (double)cpu_used / 1e3, ops);

	/* Clean up as the waiter would: pick up (if handed), leave, unlock. */
	uintptr_t seen;
	bool got = lb_mutex__trylock_common(m, waiter, LB_MUTEX__HAS_TOKEN, &seen);
	if (!got) { /* not handed over: the holder still has it free to take */
		lb_mutex__wait_lock(m);
		lb_mutex__dequeue(m, &waiter->waiter);
		lb_mutex__wait_unlock(m);
	} else {
		lb_mutex__wait_lock(m);
		lb_mutex__dequeue(m, &waiter->waiter);
		lb_mutex__wait_unlock(m);
		tm_unlock(m, waiter);
	}
	tap_ok(lb_load_relaxed(&m->owner) == 0, "%s: lock free and flagless afterwards (%#lx)",
	       name, (unsigned long)lb_load_relaxed(&m->owner));
	free(holders[0]);
	free(holders[1]);
	free(waiter);
	free(a);
}

/*
 * Crowding rule, white box: sleeping waiters must not turn optimistic
 * spinning off; contenders on a CPU (owner, spinners, a spinning woken waiter)
 * beyond the CPUs must.  A lock that believes it has 4 CPUs and allows 8
 * spinners is held by one record; 6 waiter records that never run sit in its
 * wait list (asleep, as far as the lock can tell).  A new contender must be
 * let in to spin (the rule that counted sleepers said 1 + 1 + 6 > 4 and
 * refused).  Then, with spinners already on every CPU beside the owner,
 * one more must be refused; a woken waiter that has not run yet must not
 * count (the rule that counted it refused nearly every spinner on 2 CPUs),
 * and once it spins it counts.
 */
static void test_crowding(const char *name)
{
	struct lb_mutex_attr attr = { .ncpus = 4, .max_spinners = 8, .handoff_ns = UINT32_MAX,
				      .spin_ns = 1000000000u }; /* no deadline hit */
	struct arena *a = arena_new(&attr);
	lb_mutex_t *m = &a->m;
	lb_mutex_thread_t *holder = thread_rec(), *sleeper[6];

	bool held = tm_trylock(m, holder);
	lb_mutex__wait_lock(m);
	for (int i = 0; i < 6; i++) {
		sleeper[i] = thread_rec();
		lb_mutex__enqueue(m, &sleeper[i]->waiter);
		lb_store_relaxed(&sleeper[i]->waiter.state, LB_MUTEX__SLEEPING);
	}
	lb_mutex__wait_unlock(m);

	bool entered = lb_mutex__spin_enter(m, false);
	if (entered)
		lb_mutex__spin_exit(m);
	tap_ok(held && entered, "%s: 6 sleeping waiters on 4 CPUs do not stop a spinner", name);

	/* Owner + 2 spinners + the newcomer = 4 CPUs: still room. */
	lb_store_relaxed(&m->spinners, 2);
	entered = lb_mutex__spin_enter(m, false);
	if (entered)
		lb_mutex__spin_exit(m);
	tap_ok(entered, "%s: owner + 3 spinners on 4 CPUs may spin", name);

	/* Owner + 3 spinners busy: a 5th runnable contender is refused. */
	lb_store_relaxed(&m->spinners, 3);
	entered = lb_mutex__spin_enter(m, false);
	if (entered)
		lb_mutex__spin_exit(m);
	tap_ok(!entered && lb_load_relaxed(&m->spinners) == 3,
	       "%s: contenders on a CPU beyond the CPUs stop a new spinner", name);

	/* Owner + 2 spinners + the newcomer = 4, and a woken waiter (WOKEN,
	 * its token out) that has not run yet: it is in a run queue, not on a
	 * CPU, so it does not stop the spinner (the rule that counted it said
	 * 1 + 3 + 1 > 4 and refused). */
	lb_store_relaxed(&m->spinners, 2);
	atomic_fetch_or_explicit(&m->owner, LB_MUTEX_WOKEN, memory_order_relaxed);
	entered = lb_mutex__spin_enter(m, false);
	if (entered)
		lb_mutex__spin_exit(m);
	tap_ok(entered, "%s: a woken waiter not yet running does not stop a spinner", name);
	/* The same in the middle of a spin: the budget check goes on. */
	struct lb_mutex__budget b;
	lb_store_relaxed(&m->spinners, 3); /* the spinner itself is one of them */
	lb_mutex__budget_start(&b, m, false);
	bool goes_on = true;
	for (int i = 0; i < 16; i++) /* past the 8th poll, where the check runs */
		goes_on = goes_on && lb_mutex__budget_spend(&b, 0);
	tap_ok(goes_on, "%s: a woken waiter not yet running does not end a spin", name);
	/* Once that waiter runs it spins (counted in `spinners`): now owner +
	 * 4 spinners > 4 CPUs, so the OSQ spinner stops and the waiter
	 * (exempt, a handoff needs it running) goes on. */
	lb_store_relaxed(&m->spinners, 4);
	lb_mutex__budget_start(&b, m, false);
	goes_on = true;
	for (int i = 0; i < 16; i++)
		goes_on = goes_on && lb_mutex__budget_spend(&b, 0);
	struct lb_mutex__budget bw;
	lb_mutex__budget_start(&bw, m, true);
	bool waiter_goes_on = true;
	for (int i = 0; i < 16; i++)
		waiter_goes_on = waiter_goes_on && lb_mutex__budget_spend(&bw, 0);
	tap_ok(!goes_on && waiter_goes_on,
	       "%s: the woken waiter spinning ends the OSQ spin, not its own", name);
	atomic_fetch_and_explicit(&m->owner, ~LB_MUTEX_WOKEN, memory_order_relaxed);
	lb_store_relaxed(&m->spinners, 0);

	/* The tenure rule still sees the sleepers: 1 + 6 waiters > 4 CPUs. */
	tap_ok(lb_mutex__waiters_outnumber_cpus(m),
	       "%s: the tenure trigger still counts sleeping waiters", name);

	lb_mutex__wait_lock(m);
	for (int i = 0; i < 6; i++) {
		lb_mutex__dequeue(m, &sleeper[i]->waiter);
		free(sleeper[i]);
	}
	lb_mutex__wait_unlock(m);
	tm_unlock(m, holder);
	tap_ok(lb_load_relaxed(&m->owner) == 0, "%s: lock free and flagless afterwards", name);
	free(holder);
	free(a);
}

static const char *only; /* argv[1]: run only the tests whose name starts so */

static bool selected(const char *name)
{
	return !only || strncmp(name, only, strlen(only)) == 0;
}

int main(int argc, char **argv)
{
	only = argc > 1 ? argv[1] : NULL;
	signal(SIGALRM, on_alarm);
	alarm(100);
	setvbuf(stdout, NULL, _IOLBF, 0);

	const struct lb_mutex_attr spin = { .max_spinners = -1 };
	const struct lb_mutex_attr nospin = { .nospin = true, .max_spinners = -1 };
	const struct lb_mutex_attr kernel = { .handoff_ns = 1, .max_spinners = -1 };
	const struct lb_mutex_attr kernelnospin = { .nospin = true, .handoff_ns = 1,
						    .max_spinners = -1 };
	const struct lb_mutex_attr shortspin = { .spin_ns = 2000, .handoff_ns = 1,
						 .max_spinners = -1 };
	const struct lb_mutex_attr manyspin = { .ncpus = 64, .max_spinners = 12, .spin_ns = 3000 };

	tap_diag("mutex.h: spin budget %u ns, handoff threshold %u ns, counters %s",
		 LB_MUTEX_SPIN_NS, LB_MUTEX_HANDOFF_NS, LB_MUTEX_COUNTING ? "on" : "off");

	if (selected("count/spin"))
		test_count("count/spin", &spin, 8, 100000);
	if (selected("count/nospin"))
		test_count("count/nospin", &nospin, 8, 100000);
	if (selected("count/spin-32"))
		test_count("count/spin-32", &spin, 32, 20000);
	/* Pretend many CPUs: up to 12 spinners on 2 CPUs queue on the OSQ and
	 * give up from the middle of it (unqueue steps A-C). */
	if (selected("count/osq"))
		test_count("count/osq", &manyspin, 8, 50000);

	if (selected("trylock/spin"))
		test_trylock("trylock/spin", &spin);
	if (selected("trylock/nospin"))
		test_trylock("trylock/nospin", &nospin);

	/* Handoff.  Holds are naps of the holder; the starvation threshold
	 * (1 ms) spans about threshold / (hold + timer slack) of them. */
	bool rt = fifo_permitted();
	int past_threshold = (int)(LB_MUTEX_HANDOFF_NS / 1000 / 250) + 3;
	prctl(PR_SET_TIMERSLACK, 1000ul, 0, 0, 0);
	/* Short holds: the woken waiter spins, asks for the handoff and gets
	 * it at the very next unlock (1; up to 3 if it is preempted while
	 * spinning on a busy machine and gives up). */
	if (selected("handoff/spin-short"))
		test_handoff("handoff/spin-short", &spin, 0, 3, rt);
	/* Holds longer than the spin budget: the waiter gives up, withdraws its
	 * request and sleeps, until it has waited past the threshold; then the
	 * request stands and the next unlock hands over. */
	if (selected("handoff/spin-long"))
		test_handoff("handoff/spin-long", &spin, 200, past_threshold, rt);
	if (selected("handoff/nospin"))
		test_handoff("handoff/nospin", &nospin, 200, past_threshold, rt);
	/* The kernel's rule: the first lost race after a wake-up suffices. */
	if (selected("handoff/kernel-rule"))
		test_handoff("handoff/kernel-rule", &kernel, 200, 1, rt);
	if (selected("handoff/kernel-rule-nospin"))
		test_handoff("handoff/kernel-rule-nospin", &kernelnospin, 200, 1, rt);

	if (selected("tenure/spin"))
		test_tenure("tenure/spin", false, false);
	if (selected("tenure/nospin"))
		test_tenure("tenure/nospin", true, false);
	if (selected("tenure/alternate"))
		test_tenure("tenure/alternate", false, true);

	if (selected("crowding"))
		test_crowding("crowding");

	if (selected("churn/spin"))
		test_churn("churn/spin", &spin, 32, 20000);
	if (selected("churn/nospin"))
		test_churn("churn/nospin", &nospin, 32, 20000);
	if (selected("churn/kernel-rule"))
		test_churn("churn/kernel-rule", &shortspin, 32, 20000);
	if (selected("churn/osq"))
		test_churn("churn/osq", &manyspin, 16, 20000);

	/* The kernel generations: exact counts, trylock, and churn with timed
	 * locks (a lost wake-up or a stranded waiter stalls the watchdog). */
	static const struct {
		const char *tag;
		enum lb_mutex_gen gen;
	} gens[] = { { "v3.14", LB_MUTEX_GEN_V3_14 }, { "v3.15", LB_MUTEX_GEN_V3_15 } };
	for (size_t g = 0; g < sizeof(gens) / sizeof(gens[0]); g++) {
		char name[64];
		arena_gen = gens[g].gen;
		snprintf(name, sizeof(name), "%s/count", gens[g].tag);
		if (selected(name))
			test_count(name, &spin, 8, 50000);
		snprintf(name, sizeof(name), "%s/count-osq", gens[g].tag);
		if (selected(name))
			test_count(name, &manyspin, 8, 30000);
		snprintf(name, sizeof(name), "%s/trylock", gens[g].tag);
		if (selected(name))
			test_trylock(name, &spin);
		snprintf(name, sizeof(name), "%s/churn", gens[g].tag);
		if (selected(name))
			test_churn(name, &shortspin, 32, 10000);
	}
	arena_gen = LB_MUTEX_GEN_CURRENT;

	return tap_done();
}
