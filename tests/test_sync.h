/* SPDX-License-Identifier: MIT */
/*
 * test_sync.h - small helpers the scheduling tests share: a clock read in
 * ns, a futex-backed "wait until this word equals v" / "set it and wake
 * everyone" pair for sequencing test threads, and starting a SCHED_FIFO
 * thread on one CPU.  Needs _GNU_SOURCE (futex, thread affinity).
 */
#ifndef LB_TEST_SYNC_H
#define LB_TEST_SYNC_H

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "lb_atomic.h"
#include "lb_futex.h"

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Wait until *w == v (futex sleep; every writer wakes all). */
static inline void wait_eq(_Atomic uint32_t *w, uint32_t v)
{
	uint32_t cur;
	/* Sleep loop: acquire pairs with the release store in post(). */
	while ((cur = atomic_load_explicit(w, memory_order_acquire)) != v)
		lb_futex_wait(w, cur, NULL);
}

static inline void post(_Atomic uint32_t *w, uint32_t v)
{
	atomic_store_explicit(w, v, memory_order_release);
	lb_futex_wake(w, INT_MAX);
}

/* Pin the calling thread to one CPU; 0 or the errno value. */
static inline int pin_self(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Start fn(arg) at SCHED_FIFO prio, pinned to cpu; 0 or the errno value
 * (EPERM where SCHED_FIFO is not permitted). */
static inline int spawn_fifo(pthread_t *th, void *(*fn)(void *), void *arg, int prio, int cpu)
{
	pthread_attr_t attr;
	struct sched_param sp = { .sched_priority = prio };
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	pthread_attr_setschedparam(&attr, &sp);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	int err = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return err;
}

#endif /* LB_TEST_SYNC_H */
