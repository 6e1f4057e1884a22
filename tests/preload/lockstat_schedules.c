/* SPDX-License-Identifier: MIT */
/*
 * lockstat_schedules.c - scripted lock schedules on one static mutex, run
 * under the preload by test_preload_points.py (no pthread synchronisation of
 * its own besides `lockme`, so the statistics count exactly the schedule).
 *
 *   points  main takes lockme twice; H takes it in hold_site() and sleeps
 *           200 ms holding it; W, started once H holds it, blocks in
 *           wait_site(); then main takes it once more.  Expected: 5
 *           acquisitions, 1 contended (slept: the holder is off CPU),
 *           3 owner changes (main->H->W->main), contention point
 *           wait_site, contending point hold_site.
 *   spin    H takes lockme in hold_site() and busy-holds it on the CPU
 *           until W has started and 50 ms more; W blocks in wait_site().  Under a spinning lock the wait
 *           is resolved by spinning (no voluntary context switch).
 *   chain   H holds lockme 800 ms, W blocks on it; main raises SIGUSR1
 *           200 ms in (LOCKBENCH_STATS_DUMP=USR1 prints the wait chain).
 *   rt      main makes itself SCHED_FIFO (priority 1) and takes lockme
 *           once; prints "rt-unavailable" when the policy is refused.
 *   loop N  main takes lockme N times (the delay knob's test).
 * Prints "H <tid>" and "W <tid>" on stdout.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

pthread_mutex_t lockme = PTHREAD_MUTEX_INITIALIZER;
void hold_site(void);
void wait_site(void);
static _Atomic int held;  /* H holds lockme */
static _Atomic int w_started; /* W is about to lock (spin mode's hold waits for it) */
static long hold_ms = 200;
static int busy;          /* H spins instead of sleeping */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts))
		;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void hold_site(void)
{
	pthread_mutex_lock(&lockme);
	atomic_store_explicit(&held, 1, memory_order_release); /* W may start */
	if (busy) {
		/* Busy hold on purpose: a holder on the CPU, so waiters spin.
		 * Until W has started and hold_ms more, so that W surely finds
		 * the lock taken however late a loaded machine runs it (acquire
		 * pairs with W's release store). */
		while (!atomic_load_explicit(&w_started, memory_order_acquire))
			;
		double until = now_ms() + (double)hold_ms;
		while (now_ms() < until)
			;
	} else {
		/* Hold from W's start on, however late it runs. */
		while (!atomic_load_explicit(&w_started, memory_order_acquire))
			sleep_ms(1);
		sleep_ms(hold_ms);
	}
	pthread_mutex_unlock(&lockme);
}

__attribute__((noinline)) void wait_site(void)
{
	pthread_mutex_lock(&lockme);
	pthread_mutex_unlock(&lockme);
}

static void *holder(void *arg)
{
	(void)arg;
	printf("H %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	hold_site();
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	printf("W %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	atomic_store_explicit(&w_started, 1, memory_order_release);
	wait_site();
	return NULL;
}

static void run_pair(int raise_after_ms)
{
	pthread_t h, w;
	pthread_create(&h, NULL, holder, NULL);
	/* Acquire pairs with H's release store: it holds lockme now. */
	while (!atomic_load_explicit(&held, memory_order_acquire))
		sleep_ms(1);
	pthread_create(&w, NULL, waiter, NULL);
	if (raise_after_ms) {
		sleep_ms(raise_after_ms);
		raise(SIGUSR1);
	}
	pthread_join(h, NULL);
	pthread_join(w, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "points";
	if (!strcmp(mode, "points")) {
		for (int i = 0; i < 2; i++) {
			pthread_mutex_lock(&lockme);
			pthread_mutex_unlock(&lockme);
		}
		run_pair(0);
		pthread_mutex_lock(&lockme);
		pthread_mutex_unlock(&lockme);
	} else if (!strcmp(mode, "spin")) {
		busy = 1;
		hold_ms = 50;
		run_pair(0);
	} else if (!strcmp(mode, "chain")) {
		hold_ms = 800;
		run_pair(200);
	} else if (!strcmp(mode, "rt")) {
		struct sched_param sp = { .sched_priority = 1 };
		if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp)) {
			printf("rt-unavailable\n");
			return 0;
		}
		pthread_mutex_lock(&lockme);
		pthread_mutex_unlock(&lockme);
	} else if (!strcmp(mode, "loop") && argc > 2) {
		long n = atol(argv[2]);
		for (long i = 0; i < n; i++) {
			pthread_mutex_lock(&lockme);
			pthread_mutex_unlock(&lockme);
		}
	} else {
		fprintf(stderr, "usage: %s points|spin|chain|rt|loop N\n", argv[0]);
		return 2;
	}
	return 0;
}
