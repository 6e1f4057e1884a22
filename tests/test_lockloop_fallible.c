/* SPDX-License-Identifier: MIT */
/*
 * test_lockloop_fallible.c - the timed lock loop (engines/lockloop, what
 * `lockbench bench` and `ab` run on) with a lock whose acquisition can fail
 * (LB_LOCK_F_FALLIBLE): failures are counted, never run a critical section
 * or count as ops, and every other lock reports none.
 *
 * The fallible lock here is a stand-in ("flaky"): a test-and-set word whose
 * lock_fallible fails (ETIMEDOUT, not acquired) on every third call of a
 * thread, so the expected count is exact: a thread that did n ops failed
 * n / 2 times (+-1).
 */
#include "lb_atomic.h"
#include "lockloop.h"
#include "lb_registry.h"
#include "tap.h"

#include <errno.h>
#include <stdlib.h>

struct flaky_ctx {
	unsigned int calls;
};

static int flaky_init(void *lock)
{
	atomic_init((_Atomic uint32_t *)lock, 0);
	return 0;
}

static int flaky_thread_init(void *tctx, unsigned int index)
{
	(void)index;
	((struct flaky_ctx *)tctx)->calls = 0;
	return 0;
}

static int flaky_lock_fallible(void *lock, void *tctx)
{
	struct flaky_ctx *c = tctx;
	if (++c->calls % 3 == 0)
		return ETIMEDOUT;
	/* Spin until the word is ours (acquire pairs with flaky_unlock). */
	while (atomic_exchange_explicit((_Atomic uint32_t *)lock, 1, memory_order_acquire))
		lb_cpu_relax();
	return 0;
}

static void flaky_lock(void *lock, void *tctx)
{
	/* The infallible slot: retry, as a fallible lock's lock() must. */
	while (flaky_lock_fallible(lock, tctx))
		;
}

static void flaky_unlock(void *lock, void *tctx)
{
	(void)tctx;
	atomic_store_explicit((_Atomic uint32_t *)lock, 0, memory_order_release);
}

static const struct lb_lock_ops flaky_ops = {
	.name = "flaky", .family = "spin", .summary = "fails every third lock_fallible",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_THREAD_CTX | LB_LOCK_F_FALLIBLE,
	.lock_size = sizeof(_Atomic uint32_t), .lock_align = _Alignof(_Atomic uint32_t),
	.thread_ctx_size = sizeof(struct flaky_ctx),
	.init = flaky_init, .thread_init = flaky_thread_init,
	.lock = flaky_lock, .unlock = flaky_unlock, .lock_fallible = flaky_lock_fallible,
};

/*
 * One run with ops in it.  On a loaded machine (a CI at load average 40
 * and more) a 100-ms window can pass with neither thread scheduled inside
 * it: 0 ops, nothing to count.  What is checked is how failures are
 * counted, not how many ops fit, so an empty window is run again (at most
 * 20 times, about 2 s).
 */
static int run_with_ops(const struct lb_loop_params *p, const struct lb_lock_ops *ops,
			unsigned int nthreads, struct lb_run_result *r)
{
	for (int tries = 0;; tries++) {
		int err = lb_loop_run_one(p, ops, nthreads, r);
		if (err || r->total_ops > 0 || tries == 19) {
			if (tries)
				tap_diag("%s: %d empty window(s) run again", ops->name, tries);
			return err;
		}
		lb_run_result_free(r);
	}
}

static void params(struct lb_loop_params *p)
{
	lb_loop_params_default(p);
	p->duration_ns = 100 * 1000 * 1000ull;
	p->c2c_cpu[0] = p->c2c_cpu[1] = -1; /* no round-trip probes */
}

int main(void)
{
	struct lb_loop_params p;
	struct lb_run_result r;
	params(&p);

	tap_ok(lb_lock_check_entry(&flaky_ops, stderr) == 0, "the stand-in passes the registry's "
	       "checks (FALLIBLE flag and lock_fallible agree)");
	const unsigned int nthreads = 2;
	int err = run_with_ops(&p, &flaky_ops, nthreads, &r);
	tap_ok(err == 0 && r.total_ops > 0, "the loop runs a fallible lock (err %d, %llu ops)", err,
	       (unsigned long long)r.total_ops);
	uint64_t expect = r.total_ops / 2;
	uint64_t diff = r.lock_failures > expect ? r.lock_failures - expect
						 : expect - r.lock_failures;
	tap_ok(r.lock_failures > 0 && diff <= nthreads,
	       "failures counted, one per two ops (%llu failures, %llu ops)",
	       (unsigned long long)r.lock_failures, (unsigned long long)r.total_ops);
	uint64_t per_thread = 0;
	for (unsigned int i = 0; i < nthreads; i++)
		per_thread += r.threads[i].lock_failures;
	tap_ok(per_thread == r.lock_failures, "per-thread failures add up to the run's");
	tap_ok(r.lost_updates == 0, "no critical section ran without the lock (lost updates %llu)",
	       (unsigned long long)r.lost_updates);
	lb_run_result_free(&r);

	const struct lb_lock_ops *q = lb_lock_find("qspinlock");
	err = q ? run_with_ops(&p, q, nthreads, &r) : ENOENT;
	tap_ok(err == 0 && r.lock_failures == 0 && r.total_ops > 0,
	       "a lock that cannot fail reports no failures (err %d)", err);
	if (!err)
		lb_run_result_free(&r);
	return tap_done();
}
