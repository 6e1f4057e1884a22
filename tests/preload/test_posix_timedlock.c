/* SPDX-License-Identifier: MIT */
/*
 * test_posix_timedlock.c - pthread_mutex_timedlock and pthread_mutex_clocklock
 * against POSIX, under the preload (and plain glibc, which must pass too).
 *
 *  1-2. They are not cancellation points: a thread with a cancel pending
 *       (deferred cancellation) that calls them on a held mutex gets
 *       ETIMEDOUT back at the deadline; only the pthread_testcancel after
 *       them ends it.
 *  3.   A timed lock waits its turn: while three threads keep the mutex busy
 *       back to back (each re-locks at once after its unlock), a timed lock
 *       with a generous deadline gets the mutex.  A poll with trylock
 *       between sleeps rarely finds a queue lock free, and can time out
 *       across many free windows.
 *  4.   An already passed deadline on a free mutex still locks it (POSIX:
 *       the validity of abstime need not be checked if the lock can be
 *       taken at once); on a held one it is ETIMEDOUT.
 */
#include "tap.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static struct timespec deadline_in(clockid_t clock, long ms)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

struct cancel_arg {
	int use_clocklock;
	_Atomic int returned; /* the timed call came back */
	int rc;
};

static void *timed_with_cancel_pending(void *p)
{
	struct cancel_arg *a = p;
	/* Deferred cancellation (the default): the cancel is already pending
	 * when we call, so any cancellation point inside would act now. */
	pthread_cancel(pthread_self());
	struct timespec dl;
	if (a->use_clocklock) {
		dl = deadline_in(CLOCK_MONOTONIC, 100);
		a->rc = pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &dl);
	} else {
		dl = deadline_in(CLOCK_REALTIME, 100);
		a->rc = pthread_mutex_timedlock(&m, &dl);
	}
	atomic_store(&a->returned, 1);
	pthread_testcancel();
	return NULL;
}

static void check_not_cancellation_point(int use_clocklock)
{
	struct cancel_arg a = { .use_clocklock = use_clocklock };
	pthread_t t;
	pthread_mutex_lock(&m);
	pthread_create(&t, NULL, timed_with_cancel_pending, &a);
	void *res = NULL;
	pthread_join(t, &res);
	pthread_mutex_unlock(&m);
	tap_ok(atomic_load(&a.returned) && a.rc == ETIMEDOUT && res == PTHREAD_CANCELED,
	       "pthread_mutex_%s is not a cancellation point (returned %d, rc %d, cancelled "
	       "after it %d)",
	       use_clocklock ? "clocklock" : "timedlock", atomic_load(&a.returned), a.rc,
	       res == PTHREAD_CANCELED);
}

static _Atomic int stop_busy;

static void *keep_busy(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop_busy, memory_order_relaxed)) {
		pthread_mutex_lock(&m);
		/* Hold for ~50 us of CPU time, then re-lock at once. */
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t1);
		while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 50000);
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

static void check_waits_its_turn(void)
{
	/* POSIX_TIMED_BUSY: how many threads keep it busy (default 3). */
	int nbusy = 3;
	const char *s = getenv("POSIX_TIMED_BUSY");
	if (s && atoi(s) > 0 && atoi(s) <= 16)
		nbusy = atoi(s);
	pthread_t busy[16];
	for (int i = 0; i < nbusy; i++)
		pthread_create(&busy[i], NULL, keep_busy, NULL);
	struct timespec pause = { 0, 20000000 };
	nanosleep(&pause, NULL); /* let them get going */
	int got = 0, tries = 5;
	for (int i = 0; i < tries; i++) {
		struct timespec dl = deadline_in(CLOCK_REALTIME, 2000);
		if (pthread_mutex_timedlock(&m, &dl) == 0) {
			got++;
			pthread_mutex_unlock(&m);
		}
	}
	atomic_store(&stop_busy, 1);
	for (int i = 0; i < nbusy; i++)
		pthread_join(busy[i], NULL);
	/* glibc's own mutex (the reference run, no preload) promises no turn:
	 * an unlocker that re-locks at once can barge past a woken waiter
	 * again and again, and once in a while a 2 s deadline passes (4 of 5
	 * in a clean-clone CI run).  Its miss -- and that of the preloaded
	 * pthread-mutex, which is glibc's mutex behind the vtable -- is a TAP
	 * TODO; the other preloaded locks hand over to a starved waiter or
	 * queue in order and must not miss. */
	const char *lock = getenv("LOCKBENCH_LOCK");
	if (got != tries && (!lock || !*lock || !strcmp(lock, "pthread-mutex"))) {
		tap_count++;
		printf("not ok %d - timed lock gets a busy mutex before a 2 s deadline (%d of %d) "
		       "# TODO glibc's mutex has no hand-over to a starved waiter\n",
		       tap_count, got, tries);
		fflush(stdout);
		return;
	}
	tap_ok(got == tries, "timed lock gets a busy mutex before a 2 s deadline (%d of %d)", got,
	       tries);
}

static void *timed_past(void *arg)
{
	struct timespec past = deadline_in(CLOCK_REALTIME, 0);
	past.tv_sec -= 10;
	*(int *)arg = pthread_mutex_timedlock(&m, &past);
	if (*(int *)arg == 0)
		pthread_mutex_unlock(&m);
	return NULL;
}

static void check_past_deadline(void)
{
	int rc_free = -1, rc_held = -1;
	timed_past(&rc_free);
	pthread_mutex_lock(&m);
	pthread_t t;
	pthread_create(&t, NULL, timed_past, &rc_held);
	pthread_join(t, NULL);
	pthread_mutex_unlock(&m);
	tap_ok(rc_free == 0 && rc_held == ETIMEDOUT,
	       "past deadline: a free mutex is locked (rc %d), a held one times out (rc %d)",
	       rc_free, rc_held);
}

int main(void)
{
	tap_plan(4);
	check_not_cancellation_point(0);
	check_not_cancellation_point(1);
	check_waits_its_turn();
	check_past_deadline();
	return tap_failed ? 1 : 0;
}
