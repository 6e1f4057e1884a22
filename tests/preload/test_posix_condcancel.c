/* SPDX-License-Identifier: MIT */
/*
 * test_posix_condcancel.c - a waiter cancelled in pthread_cond_wait must not
 * consume a signal another waiter needed (POSIX, pthread_cond_wait: "a
 * thread that has been unblocked because it has been canceled ... shall not
 * consume any condition signal that may be directed concurrently at the
 * condition variable if there are other threads blocked on it").
 *
 * Each round: waiters A then B block on C (A first, so a FIFO wake picks
 * it); the main thread, holding M, makes one unit of work available,
 * signals C once and cancels A, then releases M.  A leaves through its
 * cleanup handler (which must run with M held: it unlocks M); B must wake
 * and take the work within ROUND_TIMEOUT_MS.  Rounds: POSIX_CONDCANCEL_ROUNDS
 * (default 200).
 */
#include "tap.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define ROUND_TIMEOUT_MS 2000

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int work;         /* M */
static int blocked;      /* waiters inside the wait loop; M */
static int cleanup_held; /* cleanup handlers that found M held by them; M */
static _Atomic int took;

static void unlock_cleanup(void *arg)
{
	(void)arg;
	/* POSIX: the mutex is re-acquired before the cleanup handlers run.
	 * trylock by the owner of a default mutex is undefined, so just count
	 * and unlock (a wrong unlock shows up as a crash or hang later). */
	cleanup_held++;
	blocked--;
	pthread_mutex_unlock(&m);
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	pthread_cleanup_push(unlock_cleanup, NULL);
	blocked++;
	while (!work)
		pthread_cond_wait(&c, &m);
	work--;
	blocked--;
	atomic_store(&took, 1);
	pthread_cleanup_pop(0);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void wait_blocked(int n)
{
	/* Poll until n waiters are inside the loop, then give the last one
	 * time to reach its futex wait (it released M inside cond_wait). */
	for (;;) {
		pthread_mutex_lock(&m);
		int b = blocked;
		pthread_mutex_unlock(&m);
		if (b >= n)
			break;
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
	struct timespec ts = { 0, 2000000 };
	nanosleep(&ts, NULL);
}

static int join_within(pthread_t t, long ms)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += ms / 1000;
	dl.tv_nsec += (ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	return pthread_timedjoin_np(t, NULL, &dl);
}

int main(void)
{
	int rounds = 200;
	const char *s = getenv("POSIX_CONDCANCEL_ROUNDS");
	if (s && atoi(s) > 0)
		rounds = atoi(s);
	tap_plan(2);
	int lost = 0, cancelled_ok = 0;
	for (int r = 0; r < rounds && !lost; r++) {
		pthread_t a, b;
		atomic_store(&took, 0);
		pthread_create(&a, NULL, waiter, NULL);
		wait_blocked(1);
		pthread_create(&b, NULL, waiter, NULL);
		wait_blocked(2);
		pthread_mutex_lock(&m);
		work = 1;
		pthread_cond_signal(&c);
		pthread_cancel(a);
		pthread_mutex_unlock(&m);
		void *res;
		pthread_join(a, &res);
		if (res == PTHREAD_CANCELED) {
			cancelled_ok++;
			/* A was cancelled: B must take the work. */
			if (join_within(b, ROUND_TIMEOUT_MS) != 0) {
				lost++;
				tap_diag("round %d: the signal was consumed by the cancelled waiter",
					 r);
				pthread_mutex_lock(&m);
				work++;
				pthread_cond_broadcast(&c);
				pthread_mutex_unlock(&m);
				pthread_join(b, NULL);
			}
		} else {
			/* A took the work before the cancel acted: B still waits. */
			pthread_mutex_lock(&m);
			work++;
			pthread_cond_signal(&c);
			pthread_mutex_unlock(&m);
			pthread_join(b, NULL);
		}
		pthread_mutex_lock(&m);
		work = 0;
		pthread_mutex_unlock(&m);
	}
	tap_ok(lost == 0, "no signal lost to a cancelled waiter (%d cancelled in wait)",
	       cancelled_ok);
	pthread_mutex_lock(&m);
	int ch = cleanup_held, bl = blocked;
	pthread_mutex_unlock(&m);
	tap_ok(ch == cancelled_ok && bl == 0,
	       "cleanup handlers ran with the mutex held (%d of %d)", ch, cancelled_ok);
	return tap_failed ? 1 : 0;
}
