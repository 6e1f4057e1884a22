/* SPDX-License-Identifier: MIT */
/*
 * lockloop_own.c - a lock's own cost at 1 thread: what a user's own loop of
 * lock(); unlock(); would print, measured through the vtable.
 *
 * The harness loop (lockloop_run.c) carries a stop flag, a sampling test, the
 * data line and a counter around every lock call, and subtracting `none`'s
 * harness figure from a lock's does not leave the lock alone: an out-of-
 * order core hides part of the harness behind the lock's atomic, so the
 * difference came out 23 % under a direct loop of glibc's spinlock.  Here a
 * batch is nothing but the two calls through the vtable, less a batch of
 * the bare loop (no calls): what remains is what a caller pays for
 * lock(); unlock(); -- the calls included, as in a user's direct-call loop
 * of the same functions (one indirect call each where a direct loop has a
 * PLT call).  The same batch over `none` (two calls to empty functions) is
 * reported beside it: the part of the figure that is calling, not locking.
 *
 * One thread, pinned to the CPU the 1-thread runs use, times batches on its
 * CPU clock (time it was not run does not count); each round times the bare
 * loop, `none` and every lock once, the order rotating from round to round
 * so that none always runs first, and each figure is the median over rounds
 * of (batch - bare loop of the same round): a host move hits one round.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lockloop.h"
#include "lb_atomic.h" /* LB_NOINLINE */
#include "lb_registry.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OWN_BATCH_OPS 4096

struct own_lock {
	const struct lb_lock_ops *ops;
	void *lock, *tctx;
	bool inited;
};

struct own_job {
	const struct lb_lock_ops *const *ops; /* [0] is `none` */
	size_t n;                             /* entries of ops, `none` included */
	unsigned int rounds;
	int cpu;                              /* -1: unpinned */
	double *out;                          /* n figures, [0] is `none`'s */
	int err;
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * LB_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* noinline: every batch is the same call, the loop body as written. */
LB_NOINLINE static double time_batch(const struct own_lock *o)
{
	void (*lock)(void *, void *) = o->ops->lock;
	void (*unlock)(void *, void *) = o->ops->unlock;
	void *l = o->lock, *tctx = o->tctx;
	uint64_t t0 = thread_cpu_ns();
	for (unsigned int i = 0; i < OWN_BATCH_OPS; i++) {
		lock(l, tctx);
		unlock(l, tctx);
		/* A compiler barrier: no merging of iterations across it. */
		__asm__ __volatile__("" ::: "memory");
	}
	return (double)(thread_cpu_ns() - t0) / OWN_BATCH_OPS;
}

/* The loop alone: the same counter and compiler barrier, no calls. */
LB_NOINLINE static double time_bare(void)
{
	uint64_t t0 = thread_cpu_ns();
	for (unsigned int i = 0; i < OWN_BATCH_OPS; i++)
		__asm__ __volatile__("" ::: "memory"); /* as in time_batch */
	return (double)(thread_cpu_ns() - t0) / OWN_BATCH_OPS;
}

static int own_setup(struct own_lock *o, const struct lb_lock_ops *ops)
{
	memset(o, 0, sizeof(*o));
	o->ops = ops;
	/* As the harness allocates them: each on cache lines of its own, with
	 * the alignment the lock and its context ask for (mutex: 64). */
	o->lock = lb_lock_alloc(ops);
	o->tctx = lb_thread_ctx_alloc(ops);
	if (!o->lock || (ops->thread_ctx_size && !o->tctx))
		return ENOMEM;
	int err = ops->init ? ops->init(o->lock) : 0;
	if (err)
		return err;
	o->inited = true;
	if (ops->thread_init && (err = ops->thread_init(o->tctx, 0)))
		return err;
	return 0;
}

static void own_teardown(struct own_lock *o)
{
	if (o->inited) {
		if (o->ops->thread_fini)
			o->ops->thread_fini(o->tctx);
		if (o->ops->destroy)
			o->ops->destroy(o->lock);
	}
	lb_thread_ctx_free(o->tctx);
	lb_lock_free(o->lock);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* diff: (n) x rounds scratch.  Entry k of locks is timed as slot k + 1 of
 * each round, slot 0 is the bare loop. */
static void measure(struct own_job *job, struct own_lock *locks, double *diff)
{
	size_t n = job->n, slots = n + 1;
	double t[LB_LOOP_OWN_MAX_LOCKS + 2];
	for (size_t k = 0; k < n; k++)
		time_batch(&locks[k]); /* warm-up: caches, predictors, lazy binding */
	for (unsigned int r = 0; r < job->rounds; r++) {
		for (size_t k = 0; k < slots; k++) {
			size_t which = (k + r) % slots; /* rotate: none always first */
			t[which] = which ? time_batch(&locks[which - 1]) : time_bare();
		}
		for (size_t k = 0; k < n; k++)
			diff[k * job->rounds + r] = t[k + 1] - t[0];
	}
	for (size_t k = 0; k < n; k++) {
		double *v = &diff[k * job->rounds];
		qsort(v, job->rounds, sizeof(double), by_value);
		job->out[k] = v[job->rounds / 2];
	}
}

static void *own_main(void *arg)
{
	struct own_job *job = arg;
	if (job->cpu >= 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(job->cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one)) {
			job->err = errno;
			return NULL;
		}
	}
	struct own_lock locks[LB_LOOP_OWN_MAX_LOCKS + 1];
	size_t ready = 0;
	double *diff = calloc(job->n * job->rounds, sizeof(double));
	job->err = diff ? 0 : ENOMEM;
	for (; ready < job->n && !job->err; ready++)
		job->err = own_setup(&locks[ready], job->ops[ready]);
	if (!job->err)
		measure(job, locks, diff);
	for (size_t k = 0; k < ready; k++)
		own_teardown(&locks[k]);
	free(diff);
	return NULL;
}

int lb_loop_own_cost(const struct lb_lock_ops *none, const struct lb_lock_ops *const *ops,
		      size_t n, int cpu, unsigned int rounds, double *out, double *none_out)
{
	const struct lb_lock_ops *all[LB_LOOP_OWN_MAX_LOCKS + 1];
	double fig[LB_LOOP_OWN_MAX_LOCKS + 1];
	*none_out = NAN;
	for (size_t i = 0; i < n && i < LB_LOOP_OWN_MAX_LOCKS; i++)
		out[i] = NAN;
	if (!none || !n || n > LB_LOOP_OWN_MAX_LOCKS || !rounds)
		return EINVAL;
	all[0] = none;
	for (size_t i = 0; i < n; i++) {
		if (!ops[i]->lock || !ops[i]->unlock)
			return EINVAL;
		all[i + 1] = ops[i];
	}
	struct own_job job = { .ops = all, .n = n + 1, .rounds = rounds, .cpu = cpu, .out = fig };
	pthread_t t;
	int err = pthread_create(&t, NULL, own_main, &job);
	if (err)
		return err;
	pthread_join(t, NULL);
	if (job.err)
		return job.err;
	*none_out = fig[0];
	for (size_t i = 0; i < n; i++)
		out[i] = fig[i + 1];
	return 0;
}
