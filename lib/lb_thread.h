/* SPDX-License-Identifier: MIT */
/*
 * lb_thread.h - worker threads with a start barrier and a clean stop.
 *
 * The barrier spins briefly and then sleeps on a futex: with more threads
 * than CPUs (a first-class regime here) a pure spin barrier would burn the
 * very CPUs the last arrivals need.
 */
#ifndef LB_THREAD_H
#define LB_THREAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lb_barrier {
	_Atomic uint32_t arrived;    /* threads in the current round */
	_Atomic uint32_t generation; /* bumped by the last arrival; the futex word */
	uint32_t parties;
	bool shared;                 /* shared futexes: parties in several processes */
};

void lb_barrier_init(struct lb_barrier *b, uint32_t parties);
/* The same for a barrier in memory several processes map (MAP_SHARED). */
void lb_barrier_init_shared(struct lb_barrier *b, uint32_t parties);
void lb_barrier_wait(struct lb_barrier *b);
/* Arrive without waiting (stands in for a thread that was never created);
 * returns true if this arrival completed the round. */
bool lb_barrier_arrive(struct lb_barrier *b);

struct lb_threads {
	unsigned int n;       /* threads created */
	pthread_t *tid;
};

/*
 * Create n threads running fn(args + i * arg_stride).  On failure the
 * threads already created are left running (the caller must let them finish
 * through its own stop flag and then call lb_threads_join); returns 0 or an
 * errno value, with t->n the number actually created.
 */
int lb_threads_create(struct lb_threads *t, unsigned int n, void *(*fn)(void *), void *args,
		      size_t arg_stride);
void lb_threads_join(struct lb_threads *t);

/*
 * Join, but give up once timeout_ns has passed: returns 0 when every thread
 * was joined (t is then reset as by lb_threads_join), ETIMEDOUT otherwise
 * (the threads still running are left alone; t keeps the unjoined ones).
 */
int lb_threads_join_timeout(struct lb_threads *t, uint64_t timeout_ns);

#endif /* LB_THREAD_H */
