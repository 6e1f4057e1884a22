/* SPDX-License-Identifier: MIT */
/*
 * lb_c2c.c - cache-line round trip between two CPUs (see lb_c2c.h).
 *
 * The line holds a counter.  The pinger writes an odd value and waits for
 * the next even one; the ponger waits for the odd value and writes the even
 * one.  Each round trip therefore moves the line to the other CPU and back:
 * two transfers, which is what a lock hand-over between two CPUs costs too
 * (the waiter's read of the lock word, then the holder's next write).
 */
#include "lb_c2c.h"
#include "lb_cpu.h"
#include "lb_cpulist.h"
#include "lb_stats.h"
#include "lb_time.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

/* Spins between two looks at the clock or at the abort flag: cheap enough
 * not to slow a 100 ns round trip, often enough to stop within microseconds. */
#define CHECK_EVERY 1024u

struct c2c_line {
	_Alignas(LB_CACHELINE) _Atomic uint64_t ball;
	/* On a line of its own: the ponger polls it only every CHECK_EVERY
	 * spins, and it must not travel with the ball. */
	_Alignas(LB_CACHELINE) atomic_bool abort;
	/* Both threads hold a reference; the last to leave frees the line, so
	 * a ponger that cannot get its CPU back (a real-time hog on it) can be
	 * left behind instead of hanging the caller in pthread_join. */
	_Atomic int refs;
	unsigned int rounds;
};

/* Round trips are timed in batches and the result is the median batch: a
 * batch in which one of the two threads was preempted (milliseconds) would
 * otherwise move a mean of 2,000 round trips by microseconds. */
#define C2C_BATCH 100u
#define C2C_MAX_BATCHES 1024u

/* How long the caller waits for a ponger told to stop before leaving it. */
#define PONGER_EXIT_WAIT_NS 50000000

static void c2c_put(struct c2c_line *l)
{
	/* acq_rel: the last one's free() comes after the other's final
	 * accesses (its release decrement pairs with this acquire). */
	if (atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) == 1)
		free(l);
}

int lb_c2c_default_pair(int *a, int *b)
{
	cpu_set_t allowed;
	lb_cpulist_allowed(&allowed);
	*a = *b = -1;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		if (*a < 0) {
			*a = cpu;
		} else {
			*b = cpu;
			return 0;
		}
	}
	*a = -1;
	return -1;
}

/* Wait until the ball holds `want`; false when the pinger gave up. */
static bool pong_wait(struct c2c_line *l, uint64_t want)
{
	unsigned int spins = 0;
	/* Spin without pause: the time to see the pinger's store is what is
	 * measured.  Acquire pairs with the pinger's release store of `want`. */
	while (atomic_load_explicit(&l->ball, memory_order_acquire) != want)
		if (++spins % CHECK_EVERY == 0 &&
		    atomic_load_explicit(&l->abort, memory_order_relaxed))
			return false;
	return true;
}

static void *ponger(void *arg)
{
	struct c2c_line *l = arg;
	/* Named, so that whoever watches the process's threads (the guest's
	 * pinning check, a user's top -H) can tell a probe from a worker. */
	pthread_setname_np(pthread_self(), "lb-c2c");
	for (uint64_t i = 0; i < l->rounds; i++) {
		if (!pong_wait(l, 2 * i + 1))
			break;
		/* Release pairs with the pinger's acquire load of the even value. */
		atomic_store_explicit(&l->ball, 2 * i + 2, memory_order_release);
	}
	c2c_put(l);
	return NULL;
}

/* One round trip from the pinger's side; false past the deadline. */
static bool ping(struct c2c_line *l, uint64_t i, uint64_t deadline)
{
	unsigned int spins = 0;
	/* Release pairs with the ponger's acquire load in pong_wait. */
	atomic_store_explicit(&l->ball, 2 * i + 1, memory_order_release);
	/* Spin without pause, as the ponger does; the clock is read only every
	 * CHECK_EVERY spins so that it does not add to a fast round trip.
	 * Acquire pairs with the ponger's release store of 2i+2. */
	while (atomic_load_explicit(&l->ball, memory_order_acquire) != 2 * i + 2)
		if (++spins % CHECK_EVERY == 0 &&
		    (lb_now_ns() > deadline || atomic_load_explicit(&l->abort, memory_order_relaxed)))
			return false;
	return true;
}

double lb_c2c_round_trip_ns(int cpu_a, int cpu_b, unsigned int rounds, uint64_t budget_ns)
{
	if (cpu_a < 0 || cpu_b < 0 || cpu_a >= CPU_SETSIZE || cpu_b >= CPU_SETSIZE || rounds == 0 ||
	    rounds > C2C_BATCH * C2C_MAX_BATCHES)
		return -1;
	struct c2c_line *l = aligned_alloc(LB_CACHELINE, sizeof(*l));
	if (!l)
		return -1;
	atomic_init(&l->ball, 0);
	atomic_init(&l->abort, false);
	atomic_init(&l->refs, 2);
	l->rounds = LB_C2C_WARMUP + rounds;

	cpu_set_t saved, set;
	double result = -1;
	if (pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved)) {
		free(l);
		return -1;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu_a, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
		free(l);
		return -1;
	}
	/* The partner starts on its CPU: created on ours, it would first have
	 * to wait for this thread, already spinning, to be preempted (up to a
	 * scheduler tick, 4 ms at HZ=250). */
	pthread_t partner;
	pthread_attr_t attr;
	cpu_set_t partner_set;
	CPU_ZERO(&partner_set);
	CPU_SET(cpu_b, &partner_set);
	int err = pthread_attr_init(&attr);
	if (!err) {
		err = pthread_attr_setaffinity_np(&attr, sizeof(partner_set), &partner_set);
		if (!err)
			err = pthread_create(&partner, &attr, ponger, l);
		pthread_attr_destroy(&attr);
	}
	if (err) {
		atomic_store_explicit(&l->refs, 1, memory_order_relaxed); /* no ponger */
	} else {
		const uint64_t deadline = lb_now_ns() + budget_ns;
		double batch_ns[C2C_MAX_BATCHES];
		uint64_t t_batch = 0;
		size_t nbatches = 0;
		bool ok = true;
		for (uint64_t i = 0; ok && i < l->rounds; i++) {
			uint64_t timed = i - LB_C2C_WARMUP; /* round trips timed so far */
			if (i >= LB_C2C_WARMUP && timed % C2C_BATCH == 0) {
				uint64_t now = lb_now_ns();
				if (timed)
					batch_ns[nbatches++] = (double)(now - t_batch) / C2C_BATCH;
				t_batch = now;
			}
			ok = ping(l, i, deadline);
		}
		if (ok) {
			/* The last, possibly partial, batch. */
			uint64_t last = (rounds - 1) % C2C_BATCH + 1;
			batch_ns[nbatches++] = (double)(lb_now_ns() - t_batch) / (double)last;
			struct lb_summary s;
			lb_summarize(batch_ns, nbatches, &s);
			result = s.median;
			pthread_join(partner, NULL);
		} else {
			/* The ponger leaves at its next look at the flag, once it
			 * runs; if its CPU is not given back soon, leave it. */
			atomic_store_explicit(&l->abort, true, memory_order_relaxed);
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += PONGER_EXIT_WAIT_NS;
			until.tv_sec += until.tv_nsec / 1000000000;
			until.tv_nsec %= 1000000000;
			if (pthread_timedjoin_np(partner, NULL, &until) == ETIMEDOUT)
				pthread_detach(partner);
		}
	}
	pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
	c2c_put(l);
	return result;
}
