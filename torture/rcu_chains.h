/* SPDX-License-Identifier: MIT */
/*
 * rcu_chains.h - call_rcu_chains: keep liburcu grace periods in flight for
 * the whole test, as the kernel's option does with call_rcu().
 *
 * Each chain is one rcu_head whose callback re-posts itself with
 * call_rcu() until the run stops, so there is always a grace period
 * pending while the locks are tortured (a background load on the
 * scheduler and on membarrier()).  The callback count is also a liveness
 * signal: the watchdog fails the test when it stops moving.
 */
#ifndef LB_TORTURE_RCU_CHAINS_H
#define LB_TORTURE_RCU_CHAINS_H

#include <stdint.h>

#include "context.h"

/* Post cfg.call_rcu_chains chains (none when 0); 0 or an errno value. */
int lb_torture_rcu_chains_start(struct lb_torture_run *run);

/* Callbacks invoked so far, over all chains. */
uint64_t lb_torture_rcu_chains_progress(const struct lb_torture_run *run);

/*
 * Ask the chains to stop and wait up to timeout_ns for their last
 * callbacks.  0 when all drained; -1 otherwise (the memory is then leaked on
 * purpose: a late callback may still touch it).
 */
int lb_torture_rcu_chains_stop(struct lb_torture_run *run, uint64_t timeout_ns);

#endif /* LB_TORTURE_RCU_CHAINS_H */
