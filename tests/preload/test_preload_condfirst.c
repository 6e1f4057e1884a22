/* SPDX-License-Identifier: MIT */
/*
 * test_preload_condfirst.c - the first waits on a fresh condition variable,
 * by several threads at the same instant, under liblockbench-preload.so
 * (issue 39 item 4).
 *
 * A wait on a mutex the preload took over sleeps on a futex word in a side
 * table keyed by the pthread_cond_t's address (preload/preload_cond.c); the
 * first wait creates the entry.  Two first waits at once race to create it,
 * and both must end on the same entry: a waiter on a second entry for the
 * same cond sleeps where no signal looks.
 *
 * Each round, WAITERS threads meet at a barrier and then wait at once on
 * the round's fresh (zeroed) cond, each under a mutex of its own: the cond
 * binds no mutex in glibc (since 2.25) and the preload keys the entry by
 * the cond alone, so this is the case in which the first waits do race
 * (POSIX leaves concurrent waits with different mutexes undefined; with
 * one mutex the waits are serialised by it and cannot race).  Once every
 * waiter is inside its wait (it set `ready` under its mutex, which the
 * main thread then locked), the main thread sets each waiter's flag under
 * that waiter's mutex and broadcasts once.  A waiter whose timed wait then
 * runs out (LOST_S seconds) with its flag set was not woken: a lost
 * wake-up, and the test fails.  PRELOAD_CONDFIRST_ROUNDS sets the rounds
 * (PRELOAD_CONDFIRST_SECONDS, if set, ends the rounds after that long);
 * PRELOAD_CONDFIRST_EXPECT_LOST=1 inverts the verdict, for the broken copy
 * (tests/harden/mkbroken.py cond-first-use-dup), which must lose one.
 */
#include "tap.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WAITERS 3
#define LOST_S 2 /* a woken waiter returns in microseconds; 2 s means not woken */

static long rounds = 5000;
static pthread_cond_t *conds;
static pthread_mutex_t mutexes[WAITERS];
static int flag[WAITERS]; /* under mutexes[i] */
/* Set under mutexes[i] right before the wait; read by main without it. */
static struct { _Alignas(64) _Atomic bool on; } ready[WAITERS];
/* Waiters at the round's start line; the round main let them start. */
static _Atomic long arrived, go, released;
static _Atomic long lost, bad_rc;
static _Atomic bool stopped; /* main ran out of time (PRELOAD_CONDFIRST_SECONDS) */
static _Atomic int64_t broadcast_ns; /* CLOCK_REALTIME when the round's broadcast returned */

static int64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void wait_until(_Atomic long *v, long target)
{
	unsigned int spins = 0;
	/* Spin loop: wait for the other threads' increments (acquire pairs
	 * with their acq_rel adds); yield now and then so that a preempted
	 * thread (more threads than CPUs) gets to run. */
	while (atomic_load_explicit(v, memory_order_acquire) < target &&
	       !atomic_load_explicit(&lost, memory_order_relaxed) &&
	       !atomic_load_explicit(&stopped, memory_order_relaxed))
		if (++spins % 256 == 0)
			sched_yield();
}

static void *waiter(void *arg)
{
	int i = (int)(intptr_t)arg;
	for (long r = 0; r < rounds; r++) {
		int64_t deadline = realtime_ns() + (int64_t)LOST_S * 1000000000;
		struct timespec ts = { deadline / 1000000000, deadline % 1000000000 };
		/* Start line: all waiters arrive, then main's one store starts
		 * them, so that they reach the cond's first use together. */
		atomic_fetch_add_explicit(&arrived, 1, memory_order_acq_rel);
		wait_until(&go, r + 1);
		if (atomic_load_explicit(&lost, memory_order_relaxed) ||
		    atomic_load_explicit(&stopped, memory_order_relaxed))
			break;
		pthread_mutex_lock(&mutexes[i]);
		atomic_store_explicit(&ready[i].on, true, memory_order_relaxed);
		while (!flag[i]) {
			int rc = pthread_cond_timedwait(&conds[r], &mutexes[i], &ts);
			/* Lost: the broadcast returned before our deadline (so its
			 * wake came first) and we still timed out.  Acquire pairs
			 * with the main thread's release store of the time. */
			int64_t bc = atomic_load_explicit(&broadcast_ns, memory_order_acquire);
			if (rc == ETIMEDOUT && flag[i] && bc && bc < deadline) {
				atomic_fetch_add_explicit(&lost, 1, memory_order_relaxed);
				break;
			}
			if (rc && rc != ETIMEDOUT) {
				atomic_fetch_add_explicit(&bad_rc, 1, memory_order_relaxed);
				break;
			}
			if (rc == ETIMEDOUT) { /* main is slow: wait again */
				deadline = realtime_ns() + (int64_t)LOST_S * 1000000000;
				ts = (struct timespec){ deadline / 1000000000, deadline % 1000000000 };
			}
		}
		atomic_store_explicit(&ready[i].on, false, memory_order_relaxed);
		flag[i] = 0;
		pthread_mutex_unlock(&mutexes[i]);
		/* The main thread starts the next round once all are out. */
		atomic_fetch_add_explicit(&released, 1, memory_order_acq_rel);
		if (atomic_load_explicit(&lost, memory_order_relaxed))
			break;
	}
	return NULL;
}

int main(void)
{
	const char *env = getenv("PRELOAD_CONDFIRST_ROUNDS");
	if (env && atol(env) > 0)
		rounds = atol(env);
	env = getenv("PRELOAD_CONDFIRST_EXPECT_LOST");
	bool expect_lost = env && !strcmp(env, "1");
	conds = calloc((size_t)rounds, sizeof(*conds)); /* zeroed: PTHREAD_COND_INITIALIZER */
	if (!conds) {
		tap_ok(false, "memory for %ld conds", rounds);
		return tap_done();
	}
	for (int i = 0; i < WAITERS; i++)
		pthread_mutex_init(&mutexes[i], NULL);
	pthread_t t[WAITERS];
	for (int i = 0; i < WAITERS; i++)
		pthread_create(&t[i], NULL, waiter, (void *)(intptr_t)i);
	/* PRELOAD_CONDFIRST_SECONDS: stop after this long too (the broken
	 * copy's run: on a loaded machine the three waiters seldom race, and
	 * its rounds go on until the first loss or this). */
	env = getenv("PRELOAD_CONDFIRST_SECONDS");
	double limit_s = env && atof(env) > 0 ? atof(env) : 0;
	double t0 = (double)realtime_ns() / 1e9;
	long r;
	for (r = 0; r < rounds && !atomic_load(&lost); r++) {
		if (limit_s > 0 && (r & 1023) == 0 && (double)realtime_ns() / 1e9 - t0 > limit_s) {
			/* Between rounds: every waiter is at the start line. */
			atomic_store_explicit(&stopped, true, memory_order_relaxed);
			break;
		}
		wait_until(&arrived, (r + 1) * WAITERS);
		/* Release: pairs with the waiters' acquire loads of go. */
		atomic_store_explicit(&go, r + 1, memory_order_release);
		/* Every waiter inside its wait: ready set under its mutex, which
		 * a waiter releases only inside pthread_cond_timedwait.  Not a
		 * lock of a waiter's mutex before all have set it: a waiter made
		 * to sleep on its mutex would reach the cond after the others. */
		for (int i = 0; i < WAITERS; i++) {
			unsigned int spins = 0;
			/* Spin loop: wait for waiter i's store (relaxed: the lock
			 * below is what orders its wait before our flag). */
			while (!atomic_load_explicit(&ready[i].on, memory_order_relaxed))
				if (++spins % 256 == 0)
					sched_yield();
			for (;;) {
				pthread_mutex_lock(&mutexes[i]);
				if (atomic_load_explicit(&ready[i].on, memory_order_relaxed))
					break;
				pthread_mutex_unlock(&mutexes[i]);
				sched_yield();
			}
			flag[i] = 1;
			pthread_mutex_unlock(&mutexes[i]);
		}
		pthread_cond_broadcast(&conds[r]);
		/* Release: pairs with a timed-out waiter's acquire load. */
		atomic_store_explicit(&broadcast_ns, realtime_ns(), memory_order_release);
		wait_until(&released, (r + 1) * WAITERS);
		/* Every waiter is out: the next round starts with no broadcast. */
		atomic_store_explicit(&broadcast_ns, 0, memory_order_relaxed);
	}
	for (int i = 0; i < WAITERS; i++)
		pthread_join(t[i], NULL);
	tap_diag("%ld rounds of %d first waits at once", r, WAITERS);
	tap_ok(atomic_load(&bad_rc) == 0, "every wait returned 0 or ETIMEDOUT");
	if (expect_lost)
		tap_ok(atomic_load(&lost) > 0,
		       "the broken copy loses a waiter of a fresh cond (%ld lost wake-up(s), round %ld "
		       "of %ld)", atomic_load(&lost), r - 1, rounds);
	else
		tap_ok(atomic_load(&lost) == 0,
		       "no waiter of a fresh cond missed the broadcast (%ld lost wake-up(s), "
		       "round %ld)", atomic_load(&lost), r - 1);
	return tap_done();
}
