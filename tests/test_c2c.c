/* SPDX-License-Identifier: MIT */
/*
 * test_c2c.c - the cache-line round trip probe (lib/lb_c2c.h): it picks two
 * allowed CPUs, measures a plausible time between them, gives up within its
 * budget when the two threads cannot run at once (both on one CPU) instead
 * of spinning for seconds, does not wait for a partner whose CPU a real-time
 * thread holds (skipped where SCHED_FIFO is not permitted), refuses CPUs it
 * cannot use, and always gives the caller its CPU affinity back.
 */
#include "lb_c2c.h"
#include "lb_cpulist.h"
#include "lb_time.h"
#include "tap.h"
#include "test_sync.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

/* A SCHED_FIFO thread that keeps one CPU busy for a fixed time, so that
 * the probe's partner thread cannot run there. */
struct hog {
	int cpu;
	uint64_t ns;
	atomic_bool running;
};

static void *hog_main(void *arg)
{
	struct hog *h = arg;
	uint64_t until = lb_now_ns() + h->ns;
	atomic_store(&h->running, true);
	/* Spin on the clock: the point is to hold the CPU; bounded by h->ns. */
	while (lb_now_ns() < until)
		;
	return NULL;
}

/* Start a FIFO hog on cpu for ns; false (nothing started) when SCHED_FIFO
 * is not permitted here. */
static bool start_hog(pthread_t *t, struct hog *h)
{
	atomic_init(&h->running, false);
	if (spawn_fifo(t, hog_main, h, 1, h->cpu))
		return false;
	while (!atomic_load(&h->running))
		sched_yield();
	return true;
}

static bool affinity_is(const cpu_set_t *want)
{
	cpu_set_t now;
	return pthread_getaffinity_np(pthread_self(), sizeof(now), &now) == 0 &&
	       CPU_EQUAL(&now, want);
}

int main(void)
{
	cpu_set_t allowed;
	int a, b;
	lb_cpulist_allowed(&allowed);
	if (CPU_COUNT(&allowed) < 2) {
		/* The one thing to check with a single CPU: no pair is made up. */
		tap_plan(1);
		int pair_rc = lb_c2c_default_pair(&a, &b);
		tap_ok(pair_rc == -1 && a == -1 && b == -1,
		       "one allowed CPU: no pair (got %d, %d)", a, b);
		return tap_failed ? 1 : 0;
	}
	tap_plan(10);

	int pair_rc = lb_c2c_default_pair(&a, &b);
	tap_ok(pair_rc == 0 && a >= 0 && b > a && CPU_ISSET(a, &allowed) &&
		       CPU_ISSET(b, &allowed),
	       "default pair: two different allowed CPUs (%d, %d)", a, b);

	/* On a loaded machine (a parallel build beside the tests) the two ends
	 * may not run at once within the budget, and the probe rightly gives
	 * no figure (-1): that is the timeout case checked below, not a wrong
	 * figure, so a few tries with a pause between are allowed here. */
	double ns = -1;
	int tries = 0;
	while (ns < 0 && tries++ < 8) {
		ns = lb_c2c_round_trip_ns(a, b, LB_C2C_ROUNDS, LB_C2C_BUDGET_NS);
		if (ns < 0) {
			struct timespec calm = { 0, 100000000 };
			nanosleep(&calm, NULL);
		}
	}
	/* Anything from an SMT sibling (~20 ns) to a remote socket under a
	 * busy hypervisor; 0 or the budget would mean nothing was measured. */
	tap_ok(ns > 5 && ns < 100000, "CPU%d<->CPU%d round trip %.0f ns is plausible (try %d)", a,
	       b, ns, tries);
	tap_ok(affinity_is(&allowed), "affinity restored after a measurement");

	/* Both ends on one CPU: each round trip needs two context switches,
	 * so 2000 of them take seconds; the probe must stop at its budget. */
	uint64_t t0 = lb_now_ns();
	double same = lb_c2c_round_trip_ns(a, a, LB_C2C_ROUNDS, LB_C2C_BUDGET_NS);
	double took_ms = (double)(lb_now_ns() - t0) / 1e6;
	tap_ok(same < 0, "both ends on CPU%d: no figure (got %.0f)", a, same);
	tap_ok(took_ms < 20 * (double)LB_C2C_BUDGET_NS / 1e6,
	       "both ends on one CPU: gave up after %.1f ms (budget %u ms)", took_ms,
	       LB_C2C_BUDGET_NS / 1000000u);
	tap_ok(affinity_is(&allowed), "affinity restored after a timeout");

	int outside = -1;
	for (int cpu = CPU_SETSIZE - 1; cpu >= 0 && outside < 0; cpu--)
		if (!CPU_ISSET(cpu, &allowed))
			outside = cpu;
	tap_ok(lb_c2c_round_trip_ns(a, outside, 100, LB_C2C_BUDGET_NS) < 0 &&
		       lb_c2c_round_trip_ns(outside, b, 100, LB_C2C_BUDGET_NS) < 0 &&
		       lb_c2c_round_trip_ns(-1, b, 100, LB_C2C_BUDGET_NS) < 0,
	       "a CPU this process may not use (%d) or -1: no figure", outside);
	tap_ok(affinity_is(&allowed), "affinity restored after a refused CPU");

	/* The partner's CPU taken by a real-time thread: the probe gives up at
	 * its budget and must not then wait in pthread_join for a thread that
	 * cannot run until the hog ends (forever, with RT throttling off). */
	pthread_t hog_thread;
	struct hog hog = { .cpu = b, .ns = 400000000 };
	/* Not under ThreadSanitizer: its pthread_create waits until the new
	 * thread runs, which the hog prevents (an artefact of the tool). */
#if defined(__SANITIZE_THREAD__)
	const bool tsan = true;
#else
	const bool tsan = false;
#endif
	if (!tsan && start_hog(&hog_thread, &hog)) {
		t0 = lb_now_ns();
		double hogged = lb_c2c_round_trip_ns(a, b, LB_C2C_ROUNDS, LB_C2C_BUDGET_NS);
		took_ms = (double)(lb_now_ns() - t0) / 1e6;
		pthread_join(hog_thread, NULL);
		tap_ok(hogged < 0, "CPU%d held by a FIFO thread: no figure (got %.0f)", b, hogged);
		tap_ok(took_ms < 300, "CPU%d held for 400 ms: gave up after %.0f ms, not when the "
		       "hog ended", b, took_ms);
		/* The partner left behind runs now, sees the flag and frees the
		 * line; give it the moment it needs before the leak check. */
		struct timespec pause = { 0, 50000000 };
		nanosleep(&pause, NULL);
	} else {
		tap_ok(true, "# SKIP no real-time hog: SCHED_FIFO not permitted, or ThreadSanitizer");
		tap_ok(true, "# SKIP no real-time hog: SCHED_FIFO not permitted, or ThreadSanitizer");
	}
	return tap_failed ? 1 : 0;
}
