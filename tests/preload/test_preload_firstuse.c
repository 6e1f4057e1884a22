/* SPDX-License-Identifier: MIT */
/*
 * test_preload_firstuse.c - the first use of a default mutex, by several
 * threads at the same instant, under liblockbench-preload.so.
 *
 * The preload takes a default mutex over on its first lock: one thread's
 * CAS writes the mark (tag + slot address) into the word at offset 16.  A
 * thread that read that word as 0 just before the CAS must still end up on
 * our lock, never on glibc's: glibc reading the mark as its __kind runs the
 * priority-protect path (assertion in tpp.c), transactional elision
 * (SIGILL without TSX), returns EINVAL, or "locks" without excluding.
 *
 * Many rounds; in each, every worker waits at a barrier and then locks the
 * same fresh (zeroed, as pthread_mutex_init(m, NULL) leaves it) mutex at
 * once.  Checks: every lock call returns 0, no two threads are ever inside
 * a critical section together, every mutex carries exactly the expected
 * count.  A crash or abort fails the test too.  PRELOAD_FIRSTUSE_ROUNDS
 * overrides the number of rounds.
 */
#include "tap.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern int lb_preload_state(const char **lock_name) __attribute__((weak));

#define WORKERS 2
#define PASSES 3 /* lock/unlock passes per worker per round */

static long rounds = 20000;
static pthread_mutex_t *mutexes;
static long *counts;
static _Atomic long arrived;
static _Atomic int inside;
static _Atomic long bad_rc, overlaps;

static void *worker(void *arg)
{
	(void)arg;
	for (long r = 0; r < rounds; r++) {
		/* Barrier: all workers reach round r, then race on mutex r. */
		atomic_fetch_add_explicit(&arrived, 1, memory_order_acq_rel);
		unsigned int spins = 0;
		/* Spin loop: wait for the other workers; yield now and then so
		 * a preempted one (more workers than CPUs) gets to arrive. */
		while (atomic_load_explicit(&arrived, memory_order_acquire) < (r + 1) * WORKERS)
			if (++spins % 1024 == 0)
				sched_yield();
		for (int p = 0; p < PASSES; p++) {
			int rc = pthread_mutex_lock(&mutexes[r]);
			if (rc) {
				atomic_fetch_add_explicit(&bad_rc, 1, memory_order_relaxed);
				continue;
			}
			if (atomic_fetch_add_explicit(&inside, 1, memory_order_relaxed))
				atomic_fetch_add_explicit(&overlaps, 1, memory_order_relaxed);
			counts[r]++;
			atomic_fetch_sub_explicit(&inside, 1, memory_order_relaxed);
			pthread_mutex_unlock(&mutexes[r]);
		}
	}
	return NULL;
}

static void *watchdog(void *arg)
{
	(void)arg;
	sleep(60);
	printf("not ok - watchdog: the test hung for 60 s\n");
	fflush(stdout);
	_exit(1);
}

int main(void)
{
	const char *want = getenv("LOCKBENCH_LOCK"), *name = NULL;
	if (!lb_preload_state || lb_preload_state(&name) < 0)
		tap_skip_exit77("liblockbench-preload.so is not preloaded");
	tap_ok(name && want && !strcmp(name, want), "preloaded, lock %s", name ? name : "?");
	const char *env = getenv("PRELOAD_FIRSTUSE_ROUNDS");
	if (env && atol(env) > 0)
		rounds = atol(env);

	pthread_t wd, t[WORKERS];
	pthread_create(&wd, NULL, watchdog, NULL);
	pthread_detach(wd);

	mutexes = calloc((size_t)rounds, sizeof(*mutexes));
	counts = calloc((size_t)rounds, sizeof(*counts));
	if (!mutexes || !counts)
		tap_skip_exit77("out of memory");
	for (long r = 0; r < rounds; r++)
		pthread_mutex_init(&mutexes[r], NULL);

	for (int i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);

	long wrong = 0;
	for (long r = 0; r < rounds; r++) {
		if (counts[r] != WORKERS * PASSES)
			wrong++;
		pthread_mutex_destroy(&mutexes[r]);
	}
	tap_ok(atomic_load(&bad_rc) == 0, "%ld fresh mutexes first locked by %d threads at once: "
	       "no lock call failed (%ld did)", rounds, WORKERS, atomic_load(&bad_rc));
	tap_ok(atomic_load(&overlaps) == 0, "no two threads inside a critical section (%ld overlaps)",
	       atomic_load(&overlaps));
	tap_ok(wrong == 0, "every mutex counted %d passes (%ld did not)", WORKERS * PASSES, wrong);
	free(mutexes);
	free(counts);
	return tap_done();
}
