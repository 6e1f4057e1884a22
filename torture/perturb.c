/* SPDX-License-Identifier: MIT */
/* perturb.c - the delays behind locktorture --perturb (see perturb.h). */
#include "perturb.h"
#include "random.h"
#include "lb_atomic.h"

#include <sched.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* Written once by main before the workers start (see perturb.h). */
bool lb_perturb_enabled;
static uint32_t perturb_rate_ppm;
static uint64_t perturb_seed;

/* Action counts: only perturbed points touch them, so the shared line costs
 * little next to the delay itself.  Relaxed: statistics only. */
static _Atomic uint64_t perturb_points, perturb_spins, perturb_yields, perturb_sleeps;

/* Per thread: the generator and whether it was seeded. */
static _Thread_local uint64_t perturb_state;
static _Thread_local bool perturb_seeded;

/* Longest spin in lb_cpu_relax() calls (a pause is ~10..140 cycles), and the
 * sleep range: a few µs, so that thousands of them fit a second. */
#define PERTURB_MAX_SPIN 512u
#define PERTURB_MAX_SLEEP_NS 20000u

/* A 64-bit mix of the seed and a stream number, so nearby streams differ. */
static uint64_t stream_seed(uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream + 1) * 0x9e3779b97f4a7c15ull;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return x;
}

void lb_perturb_configure(uint32_t rate_ppm, uint64_t seed)
{
	perturb_rate_ppm = rate_ppm;
	perturb_seed = seed;
	lb_perturb_enabled = rate_ppm > 0;
}

void lb_perturb_thread_start(unsigned int index)
{
	perturb_state = stream_seed(perturb_seed, index);
	perturb_seeded = true;
	/* Short sleeps need a short timer slack (default 50 µs); 1 µs. */
	if (lb_perturb_enabled)
		prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
}

void lb_perturb_read_counts(struct lb_perturb_counts *out)
{
	out->points = atomic_load_explicit(&perturb_points, memory_order_relaxed);
	out->spins = atomic_load_explicit(&perturb_spins, memory_order_relaxed);
	out->yields = atomic_load_explicit(&perturb_yields, memory_order_relaxed);
	out->sleeps = atomic_load_explicit(&perturb_sleeps, memory_order_relaxed);
}

void lb_perturb_slow(void)
{
	if (!perturb_seeded) {
		/* A thread that is not a worker (main, a helper): its own stream. */
		perturb_state = stream_seed(perturb_seed, 1000000u + (uint64_t)gettid());
		perturb_seeded = true;
	}
	if (lb_torture_random_step(&perturb_state) % 1000000u >= perturb_rate_ppm)
		return;
	uint32_t how = lb_torture_random_step(&perturb_state);
	uint32_t kind = how % 16, amount = how >> 8;
	atomic_fetch_add_explicit(&perturb_points, 1, memory_order_relaxed);
	if (kind < 6) {
		/* A short delay, as if an interrupt or a slower core got here. */
		atomic_fetch_add_explicit(&perturb_spins, 1, memory_order_relaxed);
		for (uint32_t i = 1 + amount % PERTURB_MAX_SPIN; i; i--)
			lb_cpu_relax(); /* spin-wait hint: the delay is the point */
	} else if (kind < 11) {
		/* Preemption: another runnable thread gets the CPU. */
		atomic_fetch_add_explicit(&perturb_yields, 1, memory_order_relaxed);
		sched_yield();
	} else {
		/* Descheduled for a few µs, long enough for others to race past. */
		atomic_fetch_add_explicit(&perturb_sleeps, 1, memory_order_relaxed);
		struct timespec ts = { 0, 1000 + (long)(amount % PERTURB_MAX_SLEEP_NS) };
		nanosleep(&ts, NULL);
	}
}
