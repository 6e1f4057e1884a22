/* SPDX-License-Identifier: MIT */
/*
 * direct_loop.c - ab-direct-loop: glibc's mutex and spinlock timed by a
 * loop that calls them directly, the independent figure `lockbench ab`'s
 * "lock's own cost" at 1 thread is checked against (scripts/ab-aa-check).
 * Not a test: it prints figures, it checks nothing.
 *
 * The loops run in a second thread, pinned to one CPU, while the first
 * waits in pthread_join: glibc takes cheaper paths in a process that has
 * never had a second thread (no lock prefix where it knows no other thread
 * can look), and a benchmark's process always has more than one, so a
 * single-threaded loop measures a lock nobody runs.  --single runs them in
 * the only thread instead, to show that difference.  Per lock, batches of LOOP_OPS iterations
 * timed with the thread's CPU clock (time not run does not count), the
 * locks' batches interleaved round by round so that a host move hits all
 * of them alike; the median over the rounds.  Per lock two loops:
 *   plain: lock(); unlock();                       -- the call pair alone
 *   data:  lock(); line++ (relaxed); unlock();     -- as the harness runs it
 * and a floor loop of line++ alone.  "data - floor" is the same
 * subtraction the harness's `none` makes; "plain" is what a user's own
 * microbenchmark of the lock would print.
 *
 * usage: ab-direct-loop [--single] [CPU [ROUNDS]]   (default CPU 0, 201 rounds)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOOP_OPS 20000

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The critical section's shared line, on a line of its own. */
static _Alignas(64) _Atomic uint64_t line;

static inline void bump(void)
{
	/* Relaxed load + store, as the harness's cs_write: under the lock. */
	atomic_store_explicit(&line, atomic_load_explicit(&line, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

enum loop { FLOOR, MUTEX_PLAIN, MUTEX_DATA, SPIN_PLAIN, SPIN_DATA, NLOOPS };
static const char *const loop_names[NLOOPS] = { "floor (line++ only)", "mutex plain",
						"mutex + line++", "spin plain", "spin + line++" };

struct locks {
	pthread_mutex_t mutex;
	pthread_spinlock_t spin;
};

/* noinline: one batch is one call, the loop body as written. */
__attribute__((noinline)) static double time_batch(struct locks *l, enum loop which)
{
	uint64_t t0 = thread_cpu_ns();
	for (int i = 0; i < LOOP_OPS; i++) {
		switch (which) {
		case FLOOR:
			bump();
			break;
		case MUTEX_PLAIN:
			pthread_mutex_lock(&l->mutex);
			pthread_mutex_unlock(&l->mutex);
			break;
		case MUTEX_DATA:
			pthread_mutex_lock(&l->mutex);
			bump();
			pthread_mutex_unlock(&l->mutex);
			break;
		case SPIN_PLAIN:
			pthread_spin_lock(&l->spin);
			pthread_spin_unlock(&l->spin);
			break;
		case SPIN_DATA:
			pthread_spin_lock(&l->spin);
			bump();
			pthread_spin_unlock(&l->spin);
			break;
		default:
			break;
		}
		/* A compiler barrier per op: no batching of iterations across it. */
		__asm__ __volatile__("" ::: "memory");
	}
	return (double)(thread_cpu_ns() - t0) / LOOP_OPS;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

struct job {
	int cpu, rounds;
	int rc;
};

static void *measure(void *arg)
{
	struct job *job = arg;
	int rounds = job->rounds;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(job->cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		fprintf(stderr, "ab-direct-loop: cannot run on CPU %d\n", job->cpu);
		job->rc = 2;
		return NULL;
	}
	struct locks l;
	pthread_mutex_init(&l.mutex, NULL); /* PTHREAD_MUTEX_NORMAL, as `pthread-mutex` */
	pthread_spin_init(&l.spin, PTHREAD_PROCESS_PRIVATE);
	double *ns[NLOOPS];
	for (int k = 0; k < NLOOPS; k++) {
		ns[k] = malloc(sizeof(double) * (size_t)rounds);
		if (!ns[k]) {
			job->rc = 1;
			return NULL;
		}
	}
	for (int k = 0; k < NLOOPS; k++)
		time_batch(&l, (enum loop)k); /* warm-up */
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < NLOOPS; k++) {
			/* Rotate the order each round: no loop always runs first. */
			int which = (k + r) % NLOOPS;
			ns[which][r] = time_batch(&l, (enum loop)which);
		}
	double med[NLOOPS];
	for (int k = 0; k < NLOOPS; k++) {
		qsort(ns[k], (size_t)rounds, sizeof(double), by_value);
		med[k] = ns[k][rounds / 2];
		printf("%-22s %7.2f ns/op (median of %d rounds of %d; p10 %.2f, p90 %.2f)\n",
		       loop_names[k], med[k], rounds, LOOP_OPS, ns[k][rounds / 10],
		       ns[k][rounds * 9 / 10]);
	}
	printf("pthread-mutex own cost: plain %.2f, data - floor %.2f ns\n", med[MUTEX_PLAIN],
	       med[MUTEX_DATA] - med[FLOOR]);
	printf("pthread-spin own cost: plain %.2f, data - floor %.2f ns\n", med[SPIN_PLAIN],
	       med[SPIN_DATA] - med[FLOOR]);
	for (int k = 0; k < NLOOPS; k++)
		free(ns[k]);
	job->rc = 0;
	return NULL;
}

int main(int argc, char **argv)
{
	int first = 1;
	int single = argc > 1 && !strcmp(argv[1], "--single");
	first += single;
	struct job job = { .cpu = argc > first ? atoi(argv[first]) : 0,
			   .rounds = argc > first + 1 ? atoi(argv[first + 1]) : 201 };
	if (job.rounds < 1 || job.rounds > 100000 || job.cpu < 0 || job.cpu >= CPU_SETSIZE) {
		fprintf(stderr, "ab-direct-loop: CPU or ROUNDS out of range; accepted: a CPU number, "
			"1..100000 rounds\n");
		return 2;
	}
	printf("# %s thread of its process, CPU %d\n", single ? "the only" : "a second",
	       job.cpu);
	if (single) {
		measure(&job);
		return job.rc;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, measure, &job)) {
		fprintf(stderr, "ab-direct-loop: pthread_create failed\n");
		return 1;
	}
	pthread_join(t, NULL);
	return job.rc;
}
