/* SPDX-License-Identifier: MIT */
/* rcu_chains.c - self-reposting call_rcu() chains on liburcu (memb flavour). */
#include "rcu_chains.h"
#include "clock.h"

#include <errno.h>
#include <stdlib.h>
#include <urcu.h>

struct chain {
	struct rcu_head head;          /* first member: the callback casts back */
	/*
	 * Atomic although written once before call_rcu(): liburcu's hand-over
	 * to its callback thread is invisible to ThreadSanitizer, so the
	 * release/acquire pair here states the ordering it provides.
	 */
	struct lb_torture_run *_Atomic run;
	_Atomic bool stop;
	_Atomic bool done;
};

struct lb_torture_rcu_chains {
	int n;
	struct chain *chains;
};

static void chain_cb(struct rcu_head *head)
{
	struct chain *c = (struct chain *)head;
	struct lb_torture_run *run = atomic_load_explicit(&c->run, memory_order_acquire);
	atomic_fetch_add_explicit(&run->rcu_callbacks, 1, memory_order_relaxed);
	/* Pairs with the release in stop: after it we must not re-post. */
	if (!atomic_load_explicit(&c->stop, memory_order_acquire))
		call_rcu(&c->head, chain_cb);
	else
		/* Release: the stopper may free the chain once it sees done. */
		atomic_store_explicit(&c->done, true, memory_order_release);
}

int lb_torture_rcu_chains_start(struct lb_torture_run *run)
{
	int n = run->cfg.call_rcu_chains;
	if (n <= 0)
		return 0;
	struct lb_torture_rcu_chains *rc = calloc(1, sizeof(*rc));
	struct chain *chains = calloc((size_t)n, sizeof(*chains));
	if (!rc || !chains) {
		free(rc);
		free(chains);
		return ENOMEM;
	}
	rc->n = n;
	rc->chains = chains;
	run->chains = rc;
	/* call_rcu() wants a registered thread; main stays registered until stop. */
	rcu_register_thread();
	for (int i = 0; i < n; i++) {
		atomic_store_explicit(&chains[i].run, run, memory_order_release);
		call_rcu(&chains[i].head, chain_cb);
	}
	return 0;
}

uint64_t lb_torture_rcu_chains_progress(const struct lb_torture_run *run)
{
	return atomic_load_explicit(&run->rcu_callbacks, memory_order_relaxed);
}

int lb_torture_rcu_chains_stop(struct lb_torture_run *run, uint64_t timeout_ns)
{
	struct lb_torture_rcu_chains *rc = run->chains;
	if (!rc)
		return 0;
	for (int i = 0; i < rc->n; i++)
		atomic_store_explicit(&rc->chains[i].stop, true, memory_order_release);

	/* Poll rather than rcu_barrier(): a stalled grace period must not hang us. */
	uint64_t deadline = lb_torture_now_ns() + timeout_ns;
	for (;;) {
		int pending = 0;
		for (int i = 0; i < rc->n; i++)
			pending += !atomic_load_explicit(&rc->chains[i].done, memory_order_acquire);
		if (!pending)
			break;
		if (lb_torture_now_ns() >= deadline)
			return -1;
		lb_torture_sleep_ns(1000000);
	}
	rcu_unregister_thread();
	free(rc->chains);
	free(rc);
	run->chains = NULL;
	return 0;
}
