/* SPDX-License-Identifier: MIT */
/*
 * affinity.h - where the workers may run: bind_readers/bind_writers, the
 * shuffler and the userspace stand-in for CPU hotplug (the kernel's kernel/torture.c).
 *
 * A worker's CPU set is its bind list, minus the CPUs onoff has "offlined",
 * minus the shuffler's idle CPU; a step that would leave it empty is
 * skipped.  The shuffler advances the idle CPU through the allowed CPUs
 * every shuffle_interval jiffies (then one round with none idle); onoff
 * waits onoff_holdoff s and then every onoff_interval s picks a random CPU
 * and takes it out of every worker's set, or puts it back if it was out.
 * The last "online" CPU is never taken out, so onoff never fails and the
 * kernel's LOCK_HOTPLUG verdict cannot occur.
 */
#ifndef LB_TORTURE_AFFINITY_H
#define LB_TORTURE_AFFINITY_H

#include "context.h"

/* Set up the shared state (all allowed CPUs online, none idle); 0 or errno. */
int lb_torture_affinity_init(struct lb_torture_run *run);

/* Create a worker thread on its CPU set; 0 or an errno value. */
int lb_torture_spawn(struct lb_torture_run *run, struct lb_torture_thread *t,
		     void *(*fn)(void *));

/* Start the shuffler and onoff threads as configured; 0 or an errno value. */
int lb_torture_affinity_start(struct lb_torture_run *run);

/*
 * Stop and join them (after run->stop is set, before workers are joined),
 * then give every worker its whole bind list back.
 */
void lb_torture_affinity_stop(struct lb_torture_run *run);

/* Offline/online counts, "onoff: offl-ok/offl-tries:onl-ok/onl-tries". */
void lb_torture_onoff_stats(const struct lb_torture_run *run, char *buf, size_t len);

void lb_torture_affinity_free(struct lb_torture_run *run);

#endif /* LB_TORTURE_AFFINITY_H */
