/* SPDX-License-Identifier: MIT */
/* workers.c - lock_torture_writer / lock_torture_reader and the check. */
#include "workers.h"
#include "out.h"
#include "lb_time.h"
#include "clock.h"
#include "delay.h"
#include "fatal.h"
#include "perturb.h"
#include "prio.h"
#include "state.h"
#include "stutter.h"
#include "lb_registry.h"

#include <errno.h>
#include <execinfo.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The holders counter: writers count in the high word, readers in the low. */
#define HOLDERS_WRITER ((uint64_t)1 << 32)

const char *lb_torture_role(const struct lb_torture_thread *t)
{
	return t->writer ? "writer" : "reader";
}

/* WARN_ON_ONCE + n_lock_fail++: count always, print the first of each kind. */
static void record_fail(struct lb_torture_thread *t, _Atomic bool *once, const char *what)
{
	struct lb_torture_run *run = t->run;
	long n = atomic_load_explicit(&t->n_lock_fail, memory_order_relaxed);
	atomic_store_explicit(&t->n_lock_fail, n + 1, memory_order_relaxed);

	uint64_t at = lb_torture_now_ns() - run->start_ns + 1, none = 0;
	atomic_compare_exchange_strong_explicit(&run->first_fail_ns, &none, at,
						memory_order_relaxed, memory_order_relaxed);
	if (atomic_exchange_explicit(once, true, memory_order_relaxed))
		return;
	lb_torture_printf("%s%s!!! %s %d: %s at %.6f s\n", run->cfg.type, LB_TORTURE_FLAG,
			  lb_torture_role(t), t->id, what, (double)(at - 1) / LB_NS_PER_S);
	if (run->cfg.verbose >= 2) {
		void *frames[32];
		int nframes = backtrace(frames, 32);
		fflush(stdout);
		backtrace_symbols_fd(frames, nframes, STDOUT_FILENO);
	}
}

void lb_torture_record_fail(struct lb_torture_thread *t, _Atomic bool *once, const char *what)
{
	record_fail(t, once, what);
}

/*
 * Allocate and initialise the thread's lock contexts: [0] for the main lock
 * and, for locks with a context, one per nested lock so that no context is
 * ever queued on two locks at once.  Nested contexts get dense indexes past
 * all workers' (nthreads * (k + 1) + index).  Main frees them after joining.
 */
int lb_torture_thread_setup(struct lb_torture_thread *t, int nested)
{
	struct lb_torture_run *run = t->run;
	const struct lb_lock_ops *ops = run->ops;
	int nctx = ops->thread_ctx_size ? 1 + nested : 1;

	lb_torture_random_init(&t->rng);
	lb_perturb_thread_start(t->index);
	/* The watchdog's evidence: where /proc shows us, and our spin count. */
	atomic_store_explicit(&t->tid, (int)syscall(SYS_gettid), memory_order_relaxed);
	lb_perturb_spin_counter = &t->spins;
	for (int k = 0; k < nctx; k++) {
		/* -P: run.c put the context in the shared mapping already. */
		void *ctx = t->tctx[k] ? t->tctx[k] : lb_thread_ctx_alloc(ops);
		unsigned int idx = (unsigned int)run->nthreads * (unsigned int)k + t->index;
		t->tctx[k] = ctx;
		if (ops->thread_ctx_size && !ctx)
			goto fail;
		if (ops->thread_init && ops->thread_init(ctx, idx))
			goto fail;
		t->ntctx = k + 1;
	}
	return 0;
fail:
	lb_torture_printf("%s%s!!! %s %d: lock thread context set-up failed\n", run->cfg.type,
			  LB_TORTURE_FLAG, lb_torture_role(t), t->id);
	if (ops->thread_fini)
		for (int k = 0; k < t->ntctx; k++)
			ops->thread_fini(t->tctx[k]);
	atomic_store_explicit(&t->init_failed, true, memory_order_relaxed);
	/* Release: main reads init_failed after seeing ready/exited. */
	atomic_store_explicit(&t->ready, true, memory_order_release);
	atomic_store_explicit(&t->exited, true, memory_order_release);
	return -1;
}

/* Report ready, then wait for the start signal; false when stopped first. */
bool lb_torture_wait_for_go(struct lb_torture_thread *t)
{
	struct lb_torture_run *run = t->run;
	atomic_store_explicit(&t->ready, true, memory_order_release);
	/* Pairs with the release store of go in run.c: we then see start_ns. */
	while (!atomic_load_explicit(&run->go, memory_order_acquire)) {
		if (lb_torture_must_stop(run))
			return false;
		lb_torture_sleep_ns(1000000);
	}
	lb_torture_set_state(t, LB_TORTURE_OUTSIDE, LB_TORTURE_MAIN_LOCK);
	lb_torture_note_progress(t);
	return !lb_torture_must_stop(run);
}

/*
 * thread_fini runs here, in the owner (liburcu's unregister, for one, acts
 * on the calling thread); the memory is freed by main after every join.
 */
void lb_torture_finish(struct lb_torture_thread *t)
{
	const struct lb_lock_ops *ops = t->run->ops;
	if (ops->thread_fini)
		for (int k = 0; k < t->ntctx; k++)
			ops->thread_fini(t->tctx[k]);
	if (atomic_load_explicit(&t->state, memory_order_relaxed) != LB_TORTURE_HUNG)
		lb_torture_set_state(t, LB_TORTURE_EXITED, LB_TORTURE_MAIN_LOCK);
	/* Release: main joins after this and then frees our contexts. */
	atomic_store_explicit(&t->exited, true, memory_order_release);
}

static void nested_lock(struct lb_torture_thread *t, uint32_t lockset)
{
	struct lb_torture_run *run = t->run;
	for (int k = 0; k < run->cfg.nested_locks; k++) {
		if (!(lockset & (1u << k)))
			continue;
		lb_torture_set_state(t, LB_TORTURE_WAITING, k);
		run->ops->lock(run->nested[k], t->tctx[1 + k]);
		lb_torture_set_state(t, LB_TORTURE_HOLDING, k);
	}
}

static void nested_unlock(struct lb_torture_thread *t, uint32_t lockset)
{
	struct lb_torture_run *run = t->run;
	for (int k = run->cfg.nested_locks - 1; k >= 0; k--)
		if (lockset & (1u << k))
			run->ops->unlock(run->nested[k], t->tctx[1 + k]);
}

/* --inject_hang: keep the lock, never release it; leave when the run stops. */
static void hang_forever(struct lb_torture_thread *t)
{
	struct lb_torture_run *run = t->run;
	lb_torture_set_state(t, LB_TORTURE_HUNG, LB_TORTURE_MAIN_LOCK);
	lb_torture_printf("%s%s writer %d: inject_hang: keeping the lock forever after %lld acquisitions\n",
			  run->cfg.type, LB_TORTURE_FLAG, t->id, run->cfg.inject_hang);
	while (!lb_torture_must_stop(run))
		lb_torture_sleep_ns(10000000);
}

/*
 * RCU locks: unlock has waited for a grace period, so every reader that saw
 * a generation older than ours (it was inside before we bumped it, hence
 * before the grace period began) must be out by now.  Relaxed loads: the
 * grace period itself orders the readers' stores before our loads, and
 * adding fences here could hide a broken one.
 */
static void check_grace_period(struct lb_torture_thread *t, uint64_t gen)
{
	struct lb_torture_run *run = t->run;
	for (int i = run->cfg.nwriters_stress; i < run->nthreads; i++) {
		uint64_t rec = atomic_load_explicit(&run->threads[i].rcu_reader,
						    memory_order_relaxed);
		if ((rec & 1) && (rec >> 1) < gen)
			record_fail(t, &run->warned_read_held,
				    "reader still inside after the grace period");
	}
}

/*
 * A fallible lock (rqspinlock) in a deadlock-free schedule: a reported
 * deadlock is a false detection (FAILURE); a timeout only means a holder
 * or the queue ahead was preempted for long, so it is counted and retried.
 */
static void lock_until_held(struct lb_torture_thread *t)
{
	struct lb_torture_run *run = t->run;
	int err;

	/* Retry: each attempt is bounded by the lock's own timeout. */
	while ((err = run->ops->lock_fallible(run->lock, t->tctx[0]))) {
		if (err == EDEADLK)
			record_fail(t, &run->warned_false_deadlock,
				    "lock reported a deadlock (EDEADLK) in a deadlock-free schedule");
		else
			atomic_fetch_add_explicit(&run->lock_timeouts, 1, memory_order_relaxed);
	}
}

/* Failed trylocks before falling back to lock(): a fair lock never grants a
 * trylock while its queue is non-empty, so an unbounded retry would starve. */
#define TRYLOCK_TRIES 64

/* Whether this acquisition goes through trylock (--trylock_pct). */
static bool use_trylock(struct lb_torture_thread *t, bool (*try_op)(void *, void *))
{
	int pct = t->run->cfg.trylock_pct;
	return try_op && pct && (int)(lb_torture_random(&t->rng) % 100) < pct;
}

/*
 * trylock-and-retry: up to TRYLOCK_TRIES attempts, yielding between them
 * (the holder may be preempted on an oversubscribed machine), then the
 * blocking op.  Every success goes through the same checks as lock().
 */
static void acquire(struct lb_torture_thread *t, bool (*try_op)(void *, void *),
		    void (*lock_op)(void *, void *), uint64_t poll_ns)
{
	struct lb_torture_run *run = t->run;
	if (try_op && poll_ns) {
		/* --perturb's polling phase: an awake contender that takes the
		 * lock the moment it looks free, for up to poll_ns. */
		uint64_t deadline = lb_torture_now_ns() + poll_ns;
		for (unsigned int i = 1;; i++) {
			if (try_op(run->lock, t->tctx[0])) {
				long n = atomic_load_explicit(&t->n_trylock, memory_order_relaxed);
				atomic_store_explicit(&t->n_trylock, n + 1, memory_order_relaxed);
				return;
			}
			if (lb_torture_now_ns() >= deadline)
				break;
			/* Spin-wait hint only: nothing is published by a failed
			 * trylock; a yield now and then lets a preempted holder
			 * on this CPU finish. */
			if (i % 32 == 0)
				sched_yield();
			else
				lb_cpu_relax();
		}
	} else if (use_trylock(t, try_op)) {
		for (int i = 0; i < TRYLOCK_TRIES; i++) {
			if (try_op(run->lock, t->tctx[0])) {
				long n = atomic_load_explicit(&t->n_trylock, memory_order_relaxed);
				atomic_store_explicit(&t->n_trylock, n + 1, memory_order_relaxed);
				return;
			}
			/* Spin-wait hint only: nothing is published by a failed trylock. */
			if (i % 8 == 7)
				sched_yield();
			else
				lb_cpu_relax();
		}
	}
	if (run->ops->lock_fallible && lock_op == run->ops->lock)
		lock_until_held(t);
	else
		lock_op(run->lock, t->tctx[0]);
}

/*
 * The plain-data check (see context.h): the write side reads the pair,
 * which the previous holder left equal, and writes a new value into both
 * halves with the hold-time delay in between, so an overlapping holder
 * sees them differ.
 */
static void plain_write_begin(struct lb_torture_thread *t)
{
	struct lb_torture_run *run = t->run;
	uint64_t first = run->plain.first, second = run->plain.second;
	if (first != second)
		record_fail(t, &run->warned_plain, "plain shared data torn under the write lock");
	run->plain.first = first + 1;
}

static void plain_write_end(struct lb_torture_thread *t)
{
	struct lb_torture_run *run = t->run;
	run->plain.second = run->plain.first;
}

static void plain_read(struct lb_torture_thread *t)
{
	struct lb_torture_run *run = t->run;
	if (run->plain.first != run->plain.second)
		record_fail(t, &run->warned_plain, "plain shared data torn under the read lock");
}

/* One write-side critical section on the main lock; false after a hang. */
static bool write_section(struct lb_torture_thread *t)
{
	struct lb_torture_run *run = t->run;
	const struct lb_torture_config *cfg = &run->cfg;
	uint64_t t0 = cfg->acq_writer_lim ? lb_torture_now_ns() : 0;

	lb_torture_set_state(t, LB_TORTURE_WAITING, LB_TORTURE_MAIN_LOCK);
	lb_perturb_acquire_begin();
	acquire(t, run->ops->trylock, run->ops->lock,
		run->ops->trylock ? lb_perturb_poll_ns() : 0);
	lb_torture_set_state(t, LB_TORTURE_HOLDING, LB_TORTURE_MAIN_LOCK);

	if (atomic_load_explicit(&run->lock_is_write_held, memory_order_relaxed))
		record_fail(t, &run->warned_write_held, "lock_is_write_held already set");
	atomic_store_explicit(&run->lock_is_write_held, true, memory_order_relaxed);
	if (!run->rcu && atomic_load_explicit(&run->lock_is_read_held, memory_order_relaxed))
		record_fail(t, &run->warned_read_held, "lock_is_read_held set under the write lock");
	/* Single-location RMW: relaxed still sees every earlier add (coherence). */
	if (cfg->holders_check &&
	    atomic_fetch_add_explicit(&run->holders, HOLDERS_WRITER, memory_order_relaxed))
		record_fail(t, &run->warned_holders, "holders counter not zero on write acquisition");
	uint64_t gen = 0;
	if (run->rcu) /* writers are serialised by the lock, so this is a plain bump */
		gen = atomic_fetch_add_explicit(&run->rcu_gen, 1, memory_order_relaxed) + 1;

	if (cfg->acq_writer_lim) {
		unsigned long j = (unsigned long)((lb_torture_now_ns() - t0) / cfg->jiffy_ns);
		if (j >= (unsigned long)cfg->acq_writer_lim)
			lb_torture_printf("%s: Lock acquisition took %lu jiffies.\n", "lock_torture_writer", j);
	}
	long n = atomic_load_explicit(&t->n_lock_acquired, memory_order_relaxed);
	if (cfg->inject_hang >= 0 && t->id == 0 && n == cfg->inject_hang) {
		hang_forever(t);
		return false;
	}
	atomic_store_explicit(&t->n_lock_acquired, n + 1, memory_order_relaxed);
	lb_torture_note_progress(t);

	plain_write_begin(t);
	/* --perturb: now and then a preempted (or long) holder, so that a
	 * second owner a broken lock lets in finds this one still inside. */
	lb_perturb_hold(false);
	lb_torture_write_delay(run, &t->rng);
	plain_write_end(t);

	if (cfg->holders_check)
		atomic_fetch_sub_explicit(&run->holders, HOLDERS_WRITER, memory_order_relaxed);
	atomic_store_explicit(&run->lock_is_write_held, false, memory_order_relaxed);
	run->ops->unlock(run->lock, t->tctx[0]);
	if (run->rcu)
		check_grace_period(t, gen);
	return true;
}

void *lb_torture_writer(void *arg)
{
	struct lb_torture_thread *t = arg;
	struct lb_torture_run *run = t->run;
	const struct lb_torture_config *cfg = &run->cfg;

	lb_torture_fatal_enter_thread(t);
	if (lb_torture_thread_setup(t, cfg->nested_locks)) {
		lb_torture_fatal_leave_thread();
		return NULL;
	}
	lb_torture_writer_sched_init(t);
	if (cfg->verbose)
		lb_torture_printf("%s%s lock_torture_writer task started\n", cfg->type, LB_TORTURE_FLAG);
	if (!lb_torture_wait_for_go(t))
		goto out;
	do {
		/* Rarely (2^-20) sleep a jiffy, so a waiter can get in. */
		if ((lb_torture_random(&t->rng) & 0xfffff) == 0)
			lb_torture_sleep_ns(cfg->jiffy_ns);
		uint32_t lockset = lb_torture_random(&t->rng);
		/* Now and then skip the main lock: disjoint trees of nested waiters. */
		bool skip_main = cfg->nested_locks && lb_torture_random(&t->rng) % 100 == 0;

		lb_torture_rt_boost(t, false);
		nested_lock(t, lockset);
		if (!skip_main && !write_section(t))
			break; /* inject_hang: leave with the locks held */
		nested_unlock(t, lockset);
		lb_torture_set_state(t, LB_TORTURE_OUTSIDE, LB_TORTURE_MAIN_LOCK);
		lb_torture_note_progress(t);
		lb_torture_stutter_wait(t);
	} while (!lb_torture_must_stop(run));
	lb_torture_rt_boost(t, true);
out:
	lb_torture_finish(t);
	lb_torture_fatal_leave_thread();
	return NULL;
}

void *lb_torture_reader(void *arg)
{
	struct lb_torture_thread *t = arg;
	struct lb_torture_run *run = t->run;
	const struct lb_torture_config *cfg = &run->cfg;

	lb_torture_fatal_enter_thread(t);
	if (lb_torture_thread_setup(t, 0)) {
		lb_torture_fatal_leave_thread();
		return NULL;
	}
	lb_torture_set_nice(LB_TORTURE_MAX_NICE);
	if (cfg->verbose)
		lb_torture_printf("%s%s lock_torture_reader task started\n", cfg->type, LB_TORTURE_FLAG);
	if (!lb_torture_wait_for_go(t))
		goto out;
	do {
		if ((lb_torture_random(&t->rng) & 0xfffff) == 0)
			lb_torture_sleep_ns(cfg->jiffy_ns);

		lb_torture_set_state(t, LB_TORTURE_WAITING, LB_TORTURE_MAIN_LOCK);
		lb_perturb_acquire_begin();
		acquire(t, run->ops->read_trylock, run->ops->read_lock, 0);
		lb_torture_set_state(t, LB_TORTURE_HOLDING, LB_TORTURE_MAIN_LOCK);

		atomic_fetch_add_explicit(&run->lock_is_read_held, 1, memory_order_relaxed);
		if (run->rcu) {
			/* Inside a read-side section: publish the generation we see. */
			uint64_t gen = atomic_load_explicit(&run->rcu_gen, memory_order_relaxed);
			atomic_store_explicit(&t->rcu_reader, gen << 1 | 1, memory_order_relaxed);
		} else {
			if (atomic_load_explicit(&run->lock_is_write_held, memory_order_relaxed))
				record_fail(t, &run->warned_reader,
					    "lock_is_write_held set under the read lock");
			if (cfg->holders_check &&
			    atomic_fetch_add_explicit(&run->holders, 1, memory_order_relaxed) >=
				    HOLDERS_WRITER)
				record_fail(t, &run->warned_holders,
					    "holders counter shows a writer on read acquisition");
		}

		long n = atomic_load_explicit(&t->n_lock_acquired, memory_order_relaxed);
		atomic_store_explicit(&t->n_lock_acquired, n + 1, memory_order_relaxed);
		lb_torture_note_progress(t);

		if (!run->rcu)
			plain_read(t);
		lb_perturb_hold(true); /* --perturb: a preempted reader, now and then */
		lb_torture_read_delay(run, &t->rng);
		if (!run->rcu)
			plain_read(t);

		if (run->rcu)
			atomic_store_explicit(&t->rcu_reader,
					      atomic_load_explicit(&t->rcu_reader, memory_order_relaxed) &
						      ~(uint64_t)1,
					      memory_order_relaxed);
		else if (cfg->holders_check)
			atomic_fetch_sub_explicit(&run->holders, 1, memory_order_relaxed);
		atomic_fetch_sub_explicit(&run->lock_is_read_held, 1, memory_order_relaxed);
		run->ops->read_unlock(run->lock, t->tctx[0]);

		lb_torture_set_state(t, LB_TORTURE_OUTSIDE, LB_TORTURE_MAIN_LOCK);
		lb_torture_stutter_wait(t);
	} while (!lb_torture_must_stop(run));
out:
	lb_torture_finish(t);
	lb_torture_fatal_leave_thread();
	return NULL;
}
