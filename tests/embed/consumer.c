/* SPDX-License-Identifier: MIT */
/*
 * consumer.c - a program outside the tree that embeds every installed lock.
 * Built by test_install.sh from the installed headers only, with
 * `pkg-config --cflags --libs lockbench-locks`, as C11 and gnu11 (gcc,
 * clang) and as C++17 (g++, clang++), warnings as errors.  THREADS threads
 * each take every lock ITERS times and bump a plain counter under it; the
 * totals prove mutual exclusion, the read side checks a pair invariant.
 */
#define _GNU_SOURCE 1 /* the futex-based locks need syscall(2) */

#include <lockbench/futex_pi.h>
#include <lockbench/mutex.h>
#include <lockbench/qrwlock.h>
#include <lockbench/qspinlock.h>
#include <lockbench/qspinlock_pv.h>
#include <lockbench/rtmutex.h>
#include <lockbench/tas.h>
#include <lockbench/ticket.h>

#include <pthread.h>
#include <stdio.h>
#include <time.h>

/*
 * Few iterations: FIFO spinlocks with more runnable threads than CPUs hand
 * over at the scheduler's pace (a preempted waiter blocks everyone behind
 * it), and on a loaded 2-CPU machine 4 threads x 50000 qspinlock
 * acquisitions took from 0.01 s to over 100 s (gdb: progressing, handover
 * by handover).  The pure FIFO spinlocks (ticket, qspinlock) get fewer
 * still.  This checks that the locks work when embedded, not how they scale.
 */
#define THREADS 3
#define ITERS 2000
#define FIFO_ITERS 200 /* ticket and qspinlock: see above */

static lb_tas_t tas = LB_TAS_INITIALIZER;
static lb_ticket_t ticket = LB_TICKET_INITIALIZER;
static lb_qspin_t qspin = LB_QSPIN_INITIALIZER;
static lb_qspin_pv_t qspin_pv = LB_QSPIN_PV_INITIALIZER;
static lb_qrwlock_t qrw = LB_QRWLOCK_INITIALIZER;
static lb_mutex_t mutex;
static lb_rtmutex_t rtmutex = LB_RTMUTEX_INITIALIZER;
static lb_futex_pi_t futex_pi = LB_FUTEX_PI_INITIALIZER;

/* The node domain of the queued locks: one slot per thread index. */
static struct lb_qspin_slot qslots[THREADS];
static struct lb_qspin_pv_slot pvslots[THREADS];

/* Plain data, written only under the lock of the same name. */
static unsigned long n_tas, n_ticket, n_qspin, n_qspin_pv, n_mutex, n_rtmutex, n_futex_pi;
static unsigned long qrw_a, qrw_b; /* equal whenever no writer holds qrw */
static unsigned long read_errors;  /* written under the mutex */

/* Which lock each thread is taking, for the report if the run is stuck. */
static const char *stage[THREADS];
#define STAGE(name) __atomic_store_n(&stage[index], (const char *)(name), __ATOMIC_RELAXED)

static void *worker(void *arg)
{
	unsigned int index = (unsigned int)(unsigned long)arg;
	struct lb_qspin_ctx qctx;
	struct lb_qspin_pv_ctx pvctx;
	lb_mutex_ctx_t mctx;
	struct lb_rtmutex_task rctx;
	uint32_t tid = lb_gettid();

	if (!lb_qspin_ctx_init(&qctx, qslots, index) ||
	    !lb_qspin_pv_ctx_init(&pvctx, pvslots, index))
		return arg;
	lb_mutex_ctx_init(&mctx);
	lb_rtmutex_ctx_init(&rctx, 0);

	for (int i = 0; i < ITERS; i++) {
		STAGE("tas");
		lb_tas_lock(&tas);
		n_tas++;
		lb_tas_unlock(&tas);

		if (i < FIFO_ITERS) {
			STAGE("ticket");
			lb_ticket_lock(&ticket);
			n_ticket++;
			lb_ticket_unlock(&ticket);

			STAGE("qspinlock");
			lb_qspin_lock(&qspin, &qctx);
			n_qspin++;
			lb_qspin_unlock(&qspin);
		}

		STAGE("qspinlock_pv");
		lb_qspin_pv_lock(&qspin_pv, &pvctx);
		n_qspin_pv++;
		lb_qspin_pv_unlock(&qspin_pv);

		if (i % 4 == 0) {
			STAGE("qrwlock write");
			lb_qrwlock_write_lock(&qrw, &pvctx);
			qrw_a++;
			qrw_b++;
			lb_qrwlock_write_unlock(&qrw);
		} else {
			STAGE("qrwlock read");
			lb_qrwlock_read_lock(&qrw, &pvctx);
			unsigned long a = qrw_a, b = qrw_b;
			lb_qrwlock_read_unlock(&qrw);
			if (a != b) {
				lb_mutex_lock(&mutex, &mctx);
				read_errors++;
				lb_mutex_unlock(&mutex, &mctx);
			}
		}

		STAGE("mutex");
		lb_mutex_lock(&mutex, &mctx);
		n_mutex++;
		lb_mutex_unlock(&mutex, &mctx);

		STAGE("rtmutex");
		lb_rtmutex_lock(&rtmutex, &rctx);
		n_rtmutex++;
		lb_rtmutex_unlock(&rtmutex, &rctx);

		STAGE("futex_pi");
		if (lb_futex_pi_lock(&futex_pi, tid) != 0)
			return arg;
		n_futex_pi++;
		if (lb_futex_pi_unlock(&futex_pi, tid) != 0)
			return arg;
	}
	STAGE("done");
	return NULL;
}

static int check(const char *name, unsigned long got, unsigned long want)
{
	printf("%s %s: %lu of %lu\n", got == want ? "ok" : "FAIL", name, got, want);
	return got == want ? 0 : 1;
}

int main(void)
{
	pthread_t threads[THREADS];
	int failed = 0;

	lb_mutex_init(&mutex, NULL);
	for (unsigned long t = 0; t < THREADS; t++)
		if (pthread_create(&threads[t], NULL, worker, (void *)t) != 0) {
			fprintf(stderr, "consumer: pthread_create failed\n");
			return 1;
		}
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 40;
	for (int t = 0; t < THREADS; t++) {
		void *ret;
		/* Bounded: a stuck run names where each thread is, then fails. */
		if (pthread_timedjoin_np(threads[t], &ret, &deadline) != 0) {
			for (int u = 0; u < THREADS; u++)
				fprintf(stderr, "consumer: stuck after 40 s: thread %d in %s\n", u,
					__atomic_load_n(&stage[u], __ATOMIC_RELAXED));
			return 1;
		}
		if (ret) {
			fprintf(stderr, "consumer: thread %d failed\n", t);
			failed = 1;
		}
	}
	unsigned long total = (unsigned long)THREADS * ITERS;
	failed |= check("tas", n_tas, total);
	failed |= check("ticket", n_ticket, (unsigned long)THREADS * FIFO_ITERS);
	failed |= check("qspinlock", n_qspin, (unsigned long)THREADS * FIFO_ITERS);
	failed |= check("qspinlock_pv", n_qspin_pv, total);
	failed |= check("qrwlock writes", qrw_a, (unsigned long)THREADS * (ITERS / 4));
	failed |= check("qrwlock torn reads", read_errors, 0);
	failed |= check("mutex", n_mutex, total);
	failed |= check("rtmutex", n_rtmutex, total);
	failed |= check("futex_pi", n_futex_pi, total);
	return failed;
}
