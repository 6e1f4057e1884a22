/* SPDX-License-Identifier: MIT */
/*
 * spin_only_threads.c - N threads (argv[1]) that each take one default
 * mutex once, wait until all have, then take it 10 times more: under the
 * preload every one of them holds a thread record at the same moment, so
 * N past the CPU count must draw the spin-only warning (test_preload_spin_only.py).
 * Prints the counter; exit 1 if it is wrong.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t all_in;
static long counter;

static void *worker(void *arg)
{
	pthread_mutex_lock(&lock); /* the thread's record exists from here */
	counter++;
	pthread_mutex_unlock(&lock);
	pthread_barrier_wait(&all_in);
	for (int i = 0; i < 10; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	if (n < 1 || n > 256)
		return 2;
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	if (!t || pthread_barrier_init(&all_in, NULL, (unsigned int)n))
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 2;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", counter);
	free(t);
	return counter == 11L * n ? 0 : 1;
}
