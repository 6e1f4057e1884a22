/* SPDX-License-Identifier: MIT */
/*
 * ctx_example.c - the worked example of doc/embedding.md: an ordinary
 * program (more threads than CPUs may run it) embedding a lock that takes
 * a per-thread context, the adaptive mutex of <lockbench/mutex.h>.
 *
 *   1. declare the lock (no static initializer: lb_mutex_init sizes its
 *      spin budget at run time) and initialise it once, before the threads;
 *   2. on each thread, declare a context and lb_mutex_ctx_init() it there,
 *      on the thread that will use it (it records the thread);
 *   3. pass that thread's context to every lock and unlock.
 *
 * THREADS threads take the lock ITERS times each and bump a plain counter
 * under it: the total proves mutual exclusion.  TAP output; the run time is
 * a diagnostic (doc/embedding.md quotes it), never a check.
 */
#define _GNU_SOURCE 1 /* the futex-based mutex needs syscall(2) */

#include <lockbench/mutex.h>

#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define THREADS 4
#define ITERS 100000

static lb_mutex_t lock;        /* 1. the lock ... */
static unsigned long counter;  /* written only under it */

static void *worker(void *arg)
{
	lb_mutex_ctx_t ctx;            /* 2. this thread's context ... */
	lb_mutex_ctx_init(&ctx);       /*    set up on this thread */
	for (int i = 0; i < ITERS; i++) {
		lb_mutex_lock(&lock, &ctx); /* 3. passed to every call */
		counter++;
		lb_mutex_unlock(&lock, &ctx);
	}
	return arg;
}

int main(void)
{
	lb_mutex_init(&lock, NULL);     /* 1. ... initialised once, defaults */
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t th[THREADS];
	int started = 0;
	for (int i = 0; i < THREADS; i++)
		started += pthread_create(&th[i], NULL, worker, NULL) == 0;
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("%s 1 - %d threads x %d lb_mutex lock/unlock: counter %lu of %lu\n",
	       started == THREADS && counter == (unsigned long)THREADS * ITERS ? "ok" : "not ok",
	       THREADS, ITERS, counter, (unsigned long)THREADS * ITERS);
	printf("# %.3f s on this machine\n1..1\n", secs);
	return !(started == THREADS && counter == (unsigned long)THREADS * ITERS);
}
