/* SPDX-License-Identifier: MIT */
/*
 * test_running.c - the running-contenders gauge of the allocator's
 * list_lock (engines/slub/slub.c running_gauge; doc/rt.md, "Running
 * contenders") on scripted schedules: the main thread holds list_lock and
 * waiters arrive one at a time, each only once the previous one is known
 * to wait, so every attempt's count is fixed:
 *
 *   owner on its CPU, spin-only lock     attempts see 2, then 3 (a spinner)
 *   owner asleep (announced)             1, then 2; owner off its CPU twice
 *   owner held past the gap              1; owner off its CPU by its age
 *   waiters that may sleep (a mutex)     asleep 2 and 2, running 2 and 3
 *   no contention                        nothing binned
 *
 *   test-rt-running    TAP
 */
#include "slub.h"
#include "lb_registry.h"
#include "lb_time.h"
#include "../tap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define POOL (1u << 20)

struct waiter {
	struct lb_slub_cache *c;
	unsigned int index;
	int err;
	int state_seen;         /* its lock_state while it waited (main reads it) */
	struct lb_slub_cpu cpu; /* valid until after the joins (slub.h) */
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	w->err = lb_slub_cpu_init(w->c, &w->cpu, w->index);
	if (w->err)
		return NULL;
	lb_slub_debug_lock(&w->cpu);
	lb_slub_debug_unlock(&w->cpu);
	lb_slub_cpu_fini(&w->cpu);
	return NULL;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Poll until the cache counts n waiters, each in its waiting state (the
 * count the next attempt reads); false after 10 s. */
static bool wait_for_waiters(struct lb_slub_cache *c, uint32_t n)
{
	for (int i = 0; i < 10000; i++) {
		if (atomic_load(&c->lock_waiters) == n &&
		    atomic_load(&c->waiters_spinning) + atomic_load(&c->waiters_maysleep) == n)
			return true;
		pause_ms(1);
	}
	return false;
}

/* What one script expects the cache's totals to be. */
struct expect {
	uint64_t lo[3], hi[3], off_announced, off_held;
};

static bool bins_are(_Atomic uint64_t *got, const uint64_t *want)
{
	for (int b = 0; b < 3; b++)
		if (atomic_load(&got[b]) != want[b])
			return false;
	return true;
}

/*
 * One script: main takes list_lock (announcing a sleep when asked, or
 * holding past the gap when gap_ns is set), then `nwaiters` threads arrive
 * one by one; main releases once all wait.  Checks the totals.
 */
static void script(const char *what, const char *lock, unsigned int nwaiters, bool asleep,
		   uint64_t gap_ns, int waiting_state, const struct expect *e)
{
	const struct lb_lock_ops *ops = lb_lock_find(lock);
	if (!ops) {
		tap_ok(false, "%s: lock %s in the registry", what, lock);
		return;
	}
	struct lb_slub_cache c;
	struct lb_slub_cpu owner;
	struct waiter w[2];
	pthread_t tid[2];
	if (lb_slub_cache_init(&c, ops, 64, POOL) != 0 || lb_slub_cpu_init(&c, &owner, 0) != 0) {
		tap_ok(false, "%s: cache and owner set up", what);
		return;
	}
	/* The script's pauses are milliseconds: an owner held that long
	 * would read as off its CPU unless the gap is raised. */
	c.owner_gap_cycles = gap_ns ? (uint64_t)((double)gap_ns * lb_cycles_per_ns()) : UINT64_MAX;
	lb_slub_debug_lock(&owner);
	if (asleep)
		lb_slub_cpu_offcpu(&owner, true);
	if (gap_ns)
		pause_ms(5); /* 5 ms past a gap of microseconds */
	bool ok = true;
	unsigned int started = 0;
	for (unsigned int i = 0; i < nwaiters && ok; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].c = &c;
		w[i].index = i + 1;
		ok = pthread_create(&tid[i], NULL, waiter_main, &w[i]) == 0;
		started += ok;
		ok = ok && wait_for_waiters(&c, i + 1);
		w[i].state_seen = atomic_load(&w[i].cpu.lock_state);
	}
	tap_ok(ok, "%s: %u waiter(s) queued behind the owner", what, nwaiters);
	if (asleep)
		lb_slub_cpu_offcpu(&owner, false);
	lb_slub_debug_unlock(&owner);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	bool states = true;
	for (unsigned int i = 0; i < started; i++)
		states &= w[i].err == 0 && w[i].state_seen == waiting_state;
	tap_ok(states, "%s: each waiter's state word said %s while it waited", what,
	       waiting_state == LB_SLUB_LS_SPINNING ? "spinning" : "may sleep");
	lb_slub_cpu_fini(&owner);
	tap_ok(bins_are(c.running_lo, e->lo),
	       "%s: running contenders (may-sleep waiters asleep) 1/2/3+ = %llu/%llu/%llu, "
	       "expected %llu/%llu/%llu", what, (unsigned long long)atomic_load(&c.running_lo[0]),
	       (unsigned long long)atomic_load(&c.running_lo[1]),
	       (unsigned long long)atomic_load(&c.running_lo[2]), (unsigned long long)e->lo[0],
	       (unsigned long long)e->lo[1], (unsigned long long)e->lo[2]);
	tap_ok(bins_are(c.running_hi, e->hi),
	       "%s: running contenders (may-sleep waiters running) 1/2/3+ = %llu/%llu/%llu, "
	       "expected %llu/%llu/%llu", what, (unsigned long long)atomic_load(&c.running_hi[0]),
	       (unsigned long long)atomic_load(&c.running_hi[1]),
	       (unsigned long long)atomic_load(&c.running_hi[2]), (unsigned long long)e->hi[0],
	       (unsigned long long)e->hi[1], (unsigned long long)e->hi[2]);
	tap_ok(atomic_load(&c.owner_off_announced) == e->off_announced &&
		       atomic_load(&c.owner_off_held) == e->off_held,
	       "%s: owner seen off its CPU: announced %llu (expected %llu), held past the gap "
	       "%llu (expected %llu)", what, (unsigned long long)atomic_load(&c.owner_off_announced),
	       (unsigned long long)e->off_announced,
	       (unsigned long long)atomic_load(&c.owner_off_held), (unsigned long long)e->off_held);
	lb_slub_cpu_release(&owner);
	for (unsigned int i = 0; i < started; i++)
		lb_slub_cpu_release(&w[i].cpu);
	lb_slub_cache_destroy(&c);
}

/* Attempts that find list_lock free are not binned. */
static void test_uncontended(void)
{
	const struct lb_lock_ops *ops = lb_lock_find("tas");
	struct lb_slub_cache c;
	struct lb_slub_cpu cpu;
	tap_ok(ops && lb_slub_cache_init(&c, ops, 64, POOL) == 0 &&
		       lb_slub_cpu_init(&c, &cpu, 0) == 0, "uncontended: set up");
	for (int i = 0; i < 10; i++) {
		lb_slub_debug_lock(&cpu);
		lb_slub_debug_unlock(&cpu);
	}
	lb_slub_cpu_fini(&cpu);
	const uint64_t none[3] = { 0, 0, 0 };
	tap_ok(bins_are(c.running_lo, none) && bins_are(c.running_hi, none) &&
		       atomic_load(&c.lock_acquires) == 10,
	       "uncontended: 10 acquisitions, no attempt binned");
	lb_slub_cpu_release(&cpu);
	lb_slub_cache_destroy(&c);
}

int main(void)
{
	const struct expect running = { { 0, 1, 1 }, { 0, 1, 1 }, 0, 0 };
	script("owner on its CPU", "tas", 2, false, 0, LB_SLUB_LS_SPINNING, &running);
	const struct expect asleep = { { 1, 1, 0 }, { 1, 1, 0 }, 2, 0 };
	script("owner asleep (announced)", "tas", 2, true, 0, LB_SLUB_LS_SPINNING, &asleep);
	const struct expect held = { { 1, 0, 0 }, { 1, 0, 0 }, 0, 1 };
	script("owner held past the gap", "tas", 1, false, 20000, LB_SLUB_LS_SPINNING, &held);
	const struct expect maysleep = { { 0, 2, 0 }, { 0, 1, 1 }, 0, 0 };
	script("waiters that may sleep", "pthread-mutex", 2, false, 0, LB_SLUB_LS_MAYSLEEP,
	       &maysleep);
	test_uncontended();
	return tap_done();
}
