/* SPDX-License-Identifier: MIT */
/*
 * preload_early.c - a library whose constructor starts threads that lock
 * mutexes and wait on a condvar at once.  test-preload links it, so with
 * LD_PRELOAD=liblockbench-preload.so the loader runs this constructor
 * before the preload's: the interposer must start lazily from these
 * threads, race-free, and keep their mutexes consistent when its own
 * constructor runs while they work.
 */
#include "preload_early.h"

#include <stdatomic.h>
#include <stddef.h>

/* Resolved at load time (no dlsym, which would need the loader lock). */
extern int lb_preload_state(const char **lock_name) __attribute__((weak));

static pthread_mutex_t early_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t early_cond = PTHREAD_COND_INITIALIZER;
static long early_counter;          /* guarded by early_lock */
static int early_stop;              /* guarded by early_lock */
static pthread_t early_threads[EARLY_THREADS];
static int early_state_at_start = -1;
static _Atomic int early_started;

static void *early_worker(void *arg)
{
	(void)arg;
	long mine = 0;
	for (;;) {
		pthread_mutex_lock(&early_lock);
		if (early_stop) {
			pthread_mutex_unlock(&early_lock);
			break;
		}
		/* A read-modify-write with a pause in it: lost updates show
		 * if the lock does not exclude. */
		long v = early_counter;
		for (volatile int i = 0; i < 20; i++)
			;
		early_counter = v + 1;
		mine++;
		if (mine % 64 == 0)
			pthread_cond_broadcast(&early_cond);
		pthread_mutex_unlock(&early_lock);
	}
	return (void *)mine;
}

__attribute__((constructor)) static void early_constructor(void)
{
	early_state_at_start = lb_preload_state ? lb_preload_state(NULL) : -1;
	for (int i = 0; i < EARLY_THREADS; i++)
		if (pthread_create(&early_threads[i], NULL, early_worker, NULL) == 0)
			atomic_fetch_add(&early_started, 1);
	/* Let them run into the lock before the loader moves on. */
	pthread_mutex_lock(&early_lock);
	while (early_counter < 100)
		pthread_cond_wait(&early_cond, &early_lock);
	pthread_mutex_unlock(&early_lock);
}

int early_finish(struct early_result *r)
{
	pthread_mutex_lock(&early_lock);
	early_stop = 1;
	pthread_mutex_unlock(&early_lock);
	r->done_by_threads = 0;
	int started = atomic_load(&early_started);
	for (int i = 0; i < started; i++) {
		void *ret;
		pthread_join(early_threads[i], &ret);
		r->done_by_threads += (long)ret;
	}
	r->counter = early_counter;
	r->threads = started;
	r->state_at_start = early_state_at_start;
	return 0;
}
