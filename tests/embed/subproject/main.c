/* SPDX-License-Identifier: MIT */
/* Takes a qspinlock and a mutex from two threads, through the subproject's
 * dependency('lockbench-locks'); exit 0 when every increment is counted. */
#define _GNU_SOURCE 1
#include <lockbench/mutex.h>
#include <lockbench/qspinlock.h>

#include <pthread.h>
#include <stdio.h>

#define ITERS 5000

static lb_qspin_t qspin = LB_QSPIN_INITIALIZER;
static struct lb_qspin_slot slots[2];
static lb_mutex_t mutex;
static long in_qspin, in_mutex;

static void *worker(void *arg)
{
	struct lb_qspin_ctx qctx;
	lb_mutex_ctx_t mctx;

	lb_qspin_ctx_init(&qctx, slots, (uint32_t)(long)arg);
	lb_mutex_ctx_init(&mctx);
	for (int i = 0; i < ITERS; i++) {
		lb_qspin_lock(&qspin, &qctx);
		in_qspin++;
		lb_qspin_unlock(&qspin);
		lb_mutex_lock(&mutex, &mctx);
		in_mutex++;
		lb_mutex_unlock(&mutex, &mctx);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	lb_mutex_init(&mutex, NULL);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("qspinlock %ld, mutex %ld of %d\n", in_qspin, in_mutex, 2 * ITERS);
	return in_qspin == 2 * ITERS && in_mutex == 2 * ITERS ? 0 : 1;
}
