/* SPDX-License-Identifier: MIT */
/* lb_thread.c - start barrier and thread set. */
#include "lb_thread.h"
#include "lb_time.h"
#include "lb_cpu.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The barrier's two futex calls, private futexes unless the barrier is
 * shared by processes (lib cannot use the lock layer's
 * <lockbench/lb_futex.h>: lb_cpu.h says why). */
static void barrier_futex_wake_all(const struct lb_barrier *b, _Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, b->shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, INT32_MAX,
		NULL, NULL, 0);
}

static void barrier_futex_wait(const struct lb_barrier *b, _Atomic uint32_t *word,
			       uint32_t expected)
{
	syscall(SYS_futex, (uint32_t *)word, b->shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, expected,
		NULL, NULL, 0);
}

void lb_barrier_init(struct lb_barrier *b, uint32_t parties)
{
	atomic_init(&b->arrived, 0);
	atomic_init(&b->generation, 0);
	b->parties = parties;
	b->shared = false;
}

void lb_barrier_init_shared(struct lb_barrier *b, uint32_t parties)
{
	lb_barrier_init(b, parties);
	b->shared = true;
}

bool lb_barrier_arrive(struct lb_barrier *b)
{
	/* acq_rel: our earlier writes are published to whoever completes the
	 * round, and the last arrival sees everyone's. */
	if (atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel) + 1 != b->parties)
		return false;
	atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
	/* release: pairs with the acquire loads of generation in the waiters. */
	atomic_fetch_add_explicit(&b->generation, 1, memory_order_release);
	barrier_futex_wake_all(b, &b->generation);
	return true;
}

void lb_barrier_wait(struct lb_barrier *b)
{
	uint32_t gen = atomic_load_explicit(&b->generation, memory_order_acquire);
	if (lb_barrier_arrive(b))
		return;
	/* Spin a little (the common case on an idle machine is a short wait),
	 * then sleep until the generation moves: oversubscribed runs must not
	 * spin here while the last threads wait for a CPU. */
	for (int spins = 0; spins < 2000; spins++) {
		if (atomic_load_explicit(&b->generation, memory_order_acquire) != gen)
			return;
		lb_cpu_pause();
	}
	while (atomic_load_explicit(&b->generation, memory_order_acquire) == gen)
		barrier_futex_wait(b, &b->generation, gen);
}

int lb_threads_create(struct lb_threads *t, unsigned int n, void *(*fn)(void *), void *args,
		      size_t arg_stride)
{
	t->n = 0;
	t->tid = calloc(n ? n : 1, sizeof(*t->tid));
	if (!t->tid)
		return ENOMEM;
	for (unsigned int i = 0; i < n; i++) {
		int err = pthread_create(&t->tid[i], NULL, fn, (char *)args + i * arg_stride);
		if (err)
			return err;
		t->n++;
	}
	return 0;
}

void lb_threads_join(struct lb_threads *t)
{
	for (unsigned int i = 0; i < t->n; i++)
		pthread_join(t->tid[i], NULL);
	free(t->tid);
	t->tid = NULL;
	t->n = 0;
}

int lb_threads_join_timeout(struct lb_threads *t, uint64_t timeout_ns)
{
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline); /* pthread_timedjoin_np's clock */
	deadline.tv_sec += (time_t)(timeout_ns / LB_NS_PER_S);
	deadline.tv_nsec += (long)(timeout_ns % LB_NS_PER_S);
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	unsigned int joined = 0;
	for (; joined < t->n; joined++)
		if (pthread_timedjoin_np(t->tid[joined], NULL, &deadline) != 0)
			break;
	if (joined < t->n) {
		memmove(t->tid, t->tid + joined, (t->n - joined) * sizeof(*t->tid));
		t->n -= joined;
		return ETIMEDOUT;
	}
	free(t->tid);
	t->tid = NULL;
	t->n = 0;
	return 0;
}
